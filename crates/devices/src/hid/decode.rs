//! Input reports → accumulated axes and buttons; wrenches → output reports.
//!
//! A device may split its axes over several report ids (3Dconnexion devices
//! send translation in report 1 and rotation in report 2): the state keeps
//! the latest value of each axis and button, so a sample is assembled from
//! the latest report of each id. Short, unknown and garbled reports are
//! counted and dropped without touching the state.

use super::profile::{InputReport, OutputReport, Profile};
use crate::device::{DeviceError, Wrench};

/// The accumulated input of a profiled HID device.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SpaceMouseState {
    /// Latest value of x, y, z, rx, ry, rz in SI units (see [`Axis`](super::Axis)).
    pub axes: [f64; 6],
    /// Pressed buttons, bit `i` for the profile's button `i`.
    pub buttons: u32,
    /// Whether any report carrying axes has been accepted.
    pub has_axes: bool,
}

/// Reports seen by a decoder, by outcome; they add up to every report fed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DecodeCounters {
    /// Decoded into the state.
    pub accepted: u64,
    /// Shorter than the fields of their report id need (empty ones included).
    pub short: u64,
    /// With a report id the profile does not declare.
    pub unknown_id: u64,
    /// With an axis value outside its `raw_range`.
    pub garbled: u64,
}

impl DecodeCounters {
    /// Every report fed to the decoder.
    pub fn total(&self) -> u64 {
        self.accepted + self.short + self.unknown_id + self.garbled
    }

    /// Reports dropped, for any cause.
    pub fn dropped(&self) -> u64 {
        self.short + self.unknown_id + self.garbled
    }
}

/// Why a report was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dropped {
    /// `len` bytes where report `report_id` needs `needed` (`report_id` is 0 for an empty report).
    Short {
        report_id: u8,
        len: usize,
        needed: usize,
    },
    /// A report id the profile does not declare.
    UnknownId(u8),
    /// Axis `axis_index` of the report read `raw`, outside its `raw_range`.
    Garbled {
        report_id: u8,
        axis_index: usize,
        raw: i64,
    },
}

/// Decodes one device's input reports into a [`SpaceMouseState`].
#[derive(Clone, Debug)]
pub struct ReportDecoder {
    reports: Vec<InputReport>,
    /// First button bit of each report in `reports`.
    first_button: Vec<u32>,
    state: SpaceMouseState,
    counters: DecodeCounters,
}

impl ReportDecoder {
    /// A decoder for a validated profile's input reports.
    pub fn new(profile: &Profile) -> ReportDecoder {
        let mut first_button = Vec::with_capacity(profile.inputs.len());
        let mut next = 0u32;
        for report in &profile.inputs {
            first_button.push(next);
            next += report.buttons.len() as u32;
        }
        ReportDecoder {
            reports: profile.inputs.clone(),
            first_button,
            state: SpaceMouseState::default(),
            counters: DecodeCounters::default(),
        }
    }

    /// The state after every accepted report.
    pub fn state(&self) -> &SpaceMouseState {
        &self.state
    }

    /// Reports fed so far, by outcome.
    pub fn counters(&self) -> &DecodeCounters {
        &self.counters
    }

    /// Decodes one report (its id first, as hidapi returns it) into the
    /// state, or counts and drops it. Returns the accepted report's id.
    pub fn decode(&mut self, report: &[u8]) -> Result<u8, Dropped> {
        let result = self.try_decode(report);
        let counter = match result {
            Ok(_) => &mut self.counters.accepted,
            Err(Dropped::Short { .. }) => &mut self.counters.short,
            Err(Dropped::UnknownId(_)) => &mut self.counters.unknown_id,
            Err(Dropped::Garbled { .. }) => &mut self.counters.garbled,
        };
        *counter += 1;
        result
    }

    fn try_decode(&mut self, report: &[u8]) -> Result<u8, Dropped> {
        let Some(&id) = report.first() else {
            return Err(Dropped::Short {
                report_id: 0,
                len: 0,
                needed: 1,
            });
        };
        let index = self
            .reports
            .iter()
            .position(|r| r.report_id == id)
            .ok_or(Dropped::UnknownId(id))?;
        let layout = &self.reports[index];
        let needed = layout.min_len();
        if report.len() < needed {
            return Err(Dropped::Short {
                report_id: id,
                len: report.len(),
                needed,
            });
        }
        let mut axes = self.state.axes;
        for axis in &layout.axes {
            let raw = axis
                .field()
                .read(report)
                .expect("report length checked against min_len");
            if let Some([min, max]) = axis.raw_range {
                if raw < min || raw > max {
                    return Err(Dropped::Garbled {
                        report_id: id,
                        axis_index: axis.axis.index(),
                        raw,
                    });
                }
            }
            axes[axis.axis.index()] = axis.to_si(raw);
        }
        let mut buttons = self.state.buttons;
        for (i, button) in layout.buttons.iter().enumerate() {
            let bit = 1u32 << (self.first_button[index] + i as u32);
            if report[button.offset] & button.mask != 0 {
                buttons |= bit;
            } else {
                buttons &= !bit;
            }
        }
        self.state.axes = axes;
        self.state.buttons = buttons;
        self.state.has_axes |= !layout.axes.is_empty();
        Ok(id)
    }
}

/// The output report commanding `wrench`: each component rounded to counts
/// and saturated to its field. Torques are ignored by force-only layouts.
/// Allocates the report; the servo's path uses [`encode_wrench_into`].
pub fn encode_wrench(output: &OutputReport, wrench: &Wrench) -> Result<Vec<u8>, DeviceError> {
    let mut report = vec![0u8; output.length];
    encode_wrench_into(output, wrench, &mut report)?;
    Ok(report)
}

/// Encodes the output report commanding `wrench` into the first
/// `output.length` bytes of `report` (see [`encode_wrench`]) and returns
/// that length; bytes past it are left as they are.
///
/// Allocates nothing, its errors included.
pub fn encode_wrench_into(
    output: &OutputReport,
    wrench: &Wrench,
    report: &mut [u8],
) -> Result<usize, DeviceError> {
    if !wrench.is_finite() {
        return Err(DeviceError::WrenchNotFinite);
    }
    let Some(report) = report.get_mut(..output.length) else {
        return Err(DeviceError::ReportTooLong {
            buffer: report.len(),
            report: output.length,
        });
    };
    let values = [
        wrench.force.x,
        wrench.force.y,
        wrench.force.z,
        wrench.torque.x,
        wrench.torque.y,
        wrench.torque.z,
    ];
    report.fill(0);
    report[0] = output.report_id;
    for c in &output.components {
        let field = c.field();
        let (lo, hi) = field.bounds();
        let counts = (values[c.component.index()] / c.scale).round();
        field.write(report, counts.clamp(lo as f64, hi as f64) as i64);
    }
    Ok(output.length)
}
