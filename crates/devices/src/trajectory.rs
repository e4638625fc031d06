//! Recorded handle trajectories: a versioned text format, its parser and
//! writer, and interpolation at arbitrary times.
//!
//! A file is a header of `# key: value` lines followed by one sample per
//! line:
//!
//! ```text
//! # hapticd-trajectory: 1
//! # units: mm
//! # rate_hz: 1000
//! # columns: t_s,x,y,z,qw,qx,qy,qz,buttons
//! 0,0,0,10,1,0,0,0,0
//! 0.001,0.5,0,9.75,1,0,0,0,1
//! ```
//!
//! * `hapticd-trajectory` is the format version and must be the first line;
//!   only [`FORMAT_VERSION`] is accepted.
//! * `units` is the length unit of `x,y,z`: `m` or `mm`. Time is always in
//!   seconds.
//! * `rate_hz` is the nominal sample rate (informative; `t_s` is
//!   authoritative).
//! * `columns` must be exactly [`COLUMNS`].
//!
//! Every header key is required once; unknown keys are errors. `t_s` must be
//! strictly increasing, every number finite, each quaternion unit within
//! [`QUATERNION_TOLERANCE`], and `buttons` a decimal `u32`. Fields may be
//! surrounded by spaces; lines may end in `\r\n`. The writer prints each
//! `f64` as the shortest decimal that parses back to the same bits, so
//! [`Trajectory::write`] followed by [`Trajectory::parse`] is exact.

use nalgebra::{Point3, Quaternion, UnitQuaternion, Vector3};
use std::fmt;
use std::io::{self, Write};
use std::path::Path;

/// The format version this module reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// The only column layout of version 1.
pub const COLUMNS: &str = "t_s,x,y,z,qw,qx,qy,qz,buttons";

/// Largest accepted |‖q‖ − 1| of a recorded quaternion.
pub const QUATERNION_TOLERANCE: f64 = 1e-6;

const VERSION_KEY: &str = "hapticd-trajectory";
const COLUMN_NAMES: [&str; 9] = ["t_s", "x", "y", "z", "qw", "qx", "qy", "qz", "buttons"];

/// Length unit of the recorded positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LengthUnit {
    Meters,
    Millimeters,
}

impl LengthUnit {
    /// Metres per unit.
    pub fn to_meters(self) -> f64 {
        match self {
            LengthUnit::Meters => 1.0,
            LengthUnit::Millimeters => 1e-3,
        }
    }

    fn name(self) -> &'static str {
        match self {
            LengthUnit::Meters => "m",
            LengthUnit::Millimeters => "mm",
        }
    }
}

/// One data line exactly as stored: position in the file's unit, the
/// quaternion as written (not renormalised).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrajectoryRow {
    /// Time (s).
    pub t_s: f64,
    /// Position in the trajectory's [`LengthUnit`].
    pub position: [f64; 3],
    /// Orientation as `[qw, qx, qy, qz]`.
    pub quaternion: [f64; 4],
    /// Pressed buttons, bit `i` for button `i`.
    pub buttons: u32,
}

/// The recording evaluated at one time, in SI units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrajectoryPoint {
    /// Position (m).
    pub position: Point3<f64>,
    /// Orientation (slerp between the neighbouring samples).
    pub orientation: UnitQuaternion<f64>,
    /// Buttons of the last sample at or before the time.
    pub buttons: u32,
    /// Linear velocity of the enclosing segment (m/s); zero outside the
    /// recording.
    pub linear_velocity: Vector3<f64>,
    /// Angular velocity of the enclosing segment in the device frame
    /// (rad/s); zero outside the recording.
    pub angular_velocity: Vector3<f64>,
}

/// A validated recording.
#[derive(Clone, Debug, PartialEq)]
pub struct Trajectory {
    unit: LengthUnit,
    rate_hz: f64,
    rows: Vec<TrajectoryRow>,
}

