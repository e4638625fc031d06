//! `hapticd run`'s control API and state stream as a script uses them: the
//! daemon on port 0 with `--port-file`, then HTTP and a WebSocket client on
//! the port it wrote.

mod common;

use haptic_testkit::simulation::acceleration;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// One HTTP request; returns the status and the JSON body.
fn http(port: u16, method: &str, path: &str, body: Option<&str>) -> (u16, Value) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let body = body.unwrap_or("");
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    let (head, json) = reply.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, serde_json::from_str(json).unwrap())
}

/// A WebSocket client reading the server's (unmasked) frames.
struct Stream(TcpStream);

impl Stream {
    fn connect(port: u16, query: &str) -> Stream {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        write!(
            stream,
            "GET /v1/stream?{query} HTTP/1.1\r\nHost: test\r\nUpgrade: websocket\r\n\
             Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        )
        .unwrap();
        let mut head = Vec::new();
        while !head.ends_with(b"\r\n\r\n") {
            let mut byte = [0];
            stream.read_exact(&mut byte).unwrap();
            head.push(byte[0]);
        }
        let head = String::from_utf8(head).unwrap();
        assert!(head.starts_with("HTTP/1.1 101"), "{head}");
        Stream(stream)
    }

    /// The next frame: its opcode (1 text, 2 binary) and payload.
    fn frame(&mut self) -> (u8, Vec<u8>) {
        let mut head = [0; 2];
        self.0.read_exact(&mut head).unwrap();
        let length = match head[1] & 0x7f {
            126 => {
                let mut n = [0; 2];
                self.0.read_exact(&mut n).unwrap();
                u16::from_be_bytes(n) as usize
            }
            127 => {
                let mut n = [0; 8];
                self.0.read_exact(&mut n).unwrap();
                u64::from_be_bytes(n) as usize
            }
            n => n as usize,
        };
        let mut payload = vec![0; length];
        self.0.read_exact(&mut payload).unwrap();
        (head[0] & 0x0f, payload)
    }

    fn text(&mut self) -> Value {
        let (opcode, payload) = self.frame();
        assert_eq!(opcode, 1, "not a text frame");
        serde_json::from_slice(&payload).unwrap()
    }

    /// Reads text frames until one satisfies `wanted`, for `timeout`.
    fn until(&mut self, timeout: Duration, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            assert!(Instant::now() < deadline, "no such frame in {timeout:?}");
            let frame = self.text();
            if wanted(&frame) {
                return frame;
            }
        }
    }
}

/// The daemon, stopped by SIGTERM when dropped.
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        // SAFETY: kill sends a signal to our own child.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let _ = self.0.wait();
    }
}

/// `hapticd run --listen 127.0.0.1:0` with `args`, its standard error in
/// `dir`; the daemon and the port it wrote to its port file.
fn start(dir: &Path, args: &[&str]) -> (Daemon, u16) {
    start_with(dir, args, Command::new(env!("CARGO_BIN_EXE_hapticd")))
}

/// [`start`] through `command`, its environment set.
fn start_with(dir: &Path, args: &[&str], mut command: Command) -> (Daemon, u16) {
    let port_file = dir.join("port");
    let log = std::fs::File::create(dir.join("stderr")).unwrap();
    let child = command
        .args(["run", "--listen", "127.0.0.1:0"])
        .args(args)
        .arg("--port-file")
        .arg(&port_file)
        .current_dir(repo())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let mut daemon = Daemon(child);
    let started = Instant::now();
    let port = loop {
        if let Ok(text) = std::fs::read_to_string(&port_file) {
            break text.trim().parse().unwrap();
        }
        assert!(started.elapsed() < Duration::from_secs(30), "no port file");
        assert!(daemon.0.try_wait().unwrap().is_none(), "hapticd ended");
        std::thread::sleep(Duration::from_millis(20));
    };
    (daemon, port)
}

/// One daemon of this file's at a time: the flicked block's deceleration
/// is read off stream stamps, which daemons running beside it on two
/// cores made late by more than a physics step (2.43 and 3.44 m/s²
/// against μg = 2.94 in two runs of three).
fn alone() -> MutexGuard<'static, ()> {
    static DAEMONS: Mutex<()> = Mutex::new(());
    DAEMONS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[test]
