//! A whole daemon run: start the control API's server, build the scene,
//! open the device, start the servo, physics and telemetry threads, wait
//! for a reason to stop, and stop them in order (servo first, ramping the
//! force to zero; then physics; then telemetry, which drains the last
//! records and finishes the recording). A scene loaded through the control
//! API replaces the running one the same way, while the server runs on.

use crate::control::{Attached, DaemonControl, Reply, SceneRequest};
use crate::device::{self, AnyDevice, OpenError, Pacing};
use crate::lifecycle::{ThreadName, ThreadPanicked};
use crate::physics::{PhysicsOptions, PhysicsThread, PhysicsWorld};
use crate::publish;
use crate::recording::TickFile;
use crate::scene::{BuiltScene, SceneBuildError};
use crate::signals::{Shutdown, ShutdownRequest};
use crate::status::StatusLine;
use crate::summary::{EndReason, RunSummary};
use crate::telemetry::{ControlLink, TelemetryOptions, TelemetryThread};
use haptic_config::{Overrides, ServoScene, Thread};
use haptic_devices::AtEnd;
use haptic_handoff::{Latest, TickStream};
use haptic_server::{ApiError, ErrorCode, SceneInfo, Server, ServerConfig, StreamHub};
use haptic_servo::{
    PhysicsSnapshot, ServoConfig, ServoHandle, ServoThread, ServoTick, ThreadSchedule, ToolState,
};
use std::path::PathBuf;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// Servo records the telemetry ring holds: 4 s at 1 kHz, so that a
/// telemetry thread delayed by the machine for seconds loses nothing.
const TELEMETRY_CAPACITY: usize = 4096;

/// How often the main thread checks for signals and for the servo ending.
const POLL: Duration = Duration::from_millis(5);

/// Status-line refreshes per second, when standard error is a terminal.
const STATUS_RATE_HZ: f64 = 4.0;

/// Everything a run needs besides the scene.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Record every tick of the first scene to this file.
    pub record: Option<PathBuf>,
    /// Stop after this long.
    pub duration: Option<Duration>,
    /// Hold the emulator's last sample after its trajectory ends, instead
    /// of ending the run.
    pub hold_at_end: bool,
    /// The command line's overrides, applied to the scenes loaded through
    /// the control API too.
    pub overrides: Overrides,
    /// Where to write the server's TCP port, atomically, once it is bound.
    pub port_file: Option<PathBuf>,
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

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Scene(#[from] SceneBuildError),
    #[error(transparent)]
    Device(#[from] OpenError),
    /// A thread panicked; the others were stopped, the servo's output was
    /// zeroed and the recording finished.
    #[error(transparent)]
    ThreadPanicked(#[from] ThreadPanicked),
    /// A thread ended by itself, without a panic, before it was asked to
    /// stop; the others were stopped as for a panic.
    #[error("the {0} thread ended before it was asked to stop")]
    ThreadEnded(ThreadName),
    #[error(transparent)]
    Server(#[from] haptic_server::StartError),
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
}

/// Maps an I/O error to [`RunError::Io`] saying what was being done.
pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> RunError {
    let what = what.into();
    move |source| RunError::Io { what, source }
}

/// Locks the process's pages in memory, so that the servo never waits on
/// a page fault: all future pages too when `RLIMIT_MEMLOCK` allows any
/// amount, else the current ones only (a limit on future ones would make
/// allocations fail). Warns when refused.
fn lock_memory() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the limit into `limit`; mlockall takes flags.
    let unlimited = unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut limit) } == 0
        && limit.rlim_cur == libc::RLIM_INFINITY;
    let flags = if unlimited {
        libc::MCL_CURRENT | libc::MCL_FUTURE
    } else {
        libc::MCL_CURRENT
    };
    // SAFETY: as above.
    if unsafe { libc::mlockall(flags) } != 0 {
        let error = std::io::Error::last_os_error();
        tracing::warn!(%error, "locking memory refused; page faults may delay the servo (see docs/operations.md)");
    } else if !unlimited {
        tracing::info!(
            "current memory locked; raise RLIMIT_MEMLOCK to unlimited to lock future pages too"
        );
    }
}

/// Asks the kernel's PM QoS for a 0 µs CPU wake-up latency for as long as
/// the returned file is open, so that idle CPUs stay in shallow sleep
/// states (docs/operations.md). Warns when refused.
fn keep_cpus_awake() -> Option<std::fs::File> {
    use std::io::Write;
    let held = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/cpu_dma_latency")
        .and_then(|mut file| file.write_all(&0i32.to_ne_bytes()).map(|()| file));
    match held {
        Ok(file) => {
            tracing::info!("CPU wake-up latency held at 0 µs (/dev/cpu_dma_latency)");
            Some(file)
        }
        Err(error) => {
            tracing::warn!(%error, "cannot hold /dev/cpu_dma_latency at 0 µs; deep CPU sleep states may delay the servo (see docs/operations.md)");
            None
        }
    }
}

