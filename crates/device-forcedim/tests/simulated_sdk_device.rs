//! The backend against the simulated SDK, through the real loader and the
//! SDK's C calls: opening and configuring, one sample per read, the
//! device vanishing, non-finite samples, the SDK's error text, the
//! shutdown ramp, and a spring-mass the commanded force moves as F = ma
//! predicts.

mod common;

use common::Sim;
use haptic_device_forcedim::{ForceDimensionDevice, OpenError, Settings};
use haptic_devices::{DeviceError, HapticDevice, SafetyLayer, SafetyState, Wrench};
use nalgebra::{UnitQuaternion, Vector3};
use std::time::Duration;

fn force(x: f64, y: f64, z: f64) -> Wrench {
    Wrench {
        force: Vector3::new(x, y, z),
        torque: Vector3::zeros(),
    }
}

#[test]
fn opening_initialises_configures_and_waits_for_a_sample_before_forces() {
    let (_guard, sim) = Sim::lock();
    sim.set_device(common::SIGMA7_LEFT, 1);
    let settings = Settings {
        watchdog: Duration::from_millis(5),
        velocity_threshold: Some(42),
        gravity_compensation: false,
        ..sim.settings()
    };
    let mut device = ForceDimensionDevice::open(&settings).unwrap();
    let state = sim.state();
    assert_eq!(state.auto_init_calls, 1);
    assert!(state.initialized);
    assert_eq!(state.watchdog, 40, "5 ms in 125 µs units");
    assert_eq!(state.velocity_threshold, 42);
    assert!(!state.expert, "expert mode is left as found");
    assert!(!state.gravity_compensation);
    assert!(!state.forces_enabled && state.brakes);
    let info = device.info().clone();
    assert_eq!(info.name, "sigma.7");
    assert!(info.wrist && info.active_wrist && info.gripper && info.left_handed);
    assert!(info.auto_initialised);
    assert_eq!(info.velocity_threshold, Some(42));
    let c = device.capabilities().clone();
    assert_eq!((c.input_dof, c.output_dof), (6, 6));
    assert_eq!((c.max_force, c.max_torque), (20.0, 0.4));
    assert_eq!(c.name, "sigma.7");

    // A write before the first sample commands nothing.
    device.write(&force(1.0, 0.0, 0.0)).unwrap();
    assert_eq!(sim.state().commands, 0);
    device.read().unwrap();
    assert!(device.forces_enabled() && sim.state().forces_enabled);
    device.write(&force(1.0, 0.0, 0.0)).unwrap();
    assert_eq!(sim.state().commands, 1);
    drop(device);

    // Initialised already: no second initialisation. The SDK's own limits
    // win over the nominal figures; settings win over both.
    sim.set_limits(9.0, 0.2);
    let device = ForceDimensionDevice::open(&sim.settings()).unwrap();
    assert_eq!(sim.state().auto_init_calls, 1);
    assert!(!device.info().auto_initialised);
    assert_eq!(sim.state().watchdog, 80, "the default 10 ms");
    assert_eq!(
        device.info().velocity_threshold,
        Some(42),
        "a device setting: it stays until set again"
    );
    assert_eq!(
        (
            device.capabilities().max_force,
            device.capabilities().max_torque
        ),
        (9.0, 0.2)
    );
    drop(device);
    let device = ForceDimensionDevice::open(&Settings {
        max_force: Some(5.0),
        ..sim.settings()
    })
    .unwrap();
    assert_eq!(device.capabilities().max_force, 5.0);
}

