//! The device a configuration names, opened behind its safety layer.

use haptic_config::{DeviceConfig, DeviceKind, Scene};
use haptic_device_falcon::{FalconDevice, FalconError, FalconSettings};
use haptic_device_forcedim::ForceDimensionDevice;
use haptic_device_haply::{HaplyDevice, HaplySettings};
use haptic_device_openhaptics::OpenHapticsDevice;
use haptic_devices::{
    list_connected, load_profiles, AtEnd, Clock, DeviceCapabilities, DeviceError, DeviceSample,
    EmulatorConfig, HapticDevice, HidDevice, HidDeviceInfo, Motion, MotionFileError, ProfileError,
    SafetyLayer, SafetyLimits, SimulatedClock, SimulatedDevice, Trajectory, TrajectoryEmulator,
    TrajectoryError, Wrench,
};
use std::path::PathBuf;
use std::time::Duration;

/// Any of the devices the daemon drives, dispatched without a vtable.
pub enum AnyDevice {
    Simulated(SimulatedDevice),
    Emulator(TrajectoryEmulator),
    /// Boxed: its report buffer would make every variant as large.
    Hid(Box<HidDevice>),
    /// Boxed: it carries the SDK's description of the device.
    ForceDimension(Box<ForceDimensionDevice>),
    /// A Novint Falcon; it reopens itself when lost (its I/O thread does).
    Falcon(FalconDevice),
    /// A Touch, Touch X or Phantom; boxed: it carries its description.
    /// The HD scheduler keeps running while it is lost, and its samples
    /// return with it.
    OpenHaptics(Box<OpenHapticsDevice>),
    /// A Haply Inverse3 (and VerseGrip) through the Inverse Service; its
    /// I/O thread reconnects, or gives the run up, as configured.
    Haply(Box<HaplyDevice>),
}

impl HapticDevice for AnyDevice {
    fn capabilities(&self) -> &DeviceCapabilities {
        match self {
            Self::Simulated(d) => d.capabilities(),
            Self::Emulator(d) => d.capabilities(),
            Self::Hid(d) => d.capabilities(),
            Self::ForceDimension(d) => d.capabilities(),
            Self::Falcon(d) => d.capabilities(),
            Self::OpenHaptics(d) => d.capabilities(),
            Self::Haply(d) => d.capabilities(),
        }
    }

    fn read(&mut self) -> Result<DeviceSample, DeviceError> {
        match self {
            Self::Simulated(d) => d.read(),
            Self::Emulator(d) => d.read(),
            Self::Hid(d) => d.read(),
            Self::ForceDimension(d) => d.read(),
            Self::Falcon(d) => d.read(),
            Self::OpenHaptics(d) => d.read(),
            Self::Haply(d) => d.read(),
        }
    }

