//! `hapticd devices` on this machine: profiles load, no HID device, exit 0.

use std::path::Path;
use std::process::Command;

fn workspace() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

#[test]
fn lists_devices_with_the_default_profiles_dir() {
    let output = Command::new(env!("CARGO_BIN_EXE_hapticd"))
        .arg("devices")
        .current_dir(workspace())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        stdout.starts_with("14 profiles from device-profiles\n"),
        "{stdout}"
    );
    // No hidraw device here; where one is, a line of its own.
    assert!(
        stdout.contains("no HID devices found") || stdout.contains("\nhid /dev/hidraw"),
        "{stdout}"
    );
    // Then the Falcons: none here; where one is, its index.
    assert!(
        stdout
            .lines()
            .any(|line| line == "no Novint Falcon devices found"
                || line.starts_with("falcon 0: Novint Falcon (0403:cb48, bus ")
                || line.starts_with("Novint Falcon: ")),
        "{stdout}"
    );
}

#[test]
fn a_bad_profiles_dir_is_an_error_naming_it() {
    let output = Command::new(env!("CARGO_BIN_EXE_hapticd"))
        .args(["devices", "--profiles", "/nonexistent/profiles"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("error: /nonexistent/profiles: "),
        "{stderr}"
    );
}

#[test]
fn record_writes_a_trajectory_the_emulator_can_load() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("press.traj");
    let motion = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../config/motions/press-and-hold.toml"
    );
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_hapticd"))
        .args(["record", "--motion", motion, "--rate", "500", "--out"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let trajectory = haptic_devices::Trajectory::load(&out).unwrap();
    // 3.5 s of motion at 500 Hz: 1,751 samples from 0 to 3.5 s.
    assert_eq!(trajectory.rows().len(), 1751);
    assert!((trajectory.end_s() - 3.5).abs() < 1e-9);
    let last = trajectory.rows().last().unwrap();
    assert!((last.position[0] - 0.02).abs() < 1e-12 && (last.position[2] - 0.05).abs() < 1e-12);

    let missing = std::process::Command::new(env!("CARGO_BIN_EXE_hapticd"))
        .args(["record", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("--motion"));
}

#[test]
fn run_with_a_falcon_needs_its_firmware_file() {
    let output = Command::new(env!("CARGO_BIN_EXE_hapticd"))
        .args([
            "run",
            "--device",
            "falcon",
            "--no-server",
            "--duration",
            "0.1",
        ])
        .current_dir(workspace())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("device.falcon.firmware"), "{stderr}");
}
