//! The stream hub: the frames the daemon publishes, fanned out to every
//! stream client through its own bounded queue.
//!
//! A publisher (the telemetry thread) serialises each frame once and only
//! tries to enqueue it: a client whose queue is full loses tick frames
//! (counted per client), never holds up the publisher or the others.

use crate::api::ApiError;
use axum::body::Bytes;
use haptic_schema::{
    FrictionState, FrictionVerdict, ObjectRole, OrNotRendered, SafetyState, TripCause,
};
use serde::Serialize;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::Notify;
use utoipa::ToSchema;

/// Frames a client's queue holds before tick frames are dropped.
pub const QUEUE_FRAMES: usize = 64;

/// Frames beyond [`QUEUE_FRAMES`] (events and geometry, never dropped) a
/// queue may hold before its client is disconnected.
const QUEUE_OVERFLOW: usize = 1024;

/// How long a client's queue may stay full before it is disconnected.
pub const FULL_TIMEOUT: Duration = Duration::from_secs(10);

/// Events per [`StreamHub::publish_events`] call; more are summarised by
/// one `events_omitted` event.
pub const EVENTS_PER_FRAME: usize = 32;

/// The stream protocol's version, in `hello`.
pub const PROTOCOL: u32 = 1;

/// Close code for a client disconnected because it read too slowly.
pub const CLOSE_TOO_SLOW: u16 = 1008;

/// A pose: position (m) and unit quaternion.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, ToSchema)]
pub struct Pose {
    pub position_m: [f64; 3],
    pub orientation_wijk: [f64; 4],
}

/// One contact point of a tick, world frame: the force on the tool there,
/// split into its normal and friction parts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, ToSchema)]
pub struct ContactPoint {
    /// Index of the object in `hello.objects` the tool touches.
    pub object: u32,
    pub position_m: [f64; 3],
    pub normal: [f64; 3],
    pub normal_force_n: [f64; 3],
    pub friction_force_n: [f64; 3],
    /// Held by static friction.
    pub r#static: bool,
}

/// A tick frame as the publisher fills it; the hub adds `type`, each
/// client's contact points (capped), `contact_points_omitted` and its
/// `dropped`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, ToSchema)]
pub struct TickFrame {
    pub tick: u64,
    /// Since the scene's servo started (s).
    pub time_s: f64,
    pub tool: Pose,
    pub manipulandum: Pose,
    /// Every object but the tool, in `hello.objects` order.
    pub environment: Vec<Pose>,
    /// The physics steps taken when the step whose poses `environment`
    /// shows was published (moved since by local models when they are on):
    /// that step ended `physics_sequence` physics periods after the start.
    pub physics_sequence: u64,
    /// Written to the device, device frame.
    pub force_n: [f64; 3],
    pub torque_n_m: [f64; 3],
    /// Rendered, before the safety layer.
    pub rendered_force_n: [f64; 3],
    pub rendered_torque_n_m: [f64; 3],
    pub contacts: u32,
    /// What the tool did.
    pub state: OrNotRendered<FrictionState>,
    /// What the friction stage decided, and how surely.
    pub verdict: OrNotRendered<FrictionVerdict>,
    pub safety_state: SafetyState,
    pub clutched: bool,
    pub compute_us: f64,
    pub wake_latency_us: f64,
    pub deadline_misses: u64,
    /// The rendering parameters' generation the tick ran with.
    pub generation: u64,
    /// Tick records the telemetry thread missed.
    pub servo_dropped: u64,
    /// The passivity observer: energy the scene has taken in from the
    /// device through the force port since the start (J), negative when it
    /// gave out more.
    pub passivity_energy_j: f64,
    /// The same through the torque port (J).
    pub passivity_rotational_energy_j: f64,
    /// Damping the passivity controller added this tick (N·s/m).
    pub passivity_damping_n_s_per_m: f64,
    /// Rotational damping it added (N·m·s/rad).
    pub passivity_rotational_damping_n_m_s_per_rad: f64,
    /// Bodies moved by local models this tick.
    pub local_bodies: u32,
}

