//! Tick recordings written by the telemetry thread: CSV, complete line by
//! line, or MCAP, renamed into place once finished; the file's extension
//! picks the format.

mod mcap_file;

use haptic_devices::{RecordedTick, Recorder, TickFileError, Wrench};
use haptic_friction::FrictionState;
use haptic_render::FrictionVerdict;
use haptic_servo::TickRecord;
use nalgebra::{Isometry3, Quaternion, Translation3, UnitQuaternion, Vector3};
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Bytes buffered before a write to the file.
const BLOCK: usize = 64 * 1024;

/// A writer that hands its file whole lines only: the file never ends in
/// a partial line, even when the process exits without flushing.
pub struct WholeLines<W: Write> {
    out: W,
    buffer: Vec<u8>,
}

impl<W: Write> WholeLines<W> {
    pub fn new(out: W) -> Self {
        Self {
            out,
            buffer: Vec::with_capacity(2 * BLOCK),
        }
    }

    /// Writes every complete line buffered so far.
    fn write_lines(&mut self) -> io::Result<()> {
        if let Some(end) = self.buffer.iter().rposition(|&b| b == b'\n') {
            self.out.write_all(&self.buffer[..=end])?;
            self.buffer.drain(..=end);
        }
        Ok(())
    }
}

impl<W: Write> Write for WholeLines<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.buffer.extend_from_slice(bytes);
        if self.buffer.len() >= BLOCK {
            self.write_lines()?;
        }
        Ok(bytes.len())
    }

    /// Writes the complete lines and flushes; a trailing partial line stays
    /// buffered.
    fn flush(&mut self) -> io::Result<()> {
        self.write_lines()?;
        self.out.flush()
    }
}

/// The device pose of a servo record.
pub fn device_pose(record: &TickRecord) -> Isometry3<f64> {
    pose(record.device_position, record.device_orientation)
}

/// The tool pose of a servo record.
pub fn tool_pose(record: &TickRecord) -> Isometry3<f64> {
    pose(record.tool_position, record.tool_orientation)
}

/// The manipulandum of a servo record.
pub fn manipulandum_pose(record: &TickRecord) -> Isometry3<f64> {
    pose(
        record.manipulandum_position,
        record.manipulandum_orientation,
    )
}

fn pose(position: [f64; 3], [w, i, j, k]: [f64; 4]) -> Isometry3<f64> {
    Isometry3::from_parts(
        Translation3::from(Vector3::from(position)),
        UnitQuaternion::new_unchecked(Quaternion::new(w, i, j, k)),
    )
}

/// The recordings' `state` and `verdict` code of a tick that rendered
/// nothing (its device read failed); every other code is a
/// [`FrictionVerdict::code`].
const NOT_RENDERED: u8 = 255;

/// The `verdict` column: the verdict's code, or [`NOT_RENDERED`].
fn verdict_code(verdict: Option<FrictionVerdict>) -> u8 {
    verdict.map_or(NOT_RENDERED, FrictionVerdict::code)
}

/// The `state` column: the code of the certified verdict of the tick's
/// friction state (0 free, 1 sliding, 2 static), or [`NOT_RENDERED`].
fn state_code(state: Option<FrictionState>) -> u8 {
    verdict_code(state.map(|state| match state {
        FrictionState::Free => FrictionVerdict::Free,
        FrictionState::Sliding => FrictionVerdict::Sliding,
        FrictionState::Static => FrictionVerdict::Static,
    }))
}

/// The file format of a recording, from its path's extension: `.mcap`
/// (any case) is MCAP, anything else CSV.
fn is_mcap_path(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("mcap"))
}

/// Where the ticks go.
enum Format {
    /// The tick format of docs/devices.md.
    Csv(Recorder<WholeLines<File>>),
    /// MCAP (docs/protocol.md, "Recordings").
    Mcap(Box<mcap_file::McapTicks>),
}

/// A recording of servo ticks, in the tick format of docs/devices.md or
/// as MCAP.
pub struct TickFile {
    path: PathBuf,
    format: Format,
    /// Whether `cycle_time_ns` holds the measured compute time or 0, for
    /// runs that must compare byte for byte.
    measured_time: bool,
    ticks: u64,
}

