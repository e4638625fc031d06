//! Device profiles: one TOML file per HID device (see `device-profiles/README.md`).

use crate::device::DeviceCapabilities;
use crate::toml_message;
use nalgebra::Vector3;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Largest number of buttons: one bit each in [`crate::DeviceSample::buttons`].
pub const MAX_BUTTONS: usize = 32;

/// A HID device's report layouts, axis mapping and limits.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Model name, shown by `hapticd devices`.
    pub name: String,
    pub usb: UsbIds,
    /// Whether the axes report a pose or a velocity.
    pub control: ControlMode,
    pub limits: Limits,
    /// Input reports, each with its own report id.
    #[serde(rename = "input")]
    pub inputs: Vec<InputReport>,
    /// The force/torque output report of a force-capable device.
    #[serde(default)]
    pub output: Option<OutputReport>,
}

/// USB vendor and product ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UsbIds {
    pub vendor_id: u16,
    pub product_id: u16,
}

/// What the decoded axes mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ControlMode {
    /// Axes are a pose: m, and rad as roll-pitch-yaw angles about x, y, z.
    Position,
    /// Axes are a twist: m/s and rad/s, integrated into a pose.
    Rate,
}

/// The device's limits, in SI units.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Half-extents of the workspace (m); rate-control poses are clamped to it.
    pub workspace_half_extents: [f64; 3],
    /// Largest continuous force (N).
    pub max_force: f64,
    /// Largest continuous torque (N·m).
    pub max_torque: f64,
    /// Largest stable rendering stiffness at 1 kHz (N/m).
    pub max_stiffness: f64,
    /// Rate of input reports (Hz).
    pub native_rate: f64,
}

/// One numbered input report.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputReport {
    /// Report id: the first byte of the report, 1 to 255.
    pub report_id: u8,
    #[serde(default)]
    pub axes: Vec<AxisField>,
    #[serde(default)]
    pub buttons: Vec<ButtonField>,
}

impl InputReport {
    /// Bytes a report needs, its id included, to hold every field.
    pub fn min_len(&self) -> usize {
        let axes = self.axes.iter().map(|a| a.field().end());
        let buttons = self.buttons.iter().map(|b| b.offset + 1);
        axes.chain(buttons).max().unwrap_or(1)
    }
}

/// The six device axes, in this order in decoded arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Axis {
    X,
    Y,
    Z,
    Rx,
    Ry,
    Rz,
}

impl Axis {
    pub const ALL: [Axis; 6] = [Axis::X, Axis::Y, Axis::Z, Axis::Rx, Axis::Ry, Axis::Rz];

    /// Index into a decoded `[f64; 6]`.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Byte order of a multi-byte field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Endian {
    Little,
    Big,
}

/// Where an integer lives in a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// Byte offset from the start of the report; byte 0 is the report id.
    pub offset: usize,
    /// Width in bytes: 1, 2 or 4.
    pub width: usize,
    pub endian: Endian,
    /// Two's complement or unsigned.
    pub signed: bool,
}

impl Field {
    /// One past the field's last byte.
    pub fn end(&self) -> usize {
        self.offset + self.width
    }

    /// The field's integer in `report`, or `None` when the report is too short.
    pub fn read(&self, report: &[u8]) -> Option<i64> {
        let bytes = report.get(self.offset..self.end())?;
        let mut unsigned: u64 = 0;
        for i in 0..self.width {
            let byte = match self.endian {
                Endian::Little => bytes[self.width - 1 - i],
                Endian::Big => bytes[i],
            };
            unsigned = (unsigned << 8) | u64::from(byte);
        }
        let bits = 8 * self.width as u32;
        Some(if self.signed && unsigned >> (bits - 1) == 1 {
            unsigned as i64 - (1i64 << bits)
        } else {
            unsigned as i64
        })
    }

