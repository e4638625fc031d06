//! Haptic and 6-DoF input devices behind one interface ([`HapticDevice`]).
//!
//! Each servo tick reads one consistent [`DeviceSample`] and writes one
//! [`Wrench`]. Every device describes itself with [`DeviceCapabilities`]
//! in SI units. The safety layer sits between rendering and every device.

mod device;
mod emulator;
pub mod hid;
pub mod library;
mod motion;
mod rate;
mod safety;
mod simulated;
mod trajectory;

pub use device::{
    DeviceCapabilities, DeviceError, DeviceSample, DriverMessage, HapticDevice, Wrench,
    DRIVER_MESSAGE_CAPACITY,
};
pub use emulator::{
    AtEnd, Clock, EmulatorConfig, EmulatorMode, HandParams, RotationParams, TrajectoryEmulator,
};
pub use hid::{list_connected, load_profiles, HidDevice, HidDeviceInfo, Profile, ProfileError};
pub use motion::{
    Motion, MotionConfig, MotionError, MotionFileError, MotionState, SegmentConfig,
    CLOSURE_TOLERANCE,
};
pub use rate::ServoRate;
pub use safety::{
    OnDisconnect, SafetyCounters, SafetyLayer, SafetyLimits, SafetyState, TripCause, TripEvent,
};
pub use simulated::{SimulatedClock, SimulatedDevice};
pub use trajectory::{
    LengthUnit, Trajectory, TrajectoryError, TrajectoryErrorKind, TrajectoryPoint, TrajectoryRow,
};

/// A one-line TOML error: line number, serde's message (naming the field)
/// and the offending line.
pub(crate) fn toml_message(text: &str, error: &toml::de::Error) -> String {
    let message = error.message().trim();
    match error.span() {
        Some(span) => {
            let start = span.start.min(text.len());
            let line = text[..start].matches('\n').count() + 1;
            let content = text.lines().nth(line - 1).unwrap_or("").trim();
            format!("line {line}: {message} (at `{content}`)")
        }
        None => message.to_owned(),
    }
}
