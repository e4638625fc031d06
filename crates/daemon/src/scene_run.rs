//! A scene running, in three steps: [`RunningScene::start`] builds the
//! scene if it is not built yet, opens the device, wires the hand-off
//! channels and starts the telemetry, physics and servo threads;
//! [`RunningScene::supervise`] waits for a reason to stop; and
//! [`RunningScene::stop`] stops the threads in order — the servo first,
//! ramping the force to zero; then physics; then telemetry, which drains
//! the last records and finishes the recording — and sums the scene up.
//! The running scene is a guard: dropped instead of stopped (an early
//! return, a panic), it stops its threads in the same order.

use crate::control::{Attached, DaemonControl, SceneRequest};
use crate::device::{self, AnyDevice, Pacing};
use crate::error::{io, RunError};
use crate::lifecycle::{ThreadName, ThreadPanicked};
use crate::physics::{DeformableNodes, PhysicsOptions, PhysicsThread, PhysicsWorld, SurfaceStream};
use crate::publish;
use crate::realtime::{keep_cpus_awake, lock_memory, schedule};
use crate::recording::scene_meshes;
use crate::scene::{BuiltScene, EntrySource};
use crate::signals::{Shutdown, ShutdownRequest};
use crate::status::StatusLine;
use crate::summary::{EndReason, RunSummary};
use crate::telemetry::{ControlLink, SceneDrawing, TelemetryOptions, TelemetryThread};
use haptic_config::ServoScene;
use haptic_devices::AtEnd;
use haptic_handoff::{Latest, TickStream};
use haptic_recording::{object_frame, TickFile};
use haptic_server::SceneInfo;
use haptic_servo::{PhysicsSnapshot, ServoConfig, ServoHandle, ServoThread, ServoTick, ToolState};
use std::fs::File;
use std::path::Path;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// Servo records the telemetry ring holds: 4 s at 1 kHz, so that a
/// telemetry thread delayed by the machine for seconds loses nothing.
const TELEMETRY_CAPACITY: usize = 4096;

/// How often supervision checks for signals and for the threads ending.
const POLL: Duration = Duration::from_millis(5);

/// Status-line refreshes per second, when standard error is a terminal.
const STATUS_RATE_HZ: f64 = 4.0;

/// What every scene of a run shares.
pub(crate) struct RunContext<'a> {
    pub shutdown: &'a Shutdown,
    pub control: &'a DaemonControl,
    /// What an emulated device does at the end of its trajectory.
    pub at_end: AtEnd,
}

/// Advances the physics world by a step of `dt` under the tool's state.
pub(crate) type PhysicsStep = Box<dyn FnMut(&mut PhysicsWorld, &ToolState, f64) + Send>;

/// Spawns the servo thread running a tick, with what it runs once set up.
pub(crate) type SpawnServo =
    fn(ServoConfig, ServoTick<AnyDevice>, fn()) -> std::io::Result<ServoHandle<AnyDevice>>;

/// The physics step and the servo's spawn a scene starts its threads
/// with: the daemon's own by default; tests swap either to make its
/// thread fail.
pub(crate) struct ThreadHooks {
    pub physics_step: PhysicsStep,
    pub spawn_servo: SpawnServo,
}

impl Default for ThreadHooks {
    fn default() -> Self {
        Self {
            physics_step: Box::new(PhysicsWorld::step),
            spawn_servo: ServoThread::spawn_with,
        }
    }
}

/// How starting a scene came out; moved once per scene, so its size is of
/// no concern.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Started<'a> {
    Running(RunningScene<'a>),
    /// A signal arrived while the scene was built: no thread started.
    Stopped(RunSummary),
}

/// Why supervision ended; moved once per scene, so its size is of no
/// concern.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Ending {
    /// A signal, the device's trajectory or the duration ended the run.
    Reason(EndReason),
    /// The control API loaded another scene.
    Replaced(SceneRequest),
    /// The physics or telemetry thread ended by itself.
    ThreadEnded,
}

