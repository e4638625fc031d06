//! The real-time thread that runs a [`ServoTick`] at a fixed rate.
//!
//! Sleeping: `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)` through
//! `libc` to absolute deadlines `start + k · period`, so wake-up latency
//! never accumulates as drift (a relative sleep would add every tick's
//! lateness to all later ticks) and the kernel never wakes the thread early.
//!
//! Priority: `SCHED_FIFO` through `thread-priority`; without permission
//! (no `CAP_SYS_NICE` or `RLIMIT_RTPRIO`) the thread logs a warning and runs
//! at normal priority. Pinning uses `sched_setaffinity`, likewise warning
//! on failure.
use crate::tick::{ServoTick, TickFaults, TickRecord};
use haptic_devices::{HapticDevice, SafetyCounters, SafetyState};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use thread_priority::{
    set_thread_priority_and_policy, thread_native_id, RealtimeThreadSchedulePolicy, ThreadPriority,
    ThreadPriorityValue, ThreadSchedulePolicy,
};

/// How the servo thread runs.
#[derive(Clone, Debug, PartialEq)]
pub struct ServoConfig {
    /// Tick rate (Hz).
    pub rate_hz: f64,
    /// `SCHED_FIFO` priority (1–99); `None` keeps the normal scheduler.
    pub fifo_priority: Option<u8>,
    /// CPU to pin the thread to.
    pub cpu: Option<usize>,
}

impl Default for ServoConfig {
    /// 1 kHz at `SCHED_FIFO` 80 (above interrupt threads at 50), unpinned.
    fn default() -> Self {
        Self {
            rate_hz: 1000.0,
            fifo_priority: Some(80),
            cpu: None,
        }
    }
}

/// Width of one [`LatencyHistogram`] bucket (ns).
pub const BUCKET_NS: u64 = 5_000;
/// [`LatencyHistogram`] buckets; the last holds everything from
/// `(BUCKETS - 1) · BUCKET_NS` (1 ms) on.
pub const BUCKETS: usize = 201;

/// Wake-up lateness (actual start − deadline) per tick, in fixed buckets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LatencyHistogram {
    counts: [u64; BUCKETS],
    max_ns: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self {
            counts: [0; BUCKETS],
            max_ns: 0,
        }
    }
}

impl LatencyHistogram {
    fn record(&mut self, ns: u64) {
        let bucket = ((ns / BUCKET_NS) as usize).min(BUCKETS - 1);
        self.counts[bucket] += 1;
        self.max_ns = self.max_ns.max(ns);
    }

    /// Count per bucket: bucket `i` holds `[i, i + 1) · BUCKET_NS`.
    pub fn counts(&self) -> &[u64; BUCKETS] {
        &self.counts
    }

    /// Samples recorded.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Largest lateness recorded.
    pub fn max(&self) -> Duration {
        Duration::from_nanos(self.max_ns)
    }

    /// Upper edge of the bucket holding quantile `q` (0–1), capped at the
    /// maximum; zero when empty.
    pub fn quantile(&self, q: f64) -> Duration {
        let rank = (q.clamp(0.0, 1.0) * self.total() as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, &count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                return Duration::from_nanos(((i as u64 + 1) * BUCKET_NS).min(self.max_ns));
            }
        }
        Duration::ZERO
    }
}

/// Total and largest time of one stage over all ticks (ns).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageTimer {
    pub total_ns: u64,
    pub max_ns: u64,
}

impl StageTimer {
    fn add(&mut self, ns: u64) {
        self.total_ns += ns;
        self.max_ns = self.max_ns.max(ns);
    }
}

/// Per-stage timers of the tick.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageTimers {
    pub read: StageTimer,
    pub collision: StageTimer,
    pub assembly: StageTimer,
    pub friction: StageTimer,
    pub coupling: StageTimer,
    pub write: StageTimer,
    /// The whole tick, including publishing.
    pub tick: StageTimer,
}

impl StageTimers {
    fn add(&mut self, record: &TickRecord, tick_ns: u64) {
        self.read.add(record.read_ns);
        self.collision.add(record.collision_ns);
        self.assembly.add(record.assembly_ns);
        self.friction.add(record.friction_ns);
        self.coupling.add(record.coupling_ns);
        self.write.add(record.write_ns);
        self.tick.add(tick_ns);
    }
}

