//! Haply's Inverse3 (and the VerseGrip on it) through the Haply Inverse
//! Service's WebSocket protocol (simulation channel, 3.x JSON format;
//! docs/devices.md, "Haply Inverse3").
//!
//! - [`protocol`]: the service's messages read into [`Inventory`] and
//!   [`Reading`]s, and `set_cursor_force` commands written;
//! - [`frame`]: the service's frame to the device frame, in one place;
//! - [`client`]: one synchronous WebSocket session with the service
//!   (tungstenite over a blocking `TcpStream` with timeouts), and the
//!   inventory listing of `hapticd devices`;
//! - [`HaplyDevice`]: the [`haptic_devices::HapticDevice`], fed by an I/O
//!   thread through `haptic-handoff`'s wait-free buffers.

pub mod client;
mod device;
mod error;
pub mod frame;
pub mod protocol;

pub use client::{list_devices, Session};
pub use device::{capabilities, HaplyDevice, HaplySettings, IoCounters, DEFAULT_URL};
pub use error::{HaplyError, ProtocolError};
pub use haptic_devices::OnDisconnect;
pub use protocol::{GripInfo, Inventory, Inverse3Info, Reading};
