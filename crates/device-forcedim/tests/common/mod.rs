//! The simulated SDK (`forcedim-sim`), loaded as the backend loads the real
//! one, and its test hooks.

#![allow(dead_code)]

pub use forcedim_sim::FdsimState;
use haptic_testkit::simulated_hooks;
use haptic_testkit::vendor_library::SimulatedLibrary;
use std::ffi::{c_int, c_uint};
use std::path::Path;
use std::sync::MutexGuard;

/// `dhdc.h`'s system type of a right-handed sigma.7.
pub const SIGMA7: c_int = 104;
pub const SIGMA7_LEFT: c_int = 105;
pub const OMEGA3: c_int = 33;
pub const FALCON: c_int = 60;
/// `DHD_ERROR_TIMEOUT`.
pub const ERROR_TIMEOUT: c_int = 7;

/// The simulated SDK, which cargo builds beside the test executables as a
/// dev-dependency; tests that use it hold [`Sim::lock`]'s guard.
pub struct Sim {
    library: SimulatedLibrary,
}

impl Sim {
    /// Exclusive use of the simulation, reset to one closed,
    /// uninitialised sigma.7 at rest.
    pub fn lock() -> (MutexGuard<'static, ()>, Sim) {
        let (guard, library) = SimulatedLibrary::lock("libforcedim_sim.so", "fdsim_reset");
        (guard, Sim { library })
    }

    pub fn path(&self) -> &Path {
        self.library.path()
    }

    pub fn set_pose(&self, position: [f64; 3], rotation: [f64; 3]) {
        type Hook = unsafe extern "C" fn(*const [f64; 3], *const [f64; 3]);
        // SAFETY: `fdsim_set_pose`'s signature.
        unsafe { self.library.hook::<Hook>("fdsim_set_pose\0")(&position, &rotation) }
    }

    pub fn state(&self) -> FdsimState {
        let mut state = FdsimState::default();
        // SAFETY: `fdsim_state`'s signature.
        unsafe {
            self.library
                .hook::<unsafe extern "C" fn(*mut FdsimState)>("fdsim_state\0")(
                &mut state
            )
        };
        state
    }

    /// Settings that open the simulated device.
    pub fn settings(&self) -> haptic_device_forcedim::Settings {
        haptic_device_forcedim::Settings {
            library: Some(self.path().to_owned()),
            ..Default::default()
        }
    }
}

simulated_hooks!(Sim {
    fn reset() = "fdsim_reset";
    fn set_device(system_type: c_int, count: c_int) = "fdsim_set_device";
    fn set_limits(force: f64, torque: f64) = "fdsim_set_limits";
    fn set_disconnected(on: bool) = "fdsim_set_disconnected";
    fn inject_nan(reads: u32) = "fdsim_inject_nan";
    fn fail_next(code: c_int) = "fdsim_fail_next";
    fn set_initialized(on: bool) = "fdsim_set_initialized";
    fn set_step(dt: f64) = "fdsim_set_step";
    fn set_dynamics(mass: f64, stiffness: f64, damping: f64) = "fdsim_set_dynamics";
    fn set_buttons(mask: c_uint, gripper_angle: f64) = "fdsim_set_buttons";
});
