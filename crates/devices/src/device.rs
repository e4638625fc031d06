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