impl TickFile {
    /// Starts a recording at `path`, MCAP when it ends in `.mcap`, else
    /// CSV. A CSV file is created (or truncated) at once with its header;
    /// an MCAP file is written beside `path` and renamed to it by
    /// [`TickFile::finish`].
    pub fn create(path: &Path, measured_time: bool) -> io::Result<TickFile> {
        let format = if is_mcap_path(path) {
            Format::Mcap(Box::new(mcap_file::McapTicks::create(path)?))
        } else {
            let file = File::create(path)?;
            let mut recorder = Recorder::new(WholeLines::new(file))?;
            // The header reaches the file at once, so that even a run aborted
            // in its first ticks leaves a readable (empty) recording.
            recorder.flush()?;
            Format::Csv(recorder)
        };
        Ok(TickFile {
            path: path.to_owned(),
            format,
            measured_time,
            ticks: 0,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one tick: the device pose read, the wrench written to the
    /// device and the wrench rendered, the tool pose, contacts, the friction
    /// state and verdict, and whether the tool pose was quarantined.
    pub fn record(&mut self, record: &TickRecord) -> io::Result<()> {
        self.ticks += 1;
        let tick = RecordedTick {
            tick: record.tick,
            time: record.time,
            pose: device_pose(record),
            wrench: Wrench {
                force: record.force.into(),
                torque: record.torque.into(),
            },
            rendered: Wrench {
                force: record.rendered_force.into(),
                torque: record.rendered_torque.into(),
            },
            tool_pose: tool_pose(record),
            contacts: record.contacts,
            state: state_code(record.friction_state()),
            verdict: verdict_code(record.verdict),
            quarantined: record.quarantined,
            cycle_time_ns: if self.measured_time {
                record.compute_ns()
            } else {
                0
            },
        };
        match &mut self.format {
            Format::Csv(recorder) => recorder.record(&tick),
            Format::Mcap(mcap) => mcap.record(&tick, &manipulandum_pose(record)),
        }
    }

    /// Writes everything, syncs the file to disk and returns the ticks
    /// recorded.
    pub fn finish(self) -> io::Result<u64> {
        match self.format {
            Format::Csv(recorder) => {
                let mut lines = recorder.finish()?;
                lines.flush()?;
                lines.out.sync_all()?;
            }
            Format::Mcap(mcap) => mcap.finish()?,
        }
        Ok(self.ticks)
    }
}

/// Reads a tick recording back, CSV or MCAP (told apart by their first
/// bytes), every value to the bit; MCAP gives non-finite values back as NaN.
pub fn load_recording(path: impl AsRef<Path>) -> Result<Vec<RecordedTick>, TickFileError> {
    let path = path.as_ref();
    let file = path.display().to_string();
    let error = |message: String| TickFileError {
        file: file.clone(),
        line: None,
        message,
    };
    let bytes = std::fs::read(path).map_err(|e| error(format!("cannot read: {e}")))?;
    if mcap_file::is_mcap(&bytes) {
        return mcap_file::read_mcap_ticks(&bytes, &file);
    }
    let text = String::from_utf8(bytes).map_err(|_| {
        error("neither an MCAP recording nor the CSV tick format (not UTF-8 text)".to_owned())
    })?;
    haptic_devices::read_ticks(&text, &file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Ticks with every column set, one verdict each, the last not rendered.
    fn records() -> Vec<TickRecord> {
        use FrictionVerdict::*;
        [
            Free,
            Sliding,
            Static,
            StaticInBand,
            SlidingInBand,
            SolverFailed,
        ]
        .into_iter()
        .map(Some)
        .chain([None])
        .enumerate()
        .map(|(i, verdict)| {
            let v = i as f64;
            let angle = 0.1 * v;
            TickRecord {
                tick: i as u64,
                time: Duration::from_micros(1000 * i as u64 + 7),
                contacts: 3 * i as u32,
                verdict,
                quarantined: i == 3,
                device_position: [0.1 + v, -0.2 / (1.0 + v), 1e-9 * v],
                device_orientation: [angle.cos(), angle.sin(), 0.0, 0.0],
                tool_position: [v / 3.0, 0.5, -v],
                tool_orientation: [angle.cos(), 0.0, 0.0, angle.sin()],
                manipulandum_position: [v / 3.0 + 1e-3, 0.5, 0.2 - v],
                manipulandum_orientation: [angle.cos(), 0.0, angle.sin(), 0.0],
                rendered_force: [0.3 * v, -1.0, 2.5],
                rendered_torque: [0.0, 1e-3 * v, -0.0],
                force: [0.1 * v, -0.7, 2.0],
                torque: [1e-4, 0.0, -v],
                ..TickRecord::default()
            }
        })
        .collect()
    }

    fn write(path: &Path, records: &[TickRecord]) -> u64 {
        let mut file = TickFile::create(path, false).unwrap();
        for record in records {
            file.record(record).unwrap();
        }
        file.finish().unwrap()
    }

    #[test]
    fn mcap_reads_back_as_the_csv_does() {
        let dir = tempfile::tempdir().unwrap();
        let (csv, mcap) = (dir.path().join("ticks.csv"), dir.path().join("ticks.MCAP"));
        let records = records();
        assert_eq!(write(&csv, &records), 7);
        assert_eq!(write(&mcap, &records), 7);
        assert!(std::fs::read(&mcap).unwrap().starts_with(mcap::MAGIC));
        let from_csv = load_recording(&csv).unwrap();
        assert_eq!(from_csv.len(), 7);
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

    #[test]
    fn mcap_writes_non_finite_values_as_null_and_reads_them_as_nan() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nan.mcap");
        let record = TickRecord {
            rendered_force: [f64::NAN, f64::INFINITY, 1.0],
            ..TickRecord::default()
        };
        write(&path, &[record]);
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
        let mut file = TickFile::create(&path, true).unwrap();
        file.record(&TickRecord::default()).unwrap();
        assert!(!path.exists());
        drop(file);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn truncated_or_foreign_mcap_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ticks.mcap");
        write(&path, &records());
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

    #[test]
    fn the_manipulandum_is_recorded_as_a_transform() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mapped.mcap");
        let mut file = TickFile::create(&path, false).unwrap();
        let records = records();
        for record in &records {
            file.record(record).unwrap();
        }
        file.finish().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let frames: Vec<serde_json::Value> = mcap::MessageStream::new(&bytes)
            .unwrap()
            .map(Result::unwrap)
            .filter(|m| m.channel.topic == "/tf/manipulandum")
            .map(|m| serde_json::from_slice(&m.data).unwrap())
            .collect();
        assert_eq!(frames.len(), records.len());
        for (frame, record) in frames.iter().zip(&records) {
            let [x, y, z] = record.manipulandum_position;
            let [w, ..] = record.manipulandum_orientation;
            assert_eq!(frame["parent_frame_id"], "world");
            assert_eq!(frame["child_frame_id"], "manipulandum");
            assert_eq!(
                frame["translation"],
                serde_json::json!({"x": x, "y": y, "z": z})
            );
            assert_eq!(frame["rotation"]["w"], w);
        }
    }

    /// The tick messages, their schema and the CSV name the same columns,
    /// in the same order.
    #[test]
    fn the_tick_schema_names_the_csv_columns() {
        let mut csv = Recorder::new(Vec::new()).unwrap().finish().unwrap();
        csv.pop();
        let csv = String::from_utf8(csv).unwrap();
        let columns: Vec<&str> = csv.lines().nth(1).unwrap()["# columns: ".len()..]
            .split(',')
            .collect();
        let schema: serde_json::Value = serde_json::from_str(mcap_file::TICK_SCHEMA).unwrap();
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
        assert_eq!(required, columns);
        let mut sorted = columns.clone();
        sorted.sort_unstable();
        assert_eq!(properties, sorted);

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ticks.mcap");
        write(&path, &records()[..1]);
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
        let at: Vec<usize> = columns
            .iter()
            .map(|c| tick.find(&format!("\"{c}\":")).unwrap())
            .collect();
        assert!(at.is_sorted(), "{tick}");
        let tool: serde_json::Value = serde_json::from_slice(&messages[1].data).unwrap();
        assert_eq!(tool["child_frame_id"], "tool");
        assert_eq!(tool["translation"]["x"], 0.0);
        assert_eq!(tool["rotation"]["w"], 1.0);
    }

    #[test]
    fn only_whole_lines_reach_the_file_before_a_flush() {
        let mut lines = WholeLines::new(Vec::new());
        let line = b"0123456789abcdef\n";
        // Past one block, ending mid-line.
        for _ in 0..(BLOCK / line.len() + 10) {
            lines.write_all(line).unwrap();
        }
        lines.write_all(b"partial").unwrap();
        assert!(!lines.out.is_empty());
        assert_eq!(lines.out.last(), Some(&b'\n'));
        assert_eq!(lines.out.len() % line.len(), 0);
        lines.flush().unwrap();
        assert_eq!(lines.out.last(), Some(&b'\n'));
        assert_eq!(lines.buffer, b"partial");
    }
}
