//! Torques on a 6-DoF-output device against the simulated libHD's gimbal:
//! a Cartesian torque becomes the gimbal torques the orientation's
//! Jacobian in the gimbal angles gives, twists the gimbal's springs as
//! statics predict, is clamped to the device's maximum by the safety
//! layer and drops to zero at a fault and at shutdown; a 3-DoF-output
//! device is never sent one.

mod common;

use common::{first_sample, Sim};
use haptic_device_openhaptics::{frame, OpenHapticsDevice};
use haptic_devices::{HapticDevice, SafetyLayer, Wrench};
use haptic_testkit::jacobian_check::{central_differences, compare, dynamic, Tolerance};
use nalgebra::{DVector, Matrix3, UnitQuaternion, Vector3};
use std::time::{Duration, Instant};

/// Ticks of one read and one write of `request` for `duration`, about
/// 1 kHz.
fn run(device: &mut impl HapticDevice, duration: Duration, request: Wrench) {
    let start = Instant::now();
    while start.elapsed() < duration {
        let _ = device.read();
        let _ = device.write(&request);
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn twist(torque: Vector3<f64>) -> Wrench {
    Wrench {
        force: Vector3::zeros(),
        torque,
    }
}

/// A gimbal that stays where it is put, whatever the torque.
const FROZEN: (f64, f64, f64) = (1e12, 0.0, 0.0);

/// The simulated stylus' orientation, ours, for a gimbal base `base` and
/// gimbal angles `angles`, as the backend reads `HD_CURRENT_TRANSFORM`.
fn stylus(base: &UnitQuaternion<f64>, angles: [f64; 3]) -> UnitQuaternion<f64> {
    let r = openhaptics_sim::stylus_rotation(&frame::rotation_to_hd(base), angles);
    let mut transform = [0.0; 16];
    for k in 0..9 {
        transform[(k / 3) * 4 + k % 3] = r[k];
    }
    transform[15] = 1.0;
    frame::orientation(&transform)
}

/// The stylus' angular Jacobian in the gimbal angles, ours, by central
/// differences of the simulated kinematics: column i is the rotation
/// vector of R(q + h eᵢ)·R(q − h eᵢ)ᵀ over 2h.
fn jacobian_by_differences(base: &UnitQuaternion<f64>, angles: [f64; 3]) -> Matrix3<f64> {
    let at = stylus(base, angles);
    let fd = central_differences(&[1e-6; 3], |delta| {
        let moved = std::array::from_fn(|i| angles[i] + delta[i]);
        let turn = (stylus(base, moved) * at.inverse()).scaled_axis();
        Some(DVector::from_column_slice(turn.as_slice()))
    })
    .unwrap();
    Matrix3::from_fn(|i, j| fd[(i, j)])
}

#[test]
fn a_cartesian_torque_comes_out_as_the_gimbal_torques_of_the_orientation_jacobian() {
    let (_guard, sim) = Sim::lock();
    sim.set_six_dof(true);
    sim.set_gimbal_dynamics(FROZEN.0, FROZEN.1, FROZEN.2);
    let base = UnitQuaternion::from_scaled_axis(Vector3::new(0.3, -0.4, 0.2));
    sim.set_pose([0.0; 3], frame::rotation_to_hd(&base));
    let mut device = OpenHapticsDevice::open(&sim.settings()).unwrap();
    let c = device.capabilities().clone();
    assert_eq!((c.output_dof, c.max_torque), (6, 0.188));
    assert!(device.torques());
    assert_eq!(device.info().max_torque_mnm, Some(188.0));
    first_sample(&mut device);
    let torque = Vector3::new(0.05, -0.03, 0.08);
    for angles in [
        [0.0; 3],
        [0.4, -0.3, 1.1],
        [-1.2, 0.9, -2.5],
        [2.0, 1.4, 0.3],
    ] {
        sim.set_gimbal(angles);
        run(&mut device, Duration::from_millis(15), twist(torque));
        let state = sim.state();
        let moved = Vector3::from(state.gimbal_angles_rad) - Vector3::from(angles);
        assert!(moved.norm() < 1e-9, "{state:?}");
        let jacobian = jacobian_by_differences(&base, angles);
        // The backend's joint axes against the differences of the
        // simulated kinematics, in our axes.
        let sample = device.read().unwrap();
        assert!(sample.orientation.angle_to(&stylus(&base, angles)) < 1e-9);
        let rotation = frame::rotation_to_hd(&base);
        let hd = openhaptics_sim::stylus_rotation(&rotation, angles);
        let axes = frame::gimbal_axes(&Matrix3::from_column_slice(&hd), angles);
        let ours = Matrix3::from_columns(
            &[0, 1, 2].map(|j| frame::from_hd_axes([axes[(0, j)], axes[(1, j)], axes[(2, j)]])),
        );
        compare(
            &dynamic(&ours),
            &dynamic(&jacobian),
            (3, 3),
            Tolerance::Absolute(1e-8),
        )
        .assert_passes("gimbal axes");
        // What the simulated device received: Jᵀτ in mN·m.
        let expected = jacobian.transpose() * torque * 1e3;
        let got = Vector3::from(state.gimbal_torque_mnm);
        assert!(
            (got - expected).norm() < 1e-5,
            "at {angles:?}: {got} against {expected}"
        );
    }
}

#[test]
fn a_torque_about_the_stylus_twists_the_roll_spring_to_torque_over_stiffness() {
    let (_guard, sim) = Sim::lock();
    sim.set_six_dof(true);
    // 0.3 N·m/rad springs; the stylus along HD z, our x.
    sim.set_gimbal_dynamics(2e-5, 0.3, 0.004);
    let mut device = OpenHapticsDevice::open(&sim.settings()).unwrap();
    first_sample(&mut device);
    run(
        &mut device,
        Duration::from_millis(400),
        twist(Vector3::new(0.03, 0.0, 0.0)),
    );
    let state = sim.state();
    let [yaw, pitch, roll] = state.gimbal_angles_rad;
    assert!(yaw.abs() < 1e-9 && pitch.abs() < 1e-9, "{state:?}");
    assert!((roll - 0.1).abs() < 1e-4, "{state:?}");
    let sample = device.read().unwrap();
    let expected = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), 0.1);
    assert!(
        sample.orientation.angle_to(&expected) < 1e-4,
        "{:?}",
        sample.orientation
    );
}

