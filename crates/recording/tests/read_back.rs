//! Recordings read back as written: every value to the bit, the same in
//! both encodings, with the layout the format documents; and files that
//! are not whole recordings of this version refused, naming the file.

use haptic_core::Wrench;
use haptic_recording::{
    load_recording, read_csv, CsvWriter, RecordedTick, TickFile, COLUMNS, NOT_RENDERED, TICK_SCHEMA,
};
use nalgebra::{Isometry3, UnitQuaternion, Vector3};
use std::path::Path;
use std::time::Duration;

/// Ticks with every column set, one verdict each, the last not rendered,
/// and the manipulandum of each.
fn ticks() -> Vec<(RecordedTick, Isometry3<f64>)> {
    // Each verdict with its state: 3 counts as static, 4 and 5 as sliding.
    [
        (0, 0),
        (1, 1),
        (2, 2),
        (3, 2),
        (4, 1),
        (5, 1),
        (NOT_RENDERED, NOT_RENDERED),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (verdict, state))| {
        let v = i as f64;
        let angle = 0.1 * v;
        let turn = |axis: Vector3<f64>| UnitQuaternion::from_scaled_axis(axis * angle);
        let tick = RecordedTick {
            tick: i as u64,
            time: Duration::from_micros(1000 * i as u64 + 7),
            pose: Isometry3::from_parts(
                Vector3::new(0.1 + v, -0.2 / (1.0 + v), 1e-9 * v).into(),
                turn(Vector3::x()),
            ),
            wrench: Wrench {
                force: Vector3::new(0.1 * v, -0.7, 2.0),
                torque: Vector3::new(1e-4, 0.0, -v),
            },
            rendered: Wrench {
                force: Vector3::new(0.3 * v, -1.0, 2.5),
                torque: Vector3::new(0.0, 1e-3 * v, -0.0),
            },
            tool_pose: Isometry3::from_parts(
                Vector3::new(v / 3.0, 0.5, -v).into(),
                turn(Vector3::z()),
            ),
            contacts: 3 * i as u32,
            state,
            verdict,
            quarantined: i == 3,
            cycle_time_ns: 0,
        };
        let manipulandum = Isometry3::from_parts(
            Vector3::new(v / 3.0 + 1e-3, 0.5, 0.2 - v).into(),
            turn(Vector3::y()),
        );
        (tick, manipulandum)
    })
    .collect()
}

fn write(path: &Path, ticks: &[(RecordedTick, Isometry3<f64>)]) -> u64 {
    let mut file = TickFile::create(path).unwrap();
    for (tick, manipulandum) in ticks {
        file.record(tick, manipulandum).unwrap();
    }
    file.finish().unwrap()
}

fn mcap_messages(bytes: &[u8], topic: &str) -> Vec<serde_json::Value> {
    mcap::MessageStream::new(bytes)
        .unwrap()
        .map(Result::unwrap)
        .filter(|m| m.channel.topic == topic)
        .map(|m| serde_json::from_slice(&m.data).unwrap())
        .collect()
}

#[test]
fn mcap_reads_back_as_the_csv_does() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, mcap) = (dir.path().join("ticks.csv"), dir.path().join("ticks.MCAP"));
    let ticks = ticks();
    assert_eq!(write(&csv, &ticks), 7);
    assert_eq!(write(&mcap, &ticks), 7);
    assert!(std::fs::read(&mcap).unwrap().starts_with(mcap::MAGIC));
    let from_csv = load_recording(&csv).unwrap();
    let written: Vec<RecordedTick> = ticks.iter().map(|(tick, _)| *tick).collect();
    assert_eq!(from_csv, written);
    assert_eq!(load_recording(&mcap).unwrap(), from_csv);
    assert_eq!(from_csv[6].verdict, NOT_RENDERED);
    assert!(from_csv[3].quarantined);
    let mode = |path: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).unwrap().permissions().mode()
    };
    assert_eq!(mode(&mcap) & 0o777, 0o644);
    // Only the finished file is left in the directory.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
}