#[test]
fn a_three_dof_device_a_falcon_and_bad_settings() {
    let (_guard, sim) = Sim::lock();
    sim.set_device(common::OMEGA3, 1);
    let mut device = ForceDimensionDevice::open(&sim.settings()).unwrap();
    let c = device.capabilities().clone();
    assert_eq!(
        (c.input_dof, c.output_dof, c.max_force, c.max_torque),
        (3, 3, 12.0, 0.0)
    );
    assert!((c.workspace_half_extents - Vector3::new(0.08, 0.08, 0.055)).norm() < 1e-12);
    let sample = device.read().unwrap();
    assert_eq!(sample.angular_velocity, None);
    assert_eq!(sample.orientation, UnitQuaternion::identity());
    assert_eq!(device.gripper_angle_rad(), None);
    drop(device);

    // The robotic SDK does not initialise a Falcon: opened as it is.
    sim.set_device(common::FALCON, 1);
    let device = ForceDimensionDevice::open(&sim.settings()).unwrap();
    assert_eq!(device.info().name, "Falcon");
    assert!(!device.info().auto_initialised);
    assert_eq!(device.capabilities().max_force, 8.9);
    drop(device);

    let error = ForceDimensionDevice::open(&Settings {
        device_index: 1,
        ..sim.settings()
    })
    .err()
    .unwrap();
    assert!(
        matches!(
            error,
            OpenError::NoDevice {
                index: 1,
                count: 1,
                ..
            }
        ),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .starts_with("no Force Dimension device 1: the SDK ("),
        "{error}"
    );
    let error = ForceDimensionDevice::open(&Settings {
        watchdog: Duration::from_millis(40),
        ..sim.settings()
    })
    .err()
    .unwrap();
    assert!(error.to_string().contains("31.875 ms"), "{error}");
    // An unknown model with no limit anywhere: the user must say.
    sim.set_device(91, 1);
    let error = ForceDimensionDevice::open(&sim.settings()).err().unwrap();
    assert!(
        error.to_string().contains("device.forcedim.max_force_n"),
        "{error}"
    );
    assert_eq!(sim.state().open, 0, "a failed open closes the device");
    // A failed SDK call while opening carries the SDK's text.
    sim.set_device(common::SIGMA7, 1);
    sim.fail_next(common::ERROR_TIMEOUT);
    let error = ForceDimensionDevice::open(&sim.settings()).err().unwrap();
    // (Initialised by the opening before: the first call that can fail is
    // drdStop.)
    assert_eq!(error.to_string(), "drdStop failed: timeout");
    assert_eq!(sim.state().open, 0);
}

#[test]
fn a_sample_is_the_pose_frame_velocities_buttons_and_gripper_of_one_moment() {
    let (_guard, sim) = Sim::lock();
    let rotation = [0.3, -0.5, 0.9];
    sim.set_pose([0.01, -0.02, 0.03], rotation);
    sim.set_buttons(0b101, 0.25);
    let mut device = ForceDimensionDevice::open(&sim.settings()).unwrap();
    let sample = device.read().unwrap();
    assert!((sample.position.coords - Vector3::new(0.01, -0.02, 0.03)).norm() < 1e-15);
    let expected = UnitQuaternion::from_scaled_axis(Vector3::from(rotation));
    assert!(
        sample.orientation.angle_to(&expected) < 1e-9,
        "{:?}",
        sample.orientation
    );
    assert_eq!(sample.buttons, 0b101);
    assert_eq!(device.gripper_angle_rad(), Some(0.25));
    assert_eq!(sample.linear_velocity, Some(Vector3::zeros()));
    assert_eq!(sample.angular_velocity, Some(Vector3::zeros()));
    let later = device.read().unwrap();
    assert!(later.timestamp > sample.timestamp);
}

