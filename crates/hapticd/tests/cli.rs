//! Runs the built `hapticd` binary on a generated torus (major radius 4 cm,
//! tube radius 1.5 cm, around the z axis) in temporary directories.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn hapticd(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hapticd"))
        .args(args)
        .output()
        .expect("hapticd runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn assert_success(output: &Output) {
    assert!(
        output.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        stdout(output),
        stderr(output)
    );
}

/// Asserts exit code 1 and an `error: ` line mentioning each of `needles`.
fn assert_error(output: &Output, needles: &[&str]) {
    let message = stderr(output);
    assert_eq!(output.status.code(), Some(1), "stderr:\n{message}");
    assert!(message.starts_with("error: "), "{message}");
    for needle in needles {
        assert!(message.contains(needle), "{needle:?} not in {message}");
    }
}

/// `prep builtin:torus` at a small resolution into `dir/name`, plus `extra` flags.
fn prep_torus(dir: &Path, name: &str, extra: &[&str]) -> (PathBuf, Output) {
    let out = dir.join(name);
    let mut args = vec![
        "prep",
        "builtin:torus",
        "--resolution",
        "24",
        "--points",
        "400",
        "--levels",
        "4",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let output = hapticd(&args);
    (out, output)
}

/// Runs `inspect FILE --query` on `csv` and returns the value column.
fn query_values(file: &Path, csv: &str) -> Vec<f64> {
    let points = file.with_extension("csv");
    fs::write(&points, csv).unwrap();
    let output = hapticd(&[
        "inspect",
        file.to_str().unwrap(),
        "--query",
        points.to_str().unwrap(),
    ]);
    assert_success(&output);
    let text = stdout(&output);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("x,y,z,value,gx,gy,gz"));
    lines
        .map(|line| {
            let columns: Vec<f64> = line.split(',').map(|c| c.parse().unwrap()).collect();
            assert_eq!(columns.len(), 7, "{line}");
            columns[3]
        })
        .collect()
}

const TUBE_CENTRE_AND_FAR_AWAY: &str = "# tube centre, then far away\n0.04,0,0\n\n  0, 0.5 ,0\n";

#[test]
fn dense_prep_is_cached_inspected_and_queried() {
    let dir = tempfile::tempdir().unwrap();
    let (file, output) = prep_torus(dir.path(), "torus.hgeo", &[]);
    assert_success(&output);
    let text = stdout(&output);
    assert!(text.contains("genus 1"), "mesh report missing:\n{text}");
    assert!(text.contains("field: dense 24 × 24 × "), "{text}");
    assert!(text.contains("tree: 4 levels of "), "{text}");

    let again = prep_torus(dir.path(), "torus.hgeo", &[]).1;
    assert_success(&again);
    assert_eq!(
        stdout(&again).trim(),
        format!("up to date: {}", file.display())
    );
    let forced = prep_torus(dir.path(), "torus.hgeo", &["--force"]).1;
    assert_success(&forced);
    assert!(stdout(&forced).contains("wrote "), "{}", stdout(&forced));
    let changed = prep_torus(dir.path(), "torus.hgeo", &["--padding", "0.2"]).1;
    assert_success(&changed);
    assert!(
        stdout(&changed).contains("rebuilding"),
        "{}",
        stdout(&changed)
    );

    let inspect = hapticd(&["inspect", file.to_str().unwrap()]);
    assert_success(&inspect);
    let text = stdout(&inspect);
    for expected in [
        "version 1",
        "checksum verified",
        "field:      dense, resolution 24, padding 0.2",
        "dims:       24 × 24 × ",
        "shell:      ",
        "4 levels of ",
    ] {
        assert!(text.contains(expected), "{expected:?} not in\n{text}");
    }

    let values = query_values(&file, TUBE_CENTRE_AND_FAR_AWAY);
    assert_eq!(values.len(), 2);
    assert!(values[0] < -0.005, "tube centre: {}", values[0]);
    assert!(values[1] > 0.4, "far away: {}", values[1]);
}

#[test]
fn sparse_prep_holds_a_narrow_band_field() {
    let dir = tempfile::tempdir().unwrap();
    let (file, output) = prep_torus(dir.path(), "band.hgeo", &["--narrow-band", "3"]);
    assert_success(&output);
    assert!(stdout(&output).contains("field: sparse 24 × 24 × "));
    let inspect = stdout(&hapticd(&["inspect", file.to_str().unwrap()]));
    assert!(inspect.contains("field:      sparse"), "{inspect}");
    assert!(inspect.contains("band:       ±3.00 voxels"), "{inspect}");
    let values = query_values(&file, TUBE_CENTRE_AND_FAR_AWAY);
    assert!(values[0] < 0.0, "tube centre: {}", values[0]);
    assert!(values[1] > 0.4, "far away: {}", values[1]);
    // A dense build of the same mesh is a different cache entry.
    let dense = prep_torus(dir.path(), "band.hgeo", &[]).1;
    assert!(
        stdout(&dense).contains("field: dense"),
        "{}",
        stdout(&dense)
    );
}

