//! Tick recordings written by the telemetry thread, complete line by line.

use haptic_devices::{RecordedTick, Recorder, Wrench};
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

/// A recording of servo ticks in the tick format of docs/devices.md.
pub struct TickFile {
    path: PathBuf,
    recorder: Recorder<WholeLines<File>>,
    /// Whether `cycle_time_ns` holds the measured compute time or 0, for
    /// runs that must compare byte for byte.
    measured_time: bool,
    ticks: u64,
}

impl TickFile {
    /// Creates (or truncates) `path` and writes the header.
    pub fn create(path: &Path, measured_time: bool) -> io::Result<TickFile> {
        let file = File::create(path)?;
        let mut recorder = Recorder::new(WholeLines::new(file))?;
        // The header reaches the file at once, so that even a run aborted
        // in its first ticks leaves a readable (empty) recording.
        recorder.flush()?;
        Ok(TickFile {
            path: path.to_owned(),
            recorder,
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
        self.recorder.record(&RecordedTick {
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
        })
    }

    /// Writes everything and syncs the file to disk.
    pub fn finish(self) -> io::Result<u64> {
        let mut lines = self.recorder.finish()?;
        lines.flush()?;
        lines.out.sync_all()?;
        Ok(self.ticks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
