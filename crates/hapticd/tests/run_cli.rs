//! `hapticd run` and `hapticd replay` as a user runs them: the built binary
//! in a temporary directory, stopped by signals or by the end of a
//! recording, its recordings and summaries read back.

mod common;

use common::record_trajectory;
use haptic_friction::FrictionState;
use haptic_render::FrictionVerdict;
use nalgebra::Vector3;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn hapticd() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hapticd"));
    // The servo asks for SCHED_FIFO; under test it may or may not get it.
    command.env("HAPTICD_LOG", "info");
    command
}

/// `hapticd run` serving its control API on a free port, so that runs in
/// parallel do not compete for the default one.
fn hapticd_run() -> Command {
    let mut command = hapticd();
    command.args(["run", "--listen", "127.0.0.1:0"]);
    command
}

/// `hapticd replay --config CONFIG --trajectory TRAJECTORY --out OUT`,
/// which must succeed.
fn replay(config: &Path, trajectory: &Path, out: &Path) {
    let output = hapticd()
        .args(["replay", "--config"])
        .arg(config)
        .arg("--trajectory")
        .arg(trajectory)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A running daemon whose standard error is collected line by line.
struct Daemon {
    child: Child,
    lines: mpsc::Receiver<String>,
    stderr: Vec<String>,
}

impl Daemon {
    fn start(args: &[&str]) -> Daemon {
        let mut child = hapticd_run()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("hapticd starts");
        let stderr = child.stderr.take().unwrap();
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Daemon {
            child,
            lines,
            stderr: Vec::new(),
        }
    }

    /// Waits for a log line containing `needle`.
    fn wait_for(&mut self, needle: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            match self.lines.recv_timeout(Duration::from_millis(50)) {
                Ok(line) => {
                    let found = line.contains(needle);
                    self.stderr.push(line);
                    if found {
                        return;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        panic!("no {needle:?} in:\n{}", self.stderr.join("\n"));
    }

    fn signal(&self, signal: i32) {
        // SAFETY: kill(2) on our own child's pid.
        let result = unsafe { libc::kill(self.child.id() as libc::pid_t, signal) };
        assert_eq!(result, 0);
    }

    /// SIGINT and SIGTERM delivered together, however loaded the machine:
    /// sent while the daemon is stopped, so both are pending (two different
    /// signals, which do not merge) when it continues. Returns the exit
    /// codes either may end it with, as the handlers may run in either order
    /// on different threads.
    fn two_signals(&self) -> [i32; 2] {
        self.signal(libc::SIGSTOP);
        self.signal(libc::SIGINT);
        self.signal(libc::SIGTERM);
        self.signal(libc::SIGCONT);
        [128 + libc::SIGINT, 128 + libc::SIGTERM]
    }

    /// Waits for exit; returns the status, standard output and error.
    fn finish(mut self, timeout: Duration) -> (ExitStatus, String, String) {
        let deadline = Instant::now() + timeout;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                self.child.kill().unwrap();
                panic!("hapticd did not exit:\n{}", self.stderr.join("\n"));
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let mut stdout = String::new();
        std::io::Read::read_to_string(self.child.stdout.as_mut().unwrap(), &mut stdout).unwrap();
        while let Ok(line) = self.lines.recv_timeout(Duration::from_millis(200)) {
            self.stderr.push(line);
        }
        (status, stdout, self.stderr.join("\n"))
    }
}

/// One row of a tick recording.
#[derive(Debug)]
struct Row {
    time_s: f64,
    position: [f64; 3],
    force: [f64; 3],
    torque: [f64; 3],
    rendered_force: [f64; 3],
    contacts: u32,
    state: u8,
    verdict: u8,
}

/// Reads a tick recording with the library's reader, checking that every
/// line is whole.
fn read_ticks(path: &Path) -> Vec<Row> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.ends_with('\n'), "{} ends mid-line", path.display());
    haptic_recording::read_csv(&text, &path.display().to_string())
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|r| Row {
            time_s: r.time.as_secs_f64(),
            position: r.pose.translation.vector.into(),
            force: r.wrench.force.into(),
            torque: r.wrench.torque.into(),
            rendered_force: r.rendered.force.into(),
            contacts: r.contacts,
            state: r.state,
            verdict: r.verdict,
        })
        .collect()
}

impl Row {
    /// The friction verdict; `None` when nothing was rendered.
    fn verdict(&self) -> Option<FrictionVerdict> {
        FrictionVerdict::from_code(self.verdict)
    }

    fn friction_state(&self) -> Option<FrictionState> {
        self.verdict().map(FrictionVerdict::state)
    }
}

fn norm(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

fn read_summary(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// SIGINT or SIGTERM on the default scene: the force ramps to zero, the
/// recording is complete and synced, the summary is written, exit 0.
fn stops_cleanly_on(signal: i32, name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("ticks.csv");
    let summary = dir.path().join("summary.json");
    let mut daemon = Daemon::start(&[
        "--record",
        record.to_str().unwrap(),
        "--summary-json",
        summary.to_str().unwrap(),
    ]);
    daemon.wait_for("running", Duration::from_secs(120));
    // Into contact: the default motion reaches the floor after about 1 s.
    std::thread::sleep(Duration::from_millis(2000));
    daemon.signal(signal);
    let (status, stdout, stderr) = daemon.finish(Duration::from_secs(20));
    assert_eq!(status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("stopped after"), "{stdout}");
    assert!(stdout.contains(name), "{stdout}");

    let summary = read_summary(&summary);
    assert_eq!(summary["reason"], name);
    for key in ["solver_failed", "quarantined"] {
        assert!(summary["faults"][key].is_u64(), "{summary}");
    }
    for key in ["static_in_band", "sliding_in_band"] {
        assert!(summary["band_decisions"][key].is_u64(), "{summary}");
    }
    let verdicts: u64 = summary["verdicts"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(verdicts, summary["recorded_ticks"].as_u64().unwrap());
    let ticks = summary["ticks"].as_u64().unwrap();
    let elapsed = summary["elapsed_s"].as_f64().unwrap();
    assert!(elapsed > 1.5, "{summary}");
    // At 1 kHz less the deadlines a loaded machine made it skip.
    let skipped = summary["skipped_deadlines"].as_u64().unwrap();
    assert!(
        (ticks + skipped) as f64 >= 0.99 * elapsed * 1000.0,
        "{summary}"
    );

    let rows = read_ticks(&record);
    assert_eq!(
        rows.len() as u64,
        summary["recorded_ticks"].as_u64().unwrap()
    );
    assert!(
        rows.len() as u64 + summary["telemetry_dropped"].as_u64().unwrap() == ticks,
        "{} rows, {summary}",
        rows.len()
    );
    assert!(rows.iter().any(|r| r.contacts > 0 && norm(r.force) > 0.1));
    let last = rows.last().unwrap();
    assert_eq!(norm(last.force), 0.0, "{last:?}");
    assert_eq!(norm(last.torque), 0.0, "{last:?}");
    // Pressed into the floor when stopped: the force came down over the
    // safety layer's 10-tick ramp, (1 − k/10) of the force it was stopped
    // at in its k-th tick, a tick apart. An overrun ends the ramp in zero
    // at once, as any overrun zeroes the output: a loaded machine may do
    // that, and the servo then wrote the zero after skipping deadlines.
    let ramping = |r: &Row| norm(r.force) < norm(r.rendered_force) * (1.0 - 1e-9);
    let before_last = &rows[..rows.len() - 1];
    let ramp_len = before_last.iter().rev().take_while(|r| ramping(r)).count();
    let ramp = &before_last[before_last.len() - ramp_len..];
    let stopped_at = &before_last[before_last.len() - ramp_len - 1];
    let from = norm(stopped_at.force);
    assert!(from > 0.5, "{stopped_at:?}");
    let tick = 1e-3;
    for (k, row) in ramp.iter().enumerate() {
        let scale = 1.0 - (k + 1) as f64 / 10.0;
        assert!(
            (norm(row.force) - scale * from).abs() < 1e-9 * from,
            "ramp tick {}: {row:?} from {from} N",
            k + 1
        );
        assert!((row.time_s - stopped_at.time_s - (k + 1) as f64 * tick).abs() < tick / 2.0);
    }
    let end = ramp.last().unwrap_or(stopped_at);
    if ramp_len < 9 {
        assert!(
            last.time_s - end.time_s > 1.5 * tick,
            "ramp cut short without an overrun: {ramp:?} {last:?}"
        );
    } else {
        assert!(
            (last.time_s - end.time_s - tick).abs() < tick / 2.0,
            "{last:?}"
        );
    }
}

#[test]
fn sigint_ramps_to_zero_flushes_and_exits_0() {
    stops_cleanly_on(libc::SIGINT, "SIGINT");
}

#[test]
fn sigterm_ramps_to_zero_flushes_and_exits_0() {
    stops_cleanly_on(libc::SIGTERM, "SIGTERM");
}

#[test]
fn a_second_signal_exits_at_once_with_zero_force() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("ticks.csv");
    let mut daemon = Daemon::start(&["--record", record.to_str().unwrap()]);
    daemon.wait_for("running", Duration::from_secs(120));
    std::thread::sleep(Duration::from_millis(1500));
    // Together, well within the 10 ms ramp the first one starts.
    let codes = daemon.two_signals();
    let sent = Instant::now();
    let (status, _, stderr) = daemon.finish(Duration::from_secs(20));
    assert!(sent.elapsed() < Duration::from_secs(2), "{stderr}");
    assert!(codes.map(Some).contains(&status.code()), "{stderr}");
    assert!(stderr.contains("aborted: output zeroed"), "{stderr}");
    // The wrench last written to the device.
    assert!(stderr.contains("force_n=0.0"), "{stderr}");
    // Whatever reached the file is whole lines.
    read_ticks(&record);
}

/// The daemon on peg-in-hole with a 256³ field, which takes seconds to
/// build, once it has started building.
fn daemon_building_a_slow_scene(dir: &Path) -> Daemon {
    let config = dir.join("slow.toml");
    let text = std::fs::read_to_string(repo().join("config/peg-in-hole.toml"))
        .unwrap()
        .replace("field_resolution = 128", "field_resolution = 256");
    std::fs::write(&config, text).unwrap();
    let mut daemon = Daemon::start(&["--config", config.to_str().unwrap()]);
    daemon.wait_for("building the scene", Duration::from_secs(60));
    daemon
}

#[test]
fn a_signal_during_start_up_stops_before_the_servo_starts() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = daemon_building_a_slow_scene(dir.path());
    daemon.signal(libc::SIGINT);
    let (status, stdout, stderr) = daemon.finish(Duration::from_secs(120));
    assert_eq!(status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stderr.contains("stopped during start-up"), "{stderr}");
    assert!(!stderr.contains("running;"), "{stderr}");
    assert!(stdout.contains("0 ticks"), "{stdout}");
}

#[test]
fn a_second_signal_during_start_up_exits_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = daemon_building_a_slow_scene(dir.path());
    let codes = daemon.two_signals();
    let sent = Instant::now();
    let (status, _, stderr) = daemon.finish(Duration::from_secs(120));
    // Well before the 256³ field is built.
    assert!(sent.elapsed() < Duration::from_secs(2), "{stderr}");
    assert!(codes.map(Some).contains(&status.code()), "{stderr}");
    assert!(stderr.contains("second signal during start-up"), "{stderr}");
}

/// Every log line is a JSON object with `--log-format json`, and with
/// standard error not a terminal no status line is drawn.
#[test]
fn json_logs_and_no_status_line_off_a_terminal() {
    let output = hapticd_run()
        .args(["--duration", "1.5", "--log-format", "json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        !stderr.contains('\r') && !stderr.contains("\x1b["),
        "{stderr:?}"
    );
    let lines: Vec<Value> = stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}")))
        .collect();
    assert!(lines.len() >= 4, "{stderr}");
    for line in &lines {
        assert!(
            line["timestamp"].is_string() && line["level"].is_string(),
            "{line}"
        );
    }
    assert!(lines
        .iter()
        .any(|l| l["message"] == "running; SIGINT or SIGTERM stops"));
}

/// The UDP telemetry stream: tick datagrams with the poses, the wrench and
/// the state, and latency digests.
#[test]
fn telemetry_streams_ticks_and_latency_over_udp() {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let address = socket.local_addr().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("stream.toml");
    let text = std::fs::read_to_string(repo().join("config/default.toml"))
        .unwrap()
        .replace("127.0.0.1:7701", &address.to_string());
    std::fs::write(&config, text).unwrap();
    let daemon = Daemon::start(&["--config", config.to_str().unwrap(), "--duration", "2"]);
    let mut ticks = Vec::new();
    let mut digests = Vec::new();
    let mut buffer = [0u8; 65536];
    while ticks.len() < 100 || digests.len() < 2 {
        let (len, _) = socket.recv_from(&mut buffer).expect("a datagram");
        let value: Value = serde_json::from_slice(&buffer[..len]).unwrap();
        match value["type"].as_str() {
            Some("tick") => ticks.push(value),
            Some("latency") => digests.push(value),
            other => panic!("unknown datagram type {other:?}"),
        }
    }
    let (status, _, stderr) = daemon.finish(Duration::from_secs(30));
    assert!(status.success(), "{stderr}");
    // At the telemetry rate (100 Hz), each the newest tick of its drain.
    let numbers: Vec<u64> = ticks.iter().map(|t| t["tick"].as_u64().unwrap()).collect();
    assert!(numbers.windows(2).all(|w| w[1] > w[0]));
    let mean_step = (numbers[numbers.len() - 1] - numbers[0]) as f64 / (numbers.len() - 1) as f64;
    assert!((5.0..20.0).contains(&mean_step), "{mean_step}");
    for tick in &ticks {
        assert_eq!(tick["device"]["position_m"].as_array().unwrap().len(), 3);
        assert_eq!(
            tick["tool"]["orientation_wijk"].as_array().unwrap().len(),
            4
        );
        assert_eq!(tick["force_n"].as_array().unwrap().len(), 3);
        assert!(["free", "sliding", "static", "not_rendered"]
            .contains(&tick["state"].as_str().unwrap()));
        let verdict = tick["verdict"].as_str().unwrap();
        assert!(
            verdict == "not_rendered" || FrictionVerdict::ALL.iter().any(|v| v.name() == verdict),
            "{tick}"
        );
        assert_eq!(tick["rendered_force_n"].as_array().unwrap().len(), 3);
        assert_eq!(tick["rendered_torque_n_m"].as_array().unwrap().len(), 3);
        assert_eq!(tick["quarantined"], false);
        for fault in ["read", "render", "write", "solver_failed", "quarantined"] {
            assert!(tick["faults"][fault].is_u64(), "{fault}: {tick}");
        }
        assert!(tick["band_decisions"].is_u64(), "{tick}");
    }
    assert!(ticks.iter().any(|t| t["contacts"].as_u64().unwrap() > 0));
    for digest in &digests {
        let p99 = digest["wake_latency_us"]["p99"].as_f64().unwrap();
        assert!(p99 > 0.0 && p99 < 1e5, "{digest}");
    }
}

/// The peg-in-hole motion of config/peg-in-hole.toml: hold, push 1 mm,
/// then 15 mm deeper, hold.
const PEG_MOTION: &str = r#"
segments = [
    { type = "hold", duration_s = 0.2 },
    { type = "line", to_m = [0.0, 0.0, -0.001], duration_s = 2.0 },
    { type = "line", to_m = [0.0, 0.0, -0.016], duration_s = 3.0 },
    { type = "hold", duration_s = 0.3 },
]
"#;

/// The daemon driven by the emulator through the §5.3 peg-in-hole of Zhao, Li & Barbič
/// (μ = 0.3, a peg 1 % larger than its hole): the recorded forces must be
/// those of a peg sliding into a tight hole.
#[test]
fn peg_in_hole_through_the_daemon_records_physical_forces() {
    let dir = tempfile::tempdir().unwrap();
    let trajectory = record_trajectory(PEG_MOTION, dir.path());
    let record = dir.path().join("ticks.csv");
    let summary = dir.path().join("summary.json");
    let config = repo().join("config/peg-in-hole.toml");
    let mut daemon = Daemon::start(&[
        "--config",
        config.to_str().unwrap(),
        "--device",
        "emulator",
        "--trajectory",
        trajectory.to_str().unwrap(),
        "--record",
        record.to_str().unwrap(),
        "--until-end",
        "--summary-json",
        summary.to_str().unwrap(),
    ]);
    daemon.wait_for("running", Duration::from_secs(300));
    let (status, stdout, stderr) = daemon.finish(Duration::from_secs(60));
    assert_eq!(status.code(), Some(0), "{stdout}\n{stderr}");
    let summary = read_summary(&summary);
    assert_eq!(summary["reason"], "end of recording");
    let rows = read_ticks(&record);
    // 5.5 s of trajectory at 1 kHz, less skipped deadlines.
    assert!(rows.len() > 5000, "{} rows", rows.len());

    // The handle moved as recorded, down by 16 mm, less the hand's give
    // under the insertion force (about a millimetre).
    let start = rows[0].position;
    let deepest = rows.iter().map(|r| r.position[2]).fold(f64::MAX, f64::min);
    assert!(
        (0.014..0.0165).contains(&(start[2] - deepest)),
        "{start:?} {deepest}"
    );

    // The peg is in the hole throughout: always in contact.
    assert!(rows.iter().all(|r| r.contacts > 0 || r.verdict().is_none()));
    // The state column is the verdict's state.
    for row in &rows {
        let state = row.friction_state().map(|s| match s {
            FrictionState::Free => FrictionVerdict::Free,
            FrictionState::Sliding => FrictionVerdict::Sliding,
            FrictionState::Static => FrictionVerdict::Static,
        });
        assert_eq!(
            state.map_or(255, FrictionVerdict::code),
            row.state,
            "{row:?}"
        );
    }

    // While the peg slides in (the deep push, 2.8–4.8 s), the force on the
    // hand resists the insertion (+z), at the insertion force of
    // crates/render/tests/peg_in_hole.rs with static friction with bounded
    // pre-sliding, a rigid wedge's √2 μ Σ‖F_n‖ (F = 0.004 + 1.125 μ N), and
    // is axial by symmetry.
    let sliding: Vec<&Row> = rows
        .iter()
        .filter(|r| (2.8..4.8).contains(&r.time_s))
        .collect();
    assert!(sliding.len() > 1500);
    let mean =
        |f: &dyn Fn(&Row) -> f64| sliding.iter().map(|r| f(r)).sum::<f64>() / sliding.len() as f64;
    let fz = mean(&|r| r.force[2]);
    let lateral = mean(&|r| r.force[0].hypot(r.force[1]));
    let (low, high) = (0.9 * (0.004 + 1.125 * 0.3), 1.1 * (0.004 + 1.125 * 0.3));
    assert!(
        fz > low && fz < high,
        "mean insertion force {fz} N, expected {low}–{high} N"
    );
    assert!(
        lateral < 0.2 * fz,
        "lateral {lateral} N against axial {fz} N"
    );
    // The peg went in with the handle: had it stuck, the coupling (1,000
    // N/m) would have built up newtons over the 10 mm the handle moved in
    // this window. It slides with friction at its limit.
    let peak = sliding.iter().map(|r| r.force[2]).fold(f64::MIN, f64::max);
    let travel = sliding[0].position[2] - sliding[sliding.len() - 1].position[2];
    eprintln!("insertion force: mean {fz:.4} N, peak {peak:.4} N, lateral {lateral:.5} N over {travel:.4} m");
    assert!(travel > 0.009, "the handle moved {travel} m");
    assert!(peak < 3.0 * high, "peak {peak} N");
    assert!(sliding
        .iter()
        .any(|r| r.friction_state() == Some(FrictionState::Sliding)));
}

/// The physics thread, live: the daemon pushes config/push-block.toml's
/// movable block with the emulator; the block ends where the sphere left
/// it.
#[test]
fn the_daemon_pushes_a_movable_block() {
    let dir = tempfile::tempdir().unwrap();
    let config = repo().join("config/push-block.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    let motion = &text[text.find("segments = [").unwrap()..];
    let trajectory = record_trajectory(motion, dir.path());
    let summary = dir.path().join("summary.json");
    let daemon = Daemon::start(&[
        "--config",
        config.to_str().unwrap(),
        "--trajectory",
        trajectory.to_str().unwrap(),
        "--until-end",
        "--summary-json",
        summary.to_str().unwrap(),
    ]);
    let (status, stdout, stderr) = daemon.finish(Duration::from_secs(120));
    assert_eq!(status.code(), Some(0), "{stdout}\n{stderr}");
    let summary = read_summary(&summary);
    let block = &summary["movable"][0];
    assert_eq!(block["name"], "block");
    let x = block["position_m"][0].as_f64().unwrap();
    // Starts at 65 mm; the sphere's 60 mm travel closes the 20 mm gap and
    // carries the block 40 mm on.
    assert!((x - 0.105).abs() < 0.005, "{summary}");
    assert!(
        summary["physics_steps"].as_u64().unwrap() > 700,
        "{summary}"
    );
}

#[test]
fn until_end_stops_at_the_end_of_the_recording() {
    let dir = tempfile::tempdir().unwrap();
    let trajectory = record_trajectory(
        "segments = [{ type = \"line\", to_m = [0.0, 0.0, -0.002], duration_s = 0.5 }]\n",
        dir.path(),
    );
    let started = Instant::now();
    let daemon = Daemon::start(&["--trajectory", trajectory.to_str().unwrap(), "--until-end"]);
    let (status, stdout, stderr) = daemon.finish(Duration::from_secs(120));
    assert_eq!(status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("end of recording"), "{stdout}");
    assert!(started.elapsed() > Duration::from_millis(500));
}

#[test]
fn a_hid_device_without_a_profile_is_the_one_that_matches() {
    // With no HID device connected (as here) the run stops before the
    // servo starts and says why; with one it would use it and say which.
    let output = hapticd_run()
        .args(["--device", "hid", "--duration", "1"])
        .current_dir(repo())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    if stderr.contains("using the one connected HID device") {
        return;
    }
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("no connected HID device matches a profile in config/../device-profiles"),
        "{stderr}"
    );
}

#[test]
fn bad_configs_and_arguments_fail_naming_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    let default = std::fs::read_to_string(repo().join("config/default.toml")).unwrap();
    let cases: [(&str, String, &[&str]); 3] = [
        (
            "unknown field",
            default.replace("static_damping = 0.6", "static_dampng = 0.6"),
            &["bad.toml:", "static_dampng", "rendering"],
        ),
        (
            "bad value",
            default.replace("pyramid_sides = 8", "pyramid_sides = 2"),
            &["bad.toml:", "rendering.pyramid_sides"],
        ),
        (
            "missing mesh file",
            default.replace(
                "shape = { kind = \"corner\", reach_m = 0.1, height_m = 0.1, thickness_m = 0.02, depth_m = 0.06 }",
                "mesh = \"no-such-corner.stl\"",
            ),
            &["bad.toml:", "objects[1].mesh", "no-such-corner.stl"],
        ),
    ];
    for (case, text, needles) in cases {
        assert_ne!(text, default, "{case}: the substitution missed");
        let changed = default
            .lines()
            .zip(text.lines())
            .position(|(a, b)| a != b)
            .unwrap()
            + 1;
        std::fs::write(&bad, text).unwrap();
        let output = hapticd_run().args(["--config"]).arg(&bad).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{case}: {stderr}");
        for needle in needles {
            assert!(
                stderr.contains(needle),
                "{case}: {needle:?} not in {stderr}"
            );
        }
        assert!(
            stderr.contains(&format!("bad.toml:{changed}:")),
            "{case}: line {changed} not named in {stderr}"
        );
    }
    let reference = default.replace("solver = \"fast\"", "solver = \"reference\"");
    std::fs::write(&bad, reference).unwrap();
    let output = hapticd_run().args(["--config"]).arg(&bad).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr.contains("allocates in every tick"), "{stderr}");

    let output = hapticd_run().args(["--until-end"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr.contains("--until-end needs the emulator"),
        "{stderr}"
    );

    let output = hapticd_run()
        .args(["--trajectory", "no-such.traj"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr.contains("no-such.traj"), "{stderr}");
}

#[test]
fn replay_is_deterministic_to_the_byte() {
    let dir = tempfile::tempdir().unwrap();
    let trajectory = record_trajectory(
        "segments = [{ type = \"line\", to_m = [0.0, 0.0, -0.004], duration_s = 0.4 }, { type = \"hold\", duration_s = 0.2 }]\n",
        dir.path(),
    );
    let config = repo().join("config/cube-corner.toml");
    let outs: Vec<PathBuf> = (0..2)
        .map(|i| {
            let out = dir.path().join(format!("replay{i}.csv"));
            replay(&config, &trajectory, &out);
            out
        })
        .collect();
    let rows = read_ticks(&outs[0]);
    let samples = std::fs::read_to_string(&trajectory)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .count();
    // One tick per recorded sample, the last one held for a tick.
    assert!(
        (samples..=samples + 1).contains(&rows.len()),
        "{} ticks for {samples} samples",
        rows.len()
    );
    assert!(rows.iter().any(|r| r.contacts > 0 && norm(r.force) > 0.5));
    assert_eq!(
        std::fs::read(&outs[0]).unwrap(),
        std::fs::read(&outs[1]).unwrap()
    );
}

/// `--out x.mcap` records the same ticks as MCAP, deterministically; a run
/// records MCAP too; and the emulator refuses a recording as a trajectory.
#[test]
fn recordings_in_mcap_hold_the_ticks_the_csv_holds() {
    let dir = tempfile::tempdir().unwrap();
    let trajectory = record_trajectory(
        "segments = [{ type = \"line\", to_m = [0.0, 0.0, -0.004], duration_s = 0.3 }]\n",
        dir.path(),
    );
    let config = repo().join("config/cube-corner.toml");
    let csv = dir.path().join("replay.csv");
    replay(&config, &trajectory, &csv);
    let mcaps: Vec<PathBuf> = (0..2)
        .map(|i| {
            let out = dir.path().join(format!("replay{i}.mcap"));
            replay(&config, &trajectory, &out);
            out
        })
        .collect();
    let ticks = haptic_recording::load_recording(&csv).unwrap();
    assert!(ticks.len() > 300);
    assert_eq!(haptic_recording::load_recording(&mcaps[0]).unwrap(), ticks);
    assert_eq!(
        std::fs::read(&mcaps[0]).unwrap(),
        std::fs::read(&mcaps[1]).unwrap()
    );

    let record = dir.path().join("run.mcap");
    let summary = dir.path().join("summary.json");
    let output = hapticd()
        .args(["run", "--config"])
        .arg(&config)
        .arg("--trajectory")
        .arg(&trajectory)
        .arg("--record")
        .arg(&record)
        .arg("--summary-json")
        .arg(&summary)
        .args(["--until-end", "--duration", "60"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    let recorded = haptic_recording::load_recording(&record).unwrap();
    assert_eq!(summary["recorded_ticks"], recorded.len());
    assert!(recorded.len() >= ticks.len());
    assert!(recorded.iter().any(|t| t.cycle_time_ns > 0));

    let output = hapticd()
        .args(["replay", "--config"])
        .arg(&config)
        .arg("--trajectory")
        .arg(&record)
        .arg("--out")
        .arg(dir.path().join("again.csv"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "{}: an MCAP file, not a trajectory",
            record.display()
        )),
        "{stderr}"
    );
}

/// A kinematic emulator's output is masked: it is written zero, yet the
/// recording shows the wrench rendered, and the tool pose.
#[test]
fn a_kinematic_replay_records_the_rendered_wrench() {
    let dir = tempfile::tempdir().unwrap();
    let trajectory = record_trajectory(
        "segments = [{ type = \"line\", to_m = [-0.002, 0.0, -0.002], duration_s = 0.3 }, { type = \"hold\", duration_s = 0.2 }]\n",
        dir.path(),
    );
    let text = std::fs::read_to_string(repo().join("config/cube-corner.toml")).unwrap();
    let config = dir.path().join("kinematic.toml");
    std::fs::write(
        &config,
        format!("{text}\n[device.emulator]\nmode = \"kinematic\"\n"),
    )
    .unwrap();
    let out = dir.path().join("ticks.csv");
    replay(&config, &trajectory, &out);
    let rows = read_ticks(&out);
    assert!(rows.len() > 400);
    assert!(rows
        .iter()
        .all(|r| norm(r.force) == 0.0 && norm(r.torque) == 0.0));
    // Pressed 2 mm into the floor and the wall through the 1 kN/m coupling.
    let last = rows.last().unwrap();
    assert!(
        last.rendered_force[0] > 0.5 && last.rendered_force[2] > 0.5,
        "{last:?}"
    );
    assert!(matches!(
        last.friction_state(),
        Some(FrictionState::Static | FrictionState::Sliding)
    ));
    // The tool stopped at the surfaces, short of the handle.
    let records = haptic_recording::load_recording(&out).unwrap();
    let tool = records.last().unwrap().tool_pose.translation.vector;
    let handle =
        records.last().unwrap().pose.translation.vector + Vector3::new(0.0255, 0.0, 0.0255);
    assert!(tool.z - handle.z > 0.001, "tool {tool:?} handle {handle:?}");
}

/// A config for the emulator that leaves the trajectory to the command
/// line: `hapticd replay --trajectory` and `hapticd run --trajectory` take
/// it, though the file names no `trajectory_file` (nor a motion).
#[test]
fn the_command_line_gives_the_trajectory_a_config_leaves_out() {
    let dir = tempfile::tempdir().unwrap();
    let trajectory = record_trajectory(
        "segments = [{ type = \"line\", to_m = [-0.002, 0.0, -0.002], duration_s = 0.3 }]\n",
        dir.path(),
    );
    let text = std::fs::read_to_string(repo().join("config/cube-corner.toml")).unwrap();
    let device = &text[text.find("[device]").unwrap()..];
    let emulator_only = text.replace(
        device,
        "[device]\nkind = \"emulator\"\nworkspace_offset_m = [0.0255, 0.0, 0.0255]\n",
    );
    assert!(!emulator_only.contains("trajectory_file") && !emulator_only.contains("segments"));
    let config = dir.path().join("emulator.toml");
    std::fs::write(&config, &emulator_only).unwrap();
    // On its own it cannot run, and says why.
    let output = hapticd().arg("check-config").arg(&config).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("trajectory_file"));

    let out = dir.path().join("ticks.csv");
    replay(&config, &trajectory, &out);
    let rows = read_ticks(&out);
    assert!((301..=302).contains(&rows.len()), "{} ticks", rows.len());
    assert!(rows.iter().any(|r| r.contacts > 0 && norm(r.force) > 0.1));

    let output = hapticd_run()
        .args(["--config"])
        .arg(&config)
        .arg("--trajectory")
        .arg(&trajectory)
        .args(["--until-end", "--duration", "60"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(stdout.contains("end of recording"), "{stdout}");
}

/// Torque in the loop: in hand mode the emulator's handle turns (by
/// default) under the rendered torque. The handle presses the cube into
/// the corner and then twists 0.2 rad about z; friction and the wall hold
/// the cube back, so the coupling twists and its torque turns the handle
/// back against the hand, until `k_hand (θ_rec − θ) = −τ`. With
/// `rotation = "kinematic"` the handle follows the recording and no torque
/// is written.
#[test]
fn a_rendered_torque_turns_the_emulated_handle() {
    let dir = tempfile::tempdir().unwrap();
    let trajectory = record_trajectory(
        r#"segments = [
    { type = "line", to_m = [-0.002, 0.0, -0.002], duration_s = 0.3 },
    { type = "hold", duration_s = 0.2 },
    { type = "rotate", axis = [0.0, 0.0, 1.0], angle_rad = 0.2, duration_s = 0.5 },
    { type = "hold", duration_s = 0.7 },
]
"#,
        dir.path(),
    );
    let text = std::fs::read_to_string(repo().join("config/cube-corner.toml")).unwrap();
    let replay_with = |name: &str, emulator: &str| {
        let config = dir.path().join(format!("{name}.toml"));
        std::fs::write(&config, format!("{text}\n[device.emulator]\n{emulator}\n")).unwrap();
        let out = dir.path().join(format!("{name}.csv"));
        replay(&config, &trajectory, &out);
        haptic_recording::load_recording(&out).unwrap()
    };
    let yaw = |r: &haptic_recording::RecordedTick| r.pose.rotation.scaled_axis().z;

    let turning = replay_with("hand", "mode = \"hand\"");
    let last = turning.last().unwrap();
    let (torque, rendered) = (last.wrench.torque.z, last.rendered.torque.z);
    let lag = 0.2 - yaw(last);
    eprintln!(
        "hand: yaw {:.4} rad, torque {torque:.4} N·m written, {rendered:.4} rendered",
        yaw(last)
    );
    // The coupling pulls the handle back (−z), and the hand balances it
    // (k_hand = 1 N·m/rad by default), the handle at rest.
    assert!(torque < -0.005, "{torque}");
    assert!((torque - rendered).abs() < 1e-6, "{torque} {rendered}");
    assert!(lag > 0.005, "{lag}");
    assert!(
        (lag + torque).abs() < 0.02 * lag,
        "lag {lag} against {}",
        -torque
    );
    // Turned about z only.
    let axis = last.pose.rotation.scaled_axis();
    assert!(axis.x.abs() < 1e-3 && axis.y.abs() < 1e-3, "{axis:?}");

    let following = replay_with("kinematic", "mode = \"hand\"\nrotation = \"kinematic\"");
    let last = following.last().unwrap();
    eprintln!(
        "kinematic rotation: yaw {:.4} rad, torque {:.4} N·m rendered",
        yaw(last),
        last.rendered.torque.z
    );
    assert!((yaw(last) - 0.2).abs() < 1e-9, "{}", yaw(last));
    assert!(following.iter().all(|r| r.wrench.torque.norm() == 0.0));
    // Rendered all the same, but masked.
    assert!(
        last.rendered.torque.z < -0.005,
        "{}",
        last.rendered.torque.z
    );
}

/// A budget far below what the default scene's cycles take: every cycle in
/// contact is cut, and the cuts are counted, not turned into overruns,
/// faults or a lost contact.
#[test]
fn a_tight_rendering_budget_cuts_every_contact_cycle_and_counts_it() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo().join("config/default.toml")).unwrap();
    let tight = text.replace("cycle_budget_us = 250.0", "cycle_budget_us = 2.0");
    assert_ne!(tight, text, "config/default.toml sets cycle_budget_us");
    let config = dir.path().join("tight.toml");
    std::fs::write(&config, tight).unwrap();
    let summary = dir.path().join("summary.json");
    let daemon = Daemon::start(&[
        "--config",
        config.to_str().unwrap(),
        "--duration",
        "3",
        "--summary-json",
        summary.to_str().unwrap(),
    ]);
    let (status, stdout, stderr) = daemon.finish(Duration::from_secs(120));
    assert_eq!(status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("rendering budget cut: collision in"),
        "{stdout}"
    );
    let summary = read_summary(&summary);
    let cuts = &summary["budget_cuts"];
    let collision = cuts["collision"].as_u64().unwrap();
    // The default motion reaches the floor within about a second and stays.
    assert!(collision > 500, "{summary}");
    assert!(cuts["friction"].as_u64().unwrap() > 0, "{summary}");
    assert!(
        cuts["mean_unresolved_points"].as_f64().unwrap() > 0.0,
        "{summary}"
    );
    let faults = &summary["faults"];
    for key in ["render", "solver_failed", "quarantined"] {
        assert_eq!(faults[key], 0, "{summary}");
    }
    // Coarse contacts still hold the cube on the floor and against the wall.
    assert!(summary["max_contacts"].as_u64().unwrap() > 10, "{summary}");
    let force = summary["max_force_n"].as_f64().unwrap();
    assert!(force > 0.5 && force < 20.0, "{summary}");
}