/// What is wrong with a trajectory.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TrajectoryErrorKind {
    #[error("cannot read: {0}")]
    Io(String),
    #[error("not valid UTF-8")]
    NotUtf8,
    #[error("the first line must be `# {VERSION_KEY}: {FORMAT_VERSION}`")]
    MissingVersion,
    #[error("unsupported format version `{0}` (supported: {FORMAT_VERSION})")]
    UnsupportedVersion(String),
    #[error("header line is not `# key: value`")]
    MalformedHeader,
    #[error("unknown header key `{0}`")]
    UnknownKey(String),
    #[error("header key `{0}` appears twice")]
    DuplicateKey(String),
    #[error("missing header key `{0}`")]
    MissingKey(&'static str),
    #[error("header line after the first sample")]
    HeaderAfterData,
    #[error("bad value `{value}` for `{key}`: {expected}")]
    BadHeaderValue {
        key: &'static str,
        value: String,
        expected: &'static str,
    },
    #[error("missing column: expected 9 (`{COLUMNS}`), found {0}")]
    MissingColumn(usize),
    #[error("extra column: expected 9 (`{COLUMNS}`), found {0}")]
    ExtraColumn(usize),
    #[error("bad number `{text}` in column `{column}`")]
    BadNumber { column: &'static str, text: String },
    #[error("non-finite value {value} in column `{column}`")]
    NonFinite { column: &'static str, value: f64 },
    #[error("quaternion norm {norm} is not 1 (tolerance {QUATERNION_TOLERANCE})")]
    NonUnitQuaternion { norm: f64 },
    #[error("time {t_s} s does not follow {previous_s} s (must increase strictly)")]
    TimeNotIncreasing { previous_s: f64, t_s: f64 },
    #[error("no samples")]
    Empty,
    #[error(
        "an MCAP file, not a trajectory: the emulator plays trajectory files (`hapticd record`)"
    )]
    Mcap,
    #[error("a tick recording, not a trajectory: the emulator plays trajectory files (`hapticd record`)")]
    TickRecording,
}

/// The first bytes of every MCAP file.
const MCAP_MAGIC: &[u8] = b"\x89MCAP0\r\n";

/// A trajectory error with the file and 1-based line it was found on.
#[derive(Clone, Debug, PartialEq)]
pub struct TrajectoryError {
    /// The file (or other source) name given to the parser.
    pub file: String,
    /// 1-based line, or `None` for errors about the whole file.
    pub line: Option<usize>,
    pub kind: TrajectoryErrorKind,
}

impl fmt::Display for TrajectoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.file, line, self.kind),
            None => write!(f, "{}: {}", self.file, self.kind),
        }
    }
}

impl std::error::Error for TrajectoryError {}

impl Trajectory {
    /// Validates rows built in memory with the same rules as the parser;
    /// error lines count from the first row as line 1.
    pub fn new(
        unit: LengthUnit,
        rate_hz: f64,
        rows: Vec<TrajectoryRow>,
    ) -> Result<Self, TrajectoryError> {
        let err = |line, kind| TrajectoryError {
            file: "<memory>".to_owned(),
            line,
            kind,
        };
        if !(rate_hz.is_finite() && rate_hz > 0.0) {
            return Err(err(None, bad_rate(rate_hz.to_string())));
        }
        for (i, row) in rows.iter().enumerate() {
            let previous = i.checked_sub(1).map(|p| rows[p].t_s);
            check_row(row, previous).map_err(|kind| err(Some(i + 1), kind))?;
        }
        if rows.is_empty() {
            return Err(err(None, TrajectoryErrorKind::Empty));
        }
        Ok(Trajectory {
            unit,
            rate_hz,
            rows,
        })
    }