#[test]
fn a_vanishing_device_is_disconnected_zeroed_counted_and_reopened() {
    let (_guard, sim) = Sim::lock();
    let device = ForceDimensionDevice::open(&sim.settings()).unwrap();
    let mut layer = SafetyLayer::new(device)
        .with_reconnect(|device: &mut ForceDimensionDevice| device.reopen());
    let push = force(0.5, 0.0, 0.0);
    for _ in 0..600 {
        layer.read().unwrap();
        layer.write(&push).unwrap();
    }
    assert_eq!(layer.state(), SafetyState::Normal);
    assert!((sim.state().force[0] - 0.5).abs() < 1e-12);

    sim.set_disconnected(true);
    assert_eq!(layer.read(), Err(DeviceError::Disconnected));
    assert_eq!(layer.write(&push), Err(DeviceError::Disconnected));
    assert_eq!(layer.commanded(), Wrench::ZERO);
    let text = layer.device().last_error().unwrap().as_str();
    assert_eq!(
        text,
        "communication error between the host and the haptic device"
    );
    for _ in 0..250 {
        assert_eq!(layer.read(), Err(DeviceError::Disconnected));
        let _ = layer.write(&push);
    }
    assert_eq!(layer.counters().disconnected, 1);
    assert_eq!(layer.state(), SafetyState::Tripped);

    // Plugged back: the next reconnection reopens it, then a soft start.
    sim.set_disconnected(false);
    let mut back = None;
    for tick in 0..200 {
        if layer.read().is_ok() && back.is_none() {
            back = Some(tick);
        }
        let _ = layer.write(&Wrench::ZERO);
    }
    assert!(back.is_some(), "reconnected within 200 ticks");
    assert_eq!(layer.counters().disconnected, 1);
    assert_eq!(layer.state(), SafetyState::Ramping);
    assert!(layer.device().forces_enabled());
    assert_eq!(sim.state().open, 1);

    // Power-cycled while away: it comes back uninitialised, and is not
    // initialised mid-run (that moves the arm) but left closed.
    sim.set_disconnected(true);
    sim.set_initialized(false);
    for _ in 0..20 {
        let _ = layer.read();
        let _ = layer.write(&Wrench::ZERO);
    }
    sim.set_disconnected(false);
    for _ in 0..300 {
        assert_eq!(layer.read(), Err(DeviceError::Disconnected));
        let _ = layer.write(&Wrench::ZERO);
    }
    let state = sim.state();
    assert_eq!((state.auto_init_calls, state.open), (1, 0), "{state:?}");
    assert_eq!(layer.counters().disconnected, 2);
}

#[test]
fn a_non_finite_sample_is_withheld_and_an_sdk_failure_carries_its_text() {
    let (_guard, sim) = Sim::lock();
    let mut device = ForceDimensionDevice::open(&sim.settings()).unwrap();
    sim.inject_nan(1);
    assert_eq!(device.read(), Err(DeviceError::SampleNotFinite));
    assert!(!device.forces_enabled(), "no forces before a finite sample");
    device.read().unwrap();
    assert!(device.forces_enabled());
    sim.fail_next(common::ERROR_TIMEOUT);
    let error = device.read().unwrap_err();
    assert_eq!(
        error.to_string(),
        "dhdGetPositionAndOrientationFrame failed: timeout"
    );

    let mut layer = SafetyLayer::new(device);
    for _ in 0..10 {
        layer.read().unwrap();
        layer.write(&Wrench::ZERO).unwrap();
    }
    sim.inject_nan(3);
    for _ in 0..3 {
        assert_eq!(layer.read(), Err(DeviceError::SampleNotFinite));
        layer.write(&force(1.0, 0.0, 0.0)).unwrap();
        assert_eq!(sim.state().force, [0.0; 3]);
    }
    layer.read().unwrap();
    assert_eq!(layer.counters().sample_not_finite, 1);
    sim.fail_next(common::ERROR_TIMEOUT);
    assert!(matches!(
        layer.read(),
        Err(DeviceError::Driver {
            call: "dhdGetPositionAndOrientationFrame",
            ..
        })
    ));
    assert_eq!(layer.counters().device_error, 1);
}

