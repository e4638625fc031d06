//! The device a configuration names, opened behind its safety layer.

use haptic_config::{DeviceKind, Scene};
use haptic_devices::{
    load_profiles, AtEnd, Clock, DeviceCapabilities, DeviceError, DeviceSample, EmulatorConfig,
    HapticDevice, HidDevice, Motion, MotionFileError, ProfileError, SafetyLayer, SafetyLimits,
    SimulatedClock, SimulatedDevice, Trajectory, TrajectoryEmulator, TrajectoryError, Wrench,
};
use std::path::PathBuf;
use std::time::Duration;

/// Any of the devices the daemon drives, dispatched without a vtable.
pub enum AnyDevice {
    Simulated(SimulatedDevice),
    Emulator(TrajectoryEmulator),
    /// Boxed: its report buffer would make every variant as large.
    Hid(Box<HidDevice>),
}

impl HapticDevice for AnyDevice {
    fn capabilities(&self) -> &DeviceCapabilities {
        match self {
            Self::Simulated(d) => d.capabilities(),
            Self::Emulator(d) => d.capabilities(),
            Self::Hid(d) => d.capabilities(),
        }
    }

    fn read(&mut self) -> Result<DeviceSample, DeviceError> {
        match self {
            Self::Simulated(d) => d.read(),
            Self::Emulator(d) => d.read(),
            Self::Hid(d) => d.read(),
        }
    }

    fn write(&mut self, wrench: &Wrench) -> Result<(), DeviceError> {
        match self {
            Self::Simulated(d) => d.write(wrench),
            Self::Emulator(d) => d.write(wrench),
            Self::Hid(d) => d.write(wrench),
        }
    }
}

/// Why a device could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Motion(#[from] MotionFileError),
    #[error(transparent)]
    Trajectory(#[from] TrajectoryError),
    #[error(transparent)]
    Profile(#[from] ProfileError),
    #[error("{}: no device profile `{name}`", dir.display())]
    NoProfile { dir: PathBuf, name: String },
    #[error("opening the HID device `{profile}`: {source}")]
    Hid {
        profile: String,
        source: DeviceError,
    },
    #[error("{0}")]
    Config(String),
}

/// How device time advances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pacing {
    /// The servo thread's clock: real time.
    RealTime,
    /// One tick of `period` per read, as fast as the caller reads:
    /// deterministic (`hapticd replay`).
    Stepped { period: Duration },
}

/// Opens the device `scene.device()` names, behind a safety layer whose limits follow the device's capabilities at
/// the servo rate. `at_end` says what a recorded trajectory does after its
/// last sample: end the run ([`AtEnd::Error`]) or hold.
pub fn open(
    scene: &Scene,
    pacing: Pacing,
    at_end: AtEnd,
) -> Result<SafetyLayer<AnyDevice>, OpenError> {
    let (d, base) = (scene.device(), scene.base());
    let device = match d.kind {
        DeviceKind::Simulated => {
            let motion = match (&d.motion, &d.motion_file) {
                (Some(motion), _) => motion.clone(),
                (None, Some(file)) => Motion::load(&base.join(file))?,
                (None, None) => {
                    return Err(OpenError::Config(
                        "a simulated device needs `device.motion` or `device.motion_file`".into(),
                    ))
                }
            };
            let clock = match pacing {
                Pacing::RealTime => SimulatedClock::Wall,
                Pacing::Stepped { period } => SimulatedClock::Stepped(period),
            };
            AnyDevice::Simulated(SimulatedDevice::new(motion, clock))
        }
        DeviceKind::Emulator => {
            let file = d.trajectory_file.as_ref().ok_or_else(|| {
                OpenError::Config("an emulator needs `device.trajectory_file`".into())
            })?;
            let trajectory = Trajectory::load(&base.join(file))?;
            let clock = match pacing {
                Pacing::RealTime => Clock::RealTime,
                Pacing::Stepped { .. } => Clock::Stepped,
            };
            let mut emulator = EmulatorConfig::new(d.emulator.mode(), clock);
            emulator.rate = scene.servo_rate();
            emulator.at_end = at_end;
            AnyDevice::Emulator(TrajectoryEmulator::new(trajectory, emulator))
        }
        DeviceKind::Hid => {
            let name = d
                .profile
                .as_ref()
                .ok_or_else(|| OpenError::Config("a HID device needs `device.profile`".into()))?;
            let dir = base.join(&d.profiles_dir);
            let profiles = load_profiles(&dir)?;
            let profile = profiles
                .into_iter()
                .find(|p| &p.name == name)
                .ok_or_else(|| OpenError::NoProfile {
                    dir: dir.clone(),
                    name: name.clone(),
                })?;
            let device = HidDevice::open(&profile).map_err(|source| OpenError::Hid {
                profile: name.clone(),
                source,
            })?;
            let limits = SafetyLimits::from_capabilities(
                HapticDevice::capabilities(&device),
                scene.servo_rate(),
            );
            // Reopened by the safety layer every `reconnect_ticks` while lost.
            return Ok(SafetyLayer::new(AnyDevice::Hid(Box::new(device)))
                .with_limits(limits)
                .with_reconnect(move |device| {
                    *device = AnyDevice::Hid(Box::new(HidDevice::open(&profile)?));
                    Ok(())
                }));
        }
    };
    let limits = SafetyLimits::from_capabilities(device.capabilities(), scene.servo_rate());
    Ok(SafetyLayer::new(device).with_limits(limits))
}
