//! OpenHaptics devices from the command line, against the simulated libHD
//! (`openhaptics-sim`, built beside the test executables): `hapticd
//! devices` says where libHD was found and the device it opens, or where
//! it looked.

use std::path::{Path, PathBuf};
use std::process::Command;

fn sim_library() -> PathBuf {
    haptic_devices::library::beside_current_exe("libopenhaptics_sim.so")
        .expect("libopenhaptics_sim.so is built beside the test executable")
}

fn hapticd() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hapticd"));
    command
        .env_remove("FORCEDIM_SDK")
        .env_remove("OH_SDK_BASE")
        .env_remove("OPENHAPTICS")
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    command
}

#[test]
fn devices_names_libhd_and_its_device_or_where_it_looked() {
    let output = hapticd()
        .args(["devices", "--openhaptics-library"])
        .arg(sim_library())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(
        stdout.contains(&format!(
            "OpenHaptics HD library from {}\n",
            sim_library().display()
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "openhaptics \"Default Device\": Touch (simulated) (input DoF 6, output DoF 3, 1000 Hz)\n"
        ),
        "{stdout}"
    );

    let output = hapticd()
        .args(["devices", "--openhaptics-library", "/nonexistent/libHD.so"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(
        stdout.contains(
            "OpenHaptics: the OpenHaptics HD library (libHD.so) was not found; tried:\n  /nonexistent/libHD.so: no such file\n"
        ),
        "{stdout}"
    );
}
