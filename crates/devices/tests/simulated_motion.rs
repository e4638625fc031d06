//! Scripted motion: exact endpoints, rest at segment ends, analytic
//! velocities against finite differences, and config parsing.

use haptic_devices::{Motion, MotionConfig, MotionError, SegmentConfig, CLOSURE_TOLERANCE};
use nalgebra::{Point3, UnitQuaternion, Vector3};

const EXAMPLE: &str = r#"
start_position_m = [0.01, 0.0, 0.0]
start_rotation_rad = [0.0, 0.0, 0.3]

[[segments]]
type = "hold"
duration_s = 0.25

[[segments]]
type = "line"
to_m = [0.05, 0.01, -0.02]
duration_s = 1.0

[[segments]]
type = "rotate"
axis = [1.0, 1.0, 0.0]
angle_rad = 1.2
duration_s = 0.5

[[segments]]
type = "circle"
centre_m = [0.0, 0.01, -0.02]
normal = [0.0, 0.0, 2.0]
turns = 1.5
duration_s = 2.0

[[segments]]
type = "waypoints"
points_m = [[0.0, 0.0, 0.0], [0.02, 0.0, 0.0], [0.02, 0.03, 0.01]]
segment_duration_s = 0.4
"#;

fn example() -> Motion {
    toml::from_str(EXAMPLE).expect("example parses")
}

/// Segment boundaries of `EXAMPLE` (s).
fn boundaries() -> Vec<f64> {
    let mut t = vec![0.0, 0.25, 1.25, 1.75, 3.75];
    t.extend((1..=3).map(|k| 3.75 + 0.4 * k as f64));
    t
}

#[test]
fn example_parses_with_expected_duration() {
    let motion = example();
    assert!((motion.duration_s() - 4.95).abs() < 1e-12);
    let start = motion.state_at(0.0);
    assert_eq!(start.position, Point3::new(0.01, 0.0, 0.0));
    let expected = UnitQuaternion::from_scaled_axis(Vector3::new(0.0, 0.0, 0.3));
    assert!(start.orientation.angle_to(&expected) < 1e-12);
}

#[test]
fn line_and_waypoint_endpoints_are_exact() {
    let motion = example();
    assert_eq!(
        motion.state_at(1.25).position,
        Point3::new(0.05, 0.01, -0.02)
    );
    let points = [[0.0, 0.0, 0.0], [0.02, 0.0, 0.0], [0.02, 0.03, 0.01]];
    for (k, p) in points.iter().enumerate() {
        let t = 3.75 + 0.4 * (k + 1) as f64;
        // The sum of durations may round either side of the boundary.
        for t in [t - 1e-12, t, t + 1e-12] {
            let got = motion.state_at(t).position;
            assert!((got - Point3::from(*p)).norm() < 1e-12, "t = {t}: {got}");
        }
    }
    // After the end the last pose holds, exactly, at rest.
    let end = motion.state_at(100.0);
    assert_eq!(end.position, Point3::new(0.02, 0.03, 0.01));
    assert_eq!(end.linear_velocity, Vector3::zeros());
    assert_eq!(motion.state_at(motion.duration_s()), end);
}

#[test]
fn rotate_and_circle_reach_their_targets() {
    let motion = example();
    let before = motion.state_at(1.25).orientation;
    let after = motion.state_at(1.75);
    let turn = UnitQuaternion::from_axis_angle(
        &nalgebra::Unit::new_normalize(Vector3::new(1.0, 1.0, 0.0)),
        1.2,
    );
    assert!(after.orientation.angle_to(&(turn * before)) < 1e-12);
    // Rotation is in place.
    assert_eq!(after.position, Point3::new(0.05, 0.01, -0.02));
    // 1.5 turns about z through (0, 0.01, -0.02) mirrors the offset.
    let end = motion.state_at(3.75).position;
    assert!(
        (end - Point3::new(-0.05, 0.01, -0.02)).norm() < 1e-12,
        "{end}"
    );
    // The circle keeps the orientation.
    assert_eq!(motion.state_at(3.0).orientation, after.orientation);
}

