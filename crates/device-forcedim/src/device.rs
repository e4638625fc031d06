//! A Force Dimension device driven through the SDK.

use crate::models::nominal;
use crate::sdk::{LoadError, Sdk};
use haptic_devices::{
    DeviceCapabilities, DeviceError, DeviceSample, DriverMessage, HapticDevice, Wrench,
};
use nalgebra::{Matrix3, Point3, Rotation3, UnitQuaternion, Vector3};
use std::ffi::{c_char, c_int, CStr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `dhdc.h`'s `DHD_ON` and `DHD_OFF`.
const ON: c_int = 1;
const OFF: c_int = 0;
/// `dhdSetForce…`'s positive return when a motor saturated
/// (`DHD_MOTOR_SATURATED`); not an error.
const MOTOR_SATURATED: c_int = 2;
/// The error codes that mean the device is gone: `DHD_ERROR_COM` (the USB
/// link failed), `DHD_ERROR_NO_DEVICE_FOUND` and `DHD_ERROR_INVALID_INDEX`
/// (its ID no longer names a device).
const GONE: [c_int; 3] = [2, 5, 15];
/// The watchdog's unit (`dhdSetWatchdog`): 125 µs.
pub const WATCHDOG_UNIT: Duration = Duration::from_micros(125);

/// How to open and run a device.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// The SDK library (or a directory holding it), tried before
    /// `$FORCEDIM_SDK` and the system's directories.
    pub library: Option<PathBuf>,
    /// Which connected device (0 = the first the SDK lists).
    pub device_index: u8,
    /// The SDK's gravity compensation of the arm's own weight. Default on:
    /// the handle floats where the hand leaves it.
    pub gravity_compensation: bool,
    /// Initialise (calibrate) the device with `drdAutoInit` when the
    /// robotic SDK says it is not. Default on; needs `libdrd`.
    pub auto_init: bool,
    /// The device's watchdog: forces off when no force command comes for
    /// this long. Default 10 ms, ten 1 kHz ticks, as long as the safety
    /// layer waits for a stale sample; zero turns it off; at most
    /// 255 × 125 µs = 31.875 ms.
    pub watchdog: Duration,
    /// The velocity threshold above which the device brakes, in the SDK's
    /// device-dependent units. Default none: the factory setting stays.
    pub velocity_threshold: Option<u32>,
    /// Largest force (N); default the SDK's limit, else the model's
    /// nominal continuous force.
    pub max_force: Option<f64>,
    /// Largest torque (N·m) of an actuated wrist; default as `max_force`.
    pub max_torque: Option<f64>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            library: None,
            device_index: 0,
            gravity_compensation: true,
            auto_init: true,
            watchdog: Duration::from_millis(10),
            velocity_threshold: None,
            max_force: None,
            max_torque: None,
        }
    }
}

impl Settings {
    /// The watchdog in the SDK's 125 µs units, rounded to the nearest;
    /// `None` beyond its 255 units.
    pub fn watchdog_units(&self) -> Option<u8> {
        let units = (self.watchdog.as_secs_f64() / WATCHDOG_UNIT.as_secs_f64()).round();
        (units <= 255.0).then_some(units as u8)
    }
}

/// Why a device could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("no Force Dimension device {index}: the SDK ({}) sees {count} connected", .library.display())]
    NoDevice {
        index: u8,
        count: usize,
        library: PathBuf,
    },
    /// An SDK call failed, with the SDK's error text.
    #[error("{call} failed: {message}")]
    Call { call: &'static str, message: String },
    #[error("auto_init needs the robotic SDK to check and initialise the device, and {} has no `drdAutoInit`: point `device.forcedim.library` at libdrd, or set `auto_init = false` for a device that is initialised otherwise", .library.display())]
    NoRoboticSdk { library: PathBuf },
    /// Met when reconnecting: the device lost its initialisation (it was
    /// power-cycled), and `drdAutoInit` moves the arm, so it runs only when
    /// the device is first opened.
    #[error("the device needs initialising again (power-cycled?); drdAutoInit moves the arm, so it runs only at start-up: restart to initialise it")]
    NotInitialised,
    #[error("the watchdog can be at most 255 × 125 µs = 31.875 ms, not {0:?}")]
    Watchdog(Duration),
    #[error("{name} (system type {system_type}): the SDK reports no force limit and its nominal force is not known here; set `device.forcedim.max_force_n`")]
    UnknownForce { name: String, system_type: i32 },
}