/// How one scene's run ended; moved once per scene, so its size is of no
/// concern.
#[allow(clippy::large_enum_variant)]
pub(crate) enum SceneEnd {
    /// The daemon stops.
    Stopped(RunSummary),
    /// The control API loaded another scene; this one was stopped.
    Replaced(SceneRequest),
    /// A scene loaded through the control API could not start; the
    /// request was told why.
    Refused,
}

/// The control API's hold on a running scene, let go when dropped.
struct Attachment<'a>(&'a DaemonControl);

impl Drop for Attachment<'_> {
    fn drop(&mut self) {
        self.0.detach();
    }
}

/// A scene's threads, running. Dropped, it stops them in the order of its
/// fields: the control API lets go of the scene, the servo stops (ramping
/// its force to zero), then the physics thread, then the telemetry
/// thread, which drains the last records and finishes the recording.
pub(crate) struct RunningScene<'a> {
    attachment: Attachment<'a>,
    servo: ServoHandle<AnyDevice>,
    physics: PhysicsThread,
    telemetry: TelemetryThread,
    /// The scene as the control API describes it.
    info: SceneInfo,
    rate_hz: f64,
    /// Holds the CPUs' wake-up latency down while the scene runs.
    _awake: Option<File>,
}

/// What the signals received so far end the run with, if anything.
fn requested_end(shutdown: &Shutdown) -> Option<EndReason> {
    match shutdown.request() {
        ShutdownRequest::None => None,
        ShutdownRequest::Stop(signal) => Some(EndReason::Signal(signal)),
        ShutdownRequest::Abort(signal) => Some(EndReason::Aborted(signal)),
    }
}

impl<'a> RunningScene<'a> {
    /// Starts `config`'s scene, its geometry `built` already or not,
    /// recording every tick to `record`: opens the device, wires the
    /// hand-off channels, starts the telemetry, physics and servo threads
    /// with `hooks`, and attaches the control API to them. A signal
    /// received while the scene was built (which cannot be interrupted)
    /// stops it before any force is written. Should a thread fail to
    /// start, the ones started already stop.
    pub fn start(
        run: &RunContext<'a>,
        config: &ServoScene,
        built: Option<BuiltScene>,
        record: Option<&Path>,
        hooks: ThreadHooks,
    ) -> Result<Started<'a>, RunError> {
        if !config.deformables().is_empty() {
            tracing::info!(
                deformables = config.deformables().len(),
                "the physics thread steps the deformables with the rigid world; the tool touches their surfaces near it"
            );
        }
        let mut scene = match built {
            Some(scene) => scene,
            None => {
                tracing::info!(objects = config.objects().len(), "building the scene");
                BuiltScene::build(config)?
            }
        };
        tracing::info!(
            tool = %scene.tool,
            environment = scene.environment.len(),
            build_s = scene.build_time.as_secs_f64(),
            "scene built"
        );
        let safety = device::open(config, Pacing::RealTime, run.at_end)?;
        let device_name = haptic_devices::HapticDevice::capabilities(&safety)
            .name
            .clone();
        tracing::info!(device = %device_name, "device opened");
        if let Some(reason) = requested_end(run.shutdown) {
            tracing::info!(reason = %reason, "stopped during start-up, before the servo started");
            return Ok(Started::Stopped(RunSummary::servo_only(
                reason,
                config.servo_rate().hz(),
                Default::default(),
            )));
        }
        let awake = config
            .threads()
            .keep_cpus_awake
            .then(keep_cpus_awake)
            .flatten();
        let world = std::mem::take(&mut scene.physics);
        let environment_poses = scene.environment_poses();

        let (tool_writer, tool_reader) =
            Latest::new(&ToolState::new(environment_poses.len())).split();
        let (physics_writer, physics_reader) =
            Latest::new(&PhysicsSnapshot::new(environment_poses.clone())).split();
        let (producer, consumer) = TickStream::new(TELEMETRY_CAPACITY).split();

