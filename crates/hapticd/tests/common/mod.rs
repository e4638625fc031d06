//! Helpers of more than one command-line test.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `hapticd record --motion` of `motion_toml` (a `[device.motion]` body)
/// into `dir`: the trajectory file.
pub fn record_trajectory(motion_toml: &str, dir: &Path) -> PathBuf {
    let motion = dir.join("motion.toml");
    std::fs::write(&motion, motion_toml).unwrap();
    let trajectory = dir.join("motion.traj");
    let output = Command::new(env!("CARGO_BIN_EXE_hapticd"))
        .args(["record", "--motion"])
        .arg(&motion)
        .arg("--out")
        .arg(&trajectory)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    trajectory
}
