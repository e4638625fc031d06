use haptic_devices::{
    AtEnd, Clock, DeviceError, DeviceSample, EmulatorConfig, EmulatorMode, HandParams,
    HapticDevice, LengthUnit, RotationParams, Trajectory, TrajectoryEmulator, TrajectoryRow,
    Wrench,
};
use haptic_recording::{CsvWriter, RecordedTick};
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use std::time::Duration;

/// A 1 kHz recording of `seconds` with position `f(t)` (m) and a yaw of `t` rad.
fn recording(seconds: f64, f: impl Fn(f64) -> [f64; 3]) -> Trajectory {
    let n = (seconds * 1000.0).round() as usize;
    let rows = (0..=n)
        .map(|i| {
            let t_s = i as f64 / 1000.0;
            let q = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), t_s);
            TrajectoryRow {
                t_s,
                position: f(t_s),
                quaternion: [q.w, q.i, q.j, q.k],
                buttons: (i / 100) as u32,
            }
        })
        .collect();
    Trajectory::new(LengthUnit::Meters, 1000.0, rows).unwrap()
}

fn hand(rotation: Option<RotationParams>) -> EmulatorMode {
    EmulatorMode::Hand(HandParams {
        mass: 0.2,
        k_hand: 300.0,
        c_hand: 3.0,
        damping: 0.5,
        rotation,
    })
}

#[test]
fn kinematic_follows_the_recording_exactly() {
    let traj = recording(0.5, |t| [0.1 * t, (3.0 * t).sin() * 0.01, -0.02]);
    let mut dev = TrajectoryEmulator::new(
        traj.clone(),
        EmulatorConfig::new(EmulatorMode::Kinematic, Clock::Stepped),
    );
    assert_eq!(dev.capabilities().output_dof, 0);
    for n in 0..=500u64 {
        let s = dev.read().unwrap();
        dev.write(&Wrench {
            force: Vector3::new(5.0, 0.0, 0.0),
            torque: Vector3::zeros(),
        })
        .unwrap();
        let rec = traj.at(n as f64 * 1e-3);
        assert_eq!(s.timestamp, Duration::from_secs_f64(n as f64 * 1e-3));
        assert_eq!(s.position, rec.position);
        assert_eq!(s.orientation, rec.orientation);
        assert_eq!(s.buttons, rec.buttons);
        assert_eq!(s.linear_velocity, Some(rec.linear_velocity));
    }
    assert_eq!(dev.read(), Err(DeviceError::EndOfRecording));
    assert_eq!(dev.read(), Err(DeviceError::EndOfRecording));
}

#[test]
fn hold_keeps_the_last_sample() {
    let traj = recording(0.1, |t| [t, 0.0, 0.0]);
    let mut config = EmulatorConfig::new(EmulatorMode::Kinematic, Clock::Stepped);
    config.at_end = AtEnd::Hold;
    let mut dev = TrajectoryEmulator::new(traj.clone(), config);
    let last = (0..=100).map(|_| dev.read().unwrap()).last().unwrap();
    for _ in 0..50 {
        let s = dev.read().unwrap();
        assert_eq!(
            (s.position, s.orientation),
            (last.position, last.orientation)
        );
        assert_eq!(s.linear_velocity, Some(Vector3::zeros()));
    }
    assert_eq!(dev.tick(), 150);
}

#[test]
fn hand_mode_tracks_and_yields_to_the_rendered_force() {
    let traj = recording(3.0, |_| [0.0, 0.0, 0.05]);
    let mut dev = TrajectoryEmulator::new(
        traj,
        EmulatorConfig::new(
            hand(Some(RotationParams {
                inertia: 1e-4,
                k_hand: 2.0,
                c_hand: 0.02,
                damping: 0.0,
            })),
            Clock::Stepped,
        ),
    );
    assert_eq!(dev.capabilities().output_dof, 6);
    let push = Wrench {
        force: Vector3::new(3.0, 0.0, 0.0),
        torque: Vector3::new(0.0, 0.0, 0.1),
    };
    let mut s = dev.read().unwrap();
    assert_eq!(s.position.coords, Vector3::new(0.0, 0.0, 0.05));
    for _ in 0..3000 {
        dev.write(&push).unwrap();
        s = dev.read().unwrap();
    }
    // Static balance: k_hand·Δx = F, and the handle turning with the
    // recording leads it by τ/k_rot (the hand damps relative velocity).
    assert!((s.position.x - 3.0 / 300.0).abs() < 1e-6, "{}", s.position);
    let lag = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), 3.0)
        .rotation_to(&s.orientation)
        .scaled_axis()
        .z;
    assert!((lag - 0.1 / 2.0).abs() < 1e-9, "{lag}");
    assert_eq!(
        dev.write(&Wrench {
            force: Vector3::new(f64::NAN, 0.0, 0.0),
            torque: Vector3::zeros()
        }),
        Err(DeviceError::WrenchNotFinite)
    );
}

