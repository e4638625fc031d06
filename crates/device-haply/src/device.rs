//! The Inverse3 as a [`HapticDevice`]: an I/O thread owns the WebSocket
//! session; the servo thread exchanges samples and forces with it through
//! `haptic-handoff`'s wait-free latest-value buffers, so `read` and
//! `write` never touch the network, never block, never lock and never
//! allocate.

use crate::client::{LinkError, Session};
use crate::error::{HaplyError, ProtocolError};
use crate::frame;
use crate::protocol::{self, Inventory, Selection};
use haptic_devices::{
    DeviceCapabilities, DeviceError, DeviceSample, HapticDevice, OnDisconnect, Wrench,
};
use haptic_handoff::{Latest, LatestReader, LatestWriter};
use nalgebra::{Point3, UnitQuaternion, Vector3};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Where the Inverse Service listens by default: its simulation channel
/// on port 10001, on this machine.
pub const DEFAULT_URL: &str = "ws://127.0.0.1:10001";

/// How to reach and use the Inverse3 (`[device.haply]`).
#[derive(Clone, Debug, PartialEq)]
pub struct HaplySettings {
    /// The service's simulation channel, `ws://HOST:PORT`.
    pub url: String,
    /// Which Inverse3: its `device_id` or serial port; `None` for the
    /// first the service lists.
    pub inverse3: Option<String>,
    /// Read a VerseGrip's orientation and buttons.
    pub use_verse_grip: bool,
    /// Which VerseGrip (wired or wireless): its `device_id` or port;
    /// `None` for the first listed, if any.
    pub verse_grip: Option<String>,
    /// The device frame's origin in the service's frame (m).
    pub centre_m: [f64; 3],
    /// Largest force the backend lets through (N).
    pub max_force_n: f64,
    /// Messages sent (and state updates asked for) per second.
    pub exchange_rate_hz: f64,
    /// A sample older than this reads as `Stale`.
    pub stale_after: Duration,
    /// No reply for this long: the connection is taken as lost.
    pub lost_after: Duration,
    /// Connecting, the handshake and the inventory, each.
    pub connect_timeout: Duration,
    /// A lost service: reconnect ([`OnDisconnect::Wait`]), or report
    /// `Disconnected` once, then [`DeviceError::Lost`], and stop the I/O
    /// thread ([`OnDisconnect::Stop`]).
    pub on_disconnect: OnDisconnect,
    /// Between two attempts to reconnect (`OnDisconnect::Wait`).
    pub reconnect_interval: Duration,
}

impl Default for HaplySettings {
    fn default() -> Self {
        Self {
            url: DEFAULT_URL.to_owned(),
            inverse3: None,
            use_verse_grip: true,
            verse_grip: None,
            centre_m: [0.0; 3],
            max_force_n: DEFAULT_MAX_FORCE_N,
            exchange_rate_hz: 1000.0,
            stale_after: Duration::from_millis(20),
            lost_after: Duration::from_millis(500),
            connect_timeout: Duration::from_millis(1000),
            on_disconnect: OnDisconnect::Wait,
            reconnect_interval: Duration::from_millis(500),
        }
    }
}

/// The default force limit (N): a conservative continuous force for a
/// desk-top arm of the Inverse3's size; raise it in `[device.haply]`
/// within what Haply states for the unit.
pub const DEFAULT_MAX_FORCE_N: f64 = 3.0;

/// What the Inverse3 can do as this backend drives it: 3 DoF out, 3 in
/// (6 with a VerseGrip), the 0.1 m radius of reach Haply's examples keep
/// the cursor in, and a stiffness far below what a 1 kHz loop could
/// render, for a device whose loop runs through the service.
pub fn capabilities(settings: &HaplySettings, with_grip: bool) -> DeviceCapabilities {
    DeviceCapabilities {
        name: if with_grip {
            "Haply Inverse3 with VerseGrip".into()
        } else {
            "Haply Inverse3".into()
        },
        input_dof: if with_grip { 6 } else { 3 },
        output_dof: 3,
        workspace_half_extents: Vector3::repeat(0.1),
        max_force: settings.max_force_n,
        max_torque: 0.0,
        max_stiffness: 1500.0,
        native_rate: settings.exchange_rate_hz,
    }
}

/// The I/O thread's counts, as last published.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IoCounters {
    /// Force commands sent.
    pub sent: u64,
    /// State updates read and published.
    pub states: u64,
    /// Frames that were not JSON objects.
    pub malformed: u64,
    /// Messages lacking a field, or holding one of the wrong type, or
    /// lacking the selected Inverse3.
    pub bad_fields: u64,
    /// Binary frames.
    pub not_text: u64,
    /// Messages without the selected grip (its last orientation is kept).
    pub grip_absent: u64,
    /// Replies later than `stale_after`.
    pub late_replies: u64,
    /// Connections lost.
    pub disconnects: u64,
    /// Connections made again after a loss.
    pub reconnects: u64,
}

