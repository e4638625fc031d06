//! The Novint Falcon without its vendor's SDK, through the open protocol
//! libnifalcon documents.
//!
//! - [`ftdi`]: the FT232's control requests, the [`FtdiTransport`] over
//!   its bulk endpoints, the firmware loader's handshake and upload;
//! - [`packet`]: the firmware's nibble-encoded 16-byte packets;
//! - [`kinematics`]: the delta-robot model, encoder ticks to position and
//!   force to motor efforts;
//! - [`frame`]: the Falcon frame to the device frame, in one place;
//! - [`link`]: one exchange with a running Falcon, and its bring-up;
//! - [`FalconDevice`]: the [`haptic_devices::HapticDevice`], fed by an I/O
//!   thread through wait-free buffers;
//! - [`usb`]: nusb enumeration and transport;
//! - [`scripted`]: a scripted Falcon behind the same transport trait, for
//!   tests and benchmarks without hardware.

mod device;
mod error;
pub mod frame;
pub mod ftdi;
pub mod kinematics;
pub mod link;
pub mod packet;
pub mod scripted;
pub mod usb;

pub use device::{
    capabilities, FalconDevice, FalconSettings, Opener, RECONNECT_INTERVAL, STALE_AFTER,
};
pub use error::{FalconError, TransportError};
pub use ftdi::{Firmware, FtdiTransport};
pub use usb::{list_falcons, FalconInfo, NusbTransport};
