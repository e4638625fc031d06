//! The server on a real socket: the envelope on every error kind, refused
//! changes, tokens, the Unix socket, and the stream with well-behaved,
//! malformed and slow clients.

use futures_util::{SinkExt, StreamExt};
use haptic_schema::patch::{RenderingPatch, TunableParameters};
use haptic_schema::rendering::Rendering;
use haptic_schema::OrNotRendered::Rendered;
use haptic_schema::{FrictionState, FrictionVerdict, ObjectRole, SafetyState};
use haptic_server::{
    surface_frame, ApiError, BackendDevices, ContactPoint, Control, DeviceInfo, ErrorCode, Event,
    HelloDeformable, HelloObject, Mesh, Parameters, Recording, SceneAnnouncement, SceneInfo,
    Server, ServerConfig, StartError, Status, StreamHub, TickFrame, SURFACE_HEADER_BYTES,
    SURFACE_MAGIC,
};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;

/// A daemon stand-in: one parameter, a recording slot.
#[derive(Default)]
struct TestControl {
    damping: Mutex<(u64, f64)>,
    recording: Mutex<Option<Recording>>,
}

impl TestControl {
    fn in_force(&self) -> Parameters {
        let (generation, damping) = *self.damping.lock().unwrap();
        let mut parameters = TunableParameters {
            materials: Default::default(),
            rendering: Rendering::default(),
        };
        parameters.rendering.static_damping = damping;
        Parameters {
            generation,
            applied_tick: None,
            parameters,
        }
    }
}

impl Control for TestControl {
    fn status(&self) -> Status {
        Status {
            scene: "test.toml".into(),
            ticks: 42,
            ..Status::default()
        }
    }

    fn parameters(&self) -> Result<Parameters, ApiError> {
        Ok(self.in_force())
    }

    fn patch_parameters(&self, patch: RenderingPatch) -> Result<Parameters, ApiError> {
        let damping = patch.rendering.static_damping.unwrap_or(0.6);
        if !(0.0..1.0).contains(&damping) {
            return Err(ApiError::invalid(
                "rendering.static_damping",
                "must be in [0, 1]",
            ));
        }
        let mut held = self.damping.lock().unwrap();
        *held = (held.0 + 1, damping);
        drop(held);
        Ok(Parameters {
            applied_tick: Some(7),
            ..self.in_force()
        })
    }

    fn scene(&self) -> SceneInfo {
        SceneInfo {
            file: "test.toml".into(),
            servo_rate_hz: 1000.0,
            objects: Vec::new(),
        }
    }

    fn load_scene(&self, path: &Path) -> Result<SceneInfo, ApiError> {
        Err(ApiError::invalid(
            "path",
            format!("{}: cannot read", path.display()),
        ))
    }

    fn recording(&self) -> Option<Recording> {
        self.recording.lock().unwrap().clone()
    }

    fn start_recording(&self, path: &Path) -> Result<Recording, ApiError> {
        let mut slot = self.recording.lock().unwrap();
        if slot.is_some() {
            return Err(ApiError::new(ErrorCode::Conflict, "already recording"));
        }
        let recording = Recording {
            path: path.display().to_string(),
            ticks: 0,
        };
        *slot = Some(recording.clone());
        Ok(recording)
    }

    fn stop_recording(&self) -> Result<Recording, ApiError> {
        self.recording
            .lock()
            .unwrap()
            .take()
            .ok_or_else(|| ApiError::new(ErrorCode::Conflict, "no recording is running"))
    }

    fn devices(&self) -> Result<Vec<BackendDevices>, ApiError> {
        Ok(vec![BackendDevices {
            backend: "forcedim".to_owned(),
            name: "Force Dimension".to_owned(),
            source: Some("Force Dimension SDK 3.17.0.0 from /opt/sdk/libdrd.so".to_owned()),
            error: None,
            devices: vec![DeviceInfo {
                id: "0".to_owned(),
                name: "sigma.7".to_owned(),
                detail: "system type 104".to_owned(),
                profile: None,
                error: None,
                hid: None,
            }],
        }])
    }
}

