//! The Force Dimension SDK, found and loaded at run time.
//!
//! `libdrd` (the robotic SDK) carries the whole `dhd` API besides its own
//! `drd` functions, so it is preferred: one library, one copy of the SDK's
//! state, and `drdAutoInit` at hand. `libdhd` alone works for devices that
//! need no initialisation (`auto_init = false`).
//!
//! Every function pointer is copied out of the library when it loads, so a
//! call costs what a call into a linked library costs.

use haptic_devices::library::{open_first, search_paths, tried_list};
use std::ffi::{c_char, c_int, c_uint, OsString};
use std::path::{Path, PathBuf};

/// The library names tried, the robotic SDK first.
pub const LIBRARY_NAMES: [&str; 4] = ["libdrd.so", "libdrd.so.3", "libdhd.so", "libdhd.so.3"];

/// The environment variable naming the SDK's directory.
pub const SDK_ENV: &str = "FORCEDIM_SDK";

/// Why the SDK could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("the Force Dimension SDK library was not found; tried:{}", tried_list(.tried))]
    NotFound { tried: Vec<(String, String)> },
    #[error("{}: not the Force Dimension SDK, or too old a version: it has no `{symbol}`", .library.display())]
    MissingSymbol {
        library: PathBuf,
        symbol: &'static str,
    },
}

/// Where the SDK is looked for, in order: `configured` (a library file, or
/// a directory holding one), then `$FORCEDIM_SDK` (`sdk`) and its `lib`,
/// `lib/release/lin-<arch>-gcc` and `lib/release` directories, then the
/// dynamic linker's own search (`LD_LIBRARY_PATH`, `ld.so.cache`, `/lib`,
/// `/usr/lib`) and `/usr/local/lib`. Bare names are for the dynamic linker.
pub fn candidates(configured: Option<&Path>, sdk: Option<OsString>) -> Vec<PathBuf> {
    let sdk_dirs = match sdk.filter(|s| !s.is_empty()) {
        Some(sdk) => {
            let root = PathBuf::from(sdk);
            let arch = format!("lin-{}-gcc", std::env::consts::ARCH);
            vec![
                root.clone(),
                root.join("lib"),
                root.join("lib/release").join(&arch),
                root.join("lib/release"),
            ]
        }
        None => Vec::new(),
    };
    search_paths(
        &LIBRARY_NAMES,
        configured,
        &sdk_dirs,
        &[Path::new("/usr/local/lib")],
    )
}

type Id = c_char;

/// The `dhd` functions the backend calls, with the SDK's C signatures
/// (`dhdc.h`; `char ID` last, as the SDK has it).
#[derive(Clone, Copy)]
pub(crate) struct Dhd {
    pub get_device_count: unsafe extern "C" fn() -> c_int,
    pub open_id: unsafe extern "C" fn(Id) -> c_int,
    pub close: unsafe extern "C" fn(Id) -> c_int,
    pub get_system_type: unsafe extern "C" fn(Id) -> c_int,
    pub get_system_name: unsafe extern "C" fn(Id) -> *const c_char,
    pub get_sdk_version: unsafe extern "C" fn(*mut c_int, *mut c_int, *mut c_int, *mut c_int),
    pub has_wrist: unsafe extern "C" fn(Id) -> bool,
    pub has_active_wrist: unsafe extern "C" fn(Id) -> bool,
    pub has_gripper: unsafe extern "C" fn(Id) -> bool,
    pub is_left_handed: unsafe extern "C" fn(Id) -> bool,
    pub get_max_force: unsafe extern "C" fn(Id) -> f64,
    pub get_max_torque: unsafe extern "C" fn(Id) -> f64,
    pub enable_force: unsafe extern "C" fn(u8, Id) -> c_int,
    pub set_gravity_compensation: unsafe extern "C" fn(c_int, Id) -> c_int,
    pub set_brakes: unsafe extern "C" fn(c_int, Id) -> c_int,
    pub enable_expert_mode: unsafe extern "C" fn() -> c_int,
    pub disable_expert_mode: unsafe extern "C" fn() -> c_int,
    pub set_watchdog: unsafe extern "C" fn(u8, Id) -> c_int,
    pub set_velocity_threshold: unsafe extern "C" fn(c_uint, Id) -> c_int,
    pub get_velocity_threshold: unsafe extern "C" fn(*mut c_uint, Id) -> c_int,
    pub get_position_and_orientation_frame:
        unsafe extern "C" fn(*mut f64, *mut f64, *mut f64, *mut [[f64; 3]; 3], Id) -> c_int,
    pub get_linear_velocity: unsafe extern "C" fn(*mut f64, *mut f64, *mut f64, Id) -> c_int,
    pub get_angular_velocity_rad: unsafe extern "C" fn(*mut f64, *mut f64, *mut f64, Id) -> c_int,
    pub get_button_mask: unsafe extern "C" fn(Id) -> c_uint,
    pub get_gripper_angle_rad: unsafe extern "C" fn(*mut f64, Id) -> c_int,
    #[allow(clippy::type_complexity)]
    pub set_force_and_torque_and_gripper_force:
        unsafe extern "C" fn(f64, f64, f64, f64, f64, f64, f64, Id) -> c_int,
    pub error_get_last: unsafe extern "C" fn() -> c_int,
    pub error_get_last_str: unsafe extern "C" fn() -> *const c_char,
}