#[test]
fn a_three_dof_output_device_is_never_sent_a_torque() {
    let (_guard, sim) = Sim::lock();
    let mut device = OpenHapticsDevice::open(&sim.settings()).unwrap();
    let c = device.capabilities().clone();
    assert_eq!((c.output_dof, c.max_torque), (3, 0.0));
    assert!(!device.torques());
    assert_eq!(device.info().max_torque_mnm, None);
    first_sample(&mut device);
    run(
        &mut device,
        Duration::from_millis(50),
        twist(Vector3::new(0.1, 0.0, 0.0)),
    );
    let frames = sim.state().frames;
    drop(device);
    let state = sim.state();
    assert!(frames > 20, "{state:?}");
    assert_eq!(state.gimbal_torque_sets, 0);
    assert_eq!(state.gimbal_torque_mnm, [0.0; 3]);
}

#[test]
fn the_safety_layer_clamps_the_torque_to_the_device_maximum() {
    let (_guard, sim) = Sim::lock();
    sim.set_six_dof(true);
    // Gimbal at zero under an unturned base: the joint axes are HD y, x, z.
    sim.set_gimbal_dynamics(FROZEN.0, FROZEN.1, FROZEN.2);
    let device = OpenHapticsDevice::open(&sim.settings()).unwrap();
    let mut layer = SafetyLayer::new(device);
    // Below the soft start's 5 % of full scale, so that it begins, then
    // five times the maximum.
    run(
        &mut layer,
        Duration::from_millis(100),
        twist(Vector3::new(0.001, 0.0, 0.0)),
    );
    let request = Vector3::new(0.6, -0.8, 0.0);
    run(&mut layer, Duration::from_millis(800), twist(request));
    assert!((layer.commanded().torque.norm() - 0.188).abs() < 1e-12);
    let got = Vector3::from(sim.state().gimbal_torque_mnm);
    // Ours (0.6, −0.8, 0) is HD (−0.8, 0, 0.6): yaw 0, pitch −0.8, roll 0.6.
    let expected = Vector3::new(0.0, -0.8, 0.6) * 188.0;
    assert!((got - expected).norm() < 1e-9, "{got}");
}

/// 5 mN·m about our z, HD y: yaw at gimbal angles zero; below the soft
/// start's 5 % of full scale, so that it begins.
fn small_yaw() -> Wrench {
    twist(Vector3::new(0.0, 0.0, 0.005))
}

/// A freshly reset 6-DoF device behind the safety layer, rendering
/// [`small_yaw`] after the soft start.
fn yawing(sim: &Sim) -> SafetyLayer<OpenHapticsDevice> {
    sim.reset();
    sim.set_six_dof(true);
    sim.set_gimbal_dynamics(FROZEN.0, FROZEN.1, FROZEN.2);
    let mut layer = SafetyLayer::new(OpenHapticsDevice::open(&sim.settings()).unwrap());
    run(&mut layer, Duration::from_millis(700), small_yaw());
    let state = sim.state();
    assert!((state.gimbal_torque_mnm[0] - 5.0).abs() < 1e-9, "{state:?}");
    layer
}

#[test]
fn the_gimbal_torque_drops_to_zero_at_a_fault_and_at_shutdown() {
    let (_guard, sim) = Sim::lock();
    let mut layer = yawing(&sim);
    sim.set_vanished(true);
    run(&mut layer, Duration::from_millis(50), small_yaw());
    assert_eq!(sim.state().gimbal_torque_mnm, [0.0; 3]);
    assert_eq!(layer.counters().disconnected, 1, "{:?}", layer.counters());
    drop(layer);

    let mut layer = yawing(&sim);
    layer.shutdown();
    run(&mut layer, Duration::from_millis(40), small_yaw());
    assert_eq!(layer.commanded().torque, Vector3::zeros());
    std::thread::sleep(Duration::from_millis(5));
    assert_eq!(sim.state().gimbal_torque_mnm, [0.0; 3]);
    let sets = sim.state().gimbal_torque_sets;
    drop(layer);
    let state = sim.state();
    // The closing frame sent zero torque, then force output went off.
    assert!(state.gimbal_torque_sets > sets, "{state:?}");
    assert_eq!(state.gimbal_torque_mnm, [0.0; 3]);
    assert!(!state.force_output && !state.device_initialised);
}
