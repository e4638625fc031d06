//! The simulated libHD (`openhaptics-sim`), loaded as the backend loads
//! the real one, and its test hooks.

#![allow(dead_code)]

pub use openhaptics_sim::OhsimState;
use std::ffi::c_int;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

/// The simulated libHD: cargo builds it beside the test executables
/// (`target/<profile>/deps`), as a dev-dependency.
pub fn sim_library() -> PathBuf {
    haptic_devices::library::beside_current_exe("libopenhaptics_sim.so")
        .expect("libopenhaptics_sim.so is built beside the test executable, as a dev-dependency")
}

/// One simulated libHD for the whole test binary: tests that use it hold
/// [`Sim::lock`]'s guard.
pub struct Sim {
    library: libloading::Library,
    pub path: PathBuf,
}

static LOCK: Mutex<()> = Mutex::new(());

impl Sim {
    /// Exclusive use of the simulation, reset to a closed 3-DoF device at
    /// rest at the origin.
    pub fn lock() -> (MutexGuard<'static, ()>, Sim) {
        let guard = LOCK.lock().unwrap_or_else(|p| p.into_inner());
        let path = sim_library();
        // SAFETY: the simulated library's initialisers are Rust's.
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
        unsafe { self.hook::<unsafe extern "C" fn()>("ohsim_reset\0")() }
    }

    pub fn set_vanished(&self, on: bool) {
        unsafe { self.hook::<unsafe extern "C" fn(bool)>("ohsim_set_vanished\0")(on) }
    }

    pub fn inject_nan(&self, frames: u32) {
        unsafe { self.hook::<unsafe extern "C" fn(u32)>("ohsim_inject_nan\0")(frames) }
    }

    pub fn set_dynamics(&self, mass: f64, stiffness: f64, damping: f64) {
        unsafe {
            self.hook::<unsafe extern "C" fn(f64, f64, f64)>("ohsim_set_dynamics\0")(
                mass, stiffness, damping,
            )
        }
    }

    pub fn set_pose(&self, position_mm: [f64; 3], rotation: [f64; 9]) {
        unsafe {
            self.hook::<unsafe extern "C" fn(*const [f64; 3], *const [f64; 9])>("ohsim_set_pose\0")(
                &position_mm,
                &rotation,
            )
        }
    }

    /// A 6-DoF-output device (gimbal torques) or a 3-DoF one.
    pub fn set_six_dof(&self, on: bool) {
        unsafe { self.hook::<unsafe extern "C" fn(bool)>("ohsim_set_six_dof\0")(on) }
    }

    /// The gimbal at `angles` (yaw, pitch, roll; rad), at rest.
    pub fn set_gimbal(&self, angles: [f64; 3]) {
        unsafe { self.hook::<unsafe extern "C" fn(*const [f64; 3])>("ohsim_set_gimbal\0")(&angles) }
    }

    pub fn set_gimbal_dynamics(&self, inertia: f64, stiffness: f64, damping: f64) {
        unsafe {
            self.hook::<unsafe extern "C" fn(f64, f64, f64)>("ohsim_set_gimbal_dynamics\0")(
                inertia, stiffness, damping,
            )
        }
    }

    pub fn set_buttons(&self, mask: c_int) {
        unsafe { self.hook::<unsafe extern "C" fn(c_int)>("ohsim_set_buttons\0")(mask) }
    }

    pub fn state(&self) -> OhsimState {
        let mut state = OhsimState::default();
        unsafe { self.hook::<unsafe extern "C" fn(*mut OhsimState)>("ohsim_state\0")(&mut state) };
        state
    }

    /// Settings that open the simulated device.
    pub fn settings(&self) -> haptic_device_openhaptics::Settings {
        haptic_device_openhaptics::Settings {
            library: Some(self.path.clone()),
            ..Default::default()
        }
    }
}

/// Reads until a sample comes (the scheduler's first frame), at most 1 s.
pub fn first_sample(
    device: &mut impl haptic_devices::HapticDevice,
) -> haptic_devices::DeviceSample {
    let start = std::time::Instant::now();
    loop {
        match device.read() {
            Ok(sample) => return sample,
            Err(error) if start.elapsed().as_secs() >= 1 => panic!("no sample: {error}"),
            Err(_) => std::thread::sleep(std::time::Duration::from_micros(200)),
        }
    }
}