/// The robotic SDK's initialisation functions (`drdc.h`), in `libdrd` only.
#[derive(Clone, Copy)]
pub(crate) struct Drd {
    pub open_id: unsafe extern "C" fn(Id) -> c_int,
    pub close: unsafe extern "C" fn(Id) -> c_int,
    pub is_supported: unsafe extern "C" fn(Id) -> bool,
    pub is_initialized: unsafe extern "C" fn(Id) -> bool,
    pub auto_init: unsafe extern "C" fn(Id) -> c_int,
    pub stop: unsafe extern "C" fn(bool, Id) -> c_int,
}

/// A loaded SDK library.
pub struct Sdk {
    path: PathBuf,
    pub(crate) dhd: Dhd,
    pub(crate) drd: Option<Drd>,
    /// Declared last: the function pointers above point into it, and it is
    /// unloaded only when the `Sdk` goes.
    _library: libloading::Library,
}

/// Looks `name` up in `library` as a value of the type the caller expects.
///
/// # Safety
/// `T` must be the symbol's true type.
unsafe fn symbol<T: Copy>(
    library: &libloading::Library,
    path: &Path,
    name: &'static str,
) -> Result<T, LoadError> {
    // SAFETY: the caller's.
    unsafe { haptic_devices::library::symbol(library, name) }.ok_or_else(|| {
        LoadError::MissingSymbol {
            library: path.to_owned(),
            symbol: name,
        }
    })
}

impl Sdk {
    /// Loads the first library of [`candidates`] (`configured`, then
    /// `$FORCEDIM_SDK`, then the system's) that the dynamic linker opens.
    pub fn load(configured: Option<&Path>) -> Result<Sdk, LoadError> {
        let paths = candidates(configured, std::env::var_os(SDK_ENV));
        // SAFETY: loading runs the library's initialisers; the SDK's are
        // those of any C++ library.
        match unsafe { open_first(paths) } {
            Ok((library, path)) => Sdk::from_library(library, path),
            Err(tried) => Err(LoadError::NotFound { tried }),
        }
    }