#[test]
fn a_damaged_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let (file, output) = prep_torus(dir.path(), "torus.hgeo", &[]);
    assert_success(&output);
    let name = file.to_str().unwrap();
    let mut bytes = fs::read(&file).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    fs::write(&file, &bytes).unwrap();
    assert_error(&hapticd(&["inspect", name]), &[name, "checksum"]);

    bytes.truncate(1000);
    fs::write(&file, &bytes).unwrap();
    assert_error(&hapticd(&["inspect", name]), &[name, "truncated"]);

    fs::write(&file, "solid not a prepared file\n").unwrap();
    assert_error(
        &hapticd(&["inspect", name]),
        &[name, "not a prepared-geometry file"],
    );
    // prep rebuilds over a damaged file rather than trusting it.
    let rebuilt = prep_torus(dir.path(), "torus.hgeo", &[]).1;
    assert_success(&rebuilt);
    assert!(stdout(&rebuilt).contains("rebuilding"));
}

#[test]
fn a_bad_csv_line_is_an_error_naming_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let (file, output) = prep_torus(dir.path(), "torus.hgeo", &[]);
    assert_success(&output);
    for (csv, complaint) in [
        ("0,0,0\n# fine\n0,0\n", "expected x,y,z"),
        ("0,0,0\n\n0,zero,0\n", "\"zero\" is not a finite number"),
    ] {
        let points = dir.path().join("points.csv");
        fs::write(&points, csv).unwrap();
        let points = points.to_str().unwrap();
        let output = hapticd(&["inspect", file.to_str().unwrap(), "--query", points]);
        assert_error(&output, &[&format!("{points}:3: "), complaint]);
    }
}

#[test]
fn missing_inputs_are_errors_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let mesh = dir.path().join("missing.obj");
    let out = dir.path().join("x.hgeo");
    let args = [
        "prep",
        mesh.to_str().unwrap(),
        "--resolution",
        "16",
        "--out",
        out.to_str().unwrap(),
    ];
    assert_error(&hapticd(&args), &[mesh.to_str().unwrap()]);
    assert!(!out.exists());
    let nowhere = dir.path().join("nowhere").join("x.hgeo");
    let args = [
        "prep",
        "builtin:box",
        "--resolution",
        "16",
        "--out",
        nowhere.to_str().unwrap(),
    ];
    assert_error(
        &hapticd(&args),
        &[nowhere.to_str().unwrap(), "does not exist"],
    );
    let args = ["prep", "builtin:teapot", "--resolution", "16", "--out", "x"];
    assert_error(&hapticd(&args), &["builtin:teapot", "torus, sphere, box"]);
    let missing = dir.path().join("missing.hgeo");
    assert_error(
        &hapticd(&["inspect", missing.to_str().unwrap()]),
        &[missing.to_str().unwrap()],
    );
}

#[test]
fn scenario_runs_a_built_in_and_writes_its_trace() {
    let listed = hapticd(&["scenario", "--list"]);
    assert_success(&listed);
    for name in ["cube-corner", "box-lift", "slide", "peg-in-hole"] {
        assert!(stdout(&listed).contains(name), "{}", stdout(&listed));
    }

    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("slide.csv");
    let args = ["scenario", "slide", "--mu", "0.5", "--cycles", "250"];
    let output = hapticd(&[&args[..], &["--out", csv.to_str().unwrap()]].concat());
    assert_success(&output);
    let text = stdout(&output);
    assert!(text.starts_with("slide: 250 cycles (static "), "{text}");
    for expected in ["sliding ", "free ", "contacts", "cycle mean ", "p99 "] {
        assert!(text.contains(expected), "{expected:?} not in {text}");
    }
    let trace = fs::read_to_string(&csv).unwrap();
    let mut lines = trace.lines();
    let header = lines.next().unwrap();
    assert!(
        header.starts_with("cycle,segment,time,manipulandum_x,"),
        "{header}"
    );
    assert_eq!(header.split(',').count(), 34);
    assert_eq!(lines.count(), 250);

    let json = dir.path().join("peg.json");
    let output = hapticd(&[
        "scenario",
        "peg-in-hole",
        "--friction",
        "yamane",
        "--cycles",
        "40",
        "--out",
        json.to_str().unwrap(),
    ]);
    assert_success(&output);
    assert!(stdout(&output).starts_with("peg-in-hole: 40 cycles"));
    let trace = fs::read_to_string(&json).unwrap();
    assert_eq!(trace.matches("\"cycle\"").count(), 40);
}