    /// Smallest and largest integers the field holds.
    pub fn bounds(&self) -> (i64, i64) {
        let bits = 8 * self.width as u32;
        if self.signed {
            (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
        } else {
            (0, (1i64 << bits) - 1)
        }
    }

    /// Writes `value`, which must be within [`Field::bounds`], into `report`.
    pub fn write(&self, report: &mut [u8], value: i64) {
        let bytes = &mut report[self.offset..self.offset + self.width];
        for i in 0..self.width {
            let byte = (value >> (8 * i)) as u8;
            match self.endian {
                Endian::Little => bytes[i] = byte,
                Endian::Big => bytes[self.width - 1 - i] = byte,
            }
        }
    }
}

/// One axis of an input report: SI value = `sign * raw * scale`.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AxisField {
    /// Device axis the value drives.
    pub axis: Axis,
    /// Byte offset from the start of the report; byte 0 is the report id.
    pub offset: usize,
    /// Width in bytes: 1, 2 or 4.
    pub width: usize,
    pub endian: Endian,
    /// Two's complement or unsigned.
    pub signed: bool,
    /// +1 or -1.
    pub sign: i8,
    /// SI units per count: m or rad (position control), m/s or rad/s (rate).
    pub scale: f64,
    /// Plausible raw values `[min, max]`; a report with a value outside is
    /// garbled. Absent: every value the field holds.
    #[serde(default)]
    pub raw_range: Option<[i64; 2]>,
}

impl AxisField {
    /// Where the raw value lives.
    pub fn field(&self) -> Field {
        Field {
            offset: self.offset,
            width: self.width,
            endian: self.endian,
            signed: self.signed,
        }
    }

    /// The value in SI units of a raw count.
    pub fn to_si(self, raw: i64) -> f64 {
        f64::from(self.sign) * raw as f64 * self.scale
    }
}

/// One button: pressed when `report[offset] & mask != 0`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ButtonField {
    pub name: String,
    pub offset: usize,
    pub mask: u8,
}

/// The force/torque output report.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputReport {
    /// Report id: the first byte, 1 to 255.
    pub report_id: u8,
    /// Length in bytes, the id included; unused bytes are zero.
    pub length: usize,
    pub components: Vec<OutputField>,
}

/// One wrench component of the output report: raw = round(value / scale).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputField {
    pub component: Component,
    /// Byte offset from the start of the report; byte 0 is the report id.
    pub offset: usize,
    /// Width in bytes: 1, 2 or 4.
    pub width: usize,
    pub endian: Endian,
    /// Two's complement or unsigned.
    pub signed: bool,
    /// N or N·m per count.
    pub scale: f64,
}

/// A wrench component, in this order in `[f64; 6]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Component {
    Fx,
    Fy,
    Fz,
    Tx,
    Ty,
    Tz,
}

impl OutputField {
    /// Where the raw value lives.
    pub fn field(&self) -> Field {
        Field {
            offset: self.offset,
            width: self.width,
            endian: self.endian,
            signed: self.signed,
        }
    }
}

impl Component {
    /// Index into `[fx, fy, fz, tx, ty, tz]`.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// A profile that failed to load: the file and what is wrong, naming the field.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}: {message}", file.display())]
pub struct ProfileError {
    pub file: PathBuf,
    pub message: String,
}

impl Profile {
    /// Reads and validates one profile file.
    pub fn load(path: &Path) -> Result<Profile, ProfileError> {
        let text = std::fs::read_to_string(path).map_err(|e| ProfileError {
            file: path.to_owned(),
            message: e.to_string(),
        })?;
        Profile::parse(&text, path)
    }

    /// Parses and validates a profile; `file` names it in errors.
    pub fn parse(text: &str, file: &Path) -> Result<Profile, ProfileError> {
        let error = |message: String| ProfileError {
            file: file.to_owned(),
            message,
        };
        let profile: Profile = toml::from_str(text).map_err(|e| error(toml_message(text, &e)))?;
        profile.validate().map_err(error)?;
        Ok(profile)
    }

