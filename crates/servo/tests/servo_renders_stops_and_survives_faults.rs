mod common;

use common::{press_into_corner, rig, rig_with};
use haptic_contact::total_wrench;
use haptic_devices::{
    DeviceCapabilities, DeviceError, DeviceSample, HapticDevice, SafetyState, SimulatedClock,
    SimulatedDevice, TripCause, Wrench,
};
use haptic_friction::FrictionState;
use haptic_render::{FrictionVerdict, RenderError, RenderParameters, RenderingUpdate};
use haptic_servo::{
    LatencyHistogram, ParameterUpdate, PhysicsSnapshot, ServoConfig, ServoThread, Stage,
    ThreadSchedule,
};
use nalgebra::{Isometry3, Point3, UnitQuaternion, Vector3, Vector6};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const DT: Duration = Duration::from_millis(1);

/// The errno of an I/O error, for reads that fail.
const EIO: i32 = 5;

#[test]
fn stepped_run_renders_contacts_within_limits() {
    let device = SimulatedDevice::new(press_into_corner(), SimulatedClock::Stepped(DT));
    let limits = SimulatedDevice::default_capabilities();
    let mut rig = rig(device, 1024);
    let ticks = 800;
    let mut records = Vec::new();
    for i in 0..ticks {
        rig.physics.publish_with(|snapshot| snapshot.sequence = i);
        rig.tick.run(DT * i as u32, Duration::ZERO);
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
    let motion = press_into_corner();
    for (i, record) in records.iter().enumerate() {
        assert_eq!(record.tick, i as u64);
        assert_eq!(record.physics_sequence, i as u64);
        let handle = motion.state_at((DT * i as u32).as_secs_f64()).position;
        assert_eq!(record.device_position, <[f64; 3]>::from(handle.coords));
        assert_eq!(record.device_orientation, [1.0, 0.0, 0.0, 0.0]);
        let q = Vector3::new(
            record.tool_orientation[1],
            record.tool_orientation[2],
            record.tool_orientation[3],
        );
        let norm = (record.tool_orientation[0].powi(2) + q.norm_squared()).sqrt();
        assert!((norm - 1.0).abs() < 1e-12);
        assert_eq!(record.safety_trips, 0);
    }
    // A soft start over the first 0.5 s, then full limits.
    assert!(matches!(records[10].safety_state, SafetyState::Ramping));
    assert_eq!(records[700].safety_state, SafetyState::Normal);
    // Pressed in: the tool crossed the 0.5 mm gap into the floor and the
    // wall, but stays well short of the handle, 4 mm in.
    let (first, last) = (records[0], records[ticks as usize - 1]);
    for axis in [0, 2] {
        let moved = first.tool_position[axis] - last.tool_position[axis];
        assert!((0.0005..0.002).contains(&moved), "{axis}: {moved}");
    }
    let in_contact = records.iter().filter(|r| r.contacts > 0).count();
    assert!(in_contact > 100, "{in_contact} ticks in contact");
    let last = records.last().unwrap();
    assert!(matches!(
        last.friction_state(),
        Some(FrictionState::Static | FrictionState::Sliding)
    ));
    assert_eq!(
        last.friction_state(),
        last.verdict.map(FrictionVerdict::state)
    );
    // The simulated device takes forces: the rendered wrench was written.
    assert_eq!(last.rendered_force, last.force);
    assert!(last.stage_ns[Stage::Collision] > 0);
    let written = rig.tick.safety().device().last_wrench();
    assert!(written.force.norm() > 1.0, "{written:?}");
    assert_eq!(rig.tick.faults().read, 0);

    rig.tick.safety_mut().shutdown();
    let record = rig.tick.run(DT * ticks as u32, DT / 10);
    assert_eq!(record.safety_state, SafetyState::ShuttingDown);
    assert_eq!(record.safety_trips, 1);
    assert_eq!(record.wake_latency_ns, 100_000);
    for i in 1..=10 {
        rig.tick.run(DT * (ticks as u32 + i), Duration::ZERO);
    }
    let record = rig.telemetry.drain().last().unwrap();
    assert_eq!(record.safety_state, SafetyState::Off);
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
            0 => return Err(DeviceError::Os(EIO)),
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
        let record = rig.tick.run(DT * i, Duration::ZERO);
        if i % 3 != 1 {
            assert_eq!(record.verdict, None);
            assert_eq!(rig.tick.safety().device().last_wrench, Some(Wrench::ZERO));
            assert_eq!(record.device_position, [0.0; 3]);
            assert_eq!(record.device_orientation, [1.0, 0.0, 0.0, 0.0]);
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
    let (stats, tick) = handle.stop().unwrap();

    let expected = stats.elapsed.as_secs_f64() * config.rate.hz();
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
        "tick time mean {:?} p99 {:?} max {:?}; faults {:?}; safety {:?}",
        stats.tick_time.mean(),
        stats.tick_time.quantile(0.99),
        stats.tick_time.max(),
        stats.faults,
        stats.safety
    );
    // The servo's clock starts a period after its set-up, and an overrun
    // during the stop ramp zeroes the force at once (the safety layer's
    // rule), so the run may end up to a period short of the sleep.
    assert!(stats.elapsed + config.rate.period() >= Duration::from_millis(500));
    // Every period of the run is either ticked or skipped, so the schedule
    // is 1 kHz however loaded the machine; most periods were ticked. (How
    // long the 500 ms sleep above lasts depends on the load, so the tick
    // count is taken against the servo's own elapsed time.)
    let scheduled = (stats.ticks + stats.skipped) as f64;
    assert!(
        (scheduled - expected).abs() <= 0.1 * expected,
        "{scheduled} periods, {expected} expected"
    );
    assert!(
        ticks >= 0.5 * expected,
        "{ticks} ticks, {expected} expected"
    );
    assert_eq!(stats.latency.total(), stats.ticks);
    assert_eq!(stats.tick_time.total(), stats.ticks);
    let slowest = Duration::from_nanos(stats.stages.tick.max_ns);
    assert!(stats.tick_time.max() >= slowest && stats.tick_time.max() <= slowest * 1001 / 1000);
    assert_eq!(stats.safety.shutdown, 1);
    assert_eq!(tick.safety().state(), SafetyState::Off);
    assert_eq!(tick.safety().device().last_wrench(), Wrench::ZERO);
    assert_eq!(tick.ticks(), stats.ticks);
}

#[test]
fn physics_snapshots_move_the_environment() {
    let device = SimulatedDevice::new(press_into_corner(), SimulatedClock::Stepped(DT));
    let mut rig = rig(device, 1024);
    let run = |rig: &mut common::Rig<SimulatedDevice>, i: u32| rig.tick.run(DT * i, Duration::ZERO);
    for i in 0..300 {
        run(&mut rig, i);
    }
    assert!(run(&mut rig, 300).contacts > 0);
    let corner = rig.tick.cycle().scene().environment()[0].pose;

    // One pose per object is applied; an extra one is ignored.
    let away = Isometry3::translation(-0.5, 0.0, -0.5);
    rig.physics.publish(PhysicsSnapshot {
        sequence: 7,
        environment_poses: vec![away, Isometry3::identity()],
        ..PhysicsSnapshot::new(Vec::new())
    });
    let record = run(&mut rig, 301);
    assert_eq!(record.physics_sequence, 7);
    assert_eq!(rig.tick.cycle().scene().environment()[0].pose, away);
    assert_eq!(record.contacts, 0);

    // Too few poses leave the rest where they are.
    rig.physics.publish(PhysicsSnapshot::new(Vec::new()));
    let record = run(&mut rig, 302);
    assert_eq!(record.physics_sequence, 0);
    assert_eq!(rig.tick.cycle().scene().environment()[0].pose, away);

    // Without a new snapshot nothing changes.
    assert_eq!(run(&mut rig, 303).physics_sequence, 0);

    rig.physics.publish(PhysicsSnapshot {
        sequence: 9,
        environment_poses: vec![corner],
        ..PhysicsSnapshot::new(Vec::new())
    });
    let record = run(&mut rig, 304);
    assert_eq!(record.physics_sequence, 9);
    assert!(record.contacts > 0);
}

/// Torque of wrench `w` (about `from`) moved to be about `to`.
fn about(w: &Vector6<f64>, from: &Vector3<f64>, to: &Vector3<f64>) -> Vector6<f64> {
    let force = w.fixed_rows::<3>(0).into_owned();
    let torque = w.fixed_rows::<3>(3) + (from - to).cross(&force);
    Vector6::new(force.x, force.y, force.z, torque.x, torque.y, torque.z)
}

#[test]
fn tool_state_carries_the_poses_and_the_reaction_on_each_object() {
    let device = SimulatedDevice::new(press_into_corner(), SimulatedClock::Stepped(DT));
    // The corner twice, the second copy 2 cm along its edge: the cube
    // presses into both, and their origins differ.
    let mut rig = rig_with(device, 1024, |mut environment| {
        let mut shifted = environment[0].clone();
        shifted.pose = Isometry3::translation(0.0, 0.02, 0.0);
        environment.push(shifted);
        environment
    });
    let mut offset = None;
    let mut pressed = 0;
    let mut largest_friction = 0.0f64;
    for i in 0..400u32 {
        let record = rig.tick.run(DT * i, Duration::ZERO);
        let state = rig.tool.read().clone();
        assert_eq!(state.tick, u64::from(i));
        assert_eq!(state.time, DT * i);
        assert_eq!(&state.tool_pose, rig.tick.cycle().tool_pose());
        assert_eq!(
            record.tool_position,
            <[f64; 3]>::from(state.tool_pose.translation.vector)
        );
        // The manipulandum is the handle placed by the fixed mapping.
        let placed = state.manipulandum.translation.vector - Vector3::from(record.device_position);
        assert!((placed - *offset.get_or_insert(placed)).norm() < 1e-12);
        assert_eq!(state.manipulandum.rotation, UnitQuaternion::identity());

        let scene = rig.tick.cycle().scene();
        assert_eq!(state.contact_wrenches.len(), 2);
        let x = scene.pose().translation.vector;
        // The penalty forces and the friction at each contact.
        let friction: Vector6<f64> = scene
            .contacts()
            .iter()
            .zip(rig.tick.cycle().contact_friction())
            .map(|(contact, f)| {
                let torque = contact.handle.cross(&f.force);
                Vector6::new(
                    f.force.x, f.force.y, f.force.z, torque.x, torque.y, torque.z,
                )
            })
            .sum();
        let on_tool = total_wrench(scene.contacts()) + friction;
        largest_friction = largest_friction.max(friction.fixed_rows::<3>(0).norm());
        let on_objects: Vector6<f64> = state
            .contact_wrenches
            .iter()
            .zip(scene.environment())
            .map(|(w, object)| about(w, &object.pose.translation.vector, &x))
            .sum();
        assert!(
            (on_objects + on_tool).norm() <= 1e-9 * (1.0 + on_tool.norm()),
            "tick {i}: {on_objects:?} vs {on_tool:?}"
        );
        if scene.contacts().is_empty() {
            assert!(state
                .contact_wrenches
                .iter()
                .all(|w| *w == Vector6::zeros()));
        }
        if i >= 250 {
            // Held in the corner: each object is pushed into the floor (−z)
            // and the wall (−x).
            for w in &state.contact_wrenches {
                assert!(w.iter().all(|v| v.is_finite()));
                assert!(w[0] < -0.1 && w[2] < -0.1, "tick {i}: {w:?}");
            }
            pressed += 1;
        }
    }
    assert_eq!(pressed, 150);
    // The diagonal press sticks on both faces: the objects take its
    // friction too (about 1 N of the 3 N along each axis).
    assert!(largest_friction > 0.5, "friction {largest_friction} N");
}

#[test]
fn abort_zeroes_and_ends_without_the_ramp() {
    let device = SimulatedDevice::new(press_into_corner(), SimulatedClock::Wall);
    let mut rig = rig(device, 4096);
    let handle = ServoThread::spawn(ServoConfig::default(), rig.tick).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(!handle.is_finished());
    handle.abort();
    // A later stop request does not turn the abort into a ramp.
    handle.request_stop();
    let started = Instant::now();
    while !handle.is_finished() {
        assert!(started.elapsed() < Duration::from_secs(1), "still running");
        std::thread::sleep(Duration::from_millis(1));
    }
    let (stats, tick) = handle.join().unwrap();
    assert_eq!(tick.safety().state(), SafetyState::Off);
    assert_eq!(tick.safety().device().last_wrench(), Wrench::ZERO);
    assert_eq!(stats.safety.shutdown, 1);
    assert_eq!(tick.ticks(), stats.ticks);
    let records: Vec<_> = rig.telemetry.drain().collect();
    assert_eq!(records.len() as u64, stats.ticks);
    // The abort ran no further tick: no ramp, and no record shows the end.
    assert!(
        records
            .iter()
            .all(|r| r.safety_state != SafetyState::ShuttingDown
                && r.safety_state != SafetyState::Off)
    );
}

/// Plays a [`SimulatedDevice`] for `reads` reads, then reports the end of
/// its recording.
struct Recording {
    device: SimulatedDevice,
    reads: u32,
}

impl HapticDevice for Recording {
    fn capabilities(&self) -> &DeviceCapabilities {
        self.device.capabilities()
    }

    fn read(&mut self) -> Result<DeviceSample, DeviceError> {
        if self.reads == 0 {
            return Err(DeviceError::EndOfRecording);
        }
        self.reads -= 1;
        self.device.read()
    }

    fn write(&mut self, wrench: &Wrench) -> Result<(), DeviceError> {
        self.device.write(wrench)
    }
}

#[test]
fn thread_ends_by_itself_when_the_recording_ends() {
    let device = Recording {
        device: SimulatedDevice::new(press_into_corner(), SimulatedClock::Wall),
        reads: 300,
    };
    let mut rig = rig(device, 4096);
    let handle = ServoThread::spawn(ServoConfig::default(), rig.tick).unwrap();
    let started = Instant::now();
    while !handle.is_finished() {
        assert!(started.elapsed() < Duration::from_secs(5), "still running");
        std::thread::sleep(Duration::from_millis(10));
    }
    let (stats, tick) = handle.join().unwrap();
    assert!(tick.device_ended());
    assert_eq!(tick.safety().state(), SafetyState::Off);
    assert_eq!(tick.safety().device().device.last_wrench(), Wrench::ZERO);
    // The end of the recording is neither a read fault nor a trip.
    assert_eq!(tick.faults().read, 0);
    assert_eq!(stats.faults.read, 0);
    assert_eq!(stats.safety.device_error, 0);
    assert_eq!(stats.safety.shutdown, 1);
    let records: Vec<_> = rig.telemetry.drain().collect();
    assert_eq!(records.len() as u64, stats.ticks);
    assert!(records[..300].iter().all(|r| r.verdict.is_some()));
    assert!(records[300..].iter().all(|r| r.verdict.is_none()));
    assert!(records
        .iter()
        .all(|r| r.last_trip != Some(TripCause::DeviceError)));
    let last = records.last().unwrap();
    assert_eq!(last.safety_state, SafetyState::Off);
    assert_eq!(last.safety_trips, stats.safety.total());
    // The ramp down from the last rendered tick's force, the tick that hit
    // the end being its first step: non-increasing, ending at zero.
    let force = |r: &haptic_servo::TickRecord| Vector3::from(r.force);
    let from = force(&records[299]);
    let ramp = &records[300..];
    assert!(!ramp.is_empty() && ramp.len() <= 10, "{} ticks", ramp.len());
    let mut previous = from.norm();
    for r in ramp {
        assert!(force(r).norm() <= previous + 1e-12, "{r:?}");
        previous = force(r).norm();
    }
    assert_eq!(force(last), Vector3::zeros());
    if stats.safety.total() == 1 {
        // No overrun cut the ramp short or zeroed its start: exactly the
        // ten steps of a stop request, from a pressing force.
        assert!(from.norm() > 0.5, "{from:?}");
        assert_eq!(stats.ticks, 310);
        for (k, r) in ramp.iter().enumerate() {
            let expected = from * (1.0 - (k + 1) as f64 / 10.0);
            assert!((force(r) - expected).norm() < 1e-12, "step {k}: {r:?}");
            let state = if k < 9 {
                SafetyState::ShuttingDown
            } else {
                SafetyState::Off
            };
            assert_eq!(r.safety_state, state, "step {k}");
        }
    } else {
        println!(
            "{} overrun episodes: ramp not checked step by step",
            stats.safety.overrun
        );
    }
}

/// The same end of a recording with the tick stepped by hand: the tick
/// that reads the end starts the shutdown ramp from the last commanded
/// wrench, ten ticks to zero, with no fault and no trip but the shutdown.
#[test]
fn the_end_of_a_recording_ramps_down_like_a_stop() {
    let device = Recording {
        device: SimulatedDevice::new(press_into_corner(), SimulatedClock::Stepped(DT)),
        reads: 800,
    };
    let mut rig = rig(device, 1024);
    for i in 0..800 {
        let record = rig.tick.run(DT * i, Duration::ZERO);
        assert!(record.verdict.is_some());
    }
    assert!(!rig.tick.device_ended());
    let from = rig.tick.safety().commanded();
    assert!(from.force.norm() > 1.0, "{from:?}");
    for k in 1..=12u32 {
        let record = rig.tick.run(DT * (800 + k), Duration::ZERO);
        assert!(rig.tick.device_ended());
        assert_eq!(record.verdict, None);
        let scale = (1.0 - f64::from(k) / 10.0).max(0.0);
        let written = rig.tick.safety().device().device.last_wrench();
        assert!(
            (written.force - from.force * scale).norm() < 1e-12
                && (written.torque - from.torque * scale).norm() < 1e-12,
            "tick {k}: {written:?}"
        );
        let state = if k < 10 {
            SafetyState::ShuttingDown
        } else {
            SafetyState::Off
        };
        assert_eq!(record.safety_state, state, "tick {k}");
    }
    assert_eq!(rig.tick.faults().read, 0);
    let counters = rig.tick.safety().counters();
    assert_eq!((counters.device_error, counters.shutdown), (0, 1));
    assert_eq!(counters.total(), 1);
}

#[test]
fn latency_histogram_statistics() {
    let mut histogram = LatencyHistogram::default();
    assert_eq!(histogram.total(), 0);
    assert_eq!(histogram.quantile(0.5), Duration::ZERO);
    assert_eq!(histogram.max(), Duration::ZERO);
    assert_eq!(histogram.mean(), Duration::ZERO);
    for us in 1..=1000 {
        histogram.record(Duration::from_micros(us));
    }
    histogram.record(Duration::from_micros(500));
    let within = |got: Duration, want_us: f64| {
        let got = got.as_secs_f64() * 1e6;
        assert!(
            (got - want_us).abs() <= 1e-3 * want_us,
            "{got} µs, want {want_us} µs"
        );
    };
    assert_eq!(histogram.total(), 1001);
    within(histogram.min(), 1.0);
    within(histogram.max(), 1000.0);
    within(histogram.mean(), 500.5);
    within(histogram.quantile(0.5), 500.0);
    within(histogram.quantile(0.99), 990.0);
    within(histogram.quantile(2.0), 1000.0);
    let recorded: Vec<_> = histogram.iter_recorded().collect();
    assert_eq!(recorded.iter().map(|(_, n)| n).sum::<u64>(), 1001);
    assert!(recorded.windows(2).all(|w| w[0].0 < w[1].0));
    let (at, count) = recorded
        .iter()
        .find(|(value, _)| *value >= Duration::from_micros(500))
        .unwrap();
    within(*at, 500.0);
    assert_eq!(*count, 2);
    assert_eq!(histogram.histogram().len(), 1001);
}

/// Held still in the corner, then 2 cm up and 1 cm sideways with the
/// clutch held, then on: the tool stays put while declutched, the device
/// gets zero, and on release the tool carries on from where it was with
/// the same force, without a jump.
#[test]
fn the_clutch_holds_the_tool_and_reindexes_on_release() {
    use haptic_devices::{Motion, MotionConfig, SegmentConfig};
    let motion = Motion::try_from(MotionConfig {
        start_position_m: [0.0; 3],
        start_rotation_rad: [0.0; 3],
        repeat: false,
        segments: vec![
            SegmentConfig::Line {
                to_m: [-0.004, 0.0, -0.004],
                duration_s: 0.2,
            },
            SegmentConfig::Hold { duration_s: 0.6 },
            SegmentConfig::Line {
                to_m: [0.006, 0.0, 0.016],
                duration_s: 0.3,
            },
            SegmentConfig::Hold { duration_s: 0.5 },
        ],
    })
    .unwrap();
    let device = SimulatedDevice::new(motion, SimulatedClock::Stepped(DT));
    let mut rig = rig(device, 2048);
    rig.tick = rig.tick.with_clutch(3);
    let mut records = Vec::new();
    for i in 0..1600u32 {
        let held = (750..1200).contains(&i);
        rig.tick
            .safety_mut()
            .device_mut()
            .set_buttons(if held { 1 << 3 } else { 0 });
        records.push(rig.tick.run(DT * i, Duration::ZERO));
    }
    let force = |r: &haptic_servo::TickRecord| Vector3::from(r.force);
    let tool = |r: &haptic_servo::TickRecord| Vector3::from(r.tool_position);
    let before = &records[749];
    assert!(force(before).norm() > 1.0, "{before:?}");
    assert!(!before.clutched && records[750].clutched);
    // Declutched: zero within the force-rate limit's few ticks, tool put.
    for r in &records[760..1200] {
        assert!(r.clutched);
        assert_eq!(force(r).norm(), 0.0, "{r:?}");
        assert!((tool(r) - tool(before)).norm() < 1e-6, "{r:?}");
    }
    // The handle moved 2 cm meanwhile; on release the tool does not jump.
    let handle_moved =
        Vector3::from(records[1199].device_position) - Vector3::from(before.device_position);
    assert!(handle_moved.norm() > 0.015);
    for pair in records[1195..1300].windows(2) {
        assert!((tool(&pair[1]) - tool(&pair[0])).norm() < 1e-4);
    }
    // And presses as before, once the rate limit has brought the force back.
    let after = &records[1300];
    assert!(!after.clutched);
    assert!(
        (force(after) - force(before)).norm() < 0.05 * force(before).norm(),
        "{:?} against {:?}",
        force(after),
        force(before)
    );
}

/// Plays a [`SimulatedDevice`] and shares every wrench written, each with
/// whether it came after the panic; its read panics after `reads` reads.
struct PanicsAfter {
    device: SimulatedDevice,
    reads: u32,
    panicked: bool,
    writes: Arc<Mutex<Vec<(bool, Wrench)>>>,
}

impl HapticDevice for PanicsAfter {
    fn capabilities(&self) -> &DeviceCapabilities {
        self.device.capabilities()
    }

    fn read(&mut self) -> Result<DeviceSample, DeviceError> {
        if self.reads == 0 {
            self.panicked = true;
            panic!("the device driver failed");
        }
        self.reads -= 1;
        self.device.read()
    }

    fn write(&mut self, wrench: &Wrench) -> Result<(), DeviceError> {
        self.writes.lock().unwrap().push((self.panicked, *wrench));
        self.device.write(wrench)
    }
}

#[test]
fn a_panic_on_the_servo_thread_zeroes_the_device_and_is_returned() {
    let writes = Arc::new(Mutex::new(Vec::new()));
    let device = PanicsAfter {
        device: SimulatedDevice::new(press_into_corner(), SimulatedClock::Wall),
        reads: 700,
        panicked: false,
        writes: Arc::clone(&writes),
    };
    let rig = rig(device, 4096);
    let handle = ServoThread::spawn(ServoConfig::default(), rig.tick).unwrap();
    let started = Instant::now();
    while !handle.is_finished() {
        assert!(started.elapsed() < Duration::from_secs(5), "still running");
        std::thread::sleep(Duration::from_millis(10));
    }
    let payload = handle.join().err().expect("the servo thread panicked");
    assert_eq!(
        payload.downcast_ref::<&str>(),
        Some(&"the device driver failed")
    );
    let writes = writes.lock().unwrap();
    // 700 ticks' writes (and the zeros of any overruns), pressing; then,
    // after the panic, one write: zero.
    let (before, after): (Vec<_>, Vec<_>) = writes.iter().copied().partition(|(after, _)| !after);
    assert!(before.len() >= 700, "{} writes", before.len());
    let pressing = before
        .iter()
        .map(|(_, w)| w.force.norm())
        .fold(0.0, f64::max);
    assert!(pressing > 0.5, "{pressing} N");
    assert_eq!(after, [(true, Wrench::ZERO)]);
    assert_eq!(writes.last(), Some(&(true, Wrench::ZERO)));
    // Stopping a panicked servo reports the panic too.
    let device = PanicsAfter {
        device: SimulatedDevice::new(press_into_corner(), SimulatedClock::Wall),
        reads: 0,
        panicked: false,
        writes: Arc::new(Mutex::new(Vec::new())),
    };
    let handle = ServoThread::spawn(ServoConfig::default(), common::rig(device, 64).tick).unwrap();
    assert!(handle.stop().is_err());
}

/// A CPU number beyond what a CPU set holds is refused with a warning: the
/// thread carries on, unpinned.
#[test]
fn pinning_to_a_cpu_beyond_the_cpu_set_returns_normally() {
    let scratch = std::thread::spawn(|| {
        let affinity = || {
            // SAFETY: a zeroed cpu_set_t is valid, and the kernel fills it.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                assert_eq!(
                    libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut set),
                    0
                );
                set
            }
        };
        let before = affinity();
        let granted = ThreadSchedule {
            fifo_priority: None,
            cpu: Some(5000),
        }
        .apply("scratch");
        assert!(!granted);
        // SAFETY: CPU_EQUAL only reads both sets.
        assert!(unsafe { libc::CPU_EQUAL(&before, &affinity()) });
        // The largest CPU the set holds is tried (and refused by the kernel
        // on a machine with fewer CPUs) without harm either.
        ThreadSchedule {
            fifo_priority: None,
            cpu: Some(libc::CPU_SETSIZE as usize - 1),
        }
        .apply("scratch");
    });
    scratch.join().expect("the thread returned normally");
}

