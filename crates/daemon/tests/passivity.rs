//! The passivity observer and controller (`[coupling] passivity`), on
//! `hapticd replay`'s deterministic loop with the emulator's hand: contact
//! made and broken against a stiff wall, stick–slip on a floor, a block
//! pushed with the physics stalled for 50–200 ms and with the physics at
//! 20–500 Hz. With the controller on, the energy the scene has taken in
//! from the device through its two ports never falls below −ε; the energy it took in per second
//! is printed with the controller on and off.

mod common;

use common::handle_rows;
use haptic_config::{Overrides, Scene};
use haptic_daemon::{replay_with, PhysicsStall, ReplayOptions, ReplayReport};
use haptic_devices::{LengthUnit, Trajectory, TrajectoryRow};
use std::path::Path;
use std::time::Duration;

/// The lowest energy the controller lets either port reach (J): what a
/// tick's velocity prediction misses, and what the damping cap leaves.
const EPSILON_J: f64 = 1e-4;

/// Replays `scene` (a config's text, `[coupling]` appended) along `rows`.
fn run(
    scene: &str,
    rows: &[TrajectoryRow],
    passivity: bool,
    stalls: &[PhysicsStall],
) -> (ReplayReport, f64) {
    let dir = tempfile::tempdir().unwrap();
    let trajectory = dir.path().join("motion.traj");
    Trajectory::new(LengthUnit::Meters, 1000.0, rows.to_vec())
        .unwrap()
        .write(std::fs::File::create(&trajectory).unwrap())
        .unwrap();
    let path = dir.path().join("scene.toml");
    std::fs::write(
        &path,
        format!("{scene}\n[coupling]\npassivity = {passivity}\n"),
    )
    .unwrap();
    let overrides = Overrides {
        trajectory: Some(trajectory),
        ..Overrides::default()
    };
    let config = Scene::load(&path, &overrides).unwrap();
    let out = dir.path().join("ticks.mcap");
    let options = ReplayOptions {
        physics_stalls: stalls.to_vec(),
    };
    let report = replay_with(&config, &out, &options).unwrap();
    // The recording carries the observer tick by tick.
    let coupling = haptic_recording::load_coupling(&out).unwrap();
    assert_eq!(coupling.len() as u64, report.ticks);
    let lowest = coupling
        .iter()
        .map(|c| c.energy_j + c.rotational_energy_j)
        .fold(f64::INFINITY, f64::min);
    // The summary starts from zero energy.
    assert_eq!(
        lowest.min(0.0),
        report.passivity.lowest_total_energy,
        "the recording's lowest energy against the replay's"
    );
    let seconds = rows.last().unwrap().t_s;
    (report, seconds)
}

/// Runs `scene` with the controller on and off; prints what each took in
/// per second and the lowest energy; asserts the controller's bound and
/// returns the lowest energies, on and off.
fn on_and_off(
    name: &str,
    scene: &str,
    rows: &[TrajectoryRow],
    stalls: &[PhysicsStall],
) -> [f64; 2] {
    let mut lowest = [0.0; 2];
    for (k, passivity) in [true, false].into_iter().enumerate() {
        let (report, seconds) = run(scene, rows, passivity, stalls);
        assert_eq!(report.physics.quarantined, 0, "{name}");
        assert_eq!(report.faults.quarantined, 0, "{name}");
        let p = &report.passivity;
        lowest[k] = p.lowest_total_energy;
        eprintln!(
            "{name}, controller {}: taken in {:.3e} J/s (torque port {:.3e} J/s), lowest {:.3e} J \
             (ports {:.3e} J, {:.3e} J), damped {} ticks, at most {:.2} N·s/m ({:.2e} N·m·s/rad)",
            if passivity { "on" } else { "off" },
            report.final_energy[0] / seconds,
            report.final_energy[1] / seconds,
            p.lowest_total_energy,
            p.lowest_energy,
            p.lowest_rotational_energy,
            p.damped_ticks,
            p.max_damping,
            p.max_rotational_damping,
        );
    }
    assert!(
        lowest[0] >= -EPSILON_J,
        "{name}: the energy fell to {} J with the controller on",
        lowest[0]
    );
    lowest
}