    /// Whether the profile drives a force output.
    pub fn force_capable(&self) -> bool {
        self.output.is_some()
    }

    /// The profile's capabilities in SI units.
    pub fn capabilities(&self) -> DeviceCapabilities {
        let mapped = |range: [Axis; 3]| {
            range
                .iter()
                .all(|axis| self.axis_fields().any(|a| a.axis == *axis))
        };
        let input_dof = if mapped([Axis::Rx, Axis::Ry, Axis::Rz]) {
            6
        } else {
            3
        };
        let output_dof = self.output.as_ref().map_or(0, |o| o.components.len() as u8);
        let l = &self.limits;
        DeviceCapabilities {
            name: self.name.clone(),
            input_dof,
            output_dof,
            workspace_half_extents: Vector3::from(l.workspace_half_extents),
            max_force: l.max_force,
            max_torque: l.max_torque,
            max_stiffness: l.max_stiffness,
            native_rate: l.native_rate,
        }
    }

    /// Every axis field of every input report.
    pub fn axis_fields(&self) -> impl Iterator<Item = &AxisField> {
        self.inputs.iter().flat_map(|r| r.axes.iter())
    }

    /// Every button, in bit order of [`crate::DeviceSample::buttons`].
    pub fn button_fields(&self) -> impl Iterator<Item = &ButtonField> {
        self.inputs.iter().flat_map(|r| r.buttons.iter())
    }

    fn validate(&self) -> Result<(), String> {
        if self.name.trim().is_empty() {
            return Err("`name`: must not be empty".into());
        }
        self.validate_limits()?;
        if self.inputs.is_empty() {
            return Err("`input`: at least one input report is needed".into());
        }
        let mut axes_seen = Vec::new();
        let mut buttons = 0;
        for (r, report) in self.inputs.iter().enumerate() {
            let at = format!("input[{r}]");
            check_report_id(report.report_id, &at)?;
            if self.inputs[..r]
                .iter()
                .any(|o| o.report_id == report.report_id)
            {
                return Err(format!(
                    "{at}.report_id: {} is used twice",
                    report.report_id
                ));
            }
            if report.axes.is_empty() && report.buttons.is_empty() {
                return Err(format!("{at}: has neither `axes` nor `buttons`"));
            }
            for (i, axis) in report.axes.iter().enumerate() {
                let at = format!("{at}.axes[{i}]");
                check_field(&axis.field(), &at)?;
                if axes_seen.contains(&axis.axis) {
                    return Err(format!("{at}.axis: {:?} is mapped twice", axis.axis));
                }
                axes_seen.push(axis.axis);
                if axis.sign != 1 && axis.sign != -1 {
                    return Err(format!("{at}.sign: must be 1 or -1, not {}", axis.sign));
                }
                check_scale(axis.scale, &format!("{at}.scale"))?;
                if let Some([min, max]) = axis.raw_range {
                    let (lo, hi) = axis.field().bounds();
                    if min > max || min < lo || max > hi {
                        return Err(format!(
                            "{at}.raw_range: [{min}, {max}] is not an ordered range within [{lo}, {hi}]"
                        ));
                    }
                }
            }
            for (i, button) in report.buttons.iter().enumerate() {
                let at = format!("{at}.buttons[{i}]");
                if button.offset == 0 {
                    return Err(format!("{at}.offset: byte 0 is the report id"));
                }
                if button.mask == 0 {
                    return Err(format!("{at}.mask: must not be 0"));
                }
                buttons += 1;
            }
        }
        if buttons > MAX_BUTTONS {
            return Err(format!(
                "`buttons`: {buttons} buttons, at most {MAX_BUTTONS}"
            ));
        }
        for needed in [Axis::X, Axis::Y, Axis::Z] {
            if !axes_seen.contains(&needed) {
                return Err(format!("`axes`: no input report maps axis {needed:?}"));
            }
        }
        let rotations = [Axis::Rx, Axis::Ry, Axis::Rz]
            .iter()
            .filter(|a| axes_seen.contains(a))
            .count();
        if rotations != 0 && rotations != 3 {
            return Err("`axes`: map all of rx, ry, rz or none".into());
        }
        if let Some(output) = &self.output {
            self.validate_output(output)?;
        }
        Ok(())
    }

