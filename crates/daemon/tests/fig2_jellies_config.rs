//! `config/fig2-jellies.toml`, simulated as `hapticd simulate` runs it: the
//! four jellies of the paper's Fig. 2, one per paradigm, carry the bar.

use haptic_config::{Overrides, Scene};
use haptic_daemon::simulate;
use haptic_testkit::simulation::Recording;
use std::path::Path;

/// After 1.5 s every jelly stands (its centre of mass within 25 % of its
/// starting height, where flattened it would be near the dish), the bar
/// rests on them (slower than 1 cm/s, lower than it started by less than
/// 2 cm; without the jellies it would lie on the dish 10 cm down), the
/// dish, free on the ground, is pressed down by them, and no step was
/// quarantined.
#[test]
fn the_fig2_jellies_of_every_paradigm_carry_the_bar() {
    let dir = tempfile::tempdir().unwrap();
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config/fig2-jellies.toml");
    let scene = Scene::load(&config, &Overrides::default()).unwrap_or_else(|e| panic!("{e}"));
    let dt = 1.0 / scene.threads().physics.rate_hz;
    let out = dir.path().join("fig2.csv");
    simulate(&scene, dt, (1.5 / dt).round() as u64, &out, |_| {}).unwrap();
    let Recording { columns, rows, .. } = Recording::read(&out);
    let column = |name: &str| columns.iter().position(|c| c == name).unwrap();
    let (first, last) = (&rows[0], &rows[rows.len() - 1]);
    assert!(rows.iter().all(|r| r[column("quarantined")] == 0.0));
    for jelly in ["mass_spring", "corotational_fem", "xpbd", "shape_matching"] {
        let z = column(&format!("{jelly}_com_z"));
        let (start, end) = (first[z], last[z]);
        eprintln!("{jelly}: centre of mass {start:.4} → {end:.4} m");
        assert!(
            (end - start).abs() < 0.25 * start,
            "{jelly}: {start} → {end}"
        );
    }
    let z = column("bar_z");
    let speed = (column("bar_vx")..=column("bar_vz"))
        .map(|c| last[c] * last[c])
        .sum::<f64>()
        .sqrt();
    eprintln!("bar: {:.4} → {:.4} m, {speed:.2e} m/s", first[z], last[z]);
    assert!(
        first[z] - last[z] < 0.02 && last[z] < first[z],
        "{} → {}",
        first[z],
        last[z]
    );
    assert!(speed < 0.01, "the bar still moves at {speed} m/s");
    // The dish, free on the ground, is pressed into it by the jellies: it
    // ends lower than it started, and at rest.
    let z = column("dish_z");
    eprintln!("dish: {:.6} → {:.6} m", first[z], last[z]);
    assert!(last[z] < first[z], "{} → {}", first[z], last[z]);
    assert!(last[column("dish_vz")].abs() < 0.01);
}
