use haptic_devices::{LengthUnit, Trajectory, TrajectoryErrorKind, TrajectoryRow};
use nalgebra::{UnitQuaternion, Vector3};
use proptest::prelude::*;

const HEADER: &str = "# hapticd-trajectory: 1\n# units: mm\n# rate_hz: 1000\n\
                      # columns: t_s,x,y,z,qw,qx,qy,qz,buttons\n";

fn example() -> String {
    let h = std::f64::consts::FRAC_1_SQRT_2;
    format!("{HEADER}0,0,0,10,1,0,0,0,0\n0.5,2,-4,20,{h},0,0,{h},1\n1,2,-4,20,{h},0,0,{h},3\n")
}

fn error_of(text: &str) -> (Option<usize>, TrajectoryErrorKind, String) {
    let e = Trajectory::parse(text, "demo.traj").unwrap_err();
    (e.line, e.kind.clone(), e.to_string())
}

#[test]
fn parses_header_and_samples_in_si() {
    let t = Trajectory::parse(&example(), "demo.traj").unwrap();
    assert_eq!(t.unit(), LengthUnit::Millimeters);
    assert_eq!(t.rate_hz(), 1000.0);
    assert_eq!(t.rows().len(), 3);
    assert_eq!((t.start_s(), t.end_s()), (0.0, 1.0));
    let p = t.at(0.0);
    assert_eq!(p.position.coords, Vector3::new(0.0, 0.0, 0.01));
    assert_eq!(p.buttons, 0);
}

#[test]
fn interpolates_position_linearly_and_orientation_by_slerp() {
    let t = Trajectory::parse(&example(), "demo.traj").unwrap();
    let p = t.at(0.25);
    assert!((p.position.coords - Vector3::new(0.001, -0.002, 0.015)).norm() < 1e-15);
    let expected = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), std::f64::consts::FRAC_PI_4);
    assert!(p.orientation.angle_to(&expected) < 1e-12);
    assert_eq!(p.buttons, 0, "buttons hold the previous sample");
    assert!((p.linear_velocity - Vector3::new(0.004, -0.008, 0.02)).norm() < 1e-15);
    assert!((p.angular_velocity - Vector3::new(0.0, 0.0, std::f64::consts::PI)).norm() < 1e-12);
    assert_eq!(t.at(0.5).buttons, 1);
    assert_eq!(t.at(0.75).buttons, 1);
    let after = t.at(7.0);
    assert_eq!(after.buttons, 3);
    assert_eq!(after.linear_velocity, Vector3::zeros());
    assert_eq!(after.position, t.at(1.0).position);
}

#[test]
fn slerp_of_nearly_equal_orientations_does_not_panic() {
    // nalgebra's own slerp panics here ("ambiguous configuration").
    let text = format!("{HEADER}0,0,0,0,1,0,0,0,0\n1,0,0,0,1,1e-9,0,0,0\n2,0,0,0,-1,0,0,0,0\n");
    let t = Trajectory::parse(&text, "near.traj").unwrap();
    for s in [0.0, 0.3, 1.0, 1.5, 2.0] {
        assert!(t.at(s).orientation.angle() < 1e-8);
    }
}

