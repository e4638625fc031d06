//! The daemon's threads as guards: each stops and joins its thread when
//! dropped, so that an early return or a panic of the run stops the others
//! (the telemetry thread then still drains its records and finishes the
//! recording), and a thread that panicked becomes a [`ThreadPanicked`]
//! error instead of a panic of the daemon.

use std::any::Any;
use std::fmt;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// One of the daemon's threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadName {
    Servo,
    Physics,
    Telemetry,
}

impl fmt::Display for ThreadName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Servo => "servo",
            Self::Physics => "physics",
            Self::Telemetry => "telemetry",
        })
    }
}

/// A thread of the daemon panicked.
#[derive(Debug, thiserror::Error)]
#[error("the {thread} thread panicked: {message}")]
pub struct ThreadPanicked {
    pub thread: ThreadName,
    /// The panic's message, when it had one.
    pub message: String,
}

impl ThreadPanicked {
    /// The error for `thread`'s panic `payload`, as `JoinHandle::join`
    /// returns it.
    pub fn new(thread: ThreadName, payload: Box<dyn Any + Send>) -> Self {
        let message = match payload.downcast::<String>() {
            Ok(message) => *message,
            Err(payload) => payload
                .downcast_ref::<&str>()
                .map_or("(no message)", |message| message)
                .to_owned(),
        };
        Self { thread, message }
    }
}

/// A thread that runs until asked to stop, and is stopped and joined when
/// dropped.
pub(crate) struct StoppableThread<T> {
    name: ThreadName,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<T>>,
}

impl<T: Send + 'static> StoppableThread<T> {
    /// Runs `body` on a new thread named `haptic-<name>`; `body` returns
    /// once the flag it is given is set.
    pub fn spawn(
        name: ThreadName,
        body: impl FnOnce(&AtomicBool) -> T + Send + 'static,
    ) -> io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name(format!("haptic-{name}"))
            .spawn(move || body(&flag))?;
        Ok(Self {
            name,
            stop,
            thread: Some(thread),
        })
    }
}

impl<T> StoppableThread<T> {
    /// Whether the thread has ended; before a stop, only a panic ends it.
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// Asks the thread to stop and waits for its result.
    pub fn stop(mut self) -> Result<T, ThreadPanicked> {
        let thread = self.thread.take().expect("stopped only here or on drop");
        // Release: the thread's last pass sees everything done before it.
        self.stop.store(true, Ordering::Release);
        thread
            .join()
            .map_err(|payload| ThreadPanicked::new(self.name, payload))
    }
}

impl<T> Drop for StoppableThread<T> {
    fn drop(&mut self) {
        if let Some(thread) = self.thread.take() {
            self.stop.store(true, Ordering::Release);
            if thread.join().is_err() {
                tracing::error!(thread = %self.name, "the thread panicked while the run was ending");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::DaemonControl;
    use crate::physics::PhysicsWorld;
    use crate::run::{run_with, RunError, RunOptions};
    use crate::signals::Shutdown;
    use haptic_config::{Overrides, Scene, ServoScene};
    use haptic_server::StreamHub;
    use haptic_servo::{ServoThread, ToolState};
    use std::path::{Path, PathBuf};
    use std::sync::{Mutex, MutexGuard};
    use std::time::{Duration, Instant};

    /// One run at a time, so that the threads each test sees are its own.
    static RUNS: Mutex<()> = Mutex::new(());

    fn config_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config")
    }

    /// One run at a time of push-block.toml, recorded, for 30 s at most.
    struct Fixture {
        _one: MutexGuard<'static, ()>,
        _dir: tempfile::TempDir,
        record: PathBuf,
        config: ServoScene,
        options: RunOptions,
        shutdown: Shutdown,
        control: DaemonControl,
    }

    impl Fixture {
        fn new() -> Self {
            let one = RUNS.lock().unwrap_or_else(|e| e.into_inner());
            let dir = tempfile::tempdir().unwrap();
            let record = dir.path().join("ticks.csv");
            Self {
                _one: one,
                config: ServoScene::new(
                    Scene::load(config_dir().join("push-block.toml"), &Overrides::default())
                        .unwrap(),
                )
                .unwrap(),
                options: RunOptions {
                    record: Some(record.clone()),
                    duration: Some(Duration::from_secs(30)),
                    ..RunOptions::default()
                },
                shutdown: Shutdown::install().unwrap(),
                control: DaemonControl::new(StreamHub::new(), Overrides::default()),
                _dir: dir,
                record,
            }
        }
    }

    /// Names of this process's threads that belong to a run.
    fn run_threads() -> Vec<String> {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
            .map(|name| name.trim().to_owned())
            .filter(|name| name.starts_with("haptic-"))
            .collect()
    }

    #[test]
    fn a_physics_panic_is_an_error_and_the_recording_is_complete() {
        let run = Fixture::new();
        let mut steps = 0;
        let step = move |world: &mut PhysicsWorld, tool: &ToolState, dt: f64| {
            steps += 1;
            assert!(steps < 100, "injected physics failure");
            world.step(tool, dt);
        };
        let started = Instant::now();
        let result = run_with(
            &run.config,
            None,
            &run.options,
            &run.shutdown,
            &run.control,
            None,
            step,
            ServoThread::spawn_with,
        );
        let Err(RunError::ThreadPanicked(panicked)) = result else {
            panic!("expected a thread panic, got {:?}", result.err());
        };
        assert_eq!(panicked.thread, ThreadName::Physics);
        assert!(panicked.message.contains("injected physics failure"));
        // The panic ended the run, long before its duration.
        assert!(started.elapsed() < Duration::from_secs(20));
        assert_eq!(run_threads(), Vec::<String>::new());
        // Every tick up to the end of the servo's ramp, in order.
        let ticks = haptic_devices::load_ticks(&run.record).unwrap();
        assert!(ticks.len() > 100, "{} ticks", ticks.len());
        assert!(ticks.windows(2).all(|w| w[1].tick == w[0].tick + 1));
        assert_eq!(ticks.last().unwrap().wrench.force.norm(), 0.0);
    }

    #[test]
    fn a_servo_that_cannot_start_stops_the_other_threads() {
        let run = Fixture::new();
        // Held by the physics step until its thread ends.
        let alive = Arc::new(());
        let held = Arc::clone(&alive);
        let step = move |world: &mut PhysicsWorld, tool: &ToolState, dt: f64| {
            let _ = &held;
            world.step(tool, dt);
        };
        let result = run_with(
            &run.config,
            None,
            &run.options,
            &run.shutdown,
            &run.control,
            None,
            step,
            |_, _, _| Err(io::Error::other("no thread for the servo")),
        );
        let Err(RunError::Io { what, .. }) = result else {
            panic!("expected the servo's spawn error, got {:?}", result.err());
        };
        assert_eq!(what, "starting the servo thread");
        assert_eq!(Arc::strong_count(&alive), 1, "the physics thread runs on");
        assert_eq!(run_threads(), Vec::<String>::new());
        assert!(haptic_devices::load_ticks(&run.record).unwrap().is_empty());
    }
}