#[test]
fn velocities_vanish_at_segment_ends() {
    let motion = example();
    for t in boundaries() {
        for t in [t - 1e-7, t, t + 1e-7] {
            let s = motion.state_at(t);
            assert!(
                s.linear_velocity.norm() < 1e-9,
                "t = {t}: v = {}",
                s.linear_velocity
            );
            assert!(
                s.angular_velocity.norm() < 1e-9,
                "t = {t}: w = {}",
                s.angular_velocity
            );
        }
    }
}

#[test]
fn minimum_jerk_peaks_at_mid_segment() {
    // Peak speed of a minimum-jerk move is 1.875 · distance / duration.
    let motion = example();
    let distance: f64 = (Point3::new(0.05, 0.01, -0.02) - Point3::new(0.01, 0.0, 0.0)).norm();
    let peak = motion.state_at(0.75).linear_velocity.norm();
    assert!((peak - 1.875 * distance).abs() < 1e-12);
}

#[test]
fn velocities_match_finite_differences() {
    let motion = example();
    let h = 1e-6;
    let mut t = 0.0013;
    while t < motion.duration_s() {
        if boundaries().iter().all(|b| (t - b).abs() > 2.0 * h) {
            let (a, s, b) = (
                motion.state_at(t - h),
                motion.state_at(t),
                motion.state_at(t + h),
            );
            let v = (b.position - a.position) / (2.0 * h);
            assert!(
                (v - s.linear_velocity).norm() < 1e-6 * (1.0 + v.norm()),
                "t = {t}: fd {v} vs {}",
                s.linear_velocity
            );
            let w = (b.orientation * a.orientation.inverse()).scaled_axis() / (2.0 * h);
            assert!(
                (w - s.angular_velocity).norm() < 1e-6 * (1.0 + w.norm()),
                "t = {t}: fd {w} vs {}",
                s.angular_velocity
            );
        }
        t += 0.0101;
    }
}

fn parse_error(text: &str) -> String {
    toml::from_str::<Motion>(text).unwrap_err().to_string()
}

#[test]
fn unknown_field_is_named() {
    let err = parse_error(
        "[[segments]]\ntype = \"line\"\nto_m = [0.0, 0.0, 0.1]\nduration_s = 1.0\nspeed_m_s = 2.0\n",
    );
    assert!(err.contains("speed_m_s"), "{err}");
    let err = parse_error("start_m = [0.0, 0.0, 0.0]\nsegments = []\n");
    assert!(err.contains("start_m"), "{err}");
}

#[test]
fn negative_duration_is_named() {
    let err = parse_error("[[segments]]\ntype = \"hold\"\nduration_s = -1.0\n");
    assert!(err.contains("duration_s") && err.contains("-1"), "{err}");
    let err = parse_error(
        "[[segments]]\ntype = \"waypoints\"\npoints_m = [[0.0, 0.0, 0.0]]\nsegment_duration_s = 0.0\n",
    );
    assert!(err.contains("segment_duration_s"), "{err}");
}

#[test]
fn degenerate_axes_are_named() {
    let err = parse_error(
        "[[segments]]\ntype = \"rotate\"\naxis = [0.0, 0.0, 0.0]\nangle_rad = 1.0\nduration_s = 1.0\n",
    );
    assert!(err.contains("axis"), "{err}");
    let err = parse_error(
        "[[segments]]\ntype = \"circle\"\ncentre_m = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 0.0]\nturns = 1.0\nduration_s = 1.0\n",
    );
    assert!(err.contains("normal"), "{err}");
}

/// Out along x and back, turning a quarter about z and back, at `start`.
fn round_trip(start: [f64; 3], back_to: [f64; 3], repeat: bool) -> Result<Motion, MotionError> {
    Motion::try_from(MotionConfig {
        start_position_m: start,
        start_rotation_rad: [0.0, 0.0, 0.2],
        segments: vec![
            SegmentConfig::Line {
                to_m: [start[0] + 0.03, start[1], start[2]],
                duration_s: 0.5,
            },
            SegmentConfig::Rotate {
                axis: [0.0, 0.0, 1.0],
                angle_rad: std::f64::consts::FRAC_PI_2,
                duration_s: 0.25,
            },
            SegmentConfig::Rotate {
                axis: [0.0, 0.0, 1.0],
                angle_rad: -std::f64::consts::FRAC_PI_2,
                duration_s: 0.25,
            },
            SegmentConfig::Line {
                to_m: back_to,
                duration_s: 0.5,
            },
        ],
        repeat,
    })
}