/// Something that happened, sent to every client as an `event` frame.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The friction state changed.
    StateChange {
        from: OrNotRendered<FrictionState>,
        to: OrNotRendered<FrictionState>,
    },
    /// The safety layer forced the output to zero.
    SafetyTrip { cause: TripCause, trips: u64 },
    /// New rendering parameters are in force.
    Parameters { generation: u64 },
    /// A recording started (`recording`) or stopped (`null`).
    Recording {
        recording: Option<crate::api::Recording>,
    },
    /// Events left out of one frame period.
    EventsOmitted { count: u64 },
}

/// An `event` frame: an event and the tick it happened at.
#[derive(Serialize, ToSchema)]
pub struct EventFrame<'a> {
    pub tick: u64,
    #[serde(flatten)]
    pub event: &'a Event,
}

/// A tick frame as one client gets it: the tick's fields, then its own
/// share of the contact points and its drop count. The hub serialises the
/// tick's part once for all clients; this is what each gets.
#[derive(Serialize, ToSchema)]
pub struct ClientTick<'a> {
    #[serde(flatten)]
    pub frame: &'a TickFrame,
    /// The tick's first contact points, at most the client's `contacts`.
    pub contact_points: &'a [ContactPoint],
    /// The tick's contacts not in `contact_points`.
    pub contact_points_omitted: usize,
    /// Tick frames dropped because this client read too slowly.
    pub dropped: u64,
}

/// A text frame the server sends on the stream, told apart by `type`.
#[derive(Serialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TextFrame<'a> {
    /// The scene, first on a connection and after each scene load.
    Hello(Hello<'a>),
    Tick(ClientTick<'a>),
    Event(EventFrame<'a>),
    /// The reply to a malformed client message, which changed nothing.
    Error(&'a ApiError),
}

impl TextFrame<'_> {
    pub(crate) fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a text frame serialises")
    }
}

/// One object as `hello` lists it.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct HelloObject {
    pub index: u32,
    pub name: String,
    pub tool: bool,
    pub role: ObjectRole,
    pub movable: bool,
    pub vertices: u32,
    pub triangles: u32,
}

/// A triangle mesh in its object's frame, sent as a binary geometry frame.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mesh {
    pub vertices: Vec<[f32; 3]>,
    /// Vertex indices, counter-clockwise seen from outside.
    pub triangles: Vec<[u32; 3]>,
}

/// One deformable body as `hello` lists it: its surface's triangles, whose
/// vertices its surface frames carry.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct HelloDeformable {
    /// Its index in `hello.deformables`, which its surface frames carry.
    pub index: u32,
    pub name: String,
    /// Surface vertices in each of its surface frames.
    pub vertices: u32,
    /// Indices into a surface frame's vertices, three per triangle,
    /// counter-clockwise seen from outside (a cloth's from +z at rest).
    pub triangles: Vec<[u32; 3]>,
}

/// What a client is told of a scene: `hello`, then one geometry frame per
/// object.
#[derive(Clone, Debug, PartialEq)]
pub struct SceneAnnouncement {
    /// The scene's config file.
    pub scene: String,
    pub servo_rate_hz: f64,
    pub objects: Vec<(HelloObject, Mesh)>,
    /// The scene's deformable bodies, in the config's order.
    pub deformables: Vec<HelloDeformable>,
}

/// The `hello` frame.
#[derive(Serialize, ToSchema)]
pub struct Hello<'a> {
    pub protocol: u32,
    pub scene: &'a str,
    pub servo_rate_hz: f64,
    /// This client's tick frame rate (Hz).
    pub rate_hz: f64,
    /// This client's cap on contact points per frame.
    pub contacts: u32,
    pub generation: u64,
    pub objects: Vec<&'a HelloObject>,
    /// The deformable bodies, whose surfaces come in binary surface
    /// frames at this client's rate.
    pub deformables: &'a [HelloDeformable],
}

/// A scene as the clients get it: the announcement and its geometry
/// frames, encoded once.
pub(crate) struct SceneFrames {
    pub announcement: SceneAnnouncement,
    pub geometry: Vec<Bytes>,
}

