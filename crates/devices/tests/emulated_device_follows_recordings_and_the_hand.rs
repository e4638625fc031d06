use haptic_devices::{
    load_ticks, read_ticks, AtEnd, Clock, DeviceError, EmulatorConfig, EmulatorMode, HandParams,
    HapticDevice, LengthUnit, RecordedTick, Recorder, RotationParams, Trajectory,
    TrajectoryEmulator, TrajectoryRow, Wrench,
};
use nalgebra::{UnitQuaternion, Vector3};
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

/// One stepped hand-mode run against a stiff wall at z = 0, recorded.
fn wall_run() -> Vec<u8> {
    let traj = recording(1.0, |t| [0.01 * t, 0.0, 0.005 - 0.01 * t]);
    let mut dev = TrajectoryEmulator::new(traj, EmulatorConfig::new(hand(None), Clock::Stepped));
    let mut recorder = Recorder::new(Vec::new()).unwrap();
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
                pose: RecordedTick::pose_of(&s),
                wrench,
                rendered: wrench,
                tool_pose: RecordedTick::pose_of(&s),
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
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "# hapticd-ticks: 2");
    assert_eq!(
        lines[1],
        "# columns: tick,time_ns,x,y,z,qw,qx,qy,qz,fx,fy,fz,tx,ty,tz,contacts,state,cycle_time_ns,\
         rendered_fx,rendered_fy,rendered_fz,rendered_tx,rendered_ty,rendered_tz,\
         tool_x,tool_y,tool_z,tool_qw,tool_qx,tool_qy,tool_qz,verdict,quarantined"
    );
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

    let path = std::env::temp_dir().join(format!("hapticd-ticks-{}.csv", std::process::id()));
    let mut file = Recorder::create(&path).unwrap();
    for line in 0..3 {
        file.record(&RecordedTick {
            tick: line,
            time: Duration::from_millis(line),
            pose: nalgebra::Isometry3::identity(),
            wrench: Wrench::ZERO,
            rendered: Wrench {
                force: Vector3::new(0.5, 0.0, 0.0),
                torque: Vector3::zeros(),
            },
            tool_pose: nalgebra::Isometry3::translation(0.0, 0.0, 0.25),
            contacts: 0,
            state: 255,
            verdict: 5,
            quarantined: line == 1,
            cycle_time_ns: 1234,
        })
        .unwrap();
    }
    drop(file.finish().unwrap());
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(
        written.ends_with(
            "2,2000000,0,0,0,1,0,0,0,0,0,0,0,0,0,0,255,1234,0.5,0,0,0,0,0,0,0,0.25,1,0,0,0,5,0\n"
        ),
        "{written}"
    );
    let read = load_ticks(&path).unwrap();
    assert_eq!(read.len(), 3);
    assert!(read[1].quarantined && !read[2].quarantined);
    assert_eq!(read[2].rendered.force.x, 0.5);
    std::fs::remove_file(path).unwrap();
}

/// Every value of a recording reads back with the bits it was written with.
#[test]
fn tick_recordings_read_back_exactly() {
    let records: Vec<RecordedTick> = (0..50u64)
        .map(|i| {
            let x = i as f64;
            let q = UnitQuaternion::from_scaled_axis(Vector3::new(0.1 * x, -0.03, 0.7 / (x + 1.0)));
            let p = UnitQuaternion::from_scaled_axis(Vector3::new(1e-9 * x, 0.2, -0.1));
            RecordedTick {
                tick: i,
                time: Duration::from_nanos(1_000_000 * i + 7),
                pose: nalgebra::Isometry3::from_parts(
                    Vector3::new(x / 3.0, -1e-7 * x, 0.1).into(),
                    q,
                ),
                wrench: Wrench {
                    force: Vector3::new(x.sin(), 0.0, -2.5),
                    torque: Vector3::new(0.0, 1.0 / 7.0, f64::MIN_POSITIVE),
                },
                rendered: Wrench {
                    force: Vector3::new(1e300, -x.cos(), 0.1 + 0.2),
                    torque: Vector3::new(-0.0, 1e-12, 3.0),
                },
                tool_pose: nalgebra::Isometry3::from_parts(
                    Vector3::new(0.05, x.sqrt(), -0.025).into(),
                    p,
                ),
                contacts: (i * 37 % 2000) as u32,
                state: [0, 1, 2, 255][(i % 4) as usize],
                verdict: [0, 1, 2, 3, 4, 5, 255][(i % 7) as usize],
                quarantined: i % 5 == 0,
                cycle_time_ns: i * 1000 + 3,
            }
        })
        .collect();
    let mut recorder = Recorder::new(Vec::new()).unwrap();
    for record in &records {
        recorder.record(record).unwrap();
    }
    let text = String::from_utf8(recorder.finish().unwrap()).unwrap();
    let read = read_ticks(&text, "ticks.csv").unwrap();
    assert_eq!(read, records);
    // The same bytes again.
    let mut again = Recorder::new(Vec::new()).unwrap();
    for record in &read {
        again.record(record).unwrap();
    }
    assert_eq!(String::from_utf8(again.finish().unwrap()).unwrap(), text);

    let error = read_ticks(
        &text.replace("# hapticd-ticks: 2", "# hapticd-ticks: 1"),
        "old.csv",
    )
    .unwrap_err();
    assert_eq!(error.line, Some(1));
    assert!(
        error.to_string().starts_with("old.csv:1: unsupported"),
        "{error}"
    );
    let mut lines: Vec<&str> = text.lines().collect();
    let short = lines[5].rsplit_once(',').unwrap().0.to_owned();
    lines[5] = &short;
    let error = read_ticks(&lines.join("\n"), "short.csv").unwrap_err();
    assert_eq!(
        error.to_string(),
        "short.csv:6: expected 33 columns, found 32"
    );
    let bad = text.replacen(",0.1,", ",x,", 1);
    let error = read_ticks(&bad, "bad.csv").unwrap_err();
    assert!(error.message.contains("bad number `x`"), "{error}");
}
