//! The safety layer between rendering and every device.
//!
//! [`SafetyLayer`] wraps a device and is itself a [`HapticDevice`]. The servo
//! calls `read` then `write` once per tick (a tick is counted per `write`).
//! Every requested wrench is clamped in magnitude and in change per tick, and
//! is ramped in after opening and after most trips (a soft start). A trip
//! zeroes the output at once. What follows depends on the cause:
//!
//! | cause ([`TripCause`]) | trips when | output afterwards |
//! |---|---|---|
//! | `Stale` | the device reports `Stale`, or a timestamp repeats for more than `stale_ticks` reads | zero until fresh samples, then a soft start |
//! | `SampleNotFinite` | a sample holds a NaN or an infinity (withheld), or the device reports `SampleNotFinite` | zero until finite samples, then a soft start |
//! | `RequestNotFinite` | a requested wrench holds a NaN or an infinity | zero until finite requests, then a soft start |
//! | `Overrun` | the servo calls [`SafetyLayer::report_overrun`] | zero at once and for the next write; once a write comes without a new overrun since the last, back under the force-rate limit from zero (full scale in 10 ticks) in the phase it was in: no soft start |
//! | `Disconnected` | a read or write reports `Disconnected` | zero, reconnection every `reconnect_ticks` reads, a soft start when back; or, with [`OnDisconnect::Stop`], [`DeviceError::Lost`] from the next read on |
//! | `DeviceError` | a failed transfer or a refused wrench | zero until a read succeeds, then a soft start |
//! | `Shutdown` | [`SafetyLayer::shutdown`] (a ramp to zero over `shutdown_ticks`), [`SafetyLayer::abort`] or [`SafetyLayer::zero_now_after_fault`] (zero at once) | zero for good |
//!
//! A soft start waits until the request is at most `soft_start_force` and
//! `soft_start_torque`, then ramps the permitted magnitude from zero to full
//! over `soft_start_ticks`. Any trip during a shutdown ramp cuts it short.
//!
//! The end of a recording ([`DeviceError::EndOfRecording`]) is not a fault:
//! `read` passes it through without tripping and the output stays as it
//! was; the servo answers it with [`SafetyLayer::shutdown`], the same ramp
//! as a stop request. So is [`DeviceError::Lost`], a lost device that is
//! not to be waited for, whether the device itself says so or the layer
//! does ([`SafetyLayer::with_on_disconnect`]); it reports `Disconnected`
//! first (a counted trip, zero output), so the ramp starts from zero.
//!
//! Each trip episode (from the moment its condition appears until it
//! clears) counts once in [`SafetyCounters`] and sets
//! [`SafetyLayer::last_trip`]; the caller logs by watching those, off the
//! servo thread. Nothing on the per-tick path allocates, locks or makes a
//! syscall beyond the device's own I/O.

use crate::device::{DeviceCapabilities, DeviceError, DeviceSample, HapticDevice, Wrench};
use crate::rate::ServoRate;
/// What the safety layer lets through, and why it trips, in the protocol's
/// vocabulary.
pub use haptic_schema::{SafetyState, TripCause};
use nalgebra::Vector3;
use std::time::Duration;

/// Limits the safety layer enforces; every per-tick quantity is per `write`.
#[derive(Clone, Debug, PartialEq)]
pub struct SafetyLimits {
    /// Largest force magnitude (N).
    pub max_force: f64,
    /// Largest torque magnitude (N·m).
    pub max_torque: f64,
    /// Largest change of the force vector per tick (N).
    pub max_force_step: f64,
    /// Largest change of the torque vector per tick (N·m).
    pub max_torque_step: f64,
    /// A soft start begins only once the requested force is at most this (N).
    pub soft_start_force: f64,
    /// A soft start begins only once the requested torque is at most this (N·m).
    pub soft_start_torque: f64,
    /// Ticks over which a soft start ramps the permitted magnitude from 0 to full.
    pub soft_start_ticks: u32,
    /// A sample whose timestamp repeats on more than this many consecutive
    /// reads is stale.
    pub stale_ticks: u32,
    /// Ticks over which [`SafetyLayer::shutdown`] ramps the output to zero.
    pub shutdown_ticks: u32,
    /// Reads between two reconnection attempts of a lost device.
    pub reconnect_ticks: u32,
}