/// What the SDK reports about an open device.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceInfo {
    /// `dhdGetSystemType`'s `DHD_DEVICE_*` code.
    pub system_type: i32,
    /// `dhdGetSystemName`.
    pub name: String,
    /// Orientation sensed.
    pub wrist: bool,
    /// Orientation actuated (torque output).
    pub active_wrist: bool,
    pub gripper: bool,
    pub left_handed: bool,
    /// Initialised by `drdAutoInit` when opened.
    pub auto_initialised: bool,
    /// The velocity threshold in force, when the SDK reports it.
    pub velocity_threshold: Option<u32>,
}

/// A Force Dimension device: one consistent sample per read (position and
/// orientation frame in one call, then velocities, buttons and gripper),
/// force, torque and gripper force in one call per write.
///
/// Forces are enabled only after the first finite sample; dropping the
/// device zeroes the force, engages the brakes, disables forces and closes
/// it. The gripper angle is kept here ([`Self::gripper_angle_rad`]): the
/// shared sample has no place for it.
pub struct ForceDimensionDevice {
    sdk: Arc<Sdk>,
    settings: Settings,
    id: c_char,
    /// Opened through `drdOpenID`, closed through `drdClose`.
    robotic: bool,
    open: bool,
    info: DeviceInfo,
    capabilities: DeviceCapabilities,
    opened: Instant,
    forces_on: bool,
    gripper_angle: Option<f64>,
    saturated_writes: u64,
    last_error: Option<DriverMessage>,
}

/// A device the SDK lists.
#[derive(Clone, Debug, PartialEq)]
pub struct ListedDevice {
    pub index: u8,
    /// `None` when the device could not be opened (held by another
    /// program, say); then the SDK's error text.
    pub info: Result<DeviceInfo, String>,
}

/// Every device the SDK sees, each opened briefly for its name.
pub fn list_devices(sdk: &Sdk) -> Result<Vec<ListedDevice>, String> {
    let count = sdk.device_count()?;
    Ok((0..count.min(127) as u8)
        .map(|index| {
            let id = index as c_char;
            // SAFETY: plain SDK calls on a device ID.
            let info = unsafe {
                let opened = (sdk.dhd.open_id)(id);
                if opened < 0 {
                    Err(sdk.last_error_text())
                } else {
                    let info = describe(sdk, opened as c_char, false, None);
                    (sdk.dhd.close)(opened as c_char);
                    Ok(info)
                }
            };
            ListedDevice { index, info }
        })
        .collect())
}

/// The SDK's description of open device `id`.
unsafe fn describe(
    sdk: &Sdk,
    id: c_char,
    auto_initialised: bool,
    velocity_threshold: Option<u32>,
) -> DeviceInfo {
    let d = &sdk.dhd;
    // SAFETY: calls on an open device; the name is a static C string.
    unsafe {
        let system_type = (d.get_system_type)(id);
        let name = (d.get_system_name)(id);
        let name = if name.is_null() {
            format!("Force Dimension device (system type {system_type})")
        } else {
            CStr::from_ptr(name).to_string_lossy().into_owned()
        };
        DeviceInfo {
            system_type,
            name,
            wrist: (d.has_wrist)(id),
            active_wrist: (d.has_active_wrist)(id),
            gripper: (d.has_gripper)(id),
            left_handed: (d.is_left_handed)(id),
            auto_initialised,
            velocity_threshold,
        }
    }
}

impl ForceDimensionDevice {
    /// Loads the SDK (see [`Sdk::load`]) and opens the device `settings`
    /// name.
    pub fn open(settings: &Settings) -> Result<Self, OpenError> {
        let sdk = Arc::new(Sdk::load(settings.library.as_deref())?);
        Self::open_with(sdk, settings)
    }

    /// Opens a device through an SDK already loaded: initialises it if
    /// needed and allowed, sets gravity compensation, the watchdog and the
    /// velocity threshold, and leaves forces off until the first sample.
    pub fn open_with(sdk: Arc<Sdk>, settings: &Settings) -> Result<Self, OpenError> {
        Self::open_inner(sdk, settings, true)
    }

