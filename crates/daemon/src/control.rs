//! The daemon's side of the control API: [`haptic_server::Control`] over
//! the scene running and its threads. It outlives scene loads: each scene's
//! pipeline attaches to it when its servo starts and detaches when it
//! stops.

use crate::scene::{BuiltScene, SceneControl};
use haptic_config::{ConfigError, Overrides, RenderingPatch, Scene, ServoScene};
use haptic_server::{
    ApiError, BackendDevices, Control, ErrorCode, Parameters, Recording, SceneInfo, Status,
    StreamHub,
};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long a recording command may wait for the telemetry thread.
const TELEMETRY_REPLY: Duration = Duration::from_secs(10);

/// How long a parameter change may wait for the servo to take it.
const SERVO_REPLY: Duration = Duration::from_secs(2);

/// How long a scene load may wait for the new servo to start.
const SCENE_REPLY: Duration = Duration::from_secs(300);

/// A reply channel.
pub type Reply<T> = Sender<Result<T, ApiError>>;

/// What the telemetry thread does for the control API.
pub enum TelemetryCommand {
    StartRecording(PathBuf, Reply<Recording>),
    StopRecording(Reply<Recording>),
}

/// A scene to run next, validated and built, and who waits for it.
pub struct SceneRequest {
    pub scene: ServoScene,
    pub built: BuiltScene,
    pub reply: Reply<SceneInfo>,
}

/// The running scene's pipeline, as the control API reaches it.
pub struct Attached {
    pub scene: ServoScene,
    pub info: SceneInfo,
    pub device: String,
    pub commands: Sender<TelemetryCommand>,
    /// The telemetry thread's live figures.
    pub status: Arc<Mutex<Status>>,
    /// The servo's parameter mailbox.
    pub scene_control: SceneControl,
    /// The rendering parameters' generation in force.
    pub generation: u64,
    /// The patched scene of the update on its way to the servo, which
    /// comes into force once the servo hands the update back applied.
    pub pending: Option<ServoScene>,
}

impl Attached {
    /// Collects the update the servo handed back, if it has, and brings
    /// its scene and generation into force when the servo applied it:
    /// the tick it did, or why not.
    fn settle(&mut self) -> Option<Result<u64, ApiError>> {
        let back = self.scene_control.updates.collect()?;
        let patched = self.pending.take();
        Some(match (back.applied, patched) {
            (Some(Ok(tick)), Some(patched)) => {
                self.scene = patched;
                self.generation = back.generation;
                tracing::info!(
                    generation = back.generation,
                    tick,
                    "rendering parameters changed through the control API"
                );
                Ok(tick)
            }
            (Some(Err(error)), _) => Err(ApiError::new(
                ErrorCode::InvalidParameter,
                error.to_string(),
            )),
            _ => Err(ApiError::new(
                ErrorCode::Internal,
                "the servo returned the change untaken",
            )),
        })
    }
}

/// The control API's view of the daemon.
pub struct DaemonControl {
    hub: StreamHub,
    started: Instant,
    /// The command line's overrides, applied to scenes loaded at run time.
    overrides: Overrides,
    current: Mutex<Option<Attached>>,
    scene_request: Mutex<Option<SceneRequest>>,
    /// Held while a parameter change is on its way to the servo.
    patching: Mutex<()>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// A config error as the API reports it, naming the field.
fn config_error(error: &ConfigError) -> ApiError {
    ApiError::invalid(
        error.field.clone().unwrap_or_else(|| "path".to_owned()),
        error.to_string(),
    )
}

fn no_scene() -> ApiError {
    ApiError::new(
        ErrorCode::Busy,
        "no scene is running: it is starting or being replaced",
    )
}

/// Waits for `reply`, or says the daemon did not answer.
fn wait<T>(reply: Receiver<Result<T, ApiError>>, timeout: Duration) -> Result<T, ApiError> {
    reply.recv_timeout(timeout).unwrap_or_else(|_| {
        Err(ApiError::new(
            ErrorCode::Internal,
            "the daemon did not answer (its scene stopped)",
        ))
    })
}

impl DaemonControl {
    pub fn new(hub: StreamHub, overrides: Overrides) -> Self {
        Self {
            hub,
            started: Instant::now(),
            overrides,
            current: Mutex::new(None),
            scene_request: Mutex::new(None),
            patching: Mutex::new(()),
        }
    }