#[test]
fn errors_name_file_line_and_cause() {
    let row = "0,0,0,0,1,0,0,0,0\n";
    let cases: Vec<(String, usize, &str)> = vec![
        (format!("# units: m\n{row}"), 1, "first line must be"),
        (
            "# hapticd-trajectory: 2\n".to_owned(),
            1,
            "unsupported format version `2`",
        ),
        (
            format!("{HEADER}{row}0,0,0,0,1,0,0,0,0\n"),
            6,
            "time 0 s does not follow 0 s",
        ),
        (
            format!("{HEADER}{row}0.001,0,0,0,1,0.1,0,0,0\n"),
            6,
            "quaternion norm 1.004987562112089 is not 1",
        ),
        (
            format!("{HEADER}{row}0.001,NaN,0,0,1,0,0,0,0\n"),
            6,
            "non-finite value NaN in column `x`",
        ),
        (
            format!("{HEADER}{row}0.001,0,inf,0,1,0,0,0,0\n"),
            6,
            "non-finite value inf in column `y`",
        ),
        (
            format!("{HEADER}0,0,0,1,0,0,0,0\n"),
            5,
            "missing column: expected 9",
        ),
        (
            format!("{HEADER}0,0,0,0,1,0,0,0,0,0\n"),
            5,
            "extra column: expected 9",
        ),
        (
            format!("{HEADER}{row}0.001,0,0,1x,1,0,0,0,0\n"),
            6,
            "bad number `1x` in column `z`",
        ),
        (
            format!("{HEADER}0,0,0,0,1,0,0,0,-1\n"),
            5,
            "bad number `-1` in column `buttons`",
        ),
        (
            format!("# hapticd-trajectory: 1\n# units: m\n# rate_hz: 1000\n{row}"),
            4,
            "missing header key `columns`",
        ),
        (
            "# hapticd-trajectory: 1\n# units: m\n# columns: t_s,x,y,z,qw,qx,qy,qz,buttons\n"
                .to_owned(),
            4,
            "missing header key `rate_hz`",
        ),
        (
            format!("{HEADER}# colour: red\n{row}"),
            5,
            "unknown header key `colour`",
        ),
        (
            format!("{HEADER}# units: m\n{row}"),
            5,
            "header key `units` appears twice",
        ),
        (
            format!("{HEADER}{row}# units: m\n"),
            6,
            "header line after the first sample",
        ),
        (
            HEADER.replace("mm", "inch"),
            2,
            "bad value `inch` for `units`",
        ),
        (
            HEADER.replace("1000", "-5"),
            3,
            "bad value `-5` for `rate_hz`",
        ),
        (
            HEADER.replace("qz,buttons", "buttons,qz"),
            4,
            "bad value `t_s,x,y,z,qw,qx,qy,buttons,qz` for `columns`",
        ),
        (
            format!("{HEADER}# just a comment\n"),
            5,
            "not `# key: value`",
        ),
    ];
    for (text, line, message) in cases {
        let (l, _, shown) = error_of(&text);
        assert_eq!(l, Some(line), "{shown}");
        assert!(shown.starts_with(&format!("demo.traj:{line}: ")), "{shown}");
        assert!(shown.contains(message), "`{shown}` lacks `{message}`");
    }
    let (line, kind, shown) = error_of(HEADER);
    assert_eq!((line, kind), (None, TrajectoryErrorKind::Empty));
    assert_eq!(shown, "demo.traj: no samples");
}

#[test]
fn load_names_the_path() {
    let dir = std::env::temp_dir().join(format!("hapticd-traj-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.traj");
    std::fs::write(&good, example()).unwrap();
    assert_eq!(
        Trajectory::load(&good).unwrap(),
        Trajectory::parse(&example(), "x").unwrap()
    );
    let bad = dir.join("bad.traj");
    let mut bytes = example().into_bytes();
    bytes.extend_from_slice(b"2,0,0,0,1,0,0,0,\xff\n");
    std::fs::write(&bad, bytes).unwrap();
    let e = Trajectory::load(&bad).unwrap_err();
    assert_eq!(e.line, Some(8));
    assert_eq!(
        e.to_string(),
        format!("{}:8: not valid UTF-8", bad.display())
    );
    // A tick recording is refused as such, MCAP or CSV.
    let mcap = dir.join("ticks.mcap");
    std::fs::write(&mcap, b"\x89MCAP0\r\n\x01").unwrap();
    let e = Trajectory::load(&mcap).unwrap_err();
    assert_eq!((e.line, &e.kind), (None, &TrajectoryErrorKind::Mcap));
    assert!(e.to_string().starts_with(&format!(
        "{}: an MCAP file, not a trajectory",
        mcap.display()
    )));
    let csv = dir.join("ticks.csv");
    std::fs::write(&csv, "# hapticd-ticks: 2\n# columns: tick\n").unwrap();
    let e = Trajectory::load(&csv).unwrap_err();
    assert_eq!(e.kind, TrajectoryErrorKind::TickRecording);
    assert!(e.to_string().starts_with(&format!(
        "{}: a tick recording, not a trajectory",
        csv.display()
    )));
    let e = Trajectory::load(dir.join("missing.traj")).unwrap_err();
    assert!(matches!(e.kind, TrajectoryErrorKind::Io(_)));
    assert!(e.to_string().contains("missing.traj: cannot read"));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn write_is_canonical_and_versioned() {
    let t = Trajectory::parse(&example(), "demo.traj").unwrap();
    let mut out = Vec::new();
    t.write(&mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with(
        "# hapticd-trajectory: 1\n# units: mm\n# rate_hz: 1000\n# columns: t_s,x,y,z,qw,qx,qy,qz,buttons\n"
    ));
    assert_eq!(text, example());
}

#[test]
fn new_validates_like_the_parser() {
    let row = |t_s| TrajectoryRow {
        t_s,
        position: [0.0; 3],
        quaternion: [1.0, 0.0, 0.0, 0.0],
        buttons: 0,
    };
    assert!(Trajectory::new(LengthUnit::Meters, 1000.0, vec![row(0.0), row(1.0)]).is_ok());
    let e = Trajectory::new(LengthUnit::Meters, 1000.0, vec![row(1.0), row(1.0)]).unwrap_err();
    assert_eq!(e.line, Some(2));
    assert!(Trajectory::new(LengthUnit::Meters, 0.0, vec![row(0.0)]).is_err());
    assert!(Trajectory::new(LengthUnit::Meters, 1000.0, vec![]).is_err());
}

fn finite() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>().prop_filter("finite", |v| v.is_finite()),
        -1.0..1.0f64,
        Just(-0.0),
        Just(f64::MIN_POSITIVE / 3.0),
    ]
}

