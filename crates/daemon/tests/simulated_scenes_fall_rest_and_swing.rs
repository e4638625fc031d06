//! `haptic_daemon::simulate` on small scenes written here: a cube dropped
//! onto a table, and a rod swinging on a hinge. The recordings are checked
//! against free fall and the kinetic energy of the bodies they record, and
//! equal inputs give equal bytes; the cube must land where it fell and
//! rest, and the rod swing at a physical pendulum's small-angle period.

use haptic_config::{Overrides, Scene};
use haptic_daemon::{simulate, SIMULATION_HEADER};
use haptic_testkit::simulation::Recording;
use std::f64::consts::PI;
use std::path::Path;

const G: f64 = 9.81;

/// A scene of `objects` besides a parked tool, with `physics`.
fn scene(dir: &Path, name: &str, objects: &str, physics: &str) -> Scene {
    let text = format!(
        r#"[[objects]]
name = "probe"
shape = {{ kind = "sphere", radius_m = 0.01 }}
role = "point_shell"
tool = true
position_m = [0.0, 0.0, 0.5]
shell_points = 200
{objects}
[physics]
{physics}

[device]
motion = {{ segments = [{{ type = "hold", duration_s = 1.0 }}] }}
"#
    );
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    Scene::load(&path, &Overrides::default()).unwrap_or_else(|e| panic!("{e}"))
}

const CUBE_ON_TABLE: &str = r#"
[[objects]]
name = "table"
shape = { kind = "box", half_extents_m = [0.1, 0.1, 0.01] }
role = "field"
position_m = [0.0, 0.0, -0.01]

[[objects]]
name = "cube"
shape = { kind = "box", half_extents_m = [0.02, 0.02, 0.02] }
role = "field"
movable = true
position_m = [0.0, 0.0, 0.05]
shell_points = 1000
"#;

/// The cube scene, at the default physics parameters.
fn cube_on_table(dir: &Path) -> Scene {
    scene(dir, "drop.toml", CUBE_ON_TABLE, "")
}

#[test]
fn the_recording_holds_every_step_of_the_bodies() {
    let dir = tempfile::tempdir().unwrap();
    let config = cube_on_table(dir.path());
    let (dt, steps) = (0.005, 100);
    let out = dir.path().join("drop.csv");
    let mut seen = 0;
    let report = simulate(&config, dt, steps, &out, |step| seen = step).unwrap();
    assert_eq!(seen, steps);
    assert_eq!(report.physics.steps, steps);
    assert_eq!(report.physics.bodies.len(), 1);

    let Recording {
        header: comments,
        columns,
        rows,
    } = Recording::read(&out);
    assert_eq!(comments, [SIMULATION_HEADER, "# dt_s: 0.005"]);
    assert_eq!(
        columns[..8],
        [
            "step",
            "time_s",
            "kinetic_energy_j",
            "contacts",
            "max_penetration_m",
            "quarantined",
            "cube_x",
            "cube_y"
        ]
    );
    assert_eq!(columns.len(), 6 + 13);
    assert_eq!(rows.len(), steps as usize + 1);
    let column = |name: &str| columns.iter().position(|c| c == name).unwrap();
    let (z, vz) = (column("cube_z"), column("cube_vz"));
    assert_eq!(rows[0][z], 0.05);
    assert_eq!(rows[0][column("cube_qw")], 1.0);

    // Free fall, semi-implicit: v = −g t, z = z0 − g dt² n(n+1)/2, until the
    // cube's bottom (from 3 cm up) meets the table, 78 ms in.
    let falling: Vec<&Vec<f64>> = rows.iter().take_while(|r| r[3] == 0.0).collect();
    assert!(
        (14..=17).contains(&falling.len()),
        "{} steps of free fall",
        falling.len()
    );
    for row in &falling {
        let n = row[0];
        assert!((row[1] - n * dt).abs() < 1e-15);
        assert!((row[vz] + G * n * dt).abs() < 1e-12, "{row:?}");
        assert!(
            (row[z] - (0.05 - G * dt * dt * n * (n + 1.0) / 2.0)).abs() < 1e-12,
            "{row:?}"
        );
    }
    assert!(rows[falling.len()][3] > 0.0 && rows[falling.len()][4] > 0.0);

    // The kinetic energy recorded is the body's: ½ m v² + ½ ωᵀ I ω for a
    // 4 cm cube of water (0.064 kg, I = m s²/6 about every axis).
    let (mass, inertia) = (0.064, 0.064 * 0.04 * 0.04 / 6.0);
    let (velocity, spin) = (column("cube_vx"), column("cube_wx"));
    for row in &rows {
        let v2: f64 = row[velocity..velocity + 3].iter().map(|v| v * v).sum();
        let w2: f64 = row[spin..spin + 3].iter().map(|w| w * w).sum();
        let energy = 0.5 * mass * v2 + 0.5 * inertia * w2;
        assert!(
            (row[2] - energy).abs() <= 1e-9 * energy.max(1e-12),
            "{row:?}"
        );
    }
    assert_eq!(report.kinetic_energy, rows[steps as usize][2]);

    // Deterministic to the byte.
    let again = dir.path().join("again.csv");
    simulate(&config, dt, steps, &again, |_| {}).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&again).unwrap());
}

