//! The real-time thread that runs a [`ServoTick`] at a fixed rate.
//!
//! Sleeping: `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)` through
//! `libc` to absolute deadlines `start + k · period`, so wake-up latency
//! never accumulates as drift (a relative sleep would add every tick's
//! lateness to all later ticks) and the kernel never wakes the thread early.
//!
//! Priority and pinning: [`ThreadSchedule`].
//!
//! Start-up, on the servo thread: priority, pinning, the statistics (their
//! histograms allocated), then the caller's `after_setup`. From the first
//! sleep on the loop allocates nothing, takes no lock and makes no syscall
//! but `clock_nanosleep` and the device's own I/O (`clock_gettime` is
//! answered by the vDSO). It ends after the shutdown ramp that a stop
//! request or the end of the device's recording starts, or at once, the
//! output zeroed, on an abort request.
//!
//! A panic in the loop (in the tick, the rendering or the device) writes
//! zero straight to the device, bypassing the limits
//! ([`SafetyLayer::zero_now_after_fault`](haptic_devices::SafetyLayer::zero_now_after_fault)),
//! and then carries on unwinding: [`ServoHandle::join`] returns the panic
//! as an error, so the caller can still shut its other threads down.
//!
//! Requests ([`ServoHandle::request_stop`], [`ServoHandle::abort`]) are
//! stored with `Release` and loaded by the servo with `Acquire`, so what
//! the caller wrote before a request is visible to the servo once it sees
//! the request.
use crate::schedule::ThreadSchedule;
use crate::stage::{PerStage, Stage};
use crate::tick::{BudgetCuts, ServoTick, TickFaults, TickRecord, VerdictCounts};
use haptic_devices::{HapticDevice, SafetyCounters, SafetyState, ServoRate};
use hdrhistogram::Histogram;
use std::fmt;
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How the servo thread runs.
#[derive(Clone, Debug, PartialEq)]
pub struct ServoConfig {
    pub rate: ServoRate,
    pub schedule: ThreadSchedule,
}

impl Default for ServoConfig {
    /// [`ServoRate::DEFAULT`] at `SCHED_FIFO` 80 (above interrupt threads
    /// at 50), unpinned.
    fn default() -> Self {
        Self {
            rate: ServoRate::DEFAULT,
            schedule: ThreadSchedule {
                fifo_priority: Some(80),
                cpu: None,
            },
        }
    }
}

/// Longest duration a [`LatencyHistogram`] tells apart (ns); longer ones
/// are recorded as this.
const HIGHEST_NS: u64 = 10_000_000_000;

fn saturating_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// A histogram of durations: an HDR histogram of nanoseconds from 1 ns to
/// 10 s at 3 significant figures (values within 0.1 %), its counts
/// allocated when built and never resized, so recording never allocates.
/// Longer durations count as 10 s.
#[derive(Clone, PartialEq)]
pub struct LatencyHistogram(Histogram<u64>);

impl Default for LatencyHistogram {
    fn default() -> Self {
        let mut histogram =
            Histogram::new_with_bounds(1, HIGHEST_NS, 3).expect("1 ns to 10 s at 3 figures");
        histogram.auto(false);
        // Writing every count now maps its pages before the servo runs.
        histogram.clear();
        Self(histogram)
    }
}

impl fmt::Debug for LatencyHistogram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LatencyHistogram")
            .field("total", &self.total())
            .field("min", &self.min())
            .field("p50", &self.quantile(0.5))
            .field("p99", &self.quantile(0.99))
            .field("max", &self.max())
            .finish()
    }
}

impl LatencyHistogram {
    /// Counts `value`. Never allocates.
    pub fn record(&mut self, value: Duration) {
        self.0
            .saturating_record(saturating_nanos(value).min(HIGHEST_NS));
    }

    /// Samples recorded.
    pub fn total(&self) -> u64 {
        self.0.len()
    }

    /// Smallest sample; zero when empty.
    pub fn min(&self) -> Duration {
        Duration::from_nanos(self.0.min())
    }

