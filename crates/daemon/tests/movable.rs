//! config/push-block.toml replayed: a sphere pushes a movable block through
//! viscous drag. The block must move with the sphere, and the contact
//! impulse it received must equal what the drag took plus its momentum:
//! ∫F dt = c Δx + m v.

use haptic_config::{Overrides, Scene};
use haptic_daemon::replay;
use haptic_devices::{LengthUnit, Trajectory, TrajectoryRow};
use std::path::Path;

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

#[test]
fn a_pushed_block_moves_and_takes_the_impulse_its_drag_dissipates() {
    let dir = tempfile::tempdir().unwrap();
    let path = repo().join("config/push-block.toml");
    let config = Scene::load(&path, &Overrides::default()).unwrap();
    // The config's scripted motion, recorded at 1 kHz, on the emulator.
    let motion = config.device().motion.clone().unwrap();
    let rows: Vec<TrajectoryRow> = (0..=(motion.duration_s() * 1000.0).round() as usize)
        .map(|i| {
            let t_s = i as f64 * 1e-3;
            let state = motion.state_at(t_s);
            TrajectoryRow {
                t_s,
                position: state.position.coords.into(),
                quaternion: [1.0, 0.0, 0.0, 0.0],
                buttons: 0,
            }
        })
        .collect();
    let trajectory = dir.path().join("push.traj");
    Trajectory::new(LengthUnit::Meters, 1000.0, rows)
        .unwrap()
        .write(std::fs::File::create(&trajectory).unwrap())
        .unwrap();
    let overrides = Overrides {
        trajectory: Some(trajectory),
        ..Overrides::default()
    };
    let config = Scene::load(&path, &overrides).unwrap();
    let out = dir.path().join("ticks.csv");
    let report = replay(&config, &out).unwrap();

    let block = &report.movable[0];
    let start = 0.065;
    let moved = block.pose.translation.x - start;
    // The sphere's front starts 2 cm short of the block and ends 4 cm
    // past where the block's face was (6 cm of travel).
    assert!((moved - 0.04).abs() < 0.004, "the block moved {moved} m");
    // Pushing a flat face with a sphere is a point push, which does not
    // steer: the shell's sampling turns it by under a degree and moves it
    // sideways by under a millimetre.
    let sideways = block.pose.translation.vector.yz().norm();
    assert!(sideways < 0.05 * moved, "sideways {sideways} m");
    assert!(block.pose.rotation.angle() < 0.02);
    assert!(
        block.velocity.norm() < 1e-3,
        "still moving: {:?}",
        block.velocity
    );

    // Momentum bookkeeping: with implicit drag, Σ J = m Δv + c Δx exactly,
    // and every servo tick's contact impulse reached the body.
    let received = block.impulse.x;
    let balance = block.mass * block.velocity.x + 2.0 * moved;
    assert!(
        (received - balance).abs() < 1e-9,
        "impulse {received} N·s against m v + c Δx = {balance} N·s"
    );

    // What the hand felt: the recorded device force's impulse (the device
    // feels the reaction, −x). It exceeds the contact impulse by the drag
    // that static damping (α = 0.6, Zhao, Li & Barbič §4.2) adds while the tool
    // moves: the tool lags the handle a little more than equilibrium.
    let text = std::fs::read_to_string(&out).unwrap();
    let felt: f64 = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| -l.split(',').nth(9).unwrap().parse::<f64>().unwrap() * 1e-3)
        .sum();
    eprintln!("moved {moved:.5} m; contact impulse {received:.5} N·s; felt {felt:.5} N·s");
    assert!(
        felt > received && felt < 1.5 * received,
        "felt {felt} N·s against the block's {received} N·s"
    );
}
