//! `hapticd simulate` as a user runs it: config/pile.toml, real meshes from
//! the test data dropped on a table (a mug, a plug, and two pybullet meshes
//! whose file origins lie 20–35 cm from their bodies), and bad input that must
//! name the file, line and field. `hapticd inspect` gives the centres of
//! mass the recordings must start from.

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
fn the_pile_falls_and_is_recorded_step_by_step() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pile.csv");
    let output = simulate(&repo().join("config/pile.toml"), "0.3", &out);
    assert_success(&output);
    let stdout = text(&output.stdout);
    assert!(
        stdout.starts_with("simulated 60 steps of 0.005 s"),
        "{stdout}"
    );
    for name in ["crate", "ball", "ring", "can", "brick"] {
        assert!(stdout.contains(&format!("`{name}` ended at")), "{stdout}");
    }
    // Off a terminal the progress bar draws nothing.
    assert_eq!(text(&output.stderr), "");
    let Recording { columns, rows, .. } = Recording::read(&out);
    assert_eq!(columns.len(), 6 + 5 * 13);
    assert_eq!(rows.len(), 61);
    assert!(rows.iter().flatten().all(|v| v.is_finite()));
    // Everything falls: after 0.3 s the brick, dropped from 30 cm, is well
    // below its start (44 cm in free fall, less what it hit).
    let z = columns.iter().position(|c| c == "brick_z").unwrap();
    assert!(
        rows[60][z] < rows[0][z] - 0.05,
        "{} → {}",
        rows[0][z],
        rows[60][z]
    );
}

/// The pile comes to rest on the tray: after 4 s every body lies within
/// the rim, above the table, and is still (the ball, last to stop, rolls
/// into the rim).
#[test]
fn the_pile_comes_to_rest_within_the_trays_rim() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pile.csv");
    assert_success(&simulate(&repo().join("config/pile.toml"), "4", &out));
    let Recording { columns, rows, .. } = Recording::read(&out);
    let last = rows.last().unwrap();
    let at = |name: &str| last[columns.iter().position(|c| c == name).unwrap()];
    for body in ["crate", "ball", "ring", "can", "brick"] {
        let [x, y, z] = ["x", "y", "z"].map(|c| at(&format!("{body}_{c}")));
        let speed = ["vx", "vy", "vz"]
            .map(|c| at(&format!("{body}_{c}")))
            .iter()
            .map(|v| v * v)
            .sum::<f64>()
            .sqrt();
        // The rim's inner faces stand at ±0.19 m; the table's top at 0.
        assert!(
            x.abs() < 0.19 && y.abs() < 0.19 && (0.0..0.1).contains(&z),
            "{body} at ({x}, {y}, {z})"
        );
        assert!(speed < 1e-3, "{body} still moves at {speed} m/s");
    }
}

/// A test-data mesh's path; fails naming `scripts/fetch-test-data` when the
/// test data is missing.
fn mesh(name: &str) -> String {
    let path = haptic_acceptance::mesh_path(name);
    path.to_str().expect("a UTF-8 path").to_owned()
}

/// `hapticd inspect MESH`'s centre of mass, in the file's frame.
fn centre_of_mass(mesh: &str) -> [f64; 3] {
    let output = hapticd(&["inspect", mesh]);
    assert_success(&output);
    let stdout = text(&output.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("centre:"))
        .unwrap_or_else(|| panic!("{stdout}"));
    let inner = &line[line.find('(').unwrap() + 1..line.find(')').unwrap()];
    let values: Vec<f64> = inner
        .split(',')
        .map(|v| v.trim().parse().unwrap())
        .collect();
    [values[0], values[1], values[2]]
}

