//! 3D Systems Touch, Touch X and Phantom devices through the OpenHaptics
//! HD API (`libHD`), loaded at run time: nothing links against it, and a
//! machine without it builds and tests everything (the tests load
//! `openhaptics-sim` in its place).
//!
//! [`Library::load`] finds libHD ([`candidates`]) and resolves every
//! function the backend calls, naming the first one missing. An
//! [`OpenHapticsDevice`] is a [`haptic_devices::HapticDevice`] whose
//! samples and forces cross to the HD scheduler's servo thread through
//! lock-free buffers (see [`device`]); units and axes are converted in
//! [`frame`] only.

pub mod device;
pub mod frame;
mod hd;

pub use device::{DeviceInfo, OpenError, OpenHapticsDevice, Settings, DEFAULT_DEVICE, STALE_AFTER};
pub use hd::{candidates, Library, LoadError, LIBRARY_NAMES, SDK_ENVS};
