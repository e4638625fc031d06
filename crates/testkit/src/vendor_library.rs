//! Simulated vendor libraries: the shared libraries (`forcedim-sim`,
//! `openhaptics-sim`) that the tests and examples of a backend loading a
//! vendor's library at run time load in its place. Cargo builds one beside
//! the executables of every crate naming it as a dev-dependency; this
//! module finds it there, gives a test binary's tests exclusive use of it,
//! resolves its test hooks, and holds what else those tests and examples
//! share: a real library that is no vendor's, and the median tick cost.

use haptic_devices::{
    HapticDevice, Motion, MotionConfig, SegmentConfig, SimulatedClock, SimulatedDevice, Wrench,
};
use std::fmt;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A simulated library missing from beside the running executable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotBuilt {
    pub file_name: String,
}

impl fmt::Display for NotBuilt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} is not beside this executable: cargo builds it there for a crate naming its package as a dev-dependency",
            self.file_name
        )
    }
}

impl std::error::Error for NotBuilt {}

/// The simulated library `file_name` (`libopenhaptics_sim.so`, say) beside
/// the running test or example executable.
pub fn find(file_name: &str) -> Result<PathBuf, NotBuilt> {
    haptic_devices::library::beside_current_exe(file_name).ok_or_else(|| NotBuilt {
        file_name: file_name.to_owned(),
    })
}

/// The simulated library `file_name`, loaded; [`SimulatedLibrary::lock`]
/// hands it out to one test at a time.
pub struct SimulatedLibrary {
    library: libloading::Library,
    path: PathBuf,
}

/// One simulation per process (a library's state is global): the tests of
/// one binary take turns.
static LOCK: Mutex<()> = Mutex::new(());

impl SimulatedLibrary {
    /// Exclusive use of the simulated library `file_name` until the guard
    /// drops (a panicking test's guard releases it too), its simulation
    /// reset by its hook `reset` (no arguments). Panics, naming the file,
    /// if it was not built or does not load.
    pub fn lock(file_name: &str, reset: &str) -> (MutexGuard<'static, ()>, SimulatedLibrary) {
        let guard = LOCK.lock().unwrap_or_else(|p| p.into_inner());
        let path = find(file_name).unwrap_or_else(|e| panic!("{e}"));
        // SAFETY: a simulated library's initialisers are Rust's.
        let library = unsafe { libloading::Library::new(&path) }
            .unwrap_or_else(|e| panic!("loading {}: {e}", path.display()));
        let library = SimulatedLibrary { library, path };
        // SAFETY: a reset hook takes nothing and returns nothing.
        unsafe { library.hook::<unsafe extern "C" fn()>(reset)() };
        (guard, library)
    }

    /// Where it was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The hook `name` as the function pointer type `T`. Panics naming it
    /// when the library has none. A name ending in NUL (`"fdsim_reset\0"`)
    /// is looked up without allocating, for tests that count allocations.
    ///
    /// # Safety
    /// `T` must be the hook's true signature.
    pub unsafe fn hook<T: Copy>(&self, name: &str) -> T {
        // SAFETY: the caller's.
        unsafe { haptic_devices::library::symbol(&self.library, name) }.unwrap_or_else(|| {
            let name = name.trim_end_matches('\0');
            panic!("{} has no `{name}`", self.path.display())
        })
    }
}

/// Methods calling a simulated library's hooks: for each
/// `fn name(arg: Type, …) = "symbol";` a method `name(&self, arg, …)` that
/// calls the hook `symbol` with those arguments, on a type whose field
/// `library` is a [`SimulatedLibrary`]. The argument types must be the C
/// signature the simulated library exports the hook with.
#[macro_export]
macro_rules! simulated_hooks {
    ($owner:ty { $( $(#[$meta:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) = $symbol:literal; )* }) => {
        impl $owner {
            $(
                $(#[$meta])*
                pub fn $name(&self, $($arg: $ty),*) {
                    // SAFETY: the hook's C signature, as the macro's caller
                    // names it.
                    unsafe {
                        self.library.hook::<unsafe extern "C" fn($($ty),*)>(concat!($symbol, "\0"))($($arg),*)
                    }
                }
            )*
        }
    };
}

/// A real shared library that is no vendor's — the C maths library — for
/// a backend's loader to reject by the first function it lacks.
pub fn foreign_library() -> &'static Path {
    [
        "/lib/x86_64-linux-gnu/libm.so.6",
        "/usr/lib/x86_64-linux-gnu/libm.so.6",
        "/lib64/libm.so.6",
        "/usr/lib/aarch64-linux-gnu/libm.so.6",
    ]
    .into_iter()
    .map(Path::new)
    .find(|p| p.is_file())
    .expect("libm.so.6 in one of the usual directories")
}

/// The device every backend's per-tick cost is measured against: the
/// simulated device swinging the handle round a circle once a second,
/// stepped 1 ms a read.
pub fn simulated_peer() -> SimulatedDevice {
    let motion = MotionConfig {
        start_position_m: [0.0; 3],
        start_rotation_rad: [0.0; 3],
        segments: vec![SegmentConfig::Circle {
            centre_m: [0.0; 3],
            normal: [0.0, 0.0, 1.0],
            turns: 1.0,
            duration_s: 1.0,
        }],
        repeat: true,
    };
    let motion = Motion::try_from(motion).expect("a valid motion");
    SimulatedDevice::new(motion, SimulatedClock::Stepped(Duration::from_millis(1)))
}

/// The median over `rounds` of the mean duration of one `read` and one
/// `write` of `request` on `device`, as the servo calls them, over `ticks`
/// calls each: the device benchmarks' per-tick cost.
pub fn device_tick(
    device: &mut impl HapticDevice,
    request: &Wrench,
    ticks: usize,
    rounds: usize,
) -> Duration {
    median_tick(ticks, rounds, || {
        let _ = black_box(device.read());
        let _ = black_box(device.write(black_box(request)));
    })
}

/// The median over `rounds` of the mean duration of one call of `tick`
/// over `ticks` calls, after `ticks / 4` calls of warm-up.
pub fn median_tick(ticks: usize, rounds: usize, mut tick: impl FnMut()) -> Duration {
    for _ in 0..ticks / 4 {
        tick();
    }
    let mut means: Vec<Duration> = (0..rounds)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..ticks {
                tick();
            }
            start.elapsed() / ticks as u32
        })
        .collect();
    means.sort();
    means[rounds / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_not_built_is_named_and_libm_is_found() {
        let error = find("libno-such-simulation.so").unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("libno-such-simulation.so is not beside this executable"),
            "{error}"
        );
        assert!(foreign_library().ends_with("libm.so.6"));
    }

    #[test]
    fn the_median_tick_is_the_middle_round() {
        let mut calls = 0;
        let median = median_tick(8, 3, || {
            calls += 1;
            std::thread::sleep(Duration::from_micros(100));
        });
        assert_eq!(calls, 2 + 3 * 8);
        assert!(median >= Duration::from_micros(100), "{median:?}");
    }
}
