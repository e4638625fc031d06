//! The safety layer: one test per limit and per trip.

use haptic_devices::{
    DeviceCapabilities, DeviceError, DeviceSample, HapticDevice, OnDisconnect, SafetyLayer,
    SafetyLimits, SafetyState, ServoRate, TripCause, Wrench,
};
use nalgebra::{Point3, UnitQuaternion, Vector3};
use std::time::Duration;

/// A 1 kHz device that records writes and can be told to misbehave.
struct TestDevice {
    capabilities: DeviceCapabilities,
    time: Duration,
    frozen: bool,
    report_stale: bool,
    nan_sample: bool,
    connected: bool,
    plugged_in: bool,
    writes: Vec<Wrench>,
}

impl TestDevice {
    fn new() -> Self {
        Self {
            capabilities: DeviceCapabilities {
                name: "test".to_owned(),
                input_dof: 6,
                output_dof: 6,
                workspace_half_extents: Vector3::repeat(0.1),
                max_force: 8.0,
                max_torque: 0.5,
                max_stiffness: 2000.0,
                native_rate: 1000.0,
            },
            time: Duration::ZERO,
            frozen: false,
            report_stale: false,
            nan_sample: false,
            connected: true,
            plugged_in: true,
            writes: Vec::new(),
        }
    }

    /// Unplugs the device: reads and writes fail until it is plugged in
    /// and reopened.
    fn unplug(&mut self) {
        self.connected = false;
        self.plugged_in = false;
    }

    fn reopen(&mut self) -> Result<(), DeviceError> {
        self.connected = self.plugged_in;
        if self.connected {
            Ok(())
        } else {
            Err(DeviceError::Disconnected)
        }
    }
}

impl HapticDevice for TestDevice {
    fn capabilities(&self) -> &DeviceCapabilities {
        &self.capabilities
    }

    fn read(&mut self) -> Result<DeviceSample, DeviceError> {
        if !self.connected {
            return Err(DeviceError::Disconnected);
        }
        if self.report_stale {
            return Err(DeviceError::Stale {
                age: Duration::from_millis(50),
            });
        }
        if !self.frozen {
            self.time += Duration::from_millis(1);
        }
        let x = if self.nan_sample { f64::NAN } else { 0.0 };
        Ok(DeviceSample {
            timestamp: self.time,
            position: Point3::new(x, 0.0, 0.0),
            orientation: UnitQuaternion::identity(),
            buttons: 0,
            linear_velocity: Some(Vector3::zeros()),
            angular_velocity: None,
        })
    }

    fn write(&mut self, wrench: &Wrench) -> Result<(), DeviceError> {
        if !self.connected {
            return Err(DeviceError::Disconnected);
        }
        self.writes.push(*wrench);
        Ok(())
    }
}

type Layer = SafetyLayer<TestDevice>;

fn default_limits() -> SafetyLimits {
    SafetyLimits::from_capabilities(TestDevice::new().capabilities(), ServoRate::DEFAULT)
}

fn layer(limits: SafetyLimits) -> Layer {
    SafetyLayer::new(TestDevice::new())
        .with_limits(limits)
        .with_reconnect(TestDevice::reopen)
}

fn force(x: f64, y: f64, z: f64) -> Wrench {
    Wrench {
        force: Vector3::new(x, y, z),
        torque: Vector3::zeros(),
    }
}

/// One servo tick; returns what reached the device.
fn tick(layer: &mut Layer, request: Wrench) -> Wrench {
    let _ = layer.read();
    let _ = layer.write(&request);
    last_write(layer)
}

fn last_write(layer: &Layer) -> Wrench {
    layer
        .device()
        .writes
        .last()
        .copied()
        .unwrap_or(Wrench::ZERO)
}

/// A layer past its soft start, commanding `request`.
fn running(limits: SafetyLimits, request: Wrench) -> Layer {
    let mut layer = layer(limits);
    for _ in 0..=layer.limits().soft_start_ticks {
        tick(&mut layer, Wrench::ZERO);
    }
    assert_eq!(layer.state(), SafetyState::Normal);
    for _ in 0..100 {
        tick(&mut layer, request);
    }
    assert!((last_write(&layer).force - request.force).norm() < 1e-12);
    layer
}