#[test]
fn kinematic_orientation_in_hand_mode_ignores_torque() {
    let traj = recording(0.2, |_| [0.0; 3]);
    let mut dev = TrajectoryEmulator::new(
        traj.clone(),
        EmulatorConfig::new(hand(None), Clock::Stepped),
    );
    assert_eq!(dev.capabilities().output_dof, 3);
    for n in 0..=200 {
        let s = dev.read().unwrap();
        assert_eq!(s.orientation, traj.at(n as f64 * 1e-3).orientation);
        dev.write(&Wrench {
            force: Vector3::zeros(),
            torque: Vector3::new(1.0, 2.0, 3.0),
        })
        .unwrap();
    }
}

#[test]
fn real_time_clock_follows_the_wall_clock_in_whole_ticks() {
    let traj = recording(0.2, |t| [t, 0.0, 0.0]);
    let mut dev = TrajectoryEmulator::new(
        traj,
        EmulatorConfig::new(EmulatorMode::Kinematic, Clock::RealTime),
    );
    let start = std::time::Instant::now();
    assert_eq!(dev.read().unwrap().timestamp, Duration::ZERO);
    std::thread::sleep(Duration::from_millis(30));
    let s = dev.read().unwrap();
    let elapsed = start.elapsed();
    assert!(s.timestamp >= Duration::from_millis(30) && s.timestamp <= elapsed);
    assert_eq!(s.timestamp.subsec_nanos() % 1_000_000, 0);
    assert!((s.position.x - s.timestamp.as_secs_f64()).abs() < 1e-12);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(dev.read(), Err(DeviceError::EndOfRecording));
}

/// The pose of a device sample.
fn pose_of(sample: &DeviceSample) -> Isometry3<f64> {
    Isometry3::from_parts(
        Translation3::from(sample.position.coords),
        sample.orientation,
    )
}

/// One stepped hand-mode run against a stiff wall at z = 0, recorded.
fn wall_run() -> Vec<u8> {
    let traj = recording(1.0, |t| [0.01 * t, 0.0, 0.005 - 0.01 * t]);
    let mut dev = TrajectoryEmulator::new(traj, EmulatorConfig::new(hand(None), Clock::Stepped));
    let mut recorder = CsvWriter::new(Vec::new()).unwrap();
    let k_wall = 5000.0;
    while let Ok(s) = dev.read() {
        let depth = (-s.position.z).max(0.0);
        let wrench = Wrench {
            force: Vector3::new(0.0, 0.0, k_wall * depth),
            torque: Vector3::zeros(),
        };
        dev.write(&wrench).unwrap();
        recorder
            .record(&RecordedTick {
                tick: dev.tick(),
                time: s.timestamp,
                pose: pose_of(&s),
                wrench,
                rendered: wrench,
                tool_pose: pose_of(&s),
                contacts: u32::from(depth > 0.0),
                state: if depth > 0.0 { 2 } else { 1 },
                verdict: if depth > 0.0 { 2 } else { 1 },
                quarantined: false,
                cycle_time_ns: 0,
            })
            .unwrap();
    }
    recorder.finish().unwrap()
}

#[test]
fn stepped_runs_replay_byte_for_byte() {
    let first = wall_run();
    let second = wall_run();
    assert_eq!(first, second);
    let text = String::from_utf8(first).unwrap();
    // The header (haptic-recording's), then a line per tick.
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2 + 1001);
    assert!(
        lines[2].starts_with("0,0,0,0,0.005,1,0,0,0,0,0,0,0,0,0,0,1,0"),
        "{}",
        lines[2]
    );
    let in_contact = lines[2..]
        .iter()
        .filter(|l| l.split(',').nth(15) == Some("1"))
        .count();
    assert!(in_contact > 400, "{in_contact} ticks in contact");
}
