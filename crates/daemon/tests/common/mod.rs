//! Replaying a scene under a scripted handle, tick by tick.
#![allow(dead_code)]

use haptic_config::{Overrides, Scene};
use haptic_daemon::{replay, ReplayReport};
use haptic_devices::{LengthUnit, Trajectory, TrajectoryRow};
use haptic_recording::RecordedTick;

/// The handle at `position(t_s)`, unturned, every millisecond for
/// `seconds`.
pub fn handle_rows(seconds: f64, position: impl Fn(f64) -> [f64; 3]) -> Vec<TrajectoryRow> {
    (0..=(seconds * 1000.0).round() as usize)
        .map(|i| TrajectoryRow {
            t_s: i as f64 * 1e-3,
            position: position(i as f64 * 1e-3),
            quaternion: [1.0, 0.0, 0.0, 0.0],
            buttons: 0,
        })
        .collect()
}

/// The handle pressed `depth_m` down over its first 0.2 s, then, from
/// `press_s` on, drawn along x from rest at `acceleration` (m/s²) for
/// `drag_s`.
pub fn press_and_draw(
    depth_m: f64,
    press_s: f64,
    acceleration: f64,
    drag_s: f64,
) -> Vec<TrajectoryRow> {
    handle_rows(press_s + drag_s, |t| {
        let drag = (t - press_s).clamp(0.0, drag_s);
        [
            0.5 * acceleration * drag * drag,
            0.0,
            -depth_m * (t / 0.2).min(1.0),
        ]
    })
}

/// The scene `toml` replayed (`hapticd replay`'s loop) on the emulator's
/// hand following `rows`: its report and every tick.
pub fn replay_rows(toml: &str, rows: Vec<TrajectoryRow>) -> (ReplayReport, Vec<RecordedTick>) {
    let dir = tempfile::tempdir().unwrap();
    let trajectory = dir.path().join("handle.traj");
    Trajectory::new(LengthUnit::Meters, 1000.0, rows)
        .unwrap()
        .write(std::fs::File::create(&trajectory).unwrap())
        .unwrap();
    let path = dir.path().join("scene.toml");
    std::fs::write(&path, toml).unwrap();
    let overrides = Overrides {
        trajectory: Some(trajectory),
        ..Overrides::default()
    };
    let config = Scene::load(&path, &overrides).unwrap();
    let out = dir.path().join("ticks.csv");
    let report = replay(&config, &out).unwrap();
    (report, haptic_recording::load_recording(&out).unwrap())
}
