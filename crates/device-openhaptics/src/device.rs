//! A device driven through the HD API's scheduler.
//!
//! The HD API renders forces from its own servo thread: the scheduler
//! (`hdStartScheduler`) runs the registered callbacks once per device tick,
//! and a callback brackets its reads and writes with `hdBeginFrame` /
//! `hdEndFrame`, the frame end being where the force is sent. The HD API
//! documents frames as made inside scheduler callbacks and force output as
//! committed by the scheduler's servo loop, so the servo thread here does
//! not open frames itself: one asynchronous callback ([`Exchange::tick`])
//! publishes each frame's sample to, and takes the newest wrench from, our
//! servo thread through two `haptic_handoff::Latest` buffers — lock-free
//! and allocation-free on both sides — with `catch_unwind` at the C
//! boundary.

use crate::frame;
use crate::hd::{self, ErrorInfo, Hd, Hhd, Library, LoadError};
use haptic_devices::{
    DeviceCapabilities, DeviceError, DeviceSample, DriverMessage, HapticDevice, Wrench,
};
use haptic_handoff::{Latest, LatestReader, LatestWriter};
use nalgebra::Vector3;
use std::ffi::{c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The configuration name of the device the HD API opens by default
/// (`HD_DEFAULT_DEVICE`), as the Touch setup tool names it.
pub const DEFAULT_DEVICE: &str = "Default Device";
/// A sample older than this reads as stale: ten ticks at 1 kHz.
pub const STALE_AFTER: Duration = Duration::from_millis(10);

/// How to open a device.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// libHD (or a directory holding it), tried before `$OH_SDK_BASE`,
    /// `$OPENHAPTICS` and the system's directories.
    pub library: Option<PathBuf>,
    /// The device's configuration name in the Touch setup tool;
    /// [`DEFAULT_DEVICE`] opens the default one.
    pub device_name: String,
    /// Largest force (N); default `HD_NOMINAL_MAX_FORCE`.
    pub max_force: Option<f64>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            library: None,
            device_name: DEFAULT_DEVICE.to_owned(),
            max_force: None,
        }
    }
}

/// Why a device could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Load(#[from] LoadError),
    /// An HD API call failed, with the HD API's error text.
    #[error("{call} failed: {message}")]
    Call {
        call: &'static str,
        message: DriverMessage,
    },
    #[error("device name {0:?} holds a NUL byte")]
    Name(String),
    #[error("{model}: the HD API reports no usable maximum force ({reported} N); set `device.openhaptics.max_force_n`")]
    UnknownForce { model: String, reported: f64 },
}

/// What the HD API reports about the open device.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceInfo {
    /// `HD_DEVICE_MODEL_TYPE`.
    pub model: String,
    /// `HD_INPUT_DOF` and `HD_OUTPUT_DOF`.
    pub input_dof: i32,
    pub output_dof: i32,
    /// `HD_UPDATE_RATE` (Hz).
    pub update_rate: i32,
    /// `HD_NOMINAL_MAX_TORQUE_FORCE` (mN·m) of a device with 6 output DoF
    /// that reports one; torques are written to such a device only.
    pub max_torque_mnm: Option<f64>,
}

/// One frame's readings, in the HD API's units and axes.
#[derive(Clone, Copy, Debug, Default)]
struct Frame {
    /// Frames published; 0 before the first.
    count: u64,
    /// The frame's first error, `HD_SUCCESS` when none.
    error: ErrorInfo,
    position_mm: [f64; 3],
    transform: [f64; 16],
    velocity_mm_s: [f64; 3],
    angular_velocity: [f64; 3],
    /// `HD_CURRENT_GIMBAL_ANGLES` (rad), read on a device with torques.
    gimbal_angles: [f64; 3],
    buttons: c_int,
}

/// What our servo thread asks of the next frames.
#[derive(Clone, Copy, Debug, Default)]
struct Command {
    /// Force output on (after the first valid sample) or off.
    forces: bool,
    /// Force (N), HD axes.
    force: [f64; 3],
    /// Torque on the stylus (N·m), our axes: mapped onto the gimbal's
    /// joints in each frame, at that frame's angles.
    torque: Vector3<f64>,
}

impl Default for ErrorInfo {
    fn default() -> Self {
        ErrorInfo {
            error_code: hd::HD_SUCCESS,
            internal_error_code: 0,
            hhd: 0,
        }
    }
}

