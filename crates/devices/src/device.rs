//! The device interface shared by real, simulated and emulated devices.

pub use haptic_core::Wrench;
use nalgebra::{Point3, UnitQuaternion, Vector3};
use std::time::Duration;

/// One consistent reading of a device, taken at one instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeviceSample {
    /// Time of the reading since the device was opened.
    pub timestamp: Duration,
    /// Handle position in the device frame (m).
    pub position: Point3<f64>,
    /// Handle orientation in the device frame.
    pub orientation: UnitQuaternion<f64>,
    /// Pressed buttons, bit `i` for button `i`.
    pub buttons: u32,
    /// Linear velocity (m/s), where the device measures it.
    pub linear_velocity: Option<Vector3<f64>>,
    /// Angular velocity (rad/s), where the device measures it.
    pub angular_velocity: Option<Vector3<f64>>,
}

/// What a device can do, in SI units.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceCapabilities {
    /// Human-readable model name.
    pub name: String,
    /// Degrees of freedom sensed (3 for position only, 6 with orientation).
    pub input_dof: u8,
    /// Degrees of freedom actuated (0 for an input-only device, 3 or 6).
    pub output_dof: u8,
    /// Half-extents of the reachable workspace around its centre (m).
    pub workspace_half_extents: Vector3<f64>,
    /// Largest continuous force (N); 0 without force output.
    pub max_force: f64,
    /// Largest continuous torque (N·m); 0 without torque output.
    pub max_torque: f64,
    /// Largest stable rendering stiffness at 1 kHz (N/m).
    pub max_stiffness: f64,
    /// Rate at which the device produces samples (Hz).
    pub native_rate: f64,
}

/// Why a device failed to open, read or write. The variants a tick can
/// meet carry no heap data, so a fault allocates nothing.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DeviceError {
    #[error("the device is disconnected")]
    Disconnected,
    #[error("no new sample since {age:?}")]
    Stale { age: Duration },
    /// A sample held a NaN or an infinity.
    #[error("the device sent a non-finite sample")]
    SampleNotFinite,
    /// A wrench with a NaN or an infinity was refused.
    #[error("non-finite wrench refused")]
    WrenchNotFinite,
    /// An output report does not fit the buffer meant for it.
    #[error("a {buffer}-byte buffer cannot hold a {report}-byte output report")]
    ReportTooLong { buffer: usize, report: usize },
    /// The device took fewer bytes than the report had.
    #[error("wrote {written} of {expected} bytes of an output report")]
    ShortWrite { written: usize, expected: usize },
    /// The operating system refused a transfer, with this errno.
    #[error("device I/O failed: {}", std::io::Error::from_raw_os_error(*.0))]
    Os(i32),
    /// No connected device has the profile's USB ids.
    #[error("no HID device {vendor_id:04x}:{product_id:04x} ({profile}) is connected")]
    NotConnected {
        vendor_id: u16,
        product_id: u16,
        profile: String,
    },
    /// hidapi failed without an errno; its message.
    #[error("hidapi: {0}")]
    Hid(String),
    #[error("the recording has ended")]
    EndOfRecording,
    /// The device was lost and is configured not to be waited for: like
    /// the end of a recording, it ends the run.
    #[error("the device was lost and the run stops")]
    Lost,
    /// A call into a vendor's driver library failed; the library's own
    /// error text, held inline so that a failing tick allocates nothing.
    #[error("{call} failed: {message}")]
    Driver {
        call: &'static str,
        message: DriverMessage,
    },
}

/// Bytes a [`DriverMessage`] holds; a longer text is cut at a character
/// boundary. The SDKs' texts are shorter, and an error that carries a
/// `DeviceError` stays under clippy's 128-byte `result_large_err` limit.
pub const DRIVER_MESSAGE_CAPACITY: usize = 70;

/// A driver library's error text, copied into a fixed buffer (no heap).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct DriverMessage {
    bytes: [u8; DRIVER_MESSAGE_CAPACITY],
    len: u8,
}

impl DriverMessage {
    /// `text`, cut to [`DRIVER_MESSAGE_CAPACITY`] bytes at a character
    /// boundary.
    pub fn new(text: &str) -> Self {
        let mut message = Self {
            bytes: [0; DRIVER_MESSAGE_CAPACITY],
            len: 0,
        };
        message.push(text);
        message
    }

    /// A C string's bytes (without its NUL), each invalid UTF-8 sequence
    /// replaced by `?`.
    pub fn from_c_bytes(bytes: &[u8]) -> Self {
        let mut message = Self::new("");
        for chunk in bytes.utf8_chunks() {
            message.push(chunk.valid());
            if !chunk.invalid().is_empty() {
                message.push("?");
            }
        }
        message
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        // Only whole characters of `str`s are ever copied in.
        std::str::from_utf8(&self.bytes[..self.len as usize]).unwrap_or("")
    }

    fn push(&mut self, text: &str) {
        let len = self.len as usize;
        let mut n = text.len().min(DRIVER_MESSAGE_CAPACITY - len);
        while !text.is_char_boundary(n) {
            n -= 1;
        }
        self.bytes[len..len + n].copy_from_slice(&text.as_bytes()[..n]);
        self.len = (len + n) as u8;
    }
}

/// Appends formatted text (`write!`), cut at the capacity as
/// [`DriverMessage::new`] cuts; allocates nothing.
impl std::fmt::Write for DriverMessage {
    fn write_str(&mut self, text: &str) -> std::fmt::Result {
        self.push(text);
        Ok(())
    }
}

impl std::fmt::Display for DriverMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Debug for DriverMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

/// A device the servo loop reads and commands once per tick.
pub trait HapticDevice: Send {
    /// What the device can do.
    fn capabilities(&self) -> &DeviceCapabilities;
    /// One consistent sample: position, orientation, buttons and velocities
    /// from the same instant.
    fn read(&mut self) -> Result<DeviceSample, DeviceError>;
    /// Commands a wrench; input-only devices accept and ignore it.
    fn write(&mut self, wrench: &Wrench) -> Result<(), DeviceError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_messages_take_formatted_text_up_to_their_capacity() {
        use std::fmt::Write as _;
        let mut message = DriverMessage::new("code ");
        write!(message, "0x{:04x}: ", 0x302).unwrap();
        message.write_str(&"é".repeat(40)).unwrap();
        assert!(message.as_str().starts_with("code 0x0302: éé"));
        assert_eq!(message.as_str().len(), DRIVER_MESSAGE_CAPACITY - 1);
    }

    #[test]
    fn driver_messages_keep_whole_characters_and_mark_bad_bytes() {
        assert_eq!(
            DriverMessage::new("no device found").as_str(),
            "no device found"
        );
        let long = "é".repeat(DRIVER_MESSAGE_CAPACITY);
        let cut = DriverMessage::new(&long);
        assert_eq!(cut.as_str().len(), DRIVER_MESSAGE_CAPACITY);
        assert!(cut.as_str().chars().all(|c| c == 'é'));
        let odd = DriverMessage::new(&format!("x{long}"));
        assert_eq!(odd.as_str().len(), DRIVER_MESSAGE_CAPACITY - 1);
        assert_eq!(
            DriverMessage::from_c_bytes(b"bad \xff byte").as_str(),
            "bad ? byte"
        );
        let error = DeviceError::Driver {
            call: "dhdGetPosition",
            message: DriverMessage::new("communication error"),
        };
        assert_eq!(
            error.to_string(),
            "dhdGetPosition failed: communication error"
        );
    }
}