/// The binary geometry frame of `mesh`, object `index` (docs/protocol.md).
pub fn geometry_frame(index: u32, mesh: &Mesh) -> Bytes {
    let mut out = Vec::with_capacity(20 + 12 * (mesh.vertices.len() + mesh.triangles.len()));
    out.extend_from_slice(b"HGEO");
    for word in [
        1,
        index,
        mesh.vertices.len() as u32,
        mesh.triangles.len() as u32,
    ] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    for v in mesh.vertices.iter().flatten() {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for i in mesh.triangles.iter().flatten() {
        out.extend_from_slice(&i.to_le_bytes());
    }
    out.into()
}

/// Magic of a binary surface frame: a deformable body's surface vertices.
pub const SURFACE_MAGIC: [u8; 4] = *b"HDEF";

/// Bytes before a surface frame's vertices.
pub const SURFACE_HEADER_BYTES: usize = 20;

/// The binary surface frame of deformable `index` after physics step
/// `step` (docs/protocol.md): its `vertices` (world frame, m) as
/// little-endian f32.
pub fn surface_frame(index: u32, step: u64, vertices: &[[f32; 3]]) -> Bytes {
    let mut out = Vec::with_capacity(SURFACE_HEADER_BYTES + 12 * vertices.len());
    out.extend_from_slice(&SURFACE_MAGIC);
    out.extend_from_slice(&index.to_le_bytes());
    out.extend_from_slice(&(vertices.len() as u32).to_le_bytes());
    out.extend_from_slice(&step.to_le_bytes());
    for v in vertices.iter().flatten() {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.into()
}

/// A tick frame serialised once: its fields but the per-client ones, and
/// each contact point.
pub(crate) struct PreparedTick {
    /// The frame's JSON without its closing brace.
    head: String,
    points: Vec<String>,
    /// The tick's contacts, of which `points` are the first.
    total: usize,
}

impl PreparedTick {
    /// The text frame for a client taking at most `cap` contact points,
    /// that has dropped `dropped` frames.
    pub fn text(&self, cap: usize, dropped: u64) -> String {
        let shown = &self.points[..cap.min(self.points.len())];
        let mut text = String::with_capacity(
            self.head.len() + 96 + shown.iter().map(|p| p.len() + 1).sum::<usize>(),
        );
        text.push_str(&self.head);
        text.push_str(",\"contact_points\":[");
        for (i, point) in shown.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            text.push_str(point);
        }
        text.push_str(&format!(
            "],\"contact_points_omitted\":{},\"dropped\":{dropped}}}",
            self.total.max(self.points.len()) - shown.len()
        ));
        text
    }
}

/// A frame waiting in a client's queue.
pub(crate) enum Outgoing {
    /// `hello` and the geometry frames after it.
    Scene(Arc<SceneFrames>),
    Tick(Arc<PreparedTick>),
    /// A serialised text frame (an event).
    Text(Arc<str>),
    /// The deformables' surface frames of one physics step.
    Surfaces(Arc<[Bytes]>),
}

/// A client's subscription: tick frame rate and contact point cap.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Subscription {
    pub rate_hz: f64,
    pub contacts: u32,
}

pub(crate) struct Queue {
    pub frames: VecDeque<Outgoing>,
    pub subscription: Subscription,
    /// Servo time (s) the next tick frame is due at.
    next_due_s: f64,
    /// Physics time (s) the next surface frames are due at.
    next_surfaces_due_s: f64,
    pub dropped: u64,
    full_since: Option<Instant>,
    /// Why the client must be disconnected, if it must: a close code.
    pub close: Option<u16>,
}

/// One stream client.
pub(crate) struct Client {
    pub id: u64,
    pub peer: String,
    connected: Instant,
    queue: Mutex<Queue>,
    /// Woken when a frame is queued or the client must close.
    pub wake: Notify,
    /// Woken when the client must close.
    pub closing: Notify,
}