/// Plays a [`SimulatedDevice`] but fails the reads for which `fails` holds
/// (counting reads from 0).
struct Flaky {
    device: SimulatedDevice,
    reads: u32,
    fails: fn(u32) -> bool,
}

impl HapticDevice for Flaky {
    fn capabilities(&self) -> &DeviceCapabilities {
        self.device.capabilities()
    }

    fn read(&mut self) -> Result<DeviceSample, DeviceError> {
        let read = self.reads;
        self.reads += 1;
        if (self.fails)(read) {
            return Err(DeviceError::Os(EIO));
        }
        self.device.read()
    }

    fn write(&mut self, wrench: &Wrench) -> Result<(), DeviceError> {
        self.device.write(wrench)
    }
}

#[test]
fn a_failed_read_publishes_zero_contact_wrenches() {
    let device = Flaky {
        device: SimulatedDevice::new(press_into_corner(), SimulatedClock::Stepped(DT)),
        reads: 0,
        fails: |read| read == 300 || read == 302,
    };
    let mut rig = rig(device, 1024);
    for i in 0..300 {
        rig.tick.run(DT * i, Duration::ZERO);
    }
    let pressed = rig.tool.read().contact_wrenches[0];
    assert!(pressed.norm() > 0.1, "{pressed:?}");
    for i in 300..304u32 {
        let record = rig.tick.run(DT * i, Duration::ZERO);
        let state = rig.tool.read();
        assert_eq!(state.tick, u64::from(i));
        if i % 2 == 0 {
            // Nothing rendered: no contact wrench, though the last step's
            // contacts are still there.
            assert_eq!(record.verdict, None);
            assert!(!rig.tick.cycle().scene().contacts().is_empty());
            assert_eq!(state.contact_wrenches, vec![Vector6::zeros()]);
        } else {
            assert!(record.verdict.is_some());
            assert!(state.contact_wrenches[0].norm() > 0.1, "tick {i}");
        }
    }
    assert_eq!(rig.tick.faults().read, 2);
}

