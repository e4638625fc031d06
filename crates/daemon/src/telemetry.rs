//! The telemetry thread: drains the servo's tick records, records them to a
//! file (in MCAP with the scene as Foxglove draws it, once per drain),
//! streams them over UDP, logs safety trips, keeps the figures of the
//! status line and the run summary, and draws the status line; for the
//! control API it publishes tick frames and events into the stream hub,
//! keeps the live status, and starts and stops recordings.
//!
//! It runs at normal priority and never holds up the servo: when it falls
//! behind, the tick stream drops records and counts them.

use crate::control::TelemetryCommand;
use crate::lifecycle::{StoppableThread, ThreadName, ThreadPanicked};
use crate::pacer::Pacer;
use crate::physics::DeformableNodes;
use crate::publish::{self, fill_tick_frame};
use crate::recording::{device_pose, record_tick, recorded_tick, tool_contact_arrows, tool_pose};
use crate::status::{StatusLine, StatusSnapshot};
use haptic_devices::TripCause;
use haptic_friction::FrictionState;
use haptic_handoff::LatestReader;
use haptic_handoff::TickConsumer;
use haptic_recording::{BodyMesh, ContactArrow, DeformableSurface, SceneSnapshot, TickFile};
use haptic_render::FrictionVerdict;
use haptic_schema::OrNotRendered::{self, NotRendered, Rendered};
use haptic_server::{
    ApiError, ContactPoint, ErrorCode, Event, Faults, Percentiles, Pose, Recording, Status,
    StreamHub, TickFrame,
};
use haptic_servo::SceneFrame;
use haptic_servo::{PassivityRecord, ThreadSchedule, TickRecord, VerdictCounts};
use hdrhistogram::Histogram;
use nalgebra::Isometry3;
use serde_json::json;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Highest latency or compute time the telemetry histograms hold (ns).
const HISTOGRAM_MAX_NS: u64 = 10_000_000_000;

/// How the telemetry thread runs.
pub struct TelemetryOptions {
    /// Drains per second.
    pub rate_hz: f64,
    pub schedule: ThreadSchedule,
    /// Where ticks are recorded.
    pub record: Option<TickFile>,
    /// Where a datagram per drain is sent.
    pub udp: Option<SocketAddr>,
    /// Draw the status line (on a terminal).
    pub status: Option<StatusLine>,
    /// Status refreshes per second.
    pub status_rate_hz: f64,
    pub link: ControlLink,
}

/// What the telemetry thread shares with the control API.
pub struct ControlLink {
    pub hub: StreamHub,
    pub commands: Receiver<TelemetryCommand>,
    /// The live figures of `/v1/status`, refreshed with the status line.
    pub status: Arc<Mutex<Status>>,
    /// The servo's newest contacts and environment poses.
    pub scene_frames: LatestReader<SceneFrame>,
    /// The config's index of each of the cycle's environment objects.
    pub entry_objects: Vec<u32>,
    /// The environment in `hello` order: its first entry in the cycle, if
    /// it has one, and its pose as configured.
    pub environment: Vec<(Option<usize>, Pose)>,
    /// The servo period (ns): a tick whose wake-up latency and compute time
    /// exceed it missed its deadline.
    pub period_ns: u64,
    /// What an MCAP recording draws the scene with.
    pub drawing: SceneDrawing,
    /// The physics thread's newest deformable nodes, in a scene with
    /// deformables.
    pub deformable_nodes: Option<LatestReader<DeformableNodes>>,
}

/// What an MCAP recording draws a run's scene with.
#[derive(Clone, Debug, Default)]
pub struct SceneDrawing {
    /// Every object's mesh, the tool's in its frame `tool`.
    pub meshes: Vec<BodyMesh>,
    /// Per environment object: its frame, its first entry in the cycle, if
    /// it has one, and its pose as built.
    pub objects: Vec<(String, Option<usize>, Isometry3<f64>)>,
    /// Per deformable body, in the config's order: its name and surface
    /// triangles (indices into its nodes), as built.
    pub deformables: Vec<(String, Vec<[u32; 3]>)>,
}