/// The scheduler callback's state, owned by the scheduler thread between
/// `hdScheduleAsynchronous` and `hdUnschedule`.
struct Exchange {
    hd: Hd,
    hhd: Hhd,
    frames: LatestWriter<Frame>,
    commands: LatestReader<Command>,
    /// The device takes gimbal torques (6 output DoF).
    torques: bool,
    forces_on: bool,
    count: u64,
}

impl Exchange {
    /// One scheduler tick: read the device, apply the newest command, end
    /// the frame (which sends the force), publish what was read.
    fn tick(&mut self) {
        let hd = self.hd;
        let command = *self.commands.read();
        let mut f = Frame::default();
        // SAFETY: HD calls on the open device, from the scheduler thread,
        // with out-pointers of the sizes each parameter fills.
        unsafe {
            (hd.begin_frame)(self.hhd);
            (hd.get_doublev)(hd::HD_CURRENT_POSITION, f.position_mm.as_mut_ptr());
            (hd.get_doublev)(hd::HD_CURRENT_TRANSFORM, f.transform.as_mut_ptr());
            (hd.get_doublev)(hd::HD_CURRENT_VELOCITY, f.velocity_mm_s.as_mut_ptr());
            (hd.get_doublev)(
                hd::HD_CURRENT_ANGULAR_VELOCITY,
                f.angular_velocity.as_mut_ptr(),
            );
            (hd.get_integerv)(hd::HD_CURRENT_BUTTONS, &mut f.buttons);
            if self.torques {
                (hd.get_doublev)(hd::HD_CURRENT_GIMBAL_ANGLES, f.gimbal_angles.as_mut_ptr());
            }
            if command.forces && !self.forces_on {
                (hd.enable)(hd::HD_FORCE_OUTPUT);
                self.forces_on = true;
            }
            let force = if command.forces {
                command.force
            } else {
                [0.0; 3]
            };
            (hd.set_doublev)(hd::HD_CURRENT_FORCE, force.as_ptr());
            if self.torques {
                let torque = if command.forces {
                    frame::gimbal_torques(&command.torque, &f.transform, f.gimbal_angles)
                } else {
                    [0.0; 3]
                };
                // A NaN angle or transform maps to NaN: nothing then.
                let torque = if finite(&torque) { torque } else { [0.0; 3] };
                (hd.set_doublev)(hd::HD_CURRENT_GIMBAL_TORQUE, torque.as_ptr());
            }
            if !command.forces && self.forces_on {
                (hd.disable)(hd::HD_FORCE_OUTPUT);
                self.forces_on = false;
            }
            (hd.end_frame)(self.hhd);
        }
        f.error = hd.error().unwrap_or_default();
        self.count += 1;
        f.count = self.count;
        self.frames.publish(f);
    }
}

/// The asynchronous callback: one [`Exchange::tick`]. A panic must not
/// unwind into the HD API: it ends the callback, and the frames it stops
/// publishing read as stale, which trips the safety layer.
unsafe extern "C" fn servo_callback(data: *mut c_void) -> hd::CallbackCode {
    // SAFETY: `data` is the `Exchange` registered with this callback, used
    // by the scheduler thread only until it is unscheduled.
    let exchange = unsafe { &mut *(data as *mut Exchange) };
    match catch_unwind(AssertUnwindSafe(|| exchange.tick())) {
        Ok(()) => hd::HD_CALLBACK_CONTINUE,
        Err(_) => hd::HD_CALLBACK_DONE,
    }
}

/// The synchronous shutdown callback: a frame with zero force (and zero
/// gimbal torque on a device with torques), then force output off.
unsafe extern "C" fn zero_force_callback(data: *mut c_void) -> hd::CallbackCode {
    // SAFETY: `data` is the `(Hd, Hhd, bool)` `close` passes, alive for the
    // call.
    let (hd, hhd, torques) = unsafe { *(data as *const (Hd, Hhd, bool)) };
    let _ = catch_unwind(|| unsafe {
        (hd.begin_frame)(hhd);
        (hd.set_doublev)(hd::HD_CURRENT_FORCE, [0.0; 3].as_ptr());
        if torques {
            (hd.set_doublev)(hd::HD_CURRENT_GIMBAL_TORQUE, [0.0; 3].as_ptr());
        }
        (hd.end_frame)(hhd);
        (hd.disable)(hd::HD_FORCE_OUTPUT);
    });
    hd::HD_CALLBACK_DONE
}

