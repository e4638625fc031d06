//! The CSV encoding: a header of `# key: value` lines like the trajectory
//! format's, then one comma-separated line per tick:
//!
//! ```text
//! # hapticd-ticks: 2
//! # columns: tick,time_ns,x,y,z,…,verdict,quarantined
//! 0,0,0,0,0.005,1,0,0,0,…,1,0
//! ```
//!
//! Positions in metres, time in integer nanoseconds, floats as the
//! shortest decimal that parses back to the same bits: equal ticks give
//! equal bytes, and every value reads back with the bits it was written
//! with.

use crate::format::{
    unsupported_version, RecordedTick, TickFileError, COLUMNS, FORMAT_NAME, FORMAT_VERSION,
};
use haptic_core::Wrench;
use nalgebra::{Isometry3, Quaternion, Translation3, UnitQuaternion, Vector3};
use std::io::{self, Write};
use std::time::Duration;

/// Bytes [`WholeLines`] buffers before a write.
const BLOCK: usize = 64 * 1024;

/// The first header line.
fn version_line() -> String {
    format!("# {FORMAT_NAME}: {FORMAT_VERSION}")
}

/// The second header line.
fn columns_line() -> String {
    format!("# columns: {}", COLUMNS.join(","))
}

/// Writes ticks as CSV to `out`.
pub struct CsvWriter<W: Write> {
    out: W,
}

impl<W: Write> CsvWriter<W> {
    /// Starts a recording on `out` by writing the header.
    pub fn new(mut out: W) -> io::Result<Self> {
        writeln!(out, "{}", version_line())?;
        writeln!(out, "{}", columns_line())?;
        Ok(CsvWriter { out })
    }

    /// Appends one tick.
    pub fn record(&mut self, r: &RecordedTick) -> io::Result<()> {
        let p = r.pose.translation.vector;
        let q = r.pose.rotation;
        let (f, t) = (r.wrench.force, r.wrench.torque);
        let (rf, rt) = (r.rendered.force, r.rendered.torque);
        let s = r.tool_pose.translation.vector;
        let sq = r.tool_pose.rotation;
        writeln!(
            self.out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},\
             {},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            r.tick,
            r.time.as_nanos(),
            p.x,
            p.y,
            p.z,
            q.w,
            q.i,
            q.j,
            q.k,
            f.x,
            f.y,
            f.z,
            t.x,
            t.y,
            t.z,
            r.contacts,
            r.state,
            r.cycle_time_ns,
            rf.x,
            rf.y,
            rf.z,
            rt.x,
            rt.y,
            rt.z,
            s.x,
            s.y,
            s.z,
            sq.w,
            sq.i,
            sq.j,
            sq.k,
            r.verdict,
            u8::from(r.quarantined),
        )
    }

    /// Flushes what is written so far.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Flushes and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// A writer that hands its file whole lines only: the file never ends in
/// a partial line, even when the process exits without flushing.
pub(crate) struct WholeLines<W: Write> {
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

    /// The writer underneath; a trailing partial line stays buffered.
    pub(crate) fn get_ref(&self) -> &W {
        &self.out
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

/// Parses a CSV tick recording; `file` names it in errors. Every value
/// comes back with the bits it was written with; quaternions are taken as
/// written, not renormalised.
pub fn read_csv(text: &str, file: &str) -> Result<Vec<RecordedTick>, TickFileError> {
    let error = |line: Option<usize>, message: String| TickFileError {
        file: file.to_owned(),
        line,
        message,
    };
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    let version = version_line();
    let version_key = format!("# {FORMAT_NAME}:");
    match lines.next() {
        Some((_, line)) if line.trim_end() == version => {}
        Some((n, line)) if line.starts_with(&version_key) => {
            return Err(error(
                Some(n),
                unsupported_version(line[version_key.len()..].trim()),
            ))
        }
        _ => {
            return Err(error(
                Some(1),
                format!("the first line must be `{version}`"),
            ))
        }
    }
    let columns = columns_line();
    match lines.next() {
        Some((_, line)) if line.trim_end() == columns => {}
        Some((n, _)) => return Err(error(Some(n), format!("expected `{columns}`"))),
        None => return Err(error(None, format!("missing `{columns}`"))),
    }
    lines
        .map(|(n, line)| {
            let fields: Vec<&str> = line.trim_end().split(',').map(str::trim).collect();
            if fields.len() != COLUMNS.len() {
                return Err(error(
                    Some(n),
                    format!("expected {} columns, found {}", COLUMNS.len(), fields.len()),
                ));
            }
            let float = |i: usize| {
                fields[i].parse::<f64>().map_err(|_| {
                    error(
                        Some(n),
                        format!("bad number `{}` in column `{}`", fields[i], COLUMNS[i]),
                    )
                })
            };
            let integer = |i: usize| {
                fields[i].parse::<u64>().map_err(|_| {
                    error(
                        Some(n),
                        format!("bad integer `{}` in column `{}`", fields[i], COLUMNS[i]),
                    )
                })
            };
            let code = |i: usize| {
                fields[i].parse::<u8>().map_err(|_| {
                    error(
                        Some(n),
                        format!("bad code `{}` in column `{}`", fields[i], COLUMNS[i]),
                    )
                })
            };
            let vector = |i: usize| -> Result<Vector3<f64>, TickFileError> {
                Ok(Vector3::new(float(i)?, float(i + 1)?, float(i + 2)?))
            };
            let pose = |i: usize| -> Result<Isometry3<f64>, TickFileError> {
                let q = Quaternion::new(float(i + 3)?, float(i + 4)?, float(i + 5)?, float(i + 6)?);
                Ok(Isometry3::from_parts(
                    Translation3::from(vector(i)?),
                    UnitQuaternion::new_unchecked(q),
                ))
            };
            let quarantined = match fields[32] {
                "0" => false,
                "1" => true,
                other => {
                    return Err(error(
                        Some(n),
                        format!("bad flag `{other}` in column `quarantined` (0 or 1)"),
                    ))
                }
            };
            let contacts = u32::try_from(integer(15)?)
                .map_err(|_| error(Some(n), format!("contacts `{}` out of range", fields[15])))?;
            Ok(RecordedTick {
                tick: integer(0)?,
                time: Duration::from_nanos(integer(1)?),
                pose: pose(2)?,
                wrench: Wrench {
                    force: vector(9)?,
                    torque: vector(12)?,
                },
                contacts,
                state: code(16)?,
                cycle_time_ns: integer(17)?,
                rendered: Wrench {
                    force: vector(18)?,
                    torque: vector(21)?,
                },
                tool_pose: pose(24)?,
                verdict: code(31)?,
                quarantined,
            })
        })
        .collect()
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
