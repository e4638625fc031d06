//! The tick format both encodings share: its name and version, its
//! columns in order, and one tick as it is recorded and read back.

use haptic_core::Wrench;
use nalgebra::Isometry3;
use std::time::Duration;

/// The format's name: the CSV's first line says `# hapticd-ticks: 2`, an
/// MCAP file's `hapticd` metadata `format = hapticd-ticks`.
pub const FORMAT_NAME: &str = "hapticd-ticks";

/// The schema version written, and the only one read, in either encoding.
/// Version 2 appended the columns after `cycle_time_ns` to version 1's.
pub const FORMAT_VERSION: u32 = 2;

/// The columns of a tick, in order: the CSV's header and the fields of the
/// MCAP tick message (`tick.schema.json`), same names and units.
pub const COLUMNS: [&str; 33] = [
    "tick",
    "time_ns",
    "x",
    "y",
    "z",
    "qw",
    "qx",
    "qy",
    "qz",
    "fx",
    "fy",
    "fz",
    "tx",
    "ty",
    "tz",
    "contacts",
    "state",
    "cycle_time_ns",
    "rendered_fx",
    "rendered_fy",
    "rendered_fz",
    "rendered_tx",
    "rendered_ty",
    "rendered_tz",
    "tool_x",
    "tool_y",
    "tool_z",
    "tool_qw",
    "tool_qx",
    "tool_qy",
    "tool_qz",
    "verdict",
    "quarantined",
];

/// The `state` and `verdict` code of a tick that rendered nothing (its
/// device read failed).
pub const NOT_RENDERED: u8 = 255;

/// What the servo did in one tick, as a recording keeps it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RecordedTick {
    pub tick: u64,
    /// Device time of the tick's sample.
    pub time: Duration,
    /// Device pose read this tick.
    pub pose: Isometry3<f64>,
    /// Wrench written to the device this tick, after the safety layer.
    pub wrench: Wrench,
    /// Wrench rendered this tick, in the device frame: what the servo asked
    /// for before the safety layer and before any output mask of the device
    /// (a kinematic emulator writes nothing, but this shows what it would
    /// have felt).
    pub rendered: Wrench,
    /// The tool after the tick, scene frame.
    pub tool_pose: Isometry3<f64>,
    /// Number of contacts.
    pub contacts: u32,
    /// Friction state code: 0 free, 1 sliding, 2 static, or
    /// [`NOT_RENDERED`].
    pub state: u8,
    /// Friction verdict code (`FrictionVerdict::code`), or
    /// [`NOT_RENDERED`].
    pub verdict: u8,
    /// The tool pose came out non-finite and was reset this tick.
    pub quarantined: bool,
    /// Duration of the tick's computation (ns); pass a deterministic value
    /// (e.g. 0) when runs are compared byte for byte.
    pub cycle_time_ns: u64,
}

/// A tick recording that could not be read: the file, the 1-based line
/// (`None` for the whole file) and the cause.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{}{message}", line.map_or(String::new(), |l| format!("{l}: ")))]
pub struct TickFileError {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

impl TickFileError {
    /// An error about the whole of `file`.
    pub(crate) fn whole(file: &str, message: String) -> Self {
        Self {
            file: file.to_owned(),
            line: None,
            message,
        }
    }
}

/// Why a version other than [`FORMAT_VERSION`] is refused.
pub(crate) fn unsupported_version(version: &str) -> String {
    format!("unsupported tick format `{version}` (supported: {FORMAT_VERSION})")
}