/// Ticks until the soft start is over, with a small request first.
fn soft_start(layer: &mut Layer) {
    tick(layer, Wrench::ZERO);
    for _ in 0..layer.limits().soft_start_ticks {
        tick(layer, Wrench::ZERO);
    }
    assert_eq!(layer.state(), SafetyState::Normal);
}

#[test]
fn defaults_follow_the_device() {
    let l = default_limits();
    assert_eq!((l.max_force, l.max_torque), (8.0, 0.5));
    assert!((l.max_force_step - 0.8).abs() < 1e-12);
    assert!((l.max_torque_step - 0.05).abs() < 1e-12);
    assert_eq!(
        (
            l.soft_start_ticks,
            l.stale_ticks,
            l.shutdown_ticks,
            l.reconnect_ticks
        ),
        (500, 10, 10, 100)
    );
    // A slow (125 Hz) device repeats samples for 8 ticks: stale after 3 periods.
    let mut slow = TestDevice::new().capabilities;
    slow.native_rate = 125.0;
    assert_eq!(
        SafetyLimits::from_capabilities(&slow, ServoRate::DEFAULT).stale_ticks,
        24
    );
    // The layer reports the lowered limits as its capabilities.
    let limits = SafetyLimits {
        max_force: 3.0,
        ..default_limits()
    };
    assert_eq!(layer(limits).capabilities().max_force, 3.0);
}

#[test]
fn clamp_keeps_the_requested_direction() {
    let limits = SafetyLimits {
        max_force_step: f64::INFINITY,
        max_torque_step: f64::INFINITY,
        soft_start_ticks: 0,
        ..default_limits()
    };
    let mut layer = layer(limits);
    tick(&mut layer, Wrench::ZERO);
    let request = Wrench {
        force: Vector3::new(30.0, 40.0, 0.0),
        torque: Vector3::new(0.0, 0.0, -2.0),
    };
    let out = tick(&mut layer, request);
    assert!(
        (out.force - Vector3::new(4.8, 6.4, 0.0)).norm() < 1e-12,
        "{out:?}"
    );
    assert!(
        (out.torque - Vector3::new(0.0, 0.0, -0.5)).norm() < 1e-12,
        "{out:?}"
    );
    // Below the limit passes unchanged.
    let small = force(1.0, -2.0, 3.0);
    assert_eq!(tick(&mut layer, small), small);
}

#[test]
fn rate_limit_bounds_the_change_per_tick() {
    let mut layer = running(default_limits(), Wrench::ZERO);
    let step = Wrench {
        force: Vector3::new(0.0, 0.0, 8.0),
        torque: Vector3::new(0.5, 0.0, 0.0),
    };
    let mut previous = Wrench::ZERO;
    for k in 1..=12 {
        let out = tick(&mut layer, step);
        let expected = (0.8 * k as f64).min(8.0);
        assert!((out.force.z - expected).abs() < 1e-12, "tick {k}: {out:?}");
        assert!((out.torque.x - (0.05 * k as f64).min(0.5)).abs() < 1e-12);
        assert!((out.force - previous.force).norm() <= 0.8 + 1e-12);
        previous = out;
    }
    // Releasing is rate-limited too.
    let out = tick(&mut layer, Wrench::ZERO);
    assert!((out.force.z - 7.2).abs() < 1e-12);
}

#[test]
fn soft_start_waits_for_a_small_request_then_ramps() {
    let mut layer = layer(default_limits());
    let large = force(20.0, 0.0, 0.0);
    for _ in 0..50 {
        assert_eq!(tick(&mut layer, large), Wrench::ZERO);
    }
    assert_eq!(layer.state(), SafetyState::WaitingForSmallRequest);
    // 0.3 N is below the 0.4 N threshold: the ramp starts.
    let first = tick(&mut layer, force(0.3, 0.0, 0.0));
    assert!(first.force.norm() <= 8.0 / 500.0 + 1e-12);
    for k in 2..=500 {
        let out = tick(&mut layer, large);
        let envelope = 8.0 * k as f64 / 500.0;
        assert!(out.force.norm() <= envelope + 1e-12, "tick {k}: {out:?}");
        if k < 500 {
            assert!(matches!(layer.state(), SafetyState::Ramping));
        }
    }
    assert_eq!(layer.state(), SafetyState::Normal);
    assert!((tick(&mut layer, large).force.x - 8.0).abs() < 1e-12);
}

