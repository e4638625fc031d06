mod common;

use common::{press_into_corner, rig};
use haptic_devices::{
    DeviceCapabilities, DeviceError, DeviceSample, HapticDevice, SafetyState, SimulatedClock,
    SimulatedDevice, Wrench,
};
use haptic_servo::{
    PhysicsSnapshot, ServoConfig, ServoThread, STATE_NOT_RENDERED, STATE_SLIDING, STATE_STATIC,
};
use nalgebra::{Point3, UnitQuaternion};
use std::time::Duration;

const DT: Duration = Duration::from_millis(1);

#[test]
fn stepped_run_renders_contacts_within_limits() {
    let device = SimulatedDevice::new(press_into_corner(), SimulatedClock::Stepped(DT));
    let limits = SimulatedDevice::default_capabilities();
    let mut rig = rig(device, 1024);
    let ticks = 800;
    let mut records = Vec::new();
    for i in 0..ticks {
        rig.physics.publish(PhysicsSnapshot { sequence: i });
        rig.tick.run(DT * i as u32);
        let written = rig.tick.safety().device().last_wrench();
        assert!(written.is_finite());
        assert!(written.force.norm() <= limits.max_force + 1e-9);
        assert!(written.torque.norm() <= limits.max_torque + 1e-9);
        if i % 100 == 99 {
            records.extend(rig.telemetry.drain());
        }
    }
    assert_eq!(records.len(), ticks as usize);
    assert_eq!(rig.tick.telemetry_dropped(), 0);
    for (i, record) in records.iter().enumerate() {
        assert_eq!(record.tick, i as u64);
        assert_eq!(record.physics_sequence, i as u64);
    }
    let in_contact = records.iter().filter(|r| r.contacts > 0).count();
    assert!(in_contact > 100, "{in_contact} ticks in contact");
    let last = records.last().unwrap();
    assert!(matches!(last.state, STATE_STATIC | STATE_SLIDING));
    assert!(last.collision_ns > 0);
    let written = rig.tick.safety().device().last_wrench();
    assert!(written.force.norm() > 1.0, "{written:?}");
    assert_eq!(rig.tick.faults().read, 0);
}

/// Fails every third read and returns a NaN position every third.
struct FaultyDevice {
    capabilities: DeviceCapabilities,
    reads: u32,
    last_wrench: Option<Wrench>,
}

impl HapticDevice for FaultyDevice {
    fn capabilities(&self) -> &DeviceCapabilities {
        &self.capabilities
    }

    fn read(&mut self) -> Result<DeviceSample, DeviceError> {
        self.reads += 1;
        let x = match self.reads % 3 {
            0 => return Err(DeviceError::Io(String::new())),
            1 => f64::NAN,
            _ => 0.0,
        };
        Ok(DeviceSample {
            timestamp: Duration::from_millis(self.reads.into()),
            position: Point3::new(x, 0.0, 0.0),
            orientation: UnitQuaternion::identity(),
            buttons: 0,
            linear_velocity: None,
            angular_velocity: None,
        })
    }

    fn write(&mut self, wrench: &Wrench) -> Result<(), DeviceError> {
        self.last_wrench = Some(*wrench);
        Ok(())
    }
}

#[test]
fn device_faults_write_zero_and_are_counted() {
    let mut rig = rig(
        FaultyDevice {
            capabilities: SimulatedDevice::default_capabilities(),
            reads: 0,
            last_wrench: None,
        },
        64,
    );
    for i in 0..30 {
        let record = rig.tick.run(DT * i);
        if i % 3 != 1 {
            assert_eq!(record.state, STATE_NOT_RENDERED);
            assert_eq!(rig.tick.safety().device().last_wrench, Some(Wrench::ZERO));
        }
    }
    assert_eq!(rig.tick.faults().read, 20);
    assert_eq!(rig.tick.faults().write, 0);
    assert_eq!(rig.telemetry.drain().count(), 30);
}

#[test]
fn thread_runs_near_1_khz_and_ramps_down_on_stop() {
    let device = SimulatedDevice::new(press_into_corner(), SimulatedClock::Wall);
    let rig = rig(device, 4096);
    let config = ServoConfig::default();
    let handle = ServoThread::spawn(config.clone(), rig.tick).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let (stats, tick) = handle.stop();

    let expected = stats.elapsed.as_secs_f64() * config.rate_hz;
    let ticks = stats.ticks as f64;
    println!(
        "ticks {} in {:?} (expected {expected:.0}), overruns {}, skipped {}, realtime {}",
        stats.ticks, stats.elapsed, stats.overruns, stats.skipped, stats.realtime
    );
    println!(
        "period error p50 {:?} p90 {:?} p99 {:?} p99.9 {:?} max {:?}",
        stats.latency.quantile(0.5),
        stats.latency.quantile(0.9),
        stats.latency.quantile(0.99),
        stats.latency.quantile(0.999),
        stats.latency.max()
    );
    println!(
        "mean tick {:?}, max tick {:?}; faults {:?}; safety {:?}",
        Duration::from_nanos(stats.stages.tick.total_ns / stats.ticks),
        Duration::from_nanos(stats.stages.tick.max_ns),
        stats.faults,
        stats.safety
    );
    assert!(stats.elapsed >= Duration::from_millis(500));
    assert!(
        (ticks - expected).abs() <= 0.2 * expected,
        "{ticks} ticks, {expected} expected"
    );
    assert!((ticks - 500.0).abs() <= 0.2 * 500.0, "{ticks} ticks");
    assert_eq!(stats.latency.total(), stats.ticks);
    assert_eq!(stats.safety.shutdown, 1);
    assert_eq!(tick.safety().state(), SafetyState::Off);
    assert_eq!(tick.safety().device().last_wrench(), Wrench::ZERO);
    assert_eq!(tick.ticks(), stats.ticks);
}
