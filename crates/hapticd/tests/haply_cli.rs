//! Haply devices from the command line, against the simulated Inverse
//! Service (`haply-sim`, on 127.0.0.1 at a port of its own): `hapticd
//! devices` lists what it reports, `hapticd run --device haply` runs the
//! default scene on it, ending with zero force, through a lost
//! connection it waits for or, with `on_disconnect = "stop"`, stops on
//! (reason `device lost`, exit code 1).

use haply_sim::{SimConfig, SimService};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn hapticd() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hapticd"));
    command.current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    command
}

/// The default scene, its `[device.haply]` pointed at `sim` and centred
/// on the simulated handle's rest position (so the handle rests at the
/// device origin, where the default scene presses the cube into the
/// floor), with each of `changes` (a line of the table and the line that
/// replaces it) made.
fn config(sim: &SimService, dir: &Path, changes: &[(&str, &str)]) -> PathBuf {
    let rest = SimConfig::default().rest_m;
    let mut text = include_str!("../../../config/default.toml")
        .replace(
            "url = \"ws://127.0.0.1:10001\"",
            &format!("url = \"{}\"", sim.url()),
        )
        .replace(
            "centre_m = [0.0, 0.0, 0.0]",
            &format!("centre_m = [{:?}, {:?}, {:?}]", rest[0], rest[1], rest[2]),
        );
    for (from, to) in changes {
        assert!(text.contains(from), "{from}");
        text = text.replace(from, to);
    }
    let path = dir.join("haply.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn summary(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn devices_lists_what_the_service_reports_or_where_it_looked() {
    let sim = SimService::start(SimConfig::default()).unwrap();
    let output = hapticd()
        .args(["devices", "--haply-url", &sim.url()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(
        stdout.contains(&format!(
            "Haply Inverse Service at {}: 1 Inverse3, 1 VerseGrip\n\
             haply 049D: Inverse3 (inverse3 on COM12)\n\
             haply 61548: VerseGrip (wired on COM3)\n",
            sim.url()
        )),
        "{stdout}"
    );
    let url = sim.url();
    drop(sim);
    let started = Instant::now();
    let output = hapticd()
        .args(["devices", "--haply-url", &url])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(
        stdout.contains(&format!(
            "Haply: cannot connect to the Haply Inverse Service at {url}: "
        )) && stdout.contains("refused"),
        "{stdout}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn run_drives_the_default_scene_through_the_service_and_ends_with_zero_force() {
    let sim = SimService::start(SimConfig::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    // A loaded machine can hold the I/O thread past 20 ms; a stale trip
    // then waits for a small request the pressing hand never makes. Stale
    // samples are tested on their own (crates/device-haply/tests).
    let config = config(
        &sim,
        dir.path(),
        &[("stale_after_ms = 20.0", "stale_after_ms = 100.0")],
    );
    let summary_path = dir.path().join("summary.json");
    let output = hapticd()
        .env("HAPTICD_LOG", "info")
        .args([
            "run",
            "--device",
            "haply",
            "--duration",
            "1.5",
            "--no-server",
        ])
        .arg("--config")
        .arg(&config)
        .arg("--summary-json")
        .arg(&summary_path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let s = summary(&summary_path);
    assert!(s["ticks"].as_u64().unwrap() > 1000, "{s}");
    assert_eq!(s["faults"]["write"], 0, "{s}");
    let trips = &s["safety_trips"];
    assert_eq!(
        (&trips["disconnected"], &trips["sample_not_finite"]),
        (&Value::from(0), &Value::from(0)),
        "{s}"
    );
    // The tool presses the cube into the floor: the rendering asks for a
    // force, and after the soft start it reached the simulated service.
    assert!(s["max_rendered_force_n"].as_f64().unwrap() > 0.5, "{s}");
    assert!(s["max_force_n"].as_f64().unwrap() > 0.1, "{s}");
    assert!(sim.received() > 1000, "{}", sim.received());
    // The shutdown ramp ended with a zero force sent.
    assert_eq!(sim.last_force(), [0.0, 0.0, 0.0]);
}

/// Runs `hapticd run --device haply` on `config` for at most `duration_s`,
/// drops the service's connection once it has received 500 messages, and
/// returns the run's output, its summary, and the time from the drop to
/// the end of the run.
fn run_through_a_drop(
    sim: &SimService,
    config: &Path,
    duration_s: &str,
) -> (std::process::Output, Value, Duration) {
    let summary_path = config.with_extension("json");
    let child = hapticd()
        .env("HAPTICD_LOG", "info")
        .args([
            "run",
            "--device",
            "haply",
            "--duration",
            duration_s,
            "--no-server",
        ])
        .arg("--config")
        .arg(config)
        .arg("--summary-json")
        .arg(&summary_path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while sim.received() < 500 && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let dropped = Instant::now();
    sim.drop_connection();
    let output = child.wait_with_output().unwrap();
    let after = dropped.elapsed();
    (output, summary(&summary_path), after)
}

#[test]
fn a_lost_service_is_waited_for_or_stops_the_run_as_configured() {
    // "wait": the run goes on to its duration, the loss counted once.
    let sim = SimService::start(SimConfig::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config_wait = config(
        &sim,
        dir.path(),
        &[(
            "reconnect_interval_ms = 500.0",
            "reconnect_interval_ms = 100.0",
        )],
    );
    let (output, s, _) = run_through_a_drop(&sim, &config_wait, "2.5");
    assert!(output.status.success(), "{output:?}");
    assert_eq!(s["safety_trips"]["disconnected"], 1, "{s}");
    assert_eq!(s["reason"], "duration reached", "{s}");
    assert_eq!(sim.connections(), 2, "one reconnection");

    // "stop": the run ends soon after the loss, long before its duration.
    let sim = SimService::start(SimConfig::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config_stop = config(
        &sim,
        dir.path(),
        &[("on_disconnect = \"wait\"", "on_disconnect = \"stop\"")],
    );
    let (output, s, after) = run_through_a_drop(&sim, &config_stop, "30");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(after < Duration::from_secs(10), "{after:?}: {stderr}");
    assert!(stderr.contains("on_disconnect"), "{stderr}");
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(s["reason"], "device lost", "{s}");
    assert_eq!(s["safety_trips"]["disconnected"], 1, "{s}");
    assert_eq!(sim.connections(), 1, "no reconnection");
}