#[test]
fn stale_timestamps_zero_the_output_once_per_episode() {
    let request = force(1.0, 0.0, 0.0);
    let mut layer = running(default_limits(), request);
    layer.device_mut().frozen = true;
    // Every frozen sample repeats the last timestamp; 10 repeats are tolerated.
    for _ in 0..10 {
        assert_eq!(tick(&mut layer, request), request);
    }
    assert_eq!(tick(&mut layer, request), Wrench::ZERO);
    for _ in 0..20 {
        assert_eq!(tick(&mut layer, request), Wrench::ZERO);
    }
    assert_eq!(layer.counters().stale, 1);
    assert_eq!(layer.last_trip().unwrap().cause, TripCause::Stale);
    // Fresh samples: a soft start, not a jump back to 1 N.
    layer.device_mut().frozen = false;
    assert_eq!(tick(&mut layer, request), Wrench::ZERO);
    assert_eq!(layer.state(), SafetyState::WaitingForSmallRequest);
    soft_start(&mut layer);
    // A device that reports staleness itself trips at once.
    layer.device_mut().report_stale = true;
    assert!(matches!(layer.read(), Err(DeviceError::Stale { .. })));
    assert_eq!(last_write(&layer), Wrench::ZERO);
    assert_eq!(layer.counters().stale, 2);
}

#[test]
fn nan_in_sample_zeroes_and_counts() {
    let request = force(2.0, 0.0, 0.0);
    let mut layer = running(default_limits(), request);
    layer.device_mut().nan_sample = true;
    let writes = layer.device().writes.len();
    assert!(matches!(layer.read(), Err(DeviceError::SampleNotFinite)));
    // Zeroed at once, before the servo writes.
    assert_eq!(layer.device().writes.len(), writes + 1);
    assert_eq!(last_write(&layer), Wrench::ZERO);
    for _ in 0..5 {
        assert_eq!(tick(&mut layer, request), Wrench::ZERO);
    }
    assert_eq!(layer.counters().sample_not_finite, 1);
    assert!(layer.is_tripped(TripCause::SampleNotFinite));
    layer.device_mut().nan_sample = false;
    assert_eq!(tick(&mut layer, request), Wrench::ZERO);
    assert!(!layer.is_tripped(TripCause::SampleNotFinite));
    soft_start(&mut layer);
}

#[test]
fn nan_in_request_zeroes_and_counts() {
    let mut layer = running(default_limits(), force(2.0, 0.0, 0.0));
    let bad = Wrench {
        force: Vector3::new(1.0, 0.0, 0.0),
        torque: Vector3::new(0.0, f64::NAN, 0.0),
    };
    for _ in 0..5 {
        assert_eq!(tick(&mut layer, bad), Wrench::ZERO);
    }
    let infinite = force(f64::INFINITY, 0.0, 0.0);
    assert_eq!(tick(&mut layer, infinite), Wrench::ZERO);
    assert_eq!(layer.counters().request_not_finite, 1);
    assert_eq!(tick(&mut layer, force(2.0, 0.0, 0.0)), Wrench::ZERO);
    assert_eq!(layer.state(), SafetyState::WaitingForSmallRequest);
    soft_start(&mut layer);
}

#[test]
fn overrun_zeroes_and_counts() {
    let request = force(2.0, 0.0, 0.0);
    let mut layer = running(default_limits(), request);
    layer.report_overrun();
    // Zeroed at once, before the next write.
    assert_eq!(last_write(&layer), Wrench::ZERO);
    assert_eq!(layer.counters().overrun, 1);
    assert_eq!(layer.state(), SafetyState::Tripped);
    // Overruns on consecutive ticks are one episode.
    for _ in 0..5 {
        assert_eq!(tick(&mut layer, request), Wrench::ZERO);
        layer.report_overrun();
    }
    assert_eq!(layer.counters().overrun, 1);
    // The write after the last overrun is still zero; the next one ends the
    // episode and resumes at once, under the rate limit only.
    assert_eq!(tick(&mut layer, request), Wrench::ZERO);
    let out = tick(&mut layer, request);
    assert!((out.force.x - 0.8).abs() < 1e-12, "{out:?}");
    assert_eq!(layer.state(), SafetyState::Normal);
    assert!(!layer.is_tripped(TripCause::Overrun));
    layer.report_overrun();
    assert_eq!(layer.counters().overrun, 2);
    assert_eq!(layer.counters().total(), 2);
    layer.shutdown();
    assert_eq!(layer.counters().total(), 3);
}

