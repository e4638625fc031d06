//! The simulated device: clocks, playback, end of motion, recorded wrench.

use haptic_devices::{HapticDevice, Motion, SimulatedClock, SimulatedDevice, Wrench};
use nalgebra::{Point3, Vector3};
use std::time::Duration;

fn line() -> Motion {
    toml::from_str("[[segments]]\ntype = \"line\"\nto_m = [0.1, 0.0, 0.0]\nduration_s = 0.01\n")
        .unwrap()
}

#[test]
fn stepped_clock_plays_the_motion_deterministically() {
    let dt = Duration::from_millis(1);
    let mut device = SimulatedDevice::new(line(), SimulatedClock::Stepped(dt));
    let motion = device.motion().clone();
    for k in 0..15u32 {
        let sample = device.read().unwrap();
        assert_eq!(sample.timestamp, dt * k);
        let state = motion.state_at(sample.timestamp.as_secs_f64());
        assert_eq!(sample.position, state.position);
        assert_eq!(sample.orientation, state.orientation);
        assert_eq!(sample.linear_velocity, Some(state.linear_velocity));
        assert_eq!(sample.angular_velocity, Some(state.angular_velocity));
    }
}

#[test]
fn end_of_motion_holds_the_last_pose() {
    let mut device =
        SimulatedDevice::new(line(), SimulatedClock::Stepped(Duration::from_millis(4)));
    let samples: Vec<_> = (0..10).map(|_| device.read().unwrap()).collect();
    for s in &samples[3..] {
        assert_eq!(s.position, Point3::new(0.1, 0.0, 0.0));
        assert_eq!(s.linear_velocity, Some(Vector3::zeros()));
    }
}

#[test]
fn wall_clock_starts_at_first_read_and_advances() {
    let mut device = SimulatedDevice::new(line(), SimulatedClock::Wall);
    // The clock starts at the first read, not at construction: the first
    // timestamp is far below the sleep, even if the read is preempted.
    std::thread::sleep(Duration::from_millis(300));
    let first = device.read().unwrap().timestamp;
    assert!(first < Duration::from_millis(150), "{first:?}");
    std::thread::sleep(Duration::from_millis(2));
    let second = device.read().unwrap().timestamp;
    assert!(second >= first + Duration::from_millis(2));
}

#[test]
fn records_the_last_wrench_and_buttons() {
    let mut device =
        SimulatedDevice::new(line(), SimulatedClock::Stepped(Duration::from_millis(1)));
    assert_eq!(device.last_wrench(), Wrench::ZERO);
    let w = Wrench {
        force: Vector3::new(1.0, -2.0, 0.5),
        torque: Vector3::new(0.0, 0.1, 0.0),
    };
    device.write(&w).unwrap();
    assert_eq!(device.last_wrench(), w);
    assert_eq!(device.write_count(), 1);
    device.set_buttons(0b101);
    assert_eq!(device.read().unwrap().buttons, 0b101);
}

#[test]
fn default_capabilities_are_a_desktop_6dof_device() {
    let device = SimulatedDevice::new(line(), SimulatedClock::Wall);
    let c = device.capabilities();
    assert_eq!((c.input_dof, c.output_dof), (6, 6));
    assert_eq!(
        (c.max_force, c.max_torque, c.max_stiffness, c.native_rate),
        (8.0, 0.5, 2000.0, 1000.0)
    );
    let mut custom = c.clone();
    custom.max_force = 3.0;
    let device = device.with_capabilities(custom.clone());
    assert_eq!(device.capabilities(), &custom);
}
