//! The simulated libHD (`openhaptics-sim`), loaded as the backend loads
//! the real one, and its test hooks.

#![allow(dead_code)]

use haptic_testkit::simulated_hooks;
use haptic_testkit::vendor_library::SimulatedLibrary;
pub use openhaptics_sim::OhsimState;
use std::ffi::c_int;
use std::path::Path;
use std::sync::MutexGuard;

/// The simulated libHD, which cargo builds beside the test executables as
/// a dev-dependency; tests that use it hold [`Sim::lock`]'s guard.
pub struct Sim {
    library: SimulatedLibrary,
}

impl Sim {
    /// Exclusive use of the simulation, reset to a closed 3-DoF device at
    /// rest at the origin.
    pub fn lock() -> (MutexGuard<'static, ()>, Sim) {
        let (guard, library) = SimulatedLibrary::lock("libopenhaptics_sim.so", "ohsim_reset");
        (guard, Sim { library })
    }

    pub fn path(&self) -> &Path {
        self.library.path()
    }

    pub fn set_pose(&self, position_mm: [f64; 3], rotation: [f64; 9]) {
        type Hook = unsafe extern "C" fn(*const [f64; 3], *const [f64; 9]);
        // SAFETY: `ohsim_set_pose`'s signature.
        unsafe { self.library.hook::<Hook>("ohsim_set_pose\0")(&position_mm, &rotation) }
    }

    /// The gimbal at `angles` (yaw, pitch, roll; rad), at rest.
    pub fn set_gimbal(&self, angles: [f64; 3]) {
        // SAFETY: `ohsim_set_gimbal`'s signature.
        unsafe {
            self.library
                .hook::<unsafe extern "C" fn(*const [f64; 3])>("ohsim_set_gimbal\0")(
                &angles
            )
        }
    }

    pub fn state(&self) -> OhsimState {
        let mut state = OhsimState::default();
        // SAFETY: `ohsim_state`'s signature.
        unsafe {
            self.library
                .hook::<unsafe extern "C" fn(*mut OhsimState)>("ohsim_state\0")(
                &mut state
            )
        };
        state
    }

    /// Settings that open the simulated device.
    pub fn settings(&self) -> haptic_device_openhaptics::Settings {
        haptic_device_openhaptics::Settings {
            library: Some(self.path().to_owned()),
            ..Default::default()
        }
    }
}

simulated_hooks!(Sim {
    fn reset() = "ohsim_reset";
    fn set_vanished(on: bool) = "ohsim_set_vanished";
    fn inject_nan(frames: u32) = "ohsim_inject_nan";
    fn set_dynamics(mass: f64, stiffness: f64, damping: f64) = "ohsim_set_dynamics";
    fn set_buttons(mask: c_int) = "ohsim_set_buttons";
    /// A 6-DoF-output device (gimbal torques) or a 3-DoF one.
    fn set_six_dof(on: bool) = "ohsim_set_six_dof";
    fn set_gimbal_dynamics(inertia: f64, stiffness: f64, damping: f64) = "ohsim_set_gimbal_dynamics";
});

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