/// A wall pressed at full force: one overrun zeroes the overrun tick, then
/// the force is back at full scale within the 10 ticks of the force-rate
/// limit, without waiting for the user to back off or a soft start.
#[test]
fn an_overrun_in_sustained_contact_resumes_under_the_rate_limit() {
    let wall = force(0.0, 0.0, 8.0);
    let mut layer = running(default_limits(), wall);
    assert_eq!(tick(&mut layer, wall), wall);
    layer.report_overrun();
    assert_eq!(last_write(&layer), Wrench::ZERO);
    // The overrun tick's episode: the next write is still zero.
    assert_eq!(tick(&mut layer, wall), Wrench::ZERO);
    assert_eq!(layer.state(), SafetyState::Tripped);
    for k in 1..=12 {
        let out = tick(&mut layer, wall);
        let expected = (0.8 * k as f64).min(8.0);
        assert!((out.force.z - expected).abs() < 1e-12, "tick {k}: {out:?}");
        assert_eq!(layer.state(), SafetyState::Normal);
    }
    assert_eq!(layer.counters().overrun, 1);
    assert_eq!(layer.counters().total(), 1);
}

/// During a soft start an overrun keeps the ramp where it was: the output
/// resumes within the ramp's envelope instead of starting it again.
#[test]
fn an_overrun_during_the_soft_start_keeps_the_ramp() {
    let mut layer = layer(default_limits());
    let request = force(0.2, 0.0, 0.0);
    for _ in 0..100 {
        tick(&mut layer, request);
    }
    let Some(fraction) = layer.ramp_fraction() else {
        panic!("{:?}", layer.state());
    };
    assert_eq!(layer.state(), SafetyState::Ramping);
    assert!((fraction - 0.2).abs() < 1e-12, "{fraction}");
    layer.report_overrun();
    assert_eq!(tick(&mut layer, request), Wrench::ZERO);
    assert_eq!(layer.state(), SafetyState::Tripped);
    // Resumes at once: 0.2 N is within the 20 % envelope and one step.
    assert_eq!(tick(&mut layer, request), request);
    let Some(fraction) = layer.ramp_fraction() else {
        panic!("{:?}", layer.state());
    };
    assert_eq!(layer.state(), SafetyState::Ramping);
    assert!((fraction - 0.202).abs() < 1e-12, "{fraction}");
    // Other causes still wait for a small request, even during an overrun.
    layer.report_overrun();
    layer.device_mut().nan_sample = true;
    let _ = layer.read();
    layer.device_mut().nan_sample = false;
    let large = force(5.0, 0.0, 0.0);
    for _ in 0..5 {
        assert_eq!(tick(&mut layer, large), Wrench::ZERO);
    }
    assert_eq!(layer.state(), SafetyState::WaitingForSmallRequest);
}

