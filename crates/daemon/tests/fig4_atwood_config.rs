//! `config/fig4-atwood.toml`, simulated as `hapticd simulate` runs it: the
//! rope over the hinged wheel is an Atwood machine, gripping the wheel
//! with friction and sliding over a still one without.

use haptic_config::{Overrides, Scene};
use haptic_daemon::simulate;
use haptic_testkit::simulation::Recording;
use std::path::Path;

const G: f64 = 9.81;
const DURATION: f64 = 0.3;
/// The config's masses (kg) and the wheel's radius and the rope's half
/// thickness (m).
const BUNNY: f64 = 0.3;
const TORUS: f64 = 0.2;
const ROPE: f64 = 0.05;
const WHEEL: f64 = 0.5;
const RADIUS: f64 = 0.1;
const CONTACT_RADIUS: f64 = 0.103;

/// The config, with its friction coefficients replaced by `friction`;
/// the recording's last row's bunny speed (down), wheel rim speed (its top
/// towards the bunny) and torus rise. Its meshes are read where
/// scripts/fetch-test-data links them, config/test-data.
fn run(friction: f64) -> (f64, f64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let configs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config");
    let text = std::fs::read_to_string(configs.join("fig4-atwood.toml"))
        .unwrap()
        .replace(
            "\"test-data/",
            &format!("\"{}/", configs.join("test-data").display()),
        )
        .replace(
            "friction_coefficient = 0.8",
            &format!("friction_coefficient = {friction}"),
        )
        .replace("friction = 0.8", &format!("friction = {friction}"));
    let path = dir.path().join("fig4.toml");
    std::fs::write(&path, text).unwrap();
    let scene = Scene::load(&path, &Overrides::default()).unwrap_or_else(|e| panic!("{e}"));
    let dt = 1.0 / scene.threads().physics.rate_hz;
    let out = dir.path().join("fig4.csv");
    simulate(&scene, dt, (DURATION / dt).round() as u64, &out, |_| {}).unwrap();
    let Recording { columns, rows, .. } = Recording::read(&out);
    let column = |name: &str| columns.iter().position(|c| c == name).unwrap();
    let (first, last) = (&rows[0], &rows[rows.len() - 1]);
    assert!(rows.iter().all(|r| r[column("quarantined")] == 0.0));
    (
        -last[column("bunny_vz")],
        -last[column("wheel_wy")] * CONTACT_RADIUS,
        last[column("torus_z")] - first[column("torus_z")],
    )
}

/// `(m₁ − m₂) g / (m₁ + m₂ + m_rope + I/r²)`, the wheel's `I = m R²/2`
/// when the rope turns it. The rope's own weight, shifting to the bunny's
/// side, adds 2 % to the speed at 0.3 s.
fn atwood(turning: bool) -> f64 {
    let inertia = if turning {
        0.5 * WHEEL * RADIUS * RADIUS / (CONTACT_RADIUS * CONTACT_RADIUS)
    } else {
        0.0
    };
    (BUNNY - TORUS) * G / (BUNNY + TORUS + ROPE + inertia)
}

#[test]
fn the_fig4_rope_grips_the_wheel_and_falls_at_the_atwood_rate() {
    let (speed, rim, rise) = run(0.8);
    let expected = atwood(true) * DURATION;
    eprintln!(
        "bunny at {speed:.4} m/s against {expected:.4}; rim {rim:.4} m/s; torus rose {rise:.4} m"
    );
    assert!(
        (speed - expected).abs() < 0.05 * expected,
        "{speed} against {expected}"
    );
    assert!(
        (rim - speed).abs() < 0.05 * speed,
        "rim {rim} against the rope's {speed}"
    );
    assert!(rise > 0.0, "the bunny did not drag the torus up");
}

#[test]
fn without_friction_the_fig4_rope_slides_over_a_still_wheel() {
    let (speed, rim, rise) = run(0.0);
    let expected = atwood(false) * DURATION;
    eprintln!(
        "bunny at {speed:.4} m/s against {expected:.4}; rim {rim:.4} m/s; torus rose {rise:.4} m"
    );
    assert!(
        (speed - expected).abs() < 0.05 * expected,
        "{speed} against {expected}"
    );
    assert!(rim.abs() < 0.01 * speed, "the wheel turned: rim {rim} m/s");
    assert!(rise > 0.0);
}