/// Every value of a recording reads back with the bits it was written
/// with, and writes again to the same bytes.
#[test]
fn csv_recordings_read_back_exactly() {
    let records: Vec<RecordedTick> = (0..50u64)
        .map(|i| {
            let x = i as f64;
            let q = UnitQuaternion::from_scaled_axis(Vector3::new(0.1 * x, -0.03, 0.7 / (x + 1.0)));
            let p = UnitQuaternion::from_scaled_axis(Vector3::new(1e-9 * x, 0.2, -0.1));
            RecordedTick {
                tick: i,
                time: Duration::from_nanos(1_000_000 * i + 7),
                pose: Isometry3::from_parts(Vector3::new(x / 3.0, -1e-7 * x, 0.1).into(), q),
                wrench: Wrench {
                    force: Vector3::new(x.sin(), 0.0, -2.5),
                    torque: Vector3::new(0.0, 1.0 / 7.0, f64::MIN_POSITIVE),
                },
                rendered: Wrench {
                    force: Vector3::new(1e300, -x.cos(), 0.1 + 0.2),
                    torque: Vector3::new(-0.0, 1e-12, 3.0),
                },
                tool_pose: Isometry3::from_parts(Vector3::new(0.05, x.sqrt(), -0.025).into(), p),
                contacts: (i * 37 % 2000) as u32,
                state: [0, 1, 2, 255][(i % 4) as usize],
                verdict: [0, 1, 2, 3, 4, 5, 255][(i % 7) as usize],
                quarantined: i % 5 == 0,
                cycle_time_ns: i * 1000 + 3,
            }
        })
        .collect();
    let mut recorder = CsvWriter::new(Vec::new()).unwrap();
    for record in &records {
        recorder.record(record).unwrap();
    }
    let text = String::from_utf8(recorder.finish().unwrap()).unwrap();
    let read = read_csv(&text, "ticks.csv").unwrap();
    assert_eq!(read, records);
    // The same bytes again.
    let mut again = CsvWriter::new(Vec::new()).unwrap();
    for record in &read {
        again.record(record).unwrap();
    }
    assert_eq!(String::from_utf8(again.finish().unwrap()).unwrap(), text);

    let error = read_csv(
        &text.replace("# hapticd-ticks: 2", "# hapticd-ticks: 1"),
        "old.csv",
    )
    .unwrap_err();
    assert_eq!(error.line, Some(1));
    assert!(
        error.to_string().starts_with("old.csv:1: unsupported"),
        "{error}"
    );
    let mut lines: Vec<&str> = text.lines().collect();
    let short = lines[5].rsplit_once(',').unwrap().0.to_owned();
    lines[5] = &short;
    let error = read_csv(&lines.join("\n"), "short.csv").unwrap_err();
    assert_eq!(
        error.to_string(),
        "short.csv:6: expected 33 columns, found 32"
    );
    let bad = text.replacen(",0.1,", ",x,", 1);
    let error = read_csv(&bad, "bad.csv").unwrap_err();
    assert!(error.message.contains("bad number `x`"), "{error}");
}

/// The CSV's lines, as docs/daemon.md shows them.
#[test]
fn a_csv_recording_has_the_documented_layout() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ticks.csv");
    let mut file = TickFile::create(&path).unwrap();
    // The header is on disk before the first tick.
    assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 2);
    for line in 0..3 {
        let tick = RecordedTick {
            tick: line,
            time: Duration::from_millis(line),
            pose: Isometry3::identity(),
            wrench: Wrench::ZERO,
            rendered: Wrench {
                force: Vector3::new(0.5, 0.0, 0.0),
                torque: Vector3::zeros(),
            },
            tool_pose: Isometry3::translation(0.0, 0.0, 0.25),
            contacts: 0,
            state: 255,
            verdict: 5,
            quarantined: line == 1,
            cycle_time_ns: 1234,
        };
        file.record(&tick, &Isometry3::identity()).unwrap();
    }
    assert_eq!(file.finish().unwrap(), 3);
    let written = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = written.lines().collect();
    assert_eq!(lines[0], "# hapticd-ticks: 2");
    assert_eq!(
        lines[1],
        "# columns: tick,time_ns,x,y,z,qw,qx,qy,qz,fx,fy,fz,tx,ty,tz,contacts,state,cycle_time_ns,\
         rendered_fx,rendered_fy,rendered_fz,rendered_tx,rendered_ty,rendered_tz,\
         tool_x,tool_y,tool_z,tool_qw,tool_qx,tool_qy,tool_qz,verdict,quarantined"
    );
    assert!(
        written.ends_with(
            "2,2000000,0,0,0,1,0,0,0,0,0,0,0,0,0,0,255,1234,0.5,0,0,0,0,0,0,0,0.25,1,0,0,0,5,0\n"
        ),
        "{written}"
    );
    let read = load_recording(&path).unwrap();
    assert_eq!(read.len(), 3);
    assert!(read[1].quarantined && !read[2].quarantined);
    assert_eq!(read[2].rendered.force.x, 0.5);
}