impl SafetyLimits {
    /// Limits for a device, for a servo loop at `rate`:
    ///
    /// - magnitudes: the device's `max_force` and `max_torque`;
    /// - change per tick: a tenth of full scale, so full scale takes 10 ticks
    ///   (10 ms at 1 kHz), faster than a wall at the 2 kN/m of a desk-top
    ///   device builds force at a brisk 0.4 m/s (0.8 N per ms of 8 N), while a
    ///   one-tick jump to full force is impossible;
    /// - soft start: begins below 5 % of full scale (a hand resting on the
    ///   handle, not pressing into a wall), ramps over 0.5 s;
    /// - stale: the timestamp unchanged for 10 ms or 3 device sample periods,
    ///   whichever is longer (slow HID devices repeat samples between reports);
    /// - shutdown: ramps to zero over 10 ms;
    /// - reconnection: tried every 100 ms, so reopening a device does not
    ///   load the servo thread.
    pub fn from_capabilities(capabilities: &DeviceCapabilities, rate: ServoRate) -> Self {
        let sample_period_s = if capabilities.native_rate > 0.0 {
            1.0 / capabilities.native_rate
        } else {
            0.0
        };
        let max_force = capabilities.max_force.max(0.0);
        let max_torque = capabilities.max_torque.max(0.0);
        Self {
            max_force,
            max_torque,
            max_force_step: max_force / 10.0,
            max_torque_step: max_torque / 10.0,
            soft_start_force: 0.05 * max_force,
            soft_start_torque: 0.05 * max_torque,
            soft_start_ticks: rate.ticks(0.5),
            stale_ticks: rate.ticks(f64::max(0.010, 3.0 * sample_period_s)),
            shutdown_ticks: rate.ticks(0.010),
            reconnect_ticks: rate.ticks(0.1),
        }
    }
}

/// The bit of `cause` in the set of active trip conditions.
const fn bit(cause: TripCause) -> u8 {
    1 << cause as u8
}

/// Trip episodes so far, one field per [`TripCause`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SafetyCounters {
    pub stale: u64,
    pub sample_not_finite: u64,
    pub request_not_finite: u64,
    pub overrun: u64,
    pub disconnected: u64,
    pub device_error: u64,
    pub shutdown: u64,
}

impl SafetyCounters {
    /// Trip episodes of every cause.
    pub fn total(&self) -> u64 {
        self.stale
            + self.sample_not_finite
            + self.request_not_finite
            + self.overrun
            + self.disconnected
            + self.device_error
            + self.shutdown
    }

    fn count(&mut self, cause: TripCause) {
        let counter = match cause {
            TripCause::Stale => &mut self.stale,
            TripCause::SampleNotFinite => &mut self.sample_not_finite,
            TripCause::RequestNotFinite => &mut self.request_not_finite,
            TripCause::Overrun => &mut self.overrun,
            TripCause::Disconnected => &mut self.disconnected,
            TripCause::DeviceError => &mut self.device_error,
            TripCause::Shutdown => &mut self.shutdown,
        };
        *counter += 1;
    }
}

/// The start of a trip episode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TripEvent {
    pub cause: TripCause,
    /// Ticks (writes) before the trip.
    pub tick: u64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    WaitForSmall,
    Ramp { elapsed: u32 },
    Run,
    ShuttingDown { from: Wrench, elapsed: u32 },
    Off,
}

/// What a lost device does to the run (`[device] on_disconnect`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnDisconnect {
    /// Zero force, a reconnection every `reconnect_ticks` reads, a soft
    /// start when the device is back.
    #[default]
    Wait,
    /// Zero force, one `Disconnected` read (the counted trip), then
    /// [`DeviceError::Lost`] from every read: the servo ramps down from
    /// zero and the run ends.
    Stop,
}

/// Reopens a lost device in place.
pub type ReconnectHook<D> = Box<dyn FnMut(&mut D) -> Result<(), DeviceError> + Send>;

/// A device behind the safety layer: limits, soft start and trips as in
/// docs/devices.md, “The safety layer”.
pub struct SafetyLayer<D: HapticDevice> {
    device: D,
    limits: SafetyLimits,
    capabilities: DeviceCapabilities,
    reconnect: Option<ReconnectHook<D>>,
    on_disconnect: OnDisconnect,
    phase: Phase,
    active: u8,
    commanded: Wrench,
    last_timestamp: Option<Duration>,
    repeats: u32,
    overrun_since_write: bool,
    retry_in: u32,
    tick: u64,
    counters: SafetyCounters,
    last_trip: Option<TripEvent>,
}

fn clamp_norm(v: Vector3<f64>, max: f64) -> Vector3<f64> {
    let norm = v.norm();
    if norm > max {
        v * (max / norm)
    } else {
        v
    }
}

