//! `hapticd check-config`: every example in config/ passes; bad configs fail
//! naming the file, the line and the field.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn check(files: &[PathBuf]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hapticd"))
        .arg("check-config")
        .args(files)
        .output()
        .unwrap()
}

#[test]
fn every_example_passes() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(workspace().join("config"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "{files:?}");
    let output = check(&files);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    for file in &files {
        assert!(
            stdout.contains(&format!("ok: {}\n", file.display())),
            "{stdout}"
        );
    }
}

/// config/bench/heavy-scene.toml names its meshes under `test-data/`,
/// which scripts/bench-heavy-scene links to the fetched test data: so
/// linked, it passes.
#[test]
fn the_heavy_scene_passes_beside_the_test_data() {
    let data = std::env::var_os("HAPTICD_TEST_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/hapticd/test-data")
        });
    assert!(
        data.join("meshes").is_dir(),
        "no test data in {} (scripts/fetch-test-data fetches it)",
        data.display()
    );
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&data, dir.path().join("test-data")).unwrap();
    let config = dir.path().join("heavy-scene.toml");
    std::fs::copy(workspace().join("config/bench/heavy-scene.toml"), &config).unwrap();
    let output = check(&[config]);
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

const GOOD: &str = r#"[[objects]]
name = "cube"
shape = { kind = "box", half_extents_m = [0.025, 0.025, 0.025] }
role = "point_shell"
tool = true

[[objects]]
name = "wall"
shape = { kind = "box", half_extents_m = [0.1, 0.1, 0.01] }
role = "field"
material = "steel"

[materials.steel]
friction_coefficient = 0.3

[device]
motion = { segments = [{ type = "hold", duration_s = 1.0 }] }
"#;

#[test]
fn bad_configs_fail_naming_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.toml");
    std::fs::write(&good, GOOD).unwrap();
    // (name, text, line, field)
    let cases = [
        (
            "unknown-field.toml",
            GOOD.replace("role = \"field\"", "role = \"field\"\ncolour = \"red\""),
            11,
            "objects[1].colour",
        ),
        (
            "wrong-type.toml",
            GOOD.replace("tool = true", "tool = 1"),
            5,
            "objects[0].tool",
        ),
        (
            "negative-mu.toml",
            GOOD.replace("= 0.3", "= -0.3"),
            14,
            "materials.steel.friction_coefficient",
        ),
        (
            "missing-mesh.toml",
            GOOD.replace(
                "shape = { kind = \"box\", half_extents_m = [0.1, 0.1, 0.01] }",
                "mesh = \"meshes/wall.obj\"",
            ),
            9,
            "objects[1].mesh",
        ),
    ];
    let mut files = vec![good.clone()];
    for (name, text, _, _) in &cases {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        files.push(path);
    }
    let output = check(&files);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    assert_eq!(stdout, format!("ok: {}\n", good.display()));
    for (name, _, line, field) in cases {
        let path = dir.path().join(name);
        let error = stderr
            .lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("no error for {name}:\n{stderr}"));
        assert!(
            error.starts_with(&format!("error: {}:{line}:", path.display()))
                && error.contains(&format!("field `{field}`")),
            "{name}: {error}"
        );
    }
    assert!(
        stderr.ends_with("error: 4 of 5 config files failed\n"),
        "{stderr}"
    );
}

/// The paper's LP along the field's gradient passes, with a warning that
/// names the file and the field and says what to set; along the shell
/// normals it passes without one.
#[test]
fn the_lp_along_the_field_gradient_is_warned_of() {
    let dir = tempfile::tempdir().unwrap();
    let gradient = dir.path().join("lp-gradient.toml");
    std::fs::write(
        &gradient,
        format!("{GOOD}\n[rendering]\nfriction = \"static_lp\"\n"),
    )
    .unwrap();
    let normals = dir.path().join("lp-normals.toml");
    std::fs::write(
        &normals,
        format!(
            "{GOOD}\n[rendering]\nfriction = \"static_lp\"\nforce_direction = \"shell_normal\"\n"
        ),
    )
    .unwrap();
    for (file, warned) in [(&gradient, true), (&normals, false)] {
        let output = check(std::slice::from_ref(file));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{stderr}");
        let warning = stderr.lines().find(|l| l.starts_with("warning: "));
        assert_eq!(warning.is_some(), warned, "{}: {stderr}", file.display());
        if let Some(warning) = warning {
            assert!(
                warning.contains(&file.display().to_string())
                    && warning.contains("field `rendering.friction`")
                    && warning.contains("force_direction = \"shell_normal\""),
                "{warning}"
            );
        }
    }
}