/// Ticks per state, as the telemetry thread saw them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StateCounts {
    pub free: u64,
    pub sliding: u64,
    pub r#static: u64,
    pub not_rendered: u64,
}

impl StateCounts {
    fn add(&mut self, record: &TickRecord) {
        match record.friction_state() {
            Some(FrictionState::Free) => self.free += 1,
            Some(FrictionState::Sliding) => self.sliding += 1,
            Some(FrictionState::Static) => self.r#static += 1,
            None => self.not_rendered += 1,
        }
    }
}

/// What the telemetry thread saw over the run.
#[derive(Clone, Debug)]
pub struct TelemetryReport {
    /// Records received (the servo's ticks less the dropped ones).
    pub received: u64,
    /// Records the tick stream dropped because this thread fell behind.
    pub dropped: u64,
    pub states: StateCounts,
    /// Ticks per friction verdict among the records received.
    pub verdicts: VerdictCounts,
    pub max_contacts: u32,
    /// Largest force written to the device (N).
    pub max_force: f64,
    /// Largest torque written to the device (N·m).
    pub max_torque: f64,
    /// Largest force rendered, before the safety layer (N).
    pub max_rendered_force: f64,
    /// Largest torque rendered, before the safety layer (N·m).
    pub max_rendered_torque: f64,
    /// The passivity observer's lowest energies and the controller's work.
    pub passivity: PassivitySummary,
    /// Safety trips seen.
    pub safety_trips: u64,
    /// Ticks recorded, and the file.
    pub recorded: Option<(u64, std::path::PathBuf)>,
    /// Datagrams that could not be sent.
    pub send_failures: u64,
    /// Per-tick compute time (ns) of the records received.
    pub compute_time: Histogram<u64>,
    /// The last record received.
    pub last: Option<TickRecord>,
}

impl Default for TelemetryReport {
    fn default() -> Self {
        Self {
            received: 0,
            dropped: 0,
            states: StateCounts::default(),
            verdicts: VerdictCounts::default(),
            max_contacts: 0,
            max_force: 0.0,
            max_torque: 0.0,
            max_rendered_force: 0.0,
            max_rendered_torque: 0.0,
            passivity: PassivitySummary::default(),
            safety_trips: 0,
            recorded: None,
            send_failures: 0,
            compute_time: histogram(),
            last: None,
        }
    }
}

impl TelemetryReport {
    /// Counts one record received: its state, verdict, extremes
    /// and compute time; it becomes [`last`](Self::last). Safety trips and
    /// the recording are the thread's business.
    pub fn add(&mut self, record: &TickRecord) {
        self.received += 1;
        self.states.add(record);
        self.verdicts.add(record.verdict);
        self.max_contacts = self.max_contacts.max(record.contacts);
        self.max_force = self.max_force.max(norm(record.force));
        self.max_torque = self.max_torque.max(norm(record.torque));
        // NaN (a non-finite render) leaves the maxima as they were.
        self.max_rendered_force = self.max_rendered_force.max(norm(record.rendered_force));
        self.max_rendered_torque = self.max_rendered_torque.max(norm(record.rendered_torque));
        self.passivity.add(&record.passivity);
        let compute = record.compute_ns().clamp(1, HISTOGRAM_MAX_NS);
        self.compute_time.saturating_record(compute);
        self.last = Some(*record);
    }
}

/// The passivity observer and controller over the records received.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PassivitySummary {
    /// The lowest energy of the two ports together, the one the
    /// controller keeps from going negative (J).
    pub lowest_total_energy: f64,
    /// The lowest energy of the force port, and of the torque port (J).
    pub lowest_energy: f64,
    pub lowest_rotational_energy: f64,
    /// Ticks the controller added damping in, either port.
    pub damped_ticks: u64,
    /// The largest damping it added (N·s/m), and rotational (N·m·s/rad).
    pub max_damping: f64,
    pub max_rotational_damping: f64,
}