fn step_towards(from: Vector3<f64>, to: Vector3<f64>, max_step: f64) -> Vector3<f64> {
    from + clamp_norm(to - from, max_step)
}

fn limited_capabilities(device: &DeviceCapabilities, limits: &SafetyLimits) -> DeviceCapabilities {
    DeviceCapabilities {
        max_force: device.max_force.min(limits.max_force),
        max_torque: device.max_torque.min(limits.max_torque),
        ..device.clone()
    }
}

fn sample_is_finite(sample: &DeviceSample) -> bool {
    let finite = |v: &Vector3<f64>| v.iter().all(|x| x.is_finite());
    finite(&sample.position.coords)
        && sample.orientation.coords.iter().all(|x| x.is_finite())
        && sample.linear_velocity.as_ref().is_none_or(finite)
        && sample.angular_velocity.as_ref().is_none_or(finite)
}

impl<D: HapticDevice> SafetyLayer<D> {
    /// Wraps `device` with [`SafetyLimits::from_capabilities`] at
    /// [`ServoRate::DEFAULT`]; output starts with a soft start.
    pub fn new(device: D) -> Self {
        let limits = SafetyLimits::from_capabilities(device.capabilities(), ServoRate::DEFAULT);
        Self {
            capabilities: limited_capabilities(device.capabilities(), &limits),
            device,
            limits,
            reconnect: None,
            on_disconnect: OnDisconnect::Wait,
            phase: Phase::WaitForSmall,
            active: 0,
            commanded: Wrench::ZERO,
            last_timestamp: None,
            repeats: 0,
            overrun_since_write: false,
            retry_in: 0,
            tick: 0,
            counters: SafetyCounters::default(),
            last_trip: None,
        }
    }

    /// Replaces the limits.
    pub fn with_limits(mut self, limits: SafetyLimits) -> Self {
        self.capabilities = limited_capabilities(self.device.capabilities(), &limits);
        self.limits = limits;
        self
    }

    /// Sets how a lost device is reopened; called every
    /// [`SafetyLimits::reconnect_ticks`] reads while lost, before a read is
    /// tried. Without a hook, the device is simply read again.
    pub fn with_reconnect(
        mut self,
        hook: impl FnMut(&mut D) -> Result<(), DeviceError> + Send + 'static,
    ) -> Self {
        self.reconnect = Some(Box::new(hook));
        self
    }

    /// Sets what a lost device does: waits for it ([`OnDisconnect::Wait`],
    /// the default) or ends the run ([`OnDisconnect::Stop`]).
    pub fn with_on_disconnect(mut self, on_disconnect: OnDisconnect) -> Self {
        self.on_disconnect = on_disconnect;
        self
    }

    /// The limits in force.
    pub fn limits(&self) -> &SafetyLimits {
        &self.limits
    }

    /// The wrapped device.
    pub fn device(&self) -> &D {
        &self.device
    }

    /// The wrapped device, mutably.
    pub fn device_mut(&mut self) -> &mut D {
        &mut self.device
    }

    /// The wrench last sent to the device.
    pub fn commanded(&self) -> Wrench {
        self.commanded
    }

    /// Trip episodes so far.
    pub fn counters(&self) -> SafetyCounters {
        self.counters
    }

    /// The most recent trip.
    pub fn last_trip(&self) -> Option<TripEvent> {
        self.last_trip
    }

    /// Whether the condition behind `cause` is present now.
    pub fn is_tripped(&self, cause: TripCause) -> bool {
        self.active & bit(cause) != 0
    }

    /// Where the layer stands after the last read, write or trip.
    pub fn state(&self) -> SafetyState {
        match self.phase {
            Phase::ShuttingDown { .. } => SafetyState::ShuttingDown,
            Phase::Off => SafetyState::Off,
            _ if self.active != 0 => SafetyState::Tripped,
            Phase::WaitForSmall => SafetyState::WaitingForSmallRequest,
            Phase::Ramp { .. } => SafetyState::Ramping,
            Phase::Run => SafetyState::Normal,
        }
    }

    /// While [`SafetyState::Ramping`], the fraction of the limits the last
    /// write was held to.
    pub fn ramp_fraction(&self) -> Option<f64> {
        match self.phase {
            Phase::Ramp { elapsed } if self.state() == SafetyState::Ramping => {
                Some(elapsed as f64 / self.limits.soft_start_ticks as f64)
            }
            _ => None,
        }
    }

