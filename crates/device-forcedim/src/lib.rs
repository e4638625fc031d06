//! Force Dimension haptic devices — omega, sigma, delta, lambda and the
//! Novint Falcon — through the vendor's SDK (`libdrd`/`libdhd`), loaded at
//! run time: nothing links against it, and a machine without it builds and
//! tests everything (the tests load `forcedim-sim` in its place).
//!
//! [`Sdk::load`] finds the library ([`candidates`]: a configured path,
//! `$FORCEDIM_SDK`, the system's directories) and resolves every function
//! the backend calls, naming the first one missing. A
//! [`ForceDimensionDevice`] is a [`haptic_devices::HapticDevice`]: per tick
//! one read (position and orientation frame in one call, velocities,
//! buttons, gripper) and one write (force, torque and gripper force in one
//! call), allocating nothing; a lost device reads as
//! [`haptic_devices::DeviceError::Disconnected`] and a failed call carries
//! the SDK's own error text.

mod device;
mod models;
mod sdk;

pub use device::{
    list_devices, DeviceInfo, ForceDimensionDevice, ListedDevice, OpenError, Settings,
    WATCHDOG_UNIT,
};
pub use models::{nominal, Nominal};
pub use sdk::{candidates, LoadError, Sdk, LIBRARY_NAMES, SDK_ENV};