#[test]
fn real_meshes_fall_and_settle_each_at_its_centre_of_mass() {
    let dir = tempfile::tempdir().unwrap();
    // Where each mesh file is placed (its file frame's origin, m).
    let bodies = [
        ("mug", "metaworld-mug.stl", [0.0, 0.0, 0.05]),
        ("plug", "metaworld-plug.stl", [0.07, -0.1, 0.06]),
        ("cylinder", "pybullet-cylinder.obj", [0.35, 0.0, -0.12]),
        ("prism", "pybullet-prism.obj", [0.19, 0.2, 0.1]),
    ];
    let mut config = String::from(
        r#"[[objects]]
name = "probe"
shape = { kind = "sphere", radius_m = 0.01 }
role = "point_shell"
tool = true
position_m = [0.0, 0.0, 0.5]
shell_points = 200

[[objects]]
name = "table"
shape = { kind = "box", half_extents_m = [0.25, 0.25, 0.02] }
role = "field"
position_m = [0.0, 0.0, -0.02]
"#,
    );
    for (name, file, at) in &bodies {
        config += &format!(
            "\n[[objects]]\nname = \"{name}\"\nmesh = {:?}\nrole = \"field\"\nmovable = true\nposition_m = {at:?}\nshell_points = 1500\n",
            mesh(file)
        );
    }
    config += r#"
[physics]
contact_model = "pid_penalty"

[device]
motion = { segments = [{ type = "hold", duration_s = 1.0 }] }
"#;
    let scene = dir.path().join("meshes.toml");
    std::fs::write(&scene, config).unwrap();
    let out = dir.path().join("meshes.csv");
    let output = simulate(&scene, "2.5", &out);
    assert_success(&output);
    eprintln!("{}", text(&output.stdout));
    let Recording { columns, rows, .. } = Recording::read(&out);
    let column = |name: &str| columns.iter().position(|c| c == name).unwrap();
    let (first, last) = (&rows[0], rows.last().unwrap());
    for (name, file, at) in &bodies {
        let x = column(&format!("{name}_x"));
        // The recording holds the body frame: at the start, the centre of
        // mass `hapticd inspect` gives (to its 1 µm), where the config puts
        // the file.
        let com = centre_of_mass(&mesh(file));
        for k in 0..3 {
            assert!(
                (first[x + k] - (at[k] + com[k])).abs() < 1e-6,
                "{name}: {first:?}"
            );
        }
        // Dropped apart, each fell onto the table near where it was: the
        // tall prism tips over, moving by half its 12 cm height, but nothing
        // swings about a file origin 20–35 cm away.
        let drift = ((last[x] - first[x]).powi(2) + (last[x + 1] - first[x + 1]).powi(2)).sqrt();
        assert!(drift < 0.1, "{name} moved {drift} m sideways");
        assert!(
            last[x + 2] > 0.0 && last[x + 2] < first[x + 2],
            "{name}: z {}",
            last[x + 2]
        );
        let v = column(&format!("{name}_vx"));
        let speed = (last[v].powi(2) + last[v + 1].powi(2) + last[v + 2].powi(2)).sqrt();
        assert!(speed < 0.01, "{name} still moving at {speed} m/s");
    }
    assert!(last[2] < 1e-5, "kinetic energy {} J at the end", last[2]);
    assert_eq!(last[5], 0.0, "quarantined bodies");
}

#[test]
fn bad_input_names_the_file_the_line_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.csv");
    // Nothing movable.
    let static_scene = repo().join("config/cube-corner.toml");
    let output = simulate(&static_scene, "1", &out);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output.stderr).contains("no movable objects"),
        "{}",
        text(&output.stderr)
    );
    // Steps that are not.
    let pile = repo().join("config/pile.toml");
    for (flag, value) in [
        ("--duration", "0"),
        ("--dt", "-0.001"),
        ("--duration", "nan"),
    ] {
        let given = format!("{flag}={value}");
        let mut args = vec![
            "simulate",
            pile.to_str().unwrap(),
            "--record",
            out.to_str().unwrap(),
            &given,
        ];
        if flag == "--dt" {
            args.extend(["--duration", "1"]);
        }
        let output = hapticd(&args);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{given}: {stderr}");
        assert!(
            stderr.contains(&format!("{flag} must be finite and positive")),
            "{stderr}"
        );
    }
    assert!(!out.exists());

    // An open mesh cannot give a movable object its mass: a tetrahedron
    // without its base.
    let open = dir.path().join("open.obj");
    std::fs::write(
        &open,
        "v 0 0 0\nv 0.05 0 0\nv 0 0.05 0\nv 0 0 0.05\nf 1 3 4\nf 1 4 2\nf 2 4 3\n",
    )
    .unwrap();
    let scene = dir.path().join("open.toml");
    let config = std::fs::read_to_string(&pile).unwrap().replace(
        "shape = { kind = \"sphere\", radius_m = 0.02 }",
        "mesh = \"open.obj\"",
    );
    std::fs::write(&scene, &config).unwrap();
    let output = simulate(&scene, "1", &out);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let line = config[..config.find("mesh = \"open.obj\"").unwrap()]
        .matches('\n')
        .count()
        + 1;
    for needle in [
        format!("{}:{line}:", scene.display()),
        "field `objects[7].mesh`".to_owned(),
        "object `ball`".to_owned(),
        open.display().to_string(),
        "the mesh is open (3 boundary edges)".to_owned(),
    ] {
        assert!(stderr.contains(&needle), "{needle:?} not in {stderr}");
    }
}