    pub fn hub(&self) -> &StreamHub {
        &self.hub
    }

    /// A new pipeline's servo runs: the API reaches it from now on.
    pub fn attach(&self, attached: Attached) {
        *lock(&self.current) = Some(attached);
    }

    /// The pipeline is stopping.
    pub fn detach(&self) {
        *lock(&self.current) = None;
    }

    /// A scene load waiting to replace the running scene.
    pub fn take_scene_request(&self) -> Option<SceneRequest> {
        lock(&self.scene_request).take()
    }

    fn send(
        &self,
        command: impl FnOnce(Reply<Recording>) -> TelemetryCommand,
    ) -> Result<Recording, ApiError> {
        let (reply, answer) = mpsc::channel();
        lock(&self.current)
            .as_ref()
            .ok_or_else(no_scene)?
            .commands
            .send(command(reply))
            .map_err(|_| no_scene())?;
        wait(answer, TELEMETRY_REPLY)
    }
}

/// The running scene's parameters, and the first tick of a change.
fn in_force(attached: &Attached, applied_tick: Option<u64>) -> Parameters {
    Parameters {
        generation: attached.generation,
        applied_tick,
        parameters: attached.scene.tunable(),
    }
}

impl Control for DaemonControl {
    fn status(&self) -> Status {
        let current = lock(&self.current);
        let mut status = current
            .as_ref()
            .map(|a| lock(&a.status).clone())
            .unwrap_or_default();
        if let Some(attached) = current.as_ref() {
            status.scene = attached.info.file.clone();
            status.device = attached.device.clone();
            status.servo_rate_hz = attached.info.servo_rate_hz;
        }
        status.uptime_s = self.started.elapsed().as_secs_f64();
        status
    }

    fn parameters(&self) -> Result<Parameters, ApiError> {
        let mut current = lock(&self.current);
        let attached = current.as_mut().ok_or_else(no_scene)?;
        // A change whose request stopped waiting may have been applied since.
        let _ = attached.settle();
        Ok(in_force(attached, None))
    }