    /// [`Self::open_with`]; `may_initialise` false refuses a device that
    /// needs initialising instead of running `drdAutoInit`.
    fn open_inner(
        sdk: Arc<Sdk>,
        settings: &Settings,
        may_initialise: bool,
    ) -> Result<Self, OpenError> {
        let watchdog = settings
            .watchdog_units()
            .ok_or(OpenError::Watchdog(settings.watchdog))?;
        let count = sdk.device_count().map_err(|message| OpenError::Call {
            call: "dhdGetDeviceCount",
            message,
        })?;
        if settings.device_index as usize >= count {
            return Err(OpenError::NoDevice {
                index: settings.device_index,
                count,
                library: sdk.path().to_owned(),
            });
        }
        let index = settings.device_index as c_char;
        let call = |call: &'static str, result: c_int| {
            if result < 0 {
                Err(OpenError::Call {
                    call,
                    message: sdk.last_error_text(),
                })
            } else {
                Ok(result)
            }
        };
        let (id, robotic, auto_initialised) = if settings.auto_init {
            let drd = sdk.drd.ok_or_else(|| OpenError::NoRoboticSdk {
                library: sdk.path().to_owned(),
            })?;
            // SAFETY: the robotic SDK's calls on a device index and its ID.
            unsafe {
                let id = call("drdOpenID", (drd.open_id)(index))? as c_char;
                let mut initialised = false;
                if (drd.is_supported)(id) {
                    if !(drd.is_initialized)(id) {
                        if !may_initialise {
                            (drd.close)(id);
                            return Err(OpenError::NotInitialised);
                        }
                        if let Err(error) = call("drdAutoInit", (drd.auto_init)(id)) {
                            (drd.close)(id);
                            return Err(error);
                        }
                        initialised = true;
                    }
                    // Ends the robotic SDK's regulation, forces off: the
                    // servo commands the device from here on.
                    if let Err(error) = call("drdStop", (drd.stop)(false, id)) {
                        (drd.close)(id);
                        return Err(error);
                    }
                }
                (id, true, initialised)
            }
        } else {
            // SAFETY: a device index.
            (
                call("dhdOpenID", unsafe { (sdk.dhd.open_id)(index) })? as c_char,
                false,
                false,
            )
        };
        let mut device = ForceDimensionDevice {
            sdk: sdk.clone(),
            settings: settings.clone(),
            id,
            robotic,
            open: true,
            info: DeviceInfo {
                system_type: 0,
                name: String::new(),
                wrist: false,
                active_wrist: false,
                gripper: false,
                left_handed: false,
                auto_initialised,
                velocity_threshold: None,
            },
            capabilities: DeviceCapabilities {
                name: String::new(),
                input_dof: 3,
                output_dof: 3,
                workspace_half_extents: Vector3::zeros(),
                max_force: 0.0,
                max_torque: 0.0,
                max_stiffness: 0.0,
                native_rate: 0.0,
            },
            opened: Instant::now(),
            forces_on: false,
            gripper_angle: None,
            saturated_writes: 0,
            last_error: None,
        };
        // From here `device` closes the device if a step fails.
        let d = &sdk.dhd;
        // SAFETY: calls on the open device `id`.
        unsafe {
            call("dhdEnableForce", (d.enable_force)(OFF as u8, id))?;
            let gravity = if settings.gravity_compensation {
                ON
            } else {
                OFF
            };
            call(
                "dhdSetGravityCompensation",
                (d.set_gravity_compensation)(gravity, id),
            )?;
            call("dhdEnableExpertMode", (d.enable_expert_mode)())?;
            let expert = (|| {
                call("dhdSetWatchdog", (d.set_watchdog)(watchdog, id))?;
                if let Some(threshold) = settings.velocity_threshold {
                    call(
                        "dhdSetVelocityThreshold",
                        (d.set_velocity_threshold)(threshold, id),
                    )?;
                }
                let mut threshold = 0;
                let known = (d.get_velocity_threshold)(&mut threshold, id) >= 0;
                Ok::<_, OpenError>(known.then_some(threshold))
            })();
            (d.disable_expert_mode)();
            let threshold = expert?;
            device.info = describe(&sdk, id, auto_initialised, threshold);
        }
        device.capabilities = device.capabilities_from_sdk()?;
        tracing::info!(
            device = %device.info.name,
            library = %sdk.path().display(),
            auto_initialised,
            watchdog_ms = watchdog as f64 * WATCHDOG_UNIT.as_secs_f64() * 1e3,
            velocity_threshold = ?device.info.velocity_threshold,
            "Force Dimension device open"
        );
        Ok(device)
    }

    fn capabilities_from_sdk(&self) -> Result<DeviceCapabilities, OpenError> {
        let info = &self.info;
        let nominal = nominal(info.system_type);
        // SAFETY: queries of the open device.
        let (sdk_force, sdk_torque) = unsafe {
            (
                (self.sdk.dhd.get_max_force)(self.id),
                (self.sdk.dhd.get_max_torque)(self.id),
            )
        };
        // The SDK's limits are negative while none is set.
        let limit = |set: Option<f64>, sdk: f64, nominal: Option<f64>| {
            set.or((sdk >= 0.0).then_some(sdk)).or(nominal)
        };
        let max_force = limit(self.settings.max_force, sdk_force, nominal.map(|n| n.force))
            .ok_or_else(|| OpenError::UnknownForce {
                name: info.name.clone(),
                system_type: info.system_type,
            })?;
        let max_torque = if info.active_wrist {
            limit(
                self.settings.max_torque,
                sdk_torque,
                nominal.map(|n| n.torque),
            )
            .unwrap_or(0.0)
        } else {
            0.0
        };
        Ok(DeviceCapabilities {
            name: info.name.clone(),
            input_dof: if info.wrist { 6 } else { 3 },
            output_dof: if info.active_wrist && max_torque > 0.0 {
                6
            } else {
                3
            },
            // An unknown model: a desk-top device's ±0.1 m.
            workspace_half_extents: nominal.map_or(Vector3::repeat(0.1), |n| n.half_extents),
            max_force,
            max_torque,
            // A stiff but stable wall at 1 kHz, as for the simulated device.
            max_stiffness: 2000.0,
            // Each read is one transaction with the device, at the servo's
            // rate.
            native_rate: 1000.0,
        })
    }

    /// Closes the device and opens it again with the same settings through
    /// the same SDK: the safety layer's reconnection. It never initialises:
    /// a device that needs it stays closed ([`OpenError::NotInitialised`]).
    pub fn reopen(&mut self) -> Result<(), DeviceError> {
        self.close();
        match Self::open_inner(self.sdk.clone(), &self.settings, false) {
            Ok(device) => {
                *self = device;
                Ok(())
            }
            Err(OpenError::NoDevice { .. }) => Err(DeviceError::Disconnected),
            Err(OpenError::Call { call, message }) => Err(DeviceError::Driver {
                call,
                message: DriverMessage::new(&message),
            }),
            Err(other) => Err(DeviceError::Driver {
                call: "reopening the device",
                message: DriverMessage::new(&other.to_string()),
            }),
        }
    }

    /// Zero force, brakes on, forces off, closed; errors ignored (a lost
    /// device refuses them). Idempotent.
    fn close(&mut self) {
        if !self.open {
            return;
        }
        self.open = false;
        self.forces_on = false;
        let (d, id) = (&self.sdk.dhd, self.id);
        // SAFETY: calls on the device opened as `id`.
        unsafe {
            (d.set_force_and_torque_and_gripper_force)(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, id);
            (d.set_brakes)(ON, id);
            (d.enable_force)(OFF as u8, id);
            match (self.robotic, self.sdk.drd) {
                (true, Some(drd)) => (drd.close)(id),
                _ => (d.close)(id),
            };
        }
    }

    /// What the SDK reports about the device.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The SDK the device is driven through.
    pub fn sdk(&self) -> &Arc<Sdk> {
        &self.sdk
    }

    /// The gripper's opening angle at the last read (rad), for a device with
    /// a gripper.
    pub fn gripper_angle_rad(&self) -> Option<f64> {
        self.gripper_angle
    }

    /// Whether forces have been enabled (after the first finite sample).
    pub fn forces_enabled(&self) -> bool {
        self.forces_on
    }

    /// Writes whose force a motor could not fully render.
    pub fn saturated_writes(&self) -> u64 {
        self.saturated_writes
    }

    /// The SDK's text of the last failed call, the device's loss included.
    pub fn last_error(&self) -> Option<&DriverMessage> {
        self.last_error.as_ref()
    }

    /// `Ok` for a non-negative SDK return; else `Disconnected` for the
    /// codes of a lost device, or the SDK's error text. Allocates nothing.
    fn check(&mut self, call: &'static str, result: c_int) -> Result<c_int, DeviceError> {
        if result >= 0 {
            return Ok(result);
        }
        // SAFETY: no arguments.
        let code = unsafe { (self.sdk.dhd.error_get_last)() };
        let message = self.sdk.last_error_message();
        self.last_error = Some(message);
        if GONE.contains(&code) {
            Err(DeviceError::Disconnected)
        } else {
            Err(DeviceError::Driver { call, message })
        }
    }
}

