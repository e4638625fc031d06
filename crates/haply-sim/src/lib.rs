//! A simulated Haply Inverse Service for tests and benchmarks, on
//! `127.0.0.1` at a port the system picks.
//!
//! It speaks the simulation channel as the service documents it (Haply,
//! "Simulation Channel", <https://docs.haply.co/inverseSDK/service/api/simulation>):
//! on connect, an inventory of every device with `config`, `state` and
//! `status`; then exactly one state update for each message received.
//! The Inverse3 is a point mass on a spring, pushed by the last
//! `set_cursor_force` it was sent:
//!
//! ```text
//! m ẍ = −k (x − x_rest) − b ẋ + F
//! ```
//!
//! integrated by semi-implicit Euler in steps of at most 0.1 ms over the
//! wall-clock time between messages. `state.current_cursor_force` is the
//! force of the message being answered. The VerseGrip reports the
//! orientation and buttons set through [`SimService::set_grip`].
//!
//! Hooks: [`SimService::drop_connection`] closes the current connection
//! without a close frame (a crashed service); [`SimService::set_delay`]
//! holds each reply back (a slow peer); [`SimService::inject`] makes the
//! next reply unusable in a chosen way; [`SimService::refuse`] closes new
//! connections at once. One client is served at a time.

use serde_json::{json, Map, Value};
use std::collections::VecDeque;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tungstenite::{Message, WebSocket};

/// The simulated devices and the Inverse3's dynamics.
#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    pub inverse3_id: String,
    pub inverse3_port: String,
    /// A VerseGrip: its `device_id`, and whether it is wireless (listed
    /// under `wireless_verse_grip` with `buttons`, else under `verse_grip`
    /// with `button`).
    pub grip: Option<(String, bool)>,
    /// `m` (kg).
    pub mass_kg: f64,
    /// `k` (N/m).
    pub stiffness_n_per_m: f64,
    /// `b` (N·s/m).
    pub damping_n_s_per_m: f64,
    /// `x_rest` (m, service frame).
    pub rest_m: [f64; 3],
}

impl Default for SimConfig {
    /// One Inverse3 `049D` on `COM12` and a wired grip `61548`; a 0.2 kg
    /// handle on a 200 N/m spring with 2 N·s/m of damping (ζ ≈ 0.16),
    /// resting where the service's documentation shows a cursor.
    fn default() -> Self {
        Self {
            inverse3_id: "049D".into(),
            inverse3_port: "COM12".into(),
            grip: Some(("61548".into(), false)),
            mass_kg: 0.2,
            stiffness_n_per_m: 200.0,
            damping_n_s_per_m: 2.0,
            rest_m: [0.0, -0.12, 0.15],
        }
    }
}

/// A way to make one reply unusable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Text that is not JSON.
    Malformed,
    /// The Inverse3's `state.cursor_position` left out.
    MissingPosition,
    /// The grip's orientation all zeros (cannot be normalised).
    ZeroQuaternion,
    /// A binary frame.
    Binary,
}

#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    drop_connection: AtomicBool,
    refuse: AtomicBool,
    delay_us: AtomicU64,
    received: AtomicU64,
    connections: AtomicU64,
    faults: Mutex<VecDeque<Fault>>,
    /// Last force received, and the handle's position, service frame.
    last_force: Mutex<[f64; 3]>,
    position: Mutex<[f64; 3]>,
    grip: Mutex<([f64; 4], [bool; 3])>,
    /// Every force received, in order, when recording.
    recording: AtomicBool,
    forces: Mutex<Vec<[f64; 3]>>,
}

/// A running simulated service; dropping it stops it.
pub struct SimService {
    addr: SocketAddr,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl SimService {
    /// Starts the service on `127.0.0.1:0`.
    pub fn start(config: SimConfig) -> std::io::Result<SimService> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        *shared.position.lock().unwrap() = config.rest_m;
        *shared.grip.lock().unwrap() = ([1.0, 0.0, 0.0, 0.0], [false; 3]);
        let thread_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name("haply-sim".into())
            .spawn(move || serve(listener, config, thread_shared))?;
        Ok(SimService {
            addr,
            shared,
            thread: Some(thread),
        })
    }

    /// `ws://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("ws://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Closes the current connection without a close frame.
    pub fn drop_connection(&self) {
        self.shared.drop_connection.store(true, Ordering::Release);
    }

    /// Closes new connections at once while `refuse` holds.
    pub fn refuse(&self, refuse: bool) {
        self.shared.refuse.store(refuse, Ordering::Release);
    }

