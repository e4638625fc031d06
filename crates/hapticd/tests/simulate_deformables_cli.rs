//! `hapticd simulate` and `hapticd check-config` on scenes with
//! `[[deformables]]`: a small cloth dropped on a fixed ball, recorded to
//! MCAP with its node positions and read back; the same to CSV with its
//! centre of mass; the Fig. 3 and jelly configs check; a bad deformable
//! names its file, line and field.

use haptic_recording::load_simulation;
use haptic_testkit::simulation::Recording;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn hapticd(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hapticd"))
        .args(args)
        .output()
        .expect("hapticd runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn assert_success(output: &Output) {
    assert!(
        output.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        text(&output.stdout),
        text(&output.stderr)
    );
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A 6×6 cloth of 0.3 m, 0.1 m above a fixed ball of 0.1 m radius
/// (coarse fields, so that a debug build runs it in seconds), its corner
/// node 0 held to the world.
const CLOTH_ON_BALL: &str = r#"
[[objects]]
name = "probe"
shape = { kind = "sphere", radius_m = 0.01 }
role = "point_shell"
tool = true
position_m = [0.0, 0.0, 0.5]
shell_points = 50
tree_levels = 2
field_resolution = 8

[[objects]]
name = "ball"
shape = { kind = "sphere", radius_m = 0.1 }
role = "field"
field_resolution = 24
shell_points = 200
tree_levels = 3

[device]
motion = { segments = [{ type = "hold", duration_s = 1.0 }] }

[threads.physics]
rate_hz = 50

[[deformables]]
name = "cloth"
shape = { kind = "cloth", nodes_x = 6, nodes_y = 6, width = 0.3, depth = 0.3 }
position_m = [0.0, 0.0, 0.2]
density = 0.2
paradigm = { kind = "mass_spring", stiffness = 1.0, iterations = 10, tolerance = 1e-3 }
material = { friction = 0.4, thickness = 0.004, bending_limit = 0.02 }
anchors = [{ node = 0 }]

[deformable_solver]
elastic_passes = 1
"#;

fn simulate(scene: &Path, duration: &str, out: &Path) -> Output {
    hapticd(&[
        "simulate",
        scene.to_str().unwrap(),
        "--duration",
        duration,
        "--record",
        out.to_str().unwrap(),
    ])
}

#[test]
fn a_cloth_falls_onto_a_ball_and_its_nodes_are_recorded_in_mcap() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("cloth.toml");
    std::fs::write(&scene, CLOTH_ON_BALL).unwrap();
    let out = dir.path().join("cloth.mcap");
    let output = simulate(&scene, "0.4", &out);
    assert_success(&output);
    let stdout = text(&output.stdout);
    assert!(
        stdout.starts_with("simulated 20 steps of 0.02 s"),
        "{stdout}"
    );
    assert!(stdout.contains("deformable `cloth` (36 nodes"), "{stdout}");
    assert!(!stdout.contains("MCAP only"), "{stdout}");

    let recording = load_simulation(&out).unwrap();
    assert_eq!(recording.dt, 0.02);
    assert_eq!(recording.steps.len(), 21);
    for (k, step) in recording.steps.iter().enumerate() {
        assert_eq!(step.step, k as u64);
        assert_eq!(step.time, k as f64 * 0.02);
        // The ball is static: no movable rigid body.
        assert!(step.bodies.is_empty());
    }
    assert_eq!(recording.deformables.len(), 1);
    let (name, frames) = &recording.deformables[0];
    assert_eq!(name, "cloth");
    assert_eq!(frames.len(), 21);
    assert!(frames.iter().all(|f| f.len() == 36));
    // Step 0 is the flat sheet where the config put it.
    let start = &frames[0];
    assert!(start.iter().all(|p| p.z == 0.2));
    assert_eq!((start[0].x, start[0].y), (-0.15, -0.15));
    assert_eq!((start[35].x, start[35].y), (0.15, 0.15));
    // The anchored corner stays; the rest falls, the middle onto the ball
    // (top at 0.1 m, the cloth 4 mm thick) and not through it.
    let end = &frames[20];
    assert!((end[0] - start[0]).norm() < 1e-3, "{:?}", end[0]);
    let free_fall = 0.5 * 9.81 * 0.4f64.powi(2);
    let middle = 2 * 6 + 2;
    assert!(end[middle].z < 0.2 - 0.05, "{:?}", end[middle]);
    assert!(end[middle].z > 0.2 - free_fall, "{:?}", end[middle]);
    assert!(end[middle].coords.norm() > 0.1, "{:?}", end[middle]);
    assert!(recording.steps[20].contacts > 0);
    assert!(frames
        .iter()
        .flatten()
        .all(|p| p.coords.iter().all(|v| v.is_finite())));

    // Equal inputs, equal bytes.
    let again = dir.path().join("again.mcap");
    assert_success(&simulate(&scene, "0.4", &again));
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&again).unwrap());
}

