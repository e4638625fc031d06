//! OpenHaptics devices from the command line, against the simulated libHD
//! (`openhaptics-sim`, built beside the test executables): `hapticd
//! devices` says where libHD was found and the device it opens, or where
//! it looked.

mod vendor;

use vendor::{check_unplugged_run, devices_lists, run_through_an_unplug, sim_library};

#[test]
fn devices_names_libhd_and_its_device_or_where_it_looked() {
    let sim = sim_library("libopenhaptics_sim.so");
    devices_lists(
        &["--openhaptics-library".as_ref(), sim.as_os_str()],
        &[
            &format!("OpenHaptics HD library from {}\n", sim.display()),
            "openhaptics \"Default Device\": Touch (simulated) (input DoF 6, output DoF 3, 1000 Hz)\n",
        ],
    );
    devices_lists(
        &["--openhaptics-library", "/nonexistent/libHD.so"],
        &["OpenHaptics: the OpenHaptics HD library (libHD.so) was not found; tried:\n  /nonexistent/libHD.so: no such file\n"],
    );
}

#[test]
fn run_drives_the_default_scene_through_the_hd_scheduler_and_a_vanishing_device() {
    let sim = sim_library("libopenhaptics_sim.so");
    let sdk = ("OH_SDK_BASE", sim.as_path(), "libHD.so");
    let unplug = [
        ("OHSIM_UNPLUG_AFTER_MS", "1500"),
        ("OHSIM_UNPLUG_FOR_MS", "400"),
    ];
    // Waited for: the run presses the floor, loses the device, zeroes the
    // force, and presses again once it is back.
    let waited = run_through_an_unplug(sdk, "openhaptics", "wait", "3.5", &unplug);
    let stderr = String::from_utf8_lossy(&waited.output.stderr);
    assert!(waited.summary["ticks"].as_u64().unwrap() > 3000, "{stderr}");
    assert!(
        waited.summary["max_rendered_force_n"].as_f64().unwrap() > 0.5,
        "{}",
        waited.summary
    );
    check_unplugged_run(&waited, "wait");
    let stopped = run_through_an_unplug(sdk, "openhaptics", "stop", "30", &unplug);
    check_unplugged_run(&stopped, "stop");
}