impl PassivitySummary {
    /// Counts one tick's observer and controller.
    pub fn add(&mut self, p: &PassivityRecord) {
        self.lowest_total_energy = self.lowest_total_energy.min(p.total_energy());
        self.lowest_energy = self.lowest_energy.min(p.energy);
        self.lowest_rotational_energy = self.lowest_rotational_energy.min(p.rotational_energy);
        self.damped_ticks += u64::from(p.damping > 0.0 || p.rotational_damping > 0.0);
        self.max_damping = self.max_damping.max(p.damping);
        self.max_rotational_damping = self.max_rotational_damping.max(p.rotational_damping);
    }
}

/// A running telemetry thread, stopped and joined when dropped: it then
/// still drains what is left and finishes the recording.
pub struct TelemetryThread(StoppableThread<io::Result<TelemetryReport>>);

impl TelemetryThread {
    /// Starts draining `consumer`.
    pub fn spawn(
        consumer: TickConsumer<TickRecord>,
        options: TelemetryOptions,
    ) -> io::Result<TelemetryThread> {
        let socket = match options.udp {
            Some(address) => {
                let bind: SocketAddr = if address.is_ipv4() {
                    (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
                } else {
                    (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
                };
                let socket = UdpSocket::bind(bind)?;
                socket.set_nonblocking(true)?;
                Some((socket, address))
            }
            None => None,
        };
        StoppableThread::spawn(ThreadName::Telemetry, move |stop| {
            run(consumer, options, socket, stop)
        })
        .map(TelemetryThread)
    }

    /// Whether the thread has ended, which before [`stop`](Self::stop)
    /// means it panicked.
    pub fn is_finished(&self) -> bool {
        self.0.is_finished()
    }

    /// Drains what is left, finishes the recording and returns the report
    /// (an error if recording failed), or the thread's panic.
    pub fn stop(self) -> Result<io::Result<TelemetryReport>, ThreadPanicked> {
        self.0.stop()
    }
}

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HISTOGRAM_MAX_NS, 3).expect("valid histogram bounds")
}

