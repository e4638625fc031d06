//! A simulated OpenHaptics HD library for tests: the HD API's C functions
//! (`hdInitDevice`, the scheduler, frames, parameters, errors) over one
//! device, a point mass on a spring and damper in the HD API's frame and
//! units (mm, N; x right, y up, z toward the user).
//!
//! `hdStartScheduler` starts a thread that, every millisecond, advances the
//! mass by 1 ms under the force committed by the last `hdEndFrame` and then
//! calls every asynchronous callback. `hdScheduleSynchronous` runs its
//! callback between two scheduler ticks (on the caller's thread, which the
//! tests cannot tell apart). `ohsim_*` hooks reset the simulation, change
//! its dynamics and pose, make the device vanish and inject NaN.

#![allow(clippy::missing_safety_doc)]

use std::ffi::{c_char, c_int, c_uint, c_ulong, c_ushort, c_void, CStr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

type Hhd = c_uint;
type HdEnum = c_uint;
type Callback = unsafe extern "C" fn(*mut c_void) -> c_uint;

const HD_SUCCESS: c_uint = 0;
const HD_INVALID_ENUM: c_uint = 0x0100;
const HD_INVALID_VALUE: c_uint = 0x0101;
const HD_BAD_HANDLE: c_uint = 0x0104;
const HD_DEVICE_ALREADY_INITIATED: c_uint = 0x0301;
const HD_COMM_ERROR: c_uint = 0x0302;
const HD_COMM_CONFIG_ERROR: c_uint = 0x0303;
const HD_ILLEGAL_BEGIN: c_uint = 0x0400;
const HD_ILLEGAL_END: c_uint = 0x0401;
const HD_INVALID_HANDLE: Hhd = 0xFFFF_FFFF;
const HD_CALLBACK_DONE: c_uint = 0;

const HD_CURRENT_BUTTONS: HdEnum = 0x2000;
const HD_CURRENT_POSITION: HdEnum = 0x2050;
const HD_CURRENT_VELOCITY: HdEnum = 0x2051;
const HD_CURRENT_TRANSFORM: HdEnum = 0x2052;
const HD_CURRENT_ANGULAR_VELOCITY: HdEnum = 0x2053;
const HD_DEVICE_MODEL_TYPE: HdEnum = 0x2501;
const HD_USABLE_WORKSPACE_DIMENSIONS: HdEnum = 0x2551;
const HD_INPUT_DOF: HdEnum = 0x2553;
const HD_OUTPUT_DOF: HdEnum = 0x2554;
const HD_UPDATE_RATE: HdEnum = 0x2600;
const HD_NOMINAL_MAX_STIFFNESS: HdEnum = 0x2602;
const HD_NOMINAL_MAX_FORCE: HdEnum = 0x2603;
const HD_CURRENT_FORCE: HdEnum = 0x2700;
const HD_CURRENT_GIMBAL_TORQUE: HdEnum = 0x2704;
const HD_FORCE_OUTPUT: HdEnum = 0x4000;

/// The configuration name the simulated device answers to, besides
/// `HD_DEFAULT_DEVICE` (null).
pub const DEVICE_NAME: &str = "Default Device";
/// The simulated scheduler's period.
pub const TICK: Duration = Duration::from_millis(1);

/// The simulation's state, for the tests (`ohsim_state`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OhsimState {
    /// Handle position (mm) and velocity (mm/s), HD axes.
    pub position_mm: [f64; 3],
    pub velocity_mm_s: [f64; 3],
    /// The force acting on the mass: the last committed while force
    /// output is enabled, else zero (N).
    pub force_n: [f64; 3],
    /// The last gimbal torque set (mN·m).
    pub gimbal_torque_mnm: [f64; 3],
    /// Scheduler ticks since the reset.
    pub ticks: u64,
    /// Frames ended since the reset.
    pub frames: u64,
    /// Asynchronous callbacks registered.
    pub callbacks: u32,
    pub device_initialised: bool,
    pub force_output: bool,
    pub scheduler_running: bool,
    /// `hdDisable(HD_FORCE_OUTPUT)` calls since the reset.
    pub force_output_disables: u32,
}

struct Sim {
    state: OhsimState,
    /// m (kg), k (N/m), c (N·s/m), in SI; position rest at the origin.
    mass: f64,
    stiffness: f64,
    damping: f64,
    /// The force set in the open frame (N), committed by `hdEndFrame`.
    pending_force: [f64; 3],
    /// Rotation, column-major, HD axes.
    rotation: [f64; 9],
    buttons: c_int,
    six_dof: bool,
    in_frame: bool,
    vanished: bool,
    nan_frames: u32,
    error: Option<(c_uint, c_int)>,
}