    /// Largest sample; zero when empty.
    pub fn max(&self) -> Duration {
        Duration::from_nanos(self.0.max())
    }

    /// Mean sample; zero when empty.
    pub fn mean(&self) -> Duration {
        Duration::from_nanos(self.0.mean().round() as u64)
    }

    /// The sample at quantile `q` (0–1); zero when empty.
    pub fn quantile(&self, q: f64) -> Duration {
        Duration::from_nanos(self.0.value_at_quantile(q.clamp(0.0, 1.0)))
    }

    /// `(value, count)` for every distinct recorded value, ascending; each
    /// value is the top of its 0.1 % bucket.
    pub fn iter_recorded(&self) -> impl Iterator<Item = (Duration, u64)> + '_ {
        self.0.iter_recorded().map(|v| {
            (
                Duration::from_nanos(v.value_iterated_to()),
                v.count_at_value(),
            )
        })
    }

    /// The underlying histogram (ns), e.g. to merge or export.
    pub fn histogram(&self) -> &Histogram<u64> {
        &self.0
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
    pub stages: PerStage<StageTimer>,
    /// The whole tick, including publishing.
    pub tick: StageTimer,
}

impl StageTimers {
    fn add(&mut self, record: &TickRecord, tick_ns: u64) {
        for stage in Stage::ALL {
            self.stages[stage].add(record.stage_ns[stage]);
        }
        self.tick.add(tick_ns);
    }
}

/// What the servo thread did, returned by [`ServoHandle::stop`] and
/// [`ServoHandle::join`]; the default is a servo that never ran.
#[derive(Clone, Debug, Default, PartialEq)]
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
    /// Wake-up lateness (actual start − deadline) per tick.
    pub latency: LatencyHistogram,
    /// Compute time of each whole tick, from wake-up to the end of publishing.
    pub tick_time: LatencyHistogram,
    pub stages: StageTimers,
    pub faults: TickFaults,
    /// Ticks per friction verdict.
    pub verdicts: VerdictCounts,
    /// Ticks the rendering budget cut.
    pub budget_cuts: BudgetCuts,
    pub safety: SafetyCounters,
    pub telemetry_dropped: u64,
}

/// [`ServoHandle`] requests, in increasing order: a request never lowers
/// an earlier one.
const RUN: u8 = 0;
const STOP: u8 = 1;
const ABORT: u8 = 2;

/// A running servo thread; [`ServoHandle::stop`] ends it, as does
/// dropping the handle (discarding the statistics). The thread also ends by
/// itself, through the same shutdown ramp, when the device's recording ends
/// ([`ServoHandle::is_finished`]).
pub struct ServoHandle<D: HapticDevice> {
    request: Arc<AtomicU8>,
    thread: Option<JoinHandle<(ServoStats, ServoTick<D>)>>,
}

impl<D: HapticDevice> ServoHandle<D> {
    /// Requests shutdown and waits for it: see [`ServoHandle::request_stop`]
    /// and [`ServoHandle::join`].
    pub fn stop(self) -> std::thread::Result<(ServoStats, ServoTick<D>)> {
        self.request_stop();
        self.join()
    }

    /// Requests shutdown without waiting: at its next tick the safety layer
    /// starts ramping the wrench to zero over its `shutdown_ticks`, then the
    /// thread exits.
    pub fn request_stop(&self) {
        self.request.fetch_max(STOP, Ordering::Release);
    }

    /// Requests an immediate end without waiting: at its next wake-up the
    /// thread writes zero (no ramp) and exits without running the tick.
    pub fn abort(&self) {
        self.request.fetch_max(ABORT, Ordering::Release);
    }

    /// Waits for the thread to end (after a request, or the end of the
    /// device's recording); returns its statistics and the tick (with its
    /// device), or, if the servo thread panicked, the panic's payload (the
    /// tick and its device are gone then; zero was written to the device
    /// before the thread ended).
    pub fn join(mut self) -> std::thread::Result<(ServoStats, ServoTick<D>)> {
        let thread = self.thread.take().expect("joined only here or on drop");
        thread.join()
    }

