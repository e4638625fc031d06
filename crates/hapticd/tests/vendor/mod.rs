//! What the command-line tests of the backends that load a vendor's
//! library share: the simulated library beside the test executable, the
//! command without the vendors' environment variables, and `hapticd
//! devices`' output.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The simulated library `file_name`, built beside this test executable as
/// a dev-dependency.
pub fn sim_library(file_name: &str) -> PathBuf {
    haptic_testkit::vendor_library::find(file_name).unwrap_or_else(|e| panic!("{e}"))
}

/// `hapticd` from the workspace's root, none of the vendors' libraries
/// named by the environment.
pub fn hapticd() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hapticd"));
    command.env_remove(haptic_device_forcedim::SDK_ENV);
    for variable in haptic_device_openhaptics::SDK_ENVS {
        command.env_remove(variable);
    }
    command.current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    command
}

/// `hapticd devices` with `args`, which must succeed, and each of `lines`
/// somewhere in its standard output: that output.
pub fn devices_lists<A: AsRef<OsStr>>(args: &[A], lines: &[&str]) -> String {
    let output = hapticd().arg("devices").args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{output:?}");
    for line in lines {
        assert!(stdout.contains(line), "no {line:?} in:\n{stdout}");
    }
    stdout
}