#[test]
fn a_csv_recording_holds_each_deformable_s_centre_of_mass_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("cloth.toml");
    std::fs::write(&scene, CLOTH_ON_BALL).unwrap();
    let out = dir.path().join("cloth.csv");
    let output = simulate(&scene, "0.1", &out);
    assert_success(&output);
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("node positions are recorded in MCAP only"),
        "{stdout}"
    );
    let Recording { columns, rows, .. } = Recording::read(&out);
    assert_eq!(columns[6..], ["cloth_com_x", "cloth_com_y", "cloth_com_z"]);
    assert_eq!(rows.len(), 6);
    let z = &rows.iter().map(|r| r[8]).collect::<Vec<_>>();
    assert!((z[0] - 0.2).abs() < 1e-12, "{z:?}");
    assert!(z[5] < z[0], "{z:?}");

    // The MCAP of the same run has the same steps.
    let mcap = dir.path().join("cloth.mcap");
    assert_success(&simulate(&scene, "0.1", &mcap));
    let recording = load_simulation(&mcap).unwrap();
    for (row, step) in rows.iter().zip(&recording.steps) {
        assert_eq!(row[2], step.kinetic_energy);
        assert_eq!(row[3], step.contacts as f64);
    }
}

#[test]
fn the_deformable_configs_check_and_a_bad_one_names_its_field() {
    let output = hapticd(&[
        "check-config",
        repo()
            .join("config/fig3-cloth-on-ball.toml")
            .to_str()
            .unwrap(),
        repo().join("config/jelly-drop.toml").to_str().unwrap(),
    ]);
    assert_success(&output);
    assert_eq!(text(&output.stdout).lines().count(), 2);

    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    let text_of_bad = CLOTH_ON_BALL.replace(
        "paradigm = { kind = \"mass_spring\", stiffness = 1.0, iterations = 10, tolerance = 1e-3 }",
        "paradigm = { kind = \"xpbd\", young_modulus = 1e4, poisson_ratio = 0.5 }",
    );
    std::fs::write(&bad, &text_of_bad).unwrap();
    let line = text_of_bad[..text_of_bad.find("kind = \"xpbd\"").unwrap()]
        .matches('\n')
        .count()
        + 1;
    for output in [
        hapticd(&["check-config", bad.to_str().unwrap()]),
        simulate(&bad, "0.1", &dir.path().join("never.mcap")),
    ] {
        assert!(!output.status.success());
        let stderr = text(&output.stderr);
        assert!(
            stderr.contains(&format!("{}:{line}:", bad.display()))
                && stderr.contains("field `deformables[0].paradigm.poisson_ratio`"),
            "{stderr}"
        );
    }
    assert!(!dir.path().join("never.mcap").exists());
}

#[test]
fn a_scene_with_neither_movable_objects_nor_deformables_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("still.toml");
    let still = &CLOTH_ON_BALL[..CLOTH_ON_BALL.find("[[deformables]]").unwrap()];
    std::fs::write(&scene, still).unwrap();
    let output = simulate(&scene, "0.1", &dir.path().join("still.mcap"));
    assert!(!output.status.success());
    assert!(
        text(&output.stderr).contains("no movable objects and no deformables"),
        "{}",
        text(&output.stderr)
    );
}