/// Held still with the corner pushed 1 mm into the cube from the start:
/// each tick adds the previous tick's contact wrench times its period (the
/// step between scheduled times, which a late tick lengthens) to the
/// impulse, held as the device holds its output; the first tick and the
/// ticks after failed reads add nothing.
#[test]
fn contact_impulses_hold_each_wrench_until_the_next_tick() {
    use haptic_devices::{Motion, MotionConfig, SegmentConfig};
    let hold = Motion::try_from(MotionConfig {
        start_position_m: [0.0; 3],
        start_rotation_rad: [0.0; 3],
        segments: vec![SegmentConfig::Hold { duration_s: 10.0 }],
        repeat: false,
    })
    .unwrap();
    let device = Flaky {
        device: SimulatedDevice::new(hold, SimulatedClock::Stepped(DT)),
        reads: 0,
        fails: |read| read % 50 == 49,
    };
    // The corner and a copy 2 cm along its edge, both 1.5 mm towards the
    // cube, which starts 0.5 mm off them.
    let mut rig = rig_with(device, 1024, |mut environment| {
        let towards = Isometry3::translation(0.0015, 0.0, 0.0015);
        environment[0].pose = towards * environment[0].pose;
        let mut shifted = environment[0].clone();
        shifted.pose = Isometry3::translation(0.0, 0.02, 0.0) * shifted.pose;
        environment.push(shifted);
        environment
    });
    let mut time = Duration::ZERO;
    let mut previous: Option<(Duration, Vec<Vector6<f64>>, Vec<Vector6<f64>>, bool)> = None;
    let mut constant = 0;
    let mut late = 0;
    for i in 0..600u32 {
        // Every 97th tick comes 3 periods late, as after an overrun.
        let period = if i % 97 == 96 { 3 * DT } else { DT };
        if i > 0 {
            time += period;
        }
        let record = rig.tick.run(time, Duration::ZERO);
        let state = rig.tool.read().clone();
        assert_eq!(state.contact_impulses.len(), 2);
        match &previous {
            None => {
                // The first tick is in contact but has no period yet.
                assert!(state.contact_wrenches[0].norm() > 0.1);
                assert_eq!(state.contact_impulses, vec![Vector6::zeros(); 2]);
            }
            Some((before, impulses, wrenches, rendered)) => {
                let dt = (time - *before).as_secs_f64();
                assert_eq!(dt, period.as_secs_f64());
                for (k, (now, then)) in state.contact_impulses.iter().zip(impulses).enumerate() {
                    let expected = then + wrenches[k] * dt;
                    assert!(
                        (now - expected).norm() <= 1e-12 * (1.0 + expected.norm()),
                        "tick {i}, object {k}: {now:?} vs {expected:?}"
                    );
                }
                if *rendered {
                    late += usize::from(period > DT);
                } else {
                    assert_eq!(&state.contact_impulses, impulses, "tick {i}");
                }
            }
        }
        // Settled into static contact: the wrench is constant, so the
        // impulse grows by the same amount per period.
        if i >= 300 && previous.as_ref().is_some_and(|p| p.3) {
            let (before, impulses, wrenches, _) = previous.as_ref().unwrap();
            let dt = (time - *before).as_secs_f64();
            let held = wrenches[0];
            assert!(held[0] < -0.1 && held[2] < -0.1, "tick {i}: {held:?}");
            let grown = (state.contact_impulses[0] - impulses[0]) / dt;
            assert!((grown - held).norm() <= 1e-9 * held.norm(), "tick {i}");
            constant += 1;
        }
        previous = Some((
            time,
            state.contact_impulses.clone(),
            state.contact_wrenches.clone(),
            record.verdict.is_some(),
        ));
    }
    assert!(constant > 250 && late > 3, "{constant} {late}");
    // Over the run, both objects were pushed out of the corner (−x, −z).
    let (_, total, _, _) = previous.unwrap();
    for impulse in &total {
        assert!(impulse[0] < -0.01 && impulse[2] < -0.01, "{impulse:?}");
    }
}