fn schedule(thread: &Thread) -> ThreadSchedule {
    ThreadSchedule {
        fifo_priority: thread.priority,
        cpu: thread.cpu,
    }
}

/// What the signals received so far end the run with, if anything.
fn requested_end(shutdown: &Shutdown) -> Option<EndReason> {
    match shutdown.request() {
        ShutdownRequest::None => None,
        ShutdownRequest::Stop(signal) => Some(EndReason::Signal(signal)),
        ShutdownRequest::Abort(signal) => Some(EndReason::Aborted(signal)),
    }
}

/// Starts the control API's server as `config`'s `[server]` table says,
/// logs where it listens and writes the port file.
fn start_server(
    config: &ServoScene,
    options: &RunOptions,
    control: &Arc<DaemonControl>,
) -> Result<Option<Server>, RunError> {
    let settings = config.server();
    if !settings.enabled {
        return Ok(None);
    }
    let server = Server::start(
        &ServerConfig {
            listen: settings.listen_address(),
            unix_socket: settings.unix_socket.as_ref().map(|p| config.base().join(p)),
            token: settings.token.clone(),
            max_clients: settings.max_clients,
            max_request_bytes: settings.max_request_bytes,
            requests_per_second: settings.requests_per_second,
        },
        control.clone(),
        control.hub().clone(),
    )?;
    if let Some(address) = server.local_addr() {
        tracing::info!("listening on http://{address}");
    }
    if let Some(path) = server.unix_socket() {
        tracing::info!("listening on unix:{}", path.display());
    }
    if let (Some(path), Some(address)) = (&options.port_file, server.local_addr()) {
        haptic_asset::AtomicFile::write(path, format!("{}\n", address.port()).as_bytes())
            .map_err(io(format!("writing {}", path.display())))?;
    }
    Ok(Some(server))
}

/// Runs `config` until `shutdown` asks to stop, the recording ends, or
/// `options.duration` passes, serving the control API meanwhile; a scene
/// loaded through it replaces the running one. A second signal stops the
/// servo at once with zero force and returns [`EndReason::Aborted`]. A
/// thread that panics stops the others (the servo ramping its output to
/// zero) and is returned as [`RunError::ThreadPanicked`], the recording
/// finished. The summary is the last scene's.
pub fn run(
    config: &ServoScene,
    options: &RunOptions,
    shutdown: &Shutdown,
) -> Result<RunSummary, RunError> {
    let control = Arc::new(DaemonControl::new(
        StreamHub::new(),
        options.overrides.clone(),
    ));
    let _server = start_server(config, options, &control)?;
    let started = Instant::now();
    let mut scene = config.clone();
    let mut previous = None;
    let mut built = None;
    let mut reply = None;
    let mut record = options.record.clone();
    loop {
        let scene_options = RunOptions {
            record: record.take(),
            duration: options
                .duration
                .map(|d| d.saturating_sub(started.elapsed())),
            hold_at_end: options.hold_at_end,
            ..RunOptions::default()
        };
        let end = run_with(
            &scene,
            built.take(),
            &scene_options,
            shutdown,
            &control,
            reply.take(),
            PhysicsWorld::step,
            ServoThread::spawn_with,
        )?;
        match end {
            SceneEnd::Stopped(summary) => return Ok(summary),
            SceneEnd::Replaced(request) => {
                previous = Some(std::mem::replace(&mut scene, request.scene));
                built = Some(request.built);
                reply = Some(request.reply);
            }
            SceneEnd::Refused => {
                scene = previous.take().expect("a refused scene replaced another");
                tracing::info!(scene = %scene.name().display(), "restarting the previous scene");
            }
        }
    }
}

/// Tells the control API why the scene it loaded could not start, if it
/// loaded it; otherwise the run fails.
fn refuse(reply: Option<Reply<SceneInfo>>, error: RunError) -> Result<SceneEnd, RunError> {
    match reply {
        Some(reply) => {
            tracing::error!(%error, "the requested scene could not start");
            let _ = reply.send(Err(ApiError::new(ErrorCode::Internal, error.to_string())));
            Ok(SceneEnd::Refused)
        }
        None => Err(error),
    }
}