    /// Parses the text of a trajectory file; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Self, TrajectoryError> {
        parse_text(text).map_err(|(line, kind)| TrajectoryError {
            file: file.to_owned(),
            line,
            kind,
        })
    }

    /// Reads and parses a trajectory file.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, TrajectoryError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| TrajectoryError {
            file: file.clone(),
            line: None,
            kind: TrajectoryErrorKind::Io(e.to_string()),
        })?;
        if bytes.starts_with(MCAP_MAGIC) {
            return Err(TrajectoryError {
                file,
                line: None,
                kind: TrajectoryErrorKind::Mcap,
            });
        }
        let text = std::str::from_utf8(&bytes).map_err(|e| TrajectoryError {
            file: file.clone(),
            line: Some(
                1 + bytes[..e.valid_up_to()]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count(),
            ),
            kind: TrajectoryErrorKind::NotUtf8,
        })?;
        Self::parse(text, &file)
    }

    /// Writes the trajectory in the current format version; parsing the
    /// output gives back an identical trajectory.
    pub fn write<W: Write>(&self, mut w: W) -> io::Result<()> {
        writeln!(w, "# {VERSION_KEY}: {FORMAT_VERSION}")?;
        writeln!(w, "# units: {}", self.unit.name())?;
        writeln!(w, "# rate_hz: {}", self.rate_hz)?;
        writeln!(w, "# columns: {COLUMNS}")?;
        for r in &self.rows {
            let [x, y, z] = r.position;
            let [qw, qx, qy, qz] = r.quaternion;
            writeln!(w, "{},{x},{y},{z},{qw},{qx},{qy},{qz},{}", r.t_s, r.buttons)?;
        }
        w.flush()
    }

    /// Length unit of the stored positions.
    pub fn unit(&self) -> LengthUnit {
        self.unit
    }

    /// Nominal sample rate (Hz).
    pub fn rate_hz(&self) -> f64 {
        self.rate_hz
    }

    /// The samples as stored.
    pub fn rows(&self) -> &[TrajectoryRow] {
        &self.rows
    }

    /// Time of the first sample (s).
    pub fn start_s(&self) -> f64 {
        self.rows[0].t_s
    }

    /// Time of the last sample (s).
    pub fn end_s(&self) -> f64 {
        self.rows[self.rows.len() - 1].t_s
    }

    /// The recording at time `t_s`: linear interpolation of position, slerp
    /// of orientation, buttons held from the previous sample. Before the
    /// first or after the last sample the end sample is held, at rest.
    pub fn at(&self, t_s: f64) -> TrajectoryPoint {
        let i = self.rows.partition_point(|r| r.t_s <= t_s);
        if i == 0 || i == self.rows.len() {
            let row = &self.rows[if i == 0 { 0 } else { i - 1 }];
            return TrajectoryPoint {
                position: self.position(row),
                orientation: orientation(row),
                buttons: row.buttons,
                linear_velocity: Vector3::zeros(),
                angular_velocity: Vector3::zeros(),
            };
        }
        let (a, b) = (&self.rows[i - 1], &self.rows[i]);
        let span = b.t_s - a.t_s;
        let s = (t_s - a.t_s) / span;
        let (pa, pb) = (self.position(a), self.position(b));
        let (qa, qb) = (orientation(a), orientation(b));
        TrajectoryPoint {
            position: pa + (pb - pa) * s,
            orientation: slerp(&qa, &qb, s),
            buttons: a.buttons,
            linear_velocity: (pb - pa) / span,
            angular_velocity: (qb * qa.inverse()).scaled_axis() / span,
        }
    }

    fn position(&self, row: &TrajectoryRow) -> Point3<f64> {
        Point3::from(row.position) * self.unit.to_meters()
    }
}

/// The row's quaternion, renormalised.
fn orientation(row: &TrajectoryRow) -> UnitQuaternion<f64> {
    let [w, x, y, z] = row.quaternion;
    UnitQuaternion::from_quaternion(Quaternion::new(w, x, y, z))
}

/// Shortest-arc slerp, `a · exp(s · log(a⁻¹ b))`. Unlike nalgebra's
/// `slerp` it never panics on nearly equal orientations and returns `a`
/// exactly at `s = 0`.
fn slerp(a: &UnitQuaternion<f64>, b: &UnitQuaternion<f64>, s: f64) -> UnitQuaternion<f64> {
    a * UnitQuaternion::from_scaled_axis((a.inverse() * b).scaled_axis() * s)
}

type Located<T> = Result<T, (Option<usize>, TrajectoryErrorKind)>;

fn parse_text(text: &str) -> Located<Trajectory> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    match lines.next().and_then(|(_, l)| header_entry(l)) {
        Some((VERSION_KEY, v)) if v == FORMAT_VERSION.to_string() => {}
        Some((VERSION_KEY, v)) => {
            return Err((
                Some(1),
                TrajectoryErrorKind::UnsupportedVersion(v.to_owned()),
            ))
        }
        Some(("hapticd-ticks", _)) => return Err((None, TrajectoryErrorKind::TickRecording)),
        _ => return Err((Some(1), TrajectoryErrorKind::MissingVersion)),
    }

    let mut unit = None;
    let mut rate_hz = None;
    let mut columns = false;
    let mut rows: Vec<TrajectoryRow> = Vec::new();
    let mut header_end = 2;
    for (n, line) in lines {
        let at = |kind| (Some(n), kind);
        if line.trim_start().starts_with('#') {
            if !rows.is_empty() {
                return Err(at(TrajectoryErrorKind::HeaderAfterData));
            }
            header_end = n + 1;
            let (key, value) =
                header_entry(line).ok_or(at(TrajectoryErrorKind::MalformedHeader))?;
            let duplicate = match key {
                "units" => unit.replace(parse_unit(value).map_err(at)?).is_some(),
                "rate_hz" => rate_hz.replace(parse_rate(value).map_err(at)?).is_some(),
                "columns" => {
                    if value.split(',').map(str::trim).ne(COLUMN_NAMES) {
                        return Err(at(TrajectoryErrorKind::BadHeaderValue {
                            key: "columns",
                            value: value.to_owned(),
                            expected: COLUMNS,
                        }));
                    }
                    std::mem::replace(&mut columns, true)
                }
                VERSION_KEY => true,
                other => return Err(at(TrajectoryErrorKind::UnknownKey(other.to_owned()))),
            };
            if duplicate {
                return Err(at(TrajectoryErrorKind::DuplicateKey(key.to_owned())));
            }
            continue;
        }
        if rows.is_empty() {
            missing_key(unit.is_some(), rate_hz.is_some(), columns).map_err(at)?;
        }
        let row = parse_row(line).map_err(at)?;
        check_row(&row, rows.last().map(|r| r.t_s)).map_err(at)?;
        rows.push(row);
    }
    missing_key(unit.is_some(), rate_hz.is_some(), columns).map_err(|k| (Some(header_end), k))?;
    match (unit, rate_hz) {
        (Some(unit), Some(rate_hz)) if !rows.is_empty() => Ok(Trajectory {
            unit,
            rate_hz,
            rows,
        }),
        _ => Err((None, TrajectoryErrorKind::Empty)),
    }
}