/// Re-indexing after a clutch keeps the device's axes: turned while
/// declutched, the handle still moves the tool along the workspace's axes.
#[test]
fn reindexing_keeps_the_workspace_axes() {
    use haptic_servo::WorkspaceMapping;
    let workspace = Isometry3::from_parts(
        Vector3::new(0.1, 0.0, 0.2).into(),
        UnitQuaternion::from_axis_angle(&Vector3::z_axis(), std::f64::consts::FRAC_PI_2),
    );
    let mut mapping = WorkspaceMapping::new(workspace, 2.0);
    let sample = |x: f64, turn: f64| DeviceSample {
        timestamp: Duration::ZERO,
        position: Point3::new(x, 0.01, 0.0),
        orientation: UnitQuaternion::from_axis_angle(&Vector3::x_axis(), turn),
        buttons: 0,
        linear_velocity: None,
        angular_velocity: None,
    };
    // Without a re-index: offset · (scale p, R).
    let s = sample(0.02, 0.3);
    let expected =
        workspace * Isometry3::from_parts((s.position.coords * 2.0).into(), s.orientation);
    assert!((mapping.manipulandum(&s).to_homogeneous() - expected.to_homogeneous()).norm() < 1e-12);

    // The tool was left at `held`; the handle comes back turned by 0.5 rad.
    let held = Isometry3::from_parts(
        Vector3::new(0.3, -0.1, 0.05).into(),
        UnitQuaternion::from_axis_angle(&Vector3::y_axis(), 0.2),
    );
    let at_release = sample(0.0, 0.8);
    mapping.reindex(&at_release, &held);
    let picked_up = mapping.manipulandum(&at_release);
    assert!((picked_up.to_homogeneous() - held.to_homogeneous()).norm() < 1e-12);
    // 1 cm along the device's x: 2 cm along the workspace's x (scene y).
    let moved = mapping.manipulandum(&sample(0.01, 0.8));
    let step = moved.translation.vector - held.translation.vector;
    assert!(
        (step - Vector3::new(0.0, 0.02, 0.0)).norm() < 1e-12,
        "{step}"
    );
    assert!(moved.rotation.angle_to(&held.rotation) < 1e-12);
    // Turning the handle turns the tool by as much.
    let turned = mapping.manipulandum(&sample(0.0, 1.0));
    assert!((turned.rotation.angle_to(&held.rotation) - 0.2).abs() < 1e-12);
}