#[test]
fn scenario_errors_name_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("trace.csv");
    let out = out.to_str().unwrap();
    assert_error(
        &hapticd(&["scenario", "teapot", "--out", out]),
        &["\"teapot\"", "cube-corner, box-lift, slide, peg-in-hole"],
    );
    assert_error(
        &hapticd(&["scenario", "slide", "--mu", "lots", "--out", out]),
        &["--mu", "lots"],
    );
    assert_error(
        &hapticd(&["scenario", "slide", "--mu", "-1", "--out", out]),
        &["--mu -1", "friction coefficient"],
    );
    assert_error(
        &hapticd(&["scenario", "slide", "--friction", "coulomb", "--out", out]),
        &["coulomb", "lp, yamane"],
    );
    assert_error(&hapticd(&["scenario", "slide"]), &["--out"]);
    let text = dir.path().join("trace.txt");
    assert_error(
        &hapticd(&["scenario", "slide", "--out", text.to_str().unwrap()]),
        &[text.to_str().unwrap(), ".csv or .json"],
    );
    let nowhere = dir.path().join("nowhere").join("trace.csv");
    assert_error(
        &hapticd(&["scenario", "slide", "--out", nowhere.to_str().unwrap()]),
        &[nowhere.to_str().unwrap(), "does not exist"],
    );
    assert!(fs::read_dir(dir.path()).unwrap().next().is_none());
}

/// A field or shell that cannot fit in memory is refused before anything
/// is allocated, with the size it needs and what would fit instead.
#[test]
fn prep_refuses_what_cannot_fit_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("big.hgeo");
    let prep = |extra: &[&str]| {
        let mut args = vec!["prep", "builtin:torus", "--memory-limit", "16"];
        args.extend_from_slice(&["--out", out.to_str().unwrap()]);
        args.extend_from_slice(extra);
        hapticd(&args)
    };
    let started = std::time::Instant::now();
    let dense = prep(&["--resolution", "3000"]);
    assert_error(
        &dense,
        &[
            "a 3000 × 3000 × ",
            " dense field needs ",
            " GiB; --memory-limit is 16.0 GiB; use --narrow-band, or --resolution ≤ ",
        ],
    );
    let fitting: u32 = stderr(&dense)
        .trim()
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1000..3000).contains(&fitting), "{fitting}");
    let band = prep(&["--resolution", "400000", "--narrow-band", "3"]);
    assert_error(
        &band,
        &[
            "narrow-band field's coarse field and brick index needs",
            "use a lower --resolution",
        ],
    );
    let shell = prep(&["--resolution", "24", "--points", "10000000000"]);
    assert_error(
        &shell,
        &[
            "a point shell of about 10000000000 points needs",
            "use fewer --points",
        ],
    );
    // Refused up front, without building anything.
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert!(!out.exists());
}

/// The numbers in `line` after its label, in order.
fn numbers(line: &str) -> Vec<f64> {
    line.split(|c: char| !(c.is_ascii_digit() || "+-.e".contains(c)))
        .filter_map(|w| w.parse().ok())
        .collect()
}

/// The line of `text` that starts with `label`.
fn line<'a>(text: &'a str, label: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no {label:?} in\n{text}"))
}