        let record = match record {
            Some(path) => {
                Some(TickFile::create(path).map_err(io(format!("creating {}", path.display())))?)
            }
            None => None,
        };
        let hub = run.control.hub();
        hub.set_generation(0);
        hub.set_scene(publish::announcement(
            config,
            &scene.display_meshes,
            world.deformables(),
        ));
        let surfaces = (!world.deformables().is_empty())
            .then(|| SurfaceStream::new(hub.clone(), world.deformables()));
        // The deformables' nodes, from the physics thread to the
        // recording.
        let (node_writer, node_reader) = if world.deformables().is_empty() {
            (None, None)
        } else {
            let (writer, reader) = Latest::new(&DeformableNodes::new(world.deformables())).split();
            (Some(writer), Some(reader))
        };
        let (commands, command_receiver) = mpsc::channel();
        let status = Arc::new(Mutex::new(haptic_server::Status::default()));
        // The hello order (the config's, less the tool) and the cycle's
        // order of the environment objects, for the stream; each object's
        // pose is its body frame's, as its display mesh.
        let entry_objects: Vec<u32> = scene
            .environment
            .iter()
            .map(|e| match e.source {
                EntrySource::Object(index) => index as u32,
                EntrySource::Deformable(_) => u32::MAX,
            })
            .collect();
        let environment: Vec<(Option<usize>, _)> = config
            .objects()
            .iter()
            .enumerate()
            .filter(|(_, object)| !object.tool)
            .map(|(index, object)| {
                let entry = scene
                    .environment
                    .iter()
                    .position(|e| e.source == EntrySource::Object(index));
                let pose = entry.map_or_else(|| object.pose(), |e| scene.environment[e].pose);
                (entry, publish::pose(&pose))
            })
            .collect();
        let drawing = SceneDrawing {
            meshes: scene_meshes(config, &scene.display_meshes),
            objects: config
                .objects()
                .iter()
                .filter(|object| !object.tool)
                .zip(&environment)
                .map(|(object, &(entry, _))| {
                    let built = entry.map_or_else(|| object.pose(), |e| scene.environment[e].pose);
                    (object_frame(&object.name), entry, built)
                })
                .collect(),
            deformables: world
                .deformables()
                .iter()
                .map(|b| (b.model.name.clone(), b.model.surface.clone()))
                .collect(),
        };
        // The telemetry thread reads the scene frames; the control API
        // keeps the parameter updates.
        let (tick, scene_control, scene_frames) =
            scene.into_servo_tick(safety, physics_reader, tool_writer, producer);
        let telemetry = TelemetryThread::spawn(
            consumer,
            TelemetryOptions {
                rate_hz: config.threads().telemetry.rate_hz,
                schedule: schedule(&config.threads().telemetry),
                record,
                udp: config
                    .telemetry()
                    .enabled
                    .then_some(config.telemetry().address),
                status: StatusLine::on_terminal(),
                status_rate_hz: STATUS_RATE_HZ,
                link: ControlLink {
                    hub: hub.clone(),
                    commands: command_receiver,
                    status: status.clone(),
                    scene_frames,
                    entry_objects,
                    environment,
                    period_ns: config.servo_rate().period().as_nanos() as u64,
                    drawing,
                    deformable_nodes: node_reader,
                },
            },
        )
        .map_err(io("starting the telemetry thread"))?;
        let physics = PhysicsThread::spawn(
            PhysicsOptions {
                rate_hz: config.threads().physics.rate_hz,
                schedule: schedule(&config.threads().physics),
                world,
                surfaces,
                nodes: node_writer,
            },
            tool_reader,
            physics_writer,
            hooks.physics_step,
        )
        .map_err(io("starting the physics thread"))?;