fn finite(values: &[f64]) -> bool {
    values.iter().all(|v| v.is_finite())
}

impl HapticDevice for ForceDimensionDevice {
    fn capabilities(&self) -> &DeviceCapabilities {
        &self.capabilities
    }

    /// Position and orientation frame in one call, then the velocities,
    /// buttons and gripper; enables forces after the first finite sample.
    fn read(&mut self) -> Result<DeviceSample, DeviceError> {
        if !self.open {
            return Err(DeviceError::Disconnected);
        }
        let (d, id) = (self.sdk.dhd, self.id);
        let mut p = [0.0; 3];
        let mut r = [[0.0; 3]; 3];
        let mut v = [0.0; 3];
        let mut w = [0.0; 3];
        let [px, py, pz] = &mut p;
        // SAFETY: valid out-pointers, the open device.
        let result = unsafe { (d.get_position_and_orientation_frame)(px, py, pz, &mut r, id) };
        self.check("dhdGetPositionAndOrientationFrame", result)?;
        let [vx, vy, vz] = &mut v;
        let result = unsafe { (d.get_linear_velocity)(vx, vy, vz, id) };
        self.check("dhdGetLinearVelocity", result)?;
        if self.info.wrist {
            let [wx, wy, wz] = &mut w;
            let result = unsafe { (d.get_angular_velocity_rad)(wx, wy, wz, id) };
            self.check("dhdGetAngularVelocityRad", result)?;
        }
        let buttons = unsafe { (d.get_button_mask)(id) };
        if self.info.gripper {
            let mut angle = 0.0;
            let result = unsafe { (d.get_gripper_angle_rad)(&mut angle, id) };
            self.check("dhdGetGripperAngleRad", result)?;
            if !angle.is_finite() {
                return Err(DeviceError::SampleNotFinite);
            }
            self.gripper_angle = Some(angle);
        }
        let timestamp = self.opened.elapsed();
        if !(finite(&p) && finite(r.as_flattened()) && finite(&v) && finite(&w)) {
            return Err(DeviceError::SampleNotFinite);
        }
        // `r[i][j]` is row i, column j: the columns are the handle's axes
        // in the device frame.
        let frame = Matrix3::from_fn(|i, j| r[i][j]);
        let orientation =
            UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(frame));
        if !self.forces_on {
            // SAFETY: the open device.
            let result = unsafe { (d.enable_force)(ON as u8, id) };
            self.check("dhdEnableForce", result)?;
            self.forces_on = true;
        }
        Ok(DeviceSample {
            timestamp,
            position: Point3::from(p),
            orientation,
            buttons,
            linear_velocity: Some(Vector3::from(v)),
            angular_velocity: self.info.wrist.then(|| Vector3::from(w)),
        })
    }

    /// Force, torque and a zero gripper force in one call; nothing before
    /// forces are enabled.
    fn write(&mut self, wrench: &Wrench) -> Result<(), DeviceError> {
        if !self.open {
            return Err(DeviceError::Disconnected);
        }
        if !wrench.is_finite() {
            return Err(DeviceError::WrenchNotFinite);
        }
        if !self.forces_on {
            return Ok(());
        }
        let (f, t) = (wrench.force, wrench.torque);
        // SAFETY: the open device.
        let result = unsafe {
            (self.sdk.dhd.set_force_and_torque_and_gripper_force)(
                f.x, f.y, f.z, t.x, t.y, t.z, 0.0, self.id,
            )
        };
        if self.check("dhdSetForceAndTorqueAndGripperForce", result)? == MOTOR_SATURATED {
            self.saturated_writes += 1;
        }
        Ok(())
    }
}

impl Drop for ForceDimensionDevice {
    fn drop(&mut self) {
        self.close();
    }
}
