//! HID devices described by TOML profiles (see `device-profiles/README.md`).
//!
//! [`load_profiles`] loads and validates the layouts, a [`ReportDecoder`]
//! turns report bytes into axes and buttons (counting and dropping bad
//! reports), a [`PoseTracker`] turns axes into a pose, and a [`HidDevice`]
//! drives a real device through hidapi.

mod backend;
mod decode;
mod pose;
mod profile;

pub use backend::{list_connected, HidDevice, HidDeviceInfo};
pub use decode::{
    encode_wrench, encode_wrench_into, DecodeCounters, Dropped, ReportDecoder, SpaceMouseState,
};
pub use pose::PoseTracker;
pub use profile::{load_profiles, Axis, ControlMode, Profile, ProfileError};