#[test]
fn disconnect_zeroes_then_reconnect_soft_starts() {
    let request = force(2.0, 0.0, 0.0);
    let mut layer = running(default_limits(), request);
    layer.device_mut().unplug();
    assert_eq!(layer.read(), Err(DeviceError::Disconnected));
    assert_eq!(layer.write(&request), Err(DeviceError::Disconnected));
    assert_eq!(layer.commanded(), Wrench::ZERO);
    assert_eq!(layer.state(), SafetyState::Tripped);
    assert_eq!(layer.counters().disconnected, 1);
    // Still unplugged: reconnection attempts fail, one episode.
    for _ in 0..250 {
        assert_eq!(layer.read(), Err(DeviceError::Disconnected));
        let _ = layer.write(&request);
    }
    assert_eq!(layer.counters().disconnected, 1);
    layer.device_mut().plugged_in = true;
    let mut reads = 0;
    while layer.read().is_err() {
        let _ = layer.write(&request);
        reads += 1;
    }
    assert!(reads <= 100, "reconnected after {reads} reads");
    // Back: zero until the request is small, then a soft start.
    layer.write(&request).unwrap();
    assert_eq!(last_write(&layer), Wrench::ZERO);
    assert_eq!(layer.state(), SafetyState::WaitingForSmallRequest);
    let first = tick(&mut layer, force(0.1, 0.0, 0.0));
    assert!(first.force.norm() <= 8.0 / 500.0 + 1e-12);
    assert!(matches!(layer.state(), SafetyState::Ramping));
}

#[test]
fn a_device_lost_with_on_disconnect_stop_ends_the_run_from_zero() {
    let request = force(2.0, 0.0, 0.0);
    let mut layer = running(default_limits(), request).with_on_disconnect(OnDisconnect::Stop);
    layer.device_mut().unplug();
    // The loss itself: a counted trip, zero at once.
    assert_eq!(layer.read(), Err(DeviceError::Disconnected));
    assert_eq!(layer.write(&request), Err(DeviceError::Disconnected));
    assert_eq!(layer.commanded(), Wrench::ZERO);
    // Then `Lost`, whether or not the device comes back: no reconnection.
    layer.device_mut().plugged_in = true;
    for _ in 0..250 {
        assert_eq!(layer.read(), Err(DeviceError::Lost));
        let _ = layer.write(&request);
        assert_eq!(layer.commanded(), Wrench::ZERO);
    }
    assert_eq!(layer.counters().disconnected, 1);
    assert!(!layer.device().connected, "reopened");
    // The servo's answer to `Lost`: the shutdown ramp, from zero.
    layer.shutdown();
    for _ in 0..20 {
        let _ = tick(&mut layer, request);
        assert_eq!(layer.commanded(), Wrench::ZERO);
    }
    assert_eq!(layer.state(), SafetyState::Off);
}

#[test]
fn shutdown_ramps_to_zero_and_latches() {
    let request = force(4.0, 0.0, -3.0);
    let mut layer = running(default_limits(), request);
    layer.shutdown();
    assert_eq!(layer.state(), SafetyState::ShuttingDown);
    for k in 1..=10 {
        let out = tick(&mut layer, request);
        let expected = request.force * (1.0 - k as f64 / 10.0);
        assert!((out.force - expected).norm() < 1e-12, "tick {k}: {out:?}");
    }
    assert_eq!(layer.state(), SafetyState::Off);
    assert_eq!(last_write(&layer), Wrench::ZERO);
    layer.shutdown();
    for _ in 0..1000 {
        assert_eq!(tick(&mut layer, Wrench::ZERO), Wrench::ZERO);
        assert_eq!(tick(&mut layer, request), Wrench::ZERO);
    }
    assert_eq!(layer.state(), SafetyState::Off);
    assert_eq!(layer.counters().shutdown, 1);
}

#[test]
fn abort_zeroes_at_once_and_latches() {
    let request = force(4.0, 0.0, -3.0);
    let mut layer = running(default_limits(), request);
    layer.abort();
    // Zeroed before the next write, without a ramp.
    assert_eq!(last_write(&layer), Wrench::ZERO);
    assert_eq!(layer.state(), SafetyState::Off);
    for _ in 0..100 {
        assert_eq!(tick(&mut layer, request), Wrench::ZERO);
    }
    assert_eq!(layer.counters().shutdown, 1);

    // During a shutdown ramp: cut short, still one episode.
    let mut layer = running(default_limits(), request);
    layer.shutdown();
    assert_ne!(tick(&mut layer, request), Wrench::ZERO);
    layer.abort();
    assert_eq!(last_write(&layer), Wrench::ZERO);
    assert_eq!(layer.state(), SafetyState::Off);
    assert_eq!(tick(&mut layer, request), Wrench::ZERO);
    assert_eq!(layer.counters().shutdown, 1);
}