    /// Validates the patched scene, builds its update here, hands it to
    /// the servo and waits until the servo took it: one change at a time,
    /// the scene held meanwhile, so that it cannot be replaced under it.
    fn patch_parameters(&self, patch: RenderingPatch) -> Result<Parameters, ApiError> {
        let _one = self
            .patching
            .try_lock()
            .map_err(|_| ApiError::new(ErrorCode::Busy, "another change is pending"))?;
        let mut current = lock(&self.current);
        let attached = current.as_mut().ok_or_else(no_scene)?;
        // A change whose request stopped waiting may have been applied since.
        let _ = attached.settle();
        if attached.scene_control.updates.in_flight() {
            return Err(ApiError::new(ErrorCode::Busy, "another change is pending"));
        }
        let patched = attached
            .scene
            .patched(&patch)
            .map_err(|e| config_error(&e))?;
        let generation = attached.generation + 1;
        let update = attached
            .scene_control
            .rendering_update(&patched, generation)
            .map_err(|e| ApiError::new(ErrorCode::InvalidParameter, e.to_string()))?;
        if attached
            .scene_control
            .updates
            .send(Box::new(update))
            .is_err()
        {
            return Err(ApiError::new(ErrorCode::Busy, "another change is pending"));
        }
        attached.pending = Some(patched);
        let deadline = Instant::now() + SERVO_REPLY;
        loop {
            if let Some(applied) = attached.settle() {
                return applied.map(|tick| in_force(attached, Some(tick)));
            }
            if Instant::now() >= deadline {
                return Err(ApiError::new(
                    ErrorCode::Busy,
                    "the servo has not taken the change yet; it comes into force when it does",
                ));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn scene(&self) -> SceneInfo {
        lock(&self.current)
            .as_ref()
            .map(|a| a.info.clone())
            .unwrap_or(SceneInfo {
                file: String::new(),
                servo_rate_hz: 0.0,
                objects: Vec::new(),
            })
    }

    fn load_scene(&self, path: &Path) -> Result<SceneInfo, ApiError> {
        if lock(&self.scene_request).is_some() {
            return Err(ApiError::new(ErrorCode::Busy, "another scene is loading"));
        }
        let scene = Scene::load(path, &self.overrides).map_err(|e| config_error(&e))?;
        let scene = ServoScene::new(scene).map_err(|e| config_error(&e))?;
        tracing::info!(path = %path.display(), "building a scene requested through the control API");
        let built = BuiltScene::build(&scene)
            .map_err(|e| ApiError::invalid("path", format!("{}: {e}", path.display())))?;
        let (reply, answer) = mpsc::channel();
        {
            let mut request = lock(&self.scene_request);
            if request.is_some() {
                return Err(ApiError::new(ErrorCode::Busy, "another scene is loading"));
            }
            *request = Some(SceneRequest {
                scene,
                built,
                reply,
            });
        }
        wait(answer, SCENE_REPLY)
    }

    fn recording(&self) -> Option<Recording> {
        lock(&self.current)
            .as_ref()
            .and_then(|a| lock(&a.status).recording.clone())
    }

    fn start_recording(&self, path: &Path) -> Result<Recording, ApiError> {
        self.send(|reply| TelemetryCommand::StartRecording(path.to_owned(), reply))
    }

    fn stop_recording(&self) -> Result<Recording, ApiError> {
        self.send(TelemetryCommand::StopRecording)
    }

    /// What every device backend finds, where the running scene has them
    /// look; its own device, if a backend's listing would open it again,
    /// reported as in use.
    fn devices(&self) -> Result<Vec<BackendDevices>, ApiError> {
        let options = lock(&self.current)
            .as_ref()
            .map(|a| crate::listing::scene_options(&a.scene, &a.device))
            .ok_or_else(no_scene)?;
        Ok(crate::listing::list_devices(&options))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{open, Pacing};
    use haptic_devices::AtEnd;
    use haptic_handoff::{Latest, TickStream};
    use haptic_servo::{PhysicsSnapshot, ToolState};

    /// A change the servo takes only after its request stopped waiting
    /// comes into force then: the next request sees it, and a new change
    /// is accepted.
    #[test]
    fn a_change_applied_after_its_request_gave_up_comes_into_force() {
        let config =
            ServoScene::new(Scene::embedded_default(&Overrides::default()).unwrap()).unwrap();
        let scene = BuiltScene::build(&config).unwrap();
        let period = config.servo_rate().period();
        let device = open(&config, Pacing::Stepped { period }, AtEnd::Hold).unwrap();
        let (tool, _tool_reader) = Latest::new(&ToolState::new(scene.environment.len())).split();
        let (_physics, physics) =
            Latest::new(&PhysicsSnapshot::new(scene.environment_poses())).split();
        let (producer, _records) = TickStream::new(16).split();
        let (mut tick, scene_control, _frames) =
            scene.into_servo_tick(device, physics, tool, producer);
        let control = DaemonControl::new(StreamHub::default(), Overrides::default());
        control.attach(Attached {
            info: crate::publish::scene_info(&config),
            scene: config,
            device: "simulated".into(),
            commands: mpsc::channel().0,
            status: Arc::default(),
            scene_control,
            generation: 0,
            pending: None,
        });
        let patch = |mu: f64| -> RenderingPatch {
            serde_json::from_value(serde_json::json!(
                {"materials": {"wood": {"friction_coefficient": mu}}}
            ))
            .unwrap()
        };
        let mu = |control: &DaemonControl| {
            control.parameters().unwrap().parameters.materials["wood"].friction_coefficient
        };

        // No tick runs: the request gives up, the change stays pending.
        let error = control.patch_parameters(patch(0.9)).unwrap_err();
        assert_eq!(error.code, ErrorCode::Busy);
        assert_eq!(control.parameters().unwrap().generation, 0);
        assert_eq!(
            control.patch_parameters(patch(0.7)).unwrap_err().code,
            ErrorCode::Busy
        );

        // The servo takes it: it is in force from the next request on.
        let record = tick.run(Duration::ZERO, Duration::ZERO);
        assert_eq!(record.generation, 1);
        assert_eq!(control.parameters().unwrap().generation, 1);
        assert_eq!(mu(&control), 0.9);

        // And the next change goes through.
        std::thread::scope(|s| {
            let patched = s.spawn(|| control.patch_parameters(patch(0.4)));
            while !patched.is_finished() {
                tick.run(Duration::ZERO, Duration::ZERO);
                std::thread::sleep(Duration::from_millis(1));
            }
            let parameters = patched.join().unwrap().unwrap();
            assert_eq!(parameters.generation, 2);
        });
        assert_eq!(mu(&control), 0.4);
    }
}