impl Sim {
    const fn new() -> Sim {
        Sim {
            state: OhsimState {
                position_mm: [0.0; 3],
                velocity_mm_s: [0.0; 3],
                force_n: [0.0; 3],
                gimbal_torque_mnm: [0.0; 3],
                ticks: 0,
                frames: 0,
                callbacks: 0,
                device_initialised: false,
                force_output: false,
                scheduler_running: false,
                force_output_disables: 0,
            },
            mass: 0.05,
            stiffness: 200.0,
            damping: 5.0,
            pending_force: [0.0; 3],
            rotation: [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
            buttons: 0,
            six_dof: false,
            in_frame: false,
            vanished: false,
            nan_frames: 0,
            error: None,
        }
    }

    fn fail(&mut self, code: c_uint) {
        if self.error.is_none() {
            self.error = Some((code, -(code as c_int)));
        }
    }

    /// One 1 ms step of m·a = F − k·x − c·v (semi-implicit Euler), in SI.
    fn advance(&mut self) {
        let dt = TICK.as_secs_f64();
        let s = &mut self.state;
        for i in 0..3 {
            let x = s.position_mm[i] * 1e-3;
            let v = s.velocity_mm_s[i] * 1e-3;
            let a = (s.force_n[i] - self.stiffness * x - self.damping * v) / self.mass;
            let v = v + a * dt;
            s.velocity_mm_s[i] = v * 1e3;
            s.position_mm[i] = (x + v * dt) * 1e3;
        }
        s.ticks += 1;
    }
}

static SIM: Mutex<Sim> = Mutex::new(Sim::new());
/// The registered asynchronous callbacks: (handle, callback, user data).
static CALLBACKS: Mutex<Vec<(c_ulong, Callback, usize)>> = Mutex::new(Vec::new());
static NEXT_HANDLE: Mutex<c_ulong> = Mutex::new(1);
static RUNNING: AtomicBool = AtomicBool::new(false);
static SCHEDULER: Mutex<Option<JoinHandle<()>>> = Mutex::new(None);

fn sim() -> MutexGuard<'static, Sim> {
    SIM.lock().unwrap_or_else(|p| p.into_inner())
}

fn callbacks() -> MutexGuard<'static, Vec<(c_ulong, Callback, usize)>> {
    CALLBACKS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Copies `values` to `out`; NaN instead while NaN frames are pending.
unsafe fn store(out: *mut f64, values: &[f64], nan: bool) {
    for (i, v) in values.iter().enumerate() {
        unsafe { *out.add(i) = if nan { f64::NAN } else { *v } };
    }
}

/// `HDErrorInfo`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HdErrorInfo {
    pub error_code: c_uint,
    pub internal_error_code: c_int,
    pub hhd: Hhd,
}

#[no_mangle]
pub unsafe extern "C" fn hdInitDevice(name: *const c_char) -> Hhd {
    let mut s = sim();
    if !name.is_null() && unsafe { CStr::from_ptr(name) }.to_bytes() != DEVICE_NAME.as_bytes() {
        s.fail(HD_COMM_CONFIG_ERROR);
        return HD_INVALID_HANDLE;
    }
    if s.vanished {
        s.fail(HD_COMM_ERROR);
        return HD_INVALID_HANDLE;
    }
    if s.state.device_initialised {
        s.fail(HD_DEVICE_ALREADY_INITIATED);
        return HD_INVALID_HANDLE;
    }
    s.state.device_initialised = true;
    0
}

#[no_mangle]
pub extern "C" fn hdDisableDevice(hhd: Hhd) {
    let mut s = sim();
    if hhd != 0 || !s.state.device_initialised {
        s.fail(HD_BAD_HANDLE);
        return;
    }
    s.state.device_initialised = false;
    s.state.force_output = false;
    s.state.force_n = [0.0; 3];
}

#[no_mangle]
pub extern "C" fn hdMakeCurrentDevice(hhd: Hhd) {
    let mut s = sim();
    if hhd != 0 || !s.state.device_initialised {
        s.fail(HD_BAD_HANDLE);
    }
}

#[no_mangle]
pub extern "C" fn hdBeginFrame(hhd: Hhd) {
    let mut s = sim();
    if hhd != 0 || !s.state.device_initialised {
        s.fail(HD_BAD_HANDLE);
    } else if s.in_frame {
        s.fail(HD_ILLEGAL_BEGIN);
    } else {
        s.in_frame = true;
        if s.vanished {
            s.fail(HD_COMM_ERROR);
        }
    }
}