    /// Called by the servo when a tick missed its deadline: zeroes the
    /// output now. The episode lasts until a tick passes without an overrun:
    /// the next write is still zero, and the first write after one without
    /// a new overrun resumes under the force-rate limit from zero, without
    /// a soft start (a wall does not vanish for half a second because of
    /// one late tick).
    pub fn report_overrun(&mut self) {
        self.overrun_since_write = true;
        if self.trip(TripCause::Overrun) {
            self.zero_now();
        }
    }

    /// Ramps the output to zero over [`SafetyLimits::shutdown_ticks`] writes,
    /// then writes zero for good.
    pub fn shutdown(&mut self) {
        if self.is_tripped(TripCause::Shutdown) {
            return;
        }
        let others = self.active;
        self.trip(TripCause::Shutdown);
        self.phase = if others != 0 || self.limits.shutdown_ticks == 0 {
            Phase::Off
        } else {
            Phase::ShuttingDown {
                from: self.commanded,
                elapsed: 0,
            }
        };
    }

    /// Zeroes the output now and for good: [`shutdown`](Self::shutdown)
    /// without the ramp.
    pub fn abort(&mut self) {
        self.trip(TripCause::Shutdown);
        self.phase = Phase::Off;
        self.zero_now();
    }

    /// Zeroes the output now and for good, after the caller itself failed
    /// (the servo thread panicked): trips [`TripCause::Shutdown`], latches
    /// [`SafetyState::Off`] and writes zero straight to the device, once,
    /// ignoring any error. It relies on no state beyond the device, so it
    /// is safe to call whatever the caller was doing when it failed.
    pub fn zero_now_after_fault(&mut self) {
        self.trip(TripCause::Shutdown);
        self.phase = Phase::Off;
        self.commanded = Wrench::ZERO;
        // Best effort: nothing can be done about a failure here.
        let _ = self.device.write(&Wrench::ZERO);
    }

    /// Starts an episode of `cause` unless one is under way; true if it
    /// started. Every cause but [`TripCause::Overrun`] ends in a soft start;
    /// an overrun keeps the phase, so output resumes under the rate limit
    /// alone.
    fn trip(&mut self, cause: TripCause) -> bool {
        if self.is_tripped(cause) {
            return false;
        }
        self.active |= bit(cause);
        self.counters.count(cause);
        self.last_trip = Some(TripEvent {
            cause,
            tick: self.tick,
        });
        self.phase = match self.phase {
            Phase::ShuttingDown { .. } | Phase::Off => Phase::Off,
            phase if cause == TripCause::Overrun => phase,
            _ => Phase::WaitForSmall,
        };
        true
    }

    fn clear(&mut self, cause: TripCause) {
        self.active &= !bit(cause);
    }

    fn lose(&mut self) {
        if self.trip(TripCause::Disconnected) {
            self.retry_in = self.limits.reconnect_ticks;
            self.last_timestamp = None;
            self.commanded = Wrench::ZERO;
            // Best effort: a lost device usually refuses this too.
            let _ = self.device.write(&Wrench::ZERO);
        }
    }

    fn zero_now(&mut self) {
        // `send` has already handled a failure.
        let _ = self.send(Wrench::ZERO);
    }

    fn send(&mut self, wrench: Wrench) -> Result<(), DeviceError> {
        self.commanded = wrench;
        match self.device.write(&wrench) {
            Err(DeviceError::Disconnected) => {
                self.lose();
                Err(DeviceError::Disconnected)
            }
            Err(error) => {
                self.trip(TripCause::DeviceError);
                Err(error)
            }
            Ok(()) => Ok(()),
        }
    }

    /// `request` clamped to `fraction` of the limits and rate-limited from
    /// the last commanded wrench.
    fn limit(&self, request: &Wrench, fraction: f64) -> Wrench {
        let l = &self.limits;
        Wrench {
            force: step_towards(
                self.commanded.force,
                clamp_norm(request.force, l.max_force * fraction),
                l.max_force_step,
            ),
            torque: step_towards(
                self.commanded.torque,
                clamp_norm(request.torque, l.max_torque * fraction),
                l.max_torque_step,
            ),
        }
    }

    fn ramp(&mut self, request: &Wrench, elapsed: u32) -> Wrench {
        let elapsed = elapsed.saturating_add(1);
        let fraction = if elapsed >= self.limits.soft_start_ticks {
            self.phase = Phase::Run;
            1.0
        } else {
            self.phase = Phase::Ramp { elapsed };
            elapsed as f64 / self.limits.soft_start_ticks as f64
        };
        self.limit(request, fraction)
    }
}