/// The scheduler's exchange, handed to it as a raw pointer.
struct Registered(*mut Exchange);
// SAFETY: the pointer is only dereferenced by the scheduler thread while
// registered, and freed by `close` after the scheduler has stopped.
unsafe impl Send for Registered {}

/// A Touch, Touch X or Phantom driven through the HD API's scheduler (see
/// the module's documentation). Forces are enabled only after the first
/// finite sample; dropping the device writes a zero-force frame, disables
/// force output, stops the scheduler and disables the device. A device
/// with 6 output DoF and a nominal maximum torque (a Phantom Premium
/// 6DOF) also renders the torque, as gimbal torques
/// ([`frame::gimbal_torques`]).
///
/// The HD scheduler is one per process: one device of this kind at a time.
pub struct OpenHapticsDevice {
    library: Arc<Library>,
    hhd: Hhd,
    info: DeviceInfo,
    capabilities: DeviceCapabilities,
    frames: LatestReader<Frame>,
    commands: LatestWriter<Command>,
    command: Command,
    registered: Option<(Registered, hd::SchedulerHandle)>,
    opened: Instant,
    /// The newest frame seen, and when it was first seen.
    last_count: u64,
    last_seen: Duration,
    last_error: Option<DriverMessage>,
    open: bool,
}

impl OpenHapticsDevice {
    /// Loads libHD (see [`Library::load`]) and opens the device `settings`
    /// names.
    pub fn open(settings: &Settings) -> Result<Self, OpenError> {
        Self::open_with(
            Arc::new(Library::load(settings.library.as_deref())?),
            settings,
        )
    }