/// Plays a [`SimulatedDevice`] but reports the handle `far` metres away on
/// read `at`: finite, so the safety layer passes it, but far enough that
/// the coupling force overflows and the tool pose comes out
/// non-finite.
struct Flung {
    device: SimulatedDevice,
    reads: u32,
    at: u32,
    far: f64,
}

impl HapticDevice for Flung {
    fn capabilities(&self) -> &DeviceCapabilities {
        self.device.capabilities()
    }

    fn read(&mut self) -> Result<DeviceSample, DeviceError> {
        let read = self.reads;
        self.reads += 1;
        let mut sample = self.device.read()?;
        if read == self.at {
            sample.position.x = self.far;
        }
        Ok(sample)
    }

    fn write(&mut self, wrench: &Wrench) -> Result<(), DeviceError> {
        self.device.write(wrench)
    }
}

#[test]
fn a_quarantined_pose_is_flagged_and_counted() {
    let device = Flung {
        device: SimulatedDevice::new(press_into_corner(), SimulatedClock::Stepped(DT)),
        reads: 0,
        at: 20,
        far: 1e306,
    };
    let mut rig = rig(device, 1024);
    let records: Vec<_> = (0..400)
        .map(|i| rig.tick.run(DT * i, Duration::ZERO))
        .collect();
    let faults = rig.tick.faults();
    let flagged = records.iter().filter(|r| r.quarantined).count() as u64;
    assert!(records[20].quarantined);
    assert!(faults.quarantined >= 1);
    assert_eq!(faults.quarantined, flagged);
    assert_eq!(records.last().unwrap().faults, faults);
    for record in records.iter().filter(|r| r.quarantined) {
        // Reset to the handle: nothing to render, and nothing non-finite
        // reached the device or the record.
        assert!(record.tool_position.iter().all(|v| v.is_finite()));
        assert_eq!(record.rendered_force, [0.0; 3], "{record:?}");
        assert_eq!(record.force, [0.0; 3]);
    }
    assert_eq!(faults.render, 0);
    // The run goes on: the cube ends pressed into the corner.
    let pressed = rig.tool.read().contact_wrenches[0];
    assert!(pressed.norm() > 0.1, "{pressed:?}");
    let verdicts = rig.tick.verdicts();
    assert_eq!(verdicts.total(), 400);
    assert_eq!(verdicts.not_rendered, 0);
}

