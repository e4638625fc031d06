//! A recording file in either encoding: written in the one its path's
//! extension picks, read in the one its first bytes show.

use crate::coupling::RecordedCoupling;
use crate::csv::{read_csv, CsvWriter, WholeLines};
use crate::format::{RecordedTick, TickFileError};
use crate::mcap_file::{is_mcap, read_coupling, read_mcap, McapWriter};
use crate::scene::{BodyMesh, SceneSnapshot};
use nalgebra::Isometry3;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The encoding of a recording, from its path's extension: `.mcap` (any
/// case) is MCAP, anything else CSV.
fn is_mcap_path(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("mcap"))
}

/// Where the ticks go.
enum Encoding {
    /// Complete line by line.
    Csv(CsvWriter<WholeLines<File>>),
    /// Renamed into place once finished.
    Mcap(Box<McapWriter>),
}

/// A tick recording being written, CSV or MCAP.
pub struct TickFile {
    path: PathBuf,
    encoding: Encoding,
    ticks: u64,
}

impl TickFile {
    /// Starts a recording at `path`, MCAP when it ends in `.mcap`, else
    /// CSV. A CSV file is created (or truncated) at once with its header;
    /// an MCAP file is written beside `path` and renamed to it by
    /// [`TickFile::finish`].
    pub fn create(path: &Path) -> io::Result<TickFile> {
        let encoding = if is_mcap_path(path) {
            Encoding::Mcap(Box::new(McapWriter::create(path)?))
        } else {
            let file = File::create(path)?;
            let mut writer = CsvWriter::new(WholeLines::new(file))?;
            // The header reaches the file at once, so that even a run aborted
            // in its first ticks leaves a readable (empty) recording.
            writer.flush()?;
            Encoding::Csv(writer)
        };
        Ok(TickFile {
            path: path.to_owned(),
            encoding,
            ticks: 0,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one tick, and in MCAP the manipulandum's pose (scene frame)
    /// beside it.
    pub fn record(&mut self, tick: &RecordedTick, manipulandum: &Isometry3<f64>) -> io::Result<()> {
        self.ticks += 1;
        match &mut self.encoding {
            Encoding::Csv(writer) => writer.record(tick),
            Encoding::Mcap(writer) => writer.record(tick, manipulandum),
        }
    }

    /// Draws `meshes` (the tool's and the environment's) in an MCAP
    /// recording, from its first message on; a CSV recording has no scene.
    pub fn set_meshes(&mut self, meshes: &[BodyMesh]) {
        if let Encoding::Mcap(writer) = &mut self.encoding {
            writer.set_meshes(meshes);
        }
    }

    /// Appends the scene at `time` (the servo's clock) to an MCAP
    /// recording; a CSV recording has no scene.
    pub fn record_scene(&mut self, time: Duration, snapshot: &SceneSnapshot) -> io::Result<()> {
        match &mut self.encoding {
            Encoding::Csv(_) => Ok(()),
            Encoding::Mcap(writer) => writer.record_scene(time, snapshot),
        }
    }

    /// Appends one tick's coupling at `time` to an MCAP recording; a CSV
    /// recording has no room for it.
    pub fn record_coupling(
        &mut self,
        time: Duration,
        coupling: &RecordedCoupling,
    ) -> io::Result<()> {
        match &mut self.encoding {
            Encoding::Csv(_) => Ok(()),
            Encoding::Mcap(writer) => writer.record_coupling(time, coupling),
        }
    }

    /// Whether the recording holds the scene (MCAP).
    pub fn has_scene(&self) -> bool {
        matches!(self.encoding, Encoding::Mcap(_))
    }

    /// Writes everything, syncs the file to disk and returns the ticks
    /// recorded.
    pub fn finish(self) -> io::Result<u64> {
        match self.encoding {
            Encoding::Csv(writer) => {
                let lines = writer.finish()?;
                lines.get_ref().sync_all()?;
            }
            Encoding::Mcap(writer) => writer.finish()?,
        }
        Ok(self.ticks)
    }
}

/// Reads a tick recording back, CSV or MCAP (told apart by their first
/// bytes), every value to the bit; MCAP gives non-finite values back as NaN.
pub fn load_recording(path: impl AsRef<Path>) -> Result<Vec<RecordedTick>, TickFileError> {
    let path = path.as_ref();
    let file = path.display().to_string();
    let bytes = std::fs::read(path)
        .map_err(|e| TickFileError::whole(&file, format!("cannot read: {e}")))?;
    if is_mcap(&bytes) {
        return read_mcap(&bytes, &file);
    }
    let text = String::from_utf8(bytes).map_err(|_| {
        TickFileError::whole(
            &file,
            "neither an MCAP recording nor the CSV tick format (not UTF-8 text)".to_owned(),
        )
    })?;
    read_csv(&text, &file)
}

/// Reads an MCAP recording's coupling messages back, one per tick
/// recorded with them (docs/protocol.md, "Recordings").
pub fn load_coupling(path: impl AsRef<Path>) -> Result<Vec<RecordedCoupling>, TickFileError> {
    let path = path.as_ref();
    let file = path.display().to_string();
    let bytes = std::fs::read(path)
        .map_err(|e| TickFileError::whole(&file, format!("cannot read: {e}")))?;
    if !is_mcap(&bytes) {
        return Err(TickFileError::whole(
            &file,
            "not an MCAP recording: only MCAP carries the coupling".to_owned(),
        ));
    }
    read_coupling(&bytes, &file)
}
