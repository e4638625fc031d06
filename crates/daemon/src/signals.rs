//! SIGINT and SIGTERM: the first asks for a clean stop (force ramped to
//! zero, recordings flushed, exit 0); a second asks to stop at once with
//! zero force. Before the servo starts no force is being written, so a
//! second signal then ends the process in the handler itself.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::Arc;

/// What the signals received so far ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShutdownRequest {
    None,
    /// A clean stop, after the named signal.
    Stop(i32),
    /// Stop now, after a second signal (the one named).
    Abort(i32),
}

/// Counts SIGINT and SIGTERM from the moment it is installed.
pub struct Shutdown {
    count: Arc<AtomicUsize>,
    last: Arc<AtomicI32>,
    /// Set once the servo runs: from then on the main thread handles a
    /// second signal (zeroing the output) instead of the handler.
    servo_started: Arc<AtomicBool>,
    ids: Vec<signal_hook::SigId>,
}

impl Shutdown {
    /// Installs the handlers. Each records the signal and counts it; a
    /// second signal before [`servo_started`](Self::servo_started) also
    /// writes a line to standard error and ends the process with `_exit`.
    pub fn install() -> io::Result<Shutdown> {
        let count = Arc::new(AtomicUsize::new(0));
        let last = Arc::new(AtomicI32::new(0));
        let servo_started = Arc::new(AtomicBool::new(false));
        let mut ids = Vec::new();
        for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            let (count, last, started) = (
                Arc::clone(&count),
                Arc::clone(&last),
                Arc::clone(&servo_started),
            );
            // SAFETY: the action performs only atomic operations, write(2)
            // and _exit(2), all async-signal-safe, and touches no lock or
            // allocation.
            let id = unsafe {
                signal_hook::low_level::register(signal, move || {
                    last.store(signal, Ordering::SeqCst);
                    let received = count.fetch_add(1, Ordering::SeqCst) + 1;
                    if received >= 2 && !started.load(Ordering::SeqCst) {
                        const MESSAGE: &[u8] = b"second signal during start-up: exiting\n";
                        libc::write(2, MESSAGE.as_ptr().cast(), MESSAGE.len());
                        libc::_exit(128 + signal);
                    }
                })
            }?;
            ids.push(id);
        }
        Ok(Shutdown {
            count,
            last,
            servo_started,
            ids,
        })
    }

    /// From now on a second signal is the main thread's to handle.
    pub fn servo_started(&self) {
        self.servo_started.store(true, Ordering::SeqCst);
    }

    /// What the signals received so far ask for.
    pub fn request(&self) -> ShutdownRequest {
        let signal = self.last.load(Ordering::SeqCst);
        match self.count.load(Ordering::SeqCst) {
            0 => ShutdownRequest::None,
            1 => ShutdownRequest::Stop(signal),
            _ => ShutdownRequest::Abort(signal),
        }
    }
}

impl Drop for Shutdown {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// `SIGINT`, `SIGTERM` or the number.
pub fn signal_name(signal: i32) -> String {
    match signal {
        signal_hook::consts::SIGINT => "SIGINT".into(),
        signal_hook::consts::SIGTERM => "SIGTERM".into(),
        n => format!("signal {n}"),
    }
}