impl Client {
    pub fn queue(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues a frame that is never dropped; a client whose queue has
    /// stayed full too long, or overflows, is told to close.
    fn push_always(&self, frame: Outgoing) {
        let mut queue = self.queue();
        queue.frames.push_back(frame);
        queue.note_fullness();
        if queue.frames.len() > QUEUE_FRAMES + QUEUE_OVERFLOW {
            queue.close.get_or_insert(CLOSE_TOO_SLOW);
        }
        let closing = queue.close.is_some();
        drop(queue);
        self.wake(closing);
    }

    /// Wakes the client's task, to send or, when `closing`, to close.
    fn wake(&self, closing: bool) {
        if closing {
            self.closing.notify_one();
        }
        self.wake.notify_one();
    }
}

impl Queue {
    /// Tracks how long the queue has been full; past [`FULL_TIMEOUT`] the
    /// client must close.
    fn note_fullness(&mut self) {
        if self.frames.len() < QUEUE_FRAMES {
            self.full_since = None;
        } else if self.full_since.get_or_insert_with(Instant::now).elapsed() >= FULL_TIMEOUT {
            self.close.get_or_insert(CLOSE_TOO_SLOW);
        }
    }

    /// Whether a tick at `time_s` is due for this client, advancing its
    /// schedule when it is.
    fn take_due(&mut self, time_s: f64) -> bool {
        take_due(&mut self.next_due_s, self.subscription.rate_hz, time_s)
    }

    /// Changes the subscription; the next tick and surface frames are
    /// due at once.
    pub fn subscribe(&mut self, subscription: Subscription) {
        self.subscription = subscription;
        self.restart();
    }

    /// Starts the frame schedules again, for a new scene's time.
    fn restart(&mut self) {
        self.next_due_s = 0.0;
        self.next_surfaces_due_s = 0.0;
    }
}

/// Whether a frame at `time_s` is due by the schedule `next_due_s` at
/// `rate_hz`, advancing it when it is.
fn take_due(next_due_s: &mut f64, rate_hz: f64, time_s: f64) -> bool {
    if time_s + 1e-9 < *next_due_s {
        return false;
    }
    let period = 1.0 / rate_hz;
    *next_due_s += period;
    if *next_due_s <= time_s {
        *next_due_s = time_s + period;
    }
    true
}

impl Queue {}

/// A stream client as `/v1/status` lists it.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct ClientStatus {
    pub id: u64,
    pub peer: String,
    pub connected_s: f64,
    pub rate_hz: f64,
    pub contacts: u32,
    /// Frames waiting to be sent.
    pub queued: usize,
    /// Tick frames dropped because the client read too slowly.
    pub dropped: u64,
}

#[derive(Default)]
struct HubInner {
    clients: Mutex<Vec<Arc<Client>>>,
    scene: Mutex<Option<Arc<SceneFrames>>>,
    generation: AtomicU64,
    next_id: AtomicU64,
}