    /// Opens the device through a loaded libHD: initialises it, reads its
    /// description, registers the servo callback and starts the scheduler,
    /// force output off until the first sample.
    pub fn open_with(library: Arc<Library>, settings: &Settings) -> Result<Self, OpenError> {
        let hd = library.hd;
        let check = |call: &'static str| match hd.error() {
            Some(error) => Err(OpenError::Call {
                call,
                message: hd.message(error),
            }),
            None => Ok(()),
        };
        // Errors left from before are not this device's.
        let _ = hd.error();
        let name = if settings.device_name == DEFAULT_DEVICE {
            None
        } else {
            Some(
                CString::new(settings.device_name.as_str())
                    .map_err(|_| OpenError::Name(settings.device_name.clone()))?,
            )
        };
        // SAFETY: a NUL-terminated name, or `HD_DEFAULT_DEVICE` (null).
        let hhd =
            unsafe { (hd.init_device)(name.as_ref().map_or(std::ptr::null(), |n| n.as_ptr())) };
        check("hdInitDevice")?;
        if hhd == hd::HD_INVALID_HANDLE {
            return Err(OpenError::Call {
                call: "hdInitDevice",
                message: DriverMessage::new("invalid device handle"),
            });
        }
        let (frames_in, frames) = Latest::new(&Frame::default()).split();
        let (commands, commands_out) = Latest::new(&Command::default()).split();
        let mut device = OpenHapticsDevice {
            library: library.clone(),
            hhd,
            info: DeviceInfo {
                model: String::new(),
                input_dof: 3,
                output_dof: 3,
                update_rate: 1000,
                max_torque_mnm: None,
            },
            capabilities: DeviceCapabilities {
                name: String::new(),
                input_dof: 3,
                output_dof: 3,
                workspace_half_extents: Vector3::zeros(),
                max_force: 0.0,
                max_torque: 0.0,
                max_stiffness: 0.0,
                native_rate: 1000.0,
            },
            frames,
            commands,
            command: Command::default(),
            registered: None,
            opened: Instant::now(),
            last_count: 0,
            last_seen: Duration::ZERO,
            last_error: None,
            open: true,
        };
        // From here `device` disables the device if a step fails.
        let mut max_force = 0.0;
        let mut stiffness = 0.0;
        let mut workspace = [0.0; 6];
        // SAFETY: queries of the current device with out-pointers of the
        // sizes each fills; the model string is static or null.
        unsafe {
            (hd.make_current_device)(hhd);
            check("hdMakeCurrentDevice")?;
            (hd.disable)(hd::HD_FORCE_OUTPUT);
            check("hdDisable(HD_FORCE_OUTPUT)")?;
            let model = (hd.get_string)(hd::HD_DEVICE_MODEL_TYPE);
            check("hdGetString(HD_DEVICE_MODEL_TYPE)")?;
            device.info.model = if model.is_null() {
                "OpenHaptics device".to_owned()
            } else {
                CStr::from_ptr(model).to_string_lossy().into_owned()
            };
            (hd.get_integerv)(hd::HD_INPUT_DOF, &mut device.info.input_dof);
            (hd.get_integerv)(hd::HD_OUTPUT_DOF, &mut device.info.output_dof);
            (hd.get_integerv)(hd::HD_UPDATE_RATE, &mut device.info.update_rate);
            (hd.get_doublev)(hd::HD_NOMINAL_MAX_FORCE, &mut max_force);
            (hd.get_doublev)(hd::HD_NOMINAL_MAX_STIFFNESS, &mut stiffness);
            (hd.get_doublev)(hd::HD_USABLE_WORKSPACE_DIMENSIONS, workspace.as_mut_ptr());
            check("reading the device's description")?;
            if device.info.output_dof >= 6 {
                device.info.max_torque_mnm = nominal_max_torque(&hd);
            }
        }
        let max_force = match settings.max_force {
            Some(force) => force,
            None if max_force.is_finite() && max_force > 0.0 => max_force,
            None => {
                return Err(OpenError::UnknownForce {
                    model: device.info.model.clone(),
                    reported: max_force,
                })
            }
        };
        if device.info.output_dof >= 6 && device.info.max_torque_mnm.is_none() {
            tracing::warn!(
                device = %device.info.model,
                "6 output DoF but no usable HD_NOMINAL_MAX_TORQUE_FORCE: forces only"
            );
        }
        let max_torque = device.info.max_torque_mnm.map(frame::torque);
        device.capabilities = DeviceCapabilities {
            name: device.info.model.clone(),
            input_dof: if device.info.input_dof >= 6 { 6 } else { 3 },
            output_dof: if max_torque.is_some() { 6 } else { 3 },
            workspace_half_extents: frame::half_extents(workspace),
            max_force,
            max_torque: max_torque.unwrap_or(0.0),
            max_stiffness: frame::stiffness(stiffness),
            native_rate: if device.info.update_rate > 0 {
                device.info.update_rate as f64
            } else {
                1000.0
            },
        };
        let exchange = Box::into_raw(Box::new(Exchange {
            hd,
            hhd,
            frames: frames_in,
            commands: commands_out,
            torques: max_torque.is_some(),
            forces_on: false,
            count: 0,
        }));
        // SAFETY: the callback and its `Exchange`, which `close` frees only
        // after unscheduling it and stopping the scheduler.
        let handle = unsafe {
            (hd.schedule_asynchronous)(
                servo_callback,
                exchange as *mut c_void,
                hd::HD_MAX_SCHEDULER_PRIORITY,
            )
        };
        device.registered = Some((Registered(exchange), handle));
        check("hdScheduleAsynchronous")?;
        // SAFETY: no arguments.
        unsafe { (hd.start_scheduler)() };
        check("hdStartScheduler")?;
        device.opened = Instant::now();
        tracing::info!(
            device = %device.info.model,
            library = %library.path().display(),
            input_dof = device.info.input_dof,
            output_dof = device.info.output_dof,
            "OpenHaptics device open"
        );
        Ok(device)
    }

    /// What the HD API reports about the device.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The library the device is driven through.
    pub fn library(&self) -> &Arc<Library> {
        &self.library
    }

    /// Whether torques are written: 6 output DoF and a nominal maximum
    /// torque.
    pub fn torques(&self) -> bool {
        self.capabilities.output_dof == 6
    }

    /// Whether force output has been asked for (after the first finite
    /// sample).
    pub fn forces_enabled(&self) -> bool {
        self.command.forces
    }

    /// Scheduler frames published so far.
    pub fn frames(&mut self) -> u64 {
        self.frames.read().count
    }

    /// The HD API's text of the last error a frame reported, the device's
    /// loss included.
    pub fn last_error(&self) -> Option<&DriverMessage> {
        self.last_error.as_ref()
    }

    /// A zero-force frame and force output off (synchronously, in the
    /// scheduler), then the callback unscheduled, the scheduler stopped and
    /// the device disabled; errors ignored (a lost device refuses them).
    /// Idempotent.
    fn close(&mut self) {
        if !self.open {
            return;
        }
        self.open = false;
        self.command = Command::default();
        self.commands.publish(self.command);
        let hd = self.library.hd;
        let mut zero = (hd, self.hhd, self.torques());
        // SAFETY: the callbacks' contracts above; `exchange` is freed after
        // the scheduler that used it has stopped.
        unsafe {
            if let Some((Registered(exchange), handle)) = self.registered.take() {
                (hd.schedule_synchronous)(
                    zero_force_callback,
                    &mut zero as *mut (Hd, Hhd, bool) as *mut c_void,
                    hd::HD_MAX_SCHEDULER_PRIORITY,
                );
                (hd.unschedule)(handle);
                (hd.stop_scheduler)();
                drop(Box::from_raw(exchange));
            }
            (hd.make_current_device)(self.hhd);
            (hd.disable)(hd::HD_FORCE_OUTPUT);
            (hd.disable_device)(self.hhd);
        }
        let _ = hd.error();
    }
}