/// One scene of [`run`], its geometry built already or not, with the
/// physics step and the servo's spawn given, so that tests can make either
/// fail. `reply` waits for the scene to start when the control API loaded
/// it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_with(
    config: &ServoScene,
    built: Option<BuiltScene>,
    options: &RunOptions,
    shutdown: &Shutdown,
    control: &DaemonControl,
    reply: Option<Reply<SceneInfo>>,
    physics_step: impl FnMut(&mut PhysicsWorld, &ToolState, f64) + Send + 'static,
    spawn_servo: impl FnOnce(
        ServoConfig,
        ServoTick<AnyDevice>,
        fn(),
    ) -> std::io::Result<ServoHandle<AnyDevice>>,
) -> Result<SceneEnd, RunError> {
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
    let at_end = if options.hold_at_end {
        AtEnd::Hold
    } else {
        AtEnd::Error
    };
    let safety = match device::open(config, Pacing::RealTime, at_end) {
        Ok(safety) => safety,
        Err(error) => return refuse(reply, error.into()),
    };
    let device_name = haptic_devices::HapticDevice::capabilities(&safety)
        .name
        .clone();
    tracing::info!(device = %device_name, "device opened");
    // A signal while the scene was built (which cannot be interrupted)
    // stops the run before any force is written.
    if let Some(reason) = requested_end(shutdown) {
        tracing::info!(reason = %reason, "stopped during start-up, before the servo started");
        return Ok(SceneEnd::Stopped(RunSummary::servo_only(
            reason,
            config.servo_rate().hz(),
            Default::default(),
        )));
    }
    // Held until the run returns.
    let _awake = config
        .threads()
        .keep_cpus_awake
        .then(keep_cpus_awake)
        .flatten();
    let world = std::mem::take(&mut scene.physics);
    let environment_poses = scene.environment_poses();

    let (tool_writer, tool_reader) = Latest::new(&ToolState::new(environment_poses.len())).split();
    let (physics_writer, physics_reader) =
        Latest::new(&PhysicsSnapshot::new(environment_poses.clone())).split();
    let (producer, consumer) = TickStream::new(TELEMETRY_CAPACITY).split();

    let record = match &options.record {
        Some(path) => {
            Some(TickFile::create(path, true).map_err(io(format!("creating {}", path.display())))?)
        }
        None => None,
    };
    let hub = control.hub();
    hub.set_generation(0);
    hub.set_scene(publish::announcement(config, &scene.display_meshes));
    let (commands, command_receiver) = mpsc::channel();
    let status = Arc::new(Mutex::new(haptic_server::Status::default()));
    // The hello order (the config's, less the tool) and the cycle's order
    // of the environment objects, for the stream; each object's pose is its
    // body frame's, as its display mesh.
    let entry_objects: Vec<u32> = scene.environment.iter().map(|e| e.object as u32).collect();
    let environment: Vec<(Option<usize>, _)> = config
        .objects()
        .iter()
        .enumerate()
        .filter(|(_, object)| !object.tool)
        .map(|(index, object)| {
            let entry = scene.environment.iter().position(|e| e.object == index);
            let pose = entry.map_or_else(|| object.pose(), |e| scene.environment[e].pose);
            (entry, publish::pose(&pose))
        })
        .collect();
    // The telemetry thread reads the scene frames; the control API keeps
    // the parameter updates.
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
            },
        },
    )
    .map_err(io("starting the telemetry thread"))?;
    let physics = PhysicsThread::spawn(
        PhysicsOptions {
            rate_hz: config.threads().physics.rate_hz,
            schedule: schedule(&config.threads().physics),
            world,
        },
        tool_reader,
        physics_writer,
        physics_step,
    )
    .map_err(io("starting the physics thread"))?;

    let rate_hz = config.servo_rate().hz();
    let servo_config = ServoConfig {
        rate: config.servo_rate(),
        schedule: schedule(&config.threads().servo),
    };
    shutdown.servo_started();
    // Locked on the servo thread once its own buffers exist, so that with a
    // finite RLIMIT_MEMLOCK they are among the pages locked. From here on
    // every return, early or not, drops the physics and telemetry threads'
    // guards, which stop them and finish the recording.
    let servo =
        spawn_servo(servo_config, tick, lock_memory).map_err(io("starting the servo thread"))?;
    tracing::info!(rate_hz, "running; SIGINT or SIGTERM stops");
    let info = publish::scene_info(config);
    control.attach(Attached {
        scene: config.clone(),
        info: info.clone(),
        device: device_name,
        commands,
        status,
        scene_control,
        generation: 0,
        pending: None,
    });
    if let Some(reply) = reply {
        let _ = reply.send(Ok(info));
    }
    let mut replacement = None;

    // `None` when the physics or telemetry thread ended by itself.
    let started = Instant::now();
    let mut reason = loop {
        if let Some(reason) = requested_end(shutdown) {
            break Some(reason);
        }
        if servo.is_finished() {
            break Some(EndReason::DeviceEnded);
        }
        if physics.is_finished() || telemetry.is_finished() {
            break None;
        }
        if options.duration.is_some_and(|d| started.elapsed() >= d) {
            break Some(EndReason::Duration);
        }
        if let Some(request) = control.take_scene_request() {
            replacement = Some(request);
            break Some(EndReason::SceneReplaced);
        }
        std::thread::sleep(POLL);
    };

    control.detach();
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
    // keeps everything up to it; the first thread to have panicked (in
    // servo, physics, telemetry order) is the error.
    let ended = if physics.is_finished() {
        ThreadName::Physics
    } else {
        ThreadName::Telemetry
    };
    let physics = physics.stop();
    let telemetry = telemetry.stop();
    let (stats, _) = servo?;
    let (physics, telemetry) = (physics?, telemetry?);
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