fn the_control_api_and_stream_of_a_running_daemon() {
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    let (mut daemon, port) = start(dir.path(), &["--duration", "120"]);
    let started = Instant::now();
    let stderr = std::fs::read_to_string(dir.path().join("stderr")).unwrap();
    assert!(
        stderr.contains(&format!("listening on http://127.0.0.1:{port}")),
        "{stderr}"
    );
    // The scene builds while the server already answers.
    let parameters = loop {
        let (status, reply) = http(port, "GET", "/v1/parameters", None);
        if status == 200 {
            break reply["data"].clone();
        }
        assert_eq!(reply["error"]["code"], "busy", "{reply}");
        assert!(started.elapsed() < Duration::from_secs(60), "no scene");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(parameters["generation"], 0);

    let mut stream = Stream::connect(port, "rate_hz=100&contacts=8");
    let hello = stream.text();
    assert_eq!(hello["type"], "hello", "{hello}");
    let objects = hello["objects"].as_array().unwrap().len();
    assert_eq!(objects, 2);
    for index in 0..objects {
        let (opcode, geometry) = stream.frame();
        assert_eq!(opcode, 2);
        assert_eq!(&geometry[..4], b"HGEO");
        assert_eq!(geometry[8] as usize, index);
    }
    // The default scene presses the cube into the corner.
    let touching = stream.until(Duration::from_secs(20), |f| {
        f["type"] == "tick" && !f["contact_points"].as_array().unwrap().is_empty()
    });
    assert!(touching["contact_points"].as_array().unwrap().len() <= 8);
    assert_eq!(touching["environment"].as_array().unwrap().len(), 1);

    let (status, refused) = http(
        port,
        "PATCH",
        "/v1/parameters",
        Some(r#"{"rendering": {"static_damping": 2}}"#),
    );
    assert_eq!(status, 422, "{refused}");
    assert_eq!(refused["error"]["field"], "rendering.static_damping");
    assert_eq!(
        http(port, "GET", "/v1/parameters", None).1["data"],
        parameters
    );
    let (status, changed) = http(
        port,
        "PATCH",
        "/v1/parameters",
        Some(r#"{"materials": {"wood": {"friction_coefficient": 0.8}}}"#),
    );
    assert_eq!(status, 200, "{changed}");
    assert_eq!(changed["data"]["generation"], 1);
    assert!(changed["data"]["applied_tick"].is_u64());
    // Friction state changes are events too.
    let event = stream.until(Duration::from_secs(5), |f| f["event"] == "parameters");
    assert_eq!(event["type"], "event", "{event}");
    assert_eq!(event["generation"], 1);
    let tick = stream.until(Duration::from_secs(5), |f| f["type"] == "tick");
    assert_eq!(tick["generation"], 1);

    let recording = dir.path().join("api.csv");
    let body = format!(r#"{{"path": "{}"}}"#, recording.display());
    let (status, started_recording) = http(port, "POST", "/v1/recording", Some(&body));
    assert_eq!(status, 200, "{started_recording}");
    std::thread::sleep(Duration::from_millis(500));
    let (status, finished) = http(port, "DELETE", "/v1/recording", None);
    assert_eq!(status, 200, "{finished}");
    let ticks = haptic_recording::load_recording(&recording).unwrap();
    assert_eq!(
        ticks.len() as u64,
        finished["data"]["ticks"].as_u64().unwrap()
    );
    assert!(ticks.len() > 100, "{} ticks", ticks.len());

    let (status, refused) = http(
        port,
        "POST",
        "/v1/scene",
        Some(r#"{"path": "config/no-such.toml"}"#),
    );
    assert_eq!(status, 422, "{refused}");
    let (status, loaded) = http(
        port,
        "POST",
        "/v1/scene",
        Some(r#"{"path": "config/cube-corner.toml"}"#),
    );
    assert_eq!(status, 200, "{loaded}");
    assert_eq!(loaded["data"]["file"], "config/cube-corner.toml");
    let hello = stream.until(Duration::from_secs(5), |f| f["type"] == "hello");
    assert_eq!(hello["scene"], "config/cube-corner.toml");
    let status = http(port, "GET", "/v1/status", None).1["data"].clone();
    assert_eq!(status["scene"], "config/cube-corner.toml");
    assert_eq!(status["server"]["clients"][0]["dropped"], 0);

    // SAFETY: kill sends a signal to our own child.
    unsafe { libc::kill(daemon.0.id() as i32, libc::SIGTERM) };
    let exit = daemon.0.wait().unwrap();
    assert!(exit.success(), "{exit:?}");
}

/// The physics thread's friction, seen through a live daemon: in
/// config/push-block.toml the hand-mode emulator drives the sphere into the
/// block at 0.2 m/s and stops; the block, flicked free, slides on the table
/// and stops with Coulomb's deceleration μ g (μ = 0.3 for the pair), read
/// from the block's poses in the state stream (100 Hz).
#[test]
fn the_device_listing_holds_every_backend_s_devices() {
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    // The simulated libraries where the vendors' environment variables
    // have the backends look.
    let mut command = Command::new(env!("CARGO_BIN_EXE_hapticd"));
    command.env_remove("OPENHAPTICS");
    for (variable, file, link) in [
        ("FORCEDIM_SDK", "libforcedim_sim.so", "lib/libdrd.so"),
        ("OH_SDK_BASE", "libopenhaptics_sim.so", "lib/libHD.so"),
    ] {
        let sdk = dir.path().join(variable);
        std::fs::create_dir_all(sdk.join("lib")).unwrap();
        let library = haptic_testkit::vendor_library::find(file).unwrap();
        std::os::unix::fs::symlink(library, sdk.join(link)).unwrap();
        command.env(variable, &sdk);
    }
    let (_daemon, port) = start_with(dir.path(), &["--duration", "60"], command);
    // 503 (busy) until the scene runs.
    let started = Instant::now();
    let reply = loop {
        let (status, reply) = http(port, "GET", "/v1/devices", None);
        if status == 200 {
            break reply;
        }
        assert_eq!(status, 503, "{reply}");
        assert!(started.elapsed() < Duration::from_secs(30), "{reply}");
        std::thread::sleep(Duration::from_millis(50));
    };
    let listing = reply["data"].as_array().unwrap();
    let backends: Vec<&str> = listing
        .iter()
        .map(|b| b["backend"].as_str().unwrap())
        .collect();
    assert_eq!(
        backends,
        ["hid", "forcedim", "falcon", "openhaptics", "haply"]
    );
    let hid = listing[0]["source"].as_str().unwrap();
    assert!(
        hid.starts_with("14 profiles from ") && hid.ends_with("device-profiles"),
        "{hid}"
    );
    let forcedim = &listing[1];
    let libdrd = dir.path().join("FORCEDIM_SDK/lib/libdrd.so");
    let expected = format!("Force Dimension SDK 3.17.0.0 from {}", libdrd.display());
    assert_eq!(forcedim["source"], expected.as_str());
    assert_eq!(forcedim["devices"][0]["id"], "0");
    assert_eq!(forcedim["devices"][0]["name"], "sigma.7");
    let openhaptics = &listing[3];
    assert_eq!(openhaptics["error"], Value::Null);
    assert_eq!(openhaptics["devices"][0]["id"], "Default Device");
    assert_eq!(openhaptics["devices"][0]["name"], "Touch (simulated)");
    assert_eq!(
        openhaptics["devices"][0]["detail"],
        "input DoF 6, output DoF 3, 1000 Hz"
    );
}

#[test]
fn a_flicked_block_slides_to_rest_at_the_friction_deceleration() {
    let _alone = alone();
    const MU_G: f64 = 0.3 * 9.81;
    let dir = tempfile::tempdir().unwrap();
    // The sphere's surface starts 2 cm from the block; the hand stops 1 cm
    // past the block's face.
    let trajectory = common::record_trajectory(
        r#"segments = [
    { type = "hold", duration_s = 2.0 },
    { type = "line", to_m = [0.03, 0.0, 0.0], duration_s = 0.15 },
    { type = "hold", duration_s = 0.8 },
]
"#,
        dir.path(),
    );
    // The block at the physics thread's poses only: with local models
    // the stream shows it moved at the servo rate too. The physics step is
    // stated so that a pose's physics time is its step count's multiple.
    const STEP_S: f64 = 0.005;
    let config = dir.path().join("push-block.toml");
    let base = std::fs::read_to_string(repo().join("config/push-block.toml")).unwrap();
    std::fs::write(
        &config,
        format!(
            "{base}\n[coupling]\nlocal_models = false\n\n[threads.physics]\nrate_hz = {}\n",
            1.0 / STEP_S
        ),
    )
    .unwrap();
    let (mut daemon, port) = start(
        dir.path(),
        &[
            "--config",
            config.to_str().unwrap(),
            "--trajectory",
            trajectory.to_str().unwrap(),
            "--until-end",
        ],
    );
    let mut stream = loop {
        // The stream answers once the scene is built.
        let (status, _) = http(port, "GET", "/v1/parameters", None);
        if status == 200 {
            break Stream::connect(port, "rate_hz=1000&contacts=0");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let hello = stream.text();
    let objects = hello["objects"].as_array().unwrap();
    let environment: Vec<&Value> = objects.iter().filter(|o| o["tool"] != true).collect();
    let block = environment
        .iter()
        .position(|o| o["name"] == "block")
        .unwrap_or_else(|| panic!("{hello}"));
    for _ in objects {
        assert_eq!(stream.frame().0, 2, "a geometry frame");
    }
    // (physics time, x) of each physics step the stream shows, by the
    // step's own count: a loaded machine delays a step's publication, never
    // its physics time.
    let mut track: Vec<(f64, f64)> = Vec::new();
    // The newest physics step during which the servo touched the block: its
    // push reaches the step after.
    let mut touched = 0.0;
    loop {
        let frame = stream.text();
        if frame["type"] != "tick" {
            continue;
        }
        let time = frame["physics_sequence"].as_u64().unwrap() as f64 * STEP_S;
        if frame["contacts"].as_u64().unwrap() > 0 {
            touched = time;
        }
        let x = frame["environment"][block]["position_m"][0]
            .as_f64()
            .unwrap();
        if track.last().is_none_or(|&(last, _)| time > last) {
            track.push((time, x));
        }
        if frame["time_s"].as_f64().unwrap() > 2.85 {
            break;
        }
    }
    let exit = daemon.0.wait().unwrap();
    assert!(exit.success(), "{exit:?}");

    // The slide from the fastest moment (the release), once the tool's last
    // push has reached the block, until the block has slowed to a fifth of
    // it.
    let velocities: Vec<(f64, f64)> = track
        .windows(3)
        .map(|w| (w[1].0, (w[2].1 - w[0].1) / (w[2].0 - w[0].0)))
        .collect();
    let (release, &(_, peak)) = velocities
        .iter()
        .enumerate()
        .max_by(|a, b| a.1 .1.total_cmp(&b.1 .1))
        .unwrap();
    assert!(peak > 0.1, "the block was flicked: peak {peak} m/s");
    let free = track
        .iter()
        .position(|&(t, _)| t > touched + STEP_S)
        .unwrap();
    let start = free.max(release + 2);
    let sliding = velocities[start..]
        .iter()
        .take_while(|&&(_, v)| v > 0.2 * peak)
        .count();
    // Five positions at least: the stream shows every second physics step
    // or so, and the free slide is what is left after the last push.
    assert!(sliding >= 4, "touched until {touched} s: {velocities:?}");
    let positions = &track[start..=start + sliding];
    let deceleration = -acceleration(positions);
    println!("peak {peak:.3} m/s over {sliding} steps, deceleration {deceleration:.4} m/s² against μg = {MU_G:.4}");
    assert!(
        (deceleration - MU_G).abs() < 0.05 * MU_G,
        "deceleration {deceleration} m/s² against μ g = {MU_G}, touched until {touched} s: {positions:?}"
    );
    // And it stops: at rest over the last 0.2 s.
    let (t_end, x_end) = *track.last().unwrap();
    let rest = track.iter().find(|&&(t, _)| t > t_end - 0.2).unwrap();
    assert!((x_end - rest.1).abs() < 1e-4, "{track:?}");
}

/// A 6×6 cloth of 0.3 m released 0.1 m over a fixed ball (coarse fields
/// for a debug build), its corner node 0 held to the world; the tool
/// waits far above.
const CLOTH_ON_BALL: &str = r#"
[[objects]]
name = "probe"
shape = { kind = "sphere", radius_m = 0.01 }
role = "point_shell"
tool = true
position_m = [0.0, 0.0, 0.5]
shell_points = 50
tree_levels = 2
field_resolution = 8

[[objects]]
name = "ball"
shape = { kind = "sphere", radius_m = 0.1 }
role = "field"
field_resolution = 24
shell_points = 200
tree_levels = 3

[device]
motion = { segments = [{ type = "hold", duration_s = 1.0 }] }
workspace_offset_m = [0.0, 0.0, 0.5]

[threads.physics]
rate_hz = 50

[[deformables]]
name = "cloth"
shape = { kind = "cloth", nodes_x = 6, nodes_y = 6, width = 0.3, depth = 0.3 }
position_m = [0.0, 0.0, 0.2]
density = 0.2
paradigm = { kind = "mass_spring", stiffness = 1.0, iterations = 10, tolerance = 1e-3 }
material = { friction = 0.4, thickness = 0.004, bending_limit = 0.02 }
anchors = [{ node = 0 }]

[deformable_solver]
elastic_passes = 1
"#;

/// A surface frame (docs/protocol.md): deformable index, physics step and
/// vertices.
fn surface(frame: &[u8]) -> (u32, u64, Vec<[f32; 3]>) {
    assert_eq!(&frame[..4], b"HDEF");
    let word = |i: usize| u32::from_le_bytes(frame[i..i + 4].try_into().unwrap());
    let count = word(8) as usize;
    assert_eq!(frame.len(), 20 + 12 * count);
    let float = |i: usize| f32::from_le_bytes(frame[i..i + 4].try_into().unwrap());
    let vertices = (0..count)
        .map(|v| [0, 1, 2].map(|k| float(20 + 12 * v + 4 * k)))
        .collect();
    let step = u64::from_le_bytes(frame[12..20].try_into().unwrap());
    (word(4), step, vertices)
}

/// `hapticd run` steps a scene's deformables in its physics thread and
/// streams their surfaces: `hello` lists the cloth's 36 vertices and 50
/// triangles, binary surface frames follow the physics steps, and each
/// frame's vertices are the world's at its step, as `hapticd simulate`
/// steps the same scene (to f32 rounding); the cloth moves between frames.
#[test]
fn a_running_cloth_streams_its_surface_as_the_world_moves_it() {
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("cloth.toml");
    std::fs::write(&scene, CLOTH_ON_BALL).unwrap();
    let (mut daemon, port) = start(
        dir.path(),
        &["--config", scene.to_str().unwrap(), "--duration", "60"],
    );
    let started = Instant::now();
    let mut stream = loop {
        let (status, _) = http(port, "GET", "/v1/scene", None);
        if status == 200 {
            break Stream::connect(port, "rate_hz=1000&contacts=0");
        }
        assert!(started.elapsed() < Duration::from_secs(60), "no scene");
        std::thread::sleep(Duration::from_millis(50));
    };
    let hello = stream.text();
    assert_eq!(hello["type"], "hello", "{hello}");
    let deformables = hello["deformables"].as_array().unwrap();
    assert_eq!(deformables.len(), 1, "{hello}");
    assert_eq!(deformables[0]["name"], "cloth");
    assert_eq!(deformables[0]["vertices"], 36);
    let triangles = deformables[0]["triangles"].as_array().unwrap();
    assert_eq!(triangles.len(), 50);
    assert!(triangles
        .iter()
        .flat_map(|t| t.as_array().unwrap())
        .all(|v| v.as_u64().unwrap() < 36));

    // Every step's frame, at 1000 Hz against a 50 Hz world, for 30 steps.
    let mut frames = Vec::new();
    while frames.len() < 30 {
        assert!(started.elapsed() < Duration::from_secs(120), "{frames:?}");
        let (opcode, payload) = stream.frame();
        if opcode == 2 && payload.starts_with(b"HDEF") {
            frames.push(surface(&payload));
        }
    }
    assert!(frames
        .iter()
        .all(|(index, _, v)| *index == 0 && v.len() == 36));
    assert!(frames.windows(2).all(|w| w[1].1 > w[0].1), "steps in order");
    let (_, last_step, _) = frames.last().unwrap();

    let out = dir.path().join("cloth.mcap");
    let duration = format!("{}", *last_step as f64 * 0.02);
    let output = Command::new(env!("CARGO_BIN_EXE_hapticd"))
        .args(["simulate", scene.to_str().unwrap(), "--duration", &duration])
        .arg("--record")
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let recording = haptic_recording::load_simulation(&out).unwrap();
    let nodes = &recording.deformables[0].1;
    assert_eq!(nodes.len() as u64, last_step + 1);
    for (_, step, vertices) in &frames {
        for (streamed, node) in vertices.iter().zip(&nodes[*step as usize]) {
            let error = [0, 1, 2].map(|k| (f64::from(streamed[k]) - node[k]).abs());
            assert!(
                error.iter().all(|e| *e < 1e-6),
                "step {step}: {streamed:?} against {node:?}"
            );
        }
    }
    // The cloth moves from frame to frame: falling, then draping.
    let (first, last) = (&frames[0].2, &frames[29].2);
    let moved = first
        .iter()
        .zip(last)
        .map(|(a, b)| (0..3).map(|k| (a[k] - b[k]).powi(2)).sum::<f32>().sqrt())
        .fold(0.0, f32::max);
    assert!(moved > 5e-3, "{moved} m: {first:?} {last:?}");

    // SAFETY: kill sends a signal to our own child.
    unsafe { libc::kill(daemon.0.id() as i32, libc::SIGTERM) };
    let exit = daemon.0.wait().unwrap();
    assert!(exit.success(), "{exit:?}");
}