#[test]
fn mcap_writes_non_finite_values_as_null_and_reads_them_as_nan() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nan.mcap");
    let (mut tick, manipulandum) = ticks()[0];
    tick.rendered.force = Vector3::new(f64::NAN, f64::INFINITY, 1.0);
    write(&path, &[(tick, manipulandum)]);
    let message = &mcap_messages(&std::fs::read(&path).unwrap(), "/ticks")[0];
    assert!(message["rendered_fx"].is_null() && message["rendered_fy"].is_null());
    let read = load_recording(&path).unwrap();
    let force = read[0].rendered.force;
    assert!(force.x.is_nan() && force.y.is_nan() && force.z == 1.0);
}

#[test]
fn an_empty_mcap_recording_reads_as_no_ticks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.mcap");
    assert_eq!(write(&path, &[]), 0);
    assert!(load_recording(&path).unwrap().is_empty());
}

#[test]
fn an_unfinished_mcap_recording_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.mcap");
    let mut file = TickFile::create(&path).unwrap();
    let (tick, manipulandum) = ticks()[0];
    file.record(&tick, &manipulandum).unwrap();
    assert!(!path.exists());
    drop(file);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn truncated_or_foreign_mcap_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ticks.mcap");
    write(&path, &ticks());
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.path().join("cut.mcap");
    for len in [bytes.len() - 1, bytes.len() / 2, mcap::MAGIC.len() + 3] {
        std::fs::write(&cut, &bytes[..len]).unwrap();
        let error = load_recording(&cut).unwrap_err().to_string();
        assert!(error.starts_with(&cut.display().to_string()), "{error}");
        assert!(error.contains("not a complete MCAP recording"), "{error}");
    }
    // A flipped byte inside the compressed chunk fails its CRC.
    let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
    let chunk = &summary.chunk_indexes[0];
    let mut corrupt = bytes.clone();
    corrupt[(chunk.chunk_start_offset + chunk.chunk_length) as usize - 4] ^= 0x55;
    std::fs::write(&cut, &corrupt).unwrap();
    let error = load_recording(&cut).unwrap_err().to_string();
    assert!(error.contains("not a complete MCAP recording"), "{error}");

    let foreign = dir.path().join("foreign.mcap");
    let mut writer = mcap::Writer::new(std::io::Cursor::new(Vec::new())).unwrap();
    writer.finish().unwrap();
    std::fs::write(&foreign, writer.into_inner().into_inner()).unwrap();
    let error = load_recording(&foreign).unwrap_err().to_string();
    assert!(error.contains("no `/ticks` channel"), "{error}");

    let binary = dir.path().join("binary.csv");
    std::fs::write(&binary, [0xffu8, 0xfe, 0]).unwrap();
    let error = load_recording(&binary).unwrap_err().to_string();
    assert!(error.contains("neither an MCAP recording nor"), "{error}");
}

/// An MCAP file whose metadata names another version of the format is
/// refused, as a CSV file's first line is.
#[test]
fn mcap_of_another_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ticks.mcap");
    write(&path, &ticks());
    let bytes = std::fs::read(&path).unwrap();
    // `version` is `2` in the metadata record; `3` keeps every length.
    let at = bytes
        .windows(8)
        .position(|w| w == b"version\x01")
        .expect("the version key");
    let mut other = bytes.clone();
    let value = at + "version".len() + 4;
    assert_eq!(other[value], b'2');
    other[value] = b'3';
    let future = dir.path().join("future.mcap");
    std::fs::write(&future, &other).unwrap();
    let error = load_recording(&future).unwrap_err().to_string();
    assert!(
        error.contains("unsupported tick format `3` (supported: 2)"),
        "{error}"
    );
}

#[test]
fn the_manipulandum_is_recorded_as_a_transform() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mapped.mcap");
    let ticks = ticks();
    write(&path, &ticks);
    let frames = mcap_messages(&std::fs::read(&path).unwrap(), "/tf/manipulandum");
    assert_eq!(frames.len(), ticks.len());
    for (frame, (_, manipulandum)) in frames.iter().zip(&ticks) {
        let t = manipulandum.translation.vector;
        assert_eq!(frame["parent_frame_id"], "world");
        assert_eq!(frame["child_frame_id"], "manipulandum");
        assert_eq!(
            frame["translation"],
            serde_json::json!({"x": t.x, "y": t.y, "z": t.z})
        );
        assert_eq!(frame["rotation"]["w"], manipulandum.rotation.w);
    }
}