fn rows() -> impl Strategy<Value = Vec<TrajectoryRow>> {
    prop::collection::vec(
        (
            finite(),
            [finite(), finite(), finite()],
            [-1.0..1.0f64, -1.0..1.0f64, -1.0..1.0f64, -1.0..1.0f64],
            any::<u32>(),
        ),
        1..40,
    )
    .prop_filter_map("needs a valid quaternion", |raw| {
        let mut times: Vec<f64> = raw.iter().map(|r| r.0).collect();
        times.sort_by(f64::total_cmp);
        times.dedup_by(|a, b| a == b);
        raw.iter()
            .zip(times)
            .map(|((_, position, q, buttons), t_s)| {
                let n = q.iter().map(|c| c * c).sum::<f64>().sqrt();
                (n > 1e-3).then(|| TrajectoryRow {
                    t_s,
                    position: *position,
                    quaternion: q.map(|c| c / n),
                    buttons: *buttons,
                })
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn write_then_parse_is_bit_identical(
        rows in rows(),
        mm in any::<bool>(),
        rate in prop_oneof![Just(1000.0), 1e-3..1e6f64],
    ) {
        let unit = if mm { LengthUnit::Millimeters } else { LengthUnit::Meters };
        let t = Trajectory::new(unit, rate, rows).unwrap();
        let mut text = Vec::new();
        t.write(&mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        let back = Trajectory::parse(&text, "rt").unwrap();
        prop_assert_eq!(back.unit(), t.unit());
        prop_assert_eq!(back.rate_hz().to_bits(), t.rate_hz().to_bits());
        prop_assert_eq!(back.rows().len(), t.rows().len());
        for (a, b) in back.rows().iter().zip(t.rows()) {
            let bits = |r: &TrajectoryRow| {
                let mut v = vec![r.t_s.to_bits()];
                v.extend(r.position.iter().chain(&r.quaternion).map(|c| c.to_bits()));
                v.push(u64::from(r.buttons));
                v
            };
            prop_assert_eq!(bits(a), bits(b));
        }
        let mut again = Vec::new();
        back.write(&mut again).unwrap();
        prop_assert_eq!(again, text.into_bytes());
    }

    #[test]
    fn parse_never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let _ = Trajectory::parse(&String::from_utf8_lossy(&bytes), "fuzz");
    }

    #[test]
    fn parse_never_panics_after_a_valid_header(
        lines in prop::collection::vec(
            prop_oneof![
                "[-+0-9.eE,infaNI# :\r\t]{0,60}",
                "[0-9.]{1,6}(,[-0-9.e]{1,8}){8}",
                any::<String>(),
            ],
            0..20,
        ),
    ) {
        let text = format!("{HEADER}{}", lines.join("\n"));
        if let Err(e) = Trajectory::parse(&text, "fuzz") {
            prop_assert!(e.line.is_none_or(|l| l >= 5), "{}", e);
        }
    }

    #[test]
    fn truncations_fail_cleanly(cut in 0usize..200) {
        let text = example();
        let cut = (0..=cut.min(text.len())).rev().find(|&c| text.is_char_boundary(c)).unwrap();
        if let Ok(t) = Trajectory::parse(&text[..cut], "cut") {
            prop_assert!(!t.rows().is_empty());
        }
    }
}

#[test]
fn documented_example_parses() {
    let text = "# hapticd-trajectory: 1\n# units: mm\n# rate_hz: 1000\n\
                # columns: t_s,x,y,z,qw,qx,qy,qz,buttons\n\
                0,0,0,10,1,0,0,0,0\n0.001,0.5,0,9.75,0.9999995,0,0,0.0009999998,1\n";
    let t = Trajectory::parse(text, "docs").unwrap();
    assert_eq!(t.at(0.001).buttons, 1);
    assert!((t.at(0.001).orientation.angle() - 0.002).abs() < 1e-9);
}