#[test]
fn an_update_is_applied_at_the_start_of_a_tick_and_handed_back() {
    let device = SimulatedDevice::new(press_into_corner(), SimulatedClock::Stepped(DT));
    let mut rig = rig(device, 4096);
    for i in 0..300u32 {
        assert_eq!(rig.tick.run(DT * i, Duration::ZERO).generation, 0);
    }
    let layout = rig.control.layout;
    let p = RenderParameters {
        static_damping: 0.2,
        ..*rig.tick.cycle().parameters()
    };
    let mu = vec![0.9; layout.environment_objects];
    let update = RenderingUpdate::new(layout, p, mu).unwrap();
    rig.control
        .updates
        .send(Box::new(ParameterUpdate::new(7, update)))
        .ok()
        .unwrap();
    assert!(rig.control.updates.collect().is_none());
    let record = rig.tick.run(DT * 300, Duration::ZERO);
    assert_eq!((record.tick, record.generation), (300, 7));
    assert_eq!(rig.tick.cycle().parameters().static_damping, 0.2);
    assert_eq!(
        rig.tick.cycle().scene().environment()[0].friction_coefficient,
        0.9
    );
    let back = rig.control.updates.collect().unwrap();
    assert_eq!(back.applied, Some(Ok(300)));
    assert!(!rig.control.updates.in_flight());

    // An update built for another layout is refused; the generation stays.
    let mut other = layout;
    other.max_contacts += 1;
    let update = RenderingUpdate::new(other, p, vec![0.1; other.environment_objects]).unwrap();
    rig.control
        .updates
        .send(Box::new(ParameterUpdate::new(8, update)))
        .ok()
        .unwrap();
    let record = rig.tick.run(DT * 301, Duration::ZERO);
    assert_eq!(record.generation, 7);
    let back = rig.control.updates.collect().unwrap();
    assert!(matches!(
        back.applied,
        Some(Err(RenderError::LayoutMismatch { .. }))
    ));
    let records: Vec<_> = rig.telemetry.drain().collect();
    assert!(records[..300].iter().all(|r| r.generation == 0));
    assert!(records[300..].iter().all(|r| r.generation == 7));
}

