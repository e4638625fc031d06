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

/// What [`run_through_an_unplug`] ran.
pub struct UnplugRun {
    pub output: std::process::Output,
    pub summary: serde_json::Value,
    /// Per tick: whether it rendered (its device read succeeded) and the
    /// force sent to the device (N).
    pub ticks: Vec<(bool, f64)>,
}

/// `hapticd run --device DEVICE` on the default scene for `duration_s`,
/// with `[device] on_disconnect = on_disconnect`, the simulated library
/// `sim` found as `sdk_env`'s `lib/library_name`, and its device unplugged
/// by the environment `unplug` (`{PREFIX}_UNPLUG_AFTER_MS`, …).
pub fn run_through_an_unplug(
    (sdk_env, sim, library_name): (&str, &Path, &str),
    device: &str,
    on_disconnect: &str,
    duration_s: &str,
    unplug: &[(&str, &str)],
) -> UnplugRun {
    let dir = tempfile::tempdir().unwrap();
    let sdk = dir.path().join("sdk");
    std::fs::create_dir_all(sdk.join("lib")).unwrap();
    std::os::unix::fs::symlink(sim, sdk.join("lib").join(library_name)).unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let default = std::fs::read_to_string(repo.join("config/default.toml")).unwrap();
    let wait = "on_disconnect = \"wait\"";
    assert!(default.contains(wait));
    let config = dir.path().join("unplug.toml");
    std::fs::write(
        &config,
        default.replace(wait, &format!("on_disconnect = \"{on_disconnect}\"")),
    )
    .unwrap();
    let (summary, record) = (dir.path().join("summary.json"), dir.path().join("run.csv"));
    let output = hapticd()
        .env(sdk_env, &sdk)
        .envs(unplug.iter().copied())
        .env("HAPTICD_LOG", "info")
        .args([
            "run",
            "--device",
            device,
            "--duration",
            duration_s,
            "--no-server",
        ])
        .arg("--config")
        .arg(&config)
        .arg("--summary-json")
        .arg(&summary)
        .arg("--record")
        .arg(&record)
        .output()
        .unwrap();
    let summary = std::fs::read_to_string(&summary)
        .map(|text| serde_json::from_str(&text).unwrap())
        .unwrap_or_else(|e| panic!("no summary ({e}): {output:?}"));
    let text = std::fs::read_to_string(&record).unwrap();
    let columns = haptic_recording::COLUMNS;
    let at = |name: &str| columns.iter().position(|c| *c == name).unwrap();
    let (state, fx, fy, fz) = (at("state"), at("fx"), at("fy"), at("fz"));
    let ticks = text
        .lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            let number = |i: usize| fields[i].parse::<f64>().unwrap();
            let rendered = fields[state].parse::<u8>().unwrap() != haptic_recording::NOT_RENDERED;
            let force = (number(fx).powi(2) + number(fy).powi(2) + number(fz).powi(2)).sqrt();
            (rendered, force)
        })
        .collect();
    UnplugRun {
        output,
        summary,
        ticks,
    }
}

/// Checks what an unplugged device must do to a run: a counted trip, zero
/// force on every tick it is away, and then either the run goes on to its
/// duration, rendering again (`"wait"`), or it ends as `device lost`, exit
/// code 1, soon after the loss (`"stop"`).
pub fn check_unplugged_run(run: &UnplugRun, on_disconnect: &str) {
    let (s, stderr) = (&run.summary, String::from_utf8_lossy(&run.output.stderr));
    assert_eq!(s["safety_trips"]["disconnected"], 1, "{s}\n{stderr}");
    let first_lost = run.ticks.iter().position(|(rendered, _)| !rendered);
    let first_lost = first_lost.unwrap_or_else(|| panic!("no tick lost the device: {s}"));
    // Pressed before the loss, nothing while it lasts.
    assert!(run.ticks[..first_lost].iter().any(|(_, f)| *f > 0.1), "{s}");
    let away: Vec<_> = run.ticks[first_lost..]
        .iter()
        .take_while(|(rendered, _)| !rendered)
        .collect();
    assert!(away.iter().all(|(_, f)| *f == 0.0), "force while lost: {s}");
    let after = &run.ticks[first_lost + away.len()..];
    match on_disconnect {
        "wait" => {
            assert!(run.output.status.success(), "{stderr}");
            assert_eq!(s["reason"], "duration reached", "{s}");
            assert!(away.len() >= 200, "away for {} ticks", away.len());
            // Back: every tick renders again. The force returns through a
            // soft start, which waits until the request is small, as a
            // handle still pressing the floor may not make it.
            assert!(after.len() >= 1000, "back for {} ticks", after.len());
            assert!(after.iter().all(|(rendered, _)| *rendered), "{s}");
        }
        "stop" => {
            assert_eq!(run.output.status.code(), Some(1), "{stderr}");
            assert_eq!(s["reason"], "device lost", "{s}");
            assert!(stderr.contains("on_disconnect"), "{stderr}");
            assert!(after.is_empty(), "rendered again after the loss: {s}");
            assert!(away.len() < 100, "went on for {} ticks", away.len());
        }
        other => panic!("{other}"),
    }
}