#[test]
fn a_cube_dropped_flat_lands_where_it_fell_and_rests() {
    let dir = tempfile::tempdir().unwrap();
    let config = cube_on_table(dir.path());
    let out = dir.path().join("drop.csv");
    // 1 ms steps: hitting the table at 1.1 m/s, the cube sinks at most
    // 1.1 mm into it in a step. (At the physics thread's 5 ms it sinks
    // 3.4 mm, deep enough for the table's points near the cube's edges to
    // find its side faces nearest and push it aside.)
    let report = simulate(&config, 0.001, 1000, &out, |_| {}).unwrap();
    assert_eq!(report.physics.quarantined, 0);
    let cube = &report.physics.bodies[0];
    let x = cube.pose.translation.vector;
    eprintln!(
        "landed at {x:?}, turned {} rad, moving at {:?} m/s, {:?} rad/s",
        cube.pose.rotation.angle(),
        cube.velocity,
        cube.angular_velocity
    );
    // Falling flat at 1.1 m/s onto a level table, it meets it on its whole
    // face at once: nothing pushes it sideways or turns it.
    assert!(x.xy().norm() < 1e-3, "landed {} m off", x.xy().norm());
    assert!(
        cube.pose.rotation.angle() < 0.01,
        "{}",
        cube.pose.rotation.angle()
    );
    // At rest, its centre one half side up, less the penetration the
    // penalty springs need to carry it.
    assert!((x.z - 0.02).abs() < 1e-4, "z = {}", x.z);
    assert!(
        cube.velocity.norm() < 1e-3,
        "moving at {}",
        cube.velocity.norm()
    );
    assert!(
        report.physics.max_penetration < 0.005,
        "{}",
        report.physics.max_penetration
    );
}

#[test]
fn a_rod_on_a_hinge_swings_at_the_pendulum_s_period() {
    let dir = tempfile::tempdir().unwrap();
    // A 2 × 2 × 10 cm rod hanging from a hinge about y at its top end,
    // turned 0.1 rad about the hinge; no table: it swings in free space.
    let (length, width, angle) = (0.1f64, 0.02f64, 0.1f64);
    let (sin, cos) = angle.sin_cos();
    let half = length / 2.0;
    // The rod's centre, half a length below the hinge at the origin.
    let centre = [-half * sin, 0.0, -half * cos];
    let objects = format!(
        r#"
[[objects]]
name = "rod"
shape = {{ kind = "box", half_extents_m = [{w}, {w}, {half}] }}
role = "field"
movable = true
position_m = [{x}, 0.0, {z}]
rotation_rad = [0.0, {angle}, 0.0]
shell_points = 300

[[joints]]
name = "hinge"
kind = "hinge"
body_a = "rod"
point_m = [0.0, 0.0, 0.0]
axis = [0.0, 1.0, 0.0]
"#,
        w = width / 2.0,
        x = centre[0],
        z = centre[2],
    );
    let config = scene(dir.path(), "pendulum.toml", &objects, "");
    let dt = 0.001;
    let out = dir.path().join("pendulum.csv");
    simulate(&config, dt, 1500, &out, |_| {}).unwrap();
    let Recording { columns, rows, .. } = Recording::read(&out);
    let column = |name: &str| columns.iter().position(|c| c == name).unwrap();
    let (x, z) = (column("rod_x"), column("rod_z"));

    // The hinge holds: the centre stays half a length from the pivot.
    for row in &rows {
        let r = (row[x] * row[x] + row[z] * row[z]).sqrt();
        assert!((r - half).abs() < 1e-4, "{row:?}");
    }
    // Physical pendulum: T = 2π √(I_pivot / (m g d)), I_pivot = m (w² +
    // L²)/12 + m d², d = L/2; the mass cancels.
    let period =
        2.0 * PI * (((width * width + length * length) / 12.0 + half * half) / (G * half)).sqrt();
    // Upward crossings of x = 0 (the centre passing under the pivot).
    let crossings: Vec<f64> = rows
        .windows(2)
        .filter(|w| w[0][x] < 0.0 && w[1][x] >= 0.0)
        .map(|w| w[0][1] + dt * (-w[0][x] / (w[1][x] - w[0][x])))
        .collect();
    assert!(crossings.len() >= 2, "{crossings:?}");
    let measured = (crossings[crossings.len() - 1] - crossings[0]) / (crossings.len() - 1) as f64;
    eprintln!("period {measured:.5} s against {period:.5} s");
    assert!(
        (measured - period).abs() < 0.01 * period,
        "{measured} s against {period} s"
    );
}
