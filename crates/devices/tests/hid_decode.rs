//! The report decoder on recorded-style report bytes and arbitrary bytes,
//! the wrench encoder, and the pose from decoded axes.

use haptic_alloc_counter::{allocations_during, CountingAllocator};
use haptic_devices::hid::{
    encode_wrench, encode_wrench_into, ControlMode, Dropped, PoseTracker, Profile, ReportDecoder,
    SpaceMouseState,
};
use haptic_devices::{DeviceError, Wrench};
use nalgebra::{UnitQuaternion, Vector3};
use proptest::prelude::*;
use std::path::Path;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn profile(file: &str) -> Profile {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../device-profiles");
    Profile::load(&dir.join(file)).unwrap()
}

fn navigator() -> Profile {
    profile("3dconnexion-space-navigator.toml")
}

/// A 7-byte SpaceNavigator axis report: id then three i16 little-endian.
fn axes_report(id: u8, values: [i16; 3]) -> Vec<u8> {
    let mut report = vec![id];
    for v in values {
        report.extend_from_slice(&v.to_le_bytes());
    }
    report
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn translation_and_rotation_reports_accumulate() {
    let mut decoder = ReportDecoder::new(&navigator());
    // Pushing right and towards the user, then twisting.
    assert_eq!(decoder.decode(&axes_report(1, [350, 100, -20])), Ok(1));
    assert_eq!(decoder.decode(&axes_report(2, [-7, 0, 175])), Ok(2));
    let state = decoder.state();
    let expected = [0.35, -0.1, 0.02, 0.035, 0.0, 0.875];
    for (got, want) in state.axes.iter().zip(expected) {
        assert!(close(*got, want), "{:?}", state.axes);
    }
    // A new translation keeps the latest rotation.
    decoder.decode(&axes_report(1, [0, 0, 0])).unwrap();
    assert_eq!(decoder.state().axes[..3], [0.0, 0.0, 0.0]);
    assert!(close(decoder.state().axes[5], 0.875));
    assert!(decoder.state().has_axes);
}

#[test]
fn buttons_set_and_clear_their_bits() {
    let mut decoder = ReportDecoder::new(&navigator());
    decoder.decode(&[3, 0b10]).unwrap();
    assert_eq!(decoder.state().buttons, 0b10);
    decoder.decode(&[3, 0b11, 0xff]).unwrap();
    assert_eq!(decoder.state().buttons, 0b11);
    decoder.decode(&[3, 0]).unwrap();
    assert_eq!(decoder.state().buttons, 0);
    assert!(!decoder.state().has_axes);
}

#[test]
fn bad_reports_are_counted_and_leave_the_state_alone() {
    let mut decoder = ReportDecoder::new(&navigator());
    decoder.decode(&axes_report(1, [10, 20, 30])).unwrap();
    let before = *decoder.state();
    assert_eq!(
        decoder.decode(&[]),
        Err(Dropped::Short {
            report_id: 0,
            len: 0,
            needed: 1
        })
    );
    assert_eq!(
        decoder.decode(&[1, 0, 0, 0]),
        Err(Dropped::Short {
            report_id: 1,
            len: 4,
            needed: 7
        })
    );
    assert_eq!(
        decoder.decode(&[3]),
        Err(Dropped::Short {
            report_id: 3,
            len: 1,
            needed: 2
        })
    );
    assert_eq!(decoder.decode(&[0x17, 1, 2]), Err(Dropped::UnknownId(0x17)));
    assert_eq!(
        decoder.decode(&axes_report(2, [0, 0, 5000])),
        Err(Dropped::Garbled {
            report_id: 2,
            axis_index: 5,
            raw: 5000
        })
    );
    // A garbled value after good ones in the same report changes nothing.
    assert!(decoder.decode(&axes_report(1, [1, 2, -2000])).is_err());
    assert_eq!(*decoder.state(), before);
    let c = *decoder.counters();
    assert_eq!((c.accepted, c.short, c.unknown_id, c.garbled), (1, 3, 1, 2));
    assert_eq!((c.total(), c.dropped()), (7, 6));
}

#[test]
fn thirteen_byte_reports_carry_all_six_axes() {
    let mut decoder = ReportDecoder::new(&profile("3dconnexion-space-mouse-pro-wireless.toml"));
    let mut report = axes_report(1, [1, 2, 3]);
    report.extend_from_slice(&axes_report(0, [4, 5, 6])[1..]);
    decoder.decode(&report).unwrap();
    let expected = [0.001, -0.002, -0.003, -0.02, -0.025, 0.03];
    for (got, want) in decoder.state().axes.iter().zip(expected) {
        assert!(close(*got, want), "{:?}", decoder.state().axes);
    }
    // A 7-byte report 1 (the older layout) is short for this device.
    assert!(matches!(
        decoder.decode(&axes_report(1, [0; 3])),
        Err(Dropped::Short { .. })
    ));
}

#[test]
fn generic_profile_decodes_pose_and_encodes_wrench() {
    let generic = profile("generic-force-feedback.toml");
    let mut decoder = ReportDecoder::new(&generic);
    let mut report = vec![1u8];
    for v in [12_500i32, -40_000, 3, 100_000, -200_000, 1_234_567] {
        report.extend_from_slice(&v.to_le_bytes());
    }
    report.push(0b01);
    decoder.decode(&report).unwrap();
    let axes = decoder.state().axes;
    assert!(close(axes[0], 0.0125) && close(axes[1], -0.04) && close(axes[5], 1.234567));
    assert_eq!(decoder.state().buttons, 1);

    let output = generic.output.as_ref().unwrap();
    let wrench = Wrench {
        force: Vector3::new(1.5, -2.0, 100.0),
        torque: Vector3::new(0.01, 0.0, -0.00005),
    };
    let bytes = encode_wrench(output, &wrench).unwrap();
    assert_eq!(bytes.len(), 13);
    assert_eq!(bytes[0], 2);
    let word = |i: usize| i16::from_le_bytes([bytes[i], bytes[i + 1]]);
    // 100 N saturates the 16-bit field at 32.767 N; -0.05 mN·m rounds to -1 count.
    assert_eq!([word(1), word(3), word(5)], [1500, -2000, i16::MAX]);
    assert_eq!([word(7), word(9), word(11)], [100, 0, -1]);
    let nan = Wrench {
        force: Vector3::new(f64::NAN, 0.0, 0.0),
        ..Wrench::ZERO
    };
    assert!(matches!(
        encode_wrench(output, &nan),
        Err(DeviceError::WrenchNotFinite)
    ));
}

/// The device's write path: the report is encoded in place into a buffer
/// allocated once, with the same bytes as [`encode_wrench`], and a
/// successful encoding allocates nothing.
#[test]
fn wrench_encodes_in_place_without_allocating() {
    let generic = profile("generic-force-feedback.toml");
    let output = generic.output.as_ref().unwrap();
    let wrenches: Vec<Wrench> = (0..1000)
        .map(|i| {
            let t = i as f64 * 0.01;
            Wrench {
                force: Vector3::new(t.sin() * 40.0, -t, t.cos() * 3.0),
                torque: Vector3::new(0.01 * t, -0.00005, 0.2 * t.sin()),
            }
        })
        .collect();
    // Longer than the report, and dirty: only the report's bytes are written.
    let mut buffer = vec![0xAAu8; output.length + 3];
    let mut lengths = 0;
    let allocations = allocations_during(|| {
        for wrench in &wrenches {
            lengths += encode_wrench_into(output, wrench, &mut buffer).unwrap();
        }
    });
    assert_eq!(allocations, 0);
    assert_eq!(lengths, 1000 * output.length);
    let last = wrenches.last().unwrap();
    assert_eq!(
        &buffer[..output.length],
        encode_wrench(output, last).unwrap().as_slice()
    );
    assert_eq!(&buffer[output.length..], &[0xAA; 3]);
    // Stale bytes inside the report are cleared.
    buffer.fill(0xFF);
    let len = encode_wrench_into(output, &Wrench::ZERO, &mut buffer).unwrap();
    assert_eq!(buffer[0], output.report_id);
    assert!(buffer[1..len].iter().all(|b| *b == 0), "{buffer:?}");

    // Errors: a non-finite wrench, a buffer too short for the report.
    let nan = Wrench {
        force: Vector3::new(0.0, f64::INFINITY, 0.0),
        ..Wrench::ZERO
    };
    assert!(matches!(
        encode_wrench_into(output, &nan, &mut buffer),
        Err(DeviceError::WrenchNotFinite)
    ));
    let mut short = vec![0u8; output.length - 1];
    assert!(matches!(
        encode_wrench_into(output, &Wrench::ZERO, &mut short),
        Err(DeviceError::ReportTooLong { .. })
    ));
    assert!(short.iter().all(|b| *b == 0));
}

#[test]
fn rate_control_integrates_and_clamps_to_the_workspace() {
    let mut tracker = PoseTracker::new(ControlMode::Rate, Vector3::new(0.2, 0.2, 0.2));
    let state = SpaceMouseState {
        axes: [0.1, 0.0, -0.35, 0.0, 0.0, 1.0],
        ..SpaceMouseState::default()
    };
    let pose = tracker.update(&state, 0.5);
    assert!(close(pose.position.x, 0.05) && close(pose.position.z, -0.175));
    assert!(close(pose.orientation.angle(), 0.5));
    assert_eq!(pose.linear_velocity, Some(Vector3::new(0.1, 0.0, -0.35)));
    let pose = tracker.update(&state, 0.5);
    assert!(close(pose.position.z, -0.2), "clamped: {}", pose.position);
    assert!(close(pose.orientation.angle(), 1.0));
    assert_eq!(tracker.update(&state, f64::NAN).position, pose.position);
}

#[test]
fn position_control_takes_axes_as_the_pose() {
    let mut tracker = PoseTracker::new(ControlMode::Position, Vector3::new(0.1, 0.1, 0.1));
    let state = SpaceMouseState {
        axes: [0.01, 0.02, 0.03, 0.1, 0.2, 0.3],
        ..SpaceMouseState::default()
    };
    let pose = tracker.update(&state, 0.001);
    assert_eq!(pose.position.coords, Vector3::new(0.01, 0.02, 0.03));
    let expected = UnitQuaternion::from_euler_angles(0.1, 0.2, 0.3);
    assert!(pose.orientation.angle_to(&expected) < 1e-12);
    assert_eq!(pose.linear_velocity, None);
}

fn all_profiles() -> Vec<Profile> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../device-profiles");
    haptic_devices::load_profiles(&dir).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Arbitrary report streams never panic, every report is counted once,
    /// and the state stays finite.
    #[test]
    fn arbitrary_bytes_are_counted_never_panic(
        reports in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 0..64),
        which in 0usize..14,
    ) {
        let profiles = all_profiles();
        let mut decoder = ReportDecoder::new(&profiles[which % profiles.len()]);
        for (n, report) in reports.iter().enumerate() {
            let before = *decoder.state();
            let result = decoder.decode(report);
            prop_assert_eq!(decoder.counters().total(), n as u64 + 1);
            if result.is_err() {
                prop_assert_eq!(*decoder.state(), before);
            }
            prop_assert!(decoder.state().axes.iter().all(|v| v.is_finite()));
        }
    }

    /// Reports with a known id but arbitrary tails: short, garbled or accepted.
    #[test]
    fn known_ids_with_arbitrary_tails(
        reports in prop::collection::vec((1u8..4, prop::collection::vec(any::<u8>(), 0..16)), 0..64),
    ) {
        let mut decoder = ReportDecoder::new(&navigator());
        for (id, tail) in &reports {
            let mut report = vec![*id];
            report.extend_from_slice(tail);
            let result = decoder.decode(&report);
            let needed = if *id == 3 { 2 } else { 7 };
            prop_assert_eq!(matches!(result, Err(Dropped::Short { .. })), report.len() < needed);
            prop_assert!(!matches!(result, Err(Dropped::UnknownId(_))));
        }
        prop_assert_eq!(decoder.counters().unknown_id, 0);
        prop_assert_eq!(decoder.counters().total(), reports.len() as u64);
    }

    /// Any finite wrench encodes to a report of the declared length.
    #[test]
    fn finite_wrenches_encode(values in prop::array::uniform6(-1e6f64..1e6)) {
        let generic = profile("generic-force-feedback.toml");
        let output = generic.output.as_ref().unwrap();
        let wrench = Wrench {
            force: Vector3::new(values[0], values[1], values[2]),
            torque: Vector3::new(values[3], values[4], values[5]),
        };
        let bytes = encode_wrench(output, &wrench).unwrap();
        prop_assert_eq!(bytes.len(), output.length);
        prop_assert_eq!(bytes[0], output.report_id);
        let mut in_place = vec![0x5Au8; output.length];
        prop_assert_eq!(encode_wrench_into(output, &wrench, &mut in_place), Ok(output.length));
        prop_assert_eq!(in_place, bytes);
    }
}