/// The publishing side of the stream, shared by the daemon and the
/// server; cheap to clone.
#[derive(Clone, Default)]
pub struct StreamHub {
    inner: Arc<HubInner>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl StreamHub {
    pub fn new() -> Self {
        Self::default()
    }

    /// Announces a scene: every client gets its `hello` and geometry now,
    /// and so does every client that connects later.
    pub fn set_scene(&self, announcement: SceneAnnouncement) {
        let geometry = announcement
            .objects
            .iter()
            .map(|(object, mesh)| geometry_frame(object.index, mesh))
            .collect();
        let frames = Arc::new(SceneFrames {
            announcement,
            geometry,
        });
        let mut scene = lock(&self.inner.scene);
        *scene = Some(frames.clone());
        // Under the scene lock, so that a client registering now gets the
        // announcement exactly once. A new scene's servo time starts again
        // at 0, and so does each client's frame schedule.
        for client in lock(&self.inner.clients).iter() {
            client.queue().restart();
            client.push_always(Outgoing::Scene(frames.clone()));
        }
    }

    /// The rendering parameters' generation `hello` reports.
    pub fn set_generation(&self, generation: u64) {
        self.inner.generation.store(generation, Ordering::Relaxed);
    }

    pub(crate) fn generation(&self) -> u64 {
        self.inner.generation.load(Ordering::Relaxed)
    }

    /// Whether any client wants a tick frame at servo time `time_s`; a
    /// publisher asks before building one.
    pub fn wants_tick(&self, time_s: f64) -> bool {
        lock(&self.inner.clients)
            .iter()
            .any(|client| time_s + 1e-9 >= client.queue().next_due_s)
    }

    /// Sends `frame` with `contacts` (the first of the tick's
    /// `frame.contacts`) to every client it is due for, by the client's
    /// rate; a client whose queue is full has it dropped and counted.
    pub fn publish_tick(&self, frame: &TickFrame, contacts: &[ContactPoint]) {
        /// The head of a [`TextFrame::Tick`]: its tag and the tick's
        /// fields, before each client's own.
        #[derive(Serialize)]
        struct Head<'a> {
            r#type: &'static str,
            #[serde(flatten)]
            frame: &'a TickFrame,
        }
        let clients = lock(&self.inner.clients);
        let mut prepared: Option<Arc<PreparedTick>> = None;
        for client in clients.iter() {
            let mut queue = client.queue();
            if !queue.take_due(frame.time_s) {
                continue;
            }
            if queue.frames.len() >= QUEUE_FRAMES {
                queue.dropped += 1;
                queue.note_fullness();
                let closing = queue.close.is_some();
                drop(queue);
                if closing {
                    client.wake(true);
                }
                continue;
            }
            let prepared = prepared.get_or_insert_with(|| {
                let mut head = serde_json::to_string(&Head {
                    r#type: "tick",
                    frame,
                })
                .expect("a tick frame serialises");
                head.pop();
                Arc::new(PreparedTick {
                    head,
                    points: contacts
                        .iter()
                        .map(|p| serde_json::to_string(p).expect("a contact point serialises"))
                        .collect(),
                    total: frame.contacts as usize,
                })
            });
            queue.frames.push_back(Outgoing::Tick(prepared.clone()));
            queue.note_fullness();
            let closing = queue.close.is_some();
            drop(queue);
            client.wake(closing);
        }
    }

    /// Whether any client wants the deformables' surface frames at physics
    /// time `time_s`; a publisher asks before encoding them.
    pub fn wants_surfaces(&self, time_s: f64) -> bool {
        lock(&self.inner.clients)
            .iter()
            .any(|client| time_s + 1e-9 >= client.queue().next_surfaces_due_s)
    }

    /// Sends `frames` ([`surface_frame`]s of one physics step at physics
    /// time `time_s`) to every client they are due for, by the client's
    /// rate; a client whose queue is full has them dropped and counted as
    /// one dropped frame.
    pub fn publish_surfaces(&self, time_s: f64, frames: Arc<[Bytes]>) {
        for client in lock(&self.inner.clients).iter() {
            let mut queue = client.queue();
            let rate_hz = queue.subscription.rate_hz;
            if !take_due(&mut queue.next_surfaces_due_s, rate_hz, time_s) {
                continue;
            }
            if queue.frames.len() >= QUEUE_FRAMES {
                queue.dropped += 1;
                queue.note_fullness();
                let closing = queue.close.is_some();
                drop(queue);
                if closing {
                    client.wake(true);
                }
                continue;
            }
            queue.frames.push_back(Outgoing::Surfaces(frames.clone()));
            queue.note_fullness();
            let closing = queue.close.is_some();
            drop(queue);
            client.wake(closing);
        }
    }

    /// Sends `events`, each with the tick it happened at, to every client:
    /// at most [`EVENTS_PER_FRAME`], the rest counted in one
    /// `events_omitted` at the last one's tick.
    pub fn publish_events(&self, events: &[(u64, Event)]) {
        let omitted = events.len().saturating_sub(EVENTS_PER_FRAME);
        let summary = events.last().map(|&(tick, _)| {
            (
                tick,
                Event::EventsOmitted {
                    count: omitted as u64,
                },
            )
        });
        let sent = events
            .iter()
            .take(EVENTS_PER_FRAME)
            .chain(summary.as_ref().filter(|_| omitted > 0));
        let frames: Vec<Arc<str>> = sent
            .map(|(tick, event)| {
                TextFrame::Event(EventFrame { tick: *tick, event })
                    .to_json()
                    .into()
            })
            .collect();
        if frames.is_empty() {
            return;
        }
        for client in lock(&self.inner.clients).iter() {
            for frame in &frames {
                client.push_always(Outgoing::Text(frame.clone()));
            }
        }
    }