/// The link as the servo sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Link {
    Connected,
    Lost,
    /// Lost, and not to be waited for (`OnDisconnect::Stop`).
    GivenUp,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Stamped {
    timestamp: Duration,
    position: Point3<f64>,
    velocity: Vector3<f64>,
    orientation: UnitQuaternion<f64>,
    buttons: u32,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Shared {
    link: Link,
    reading: Option<Stamped>,
    counters: IoCounters,
}

/// A Haply Inverse3 (and VerseGrip) through the Inverse Service.
pub struct HaplyDevice {
    capabilities: DeviceCapabilities,
    samples: LatestReader<Shared>,
    forces: LatestWriter<Vector3<f64>>,
    opened: Instant,
    stale_after: Duration,
    link: Link,
    loss_reported: bool,
    selection: Selection,
    last_error: Arc<Mutex<Option<ProtocolError>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// The devices `settings` asks for among those `inventory` lists.
fn select(
    inventory: &Inventory,
    settings: &HaplySettings,
    url: &str,
) -> Result<Selection, HaplyError> {
    let Some(inverse3) = inventory.inverse3(settings.inverse3.as_deref()) else {
        return Err(match &settings.inverse3 {
            None => HaplyError::NoInverse3 { url: url.into() },
            Some(wanted) => HaplyError::NotFound {
                url: url.into(),
                kind: "Inverse3",
                wanted: wanted.clone(),
                listed: listed(inventory.inverse3.iter().map(|d| (&d.device_id, &d.port))),
            },
        });
    };
    let grip = if settings.use_verse_grip {
        match (
            inventory.grip(settings.verse_grip.as_deref()),
            &settings.verse_grip,
        ) {
            (Some(g), _) => Some((g.device_id.clone(), g.wireless)),
            (None, None) => None,
            (None, Some(wanted)) => {
                return Err(HaplyError::NotFound {
                    url: url.into(),
                    kind: "VerseGrip",
                    wanted: wanted.clone(),
                    listed: listed(inventory.grips.iter().map(|d| (&d.device_id, &d.port))),
                })
            }
        }
    } else {
        None
    };
    Ok(Selection {
        inverse3: inverse3.device_id.clone(),
        grip,
    })
}

fn listed<'a>(devices: impl Iterator<Item = (&'a String, &'a Option<String>)>) -> String {
    let names: Vec<String> = devices
        .map(|(id, port)| match port {
            Some(port) => format!("{id} on {port}"),
            None => id.clone(),
        })
        .collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

impl HaplyDevice {
    /// Connects to the service, picks the Inverse3 (and grip) `settings`
    /// names from its inventory and starts the I/O thread. Fails, naming
    /// the URL, when the service cannot be reached or lacks the device.
    pub fn open(settings: &HaplySettings) -> Result<HaplyDevice, HaplyError> {
        let (mut session, message) = Session::connect(&settings.url, settings.connect_timeout)?;
        let inventory =
            Inventory::from_message(&message).map_err(|error| HaplyError::Protocol {
                url: settings.url.clone(),
                error,
            })?;
        let selection = select(&inventory, settings, &settings.url)?;
        let poll = io_poll(settings);
        session.set_timeout(poll).map_err(|e| HaplyError::Connect {
            url: settings.url.clone(),
            reason: e.to_string(),
        })?;
        let opened = Instant::now();
        let initial = Shared {
            link: Link::Connected,
            reading: None,
            counters: IoCounters::default(),
        };
        let (samples_in, samples) = Latest::new(&initial).split();
        let (forces, forces_out) = Latest::new(&Vector3::zeros()).split();
        let stop = Arc::new(AtomicBool::new(false));
        let last_error = Arc::new(Mutex::new(None));
        let io = Io {
            session: Some(session),
            settings: settings.clone(),
            selection: selection.clone(),
            samples: samples_in,
            forces: forces_out,
            opened,
            stop: stop.clone(),
            last_error: last_error.clone(),
            shared: initial,
            orientation: UnitQuaternion::identity(),
            buttons: 0,
        };
        let thread = std::thread::Builder::new()
            .name("haply-io".into())
            .spawn(move || io.run())
            .map_err(|e| HaplyError::Thread(e.to_string()))?;
        Ok(HaplyDevice {
            capabilities: capabilities(settings, selection.grip.is_some()),
            samples,
            forces,
            opened,
            stale_after: settings.stale_after,
            link: Link::Connected,
            loss_reported: false,
            selection,
            last_error,
            stop,
            thread: Some(thread),
        })
    }

    /// The Inverse3's `device_id` and the grip's, if one is used.
    pub fn selected(&self) -> (&str, Option<&str>) {
        (
            &self.selection.inverse3,
            self.selection.grip.as_ref().map(|(id, _)| id.as_str()),
        )
    }

    /// The I/O thread's counts as last published (not for the servo
    /// thread's hot path: it copies them).
    pub fn counters(&mut self) -> IoCounters {
        self.samples.read().counters
    }

    /// The last message the I/O thread could not use, and why.
    pub fn last_protocol_error(&self) -> Option<ProtocolError> {
        self.last_error.lock().ok().and_then(|e| e.clone())
    }
}

impl HapticDevice for HaplyDevice {
    fn capabilities(&self) -> &DeviceCapabilities {
        &self.capabilities
    }

    /// The newest state update. `Disconnected` while the service is lost
    /// (with `OnDisconnect::Stop`, once, then `Lost`); `Stale` before the
    /// first update and when the newest is older than `stale_after`. A grip
    /// orientation that cannot be normalised is NaN, which the safety
    /// layer withholds as a non-finite sample.
    fn read(&mut self) -> Result<DeviceSample, DeviceError> {
        let now = self.opened.elapsed();
        let shared = *self.samples.read();
        self.link = shared.link;
        match shared.link {
            Link::Connected => {}
            Link::Lost => return Err(DeviceError::Disconnected),
            Link::GivenUp if !self.loss_reported => {
                self.loss_reported = true;
                return Err(DeviceError::Disconnected);
            }
            Link::GivenUp => return Err(DeviceError::Lost),
        }
        let Some(r) = shared.reading else {
            return Err(DeviceError::Stale { age: now });
        };
        let age = now.saturating_sub(r.timestamp);
        if age > self.stale_after {
            return Err(DeviceError::Stale { age });
        }
        Ok(DeviceSample {
            timestamp: r.timestamp,
            position: r.position,
            orientation: r.orientation,
            buttons: r.buttons,
            linear_velocity: Some(r.velocity),
            angular_velocity: None,
        })
    }

    /// Hands the force to the I/O thread, which sends it with its next
    /// message; the torque is ignored (3 DoF out). `Disconnected` while
    /// the service is lost.
    fn write(&mut self, wrench: &Wrench) -> Result<(), DeviceError> {
        if !wrench.force.iter().all(|f| f.is_finite()) {
            return Err(DeviceError::WrenchNotFinite);
        }
        self.forces.publish(wrench.force);
        match self.link {
            Link::Connected => Ok(()),
            Link::Lost | Link::GivenUp => Err(DeviceError::Disconnected),
        }
    }
}

impl Drop for HaplyDevice {
    /// Stops the I/O thread, which sends a zero force and closes the
    /// session before it ends.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// How long one blocking read of the I/O thread may wait, so that it
/// notices a stop request and counts late replies promptly.
fn io_poll(settings: &HaplySettings) -> Duration {
    settings
        .stale_after
        .min(settings.lost_after)
        .max(Duration::from_millis(1))
}

/// The I/O thread's state.
struct Io {
    session: Option<Session>,
    settings: HaplySettings,
    selection: Selection,
    samples: LatestWriter<Shared>,
    forces: LatestReader<Vector3<f64>>,
    opened: Instant,
    stop: Arc<AtomicBool>,
    last_error: Arc<Mutex<Option<ProtocolError>>>,
    shared: Shared,
    orientation: UnitQuaternion<f64>,
    buttons: u32,
}

/// How one exchange ended.
enum Exchange {
    Done,
    Lost(String),
    Stopped,
}

impl Io {
    /// Exchanges with the service at `exchange_rate_hz`: sends the newest
    /// force, waits for the state update it answers with, publishes it.
    /// On a loss, reconnects or gives up as configured. When told to stop,
    /// sends a zero force and closes.
    fn run(mut self) {
        let period = Duration::from_secs_f64(1.0 / self.settings.exchange_rate_hz);
        let centre = Point3::from(self.settings.centre_m);
        let mut next = Instant::now();
        while !self.stop.load(Ordering::Acquire) {
            let now = Instant::now();
            if next > now {
                std::thread::sleep(next - now);
            }
            next = (next + period).max(Instant::now());
            let force = frame::force(self.forces.read());
            match self.exchange(force, &centre) {
                Exchange::Done => {}
                Exchange::Stopped => break,
                Exchange::Lost(reason) => {
                    self.session = None;
                    self.shared.counters.disconnects += 1;
                    self.shared.reading = None;
                    let give_up = self.settings.on_disconnect == OnDisconnect::Stop;
                    self.shared.link = if give_up { Link::GivenUp } else { Link::Lost };
                    self.publish();
                    if give_up {
                        tracing::error!(
                            url = %self.settings.url, %reason,
                            "the Haply Inverse Service was lost; on_disconnect = \"stop\": the run ends"
                        );
                        return;
                    }
                    tracing::warn!(
                        url = %self.settings.url, %reason,
                        "the Haply Inverse Service was lost; zero force, reconnecting"
                    );
                    if !self.reconnect() {
                        return;
                    }
                    next = Instant::now();
                }
            }
        }
        if let Some(mut session) = self.session.take() {
            // The last word: no force.
            if session
                .send_force(&self.selection.inverse3, [0.0; 3])
                .is_ok()
            {
                let _ = session.receive();
            }
            session.close();
        }
    }

    fn publish(&mut self) {
        let shared = self.shared;
        self.samples.publish(shared);
    }

    /// One message out, its state update in.
    fn exchange(&mut self, force: [f64; 3], centre: &Point3<f64>) -> Exchange {
        let Some(session) = self.session.as_mut() else {
            return Exchange::Lost("no session".into());
        };
        if let Err(e) = session.send_force(&self.selection.inverse3, force) {
            return Exchange::Lost(match e {
                LinkError::Closed(reason) => reason,
                LinkError::Timeout => "a send timed out".into(),
                LinkError::Protocol(p) => p.to_string(),
            });
        }
        self.shared.counters.sent += 1;
        let sent = Instant::now();
        let mut late = false;
        let message = loop {
            match session.receive() {
                Ok(message) => break message,
                Err(LinkError::Timeout) => {
                    if !late {
                        late = true;
                        self.shared.counters.late_replies += 1;
                        self.samples.publish(self.shared);
                    }
                    if self.stop.load(Ordering::Acquire) {
                        return Exchange::Stopped;
                    }
                    if sent.elapsed() >= self.settings.lost_after {
                        return Exchange::Lost(format!(
                            "no reply in {} ms",
                            self.settings.lost_after.as_millis()
                        ));
                    }
                }
                Err(LinkError::Closed(reason)) => return Exchange::Lost(reason),
                Err(LinkError::Protocol(error)) => {
                    self.fault(error);
                    return Exchange::Done;
                }
            }
        };
        match protocol::read_state(&message, &self.selection) {
            Ok(reading) => {
                if self.selection.grip.is_some() {
                    match reading.orientation {
                        Some(q) => {
                            self.orientation = frame::orientation(q);
                            self.buttons = reading.buttons;
                        }
                        None => self.shared.counters.grip_absent += 1,
                    }
                }
                self.shared.counters.states += 1;
                self.shared.reading = Some(Stamped {
                    timestamp: self.opened.elapsed(),
                    position: frame::position(reading.position, centre),
                    velocity: frame::velocity(reading.velocity),
                    orientation: self.orientation,
                    buttons: self.buttons,
                });
                self.publish();
            }
            Err(error) => self.fault(error),
        }
        Exchange::Done
    }

    /// Counts a message that could not be used, keeps it as the last
    /// error, and logs the first of each kind and every 1000th.
    fn fault(&mut self, error: ProtocolError) {
        let c = &mut self.shared.counters;
        let n = match &error {
            ProtocolError::Malformed(_) => {
                c.malformed += 1;
                c.malformed
            }
            ProtocolError::NotText => {
                c.not_text += 1;
                c.not_text
            }
            ProtocolError::Missing(_)
            | ProtocolError::WrongType { .. }
            | ProtocolError::DeviceAbsent { .. } => {
                c.bad_fields += 1;
                c.bad_fields
            }
        };
        if n == 1 || n % 1000 == 0 {
            tracing::warn!(url = %self.settings.url, count = n, "unusable message from the Haply Inverse Service: {error}");
        }
        if let Ok(mut last) = self.last_error.lock() {
            *last = Some(error);
        }
        self.publish();
    }

    /// Tries every `reconnect_interval` until the service lists the same
    /// devices again (true) or the thread is told to stop (false).
    fn reconnect(&mut self) -> bool {
        let poll = io_poll(&self.settings);
        loop {
            let deadline = Instant::now() + self.settings.reconnect_interval;
            while Instant::now() < deadline {
                if self.stop.load(Ordering::Acquire) {
                    return false;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            let Ok((mut session, message)) =
                Session::connect(&self.settings.url, self.settings.connect_timeout)
            else {
                continue;
            };
            let same = Inventory::from_message(&message)
                .ok()
                .and_then(|inventory| select(&inventory, &self.settings, &self.settings.url).ok())
                .is_some_and(|s| s.inverse3 == self.selection.inverse3);
            if !same || session.set_timeout(poll).is_err() {
                session.close();
                continue;
            }
            self.session = Some(session);
            self.shared.counters.reconnects += 1;
            self.shared.link = Link::Connected;
            self.publish();
            tracing::info!(url = %self.settings.url, "the Haply Inverse Service is back");
            return true;
        }
    }
}