        let rate_hz = config.servo_rate().hz();
        let servo_config = ServoConfig {
            rate: config.servo_rate(),
            schedule: schedule(&config.threads().servo),
        };
        run.shutdown.servo_started();
        // Memory is locked on the servo thread once its own buffers exist,
        // so that with a finite RLIMIT_MEMLOCK they are among the pages
        // locked. Should the spawn fail, the physics and telemetry
        // threads' guards stop them, and the recording is finished.
        let servo = (hooks.spawn_servo)(servo_config, tick, lock_memory)
            .map_err(io("starting the servo thread"))?;
        tracing::info!(rate_hz, "running; SIGINT or SIGTERM stops");
        let info = publish::scene_info(config);
        run.control.attach(Attached {
            scene: config.clone(),
            info: info.clone(),
            device: device_name,
            commands,
            status,
            scene_control,
            generation: 0,
            pending: None,
        });
        Ok(Started::Running(RunningScene {
            attachment: Attachment(run.control),
            servo,
            physics,
            telemetry,
            info,
            rate_hz,
            _awake: awake,
        }))
    }

    /// The scene as the control API describes it.
    pub fn info(&self) -> &SceneInfo {
        &self.info
    }

    /// Waits for a reason to stop: a signal, the end of the device's
    /// trajectory, `duration` passing, a scene loaded through the control
    /// API, or the physics or telemetry thread ending by itself.
    pub fn supervise(&self, run: &RunContext, duration: Option<Duration>) -> Ending {
        let started = Instant::now();
        loop {
            if let Some(reason) = requested_end(run.shutdown) {
                return Ending::Reason(reason);
            }
            if self.servo.is_finished() {
                return Ending::Reason(EndReason::DeviceEnded);
            }
            if self.physics.is_finished() || self.telemetry.is_finished() {
                return Ending::ThreadEnded;
            }
            if duration.is_some_and(|d| started.elapsed() >= d) {
                return Ending::Reason(EndReason::Duration);
            }
            if let Some(request) = run.control.take_scene_request() {
                return Ending::Replaced(request);
            }
            std::thread::sleep(POLL);
        }
    }

    /// Stops the threads in order for `ending` and sums the scene up. A
    /// second signal (before or during the servo's ramp) stops the servo
    /// at once with zero force and ends the run as
    /// [`EndReason::Aborted`], with the servo's figures only. A thread
    /// that panicked is the error, the first in servo, physics, telemetry
    /// order, once the others stopped (the recording keeps every tick up
    /// to the panic); one that ended by itself is
    /// [`RunError::ThreadEnded`].
    pub fn stop(self, shutdown: &Shutdown, ending: Ending) -> Result<SceneEnd, RunError> {
        let RunningScene {
            attachment,
            servo,
            physics,
            telemetry,
            info: _,
            rate_hz,
            _awake,
        } = self;
        drop(attachment);
        let (mut reason, replacement) = match ending {
            Ending::Reason(reason) => (Some(reason), None),
            Ending::Replaced(request) => (Some(EndReason::SceneReplaced), Some(request)),
            Ending::ThreadEnded => (None, None),
        };
        if let Some(EndReason::Aborted(_)) = reason {
            servo.abort();
        } else {
            servo.request_stop();
            match &reason {
                Some(reason) => {
                    tracing::info!(reason = %reason, "stopping: ramping the output to zero")
                }
                None => tracing::error!("a thread ended early: ramping the output to zero"),
            }
            // A second signal during the ramp aborts it.
            while !servo.is_finished() {
                if let ShutdownRequest::Abort(signal) = shutdown.request() {
                    servo.abort();
                    reason = Some(EndReason::Aborted(signal));
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        let servo = servo
            .join()
            .map_err(|payload| ThreadPanicked::new(ThreadName::Servo, payload));
        if let Some(reason @ EndReason::Aborted(_)) = reason {
            let (stats, tick) = servo?;
            let force = tick.safety().commanded().force.norm();
            tracing::warn!(
                ticks = stats.ticks,
                force_n = force,
                "aborted: output zeroed, exiting"
            );
            // A thread that ended before the abort panicked: that is the
            // error. The others stop as their guards drop.
            if physics.is_finished() {
                physics.stop()?;
            }
            if telemetry.is_finished() {
                drop(telemetry.stop()?);
            }
            return Ok(SceneEnd::Stopped(RunSummary::servo_only(
                reason, rate_hz, stats,
            )));
        }
        // The other threads stop even after a servo panic, so the recording
        // keeps everything up to it.
        let ended = if physics.is_finished() {
            ThreadName::Physics
        } else {
            ThreadName::Telemetry
        };
        let physics = physics.stop();
        let telemetry = telemetry.stop();
        let (stats, tick) = servo?;
        let (physics, telemetry) = (physics?, telemetry?);
        let reason = match reason {
            Some(EndReason::DeviceEnded) if tick.device_lost() => {
                tracing::error!(
                    "the device was lost; [device] on_disconnect = \"stop\": the run ends"
                );
                Some(EndReason::DeviceLost)
            }
            reason => reason,
        };
        let Some(reason) = reason else {
            return Err(RunError::ThreadEnded(ended));
        };
        let summary = RunSummary::new(reason, rate_hz, stats, telemetry, physics);
        match replacement {
            Some(request) => {
                tracing::info!(
                    ticks = summary.servo.ticks,
                    deadline_misses = summary.servo.overruns,
                    "scene replaced"
                );
                Ok(SceneEnd::Replaced(request))
            }
            None => Ok(SceneEnd::Stopped(summary)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use haptic_config::{Overrides, Scene};
    use haptic_server::{Control, StreamHub};
    use std::path::PathBuf;
    use std::sync::MutexGuard;

    /// One scene at a time, so that the threads each test sees are its own.
    static SCENES: Mutex<()> = Mutex::new(());

    fn config_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config")
    }

    /// One scene at a time of push-block.toml, recorded.
    struct Fixture {
        _one: MutexGuard<'static, ()>,
        _dir: tempfile::TempDir,
        record: PathBuf,
        config: ServoScene,
        shutdown: Shutdown,
        control: DaemonControl,
    }

    impl Fixture {
        fn new() -> Self {
            Self::of(&config_dir().join("push-block.toml"))
        }

        /// One scene at a time of `scene`, recorded.
        fn of(scene: &Path) -> Self {
            let one = SCENES.lock().unwrap_or_else(|e| e.into_inner());
            let dir = tempfile::tempdir().unwrap();
            let record = dir.path().join("ticks.csv");
            Self {
                _one: one,
                config: ServoScene::new(Scene::load(scene, &Overrides::default()).unwrap())
                    .unwrap(),
                shutdown: Shutdown::install().unwrap(),
                control: DaemonControl::new(StreamHub::new(), Overrides::default()),
                _dir: dir,
                record,
            }
        }

        fn context(&self) -> RunContext<'_> {
            RunContext {
                shutdown: &self.shutdown,
                control: &self.control,
                at_end: AtEnd::Error,
            }
        }

        /// Starts the scene with `hooks`, recording to `self.record`.
        fn start(&self, hooks: ThreadHooks) -> Result<RunningScene<'_>, RunError> {
            match RunningScene::start(
                &self.context(),
                &self.config,
                None,
                Some(&self.record),
                hooks,
            )? {
                Started::Running(scene) => Ok(scene),
                Started::Stopped(_) => panic!("stopped during start-up without a signal"),
            }
        }
    }

    /// Names of this process's threads that belong to a scene.
    fn scene_threads() -> Vec<String> {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
            .map(|name| name.trim().to_owned())
            .filter(|name| name.starts_with("haptic-"))
            .collect()
    }

    /// Every tick up to the end of the servo's ramp is recorded, in order,
    /// the last at zero force.
    fn assert_recording_complete(record: &Path) {
        let ticks = haptic_recording::load_recording(record).unwrap();
        assert!(ticks.len() > 100, "{} ticks", ticks.len());
        assert!(ticks.windows(2).all(|w| w[1].tick == w[0].tick + 1));
        assert_eq!(ticks.last().unwrap().wrench.force.norm(), 0.0);
    }

    #[test]
    fn a_physics_panic_is_an_error_and_the_recording_is_complete() {
        let fixture = Fixture::new();
        let mut steps = 0;
        let step = move |world: &mut PhysicsWorld, tool: &ToolState, dt: f64| {
            steps += 1;
            assert!(steps < 100, "injected physics failure");
            world.step(tool, dt);
        };
        let started = Instant::now();
        let scene = fixture
            .start(ThreadHooks {
                physics_step: Box::new(step),
                ..ThreadHooks::default()
            })
            .unwrap();
        let ending = scene.supervise(&fixture.context(), Some(Duration::from_secs(30)));
        assert!(matches!(ending, Ending::ThreadEnded));
        let result = scene.stop(&fixture.shutdown, ending);
        let Err(RunError::ThreadPanicked(panicked)) = result else {
            panic!("expected a thread panic, got {:?}", result.err());
        };
        assert_eq!(panicked.thread, ThreadName::Physics);
        assert!(panicked.message.contains("injected physics failure"));
        // The panic ended the run, long before its duration.
        assert!(started.elapsed() < Duration::from_secs(20));
        assert_eq!(scene_threads(), Vec::<String>::new());
        assert_recording_complete(&fixture.record);
    }

    #[test]
    fn a_servo_that_cannot_start_stops_the_other_threads() {
        let fixture = Fixture::new();
        // Held by the physics step until its thread ends.
        let alive = Arc::new(());
        let held = Arc::clone(&alive);
        let step = move |world: &mut PhysicsWorld, tool: &ToolState, dt: f64| {
            let _ = &held;
            world.step(tool, dt);
        };
        let result = fixture.start(ThreadHooks {
            physics_step: Box::new(step),
            spawn_servo: |_, _, _| Err(std::io::Error::other("no thread for the servo")),
        });
        let Err(RunError::Io { what, .. }) = result else {
            panic!("expected the servo's spawn error, got {:?}", result.err());
        };
        assert_eq!(what, "starting the servo thread");
        assert_eq!(Arc::strong_count(&alive), 1, "the physics thread runs on");
        assert_eq!(scene_threads(), Vec::<String>::new());
        assert!(haptic_recording::load_recording(&fixture.record)
            .unwrap()
            .is_empty());
    }

    /// An MCAP recording of a run draws its scene for Foxglove: the
    /// objects' meshes in their frames, the environment's frames as the
    /// physics thread moves them, and the tool's contacts as arrows once
    /// the sphere reaches the block (1.3 s in).
    #[test]
    fn an_mcap_recording_draws_the_scene_s_meshes_frames_and_contacts() {
        use haptic_recording::{SCENE_CONTACTS_TOPIC, SCENE_MESHES_TOPIC, SCENE_TRANSFORMS_TOPIC};
        use serde_json::Value;
        use std::collections::BTreeMap;

        let mut fixture = Fixture::new();
        fixture.record = fixture.record.with_extension("mcap");
        let scene = fixture.start(ThreadHooks::default()).unwrap();
        std::thread::sleep(Duration::from_millis(2200));
        drop(scene);
        assert_recording_complete(&fixture.record);
        let ticks = haptic_recording::load_recording(&fixture.record).unwrap();
        let bytes = std::fs::read(&fixture.record).unwrap();
        let mut topics: BTreeMap<String, Vec<(u64, Value)>> = BTreeMap::new();
        let mut validators = BTreeMap::new();
        for message in mcap::MessageStream::new(&bytes).unwrap() {
            let message = message.unwrap();
            let schema = message.channel.schema.as_ref().unwrap();
            let validator = validators.entry(schema.name.clone()).or_insert_with(|| {
                let schema: Value = serde_json::from_slice(&schema.data).unwrap();
                jsonschema::validator_for(&schema).unwrap()
            });
            let value: Value = serde_json::from_slice(&message.data).unwrap();
            assert!(validator.is_valid(&value), "{}", message.channel.topic);
            let topic = message.channel.topic.clone();
            topics
                .entry(topic)
                .or_default()
                .push((message.log_time, value));
        }

        let meshes = &topics[SCENE_MESHES_TOPIC];
        assert_eq!(meshes.len(), 1);
        assert_eq!(meshes[0].0, ticks[0].time.as_nanos() as u64);
        let drawn: Vec<(&str, &str, &str)> = meshes[0].1["entities"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                let kind = e["metadata"][0]["value"].as_str().unwrap();
                (
                    e["id"].as_str().unwrap(),
                    e["frame_id"].as_str().unwrap(),
                    kind,
                )
            })
            .collect();
        assert_eq!(
            drawn,
            [
                ("sphere", "tool", "tool"),
                ("block", "objects/block", "movable"),
                ("table", "objects/table", "static"),
            ]
        );

        let transforms = &topics[SCENE_TRANSFORMS_TOPIC];
        // One a drain at 100 Hz: about 220, however loaded the machine.
        assert!(transforms.len() > 50, "{} frames", transforms.len());
        let block_x = |k: usize| {
            let list = transforms[k].1["transforms"].as_array().unwrap();
            let frames: Vec<&str> = list
                .iter()
                .map(|t| t["child_frame_id"].as_str().unwrap())
                .collect();
            assert_eq!(frames, ["objects/block", "objects/table"]);
            assert_eq!(list[1]["translation"]["z"], -0.035);
            list[0]["translation"]["x"].as_f64().unwrap()
        };
        // Where it was built, but for the physics thread's first steps.
        assert!((block_x(0) - 0.065).abs() < 1e-4, "{}", block_x(0));
        assert!(block_x(transforms.len() - 1) >= block_x(0) - 1e-6);
        let (first, last) = (ticks[0].time.as_nanos() as u64, ticks.last().unwrap().time);
        assert!(transforms
            .iter()
            .all(|(t, _)| *t >= first && *t <= last.as_nanos() as u64));

        // The sphere pushes the block: arrows.
        assert!(ticks.iter().filter(|t| t.contacts > 0).count() > 100);
        let contacts = &topics[SCENE_CONTACTS_TOPIC];
        let arrows = contacts
            .iter()
            .filter_map(|(_, update)| update["entities"][0]["arrows"].as_array())
            .find(|arrows| !arrows.is_empty())
            .expect("contact arrows");
        assert!(arrows.len() <= haptic_recording::MAX_CONTACT_ARROWS);
        for arrow in arrows {
            // The block pushes the sphere back, along −x; green while the
            // contact sticks, orange while it slides.
            let o = &arrow["pose"]["orientation"];
            let f = |v: &Value| v.as_f64().unwrap();
            let q = nalgebra::UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(
                f(&o["w"]),
                f(&o["x"]),
                f(&o["y"]),
                f(&o["z"]),
            ));
            assert!((q * nalgebra::Vector3::x()).x < -0.5, "{arrow}");
            let green = (f(&arrow["color"]["g"]) - 0.8).abs() < 1e-12;
            let orange = (f(&arrow["color"]["g"]) - 0.6).abs() < 1e-12;
            assert!(green || orange, "{arrow}");
        }
    }

    /// A 11×11-node cloth falling freely under gravity (the ground far
    /// below, out of reach).
    const FALLING_CLOTH: &str = r#"
[[objects]]
name = "probe"
shape = { kind = "sphere", radius_m = 0.01 }
role = "point_shell"
tool = true
position_m = [0.0, 0.0, 1.0]
shell_points = 100

[[objects]]
name = "ground"
shape = { kind = "box", half_extents_m = [0.3, 0.3, 0.05] }
role = "field"
position_m = [0.0, 0.0, -20.0]
field_resolution = 32

[threads.physics]
rate_hz = 50

[[deformables]]
name = "cloth"
shape = { kind = "cloth", nodes_x = 11, nodes_y = 11, width = 0.2, depth = 0.2 }
position_m = [0.0, 0.0, 0.35]
density = 0.2
paradigm = { kind = "mass_spring", stiffness = 1.0, damping = 0.0, integration = "implicit", iterations = 10, tolerance = 1e-3 }
material = { friction = 0.4, thickness = 0.004 }

[device]
kind = "simulated"
workspace_offset_m = [0.0, 0.0, 1.0]

[device.motion]
segments = [{ type = "hold", duration_s = 10.0 }]
"#;

    /// An MCAP recording of a run with a deformable draws its surface as
    /// the physics thread steps it: every frame the cloth's 121 nodes and
    /// 200 triangles, the nodes lower at the end than at the start.
    #[test]
    fn an_mcap_recording_draws_the_deformables_as_they_move() {
        use haptic_recording::SCENE_DEFORMABLES_TOPIC;
        use serde_json::Value;

        let dir = tempfile::tempdir().unwrap();
        let scene = dir.path().join("falling-cloth.toml");
        std::fs::write(&scene, FALLING_CLOTH).unwrap();
        let mut fixture = Fixture::of(&scene);
        fixture.record = fixture.record.with_extension("mcap");
        let running = fixture.start(ThreadHooks::default()).unwrap();
        // A loaded machine's debug build steps a tenth of real time or
        // less: 0.15 s of fall takes the cloth 10 cm down.
        std::thread::sleep(Duration::from_millis(2500));
        drop(running);
        let bytes = std::fs::read(&fixture.record).unwrap();
        let mut surfaces: Vec<Value> = Vec::new();
        for message in mcap::MessageStream::new(&bytes).unwrap() {
            let message = message.unwrap();
            if message.channel.topic == SCENE_DEFORMABLES_TOPIC {
                surfaces.push(serde_json::from_slice(&message.data).unwrap());
            }
        }
        // One a drain at 100 Hz: about 250, however loaded the machine.
        assert!(surfaces.len() > 10, "{} frames", surfaces.len());
        let nodes = |update: &Value| -> Vec<[f64; 3]> {
            let entities = update["entities"].as_array().unwrap();
            assert_eq!(entities.len(), 1);
            assert_eq!(entities[0]["id"], "cloth");
            assert_eq!(entities[0]["frame_id"], "world");
            let list = &entities[0]["triangles"][0];
            assert_eq!(list["indices"].as_array().unwrap().len(), 3 * 200);
            let points = list["points"].as_array().unwrap();
            assert_eq!(points.len(), 121);
            points
                .iter()
                .map(|p| ["x", "y", "z"].map(|c| p[c].as_f64().unwrap()))
                .collect()
        };
        let drawn: Vec<Vec<[f64; 3]>> = surfaces.iter().map(nodes).collect();
        let (first, last) = (&drawn[0], drawn.last().unwrap());
        // The first frame is the cloth as built, fallen as one however
        // late the recording began: flat, 0.2 m wide, not above 0.35 m.
        let height = first[0][2];
        assert!(
            height <= 0.35 + 1e-9 && first.iter().all(|p| (p[2] - height).abs() < 1e-6),
            "{first:?}"
        );
        let (low, high) = first.iter().fold((f64::MAX, f64::MIN), |(lo, hi), p| {
            (lo.min(p[0]), hi.max(p[0]))
        });
        assert!((high - low - 0.2).abs() < 1e-6, "{first:?}");
        // Falling for seconds: well over 10 cm lower.
        for (a, b) in first.iter().zip(last) {
            assert!(b[2] < a[2] - 0.1, "{a:?} → {b:?}");
        }
    }

    #[test]
    fn a_dropped_scene_stops_its_threads_and_finishes_the_recording() {
        let fixture = Fixture::new();
        let scene = fixture.start(ThreadHooks::default()).unwrap();
        assert_eq!(fixture.control.scene().file, scene.info().file);
        assert!(!scene.info().file.is_empty());
        std::thread::sleep(Duration::from_millis(300));
        drop(scene);
        assert_eq!(fixture.control.scene().file, "", "the control API let go");
        assert_eq!(scene_threads(), Vec::<String>::new());
        assert_recording_complete(&fixture.record);
    }
}