#[test]
fn prep_and_inspect_report_the_solid_s_mass_properties() {
    // builtin:box is 0.1 × 0.07 × 0.05 m: at 2,700 kg/m³ (aluminium),
    // m = 0.945 kg, I = m (b² + c²)/12 about each axis, centre at the origin.
    let (a, b, c, density) = (0.1, 0.07, 0.05, 2700.0);
    let mass = density * a * b * c;
    let mut principal = [
        mass * (b * b + c * c) / 12.0,
        mass * (a * a + c * c) / 12.0,
        mass * (a * a + b * b) / 12.0,
    ];
    principal.sort_by(f64::total_cmp);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("box.hgeo");
    let prep = hapticd(&[
        "prep",
        "builtin:box",
        "--resolution",
        "16",
        "--points",
        "300",
        "--density",
        "2700",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_success(&prep);
    let inspect = hapticd(&["inspect", "builtin:box", "--density", "2700"]);
    assert_success(&inspect);
    for text in [stdout(&prep), stdout(&inspect)] {
        let solid = numbers(line(&text, "solid:"));
        assert!((solid[0] - a * b * c).abs() < 1e-6 * a * b * c, "{text}");
        assert!((solid[1] - mass).abs() < 1e-6 * mass, "{text}");
        assert_eq!(solid[2], density);
        assert_eq!(numbers(line(&text, "centre:")), [0.0; 3], "{text}");
        let moments = numbers(line(&text, "principal:"));
        for (m, expected) in moments.iter().zip(principal) {
            assert!((m - expected).abs() < 1e-5 * expected, "{text}");
        }
    }

    // An open mesh has no solid, which prep says and builds on.
    let open = dir.path().join("open.obj");
    fs::write(&open, "v 0 0 0\nv 0.05 0 0\nv 0 0.05 0\nf 1 2 3\n").unwrap();
    let text = stdout(&hapticd(&["inspect", open.to_str().unwrap()]));
    assert!(
        line(&text, "solid:").contains("none: the mesh is open (3 boundary edges)"),
        "{text}"
    );
    assert_error(
        &hapticd(&["inspect", "builtin:box", "--density", "0"]),
        &["--density must be finite and positive"],
    );
    assert_error(
        &hapticd(&["inspect", "builtin:box", "--query", "points.csv"]),
        &["--query needs a prepared file"],
    );
}

/// `prep --tets` writes the torus's tetrahedral mesh as MSH 4.1 that reads
/// back valid, closed and with the generated torus's volume (1.7702e-4
/// m³; measured −3.4 % from the coarse 24-node field at a 5 mm lattice),
/// also when the prepared file is up to date; a bad or too fine spacing is
/// refused before any work.
#[test]
fn prep_writes_the_tetrahedral_mesh() {
    let dir = tempfile::tempdir().unwrap();
    let tets = dir.path().join("torus.msh");
    let tets_arg = tets.to_str().unwrap();
    let extra = ["--tets", tets_arg, "--tet-spacing", "0.005"];
    let (_, output) = prep_torus(dir.path(), "torus.hgeo", &extra);
    assert_success(&output);
    let text = stdout(&output);
    assert!(text.contains("tets: "), "{text}");
    assert!(text.contains(&format!("wrote {tets_arg} in ")), "{text}");
    let loaded = haptic_tetmesh::read_msh(&tets).unwrap();
    let volume = loaded.mesh.volume();
    assert!((volume / 1.7702e-4 - 1.0).abs() < 0.05, "{volume}");
    assert!(loaded.mesh.quality().min_dihedral_deg > 5.0);

    fs::remove_file(&tets).unwrap();
    let again = prep_torus(dir.path(), "torus.hgeo", &extra).1;
    assert_success(&again);
    assert!(
        stdout(&again).starts_with("up to date: "),
        "{}",
        stdout(&again)
    );
    assert_eq!(haptic_tetmesh::read_msh(&tets).unwrap().mesh, loaded.mesh);

    // A narrow-band field fills the same solid.
    let band_tets = dir.path().join("band.msh");
    let band = prep_torus(
        dir.path(),
        "band.hgeo",
        &[
            "--narrow-band",
            "3",
            "--tets",
            band_tets.to_str().unwrap(),
            "--tet-spacing",
            "0.005",
        ],
    )
    .1;
    assert_success(&band);
    let band_volume = haptic_tetmesh::read_msh(&band_tets).unwrap().mesh.volume();
    assert!(
        (band_volume / volume - 1.0).abs() < 0.01,
        "{band_volume} against {volume}"
    );

    let zero = prep_torus(
        dir.path(),
        "other.hgeo",
        &["--tets", tets_arg, "--tet-spacing", "0"],
    )
    .1;
    assert_error(&zero, &["--tet-spacing must be finite and positive, got 0"]);
    let fine = prep_torus(
        dir.path(),
        "other.hgeo",
        &["--tets", tets_arg, "--tet-spacing", "1e-6"],
    )
    .1;
    assert_error(
        &fine,
        &["--tet-spacing 0.000001", "use a larger --tet-spacing"],
    );
    assert!(!dir.path().join("other.hgeo").exists());
    // A mesh with a hole is refused before any work, naming an open edge.
    let open = dir.path().join("open.obj");
    let mut text = String::new();
    let cube = haptic_mesh::shapes::box_mesh(nalgebra::Vector3::new(0.05, 0.05, 0.05));
    for v in &cube.vertices {
        text += &format!("v {} {} {}\n", v.x, v.y, v.z);
    }
    for t in &cube.triangles[1..] {
        text += &format!("f {} {} {}\n", t[0] + 1, t[1] + 1, t[2] + 1);
    }
    fs::write(&open, text).unwrap();
    let open_out = dir.path().join("open.hgeo");
    let refused = hapticd(&[
        "prep",
        open.to_str().unwrap(),
        "--resolution",
        "24",
        "--out",
        open_out.to_str().unwrap(),
        "--tets",
        dir.path().join("open.msh").to_str().unwrap(),
        "--tet-spacing",
        "0.01",
    ]);
    assert_error(&refused, &["open.obj", "the surface is open: edge ("]);
    assert!(!open_out.exists() && !dir.path().join("open.msh").exists());
    let alone = prep_torus(dir.path(), "other.hgeo", &["--tet-spacing", "0.005"]).1;
    assert_error(&alone, &["required arguments", "--tets <OUT.msh>"]);
}
