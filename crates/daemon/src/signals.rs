//! SIGINT and SIGTERM: the first asks for a clean stop (force ramped to
//! zero, recordings flushed, exit 0); a second asks to stop at once with
//! zero force.

use std::io;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
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
    ids: Vec<signal_hook::SigId>,
}

impl Shutdown {
    /// Installs the handlers. Each only increments counters, which is
    /// async-signal-safe.
    pub fn install() -> io::Result<Shutdown> {
        let count = Arc::new(AtomicUsize::new(0));
        let last = Arc::new(AtomicI32::new(0));
        let mut ids = Vec::new();
        for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            let (count, last) = (Arc::clone(&count), Arc::clone(&last));
            // SAFETY: the action only performs atomic stores, which are
            // async-signal-safe, and touches no lock or allocation.
            let id = unsafe {
                signal_hook::low_level::register(signal, move || {
                    last.store(signal, Ordering::SeqCst);
                    count.fetch_add(1, Ordering::SeqCst);
                })
            }?;
            ids.push(id);
        }
        Ok(Shutdown { count, last, ids })
    }

    /// A shutdown that no signal reaches, for runs driven from code.
    pub fn never() -> Shutdown {
        Shutdown {
            count: Arc::new(AtomicUsize::new(0)),
            last: Arc::new(AtomicI32::new(0)),
            ids: Vec::new(),
        }
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