/// A sphere and a stiff static wall at x = 0.04 m.
const WALL: &str = r#"
[[objects]]
name = "sphere"
shape = { kind = "sphere", radius_m = 0.02 }
role = "point_shell"
tool = true
shell_points = 1000

[[objects]]
name = "wall"
shape = { kind = "box", half_extents_m = [0.01, 0.1, 0.1] }
role = "field"
position_m = [0.03, 0.0, 0.0]
field_resolution = 48

[materials.default]
friction_coefficient = 0.0
contact_stiffness_n_per_m = 20000.0

[rendering]
coupling_stiffness_n_per_m = 3000.0

[physics]
gravity_m_s2 = [0.0, 0.0, 0.0]
"#;

#[test]
fn contact_made_and_broken_stays_passive() {
    // In and out of the wall at 3 Hz, 4 mm past its face.
    let rows = handle_rows(2.0, |t| {
        let x = -0.002 + 0.003 * (1.0 - (std::f64::consts::TAU * 3.0 * t).cos());
        [x, 0.0, 0.0]
    });
    let [on, off] = on_and_off("make and break", WALL, &rows, &[]);
    // Sampled, the stiff wall gives energy back at every release; the
    // controller takes most of it.
    assert!(
        off < -1e-4,
        "without the controller the energy fell to {off} J only"
    );
    assert!(
        on > off / 5.0,
        "{on} J with the controller against {off} J without"
    );
}

/// A cube pressed onto a floor, μ = 0.5.
const FLOOR: &str = r#"
[[objects]]
name = "cube"
shape = { kind = "box", half_extents_m = [0.02, 0.02, 0.02] }
role = "point_shell"
tool = true
shell_points = 2000

[[objects]]
name = "floor"
shape = { kind = "box", half_extents_m = [0.2, 0.2, 0.01] }
role = "field"
position_m = [0.0, 0.0, -0.03]
field_resolution = 64

[materials.default]
friction_coefficient = 0.5

[physics]
gravity_m_s2 = [0.0, 0.0, 0.0]
"#;

#[test]
fn stick_slip_stays_passive() {
    // Pressed 3 mm into the floor, dragged ±2 cm at 1 Hz: it sticks at
    // each turn and slides between.
    let rows = handle_rows(3.0, |t| {
        let press = -0.003 * (t / 0.3).min(1.0);
        let drag = 0.02 * (std::f64::consts::TAU * (t - 0.3).max(0.0)).sin();
        [drag, 0.0, press]
    });
    on_and_off("stick-slip", FLOOR, &rows, &[]);
}

fn push_block() -> (String, Vec<TrajectoryRow>) {
    let repo = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let path = repo.join("config/push-block.toml");
    let motion = Scene::load(&path, &Overrides::default())
        .unwrap()
        .device()
        .motion
        .clone()
        .unwrap();
    let rows = handle_rows(motion.duration_s(), |t| {
        motion.state_at(t).position.coords.into()
    });
    (std::fs::read_to_string(path).unwrap(), rows)
}

#[test]
fn physics_stalls_stay_passive() {
    let (base, rows) = push_block();
    // Stalls of 50, 100 and 200 ms while the sphere pushes the block.
    let stalls: Vec<PhysicsStall> = [(1.0, 50), (1.5, 100), (2.0, 200)]
        .into_iter()
        .map(|(at, ms)| PhysicsStall {
            start: Duration::from_secs_f64(at),
            length: Duration::from_millis(ms),
        })
        .collect();
    on_and_off("push-block, physics stalled", &base, &rows, &stalls);
}

#[test]
fn physics_rates_from_20_to_500_hz_stay_passive() {
    let (base, rows) = push_block();
    for rate in [20.0, 50.0, 200.0, 500.0] {
        let scene = format!("{base}\n[threads.physics]\nrate_hz = {rate}\n");
        on_and_off(
            &format!("push-block, physics at {rate} Hz"),
            &scene,
            &rows,
            &[],
        );
    }
}