#[test]
fn repeating_motion_plays_again_from_its_start() {
    let start = [0.01, -0.02, 0.005];
    let motion = round_trip(start, start, true).unwrap();
    assert!(motion.repeats());
    assert!((motion.duration_s() - 1.5).abs() < 1e-12);
    for t in [0.0, 0.1, 0.3, 0.6, 0.75, 0.9, 1.2, 1.49] {
        let first = motion.state_at(t);
        for k in 1..4 {
            let later = motion.state_at(t + 1.5 * k as f64);
            assert!(
                (later.position - first.position).norm() < 1e-9,
                "t = {t}, k = {k}"
            );
            assert!(later.orientation.angle_to(&first.orientation) < 1e-9);
            assert!((later.linear_velocity - first.linear_velocity).norm() < 1e-6);
            assert!((later.angular_velocity - first.angular_velocity).norm() < 1e-6);
        }
    }
    // Mid-way through the second play-through it is moving, not resting.
    let moving = motion.state_at(1.5 + 0.25);
    assert!(moving.linear_velocity.norm() > 0.05, "{moving:?}");
    assert_eq!(moving.position.y, start[1]);
    // Across the wrap the handle does not jump.
    let (before, after) = (motion.state_at(3.0 - 1e-6), motion.state_at(3.0 + 1e-6));
    assert!((before.position - after.position).norm() < 1e-9);
    // An infinite time stays at the start instead of failing.
    assert_eq!(motion.state_at(f64::INFINITY).position, Point3::from(start));
}

#[test]
fn without_repeat_the_same_motion_holds_its_end() {
    let start = [0.01, -0.02, 0.005];
    let motion = round_trip(start, start, false).unwrap();
    assert!(!motion.repeats());
    let held = motion.state_at(1.75);
    assert_eq!(held.linear_velocity, Vector3::zeros());
    assert_eq!(held, motion.state_at(10.0));
}

#[test]
fn repeating_motion_must_return_to_its_start() {
    let start = [0.01, -0.02, 0.005];
    let off = [start[0] + 1e-6, start[1], start[2]];
    let err = round_trip(start, off, true).unwrap_err();
    match err {
        MotionError::RepeatNotClosed {
            position_m,
            rotation_rad,
        } => {
            assert!((position_m - 1e-6).abs() < 1e-12, "{position_m}");
            assert!(rotation_rad <= CLOSURE_TOLERANCE, "{rotation_rad}");
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("repeating"), "{err}");
    // The same path is fine once.
    round_trip(start, off, false).unwrap();
    // A rotation that does not come back is refused too.
    let err = Motion::try_from(MotionConfig {
        start_position_m: [0.0; 3],
        start_rotation_rad: [0.0; 3],
        segments: vec![SegmentConfig::Rotate {
            axis: [1.0, 0.0, 0.0],
            angle_rad: 0.1,
            duration_s: 1.0,
        }],
        repeat: true,
    })
    .unwrap_err();
    assert!(
        matches!(err, MotionError::RepeatNotClosed { rotation_rad, .. } if (rotation_rad - 0.1).abs() < 1e-12),
        "{err:?}"
    );
}

#[test]
fn repeat_parses_and_full_turns_close() {
    let motion: Motion = toml::from_str(
        "repeat = true\nstart_position_m = [0.02, 0.0, 0.0]\n\n[[segments]]\ntype = \"circle\"\ncentre_m = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\nturns = 2.0\nduration_s = 1.0\n",
    )
    .unwrap();
    assert!(motion.repeats());
    let err = parse_error(
        "repeat = true\nstart_position_m = [0.02, 0.0, 0.0]\n\n[[segments]]\ntype = \"circle\"\ncentre_m = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\nturns = 0.5\nduration_s = 1.0\n",
    );
    assert!(err.contains("must end at its start"), "{err}");
    assert!(!example().repeats());
}
