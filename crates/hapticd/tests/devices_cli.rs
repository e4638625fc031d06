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
    // No hidraw device here; where one is, each line names its profile.
    assert!(
        stdout.contains("no HID devices found") || stdout.contains("profile: "),
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