#[test]
fn shutdown_ramps_to_zero_then_closing_brakes_and_disables_forces() {
    let (_guard, sim) = Sim::lock();
    sim.set_dynamics(0.2, 100.0, 5.0);
    let device = ForceDimensionDevice::open(&sim.settings()).unwrap();
    let mut layer = SafetyLayer::new(device);
    let push = force(0.0, 2.0, 0.0);
    layer.read().unwrap();
    layer.write(&Wrench::ZERO).unwrap();
    for _ in 0..600 {
        layer.read().unwrap();
        layer.write(&push).unwrap();
    }
    assert_eq!(layer.state(), SafetyState::Normal);
    assert_eq!(sim.state().force, [0.0, 2.0, 0.0]);
    layer.shutdown();
    let n = layer.limits().shutdown_ticks;
    let mut previous = 2.0;
    for tick in 1..=n {
        layer.read().unwrap();
        layer.write(&push).unwrap();
        let fy = sim.state().force[1];
        let expected = 2.0 * (1.0 - tick as f64 / n as f64);
        assert!(
            (fy - expected).abs() < 1e-12,
            "tick {tick}: {fy} vs {expected}"
        );
        assert!(fy < previous);
        previous = fy;
    }
    assert_eq!(layer.state(), SafetyState::Off);
    let state = sim.state();
    assert!(state.forces_enabled && !state.brakes);
    drop(layer);
    let state = sim.state();
    assert_eq!(state.force, [0.0; 3]);
    assert!(!state.forces_enabled && state.brakes, "{state:?}");
    assert_eq!(state.open, 0);
}

#[test]
fn a_constant_force_moves_the_spring_mass_as_newton_predicts() {
    let (_guard, sim) = Sim::lock();
    let (m, k, dt) = (0.2, 100.0, 0.001);
    sim.set_dynamics(m, k, 0.0);
    sim.set_step(dt);
    let mut device = ForceDimensionDevice::open(&sim.settings()).unwrap();
    device.read().unwrap();
    let f = 1.5;
    let omega = (k / m).sqrt();
    let mut worst: f64 = 0.0;
    for tick in 1..=1000 {
        device.write(&force(0.0, 0.0, f)).unwrap();
        let sample = device.read().unwrap();
        // m ẍ = F − k x from rest: x = F/k (1 − cos ωt).
        let t = tick as f64 * dt;
        let x = f / k * (1.0 - (omega * t).cos());
        worst = worst.max((sample.position.z - x).abs());
    }
    assert!(
        worst < 0.02 * f / k,
        "worst error {worst} m against an amplitude of {} m",
        f / k
    );
}

#[test]
fn a_position_controller_through_the_safety_layer_holds_the_mass_where_statics_predicts() {
    let (_guard, sim) = Sim::lock();
    let (m, k) = (0.2, 100.0);
    sim.set_dynamics(m, k, 2.0);
    let device = ForceDimensionDevice::open(&sim.settings()).unwrap();
    let mut layer = SafetyLayer::new(device);
    let (kp, kd, goal) = (300.0, 3.0, 0.02);
    let mut request = Wrench::ZERO;
    for tick in 0..3000 {
        // The target moves out over the first second, so that the request
        // starts small and the safety layer's soft start begins.
        let target = goal * (tick as f64 / 1000.0).min(1.0);
        let sample = layer.read().unwrap();
        let v = sample.linear_velocity.unwrap();
        request = force(-kp * (sample.position.x - target) - kd * v.x, 0.0, 0.0);
        layer.write(&request).unwrap();
    }
    // At rest: k x = kp (target − x).
    let expected = kp * goal / (k + kp);
    let x = sim.state().position[0];
    assert!((x - expected).abs() < 1e-4, "{x} vs {expected}");
    assert!((request.force.x - k * x).abs() < 0.05);
    assert_eq!(layer.state(), SafetyState::Normal);
}

#[test]
fn without_gravity_compensation_the_handle_sags_by_its_weight() {
    let (_guard, sim) = Sim::lock();
    let (m, k) = (0.2, 100.0);
    sim.set_dynamics(m, k, 3.0);
    let mut device = ForceDimensionDevice::open(&Settings {
        gravity_compensation: false,
        ..sim.settings()
    })
    .unwrap();
    for _ in 0..3000 {
        device.read().unwrap();
        device.write(&Wrench::ZERO).unwrap();
    }
    let z = device.read().unwrap().position.z;
    assert!((z + m * 9.81 / k).abs() < 1e-4, "{z}");
}