#[test]
fn a_trip_during_shutdown_zeroes_at_once() {
    let request = force(4.0, 0.0, 0.0);
    let mut layer = running(default_limits(), request);
    layer.shutdown();
    tick(&mut layer, request);
    layer.report_overrun();
    assert_eq!(last_write(&layer), Wrench::ZERO);
    assert_eq!(layer.state(), SafetyState::Off);
    assert_eq!(tick(&mut layer, request), Wrench::ZERO);
}

/// A recording that ends: reads report [`DeviceError::EndOfRecording`].
struct Ending {
    device: TestDevice,
    reads_left: u32,
}

impl HapticDevice for Ending {
    fn capabilities(&self) -> &DeviceCapabilities {
        self.device.capabilities()
    }

    fn read(&mut self) -> Result<DeviceSample, DeviceError> {
        if self.reads_left == 0 {
            return Err(DeviceError::EndOfRecording);
        }
        self.reads_left -= 1;
        self.device.read()
    }

    fn write(&mut self, wrench: &Wrench) -> Result<(), DeviceError> {
        self.device.write(wrench)
    }
}

#[test]
fn the_end_of_a_recording_is_no_trip_and_shutdown_ramps() {
    let request = force(4.0, 0.0, -3.0);
    let mut layer = SafetyLayer::new(Ending {
        device: TestDevice::new(),
        reads_left: 700,
    })
    .with_limits(default_limits());
    // A soft start, then pressing.
    for i in 0..700 {
        let _ = layer.read().unwrap();
        layer
            .write(if i < 550 { &Wrench::ZERO } else { &request })
            .unwrap();
    }
    assert_eq!(layer.state(), SafetyState::Normal);
    let writes = layer.device().device.writes.len();
    assert_eq!(layer.read(), Err(DeviceError::EndOfRecording));
    // Passed through: no trip, nothing written, the output as it was.
    assert_eq!(layer.device().device.writes.len(), writes);
    assert_eq!(layer.counters().total(), 0);
    assert_eq!(layer.last_trip(), None);
    assert_eq!(layer.state(), SafetyState::Normal);
    assert_eq!(layer.commanded(), request);
    // The servo's answer: the same ramp as a stop request.
    layer.shutdown();
    for k in 1..=10 {
        assert_eq!(layer.read(), Err(DeviceError::EndOfRecording));
        layer.write(&Wrench::ZERO).unwrap();
        let out = layer.commanded();
        let expected = request.force * (1.0 - k as f64 / 10.0);
        assert!((out.force - expected).norm() < 1e-12, "tick {k}: {out:?}");
    }
    assert_eq!(layer.state(), SafetyState::Off);
    assert_eq!(layer.device().device.writes.last(), Some(&Wrench::ZERO));
    assert_eq!(layer.counters().device_error, 0);
    assert_eq!(layer.counters().total(), 1);
}

#[test]
fn zero_now_after_fault_writes_zero_at_once_and_latches() {
    let request = force(4.0, 0.0, -3.0);
    let mut layer = running(default_limits(), request);
    let writes = layer.device().writes.len();
    layer.zero_now_after_fault();
    assert_eq!(layer.device().writes.len(), writes + 1);
    assert_eq!(last_write(&layer), Wrench::ZERO);
    assert_eq!(layer.commanded(), Wrench::ZERO);
    assert_eq!(layer.state(), SafetyState::Off);
    assert_eq!(layer.counters().shutdown, 1);
    assert_eq!(layer.last_trip().unwrap().cause, TripCause::Shutdown);
    for _ in 0..20 {
        assert_eq!(tick(&mut layer, request), Wrench::ZERO);
    }
    // Also in the middle of a shutdown ramp, and on a lost device (best
    // effort: the failed write is ignored).
    let mut layer = running(default_limits(), request);
    layer.shutdown();
    assert_ne!(tick(&mut layer, request), Wrench::ZERO);
    layer.zero_now_after_fault();
    assert_eq!(last_write(&layer), Wrench::ZERO);
    assert_eq!(layer.state(), SafetyState::Off);
    assert_eq!(layer.counters().shutdown, 1);
    layer.device_mut().unplug();
    layer.zero_now_after_fault();
    assert_eq!(layer.state(), SafetyState::Off);
}
