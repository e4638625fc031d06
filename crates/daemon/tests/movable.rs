//! config/push-block.toml replayed: a sphere pushes a block that rests on
//! a table and slides on it with Coulomb friction. The block must move
//! with the sphere and stay on the table, and, pushed by the handle held
//! still, stop where the push has fallen to what friction holds: μ m g.

use haptic_config::{Overrides, Scene};
use haptic_daemon::replay;
use haptic_devices::{LengthUnit, Trajectory, TrajectoryRow};
use std::path::Path;

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

#[test]
fn a_pushed_block_slides_on_the_table_against_friction() {
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
    let physics = &report.physics;
    assert_eq!(physics.quarantined, 0);
    assert!(physics.steps > 800, "{} steps", physics.steps);

    let block = &physics.bodies[0];
    assert_eq!(block.name, "block");
    let start = 0.065;
    let moved = block.pose.translation.x - start;
    // The sphere's front starts 2 cm short of the block and ends 4 cm
    // past where the block's face was (6 cm of travel).
    assert!((moved - 0.04).abs() < 0.004, "the block moved {moved} m");
    // Pushing a flat face with a sphere is a point push, which does not
    // steer: the shell's sampling turns it by under a degree (0.05° here).
    let sideways = block.pose.translation.y.abs();
    assert!(sideways < 0.05 * moved, "sideways {sideways} m");
    assert!(
        block.pose.rotation.angle() < 0.02,
        "{}",
        block.pose.rotation.angle()
    );
    // On the table (its top at z = −0.025 m), at rest.
    let z = block.pose.translation.z;
    assert!(z.abs() < 1e-4, "the block's centre at z = {z} m");
    assert!(
        block.velocity.norm() < 1e-3,
        "still moving: {:?}",
        block.velocity
    );

    // Coulomb: once the handle stops (at 2.6 s), the coupling's push
    // relaxes until the block stops, at the push friction can hold: the
    // hand then feels μ m g, held (the pair's μ is 0.3).
    let friction = 0.3 * block.mass * 9.81;
    let ticks = haptic_recording::load_recording(&out).unwrap();
    let held: Vec<f64> = ticks
        .iter()
        .filter(|t| (2.8..3.1).contains(&t.time.as_secs_f64()))
        .map(|t| -t.rendered.force.x)
        .collect();
    let mean = held.iter().sum::<f64>() / held.len() as f64;
    let spread = held.iter().fold(0.0f64, |m, f| m.max((f - mean).abs()));
    eprintln!(
        "moved {moved:.5} m; held by {mean:.4} N (±{spread:.1e}) against μ m g = {friction:.4} N"
    );
    assert!(
        (mean - friction).abs() < 0.02 * friction,
        "the hand feels {mean} N against μ m g = {friction} N"
    );
    assert!(spread < 0.01 * friction, "the push varies by {spread} N");

    // Every servo tick's contact impulse reached the block, and the hand
    // felt what the block received: the servo moves the block every tick
    // (`[coupling] local_models`), so the tool pushes the body it renders.
    let received = block.impulse.x;
    let felt: f64 = ticks.iter().map(|t| -t.rendered.force.x * 1e-3).sum();
    eprintln!("contact impulse {received:.5} N·s; felt {felt:.5} N·s");
    assert!(
        (felt - received).abs() < 0.01 * received,
        "felt {felt} N·s against the block's {received} N·s"
    );
}
