//! Force Dimension devices from the command line, against the simulated
//! SDK (`forcedim-sim`, built beside the test executables): `hapticd
//! devices` lists them, `hapticd run --device forcedim` runs the default
//! scene on one, and without an SDK both say where they looked.

mod vendor;

use serde_json::Value;
use vendor::{check_unplugged_run, devices_lists, hapticd, run_through_an_unplug, sim_library};

const SIM: &str = "libforcedim_sim.so";

#[test]
fn devices_lists_the_sdk_s_devices_or_says_where_it_looked() {
    let sim = sim_library(SIM);
    devices_lists(
        &["--forcedim-library".as_ref(), sim.as_os_str()],
        &[
            &format!("Force Dimension SDK 3.17.0.0 from {}\n", sim.display()),
            "forcedim 0: sigma.7 (system type 104; wrist: active; gripper; right-handed)\n",
        ],
    );
    devices_lists(
        &["--forcedim-library", "/nonexistent/libdrd.so"],
        &[
            "Force Dimension: the Force Dimension SDK library was not found; tried:\n  /nonexistent/libdrd.so: no such file\n",
            "  libdhd.so (dynamic linker search",
        ],
    );
}

#[test]
fn run_drives_the_default_scene_through_the_sdk_found_by_its_environment_variable() {
    let dir = tempfile::tempdir().unwrap();
    let sdk = dir.path().join("sdk");
    std::fs::create_dir_all(sdk.join("lib")).unwrap();
    std::os::unix::fs::symlink(sim_library(SIM), sdk.join("lib/libdrd.so")).unwrap();
    let summary = dir.path().join("summary.json");
    let output = hapticd()
        .env("FORCEDIM_SDK", &sdk)
        .env("HAPTICD_LOG", "info")
        .args([
            "run",
            "--device",
            "forcedim",
            "--duration",
            "1.5",
            "--no-server",
        ])
        .arg("--summary-json")
        .arg(&summary)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("Force Dimension device open"), "{stderr}");
    let s: Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert!(s["ticks"].as_u64().unwrap() > 1000, "{s}");
    assert_eq!(s["faults"]["read"], 0, "{s}");
    assert_eq!(s["faults"]["write"], 0, "{s}");
    let trips = &s["safety_trips"];
    assert_eq!(
        (
            &trips["disconnected"],
            &trips["device_error"],
            &trips["sample_not_finite"]
        ),
        (&Value::from(0), &Value::from(0), &Value::from(0)),
        "{s}"
    );
    // The handle rests where the default scene maps the cube 2 mm into the
    // floor: the tool presses on it and the rendering asks for a force.
    assert!(s["max_rendered_force_n"].as_f64().unwrap() > 0.5, "{s}");
    // After the soft start the force reached the simulated SDK.
    assert!(s["max_force_n"].as_f64().unwrap() > 0.1, "{s}");

    // Without the SDK the run does not start, and says where it looked.
    let output = hapticd()
        .args([
            "run",
            "--device",
            "forcedim",
            "--duration",
            "0.5",
            "--no-server",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the Force Dimension SDK library was not found; tried:"),
        "{stderr}"
    );
}

#[test]
fn a_vanishing_device_is_waited_for_or_stops_the_run_as_configured() {
    let sdk = ("FORCEDIM_SDK", sim_library(SIM), "libdrd.so");
    let sdk = (sdk.0, sdk.1.as_path(), sdk.2);
    let unplug = [
        ("FDSIM_UNPLUG_AFTER_MS", "700"),
        ("FDSIM_UNPLUG_FOR_MS", "400"),
    ];
    let waited = run_through_an_unplug(sdk, "forcedim", "wait", "2.5", &unplug);
    check_unplugged_run(&waited, "wait");
    let stopped = run_through_an_unplug(sdk, "forcedim", "stop", "30", &unplug);
    check_unplugged_run(&stopped, "stop");
}