/// What the servo thread did, returned by [`ServoHandle::stop`].
#[derive(Clone, Debug, PartialEq)]
pub struct ServoStats {
    /// Ticks run, including the shutdown ramp.
    pub ticks: u64,
    /// Ticks that ended after the next deadline.
    pub overruns: u64,
    /// Deadlines skipped after overruns.
    pub skipped: u64,
    /// From the first deadline to the last tick's end.
    pub elapsed: Duration,
    /// Whether `SCHED_FIFO` was granted.
    pub realtime: bool,
    pub latency: LatencyHistogram,
    pub stages: StageTimers,
    pub faults: TickFaults,
    pub safety: SafetyCounters,
    pub telemetry_dropped: u64,
}

/// A running servo thread; [`ServoHandle::stop`] ends it, as does
/// dropping the handle (discarding the statistics).
pub struct ServoHandle<D: HapticDevice> {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<(ServoStats, ServoTick<D>)>>,
}

impl<D: HapticDevice> ServoHandle<D> {
    /// Requests shutdown: the safety layer ramps the wrench to zero over its
    /// `shutdown_ticks`, then the thread exits. Returns its statistics and
    /// the tick (with its device). Panics only if the servo thread panicked.
    pub fn stop(mut self) -> (ServoStats, ServoTick<D>) {
        self.stop.store(true, Ordering::Relaxed);
        let thread = self.thread.take().expect("joined only here or on drop");
        thread.join().expect("the servo thread panicked")
    }
}

impl<D: HapticDevice> Drop for ServoHandle<D> {
    fn drop(&mut self) {
        if let Some(thread) = self.thread.take() {
            self.stop.store(true, Ordering::Relaxed);
            // A panic on the servo thread has already been reported.
            let _ = thread.join();
        }
    }
}

/// Spawns servo threads.
pub struct ServoThread;

impl ServoThread {
    /// Runs `tick` on a new thread at `config.rate_hz` until stopped.
    pub fn spawn<D: HapticDevice + 'static>(
        config: ServoConfig,
        tick: ServoTick<D>,
    ) -> io::Result<ServoHandle<D>> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("haptic-servo".into())
            .spawn(move || run(&config, tick, &flag))?;
        Ok(ServoHandle {
            stop,
            thread: Some(thread),
        })
    }
}

fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn sleep_until(deadline_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: `ts` is a valid timespec; the remainder is unused with
    // TIMER_ABSTIME. Retried on EINTR: the deadline is absolute.
    while unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    } == libc::EINTR
    {}
}

fn set_fifo(priority: u8) -> bool {
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
            tracing::warn!(priority, %error, "SCHED_FIFO refused; servo runs at normal priority");
            false
        }
    }
}

fn pin(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is empty; CPU_SET bounds-checks `cpu`,
    // and the set outlives the call.
    let result = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set)
    };
    if result != 0 {
        let error = io::Error::last_os_error();
        tracing::warn!(cpu, %error, "pinning the servo thread failed");
    }
}

fn run<D: HapticDevice>(
    config: &ServoConfig,
    mut tick: ServoTick<D>,
    stop: &AtomicBool,
) -> (ServoStats, ServoTick<D>) {
    let realtime = config.fifo_priority.is_some_and(set_fifo);
    if let Some(cpu) = config.cpu {
        pin(cpu);
    }
    let period_ns = (1e9 / config.rate_hz).round().max(1.0) as u64;
    let mut stats = ServoStats {
        ticks: 0,
        overruns: 0,
        skipped: 0,
        elapsed: Duration::ZERO,
        realtime,
        latency: LatencyHistogram::default(),
        stages: StageTimers::default(),
        faults: TickFaults::default(),
        safety: SafetyCounters::default(),
        telemetry_dropped: 0,
    };
    let start_ns = now_ns() + period_ns;
    let mut deadline_ns = start_ns;
    loop {
        sleep_until(deadline_ns);
        let woke_ns = now_ns();
        stats.latency.record(woke_ns.saturating_sub(deadline_ns));
        if stop.load(Ordering::Relaxed) {
            // Idempotent: starts the ramp once.
            tick.safety_mut().shutdown();
        }
        let record = tick.run(Duration::from_nanos(deadline_ns - start_ns));
        let end_ns = now_ns();
        stats.ticks += 1;
        stats.stages.add(&record, end_ns - woke_ns);
        if tick.safety().state() == SafetyState::Off {
            stats.elapsed = Duration::from_nanos(end_ns - start_ns);
            break;
        }
        deadline_ns += period_ns;
        if end_ns > deadline_ns {
            stats.overruns += 1;
            tick.safety_mut().report_overrun();
            let behind = (end_ns - deadline_ns) / period_ns + 1;
            stats.skipped += behind;
            deadline_ns += behind * period_ns;
        }
    }
    stats.faults = tick.faults();
    stats.safety = tick.safety().counters();
    stats.telemetry_dropped = tick.telemetry_dropped();
    (stats, tick)
}