#[test]
fn every_tick_publishes_its_scene_frame() {
    let device = SimulatedDevice::new(press_into_corner(), SimulatedClock::Stepped(DT));
    let mut rig = rig(device, 4096);
    let mut stuck = 0;
    for i in 0..400u32 {
        let record = rig.tick.run(DT * i, Duration::ZERO);
        let frame = rig.control.scene_frames.read();
        assert_eq!(frame.tick, u64::from(i));
        assert_eq!(frame.contacts_total, record.contacts);
        let scene = rig.tick.cycle().scene();
        assert_eq!(frame.environment_poses.len(), scene.environment().len());
        assert_eq!(frame.environment_poses[0], scene.environment()[0].pose);
        assert_eq!(
            frame.contacts.len(),
            (record.contacts as usize).min(haptic_servo::SCENE_FRAME_CONTACTS)
        );
        let static_tick = record.friction_state() == Some(FrictionState::Static);
        // The normal forces are the penalty forces on the tool, and a
        // static tick's friction stays inside each contact's cone.
        for (point, contact) in frame.contacts.iter().zip(scene.contacts()) {
            assert_eq!(point.normal_force, <[f64; 3]>::from(contact.force()));
            assert_eq!(usize::from(point.object), contact.environment as usize);
            let friction = Vector3::from(point.friction_force);
            let normal = Vector3::from(point.normal_force).norm();
            assert!(friction.norm() <= 0.5 * normal / (std::f64::consts::PI / 8.0).cos() + 1e-9);
            assert_eq!(point.stuck, static_tick && point.stuck);
            stuck += usize::from(point.stuck);
        }
        if frame.contacts.len() == record.contacts as usize && record.contacts > 0 {
            let sum: Vector3<f64> = frame
                .contacts
                .iter()
                .map(|p| Vector3::from(p.normal_force))
                .sum();
            let total = total_wrench(scene.contacts());
            assert!((sum - total.fixed_rows::<3>(0)).norm() < 1e-9);
        }
    }
    assert!(stuck > 0);
}