fn norm(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

/// One datagram: the newest record of a drain, as JSON.
fn datagram(record: &TickRecord, dropped: u64) -> Vec<u8> {
    let device = device_pose(record);
    let tool = tool_pose(record);
    let q = |p: &nalgebra::Isometry3<f64>| {
        let q = p.rotation.quaternion();
        [q.w, q.i, q.j, q.k]
    };
    json!({
        "type": "tick",
        "tick": record.tick,
        "time_s": record.time.as_secs_f64(),
        "device": { "position_m": device.translation.vector.as_slice(), "orientation_wijk": q(&device) },
        "tool": { "position_m": tool.translation.vector.as_slice(), "orientation_wijk": q(&tool) },
        "force_n": record.force,
        "torque_n_m": record.torque,
        "rendered_force_n": record.rendered_force,
        "rendered_torque_n_m": record.rendered_torque,
        "contacts": record.contacts,
        "state": publish::state(record),
        "verdict": publish::verdict(record),
        "quarantined": record.quarantined,
        "wake_latency_us": record.wake_latency_ns as f64 / 1e3,
        "compute_us": record.compute_ns() as f64 / 1e3,
        "physics_sequence": record.physics_sequence,
        "safety_trips": record.safety_trips,
        "faults": {
            "read": record.faults.read, "render": record.faults.render,
            "write": record.faults.write, "solver_failed": record.faults.solver_failed,
            "quarantined": record.faults.quarantined,
        },
        "band_decisions": record.band_decisions,
        "passivity": {
            "energy_j": record.passivity.energy,
            "rotational_energy_j": record.passivity.rotational_energy,
            "damping_n_s_per_m": record.passivity.damping,
            "rotational_damping_n_m_s_per_rad": record.passivity.rotational_damping,
        },
        "local_bodies": record.local_body_count,
        "budget_cut": {
            "unresolved_points": record.budget_cut.unresolved_points,
            "friction_out_of_time": record.budget_cut.friction_out_of_time,
        },
        "dropped": dropped,
    })
    .to_string()
    .into_bytes()
}

/// One datagram summarising wake-up latency since the previous one (µs).
fn latency_datagram(latency: &Histogram<u64>, compute: &Histogram<u64>) -> Vec<u8> {
    let us = |h: &Histogram<u64>, q: f64| h.value_at_quantile(q) as f64 / 1e3;
    json!({
        "type": "latency",
        "samples": latency.len(),
        "wake_latency_us": { "p50": us(latency, 0.5), "p99": us(latency, 0.99), "max": latency.max() as f64 / 1e3 },
        "compute_us": { "p50": us(compute, 0.5), "p99": us(compute, 0.99), "max": compute.max() as f64 / 1e3 },
    })
    .to_string()
    .into_bytes()
}

/// Logs the first friction solver failure and the first quarantined pose
/// the servo counted (from the record's running counts, so that a dropped
/// record hides neither); later ones are counted in the status line, the
/// stream and the summary.
fn log_first_faults(record: &TickRecord, logged: &mut haptic_servo::TickFaults) {
    let faults = &record.faults;
    if faults.solver_failed > 0 && logged.solver_failed == 0 {
        tracing::warn!(
            tick = record.tick,
            "the friction solver failed: the tick slid without friction (further failures are counted, not logged)"
        );
        logged.solver_failed = faults.solver_failed;
    }
    if faults.quarantined > 0 && logged.quarantined == 0 {
        tracing::warn!(
            tick = record.tick,
            "the tool pose came out non-finite and was reset to the handle (further ones are counted, not logged)"
        );
        logged.quarantined = faults.quarantined;
    }
}

/// The control API's side of the telemetry thread: events and tick frames
/// for the stream, and the figures of the live status.
struct Publisher {
    link: ControlLink,
    frame: TickFrame,
    contacts: Vec<ContactPoint>,
    generation: u64,
    events: Vec<(u64, Event)>,
    previous_state: Option<OrNotRendered<FrictionState>>,
    deadline_misses: u64,
    /// Ticks written to the recording in progress.
    recorded: u64,
    /// The recording's contact arrows, kept to be refilled each drain.
    arrows: Vec<ContactArrow>,
}

impl Publisher {
    fn new(link: ControlLink) -> Self {
        let frame = TickFrame {
            environment: link.environment.iter().map(|&(_, pose)| pose).collect(),
            ..TickFrame::default()
        };
        Self {
            link,
            frame,
            contacts: Vec::new(),
            generation: 0,
            events: Vec::new(),
            previous_state: None,
            deadline_misses: 0,
            recorded: 0,
            arrows: Vec::new(),
        }
    }

    /// Appends the newest scene frame to `file` at `time`: the environment
    /// objects' frames, the deformables' surfaces as the physics thread's
    /// newest step left them, and the tool's contacts. The tool's frame is
    /// the tick's `/tf/tool`.
    fn record_scene(&mut self, file: &mut TickFile, time: Duration) -> io::Result<()> {
        let scene = self.link.scene_frames.read();
        let surfaces: Vec<DeformableSurface> = match &mut self.link.deformable_nodes {
            Some(reader) => self
                .link
                .drawing
                .deformables
                .iter()
                .zip(&reader.read().positions)
                .map(|((name, triangles), positions)| DeformableSurface {
                    name,
                    positions,
                    triangles,
                })
                .collect(),
            None => Vec::new(),
        };
        let poses: Vec<(&str, Isometry3<f64>)> = self
            .link
            .drawing
            .objects
            .iter()
            .map(|(frame, entry, built)| {
                let pose = entry.and_then(|e| scene.environment_poses.get(e));
                (frame.as_str(), *pose.unwrap_or(built))
            })
            .collect();
        self.arrows.clear();
        tool_contact_arrows(&scene.contacts, &mut self.arrows);
        let snapshot = SceneSnapshot {
            poses: &poses,
            deformables: &surfaces,
            contacts: &self.arrows,
        };
        file.record_scene(time, &snapshot)
    }

    /// Counts `record`, notes its state change, and publishes its tick
    /// frame if a client wants one.
    fn add(&mut self, record: &TickRecord, dropped: u64) {
        if record.wake_latency_ns + record.compute_ns() > self.link.period_ns {
            self.deadline_misses += 1;
        }
        let state = publish::state(record);
        if let Some(from) = self.previous_state.filter(|&from| from != state) {
            self.events
                .push((record.tick, Event::StateChange { from, to: state }));
        }
        self.previous_state = Some(state);
        if record.generation != self.generation {
            self.generation = record.generation;
            self.link.hub.set_generation(record.generation);
            self.events.push((
                record.tick,
                Event::Parameters {
                    generation: record.generation,
                },
            ));
        }
        let time_s = record.time.as_secs_f64();
        if self.link.hub.wants_tick(time_s) {
            fill_tick_frame(&mut self.frame, record, dropped, self.deadline_misses);
            self.fill_scene();
            self.link.hub.publish_tick(&self.frame, &self.contacts);
        }
    }

    /// The newest scene frame's environment poses and contact points.
    fn fill_scene(&mut self) {
        let scene = self.link.scene_frames.read();
        self.frame.physics_sequence = scene.physics_sequence;
        for (pose, (entry, _)) in self
            .frame
            .environment
            .iter_mut()
            .zip(&self.link.environment)
        {
            if let Some(p) = entry.and_then(|e| scene.environment_poses.get(e)) {
                *pose = publish::pose(p);
            }
        }
        let objects = &self.link.entry_objects;
        self.contacts.clear();
        self.contacts.extend(scene.contacts.iter().map(|c| {
            ContactPoint {
                object: objects
                    .get(usize::from(c.object))
                    .copied()
                    .unwrap_or(u32::MAX),
                position_m: c.position,
                normal: c.normal,
                normal_force_n: c.normal_force,
                friction_force_n: c.friction_force,
                r#static: c.stuck,
            }
        }));
    }

    fn trip(&mut self, record: &TickRecord, cause: TripCause) {
        self.events.push((
            record.tick,
            Event::SafetyTrip {
                cause,
                trips: record.safety_trips,
            },
        ));
    }

    /// Sends the events gathered since the last call.
    fn flush_events(&mut self) {
        self.link.hub.publish_events(&self.events);
        self.events.clear();
    }

    /// The recording in progress.
    fn recording(&self, record: &Option<TickFile>) -> Option<Recording> {
        record.as_ref().map(|file| Recording {
            path: file.path().display().to_string(),
            ticks: self.recorded,
        })
    }

    /// Starts and stops recordings as the control API asks.
    fn serve_commands(
        &mut self,
        record: &mut Option<TickFile>,
        record_error: &mut Option<io::Error>,
        tick: u64,
    ) {
        while let Ok(command) = self.link.commands.try_recv() {
            let (result, reply) = match command {
                TelemetryCommand::StartRecording(path, reply) => {
                    (self.start(record, record_error, path), reply)
                }
                TelemetryCommand::StopRecording(reply) => (self.stop(record, record_error), reply),
            };
            if result.is_ok() {
                let recording = self.recording(record);
                // `GET /v1/recording` answers from the status: it must
                // show the change before the reply does.
                self.link
                    .status
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .recording
                    .clone_from(&recording);
                self.events.push((tick, Event::Recording { recording }));
            }
            let _ = reply.send(result);
        }
    }

    fn start(
        &mut self,
        record: &mut Option<TickFile>,
        record_error: &mut Option<io::Error>,
        path: PathBuf,
    ) -> Result<Recording, ApiError> {
        if let Some(file) = record.as_ref() {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                format!("already recording to {}", file.path().display()),
            ));
        }
        let mut file = TickFile::create(&path)
            .map_err(|e| ApiError::invalid("path", format!("creating {}: {e}", path.display())))?;
        file.set_meshes(&self.link.drawing.meshes);
        tracing::info!(file = %path.display(), "recording started through the control API");
        *record = Some(file);
        *record_error = None;
        self.recorded = 0;
        Ok(self.recording(record).expect("recording"))
    }

    fn stop(
        &mut self,
        record: &mut Option<TickFile>,
        record_error: &mut Option<io::Error>,
    ) -> Result<Recording, ApiError> {
        let file = record
            .take()
            .ok_or_else(|| ApiError::new(ErrorCode::Conflict, "no recording is running"))?;
        let path = file.path().display().to_string();
        if let Some(error) = record_error.take() {
            return Err(ApiError::new(
                ErrorCode::Internal,
                format!("recording to {path} failed: {error}"),
            ));
        }
        let ticks = file
            .finish()
            .map_err(|e| ApiError::new(ErrorCode::Internal, format!("finishing {path}: {e}")))?;
        tracing::info!(file = %path, ticks, "recording stopped through the control API");
        Ok(Recording { path, ticks })
    }

    /// Refreshes the live status.
    fn refresh(
        &self,
        report: &TelemetryReport,
        record: &Option<TickFile>,
        window: (f64, &Histogram<u64>, &Histogram<u64>),
    ) {
        let (rate_hz, compute, latency) = window;
        let us = |h: &Histogram<u64>| Percentiles {
            p50: h.value_at_quantile(0.5) as f64 / 1e3,
            p99: h.value_at_quantile(0.99) as f64 / 1e3,
            max: h.max() as f64 / 1e3,
        };
        let faults = report.last.map(|r| r.faults).unwrap_or_default();
        let states = &report.states;
        let verdicts = FrictionVerdict::ALL
            .into_iter()
            .map(|v| (Rendered(v), report.verdicts.get(v)))
            .chain([(NotRendered, report.verdicts.not_rendered)])
            .collect();
        let mut status = self.link.status.lock().unwrap_or_else(|e| e.into_inner());
        *status = Status {
            ticks: report.last.map_or(0, |r| r.tick + 1),
            rate_hz,
            compute_us: us(compute),
            wake_latency_us: us(latency),
            deadline_misses: self.deadline_misses,
            dropped_records: report.dropped,
            safety_trips: report.safety_trips,
            faults: Faults {
                read: faults.read,
                render: faults.render,
                write: faults.write,
                solver_failed: faults.solver_failed,
                quarantined: faults.quarantined,
            },
            states: [
                (Rendered(FrictionState::Free), states.free),
                (Rendered(FrictionState::Sliding), states.sliding),
                (Rendered(FrictionState::Static), states.r#static),
                (NotRendered, states.not_rendered),
            ]
            .into_iter()
            .collect(),
            verdicts,
            generation: self.generation,
            recording: self.recording(record),
            ..status.clone()
        };
    }
}

