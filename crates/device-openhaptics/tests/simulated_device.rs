//! The backend against the simulated libHD, through the real loader: the
//! scheduler's rate, units and axes, the force closing the loop, a
//! vanishing device, a NaN sample and the shutdown sequence.

mod common;

use common::{first_sample, Sim};
use haptic_device_openhaptics::{frame, OpenHapticsDevice};
use haptic_devices::{DeviceError, HapticDevice, SafetyLayer, Wrench};
use nalgebra::{Point3, UnitQuaternion, Vector3};
use std::time::{Duration, Instant};

/// Servo ticks at about 1 kHz for `duration`, each one read and one write
/// of `request`; returns the last read's result.
fn run<D: HapticDevice>(
    device: &mut D,
    duration: Duration,
    request: Wrench,
) -> Option<Result<haptic_devices::DeviceSample, DeviceError>> {
    let start = Instant::now();
    let mut last = None;
    while start.elapsed() < duration {
        last = Some(device.read());
        let _ = device.write(&request);
        std::thread::sleep(Duration::from_millis(1));
    }
    last
}

fn push(force: Vector3<f64>) -> Wrench {
    Wrench {
        force,
        torque: Vector3::zeros(),
    }
}

#[test]
fn opening_reports_the_device_and_forces_wait_for_the_first_sample() {
    let (_guard, sim) = Sim::lock();
    let mut device = OpenHapticsDevice::open(&sim.settings()).unwrap();
    let c = device.capabilities().clone();
    assert_eq!(c.name, "Touch (simulated)");
    assert_eq!((c.input_dof, c.output_dof), (6, 3));
    assert_eq!(c.max_force, 3.3);
    assert!((c.max_stiffness - 1260.0).abs() < 1e-9);
    assert!((c.workspace_half_extents - Vector3::new(0.035, 0.08, 0.06)).norm() < 1e-12);
    assert_eq!(c.native_rate, 1000.0);
    let state = sim.state();
    assert!(state.device_initialised && state.scheduler_running);
    assert_eq!(state.callbacks, 1);
    assert!(!state.force_output);
    assert!(!device.forces_enabled());
    first_sample(&mut device);
    assert!(device.forces_enabled());
    std::thread::sleep(Duration::from_millis(20));
    assert!(sim.state().force_output);
}

#[test]
fn the_scheduler_calls_the_callback_at_one_kilohertz() {
    let (_guard, sim) = Sim::lock();
    let mut device = OpenHapticsDevice::open(&sim.settings()).unwrap();
    first_sample(&mut device);
    let (t0, n0) = (Instant::now(), device.frames());
    std::thread::sleep(Duration::from_secs(1));
    let (t1, n1) = (Instant::now(), device.frames());
    let rate = (n1 - n0) as f64 / (t1 - t0).as_secs_f64();
    eprintln!("scheduler callback rate: {rate:.1} Hz");
    assert!((900.0..=1100.0).contains(&rate), "{rate} Hz");
}

#[test]
fn position_orientation_and_buttons_arrive_in_our_units_and_axes() {
    let (_guard, sim) = Sim::lock();
    // No spring, no damper: the handle stays where it is put.
    sim.set_dynamics(0.05, 0.0, 0.0);
    let q = UnitQuaternion::from_scaled_axis(Vector3::new(0.2, -0.5, 0.9));
    sim.set_pose([10.0, 20.0, 30.0], frame::rotation_to_hd(&q));
    sim.set_buttons(0b10);
    let mut device = OpenHapticsDevice::open(&sim.settings()).unwrap();
    let sample = first_sample(&mut device);
    // HD (x right, y up, z toward the user) in mm → ours (x toward the
    // user, y right, z up) in m.
    assert!((sample.position - Point3::new(0.03, 0.01, 0.02)).norm() < 1e-12);
    assert!(sample.orientation.angle_to(&q) < 1e-9);
    assert_eq!(sample.buttons, 0b10);
    assert_eq!(sample.linear_velocity, Some(Vector3::zeros()));
}

#[test]
fn a_force_closes_the_loop_against_the_spring() {
    let (_guard, sim) = Sim::lock();
    sim.set_dynamics(0.05, 200.0, 5.0);
    let mut device = OpenHapticsDevice::open(&sim.settings()).unwrap();
    first_sample(&mut device);
    // 1 N up (our z): the spring settles at F/k = 5 mm up (HD y).
    let sample = run(&mut device, Duration::from_millis(800), push(Vector3::z()))
        .unwrap()
        .unwrap();
    assert_eq!(sim.state().force_n, [0.0, 1.0, 0.0]);
    let expected = Point3::new(0.0, 0.0, 1.0 / 200.0);
    assert!(
        (sample.position - expected).norm() < 1e-4,
        "{:?}",
        sample.position
    );
    assert!(sample.linear_velocity.unwrap().norm() < 1e-2);
}

#[test]
fn a_vanished_device_reads_disconnected_and_its_force_drops() {
    let (_guard, sim) = Sim::lock();
    let device = OpenHapticsDevice::open(&sim.settings()).unwrap();
    let mut layer = SafetyLayer::new(device);
    // Below the soft start's 5 % of full scale, so that it begins.
    run(
        &mut layer,
        Duration::from_millis(300),
        push(Vector3::x() * 0.1),
    );
    assert!(sim.state().force_n[2] > 0.0);
    sim.set_vanished(true);
    run(
        &mut layer,
        Duration::from_millis(50),
        push(Vector3::x() * 0.1),
    );
    assert_eq!(layer.device_mut().read(), Err(DeviceError::Disconnected));
    assert_eq!(sim.state().force_n, [0.0; 3]);
    assert_eq!(layer.counters().disconnected, 1, "{:?}", layer.counters());
    let message = layer.device().last_error().unwrap().to_string();
    assert_eq!(message, "0x0302 (internal -770): Communication error");
}

#[test]
fn a_nan_sample_is_refused() {
    let (_guard, sim) = Sim::lock();
    let mut device = OpenHapticsDevice::open(&sim.settings()).unwrap();
    first_sample(&mut device);
    sim.inject_nan(1000);
    std::thread::sleep(Duration::from_millis(5));
    assert_eq!(device.read(), Err(DeviceError::SampleNotFinite));
    let mut layer = SafetyLayer::new(device);
    run(&mut layer, Duration::from_millis(20), push(Vector3::x()));
    assert!(
        layer.counters().sample_not_finite >= 1,
        "{:?}",
        layer.counters()
    );
}

#[test]
fn shutdown_ramps_to_zero_then_drop_turns_force_output_off() {
    let (_guard, sim) = Sim::lock();
    let device = OpenHapticsDevice::open(&sim.settings()).unwrap();
    let mut layer = SafetyLayer::new(device);
    // Below the soft start's 5 % of full scale, so that it begins.
    let request = push(Vector3::y() * 0.1);
    run(&mut layer, Duration::from_millis(700), request);
    assert!(
        (sim.state().force_n[0] - 0.1).abs() < 1e-9,
        "{:?}",
        sim.state()
    );
    layer.shutdown();
    run(&mut layer, Duration::from_millis(40), request);
    assert_eq!(layer.commanded().force, Vector3::zeros());
    std::thread::sleep(Duration::from_millis(5));
    assert_eq!(sim.state().force_n, [0.0; 3]);
    let disables = sim.state().force_output_disables;
    drop(layer);
    let state = sim.state();
    assert!(!state.force_output);
    assert!(state.force_output_disables > disables);
    assert!(!state.scheduler_running);
    assert!(!state.device_initialised);
    assert_eq!(state.callbacks, 0);
}