    /// Holds every reply back by `delay`.
    pub fn set_delay(&self, delay: Duration) {
        self.shared
            .delay_us
            .store(delay.as_micros() as u64, Ordering::Release);
    }

    /// Makes the next reply unusable in the way `fault` says.
    pub fn inject(&self, fault: Fault) {
        self.shared.faults.lock().unwrap().push_back(fault);
    }

    /// Sets the grip's orientation `[w, x, y, z]` and buttons `a, b, c`.
    pub fn set_grip(&self, orientation: [f64; 4], buttons: [bool; 3]) {
        *self.shared.grip.lock().unwrap() = (orientation, buttons);
    }

    /// Messages received from clients so far.
    pub fn received(&self) -> u64 {
        self.shared.received.load(Ordering::Acquire)
    }

    /// Connections accepted so far (refused ones included).
    pub fn connections(&self) -> u64 {
        self.shared.connections.load(Ordering::Acquire)
    }

    /// The last `set_cursor_force` received (N).
    pub fn last_force(&self) -> [f64; 3] {
        *self.shared.last_force.lock().unwrap()
    }

    /// The handle's position (m, service frame).
    pub fn position(&self) -> [f64; 3] {
        *self.shared.position.lock().unwrap()
    }

    /// Starts (or stops) keeping every force received; [`Self::forces`]
    /// returns them.
    pub fn record_forces(&self, on: bool) {
        self.shared.recording.store(on, Ordering::Release);
    }

    /// The forces received while recording.
    pub fn forces(&self) -> Vec<[f64; 3]> {
        self.shared.forces.lock().unwrap().clone()
    }
}