fn missing_key(units: bool, rate_hz: bool, columns: bool) -> Result<(), TrajectoryErrorKind> {
    match [(units, "units"), (rate_hz, "rate_hz"), (columns, "columns")]
        .into_iter()
        .find(|(present, _)| !present)
    {
        Some((_, key)) => Err(TrajectoryErrorKind::MissingKey(key)),
        None => Ok(()),
    }
}

fn header_entry(line: &str) -> Option<(&str, &str)> {
    let (key, value) = line.trim().strip_prefix('#')?.split_once(':')?;
    Some((key.trim(), value.trim()))
}

fn parse_unit(value: &str) -> Result<LengthUnit, TrajectoryErrorKind> {
    match value {
        "m" => Ok(LengthUnit::Meters),
        "mm" => Ok(LengthUnit::Millimeters),
        _ => Err(TrajectoryErrorKind::BadHeaderValue {
            key: "units",
            value: value.to_owned(),
            expected: "m or mm",
        }),
    }
}

fn bad_rate(value: String) -> TrajectoryErrorKind {
    TrajectoryErrorKind::BadHeaderValue {
        key: "rate_hz",
        value,
        expected: "a finite positive number",
    }
}

fn parse_rate(value: &str) -> Result<f64, TrajectoryErrorKind> {
    match value.parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(r),
        _ => Err(bad_rate(value.to_owned())),
    }
}

fn parse_row(line: &str) -> Result<TrajectoryRow, TrajectoryErrorKind> {
    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
    if fields.len() < COLUMN_NAMES.len() {
        return Err(TrajectoryErrorKind::MissingColumn(fields.len()));
    }
    if fields.len() > COLUMN_NAMES.len() {
        return Err(TrajectoryErrorKind::ExtraColumn(fields.len()));
    }
    let mut v = [0.0; 8];
    for (i, slot) in v.iter_mut().enumerate() {
        *slot = fields[i]
            .parse::<f64>()
            .map_err(|_| TrajectoryErrorKind::BadNumber {
                column: COLUMN_NAMES[i],
                text: fields[i].to_owned(),
            })?;
    }
    let buttons = fields[8]
        .parse::<u32>()
        .map_err(|_| TrajectoryErrorKind::BadNumber {
            column: "buttons",
            text: fields[8].to_owned(),
        })?;
    Ok(TrajectoryRow {
        t_s: v[0],
        position: [v[1], v[2], v[3]],
        quaternion: [v[4], v[5], v[6], v[7]],
        buttons,
    })
}

fn check_row(row: &TrajectoryRow, previous_s: Option<f64>) -> Result<(), TrajectoryErrorKind> {
    let ([x, y, z], [qw, qx, qy, qz]) = (row.position, row.quaternion);
    let values = [row.t_s, x, y, z, qw, qx, qy, qz];
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        return Err(TrajectoryErrorKind::NonFinite {
            column: COLUMN_NAMES[i],
            value: values[i],
        });
    }
    let norm = row.quaternion.iter().map(|c| c * c).sum::<f64>().sqrt();
    if (norm - 1.0).abs() > QUATERNION_TOLERANCE {
        return Err(TrajectoryErrorKind::NonUnitQuaternion { norm });
    }
    match previous_s {
        Some(previous_s) if row.t_s <= previous_s => Err(TrajectoryErrorKind::TimeNotIncreasing {
            previous_s,
            t_s: row.t_s,
        }),
        _ => Ok(()),
    }
}