    /// Tells every client to close with `code`.
    pub(crate) fn close_all(&self, code: u16) {
        for client in lock(&self.inner.clients).iter() {
            client.queue().close.get_or_insert(code);
            client.wake(true);
        }
    }

    /// Registers a client unless `max_clients` are connected; it starts
    /// with the scene's announcement queued, if there is a scene.
    pub(crate) fn register(
        &self,
        peer: String,
        subscription: Subscription,
        max_clients: usize,
    ) -> Option<Arc<Client>> {
        let scene = lock(&self.inner.scene);
        let mut clients = lock(&self.inner.clients);
        if clients.len() >= max_clients {
            return None;
        }
        let mut frames = VecDeque::with_capacity(QUEUE_FRAMES);
        frames.extend(scene.clone().map(Outgoing::Scene));
        let client = Arc::new(Client {
            id: self.inner.next_id.fetch_add(1, Ordering::Relaxed) + 1,
            peer,
            connected: Instant::now(),
            queue: Mutex::new(Queue {
                frames,
                subscription,
                next_due_s: 0.0,
                next_surfaces_due_s: 0.0,
                dropped: 0,
                full_since: None,
                close: None,
            }),
            wake: Notify::new(),
            closing: Notify::new(),
        });
        if !client.queue().frames.is_empty() {
            client.wake.notify_one();
        }
        clients.push(client.clone());
        Some(client)
    }

    pub(crate) fn unregister(&self, id: u64) {
        lock(&self.inner.clients).retain(|c| c.id != id);
    }

