//! What the operating system does for the real-time threads: their
//! scheduling, memory locked against page faults, CPUs kept out of deep
//! sleep (docs/operations.md).

use haptic_config::Thread;
use haptic_servo::ThreadSchedule;

/// The scheduling a thread's `[threads.*]` table asks for.
pub(crate) fn schedule(thread: &Thread) -> ThreadSchedule {
    ThreadSchedule {
        fifo_priority: thread.priority,
        cpu: thread.cpu,
    }
}

/// Locks the process's pages in memory, so that the servo never waits on
/// a page fault: all future pages too when `RLIMIT_MEMLOCK` allows any
/// amount, else the current ones only (a limit on future ones would make
/// allocations fail). Warns when refused.
pub(crate) fn lock_memory() {
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
pub(crate) fn keep_cpus_awake() -> Option<std::fs::File> {
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
