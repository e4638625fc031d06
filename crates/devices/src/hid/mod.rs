//! HID devices described by TOML profiles (see `device-profiles/README.md`).
//!
//! [`profile`] loads and validates the layouts, [`decode`] turns report bytes
//! into axes and buttons (counting and dropping bad reports), [`pose`] turns
//! axes into a pose, and [`backend`] drives real devices through hidapi.

pub mod backend;
pub mod decode;
pub mod pose;
pub mod profile;

pub use backend::{list_connected, matching_profile, HidDevice, HidDeviceInfo};
pub use decode::{
    encode_wrench, encode_wrench_into, DecodeCounters, Dropped, ReportDecoder, SpaceMouseState,
};
pub use pose::{Pose, PoseTracker};
pub use profile::{
    load_profiles, Axis, AxisField, ButtonField, Component, ControlMode, Endian, Field,
    InputReport, Limits, OutputField, OutputReport, Profile, ProfileError, UsbIds, MAX_BUTTONS,
};
