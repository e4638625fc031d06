//! Real-time priority and CPU pinning of the calling thread.
//!
//! Priority: `SCHED_FIFO` through `thread-priority`; without permission
//! (no `CAP_SYS_NICE` and no `RLIMIT_RTPRIO`, docs/operations.md) a warning
//! is logged and the thread runs at normal priority. Pinning uses
//! `sched_setaffinity`, likewise warning on failure; a CPU number the
//! kernel's CPU set cannot hold (`CPU_SETSIZE`, 1024, or more) is refused
//! with a warning, and the thread stays unpinned.

use std::io;
use thread_priority::{
    set_thread_priority_and_policy, thread_native_id, RealtimeThreadSchedulePolicy, ThreadPriority,
    ThreadPriorityValue, ThreadSchedulePolicy,
};

/// How a thread asks to be scheduled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThreadSchedule {
    /// `SCHED_FIFO` priority (1–99); `None` keeps the normal scheduler.
    pub fifo_priority: Option<u8>,
    /// CPU to pin the thread to.
    pub cpu: Option<usize>,
}

impl ThreadSchedule {
    /// Applies the schedule to the calling thread, named `thread` in
    /// warnings; returns whether `SCHED_FIFO` was granted.
    pub fn apply(&self, thread: &str) -> bool {
        if let Some(cpu) = self.cpu {
            pin(cpu, thread);
        }
        self.fifo_priority
            .is_some_and(|priority| set_fifo(priority, thread))
    }
}

fn set_fifo(priority: u8, thread: &str) -> bool {
    let result = ThreadPriorityValue::try_from(priority)
        .map_err(|e| e.to_string())
        .and_then(|value| {
            set_thread_priority_and_policy(
                thread_native_id(),
                ThreadPriority::Crossplatform(value),
                ThreadSchedulePolicy::Realtime(RealtimeThreadSchedulePolicy::Fifo),
            )
            .map_err(|e| format!("{e:?}"))
        });
    match result {
        Ok(()) => true,
        Err(error) => {
            tracing::warn!(
                thread,
                priority,
                %error,
                "SCHED_FIFO refused; running at normal priority (see docs/operations.md)"
            );
            false
        }
    }
}

fn pin(cpu: usize, thread: &str) {
    // `CPU_SET` does not check its argument against the set's size: a CPU
    // the set cannot hold is refused here.
    if cpu >= libc::CPU_SETSIZE as usize {
        tracing::warn!(
            thread,
            cpu,
            max = libc::CPU_SETSIZE - 1,
            "no such CPU; the thread is not pinned"
        );
        return;
    }
    // SAFETY: a zeroed cpu_set_t is empty; `cpu` is below CPU_SETSIZE, the
    // number of CPUs the set holds, as checked above; and the set outlives
    // the call.
    let result = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set)
    };
    if result != 0 {
        let error = io::Error::last_os_error();
        tracing::warn!(thread, cpu, %error, "pinning to the CPU failed");
    }
}