/// The tick messages, their schema and the CSV name the same columns, in
/// the same order.
#[test]
fn the_tick_schema_names_the_csv_columns() {
    let mut csv = CsvWriter::new(Vec::new()).unwrap().finish().unwrap();
    csv.pop();
    let csv = String::from_utf8(csv).unwrap();
    let header: Vec<&str> = csv.lines().nth(1).unwrap()["# columns: ".len()..]
        .split(',')
        .collect();
    assert_eq!(header, COLUMNS);
    let schema: serde_json::Value = serde_json::from_str(TICK_SCHEMA).unwrap();
    let properties: Vec<&str> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(required, COLUMNS);
    let mut sorted = COLUMNS.to_vec();
    sorted.sort_unstable();
    assert_eq!(properties, sorted);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ticks.mcap");
    write(&path, &ticks()[..1]);
    let bytes = std::fs::read(&path).unwrap();
    let messages: Vec<_> = mcap::MessageStream::new(&bytes)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let topics: Vec<(&str, &str)> = messages
        .iter()
        .map(|m| {
            let schema = m.channel.schema.as_ref().unwrap();
            assert_eq!(
                (
                    schema.encoding.as_str(),
                    m.channel.message_encoding.as_str()
                ),
                ("jsonschema", "json")
            );
            (m.channel.topic.as_str(), schema.name.as_str())
        })
        .collect();
    assert_eq!(
        topics,
        [
            ("/ticks", "hapticd.Tick"),
            ("/tf/tool", "foxglove.FrameTransform"),
            ("/tf/handle", "foxglove.FrameTransform"),
            ("/tf/manipulandum", "foxglove.FrameTransform"),
        ]
    );
    let tick = std::str::from_utf8(&messages[0].data).unwrap();
    let at: Vec<usize> = COLUMNS
        .iter()
        .map(|c| tick.find(&format!("\"{c}\":")).unwrap())
        .collect();
    assert!(at.is_sorted(), "{tick}");
    let tool: serde_json::Value = serde_json::from_slice(&messages[1].data).unwrap();
    assert_eq!(tool["child_frame_id"], "tool");
    assert_eq!(tool["translation"]["x"], 0.0);
    assert_eq!(tool["rotation"]["w"], 1.0);
}

/// The manipulandum transforms of an MCAP recording, in tick order.
fn manipulanda(bytes: &[u8]) -> Vec<Isometry3<f64>> {
    mcap_messages(bytes, "/tf/manipulandum")
        .iter()
        .map(|frame| {
            let (t, r) = (&frame["translation"], &frame["rotation"]);
            let f = |v: &serde_json::Value| v.as_f64().unwrap();
            Isometry3::from_parts(
                Vector3::new(f(&t["x"]), f(&t["y"]), f(&t["z"])).into(),
                UnitQuaternion::new_unchecked(nalgebra::Quaternion::new(
                    f(&r["w"]),
                    f(&r["x"]),
                    f(&r["y"]),
                    f(&r["z"]),
                )),
            )
        })
        .collect()
}

/// Recordings of version 2 that `hapticd replay` wrote before the format
/// had a crate of its own (80 ticks of the default scene's press, free then
/// static) read back the same in both encodings, and the same ticks write
/// again to the same bytes.
#[test]
fn recordings_written_before_read_back_and_write_again_byte_for_byte() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let (csv, mcap) = (data.join("version-2.csv"), data.join("version-2.mcap"));
    let ticks = load_recording(&csv).unwrap();
    assert_eq!(ticks.len(), 80);
    assert!(ticks.iter().any(|t| t.contacts > 0 && t.state == 2));
    assert_eq!(load_recording(&mcap).unwrap(), ticks);

    let bytes = std::fs::read(&mcap).unwrap();
    let manipulanda = manipulanda(&bytes);
    assert_eq!(manipulanda.len(), ticks.len());
    let again: Vec<(RecordedTick, Isometry3<f64>)> =
        ticks.iter().copied().zip(manipulanda).collect();
    let dir = tempfile::tempdir().unwrap();
    for (original, copy) in [(&csv, "again.csv"), (&mcap, "again.mcap")] {
        let copy = dir.path().join(copy);
        write(&copy, &again);
        assert!(
            std::fs::read(&copy).unwrap() == std::fs::read(original).unwrap(),
            "{} differs from {}",
            copy.display(),
            original.display()
        );
    }
}
