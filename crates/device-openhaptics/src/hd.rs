//! The OpenHaptics HD library (`libHD`), found and loaded at run time, and
//! the HD API's C types and constants (`hdDefines.h`, `hdScheduler.h`).

use haptic_devices::library::{open_first, search_paths, symbol, tried_list};
use haptic_devices::DriverMessage;
use std::ffi::{c_char, c_int, c_uint, c_ulong, c_ushort, c_void, CStr, OsString};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The library names tried.
pub const LIBRARY_NAMES: [&str; 2] = ["libHD.so", "libHD.so.3.4"];
/// The environment variables naming the OpenHaptics installation, as its
/// installer and samples set them.
pub const SDK_ENVS: [&str; 2] = ["OH_SDK_BASE", "OPENHAPTICS"];

pub type Hhd = c_uint;
pub type HdEnum = c_uint;
pub type HdError = c_uint;
pub type CallbackCode = c_uint;
pub type SchedulerHandle = c_ulong;
pub type SchedulerCallback = unsafe extern "C" fn(*mut c_void) -> CallbackCode;

/// `HDErrorInfo`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorInfo {
    /// The `HD_*` error code.
    pub error_code: HdError,
    /// The device's own code behind it.
    pub internal_error_code: c_int,
    /// The device current when it happened.
    pub hhd: Hhd,
}

pub const HD_SUCCESS: HdError = 0x0000;
pub const HD_BAD_HANDLE: HdError = 0x0104;
pub const HD_DEVICE_FAULT: HdError = 0x0300;
pub const HD_COMM_ERROR: HdError = 0x0302;
pub const HD_COMM_CONFIG_ERROR: HdError = 0x0303;
/// The codes that mean the device is gone: a fault, a failed or
/// misconfigured link, a handle that names no device.
pub const GONE: [HdError; 4] = [
    HD_DEVICE_FAULT,
    HD_COMM_ERROR,
    HD_COMM_CONFIG_ERROR,
    HD_BAD_HANDLE,
];

pub const HD_INVALID_HANDLE: Hhd = 0xFFFF_FFFF;
pub const HD_CALLBACK_DONE: CallbackCode = 0;
pub const HD_CALLBACK_CONTINUE: CallbackCode = 1;
pub const HD_MAX_SCHEDULER_PRIORITY: c_ushort = c_ushort::MAX;

pub const HD_CURRENT_BUTTONS: HdEnum = 0x2000;
pub const HD_CURRENT_POSITION: HdEnum = 0x2050;
pub const HD_CURRENT_VELOCITY: HdEnum = 0x2051;
pub const HD_CURRENT_TRANSFORM: HdEnum = 0x2052;
pub const HD_CURRENT_ANGULAR_VELOCITY: HdEnum = 0x2053;
pub const HD_CURRENT_GIMBAL_ANGLES: HdEnum = 0x2150;
pub const HD_DEVICE_MODEL_TYPE: HdEnum = 0x2501;
pub const HD_USABLE_WORKSPACE_DIMENSIONS: HdEnum = 0x2551;
pub const HD_INPUT_DOF: HdEnum = 0x2553;
pub const HD_OUTPUT_DOF: HdEnum = 0x2554;
pub const HD_UPDATE_RATE: HdEnum = 0x2600;
pub const HD_NOMINAL_MAX_STIFFNESS: HdEnum = 0x2602;
pub const HD_NOMINAL_MAX_FORCE: HdEnum = 0x2603;
/// The largest gimbal torque (mN·m) of a device with torque output.
pub const HD_NOMINAL_MAX_TORQUE_FORCE: HdEnum = 0x2622;
pub const HD_CURRENT_FORCE: HdEnum = 0x2700;
/// Torques about the gimbal's joints, yaw, pitch, roll (mN·m).
pub const HD_CURRENT_GIMBAL_TORQUE: HdEnum = 0x2704;
pub const HD_FORCE_OUTPUT: HdEnum = 0x4000;

/// Why libHD could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("the OpenHaptics HD library (libHD.so) was not found; tried:{}", tried_list(.tried))]
    NotFound { tried: Vec<(String, String)> },
    #[error("{}: not the OpenHaptics HD library: it has no `{symbol}`", .library.display())]
    MissingSymbol {
        library: PathBuf,
        symbol: &'static str,
    },
}

/// Where libHD is looked for, in order: `configured` (the library, or a
/// directory holding it), then the `lib` and `lib64` directories of each
/// of `installs` (`$OH_SDK_BASE`, `$OPENHAPTICS`), then the dynamic
/// linker's search, then `/usr/lib64`, `/usr/local/lib` and
/// `/opt/OpenHaptics/Developer/lib`.
pub fn candidates(configured: Option<&Path>, installs: &[Option<OsString>]) -> Vec<PathBuf> {
    let dirs: Vec<PathBuf> = installs
        .iter()
        .flatten()
        .filter(|s| !s.is_empty())
        .flat_map(|root| {
            let root = PathBuf::from(root);
            [root.join("lib"), root.join("lib64")]
        })
        .collect();
    search_paths(
        &LIBRARY_NAMES,
        configured,
        &dirs,
        &[
            Path::new("/usr/lib64"),
            Path::new("/usr/local/lib"),
            Path::new("/opt/OpenHaptics/Developer/lib"),
        ],
    )
}