    fn validate_limits(&self) -> Result<(), String> {
        let l = &self.limits;
        for (i, extent) in l.workspace_half_extents.iter().enumerate() {
            if !(extent.is_finite() && *extent > 0.0) {
                return Err(format!(
                    "limits.workspace_half_extents[{i}]: must be positive, not {extent}"
                ));
            }
        }
        for (name, value) in [
            ("max_force", l.max_force),
            ("max_torque", l.max_torque),
            ("max_stiffness", l.max_stiffness),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(format!("limits.{name}: must be non-negative, not {value}"));
            }
        }
        if !(l.native_rate.is_finite() && l.native_rate > 0.0) {
            return Err(format!(
                "limits.native_rate: must be positive, not {}",
                l.native_rate
            ));
        }
        let force_limits = l.max_force > 0.0 || l.max_torque > 0.0 || l.max_stiffness > 0.0;
        if force_limits && self.output.is_none() {
            return Err("limits: force limits without an `output` report".into());
        }
        Ok(())
    }

    fn validate_output(&self, output: &OutputReport) -> Result<(), String> {
        check_report_id(output.report_id, "output")?;
        let mut seen = [false; 6];
        for (i, c) in output.components.iter().enumerate() {
            let at = format!("output.components[{i}]");
            check_field(&c.field(), &at)?;
            if c.field().end() > output.length {
                return Err(format!(
                    "{at}.offset: bytes {}..{} exceed length {}",
                    c.offset,
                    c.field().end(),
                    output.length
                ));
            }
            check_scale(c.scale, &format!("{at}.scale"))?;
            if std::mem::replace(&mut seen[c.component.index()], true) {
                return Err(format!("{at}.component: {:?} appears twice", c.component));
            }
        }
        let forces = seen[..3].iter().all(|s| *s);
        let torques = seen[3..].iter().filter(|s| **s).count();
        if !forces || (torques != 0 && torques != 3) {
            return Err(
                "output.components: need fx, fy, fz, and either all of tx, ty, tz or none".into(),
            );
        }
        let l = &self.limits;
        if l.max_force <= 0.0 || l.max_stiffness <= 0.0 || (torques == 3) != (l.max_torque > 0.0) {
            return Err(
                "limits: a force output needs positive max_force and max_stiffness, and max_torque > 0 exactly when torques are output"
                    .into(),
            );
        }
        Ok(())
    }
}

fn check_report_id(id: u8, at: &str) -> Result<(), String> {
    if id == 0 {
        return Err(format!(
            "{at}.report_id: must be 1 to 255 (only numbered reports are supported)"
        ));
    }
    Ok(())
}

fn check_field(field: &Field, at: &str) -> Result<(), String> {
    if field.offset == 0 {
        return Err(format!("{at}.offset: byte 0 is the report id"));
    }
    if ![1, 2, 4].contains(&field.width) {
        return Err(format!(
            "{at}.width: must be 1, 2 or 4 bytes, not {}",
            field.width
        ));
    }
    Ok(())
}

fn check_scale(scale: f64, at: &str) -> Result<(), String> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(format!("{at}: must be positive, not {scale}"));
    }
    Ok(())
}

/// Loads every `*.toml` in `dir`, sorted by file name.
pub fn load_profiles(dir: &Path) -> Result<Vec<Profile>, ProfileError> {
    let io_error = |e: std::io::Error| ProfileError {
        file: dir.to_owned(),
        message: e.to_string(),
    };
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io_error)? {
        let path = entry.map_err(io_error)?.path();
        if path.extension().is_some_and(|e| e == "toml") {
            paths.push(path);
        }
    }
    paths.sort();
    paths.iter().map(|p| Profile::load(p)).collect()
}
