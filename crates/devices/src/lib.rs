//! Haptic and 6-DoF input devices behind one interface ([`HapticDevice`]).
//!
//! Each servo tick reads one consistent [`DeviceSample`] and writes one
//! [`Wrench`]. Every device describes itself with [`DeviceCapabilities`]
//! in SI units. The safety layer sits between rendering and every device.

mod device;

pub use device::{DeviceCapabilities, DeviceError, DeviceSample, HapticDevice, Wrench};
