//! The simulated SDK (`forcedim-sim`), loaded as the backend loads the real
//! one, and its test hooks.

#![allow(dead_code)]

pub use forcedim_sim::FdsimState;
use std::ffi::{c_int, c_uint};
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

/// `dhdc.h`'s system type of a right-handed sigma.7.
pub const SIGMA7: c_int = 104;
pub const SIGMA7_LEFT: c_int = 105;
pub const OMEGA3: c_int = 33;
pub const FALCON: c_int = 60;
/// `DHD_ERROR_TIMEOUT`.
pub const ERROR_TIMEOUT: c_int = 7;

/// The simulated SDK: cargo builds it beside the test executables
/// (`target/<profile>/deps`), as a dev-dependency.
pub fn sim_library() -> PathBuf {
    haptic_devices::library::beside_current_exe("libforcedim_sim.so")
        .expect("libforcedim_sim.so is built beside the test executable, as a dev-dependency")
}

/// One simulated SDK for the whole test binary: tests that use it hold
/// [`Sim::lock`]'s guard.
pub struct Sim {
    library: libloading::Library,
    pub path: PathBuf,
}

static LOCK: Mutex<()> = Mutex::new(());

impl Sim {
    /// Exclusive use of the simulation, reset to one closed,
    /// uninitialised sigma.7 at rest.
    pub fn lock() -> (MutexGuard<'static, ()>, Sim) {
        let guard = LOCK.lock().unwrap_or_else(|p| p.into_inner());
        let path = sim_library();
        // SAFETY: the simulated SDK's initialisers are Rust's.
        let library = unsafe { libloading::Library::new(&path) }.unwrap();
        let sim = Sim { library, path };
        sim.reset();
        (guard, sim)
    }

    fn hook<T: Copy>(&self, name: &str) -> T {
        // SAFETY: each caller names the hook's true signature.
        unsafe { *self.library.get::<T>(name.as_bytes()).unwrap() }
    }

    pub fn reset(&self) {
        unsafe { self.hook::<unsafe extern "C" fn()>("fdsim_reset\0")() }
    }

    pub fn set_device(&self, system_type: c_int, count: c_int) {
        unsafe {
            self.hook::<unsafe extern "C" fn(c_int, c_int)>("fdsim_set_device\0")(
                system_type,
                count,
            )
        }
    }

    pub fn set_limits(&self, force: f64, torque: f64) {
        unsafe { self.hook::<unsafe extern "C" fn(f64, f64)>("fdsim_set_limits\0")(force, torque) }
    }

    pub fn set_disconnected(&self, on: bool) {
        unsafe { self.hook::<unsafe extern "C" fn(bool)>("fdsim_set_disconnected\0")(on) }
    }

    pub fn inject_nan(&self, reads: u32) {
        unsafe { self.hook::<unsafe extern "C" fn(u32)>("fdsim_inject_nan\0")(reads) }
    }

    pub fn fail_next(&self, code: c_int) {
        unsafe { self.hook::<unsafe extern "C" fn(c_int)>("fdsim_fail_next\0")(code) }
    }

    pub fn set_initialized(&self, on: bool) {
        unsafe { self.hook::<unsafe extern "C" fn(bool)>("fdsim_set_initialized\0")(on) }
    }

    pub fn set_step(&self, dt: f64) {
        unsafe { self.hook::<unsafe extern "C" fn(f64)>("fdsim_set_step\0")(dt) }
    }

    pub fn set_dynamics(&self, mass: f64, stiffness: f64, damping: f64) {
        unsafe {
            self.hook::<unsafe extern "C" fn(f64, f64, f64)>("fdsim_set_dynamics\0")(
                mass, stiffness, damping,
            )
        }
    }

    pub fn set_pose(&self, position: [f64; 3], rotation: [f64; 3]) {
        unsafe {
            self.hook::<unsafe extern "C" fn(*const [f64; 3], *const [f64; 3])>("fdsim_set_pose\0")(
                &position, &rotation,
            )
        }
    }

    pub fn set_buttons(&self, mask: c_uint, gripper_angle: f64) {
        unsafe {
            self.hook::<unsafe extern "C" fn(c_uint, f64)>("fdsim_set_buttons\0")(
                mask,
                gripper_angle,
            )
        }
    }

    pub fn state(&self) -> FdsimState {
        let mut state = FdsimState::default();
        unsafe { self.hook::<unsafe extern "C" fn(*mut FdsimState)>("fdsim_state\0")(&mut state) };
        state
    }

    /// Settings that open the simulated device.
    pub fn settings(&self) -> haptic_device_forcedim::Settings {
        haptic_device_forcedim::Settings {
            library: Some(self.path.clone()),
            ..Default::default()
        }
    }
}