#[no_mangle]
pub extern "C" fn hdEndFrame(hhd: Hhd) {
    let mut s = sim();
    if hhd != 0 || !s.in_frame {
        s.fail(HD_ILLEGAL_END);
        return;
    }
    s.in_frame = false;
    s.state.frames += 1;
    s.nan_frames = s.nan_frames.saturating_sub(1);
    if s.vanished {
        s.fail(HD_COMM_ERROR);
        s.state.force_n = [0.0; 3];
        return;
    }
    s.state.force_n = if s.state.force_output {
        s.pending_force
    } else {
        [0.0; 3]
    };
}

#[no_mangle]
pub extern "C" fn hdEnable(cap: HdEnum) {
    let mut s = sim();
    match cap {
        HD_FORCE_OUTPUT => s.state.force_output = true,
        _ => s.fail(HD_INVALID_ENUM),
    }
}

#[no_mangle]
pub extern "C" fn hdDisable(cap: HdEnum) {
    let mut s = sim();
    match cap {
        HD_FORCE_OUTPUT => {
            s.state.force_output = false;
            s.state.force_output_disables += 1;
        }
        _ => s.fail(HD_INVALID_ENUM),
    }
}

#[no_mangle]
pub unsafe extern "C" fn hdGetDoublev(param: HdEnum, out: *mut f64) {
    let mut s = sim();
    let nan = s.nan_frames > 0;
    let p = s.state.position_mm;
    unsafe {
        match param {
            HD_CURRENT_POSITION => store(out, &p, nan),
            HD_CURRENT_VELOCITY => store(out, &s.state.velocity_mm_s, false),
            HD_CURRENT_ANGULAR_VELOCITY => store(out, &[0.0; 3], false),
            HD_CURRENT_TRANSFORM => {
                let r = s.rotation;
                let m = [
                    r[0], r[1], r[2], 0.0, r[3], r[4], r[5], 0.0, r[6], r[7], r[8], 0.0, p[0],
                    p[1], p[2], 1.0,
                ];
                store(out, &m, nan)
            }
            HD_NOMINAL_MAX_FORCE => store(out, &[3.3], false),
            HD_NOMINAL_MAX_STIFFNESS => store(out, &[1.26], false),
            HD_USABLE_WORKSPACE_DIMENSIONS => {
                store(out, &[-80.0, -60.0, -35.0, 80.0, 60.0, 35.0], false)
            }
            _ => s.fail(HD_INVALID_ENUM),
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn hdGetIntegerv(param: HdEnum, out: *mut c_int) {
    let mut s = sim();
    let value = match param {
        HD_CURRENT_BUTTONS => s.buttons,
        HD_INPUT_DOF => 6,
        HD_OUTPUT_DOF => {
            if s.six_dof {
                6
            } else {
                3
            }
        }
        HD_UPDATE_RATE => 1000,
        _ => {
            s.fail(HD_INVALID_ENUM);
            return;
        }
    };
    unsafe { *out = value };
}

#[no_mangle]
pub unsafe extern "C" fn hdSetDoublev(param: HdEnum, values: *const f64) {
    let mut s = sim();
    let v = unsafe { [*values, *values.add(1), *values.add(2)] };
    if !s.in_frame {
        s.fail(HD_ILLEGAL_BEGIN);
        return;
    }
    match param {
        HD_CURRENT_FORCE => s.pending_force = v,
        HD_CURRENT_GIMBAL_TORQUE if s.six_dof => s.state.gimbal_torque_mnm = v,
        _ => s.fail(HD_INVALID_ENUM),
    }
}

#[no_mangle]
pub extern "C" fn hdGetString(param: HdEnum) -> *const c_char {
    let mut s = sim();
    match param {
        HD_DEVICE_MODEL_TYPE if s.six_dof => c"PHANToM Premium 1.5 6DOF (simulated)".as_ptr(),
        HD_DEVICE_MODEL_TYPE => c"Touch (simulated)".as_ptr(),
        _ => {
            s.fail(HD_INVALID_ENUM);
            std::ptr::null()
        }
    }
}

#[no_mangle]
pub extern "C" fn hdGetError() -> HdErrorInfo {
    let (error_code, internal_error_code) = sim().error.take().unwrap_or((HD_SUCCESS, 0));
    HdErrorInfo {
        error_code,
        internal_error_code,
        hhd: 0,
    }
}

#[no_mangle]
pub extern "C" fn hdGetErrorString(code: c_uint) -> *const c_char {
    match code {
        HD_SUCCESS => c"No error".as_ptr(),
        HD_INVALID_ENUM => c"Invalid enumeration value".as_ptr(),
        HD_INVALID_VALUE => c"Invalid value".as_ptr(),
        HD_BAD_HANDLE => c"Invalid device handle".as_ptr(),
        HD_DEVICE_ALREADY_INITIATED => c"Device already initiated".as_ptr(),
        HD_COMM_ERROR => c"Communication error".as_ptr(),
        HD_COMM_CONFIG_ERROR => c"Device not found for this configuration".as_ptr(),
        HD_ILLEGAL_BEGIN => c"Illegal begin frame".as_ptr(),
        HD_ILLEGAL_END => c"Illegal end frame".as_ptr(),
        _ => c"Unknown error".as_ptr(),
    }
}

fn run_scheduler() {
    let mut next = Instant::now();
    while RUNNING.load(Ordering::Acquire) {
        next += TICK;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            next = now;
        }
        sim().advance();
        let mut list = callbacks();
        // SAFETY: the registered callbacks and their data, as registered.
        list.retain(
            |&(_, callback, data)| unsafe { callback(data as *mut c_void) } != HD_CALLBACK_DONE,
        );
        let n = list.len() as u32;
        drop(list);
        sim().state.callbacks = n;
    }
}

#[no_mangle]
pub extern "C" fn hdStartScheduler() {
    if RUNNING.swap(true, Ordering::AcqRel) {
        return;
    }
    sim().state.scheduler_running = true;
    *SCHEDULER.lock().unwrap_or_else(|p| p.into_inner()) = Some(std::thread::spawn(run_scheduler));
}

#[no_mangle]
pub extern "C" fn hdStopScheduler() {
    RUNNING.store(false, Ordering::Release);
    let thread = SCHEDULER.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(thread) = thread {
        let _ = thread.join();
    }
    sim().state.scheduler_running = false;
}

#[no_mangle]
pub extern "C" fn hdScheduleAsynchronous(
    callback: Callback,
    data: *mut c_void,
    _priority: c_ushort,
) -> c_ulong {
    let mut next = NEXT_HANDLE.lock().unwrap_or_else(|p| p.into_inner());
    let handle = *next;
    *next += 1;
    let mut list = callbacks();
    list.push((handle, callback, data as usize));
    sim().state.callbacks = list.len() as u32;
    handle
}

#[no_mangle]
pub unsafe extern "C" fn hdScheduleSynchronous(
    callback: Callback,
    data: *mut c_void,
    _priority: c_ushort,
) {
    // Holding the list keeps the scheduler between ticks.
    let _between_ticks = callbacks();
    while unsafe { callback(data) } != HD_CALLBACK_DONE {}
}

#[no_mangle]
pub extern "C" fn hdUnschedule(handle: c_ulong) {
    let mut list = callbacks();
    let before = list.len();
    list.retain(|&(h, _, _)| h != handle);
    if list.len() == before {
        sim().fail(HD_INVALID_VALUE);
    }
    sim().state.callbacks = list.len() as u32;
}

/// Stops the scheduler, forgets every callback and resets the device: at
/// rest at the origin, closed, force output off, 3 output DoF.
#[no_mangle]
pub extern "C" fn ohsim_reset() {
    hdStopScheduler();
    callbacks().clear();
    *sim() = Sim::new();
}

/// The device vanishes (`true`: every frame fails with `HD_COMM_ERROR`
/// and the force drops to zero) or comes back.
#[no_mangle]
pub extern "C" fn ohsim_set_vanished(on: bool) {
    sim().vanished = on;
}

/// The next `frames` frames read NaN positions and transforms.
#[no_mangle]
pub extern "C" fn ohsim_inject_nan(frames: u32) {
    sim().nan_frames = frames;
}

/// The mass (kg), spring (N/m) and damper (N·s/m).
#[no_mangle]
pub extern "C" fn ohsim_set_dynamics(mass: f64, stiffness: f64, damping: f64) {
    let mut s = sim();
    (s.mass, s.stiffness, s.damping) = (mass, stiffness, damping);
}

/// Places the handle at `position_mm` at rest, with `rotation`
/// (column-major), HD axes.
#[no_mangle]
pub unsafe extern "C" fn ohsim_set_pose(position_mm: *const [f64; 3], rotation: *const [f64; 9]) {
    let mut s = sim();
    unsafe {
        s.state.position_mm = *position_mm;
        s.rotation = *rotation;
    }
    s.state.velocity_mm_s = [0.0; 3];
}

#[no_mangle]
pub extern "C" fn ohsim_set_buttons(mask: c_int) {
    sim().buttons = mask;
}

/// A 6-DoF-output device (gimbal torques accepted) or a 3-DoF one.
#[no_mangle]
pub extern "C" fn ohsim_set_six_dof(on: bool) {
    sim().six_dof = on;
}

#[no_mangle]
pub unsafe extern "C" fn ohsim_state(out: *mut OhsimState) {
    let state = sim().state;
    unsafe { *out = state };
}