/// The HD API functions the backend calls, with their C signatures.
#[derive(Clone, Copy)]
pub(crate) struct Hd {
    pub init_device: unsafe extern "C" fn(*const c_char) -> Hhd,
    pub disable_device: unsafe extern "C" fn(Hhd),
    pub make_current_device: unsafe extern "C" fn(Hhd),
    pub begin_frame: unsafe extern "C" fn(Hhd),
    pub end_frame: unsafe extern "C" fn(Hhd),
    pub enable: unsafe extern "C" fn(HdEnum),
    pub disable: unsafe extern "C" fn(HdEnum),
    pub get_doublev: unsafe extern "C" fn(HdEnum, *mut f64),
    pub get_integerv: unsafe extern "C" fn(HdEnum, *mut c_int),
    pub set_doublev: unsafe extern "C" fn(HdEnum, *const f64),
    pub get_string: unsafe extern "C" fn(HdEnum) -> *const c_char,
    pub get_error: unsafe extern "C" fn() -> ErrorInfo,
    pub get_error_string: unsafe extern "C" fn(HdError) -> *const c_char,
    pub start_scheduler: unsafe extern "C" fn(),
    pub stop_scheduler: unsafe extern "C" fn(),
    pub schedule_asynchronous:
        unsafe extern "C" fn(SchedulerCallback, *mut c_void, c_ushort) -> SchedulerHandle,
    pub schedule_synchronous: unsafe extern "C" fn(SchedulerCallback, *mut c_void, c_ushort),
    pub unschedule: unsafe extern "C" fn(SchedulerHandle),
}

impl Hd {
    /// The first pending error, the rest of the HD API's error stack
    /// drained (at most 16 deep); `None` when there is none.
    pub fn error(&self) -> Option<ErrorInfo> {
        let mut first = None;
        for _ in 0..16 {
            // SAFETY: no arguments.
            let error = unsafe { (self.get_error)() };
            if error.error_code == HD_SUCCESS {
                break;
            }
            first.get_or_insert(error);
        }
        first
    }

    /// The codes then `hdGetErrorString`'s text, in a fixed buffer (no
    /// heap): `0x0302 (internal -1): Communication error`. The codes come
    /// first so that a cut text keeps them.
    pub fn message(&self, error: ErrorInfo) -> DriverMessage {
        let mut message = DriverMessage::new("");
        let _ = write!(
            message,
            "0x{:04x} (internal {}): ",
            error.error_code, error.internal_error_code
        );
        // SAFETY: the HD API returns a static NUL-terminated string or null.
        let text = unsafe { (self.get_error_string)(error.error_code) };
        if text.is_null() {
            let _ = message.write_str("HD error");
        } else {
            for chunk in unsafe { CStr::from_ptr(text) }.to_bytes().utf8_chunks() {
                let _ = message.write_str(chunk.valid());
                if !chunk.invalid().is_empty() {
                    let _ = message.write_str("?");
                }
            }
        }
        message
    }
}

/// A loaded libHD.
pub struct Library {
    path: PathBuf,
    pub(crate) hd: Hd,
    /// Declared last: the function pointers above point into it.
    _library: libloading::Library,
}

impl Library {
    /// Loads the first library of [`candidates`] (`configured`, then
    /// `$OH_SDK_BASE` and `$OPENHAPTICS`, then the system's) that the
    /// dynamic linker opens, and resolves every function the backend calls,
    /// naming the first one missing.
    pub fn load(configured: Option<&Path>) -> Result<Library, LoadError> {
        let installs = SDK_ENVS.map(std::env::var_os);
        let paths = candidates(configured, &installs);
        // SAFETY: loading runs the library's initialisers, those of any
        // C++ library.
        let (library, path) =
            unsafe { open_first(paths) }.map_err(|tried| LoadError::NotFound { tried })?;
        let l = &library;
        let get = |name: &'static str| LoadError::MissingSymbol {
            library: path.clone(),
            symbol: name,
        };
        macro_rules! f {
            ($name:literal) => {
                // SAFETY: the field's type is the function's C signature in
                // `hd.h` / `hdScheduler.h` (HDCALLBACK is the C convention
                // on Linux).
                unsafe { symbol(l, $name) }.ok_or_else(|| get($name))?
            };
        }
        let hd = Hd {
            init_device: f!("hdInitDevice"),
            disable_device: f!("hdDisableDevice"),
            make_current_device: f!("hdMakeCurrentDevice"),
            begin_frame: f!("hdBeginFrame"),
            end_frame: f!("hdEndFrame"),
            enable: f!("hdEnable"),
            disable: f!("hdDisable"),
            get_doublev: f!("hdGetDoublev"),
            get_integerv: f!("hdGetIntegerv"),
            set_doublev: f!("hdSetDoublev"),
            get_string: f!("hdGetString"),
            get_error: f!("hdGetError"),
            get_error_string: f!("hdGetErrorString"),
            start_scheduler: f!("hdStartScheduler"),
            stop_scheduler: f!("hdStopScheduler"),
            schedule_asynchronous: f!("hdScheduleAsynchronous"),
            schedule_synchronous: f!("hdScheduleSynchronous"),
            unschedule: f!("hdUnschedule"),
        };
        Ok(Library {
            path,
            hd,
            _library: library,
        })
    }

    /// The library's path (or the bare name the dynamic linker found).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_goes_configured_then_installs_then_system() {
        let list = candidates(
            Some(Path::new("/x/libHD.so.3.4.0")),
            &[Some("/oh".into()), None],
        );
        let at = |p: &str| list.iter().position(|c| c == Path::new(p)).unwrap();
        assert_eq!(at("/x/libHD.so.3.4.0"), 0);
        assert_eq!(at("/oh/lib/libHD.so"), 1);
        assert!(at("/oh/lib64/libHD.so.3.4") < at("libHD.so"));
        assert!(at("libHD.so.3.4") < at("/usr/lib64/libHD.so"));
        assert!(at("/usr/local/lib/libHD.so") < at("/opt/OpenHaptics/Developer/lib/libHD.so"));
    }
}
