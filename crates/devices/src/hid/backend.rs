//! HID devices over hidapi's Linux hidraw backend.

use super::decode::{encode_wrench_into, DecodeCounters, ReportDecoder};
use super::pose::PoseTracker;
use super::profile::{ControlMode, Profile};
use crate::device::{DeviceCapabilities, DeviceError, DeviceSample, HapticDevice, Wrench};
use hidapi::{HidApi, HidError};
use std::time::{Duration, Instant};

/// Largest report read; longer ones are truncated by the kernel.
const REPORT_BUFFER: usize = 256;
/// Most reports drained by one `read`, bounding its time.
const MAX_DRAIN: usize = 1024;
/// Position-control samples older than this many report periods are stale.
const STALE_PERIODS: f64 = 20.0;
/// HID usage page and usage of a multi-axis controller.
const MULTI_AXIS_USAGE: (u16, u16) = (0x01, 0x08);

/// One HID interface seen by the system.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HidDeviceInfo {
    pub vendor_id: u16,
    pub product_id: u16,
    /// hidraw path, e.g. `/dev/hidraw3`.
    pub path: String,
    pub manufacturer: Option<String>,
    pub product: Option<String>,
    pub serial_number: Option<String>,
    pub interface_number: i32,
    pub usage_page: u16,
    pub usage: u16,
}

impl HidDeviceInfo {
    fn from_hidapi(info: &hidapi::DeviceInfo) -> HidDeviceInfo {
        HidDeviceInfo {
            vendor_id: info.vendor_id(),
            product_id: info.product_id(),
            path: info.path().to_string_lossy().into_owned(),
            manufacturer: info.manufacturer_string().map(str::to_owned),
            product: info.product_string().map(str::to_owned),
            serial_number: info.serial_number().map(str::to_owned),
            interface_number: info.interface_number(),
            usage_page: info.usage_page(),
            usage: info.usage(),
        }
    }
}

/// The name of the first profile matching `info`'s vendor and product ids.
pub fn matching_profile<'a>(info: &HidDeviceInfo, profiles: &'a [Profile]) -> Option<&'a Profile> {
    profiles
        .iter()
        .find(|p| p.usb.vendor_id == info.vendor_id && p.usb.product_id == info.product_id)
}

/// Every connected HID interface with the name of the profile it matches.
pub fn list_connected(
    profiles: &[Profile],
) -> Result<Vec<(HidDeviceInfo, Option<String>)>, DeviceError> {
    let api = HidApi::new().map_err(io)?;
    Ok(api
        .device_list()
        .map(|d| {
            let info = HidDeviceInfo::from_hidapi(d);
            let name = matching_profile(&info, profiles).map(|p| p.name.clone());
            (info, name)
        })
        .collect())
}

/// A HID device driven through its profile.
pub struct HidDevice {
    device: hidapi::HidDevice,
    profile: Profile,
    capabilities: DeviceCapabilities,
    decoder: ReportDecoder,
    pose: PoseTracker,
    opened: Instant,
    last_read: Instant,
    last_report: Option<Instant>,
    buffer: [u8; REPORT_BUFFER],
    /// The output report, sized from the profile when opened (empty for
    /// input-only devices) and encoded in place on every write.
    output_report: Vec<u8>,
}

impl HidDevice {
    /// Opens the device with the profile's vendor and product ids, preferring
    /// its multi-axis controller interface, in non-blocking mode.
    pub fn open(profile: &Profile) -> Result<HidDevice, DeviceError> {
        let api = HidApi::new().map_err(io)?;
        let ids = (profile.usb.vendor_id, profile.usb.product_id);
        let candidates: Vec<_> = api
            .device_list()
            .filter(|d| (d.vendor_id(), d.product_id()) == ids)
            .collect();
        let chosen = candidates
            .iter()
            .find(|d| (d.usage_page(), d.usage()) == MULTI_AXIS_USAGE)
            .or(candidates.first())
            .ok_or_else(|| DeviceError::NotConnected {
                vendor_id: ids.0,
                product_id: ids.1,
                profile: profile.name.clone(),
            })?;
        let device = chosen.open_device(&api).map_err(io)?;
        device.set_blocking_mode(false).map_err(io)?;
        let capabilities = profile.capabilities();
        let now = Instant::now();
        Ok(HidDevice {
            device,
            profile: profile.clone(),
            pose: PoseTracker::new(profile.control, capabilities.workspace_half_extents),
            capabilities,
            decoder: ReportDecoder::new(profile),
            opened: now,
            last_read: now,
            last_report: None,
            buffer: [0; REPORT_BUFFER],
            output_report: vec![0; profile.output.as_ref().map_or(0, |o| o.length)],
        })
    }