fn run(
    mut consumer: TickConsumer<TickRecord>,
    mut options: TelemetryOptions,
    socket: Option<(UdpSocket, SocketAddr)>,
    stop: &AtomicBool,
) -> io::Result<TelemetryReport> {
    options.schedule.apply("telemetry");
    let mut pacer = Pacer::new(options.rate_hz);
    let status_period = Duration::from_secs_f64(1.0 / options.status_rate_hz);
    let mut report = TelemetryReport::default();
    // Since the last status refresh or latency datagram.
    let mut window_latency = histogram();
    let mut window_compute = histogram();
    let mut window_ticks = 0u64;
    let mut window_started = Instant::now();
    let mut record_error: Option<io::Error> = None;
    // Records received when the last tick datagram was sent.
    let mut sent_up_to = 0;
    // Faults already logged; later ones are counted, not logged.
    let mut logged = haptic_servo::TickFaults::default();
    let mut publisher = Publisher::new(options.link);
    if let Some(file) = options.record.as_mut() {
        file.set_meshes(&publisher.link.drawing.meshes);
    }
    loop {
        // Acquire: once the stop is seen, so is everything the servo (joined
        // before the stop) pushed, and the drain below takes it all.
        let stopping = stop.load(Ordering::Acquire);
        let dropped = consumer.dropped();
        for record in consumer.drain() {
            report.add(&record);
            publisher.add(&record, dropped);
            if record.safety_trips > report.safety_trips {
                match record.last_trip {
                    Some(TripCause::Shutdown) => {
                        tracing::info!(tick = record.tick, "output ramping to zero for shutdown")
                    }
                    Some(cause) => {
                        publisher.trip(&record, cause);
                        tracing::warn!(
                            tick = record.tick,
                            ?cause,
                            trips = record.safety_trips,
                            "safety trip: output forced to zero"
                        )
                    }
                    None => {}
                }
                report.safety_trips = record.safety_trips;
            }
            log_first_faults(&record, &mut logged);
            let compute = record.compute_ns().clamp(1, HISTOGRAM_MAX_NS);
            window_compute.saturating_record(compute);
            window_latency.saturating_record(record.wake_latency_ns.clamp(1, HISTOGRAM_MAX_NS));
            window_ticks += 1;
            if let (Some(file), None) = (options.record.as_mut(), &record_error) {
                match record_tick(file, &record, &recorded_tick(&record)) {
                    Ok(()) => publisher.recorded += 1,
                    Err(error) => {
                        tracing::error!(file = %file.path().display(), %error, "recording failed; recording stops");
                        record_error = Some(error);
                    }
                }
            }
        }
        let fresh = report.received > sent_up_to;
        if let (Some(file), None, Some(last), true) =
            (options.record.as_mut(), &record_error, &report.last, fresh)
        {
            if file.has_scene() {
                if let Err(error) = publisher.record_scene(file, last.time) {
                    tracing::error!(file = %file.path().display(), %error, "recording failed; recording stops");
                    record_error = Some(error);
                }
            }
        }
        report.dropped = consumer.dropped();
        let tick = report.last.map_or(0, |r| r.tick);
        publisher.serve_commands(&mut options.record, &mut record_error, tick);
        publisher.flush_events();
        sent_up_to = report.received;
        if let (Some((socket, address)), Some(last), true) = (&socket, &report.last, fresh) {
            if let Err(error) = socket.send_to(&datagram(last, report.dropped), address) {
                if report.send_failures == 0 {
                    tracing::warn!(%address, %error, "telemetry datagrams cannot be sent; counting failures");
                }
                report.send_failures += 1;
            }
        }
        let window = window_started.elapsed();
        if window >= status_period || stopping {
            if let Some((socket, address)) = &socket {
                if window_ticks > 0
                    && socket
                        .send_to(&latency_datagram(&window_latency, &window_compute), address)
                        .is_err()
                {
                    if report.send_failures == 0 {
                        tracing::warn!(%address, "telemetry datagrams cannot be sent; counting failures");
                    }
                    report.send_failures += 1;
                }
            }
            if let (Some(status), Some(last)) = (options.status.as_mut(), &report.last) {
                status.draw(&StatusSnapshot {
                    rate_hz: window_ticks as f64 / window.as_secs_f64(),
                    compute_p50: Duration::from_nanos(window_compute.value_at_quantile(0.5)),
                    compute_p99: Duration::from_nanos(window_compute.value_at_quantile(0.99)),
                    contacts: last.contacts,
                    force: norm(last.force),
                    state: publish::verdict(last),
                    dropped: report.dropped,
                    safety_trips: report.safety_trips,
                    faults: last.faults.total(),
                });
            }
            publisher.refresh(
                &report,
                &options.record,
                (
                    window_ticks as f64 / window.as_secs_f64(),
                    &window_compute,
                    &window_latency,
                ),
            );
            window_latency.reset();
            window_compute.reset();
            window_ticks = 0;
            window_started = Instant::now();
        }
        if stopping {
            break;
        }
        pacer.wait();
    }
    if let Some(status) = options.status.as_mut() {
        status.clear();
    }
    if let Some(file) = options.record.take() {
        let path = file.path().to_owned();
        if let Some(error) = record_error {
            return Err(io::Error::new(
                error.kind(),
                format!("recording to {}: {error}", path.display()),
            ));
        }
        let ticks = file
            .finish()
            .map_err(|e| io::Error::new(e.kind(), format!("finishing {}: {e}", path.display())))?;
        report.recorded = Some((ticks, path));
    }
    Ok(report)
}