    fn write(&mut self, wrench: &Wrench) -> Result<(), DeviceError> {
        match self {
            Self::Simulated(d) => d.write(wrench),
            Self::Emulator(d) => d.write(wrench),
            Self::Hid(d) => d.write(wrench),
            Self::ForceDimension(d) => d.write(wrench),
            Self::Falcon(d) => d.write(wrench),
            Self::OpenHaptics(d) => d.write(wrench),
            Self::Haply(d) => d.write(wrench),
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
    /// No profile was given and no connected HID device matches one.
    #[error("no connected HID device matches a profile in {} ({connected} HID interfaces connected; `hapticd devices` lists them)", dir.display())]
    NoMatchingDevice { dir: PathBuf, connected: usize },
    /// No profile was given and several connected devices match one.
    #[error("several connected HID devices match a profile: {}; choose one with `--profile` (or `device.profile`)", .profiles.join(", "))]
    SeveralMatchingDevices { profiles: Vec<String> },
    #[error("listing the connected HID devices: {0}")]
    List(DeviceError),
    #[error("opening the Force Dimension device: {0}")]
    ForceDimension(#[from] haptic_device_forcedim::OpenError),
    #[error(transparent)]
    Falcon(#[from] FalconError),
    #[error("opening the OpenHaptics device: {0}")]
    OpenHaptics(#[from] haptic_device_openhaptics::OpenError),
    #[error("opening the Haply Inverse3: {0}")]
    Haply(#[from] haptic_device_haply::HaplyError),
    #[error("{0}")]
    Config(String),
}

/// `[device.forcedim]` as the backend's settings; relative paths from
/// `base`. The validation has checked the ranges.
fn forcedim_settings(d: &DeviceConfig, base: &std::path::Path) -> haptic_device_forcedim::Settings {
    let f = &d.forcedim;
    haptic_device_forcedim::Settings {
        library: f.library.as_ref().map(|l| base.join(l)),
        device_index: f.device_index.min(127) as u8,
        gravity_compensation: f.gravity_compensation,
        auto_init: f.auto_init,
        watchdog: Duration::from_secs_f64(f.watchdog_ms / 1e3),
        velocity_threshold: f.velocity_threshold,
        max_force: f.max_force_n,
        max_torque: f.max_torque_n_m,
    }
}

/// The one profile that the connected HID devices match, for a HID device
/// configured without one: each profile counts once however many of its
/// device's interfaces are connected.
fn only_matching_profile(
    connected: &[(HidDeviceInfo, Option<String>)],
    dir: &std::path::Path,
) -> Result<String, OpenError> {
    let mut profiles: Vec<String> = connected.iter().filter_map(|(_, p)| p.clone()).collect();
    profiles.sort();
    profiles.dedup();
    match <[String; 1]>::try_from(profiles) {
        Ok([profile]) => Ok(profile),
        Err(profiles) if profiles.is_empty() => Err(OpenError::NoMatchingDevice {
            dir: dir.to_owned(),
            connected: connected.len(),
        }),
        Err(profiles) => Err(OpenError::SeveralMatchingDevices { profiles }),
    }
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

/// Opens the device `scene.device()` names, behind a safety layer whose
/// limits follow the device's capabilities at the servo rate and which
/// waits for a lost device or ends the run as `[device] on_disconnect`
/// says. `at_end` says what a recorded trajectory does after its last
/// sample: end the run ([`AtEnd::Error`]) or hold.
pub fn open(
    scene: &Scene,
    pacing: Pacing,
    at_end: AtEnd,
) -> Result<SafetyLayer<AnyDevice>, OpenError> {
    Ok(open_device(scene, pacing, at_end)?.with_on_disconnect(scene.device().on_disconnect))
}

fn open_device(
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
            let trajectory = Trajectory::load(base.join(file))?;
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
            let dir = base.join(&d.profiles_dir);
            let profiles = load_profiles(&dir)?;
            let name = match &d.profile {
                Some(name) => name.clone(),
                None => {
                    let connected = list_connected(&profiles).map_err(OpenError::List)?;
                    let name = only_matching_profile(&connected, &dir)?;
                    tracing::info!(profile = %name, "using the one connected HID device that matches a profile");
                    name
                }
            };
            let profile = profiles
                .into_iter()
                .find(|p| p.name == name)
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
        DeviceKind::ForceDimension => {
            let device = ForceDimensionDevice::open(&forcedim_settings(d, base))?;
            let limits = SafetyLimits::from_capabilities(
                HapticDevice::capabilities(&device),
                scene.servo_rate(),
            );
            // Reopened through the same SDK every `reconnect_ticks` while lost.
            return Ok(
                SafetyLayer::new(AnyDevice::ForceDimension(Box::new(device)))
                    .with_limits(limits)
                    .with_reconnect(|device| match device {
                        AnyDevice::ForceDimension(d) => d.reopen(),
                        _ => Ok(()),
                    }),
            );
        }
        DeviceKind::Falcon => AnyDevice::Falcon(FalconDevice::open(&falcon_settings(scene)?)?),
        DeviceKind::OpenHaptics => {
            let o = &d.openhaptics;
            AnyDevice::OpenHaptics(Box::new(OpenHapticsDevice::open(
                &haptic_device_openhaptics::Settings {
                    library: o.library.as_ref().map(|l| base.join(l)),
                    device_name: o.device_name.clone(),
                    max_force: o.max_force_n,
                },
            )?))
        }
        DeviceKind::Haply => AnyDevice::Haply(Box::new(HaplyDevice::open(&haply_settings(d))?)),
    };
    let limits = SafetyLimits::from_capabilities(device.capabilities(), scene.servo_rate());
    Ok(SafetyLayer::new(device).with_limits(limits))
}

/// `[device.haply]` as the backend's settings; the validation has checked
/// the ranges.
fn haply_settings(d: &DeviceConfig) -> HaplySettings {
    let h = &d.haply;
    let ms = |ms: f64| Duration::from_secs_f64(ms / 1e3);
    HaplySettings {
        url: h.url.clone(),
        inverse3: h.inverse3.clone(),
        use_verse_grip: h.use_verse_grip,
        verse_grip: h.verse_grip.clone(),
        centre_m: h.centre_m,
        max_force_n: h.max_force_n,
        exchange_rate_hz: h.exchange_rate_hz,
        stale_after: ms(h.stale_after_ms),
        lost_after: ms(h.lost_after_ms),
        connect_timeout: ms(h.connect_timeout_ms),
        on_disconnect: d.on_disconnect,
        reconnect_interval: ms(h.reconnect_interval_ms),
    }
}

/// The Falcon's settings from `[device.falcon]`, its firmware path resolved
/// from the config's directory.
fn falcon_settings(scene: &Scene) -> Result<FalconSettings, OpenError> {
    let f = &scene.device().falcon;
    let firmware = f
        .firmware
        .as_ref()
        .ok_or_else(|| OpenError::Config("a Falcon needs `device.falcon.firmware`".into()))?;
    Ok(FalconSettings {
        firmware: scene.base().join(firmware),
        index: f.index,
        homing_on_start: f.homing_on_start,
        gravity_compensation_n: f.gravity_compensation_n,
        centre_m: f.centre_m,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn interface(vendor_id: u16, product_id: u16, interface_number: i32) -> HidDeviceInfo {
        HidDeviceInfo {
            vendor_id,
            product_id,
            path: format!("/dev/hidraw{interface_number}"),
            manufacturer: None,
            product: None,
            serial_number: None,
            interface_number,
            usage_page: 1,
            usage: 8,
        }
    }

    fn choose(connected: &[(HidDeviceInfo, Option<&str>)]) -> Result<String, OpenError> {
        let connected: Vec<_> = connected
            .iter()
            .map(|(info, profile)| (info.clone(), profile.map(str::to_owned)))
            .collect();
        only_matching_profile(&connected, Path::new("profiles"))
    }

    #[test]
    fn the_one_matching_device_is_chosen_however_many_interfaces_it_has() {
        let chosen = choose(&[
            (interface(0x046d, 0xc626, 0), Some("spacenavigator")),
            (interface(0x046d, 0xc52b, 1), None),
            (interface(0x046d, 0xc626, 2), Some("spacenavigator")),
        ]);
        assert_eq!(chosen.unwrap(), "spacenavigator");
    }

    #[test]
    fn a_falcon_reads_its_firmware_from_the_config_directory_before_any_usb() {
        let dir = tempfile::tempdir().unwrap();
        let scene = dir.path().join("scene.toml");
        let text = concat!(
            "[[objects]]\nname = \"tool\"\nshape = { kind = \"sphere\", radius_m = 0.02 }\n",
            "role = \"point_shell\"\ntool = true\n\n",
            "[[objects]]\nname = \"wall\"\nshape = { kind = \"box\", half_extents_m = [0.1, 0.1, 0.01] }\n",
            "role = \"field\"\n\n",
            "[device]\nkind = \"falcon\"\n\n[device.falcon]\nfirmware = \"fw/novint.bin\"\nindex = 1\n",
        );
        std::fs::write(&scene, text).unwrap();
        std::fs::create_dir(dir.path().join("fw")).unwrap();
        // An empty image passes the config's existence check and is refused
        // when the device opens, before any USB traffic.
        std::fs::write(dir.path().join("fw/novint.bin"), b"").unwrap();
        let scene = Scene::load(&scene, &haptic_config::Overrides::default()).unwrap();
        let settings = falcon_settings(&scene).unwrap();
        assert_eq!(settings.firmware, dir.path().join("fw/novint.bin"));
        assert_eq!((settings.index, settings.homing_on_start), (1, true));
        let error = open(&scene, Pacing::RealTime, AtEnd::Error).err().unwrap();
        assert!(
            matches!(
                error,
                OpenError::Falcon(FalconError::FirmwareInvalid { .. })
            ),
            "{error}"
        );
        assert!(error.to_string().contains("fw/novint.bin"), "{error}");
    }

    #[test]
    fn no_match_or_several_matches_are_errors_that_say_so() {
        let none = choose(&[(interface(0x046d, 0xc52b, 0), None)]).unwrap_err();
        assert!(matches!(
            none,
            OpenError::NoMatchingDevice { connected: 1, .. }
        ));
        assert!(none.to_string().contains("hapticd devices"), "{none}");
        let several = choose(&[
            (interface(0x256f, 0xc635, 0), Some("spacemouse-compact")),
            (interface(0x046d, 0xc626, 1), Some("spacenavigator")),
        ])
        .unwrap_err();
        let OpenError::SeveralMatchingDevices { profiles } = &several else {
            panic!("{several}");
        };
        assert_eq!(profiles, &["spacemouse-compact", "spacenavigator"]);
        assert!(several.to_string().contains("--profile"), "{several}");
    }
}