    /// Reports read so far, by outcome.
    pub fn counters(&self) -> &DecodeCounters {
        self.decoder.counters()
    }

    /// Decodes every pending report; returns how many were accepted.
    fn drain(&mut self) -> Result<usize, DeviceError> {
        let mut accepted = 0;
        for _ in 0..MAX_DRAIN {
            let len = self.device.read(&mut self.buffer).map_err(transfer_error)?;
            if len == 0 {
                break;
            }
            if self.decoder.decode(&self.buffer[..len]).is_ok() {
                accepted += 1;
            }
        }
        Ok(accepted)
    }
}

impl HapticDevice for HidDevice {
    fn capabilities(&self) -> &DeviceCapabilities {
        &self.capabilities
    }

    /// Drains every pending report, then assembles the sample from the
    /// latest value of each axis and button.
    fn read(&mut self) -> Result<DeviceSample, DeviceError> {
        let accepted = self.drain()?;
        let now = Instant::now();
        if accepted > 0 {
            self.last_report = Some(now);
        }
        let state = *self.decoder.state();
        if self.profile.control == ControlMode::Position {
            let stale_after =
                Duration::from_secs_f64(STALE_PERIODS / self.capabilities.native_rate);
            let since = self
                .last_report
                .filter(|_| state.has_axes)
                .unwrap_or(self.opened);
            let age = now - since;
            if !state.has_axes || age > stale_after {
                return Err(DeviceError::Stale { age });
            }
        }
        let dt = (now - self.last_read).as_secs_f64();
        self.last_read = now;
        let pose = self.pose.update(&state, dt);
        Ok(DeviceSample {
            timestamp: now - self.opened,
            position: pose.position,
            orientation: pose.orientation,
            buttons: state.buttons,
            linear_velocity: pose.linear_velocity,
            angular_velocity: pose.angular_velocity,
        })
    }

    /// Writes the output report of a force-capable profile; input-only
    /// devices accept and ignore the wrench. The report is encoded into a
    /// buffer allocated when the device was opened, so a write allocates
    /// nothing, its errors included, except a hidapi failure without an
    /// errno, which carries hidapi's message.
    fn write(&mut self, wrench: &Wrench) -> Result<(), DeviceError> {
        let Some(output) = &self.profile.output else {
            return Ok(());
        };
        let len = encode_wrench_into(output, wrench, &mut self.output_report)?;
        let report = &self.output_report[..len];
        let written = self.device.write(report).map_err(transfer_error)?;
        if written != len {
            return Err(DeviceError::ShortWrite {
                written,
                expected: len,
            });
        }
        Ok(())
    }
}

/// A hidapi failure: its errno when it has one, else its message.
fn io(error: HidError) -> DeviceError {
    match &error {
        HidError::IoError { error } if error.raw_os_error().is_some() => {
            DeviceError::Os(error.raw_os_error().unwrap_or_default())
        }
        _ => DeviceError::Hid(error.to_string()),
    }
}

/// The message hidapi 2.6's linux-native backend gives when `poll(2)`
/// reports a hangup on the hidraw file, which is how a read first sees an
/// unplugged device: this one case carries no errno, only this text.
const POLL_HANGUP: &str = "unexpected poll error (device disconnected)";

/// Maps a failed hidraw read or write to [`DeviceError::Disconnected`]
/// when the device is gone: a hangup seen by `poll(2)`, or the errno the
/// kernel's hidraw driver returns once its device is removed (`EIO` from
/// `read(2)`, `ENODEV` from `write(2)`; `ENXIO` as for any removed device).
fn transfer_error(error: HidError) -> DeviceError {
    let gone = match &error {
        HidError::IoError { error } => matches!(
            error.raw_os_error(),
            Some(libc::EIO | libc::ENODEV | libc::ENXIO)
        ),
        HidError::HidApiError { message } => message == POLL_HANGUP,
        _ => false,
    };
    if gone {
        DeviceError::Disconnected
    } else {
        io(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(errno: i32) -> HidError {
        std::io::Error::from_raw_os_error(errno).into()
    }

    #[test]
    fn an_unplugged_device_is_disconnected() {
        let hangup = HidError::HidApiError {
            message: POLL_HANGUP.into(),
        };
        for error in [hangup, os(libc::EIO), os(libc::ENODEV), os(libc::ENXIO)] {
            assert_eq!(transfer_error(error), DeviceError::Disconnected);
        }
    }

    #[test]
    fn other_failures_are_io_errors() {
        let other = HidError::HidApiError {
            message: "invalid timeout value -2".into(),
        };
        for error in [other, os(libc::EPERM), HidError::InvalidZeroSizeData] {
            assert!(matches!(
                transfer_error(error),
                DeviceError::Os(_) | DeviceError::Hid(_)
            ));
        }
    }
}