fn loopback() -> ServerConfig {
    ServerConfig {
        listen: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
        ..ServerConfig::default()
    }
}

fn start(config: ServerConfig) -> (Server, StreamHub, Arc<TestControl>) {
    let control = Arc::new(TestControl::default());
    let hub = StreamHub::new();
    let server = Server::start(&config, control.clone(), hub.clone()).unwrap();
    (server, hub, control)
}

/// A reply: status, content type, body.
struct Http {
    status: u16,
    content_type: String,
    body: Vec<u8>,
}

impl Http {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }

    /// Asserts an error envelope with `code` and HTTP status `status`.
    fn assert_error(&self, status: u16, code: &str) -> Value {
        let body = self.json();
        assert_eq!(self.status, status, "{body}");
        assert!(
            self.content_type.starts_with("application/json"),
            "{}",
            self.content_type
        );
        assert_eq!(body["ok"], false, "{body}");
        assert_eq!(body["error"]["code"], code, "{body}");
        assert!(body["error"]["message"].is_string(), "{body}");
        body
    }

    fn assert_ok(&self) -> Value {
        let body = self.json();
        assert_eq!(self.status, 200, "{body}");
        assert_eq!(body["ok"], true, "{body}");
        body["data"].clone()
    }
}

/// One HTTP/1.1 request on a fresh connection.
fn request_on(
    mut stream: impl Read + Write,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) -> Http {
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if let Some(body) = body {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    if let Some(body) = body {
        // The server may answer (413) before reading it all.
        let _ = stream.write_all(body);
    }
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no reply head: {}", String::from_utf8_lossy(&raw)));
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut body = raw[split + 4..].to_vec();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let header = |name: &str| {
        head.lines()
            .find_map(|l| {
                let (n, v) = l.split_once(':')?;
                n.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
            })
            .unwrap_or_default()
    };
    if header("transfer-encoding") == "chunked" {
        let mut decoded = Vec::new();
        let mut rest = &body[..];
        loop {
            let line_end = rest.windows(2).position(|w| w == b"\r\n").unwrap();
            let size =
                usize::from_str_radix(std::str::from_utf8(&rest[..line_end]).unwrap(), 16).unwrap();
            if size == 0 {
                break;
            }
            decoded.extend_from_slice(&rest[line_end + 2..line_end + 2 + size]);
            rest = &rest[line_end + 4 + size..];
        }
        body = decoded;
    }
    Http {
        status,
        content_type: header("content-type"),
        body,
    }
}

fn request(server: &Server, method: &str, path: &str, body: Option<&str>) -> Http {
    let headers: &[(&str, &str)] = if body.is_some() {
        &[("Content-Type", "application/json")]
    } else {
        &[]
    };
    request_with(server, method, path, headers, body.map(str::as_bytes))
}

fn request_with(
    server: &Server,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) -> Http {
    let stream = TcpStream::connect(server.local_addr().unwrap()).unwrap();
    request_on(stream, method, path, headers, body)
}

#[test]
fn every_error_comes_back_in_the_envelope() {
    let (server, _hub, _control) = start(ServerConfig {
        max_request_bytes: 1024,
        max_clients: 0,
        ..loopback()
    });
    request(&server, "GET", "/v1/nope", None).assert_error(404, "not_found");
    request(&server, "POST", "/v1/nope", Some("{}")).assert_error(404, "not_found");
    request(&server, "GET", "/nope.js", None).assert_error(404, "not_found");
    request(&server, "DELETE", "/v1/status", None).assert_error(405, "method_not_allowed");
    request(&server, "PATCH", "/v1/parameters", Some("{")).assert_error(400, "bad_request");
    request(
        &server,
        "POST",
        "/v1/scene",
        Some(r#"{"path": "a.toml", "extra": 1}"#),
    )
    .assert_error(400, "bad_request");
    request(&server, "POST", "/v1/scene", Some(r#"{"path": 3}"#)).assert_error(400, "bad_request");
    request(&server, "PATCH", "/v1/parameters", Some("[1]")).assert_error(400, "bad_request");
    request_with(
        &server,
        "POST",
        "/v1/recording",
        &[],
        Some(br#"{"path": "x.csv"}"#),
    )
    .assert_error(400, "bad_request");
    let large = format!(r#"{{"path": "{}"}}"#, "x".repeat(2000));
    request(&server, "POST", "/v1/recording", Some(&large)).assert_error(413, "payload_too_large");
    let refused = request(
        &server,
        "PATCH",
        "/v1/parameters",
        Some(r#"{"rendering": {"static_damping": 2.0}}"#),
    )
    .assert_error(422, "invalid_parameter");
    assert_eq!(refused["error"]["field"], "rendering.static_damping");
    request(
        &server,
        "POST",
        "/v1/scene",
        Some(r#"{"path": "missing.toml"}"#),
    )
    .assert_error(422, "invalid_parameter");
    request(&server, "DELETE", "/v1/recording", None).assert_error(409, "conflict");
    request(&server, "GET", "/v1/stream", None).assert_error(400, "bad_request");
    let upgrade = [
        ("Upgrade", "websocket"),
        ("Connection", "Upgrade"),
        ("Sec-WebSocket-Version", "13"),
        ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
    ];
    // Refused before the upgrade: no stream clients allowed here.
    let stream = TcpStream::connect(server.local_addr().unwrap()).unwrap();
    let mut head = "GET /v1/stream HTTP/1.1\r\nHost: test\r\n".to_owned();
    for (name, value) in upgrade {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut stream = stream;
    stream.write_all(head.as_bytes()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut raw = vec![0; 4096];
    let n = stream.read(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw[..n]);
    assert!(text.starts_with("HTTP/1.1 503"), "{text}");
    assert!(text.contains(r#""code":"busy""#), "{text}");
    request(&server, "GET", "/v1/stream?rate_hz=5000", None).assert_error(422, "invalid_parameter");

    let (limited, _, _) = start(ServerConfig {
        requests_per_second: 3,
        ..loopback()
    });
    let codes: Vec<u16> = (0..5)
        .map(|_| request(&limited, "GET", "/v1/status", None).status)
        .collect();
    assert_eq!(codes[..3], [200, 200, 200], "{codes:?}");
    request(&limited, "GET", "/v1/status", None).assert_error(429, "rate_limited");
}

#[test]
fn replies_carry_the_data() {
    let (server, _hub, _control) = start(loopback());
    let status = request(&server, "GET", "/v1/status", None).assert_ok();
    assert_eq!(status["ticks"], 42);
    assert_eq!(status["scene"], "test.toml");
    assert_eq!(
        status["server"]["listen"],
        server.local_addr().unwrap().to_string()
    );
    assert_eq!(status["server"]["clients"], json!([]));
    assert_eq!(
        request(&server, "GET", "/v1/recording", None).assert_ok(),
        Value::Null
    );
    let started = request(
        &server,
        "POST",
        "/v1/recording",
        Some(r#"{"path": "run.csv"}"#),
    )
    .assert_ok();
    assert_eq!(started["path"], "run.csv");
    assert_eq!(
        request(&server, "GET", "/v1/recording", None).assert_ok()["path"],
        "run.csv"
    );
    request(
        &server,
        "POST",
        "/v1/recording",
        Some(r#"{"path": "b.csv"}"#),
    )
    .assert_error(409, "conflict");
    assert_eq!(
        request(&server, "DELETE", "/v1/recording", None).assert_ok()["path"],
        "run.csv"
    );
    assert_eq!(
        request(&server, "GET", "/v1/devices", None).assert_ok(),
        json!([{
            "backend": "forcedim",
            "name": "Force Dimension",
            "source": "Force Dimension SDK 3.17.0.0 from /opt/sdk/libdrd.so",
            "error": null,
            "devices": [{"id": "0", "name": "sigma.7", "detail": "system type 104", "profile": null, "error": null}],
        }])
    );
    assert_eq!(
        request(&server, "GET", "/v1/scene", None).assert_ok()["servo_rate_hz"],
        1000.0
    );

    let page = request(&server, "GET", "/", None);
    assert_eq!(page.status, 200);
    assert!(
        page.content_type.starts_with("text/html"),
        "{}",
        page.content_type
    );

    let openapi = request(&server, "GET", "/v1/openapi.json", None).json();
    assert!(
        openapi["openapi"].as_str().unwrap().starts_with("3.1"),
        "{}",
        openapi["openapi"]
    );
    for path in [
        "/v1/status",
        "/v1/parameters",
        "/v1/scene",
        "/v1/recording",
        "/v1/devices",
        "/v1/stream",
        "/v1/openapi.json",
    ] {
        assert!(openapi["paths"][path].is_object(), "{path} undocumented");
    }
    assert!(openapi["paths"]["/v1/parameters"]["patch"].is_object());
    let schemas = &openapi["components"]["schemas"];
    for schema in [
        "TextFrame",
        "Hello",
        "ClientTick",
        "TickFrame",
        "EventFrame",
        "Event",
        "ErrorReply",
        "ClientMessage",
        "Parameters",
        "RenderingPatch",
        "BackendDevices",
        "DeviceInfo",
        "HidIds",
    ] {
        assert!(schemas[schema].is_object(), "{schema}");
    }
    // Every closed set the API and the stream carry lists its values.
    let values = |schema: &Value| -> Vec<String> {
        serde_json::from_value(schema["enum"].clone()).unwrap_or_else(|_| panic!("{schema}"))
    };
    for (schema, expected) in [
        ("FrictionState", &["free", "sliding", "static"][..]),
        (
            "FrictionVerdict",
            &[
                "free",
                "sliding",
                "static",
                "static_in_band",
                "sliding_in_band",
                "solver_failed",
            ],
        ),
        (
            "SafetyState",
            &[
                "tripped",
                "waiting_for_small_request",
                "ramping",
                "normal",
                "shutting_down",
                "off",
            ],
        ),
        (
            "TripCause",
            &[
                "stale",
                "sample_not_finite",
                "request_not_finite",
                "overrun",
                "disconnected",
                "device_error",
                "shutdown",
            ],
        ),
        ("ObjectRole", &["point_shell", "field", "both"]),
    ] {
        assert_eq!(values(&schemas[schema]), expected, "{schema}");
    }
    // A friction state or verdict, or `not_rendered`: a tick's field, an
    // event's, the keys of the status' counts.
    let resolve = |schema: &Value| match schema["$ref"].as_str() {
        Some(reference) => schemas[reference.rsplit('/').next().unwrap()].clone(),
        None => schema.clone(),
    };
    let or_not_rendered = |schema: &Value, set: &str| {
        let alternatives = &resolve(schema)["oneOf"];
        assert_eq!(
            alternatives[0]["$ref"],
            format!("#/components/schemas/{set}"),
            "{schema}"
        );
        assert_eq!(values(&alternatives[1]), ["not_rendered"], "{schema}");
    };
    let tick = &schemas["TickFrame"]["properties"];
    or_not_rendered(&tick["state"], "FrictionState");
    or_not_rendered(&tick["verdict"], "FrictionVerdict");
    or_not_rendered(
        &schemas["Event"]["oneOf"][0]["properties"]["from"],
        "FrictionState",
    );
    let status = &schemas["Status"]["properties"];
    or_not_rendered(&status["states"]["propertyNames"], "FrictionState");
    or_not_rendered(&status["verdicts"]["propertyNames"], "FrictionVerdict");
    let reference = |schema: &Value| schema["$ref"].as_str().unwrap_or_default().to_owned();
    assert!(reference(&tick["safety_state"]).ends_with("/SafetyState"));
    assert!(reference(&schemas["SceneObject"]["properties"]["role"]).ends_with("/ObjectRole"));
    assert!(reference(&schemas["HelloObject"]["properties"]["role"]).ends_with("/ObjectRole"));
    assert!(
        reference(&schemas["Event"]["oneOf"][1]["properties"]["cause"]).ends_with("/TripCause")
    );
    // The text frames, one per `type`.
    let types: Vec<Value> = schemas["TextFrame"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|variant| variant["allOf"][1]["properties"]["type"]["enum"][0].clone())
        .collect();
    assert_eq!(
        types,
        [
            json!("hello"),
            json!("tick"),
            json!("event"),
            json!("error")
        ]
    );
}

#[test]
fn a_refused_patch_changes_nothing() {
    let (server, _hub, _control) = start(loopback());
    let before = request(&server, "GET", "/v1/parameters", None).assert_ok();
    for patch in [
        r#"{"rendering": {"static_damping": -1}}"#,
        r#"{"rendering": {"static_damping": "high"}}"#,
        r#"{"rendering": {"unknown": 1}}"#,
        r#"{"rendering": {"static_damping": 0.5"#,
    ] {
        let reply = request(&server, "PATCH", "/v1/parameters", Some(patch));
        assert_ne!(reply.status, 200, "{patch}");
        assert_eq!(reply.json()["ok"], false);
        assert_eq!(
            request(&server, "GET", "/v1/parameters", None).assert_ok(),
            before,
            "{patch}"
        );
    }
    let changed = request(
        &server,
        "PATCH",
        "/v1/parameters",
        Some(r#"{"rendering": {"static_damping": 0.25}}"#),
    )
    .assert_ok();
    assert_eq!(changed["generation"], 1);
    assert_eq!(changed["rendering"]["static_damping"], 0.25);
}

#[test]
fn a_token_is_required_when_set_and_beyond_loopback() {
    let refused = Server::start(
        &ServerConfig {
            listen: Some(SocketAddr::from(([0, 0, 0, 0], 0))),
            ..ServerConfig::default()
        },
        Arc::new(TestControl::default()),
        StreamHub::new(),
    );
    assert!(matches!(refused, Err(StartError::TokenRequired(_))));
    assert!(refused.err().unwrap().to_string().contains("server.token"));

    let (server, hub, _control) = start(ServerConfig {
        token: Some("s3cret".into()),
        ..loopback()
    });
    request(&server, "GET", "/v1/status", None).assert_error(401, "unauthorized");
    request_with(
        &server,
        "GET",
        "/v1/status",
        &[("Authorization", "Bearer wrong")],
        None,
    )
    .assert_error(401, "unauthorized");
    request(&server, "GET", "/v1/status?token=s3cre", None).assert_error(401, "unauthorized");
    request_with(
        &server,
        "GET",
        "/v1/status",
        &[("Authorization", "Bearer s3cret")],
        None,
    )
    .assert_ok();
    request(&server, "GET", "/v1/status?token=s3cret", None).assert_ok();
    // The page itself holds no data: it loads without the token.
    assert_eq!(request(&server, "GET", "/", None).status, 200);

    let runtime = runtime();
    runtime.block_on(async {
        let base = format!("ws://{}/v1/stream", server.local_addr().unwrap());
        assert!(tokio_tungstenite::connect_async(base.as_str())
            .await
            .is_err());
        hub.set_scene(scene());
        let (mut socket, _) = tokio_tungstenite::connect_async(format!("{base}?token=s3cret"))
            .await
            .unwrap();
        let hello = next_text(&mut socket).await;
        assert_eq!(hello["type"], "hello");
    });
}

#[test]
fn the_unix_socket_is_private_and_served() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hapticd.sock");
    let (server, _hub, _control) = start(ServerConfig {
        listen: None,
        unix_socket: Some(path.clone()),
        ..ServerConfig::default()
    });
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    let stream = std::os::unix::net::UnixStream::connect(&path).unwrap();
    let status = request_on(stream, "GET", "/v1/status", &[], None).assert_ok();
    assert_eq!(status["server"]["unix_socket"], path.display().to_string());
    assert_eq!(status["server"]["listen"], Value::Null);
    server.stop();
    assert!(!path.exists());
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A two-object scene: a tetrahedron tool over a one-triangle floor.
fn scene() -> SceneAnnouncement {
    let tetrahedron = Mesh {
        vertices: vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
        ],
        triangles: vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]],
    };
    let floor = Mesh {
        vertices: vec![[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, 0.0]],
        triangles: vec![[0, 1, 2]],
    };
    let object = |index: u32, name: &str, tool: bool, mesh: Mesh| {
        (
            HelloObject {
                index,
                name: name.into(),
                tool,
                role: if tool {
                    ObjectRole::PointShell
                } else {
                    ObjectRole::Field
                },
                movable: false,
                vertices: mesh.vertices.len() as u32,
                triangles: mesh.triangles.len() as u32,
            },
            mesh,
        )
    };
    SceneAnnouncement {
        scene: "test.toml".into(),
        servo_rate_hz: 1000.0,
        objects: vec![
            object(0, "tool", true, tetrahedron),
            object(1, "floor", false, floor),
        ],
        deformables: vec![HelloDeformable {
            index: 0,
            name: "sheet".into(),
            vertices: 4,
            triangles: vec![[0, 1, 2], [0, 2, 3]],
        }],
    }
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn next_message(socket: &mut Socket) -> Message {
    tokio::time::timeout(Duration::from_secs(5), socket.next())
        .await
        .expect("a frame within 5 s")
        .expect("the stream open")
        .expect("a valid frame")
}

async fn next_text(socket: &mut Socket) -> Value {
    match next_message(socket).await {
        Message::Text(text) => serde_json::from_str(&text).unwrap(),
        other => panic!("expected text, got {other:?}"),
    }
}

/// The next frame that is not a tick.
async fn next_non_tick(socket: &mut Socket) -> Value {
    loop {
        let frame = next_text(socket).await;
        if frame["type"] != "tick" {
            return frame;
        }
    }
}

/// Publishes a tick frame every millisecond of servo time (paced at real
/// time, with `points` contact points each) until dropped.
struct Publisher {
    stop: Arc<AtomicBool>,
    published: Arc<Mutex<u64>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Publisher {
    fn start(hub: StreamHub, points: usize) -> Publisher {
        let stop = Arc::new(AtomicBool::new(false));
        let published = Arc::new(Mutex::new(0));
        let thread = std::thread::spawn({
            let (stop, published) = (stop.clone(), published.clone());
            move || {
                let contacts = vec![ContactPoint::default(); points];
                let started = Instant::now();
                let mut tick = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let frame = TickFrame {
                        tick,
                        time_s: tick as f64 * 1e-3,
                        environment: vec![Default::default()],
                        state: Rendered(FrictionState::Free),
                        verdict: Rendered(FrictionVerdict::Free),
                        safety_state: SafetyState::Normal,
                        ..TickFrame::default()
                    };
                    if hub.wants_tick(frame.time_s) {
                        hub.publish_tick(&frame, &contacts);
                    }
                    *published.lock().unwrap() = tick;
                    tick += 1;
                    let due = started + Duration::from_millis(tick);
                    std::thread::sleep(due.saturating_duration_since(Instant::now()));
                }
            }
        });
        Publisher {
            stop,
            published,
            thread: Some(thread),
        }
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap();
    }
}

#[test]
fn a_client_gets_hello_geometry_ticks_and_events() {
    let (server, hub, _control) = start(loopback());
    hub.set_scene(scene());
    hub.set_generation(3);
    let _publisher = Publisher::start(hub.clone(), 10);
    runtime().block_on(async {
        let url = format!(
            "ws://{}/v1/stream?rate_hz=200&contacts=4",
            server.local_addr().unwrap()
        );
        let (mut socket, _) = tokio_tungstenite::connect_async(url).await.unwrap();
        let hello = next_text(&mut socket).await;
        assert_eq!(hello["type"], "hello", "{hello}");
        assert_eq!(hello["protocol"], 1);
        assert_eq!(hello["rate_hz"], 200.0);
        assert_eq!(hello["contacts"], 4);
        assert_eq!(hello["generation"], 3);
        assert_eq!(hello["objects"].as_array().unwrap().len(), 2);
        for (index, (vertices, triangles)) in [(4u32, 4u32), (3, 1)].into_iter().enumerate() {
            let Message::Binary(frame) = next_message(&mut socket).await else {
                panic!("no geometry frame");
            };
            assert_eq!(&frame[..4], b"HGEO");
            let word = |i: usize| u32::from_le_bytes(frame[i..i + 4].try_into().unwrap());
            assert_eq!([word(4), word(8), word(12), word(16)], [1, index as u32, vertices, triangles]);
            assert_eq!(frame.len() as u32, 20 + 12 * (vertices + triangles));
        }
        let first = next_text(&mut socket).await;
        assert_eq!(first["type"], "tick", "{first}");
        assert_eq!(first["contact_points"].as_array().unwrap().len(), 4);
        assert_eq!(first["contact_points_omitted"], 6);
        assert_eq!(first["dropped"], 0);
        let started = Instant::now();
        let mut ticks = 0;
        while started.elapsed() < Duration::from_secs(1) {
            if next_text(&mut socket).await["type"] == "tick" {
                ticks += 1;
            }
        }
        assert!((150..=230).contains(&ticks), "{ticks} ticks in 1 s at 200 Hz");

        socket
            .send(Message::Text(r#"{"type": "subscribe", "rate_hz": 20, "contacts": 0}"#.into()))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        while let Ok(Some(_)) = tokio::time::timeout(Duration::from_millis(1), socket.next()).await {}
        let started = Instant::now();
        let mut ticks = 0;
        while started.elapsed() < Duration::from_secs(1) {
            let frame = next_text(&mut socket).await;
            assert_eq!(frame["contact_points"], json!([]));
            ticks += 1;
        }
        assert!((12..=25).contains(&ticks), "{ticks} ticks in 1 s at 20 Hz");

        let change = Event::StateChange {
            from: Rendered(FrictionState::Free),
            to: Rendered(FrictionState::Static),
        };
        hub.publish_events(&[(7, change)]);
        let event = next_non_tick(&mut socket).await;
        assert_eq!(event, json!({"type": "event", "tick": 7, "event": "state_change", "from": "free", "to": "static"}));

        // A deformable's surface frames come as binary frames, at the
        // client's rate by physics time.
        assert_eq!(hello["deformables"][0]["name"], "sheet");
        assert_eq!(hello["deformables"][0]["vertices"], 4);
        assert_eq!(hello["deformables"][0]["triangles"], json!([[0, 1, 2], [0, 2, 3]]));
        let sheet = [[0.0, 0.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 1.0], [0.0, 1.0, 1.5]];
        let frames: Arc<[_]> = vec![surface_frame(0, 9, &sheet)].into();
        assert!(hub.wants_surfaces(0.18));
        hub.publish_surfaces(0.18, frames.clone());
        // Due again a 20 Hz period later, not before.
        hub.publish_surfaces(0.2, frames);
        assert!(!hub.wants_surfaces(0.2));
        let surface = loop {
            match next_message(&mut socket).await {
                Message::Binary(frame) => break frame,
                Message::Text(_) => continue,
                other => panic!("unexpected {other:?}"),
            }
        };
        assert_eq!(&surface[..4], &SURFACE_MAGIC);
        let word = |i: usize| u32::from_le_bytes(surface[i..i + 4].try_into().unwrap());
        assert_eq!([word(4), word(8)], [0, 4]);
        assert_eq!(u64::from_le_bytes(surface[12..20].try_into().unwrap()), 9);
        assert_eq!(surface.len(), SURFACE_HEADER_BYTES + 4 * 12);
        let last = SURFACE_HEADER_BYTES + 11 * 4;
        assert_eq!(f32::from_le_bytes(surface[last..last + 4].try_into().unwrap()), 1.5);

        hub.set_scene(scene());
        assert_eq!(next_non_tick(&mut socket).await["type"], "hello");
    });
    drop(server);
}

#[test]
fn malformed_client_frames_change_nothing() {
    let (server, hub, _control) = start(loopback());
    hub.set_scene(scene());
    runtime().block_on(async {
        let url = format!("ws://{}/v1/stream?rate_hz=10", server.local_addr().unwrap());
        let (mut socket, _) = tokio_tungstenite::connect_async(url).await.unwrap();
        assert_eq!(next_text(&mut socket).await["type"], "hello");
        next_message(&mut socket).await;
        next_message(&mut socket).await;
        for (message, field) in [
            (Message::Text("{not json".into()), None),
            (
                Message::Text(r#"{"type": "subscribe", "rate_hz": "fast"}"#.into()),
                None,
            ),
            (
                Message::Text(r#"{"type": "subscribe", "extra": 1}"#.into()),
                None,
            ),
            (Message::Text(r#"{"type": "unsubscribe"}"#.into()), None),
            (
                Message::Text(r#"{"type": "subscribe", "rate_hz": 0}"#.into()),
                Some("rate_hz"),
            ),
            (
                Message::Text(r#"{"type": "subscribe", "contacts": 257}"#.into()),
                Some("contacts"),
            ),
            (Message::Binary(vec![1, 2, 3].into()), None),
        ] {
            socket.send(message.clone()).await.unwrap();
            let reply = next_text(&mut socket).await;
            assert_eq!(reply["type"], "error", "{message:?}: {reply}");
            let code = if field.is_some() {
                "invalid_parameter"
            } else {
                "bad_request"
            };
            assert_eq!(reply["code"], code, "{message:?}: {reply}");
            assert_eq!(reply.get("field").and_then(Value::as_str), field);
        }
        let clients = hub.clients();
        assert_eq!(clients.len(), 1);
        assert_eq!((clients[0].rate_hz, clients[0].contacts), (10.0, 64));

        socket
            .send(Message::Text(
                "x".repeat(haptic_server::MAX_CLIENT_TEXT + 1).into(),
            ))
            .await
            .unwrap();
        match next_message(&mut socket).await {
            Message::Close(Some(frame)) => assert_eq!(u16::from(frame.code), 1009),
            other => panic!("expected a close, got {other:?}"),
        }
    });
    let deadline = Instant::now() + Duration::from_secs(5);
    while !hub.clients().is_empty() {
        assert!(Instant::now() < deadline, "the client was not removed");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_slow_client_loses_only_its_own_frames() {
    let (server, hub, _control) = start(loopback());
    hub.set_scene(scene());
    let address = server.local_addr().unwrap();
    runtime().block_on(async {
        // Large frames, so that the slow client's socket buffers fill.
        let url = format!("ws://{address}/v1/stream?rate_hz=1000&contacts=256");
        let (_slow, _) = tokio_tungstenite::connect_async(url.as_str())
            .await
            .unwrap();
        let (mut fast, _) = tokio_tungstenite::connect_async(url.as_str())
            .await
            .unwrap();
        assert_eq!(next_text(&mut fast).await["type"], "hello");
        next_message(&mut fast).await;
        next_message(&mut fast).await;
        let publisher = Publisher::start(hub.clone(), 256);
        let started = Instant::now();
        let mut ticks = Vec::new();
        while started.elapsed() < Duration::from_secs(4) {
            let frame = next_text(&mut fast).await;
            ticks.push((
                frame["tick"].as_u64().unwrap(),
                frame["dropped"].as_u64().unwrap(),
            ));
        }
        let published = *publisher.published.lock().unwrap();
        drop(publisher);
        let clients = hub.clients();
        let slow = clients
            .iter()
            .find(|c| c.dropped > 0)
            .expect("the slow client dropped frames");
        let fast_status = clients.iter().find(|c| c.id != slow.id).unwrap();
        assert_eq!(fast_status.dropped, 0, "{clients:?}");
        assert!(ticks.iter().all(|&(_, dropped)| dropped == 0));
        // Every tick, in order, up to the last the fast client read.
        assert!(
            ticks.windows(2).all(|w| w[1].0 == w[0].0 + 1),
            "gaps in the fast client's ticks"
        );
        assert!(
            ticks.len() as u64 + 50 >= published,
            "{} of {published}",
            ticks.len()
        );
    });
}