impl Drop for SimService {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The handle's state.
struct Handle {
    x: [f64; 3],
    v: [f64; 3],
    last: Instant,
}

impl Handle {
    /// Integrates up to now under `force`.
    fn step(&mut self, config: &SimConfig, force: [f64; 3]) {
        const MAX_STEP: f64 = 1e-4;
        let now = Instant::now();
        let mut left = (now - self.last).as_secs_f64().min(0.05);
        self.last = now;
        while left > 0.0 {
            let dt = left.min(MAX_STEP);
            left -= dt;
            let axes = self.x.iter_mut().zip(&mut self.v);
            for ((x, v), (rest, f)) in axes.zip(config.rest_m.iter().zip(force)) {
                let a = (-config.stiffness_n_per_m * (*x - rest) - config.damping_n_s_per_m * *v
                    + f)
                    / config.mass_kg;
                *v += a * dt;
                *x += *v * dt;
            }
        }
    }
}

fn serve(listener: TcpListener, config: SimConfig, shared: Arc<Shared>) {
    let mut handle = Handle {
        x: config.rest_m,
        v: [0.0; 3],
        last: Instant::now(),
    };
    let mut session = 0u64;
    while !shared.stop.load(Ordering::Acquire) {
        match listener.accept() {
            Ok((stream, _)) => {
                shared.connections.fetch_add(1, Ordering::AcqRel);
                if shared.refuse.load(Ordering::Acquire) {
                    continue;
                }
                session += 1;
                shared.drop_connection.store(false, Ordering::Release);
                let _ = connection(stream, &config, &shared, &mut handle, session);
            }
            Err(_) => std::thread::sleep(Duration::from_millis(2)),
        }
    }
}

fn vec3(v: [f64; 3]) -> Value {
    json!({"x": v[0], "y": v[1], "z": v[2]})
}

/// A message with every device's state; with `config` for the inventory.
fn message(
    config: &SimConfig,
    shared: &Shared,
    handle: &Handle,
    force: [f64; 3],
    session: u64,
    inventory: bool,
) -> Map<String, Value> {
    let mut inverse3 = json!({
        "device_id": config.inverse3_id,
        "state": {
            "cursor_position": vec3(handle.x),
            "cursor_velocity": vec3(handle.v),
            "current_cursor_force": vec3(force),
            "control_mode": "cursor_force",
        },
        "status": {"calibrated": true, "in_use": true, "power_supply": true, "ready": true, "started": true},
    });
    if inventory {
        inverse3["config"] = json!({
            "type": "inverse3",
            "port": config.inverse3_port,
            "device_info": {"id": config.inverse3_id, "major_version": 7, "minor_version": 4},
            "handedness": "right",
            "basis": {"permutation": "XYZ"},
        });
    }
    let mut out = Map::new();
    out.insert("session_id".into(), json!(session));
    out.insert("inverse3".into(), json!([inverse3]));
    if let Some((id, wireless)) = &config.grip {
        let (q, [a, b, c]) = *shared.grip.lock().unwrap();
        let orientation = json!({"w": q[0], "x": q[1], "y": q[2], "z": q[3]});
        let mut grip = if *wireless {
            json!({"device_id": id, "state": {"orientation": orientation,
                "buttons": {"a": a, "b": b, "c": c}, "battery_level": 0.9}})
        } else {
            json!({"device_id": id, "state": {"orientation": orientation,
                "button": a, "hall": 0}})
        };
        if inventory {
            grip["config"] = json!({"type": if *wireless { "wireless_verse_grip" } else { "verse_grip" }, "port": "COM3"});
        }
        let family = if *wireless {
            "wireless_verse_grip"
        } else {
            "verse_grip"
        };
        out.insert(family.into(), json!([grip]));
    }
    out
}

/// The `set_cursor_force` vector for `id` in a client's message, if any.
fn force_in(text: &str, id: &str) -> Option<[f64; 3]> {
    let v: Value = serde_json::from_str(text).ok()?;
    let entry = v
        .get("inverse3")?
        .as_array()?
        .iter()
        .find(|e| e.get("device_id").and_then(Value::as_str) == Some(id))?;
    let f = entry
        .get("commands")?
        .get("set_cursor_force")?
        .get("vector")?;
    Some([
        f.get("x")?.as_f64()?,
        f.get("y")?.as_f64()?,
        f.get("z")?.as_f64()?,
    ])
}

fn connection(
    stream: TcpStream,
    config: &SimConfig,
    shared: &Shared,
    handle: &mut Handle,
    session: u64,
) -> Result<(), tungstenite::Error> {
    stream.set_nonblocking(false)?;
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(Duration::from_millis(20)))?;
    let mut socket: WebSocket<TcpStream> = tungstenite::accept(stream).map_err(|e| match e {
        tungstenite::HandshakeError::Failure(e) => e,
        tungstenite::HandshakeError::Interrupted(_) => {
            tungstenite::Error::Io(std::io::ErrorKind::WouldBlock.into())
        }
    })?;
    let mut force = [0.0; 3];
    handle.step(config, force);
    let first = message(config, shared, handle, force, session, true);
    socket.send(Message::text(Value::Object(first).to_string()))?;
    loop {
        if shared.stop.load(Ordering::Acquire) {
            let _ = socket.close(None);
            return Ok(());
        }
        if shared.drop_connection.swap(false, Ordering::AcqRel) {
            // No close frame: the TCP connection simply ends.
            return Ok(());
        }
        let text = match socket.read() {
            Ok(Message::Text(text)) => text,
            Ok(Message::Close(_)) => return Ok(()),
            Ok(_) => continue,
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                continue
            }
            Err(e) => return Err(e),
        };
        shared.received.fetch_add(1, Ordering::AcqRel);
        if let Some(f) = force_in(text.as_str(), &config.inverse3_id) {
            // Integrate under the previous force up to now, then switch.
            handle.step(config, force);
            force = f;
            *shared.last_force.lock().unwrap() = f;
            if shared.recording.load(Ordering::Acquire) {
                shared.forces.lock().unwrap().push(f);
            }
        } else {
            handle.step(config, force);
        }
        *shared.position.lock().unwrap() = handle.x;
        let delay = Duration::from_micros(shared.delay_us.load(Ordering::Acquire));
        if !delay.is_zero() {
            std::thread::sleep(delay);
            handle.step(config, force);
        }
        let fault = shared.faults.lock().unwrap().pop_front();
        let mut reply = message(config, shared, handle, force, session, false);
        let out = match fault {
            None => Message::text(Value::Object(reply).to_string()),
            Some(Fault::Malformed) => Message::text("{\"inverse3\": [{\"device_id\": "),
            Some(Fault::Binary) => Message::binary(vec![0u8, 1, 2]),
            Some(Fault::MissingPosition) => {
                if let Some(state) = reply
                    .get_mut("inverse3")
                    .and_then(|a| a.get_mut(0))
                    .and_then(|e| e.get_mut("state"))
                    .and_then(Value::as_object_mut)
                {
                    state.remove("cursor_position");
                }
                Message::text(Value::Object(reply).to_string())
            }
            Some(Fault::ZeroQuaternion) => {
                for family in ["verse_grip", "wireless_verse_grip"] {
                    if let Some(state) = reply
                        .get_mut(family)
                        .and_then(|a| a.get_mut(0))
                        .and_then(|e| e.get_mut("state"))
                    {
                        state["orientation"] = json!({"w": 0.0, "x": 0.0, "y": 0.0, "z": 0.0});
                    }
                }
                Message::text(Value::Object(reply).to_string())
            }
        };
        socket.send(out)?;
    }
}
