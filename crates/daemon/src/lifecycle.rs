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