fn finite(values: &[f64]) -> bool {
    values.iter().all(|v| v.is_finite())
}

/// `HD_NOMINAL_MAX_TORQUE_FORCE` (mN·m), where the device defines it: the
/// smallest finite positive value it writes (one, or one per gimbal
/// joint); `None` when the query fails or gives none, its error drained.
fn nominal_max_torque(hd: &Hd) -> Option<f64> {
    let mut values = [f64::NAN; 3];
    // SAFETY: a query of the current device with room for three values.
    unsafe { (hd.get_doublev)(hd::HD_NOMINAL_MAX_TORQUE_FORCE, values.as_mut_ptr()) };
    if hd.error().is_some() {
        return None;
    }
    values
        .into_iter()
        .filter(|v| v.is_finite() && *v > 0.0)
        .reduce(f64::min)
}

impl HapticDevice for OpenHapticsDevice {
    fn capabilities(&self) -> &DeviceCapabilities {
        &self.capabilities
    }

    /// The newest frame's sample. `Stale` before the first frame and when
    /// no new frame came for [`STALE_AFTER`]; `Disconnected` when the frame
    /// reported a lost device; the HD API's error text for another error.
    /// Asks for force output after the first finite sample.
    fn read(&mut self) -> Result<DeviceSample, DeviceError> {
        if !self.open {
            return Err(DeviceError::Disconnected);
        }
        let now = self.opened.elapsed();
        let f = *self.frames.read();
        if f.count == 0 {
            return Err(DeviceError::Stale { age: now });
        }
        if f.count != self.last_count {
            self.last_count = f.count;
            self.last_seen = now;
        }
        let age = now.saturating_sub(self.last_seen);
        if age > STALE_AFTER {
            return Err(DeviceError::Stale { age });
        }
        if f.error.error_code != hd::HD_SUCCESS {
            let message = self.library.hd.message(f.error);
            self.last_error = Some(message);
            return Err(if hd::GONE.contains(&f.error.error_code) {
                DeviceError::Disconnected
            } else {
                DeviceError::Driver {
                    call: "hdEndFrame",
                    message,
                }
            });
        }
        if !(finite(&f.position_mm)
            && finite(&f.transform)
            && finite(&f.velocity_mm_s)
            && finite(&f.angular_velocity))
        {
            return Err(DeviceError::SampleNotFinite);
        }
        if !self.command.forces {
            self.command.forces = true;
            self.commands.publish(self.command);
        }
        Ok(DeviceSample {
            timestamp: self.last_seen,
            position: frame::position(f.position_mm),
            orientation: frame::orientation(&f.transform),
            buttons: f.buttons as u32,
            linear_velocity: Some(frame::velocity(f.velocity_mm_s)),
            angular_velocity: (self.info.input_dof >= 6)
                .then(|| frame::angular_velocity(f.angular_velocity)),
        })
    }

    /// Hands the wrench to the scheduler's next frame: the force, and on a
    /// device with torques the torque, which the frame maps onto the
    /// gimbal's joints at its own angles; else the torque is not rendered.
    fn write(&mut self, wrench: &Wrench) -> Result<(), DeviceError> {
        if !self.open {
            return Err(DeviceError::Disconnected);
        }
        if !wrench.is_finite() {
            return Err(DeviceError::WrenchNotFinite);
        }
        self.command.force = frame::force(&wrench.force);
        self.command.torque = wrench.torque;
        self.commands.publish(self.command);
        Ok(())
    }
}

impl Drop for OpenHapticsDevice {
    fn drop(&mut self) {
        self.close();
    }
}