    /// The connected clients with their drop counts.
    pub fn clients(&self) -> Vec<ClientStatus> {
        lock(&self.inner.clients)
            .iter()
            .map(|client| {
                let queue = client.queue();
                ClientStatus {
                    id: client.id,
                    peer: client.peer.clone(),
                    connected_s: client.connected.elapsed().as_secs_f64(),
                    rate_hz: queue.subscription.rate_hz,
                    contacts: queue.subscription.contacts,
                    queued: queue.frames.len(),
                    dropped: queue.dropped,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_geometry_frame_is_laid_out_as_documented() {
        let mesh = Mesh {
            vertices: vec![[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]],
            triangles: vec![[0, 1, 2]],
        };
        let frame = geometry_frame(7, &mesh);
        assert_eq!(frame.len(), 20 + 36 + 12);
        assert_eq!(&frame[..4], b"HGEO");
        let word = |i: usize| u32::from_le_bytes(frame[i..i + 4].try_into().unwrap());
        assert_eq!([word(4), word(8), word(12), word(16)], [1, 7, 3, 1]);
        assert_eq!(
            f32::from_le_bytes(frame[20 + 4 * 4..24 + 4 * 4].try_into().unwrap()),
            4.0
        );
        assert_eq!([word(56), word(60), word(64)], [0, 1, 2]);
    }

    #[test]
    fn a_surface_frame_is_laid_out_as_documented() {
        let frame = surface_frame(2, 41, &[[0.5, -1.0, 2.0], [3.0, 4.0, 5.0]]);
        assert_eq!(frame.len(), SURFACE_HEADER_BYTES + 24);
        assert_eq!(&frame[..4], b"HDEF");
        let word = |i: usize| u32::from_le_bytes(frame[i..i + 4].try_into().unwrap());
        assert_eq!([word(4), word(8)], [2, 2]);
        assert_eq!(u64::from_le_bytes(frame[12..20].try_into().unwrap()), 41);
        let float = |i: usize| f32::from_le_bytes(frame[i..i + 4].try_into().unwrap());
        assert_eq!(
            [float(20), float(24), float(28), float(40)],
            [0.5, -1.0, 2.0, 5.0]
        );
    }

    #[test]
    fn surfaces_are_decimated_to_each_clients_rate_and_dropped_when_full() {
        let hub = StreamHub::new();
        let subscription = Subscription {
            rate_hz: 10.0,
            contacts: 0,
        };
        let client = hub.register("c".into(), subscription, 1).unwrap();
        let frames: Arc<[Bytes]> = vec![surface_frame(0, 0, &[[0.0; 3]])].into();
        let mut sent = 0;
        // One second of 50 Hz physics steps.
        for step in 0..50 {
            let time_s = step as f64 * 0.02;
            if hub.wants_surfaces(time_s) {
                hub.publish_surfaces(time_s, frames.clone());
            }
            let mut queue = client.queue();
            sent += queue.frames.len();
            queue.frames.clear();
        }
        assert_eq!(sent, 10);
        // A full queue loses them, counted.
        client.queue().subscribe(Subscription {
            rate_hz: 1000.0,
            contacts: 0,
        });
        for step in 0..(QUEUE_FRAMES + 5) {
            hub.publish_surfaces(step as f64 * 0.02, frames.clone());
        }
        let queue = client.queue();
        assert_eq!(queue.frames.len(), QUEUE_FRAMES);
        assert_eq!(queue.dropped, 5);
        assert!(matches!(queue.frames[0], Outgoing::Surfaces(_)));
    }

    #[test]
    fn a_prepared_tick_caps_contact_points_and_stays_json() {
        let hub = StreamHub::new();
        let subscription = Subscription {
            rate_hz: 1000.0,
            contacts: 2,
        };
        let client = hub.register("test".into(), subscription, 1).unwrap();
        assert!(hub.register("refused".into(), subscription, 1).is_none());
        let points = [ContactPoint::default(); 5];
        hub.publish_tick(&TickFrame::default(), &points);
        let Some(Outgoing::Tick(tick)) = client.queue().frames.pop_front() else {
            panic!("no tick queued");
        };
        let value: serde_json::Value = serde_json::from_str(&tick.text(2, 9)).unwrap();
        assert_eq!(value["type"], "tick");
        assert_eq!(value["contact_points"].as_array().unwrap().len(), 2);
        assert_eq!(value["contact_points_omitted"], 3);
        assert_eq!(value["dropped"], 9);
        // Exactly the frame the OpenAPI document describes.
        let described = TextFrame::Tick(ClientTick {
            frame: &TickFrame::default(),
            contact_points: &points[..2],
            contact_points_omitted: 3,
            dropped: 9,
        });
        assert_eq!(value, serde_json::to_value(&described).unwrap());
    }

    #[test]
    fn ticks_are_decimated_to_each_clients_rate() {
        let hub = StreamHub::new();
        let slow = Subscription {
            rate_hz: 100.0,
            contacts: 0,
        };
        let client = hub.register("slow".into(), slow, 2).unwrap();
        let mut sent = 0;
        for tick in 0..1000u64 {
            let frame = TickFrame {
                tick,
                time_s: tick as f64 * 1e-3,
                ..TickFrame::default()
            };
            if hub.wants_tick(frame.time_s) {
                hub.publish_tick(&frame, &[]);
            }
            let mut queue = client.queue();
            sent += queue.frames.len();
            queue.frames.clear();
        }
        // 100 frames in one second of 1 kHz ticks, none dropped.
        assert_eq!(sent, 100);
        assert_eq!(client.queue().dropped, 0);
    }

    #[test]
    fn more_than_32_events_are_summarised() {
        let hub = StreamHub::new();
        let subscription = Subscription {
            rate_hz: 60.0,
            contacts: 0,
        };
        let client = hub.register("c".into(), subscription, 1).unwrap();
        let events = vec![(5, Event::Parameters { generation: 1 }); 40];
        hub.publish_events(&events);
        let queue = client.queue();
        assert_eq!(queue.frames.len(), 33);
        let Some(Outgoing::Text(last)) = queue.frames.back() else {
            panic!("no event queued");
        };
        let value: serde_json::Value = serde_json::from_str(last).unwrap();
        assert_eq!(value["event"], "events_omitted");
        assert_eq!(value["count"], 8);
        assert_eq!(value["tick"], 5);
    }
}