    /// Every `dhd` function the backend calls, and the `drd` ones if the
    /// library has `drdAutoInit`.
    fn from_library(library: libloading::Library, path: PathBuf) -> Result<Sdk, LoadError> {
        let l = &library;
        let p = path.as_path();
        // SAFETY: each type below is the function's C signature in the
        // SDK's headers, `char` as `c_char` and C++ `bool` as `bool`.
        let dhd = unsafe {
            Dhd {
                get_device_count: symbol(l, p, "dhdGetDeviceCount")?,
                open_id: symbol(l, p, "dhdOpenID")?,
                close: symbol(l, p, "dhdClose")?,
                get_system_type: symbol(l, p, "dhdGetSystemType")?,
                get_system_name: symbol(l, p, "dhdGetSystemName")?,
                get_sdk_version: symbol(l, p, "dhdGetSDKVersion")?,
                has_wrist: symbol(l, p, "dhdHasWrist")?,
                has_active_wrist: symbol(l, p, "dhdHasActiveWrist")?,
                has_gripper: symbol(l, p, "dhdHasGripper")?,
                is_left_handed: symbol(l, p, "dhdIsLeftHanded")?,
                get_max_force: symbol(l, p, "dhdGetMaxForce")?,
                get_max_torque: symbol(l, p, "dhdGetMaxTorque")?,
                enable_force: symbol(l, p, "dhdEnableForce")?,
                set_gravity_compensation: symbol(l, p, "dhdSetGravityCompensation")?,
                set_brakes: symbol(l, p, "dhdSetBrakes")?,
                enable_expert_mode: symbol(l, p, "dhdEnableExpertMode")?,
                disable_expert_mode: symbol(l, p, "dhdDisableExpertMode")?,
                set_watchdog: symbol(l, p, "dhdSetWatchdog")?,
                set_velocity_threshold: symbol(l, p, "dhdSetVelocityThreshold")?,
                get_velocity_threshold: symbol(l, p, "dhdGetVelocityThreshold")?,
                get_position_and_orientation_frame: symbol(
                    l,
                    p,
                    "dhdGetPositionAndOrientationFrame",
                )?,
                get_linear_velocity: symbol(l, p, "dhdGetLinearVelocity")?,
                get_angular_velocity_rad: symbol(l, p, "dhdGetAngularVelocityRad")?,
                get_button_mask: symbol(l, p, "dhdGetButtonMask")?,
                get_gripper_angle_rad: symbol(l, p, "dhdGetGripperAngleRad")?,
                set_force_and_torque_and_gripper_force: symbol(
                    l,
                    p,
                    "dhdSetForceAndTorqueAndGripperForce",
                )?,
                error_get_last: symbol(l, p, "dhdErrorGetLast")?,
                error_get_last_str: symbol(l, p, "dhdErrorGetLastStr")?,
            }
        };
        // SAFETY: as above, for `drdc.h`.
        let drd = match unsafe { symbol::<unsafe extern "C" fn(Id) -> c_int>(l, p, "drdAutoInit") }
        {
            Err(_) => None,
            Ok(auto_init) => Some(unsafe {
                Drd {
                    open_id: symbol(l, p, "drdOpenID")?,
                    close: symbol(l, p, "drdClose")?,
                    is_supported: symbol(l, p, "drdIsSupported")?,
                    is_initialized: symbol(l, p, "drdIsInitialized")?,
                    auto_init,
                    stop: symbol(l, p, "drdStop")?,
                }
            }),
        };
        Ok(Sdk {
            path,
            dhd,
            drd,
            _library: library,
        })
    }

    /// The library's path (or the bare name the dynamic linker found).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the library is the robotic SDK (has `drdAutoInit`).
    pub fn has_robotic_sdk(&self) -> bool {
        self.drd.is_some()
    }

    /// The SDK's version: major, minor, release, revision.
    pub fn version(&self) -> [i32; 4] {
        let mut v = [0; 4];
        let [a, b, c, d] = &mut v;
        // SAFETY: four valid out-pointers.
        unsafe { (self.dhd.get_sdk_version)(a, b, c, d) };
        v
    }

    /// Connected devices, as `dhdGetDeviceCount` counts them (those other
    /// programs hold included).
    pub fn device_count(&self) -> Result<usize, String> {
        // SAFETY: no arguments.
        let n = unsafe { (self.dhd.get_device_count)() };
        usize::try_from(n).map_err(|_| self.last_error_text())
    }

    /// `dhdErrorGetLastStr`, copied.
    pub(crate) fn last_error_text(&self) -> String {
        self.last_error_message().as_str().to_owned()
    }

    /// `dhdErrorGetLastStr` into a fixed buffer, allocating nothing.
    pub(crate) fn last_error_message(&self) -> haptic_devices::DriverMessage {
        // SAFETY: the SDK returns a NUL-terminated static string or null.
        let text = unsafe { (self.dhd.error_get_last_str)() };
        if text.is_null() {
            return haptic_devices::DriverMessage::new("the SDK gave no error text");
        }
        let bytes = unsafe { std::ffi::CStr::from_ptr(text) }.to_bytes();
        haptic_devices::DriverMessage::from_c_bytes(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_goes_configured_then_sdk_dirs_then_system() {
        let list = candidates(
            Some(Path::new("/opt/fd/libdhd.so.3.17.0")),
            Some("/opt/sdk-3.17".into()),
        );
        let at = |p: &str| list.iter().position(|c| c == Path::new(p)).unwrap();
        assert_eq!(at("/opt/fd/libdhd.so.3.17.0"), 0);
        assert_eq!(at("/opt/sdk-3.17/libdrd.so"), 1);
        let arch = format!(
            "/opt/sdk-3.17/lib/release/lin-{}-gcc/libdhd.so.3",
            std::env::consts::ARCH
        );
        assert!(at("/opt/sdk-3.17/lib/libdrd.so") < at(&arch));
        assert!(at(&arch) < at("libdrd.so"));
        assert!(at("libdrd.so") < at("libdhd.so"));
        assert!(at("libdhd.so.3") < at("/usr/local/lib/libdrd.so"));
        let bare = candidates(None, Some("".into()));
        assert_eq!(bare[0], Path::new("libdrd.so"));
    }
}