impl<D: HapticDevice> HapticDevice for SafetyLayer<D> {
    /// The device's capabilities with force and torque lowered to the limits.
    fn capabilities(&self) -> &DeviceCapabilities {
        &self.capabilities
    }

    /// Reads the device and checks the sample. While the device is lost this
    /// returns `Disconnected` and tries to reconnect (with
    /// [`OnDisconnect::Stop`], `Lost` instead); a non-finite sample is
    /// withheld as [`DeviceError::SampleNotFinite`].
    /// [`DeviceError::EndOfRecording`] is passed through without a trip and
    /// without touching the output: the end of a recording is not a fault,
    /// and the caller ends the run with [`SafetyLayer::shutdown`].
    fn read(&mut self) -> Result<DeviceSample, DeviceError> {
        if self.is_tripped(TripCause::Disconnected) {
            if self.on_disconnect == OnDisconnect::Stop {
                return Err(DeviceError::Lost);
            }
            if self.retry_in > 0 {
                self.retry_in -= 1;
                return Err(DeviceError::Disconnected);
            }
            self.retry_in = self.limits.reconnect_ticks;
            if let Some(reconnect) = self.reconnect.as_mut() {
                if reconnect(&mut self.device).is_err() {
                    return Err(DeviceError::Disconnected);
                }
            }
        }
        let sample = match self.device.read() {
            Ok(sample) => sample,
            Err(e @ (DeviceError::EndOfRecording | DeviceError::Lost)) => return Err(e),
            Err(DeviceError::Disconnected) => {
                self.lose();
                return Err(DeviceError::Disconnected);
            }
            Err(error) => {
                let cause = match error {
                    DeviceError::Stale { .. } => TripCause::Stale,
                    // A device that checks its own samples.
                    DeviceError::SampleNotFinite => TripCause::SampleNotFinite,
                    _ => TripCause::DeviceError,
                };
                if self.trip(cause) {
                    self.zero_now();
                }
                return Err(error);
            }
        };
        self.clear(TripCause::Disconnected);
        self.clear(TripCause::DeviceError);
        if !sample_is_finite(&sample) {
            if self.trip(TripCause::SampleNotFinite) {
                self.zero_now();
            }
            return Err(DeviceError::SampleNotFinite);
        }
        self.clear(TripCause::SampleNotFinite);
        if self.last_timestamp == Some(sample.timestamp) {
            self.repeats = self.repeats.saturating_add(1);
        } else {
            self.last_timestamp = Some(sample.timestamp);
            self.repeats = 0;
        }
        if self.repeats > self.limits.stale_ticks {
            if self.trip(TripCause::Stale) {
                self.zero_now();
            }
        } else {
            self.clear(TripCause::Stale);
        }
        Ok(sample)
    }

    /// Writes `request` within the limits, or zero while tripped, waiting
    /// for a small request, or shut down.
    fn write(&mut self, request: &Wrench) -> Result<(), DeviceError> {
        self.tick += 1;
        if self.overrun_since_write {
            self.overrun_since_write = false;
        } else {
            self.clear(TripCause::Overrun);
        }
        if request.is_finite() {
            self.clear(TripCause::RequestNotFinite);
        } else {
            self.trip(TripCause::RequestNotFinite);
        }
        let wrench = match self.phase {
            Phase::Off => Wrench::ZERO,
            Phase::ShuttingDown { from, elapsed } => {
                let elapsed = elapsed + 1;
                if elapsed >= self.limits.shutdown_ticks {
                    self.phase = Phase::Off;
                    Wrench::ZERO
                } else {
                    self.phase = Phase::ShuttingDown { from, elapsed };
                    let scale = 1.0 - elapsed as f64 / self.limits.shutdown_ticks as f64;
                    Wrench {
                        force: from.force * scale,
                        torque: from.torque * scale,
                    }
                }
            }
            // The phase to resume in was set when the trip began.
            _ if self.active != 0 => Wrench::ZERO,
            Phase::WaitForSmall => {
                if request.force.norm() <= self.limits.soft_start_force
                    && request.torque.norm() <= self.limits.soft_start_torque
                {
                    self.ramp(request, 0)
                } else {
                    Wrench::ZERO
                }
            }
            Phase::Ramp { elapsed } => self.ramp(request, elapsed),
            Phase::Run => self.limit(request, 1.0),
        };
        self.send(wrench)
    }
}