    /// Whether the thread has ended (after a request, the end of the
    /// device's recording, or a panic); [`ServoHandle::join`] then returns
    /// at once.
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_some_and(JoinHandle::is_finished)
    }
}

impl<D: HapticDevice> Drop for ServoHandle<D> {
    fn drop(&mut self) {
        if let Some(thread) = self.thread.take() {
            self.request_stop();
            // A panic on the servo thread has already been reported.
            let _ = thread.join();
        }
    }
}

/// Spawns servo threads.
pub struct ServoThread;

impl ServoThread {
    /// Runs `tick` on a new thread at `config.rate` until stopped.
    pub fn spawn<D: HapticDevice + 'static>(
        config: ServoConfig,
        tick: ServoTick<D>,
    ) -> io::Result<ServoHandle<D>> {
        Self::spawn_with(config, tick, || {})
    }

    /// Like [`ServoThread::spawn`], running `after_setup` on the servo
    /// thread once its priority and affinity are set and everything the
    /// loop uses is allocated, just before the first sleep.
    pub fn spawn_with<D: HapticDevice + 'static>(
        config: ServoConfig,
        tick: ServoTick<D>,
        after_setup: impl FnOnce() + Send + 'static,
    ) -> io::Result<ServoHandle<D>> {
        let request = Arc::new(AtomicU8::new(RUN));
        let requested = Arc::clone(&request);
        let thread = std::thread::Builder::new()
            .name("haptic-servo".into())
            .spawn(move || run(&config, tick, &requested, after_setup))?;
        Ok(ServoHandle {
            request,
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

fn run<D: HapticDevice>(
    config: &ServoConfig,
    mut tick: ServoTick<D>,
    request: &AtomicU8,
    after_setup: impl FnOnce(),
) -> (ServoStats, ServoTick<D>) {
    let realtime = config.schedule.apply("servo");
    let period_ns = (1e9 / config.rate.hz()).round().max(1.0) as u64;
    let mut stats = ServoStats {
        ticks: 0,
        overruns: 0,
        skipped: 0,
        elapsed: Duration::ZERO,
        realtime,
        latency: LatencyHistogram::default(),
        tick_time: LatencyHistogram::default(),
        stages: StageTimers::default(),
        faults: TickFaults::default(),
        verdicts: VerdictCounts::default(),
        budget_cuts: BudgetCuts::default(),
        safety: SafetyCounters::default(),
        telemetry_dropped: 0,
    };
    after_setup();
    let start_ns = now_ns() + period_ns;
    let mut deadline_ns = start_ns;
    let ticked = panic::catch_unwind(AssertUnwindSafe(|| loop {
        sleep_until(deadline_ns);
        let woke_ns = now_ns();
        let latency = Duration::from_nanos(woke_ns.saturating_sub(deadline_ns));
        stats.latency.record(latency);
        match request.load(Ordering::Acquire) {
            ABORT => {
                tick.safety_mut().abort();
                stats.elapsed = Duration::from_nanos(now_ns() - start_ns);
                break;
            }
            // Idempotent: starts the ramp once.
            STOP => tick.safety_mut().shutdown(),
            _ if tick.device_ended() => tick.safety_mut().shutdown(),
            _ => {}
        }
        let record = tick.run(Duration::from_nanos(deadline_ns - start_ns), latency);
        let end_ns = now_ns();
        stats.ticks += 1;
        stats
            .tick_time
            .record(Duration::from_nanos(end_ns - woke_ns));
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
    }));
    if let Err(payload) = ticked {
        // Best effort, and never a second panic in its place.
        let _ = panic::catch_unwind(AssertUnwindSafe(|| {
            tick.safety_mut().zero_now_after_fault();
        }));
        panic::resume_unwind(payload);
    }
    stats.faults = tick.faults();
    stats.verdicts = tick.verdicts();
    stats.budget_cuts = tick.budget_cuts();
    stats.safety = tick.safety().counters();
    stats.telemetry_dropped = tick.telemetry_dropped();
    (stats, tick)
}
