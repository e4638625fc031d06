//! A simulated OpenHaptics HD library for tests: the HD API's C functions
//! (`hdInitDevice`, the scheduler, frames, parameters, errors) over one
//! device, a point mass on a spring and damper in the HD API's frame and
//! units (mm, N; x right, y up, z toward the user), and a gimbal of three
//! joints (yaw about y, pitch about x, roll about z: [`stylus_rotation`])
//! each a rotational inertia on a torsional spring and damper, driven by
//! the gimbal torques (mN·m) a 6-DoF-output device takes.
//!
//! `hdStartScheduler` starts a thread that, every millisecond, advances the
//! mass by 1 ms under the force committed by the last `hdEndFrame` and then
//! calls every asynchronous callback. `hdScheduleSynchronous` runs its
//! callback between two scheduler ticks (on the caller's thread, which the
//! tests cannot tell apart). `ohsim_*` hooks reset the simulation, change
//! its dynamics and pose, make the device vanish and inject NaN; a process
//! that calls none (`hapticd run`) can have the device vanish by the
//! environment, `OHSIM_UNPLUG_AFTER_MS` after it is first initialised, for
//! `OHSIM_UNPLUG_FOR_MS` (unset: for good).

#![allow(clippy::missing_safety_doc)]

use std::ffi::{c_char, c_int, c_uint, c_ulong, c_ushort, c_void, CStr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

#[path = "../../forcedim-sim/src/unplug.rs"]
mod unplug;
use unplug::Unplug;

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
const HD_CURRENT_GIMBAL_ANGLES: HdEnum = 0x2150;
const HD_DEVICE_MODEL_TYPE: HdEnum = 0x2501;
const HD_USABLE_WORKSPACE_DIMENSIONS: HdEnum = 0x2551;
const HD_INPUT_DOF: HdEnum = 0x2553;
const HD_OUTPUT_DOF: HdEnum = 0x2554;
const HD_UPDATE_RATE: HdEnum = 0x2600;
const HD_NOMINAL_MAX_STIFFNESS: HdEnum = 0x2602;
const HD_NOMINAL_MAX_FORCE: HdEnum = 0x2603;
const HD_NOMINAL_MAX_TORQUE_FORCE: HdEnum = 0x2622;
const HD_CURRENT_FORCE: HdEnum = 0x2700;
const HD_CURRENT_GIMBAL_TORQUE: HdEnum = 0x2704;
const HD_FORCE_OUTPUT: HdEnum = 0x4000;

/// The configuration name the simulated device answers to, besides
/// `HD_DEFAULT_DEVICE` (null).
pub const DEVICE_NAME: &str = "Default Device";
/// The simulated scheduler's period.
pub const TICK: Duration = Duration::from_millis(1);
/// The 6-DoF-output device's `HD_NOMINAL_MAX_TORQUE_FORCE` (mN·m), a
/// Phantom Premium 1.5 6DOF's.
pub const MAX_TORQUE_MNM: f64 = 188.0;

/// A 3×3 matrix, column-major, as `HD_CURRENT_TRANSFORM` holds rotations.
pub type Rotation = [f64; 9];

fn multiply(a: &Rotation, b: &Rotation) -> Rotation {
    std::array::from_fn(|k| {
        let (i, j) = (k % 3, k / 3);
        (0..3).map(|l| a[l * 3 + i] * b[j * 3 + l]).sum()
    })
}

/// The rotation by `angle` (rad) about the coordinate axis `axis` (0, 1, 2
/// for x, y, z), right-handed.
fn about(axis: usize, angle: f64) -> Rotation {
    let (s, c) = angle.sin_cos();
    let (a, b) = ((axis + 1) % 3, (axis + 2) % 3);
    let mut r = [0.0; 9];
    r[axis * 3 + axis] = 1.0;
    r[a * 3 + a] = c;
    r[b * 3 + b] = c;
    // Column a is (.., c, s) in rows a, b; column b is (.., −s, c).
    r[a * 3 + b] = s;
    r[b * 3 + a] = -s;
    r
}

/// The stylus' rotation (HD axes, column-major) for the gimbal's base
/// `base` and its angles `angles` (yaw, pitch, roll, rad):
/// base · R_y(yaw) · R_x(pitch) · R_z(roll).
pub fn stylus_rotation(base: &Rotation, angles: [f64; 3]) -> Rotation {
    let yawed = multiply(base, &about(1, angles[0]));
    let pitched = multiply(&yawed, &about(0, angles[1]));
    multiply(&pitched, &about(2, angles[2]))
}

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
    /// The gimbal torque acting on the gimbal: the last committed while
    /// force output is enabled, else zero (mN·m; yaw, pitch, roll).
    pub gimbal_torque_mnm: [f64; 3],
    /// The gimbal's angles (rad) and their rates (rad/s).
    pub gimbal_angles_rad: [f64; 3],
    pub gimbal_rates_rad_s: [f64; 3],
    /// `hdSetDoublev(HD_CURRENT_GIMBAL_TORQUE)` calls since the reset.
    pub gimbal_torque_sets: u64,
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
    /// The gimbal torque set in the open frame (mN·m), likewise.
    pending_gimbal_torque: [f64; 3],
    /// Each gimbal joint's inertia (kg·m²), spring (N·m/rad) and damper
    /// (N·m·s/rad), rest at angle zero.
    gimbal_inertia: f64,
    gimbal_stiffness: f64,
    gimbal_damping: f64,
    /// The gimbal base's rotation, column-major, HD axes.
    rotation: Rotation,
    buttons: c_int,
    six_dof: bool,
    in_frame: bool,
    vanished: bool,
    /// `OHSIM_UNPLUG_AFTER_MS`, `OHSIM_UNPLUG_FOR_MS`.
    unplug: Unplug,
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
                gimbal_angles_rad: [0.0; 3],
                gimbal_rates_rad_s: [0.0; 3],
                gimbal_torque_sets: 0,
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
            pending_gimbal_torque: [0.0; 3],
            gimbal_inertia: 2e-5,
            gimbal_stiffness: 0.3,
            gimbal_damping: 0.004,
            rotation: [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
            buttons: 0,
            six_dof: false,
            in_frame: false,
            vanished: false,
            unplug: Unplug::new("OHSIM"),
            nan_frames: 0,
            error: None,
        }
    }

    /// Vanished by a hook or by the environment's schedule.
    fn is_vanished(&self) -> bool {
        self.vanished || self.unplug.now()
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
            // I·q̈ = τ − k·q − c·q̇ about each gimbal joint, τ in N·m.
            let (q, w) = (s.gimbal_angles_rad[i], s.gimbal_rates_rad_s[i]);
            let torque = s.gimbal_torque_mnm[i] * 1e-3;
            let a = (torque - self.gimbal_stiffness * q - self.gimbal_damping * w)
                / self.gimbal_inertia;
            let w = w + a * dt;
            s.gimbal_rates_rad_s[i] = w;
            s.gimbal_angles_rad[i] = q + w * dt;
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
    if s.is_vanished() {
        s.fail(HD_COMM_ERROR);
        return HD_INVALID_HANDLE;
    }
    if s.state.device_initialised {
        s.fail(HD_DEVICE_ALREADY_INITIATED);
        return HD_INVALID_HANDLE;
    }
    s.state.device_initialised = true;
    s.unplug.arm();
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
    s.state.gimbal_torque_mnm = [0.0; 3];
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
        if s.is_vanished() {
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
    if s.is_vanished() {
        s.fail(HD_COMM_ERROR);
        s.state.force_n = [0.0; 3];
        s.state.gimbal_torque_mnm = [0.0; 3];
        return;
    }
    (s.state.force_n, s.state.gimbal_torque_mnm) = if s.state.force_output {
        (s.pending_force, s.pending_gimbal_torque)
    } else {
        ([0.0; 3], [0.0; 3])
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
            s.state.force_n = [0.0; 3];
            s.state.gimbal_torque_mnm = [0.0; 3];
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
            HD_CURRENT_GIMBAL_ANGLES => store(out, &s.state.gimbal_angles_rad, nan),
            HD_CURRENT_TRANSFORM => {
                let r = stylus_rotation(&s.rotation, s.state.gimbal_angles_rad);
                let m = [
                    r[0], r[1], r[2], 0.0, r[3], r[4], r[5], 0.0, r[6], r[7], r[8], 0.0, p[0],
                    p[1], p[2], 1.0,
                ];
                store(out, &m, nan)
            }
            HD_NOMINAL_MAX_FORCE => store(out, &[3.3], false),
            HD_NOMINAL_MAX_TORQUE_FORCE if s.six_dof => store(out, &[MAX_TORQUE_MNM], false),
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
        HD_CURRENT_GIMBAL_TORQUE if s.six_dof => {
            s.pending_gimbal_torque = v;
            s.state.gimbal_torque_sets += 1;
        }
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
/// (column-major), HD axes, the gimbal's base rotation (the stylus' at
/// gimbal angles zero).
#[no_mangle]
pub unsafe extern "C" fn ohsim_set_pose(position_mm: *const [f64; 3], rotation: *const [f64; 9]) {
    let mut s = sim();
    unsafe {
        s.state.position_mm = *position_mm;
        s.rotation = *rotation;
    }
    s.state.velocity_mm_s = [0.0; 3];
}

/// Places the gimbal at `angles` (yaw, pitch, roll, rad) at rest.
#[no_mangle]
pub unsafe extern "C" fn ohsim_set_gimbal(angles: *const [f64; 3]) {
    let mut s = sim();
    s.state.gimbal_angles_rad = unsafe { *angles };
    s.state.gimbal_rates_rad_s = [0.0; 3];
}

/// Each gimbal joint's inertia (kg·m²), spring (N·m/rad) and damper
/// (N·m·s/rad).
#[no_mangle]
pub extern "C" fn ohsim_set_gimbal_dynamics(inertia: f64, stiffness: f64, damping: f64) {
    let mut s = sim();
    (s.gimbal_inertia, s.gimbal_stiffness, s.gimbal_damping) = (inertia, stiffness, damping);
}

#[no_mangle]
pub extern "C" fn ohsim_set_buttons(mask: c_int) {
    sim().buttons = mask;
}

/// A 6-DoF-output device (gimbal torques accepted,
/// `HD_NOMINAL_MAX_TORQUE_FORCE` defined) or a 3-DoF one.
#[no_mangle]
pub extern "C" fn ohsim_set_six_dof(on: bool) {
    sim().six_dof = on;
}

#[no_mangle]
pub unsafe extern "C" fn ohsim_state(out: *mut OhsimState) {
    let state = sim().state;
    unsafe { *out = state };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stylus_rotation_composes_yaw_pitch_roll() {
        let identity = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        let half_pi = std::f64::consts::FRAC_PI_2;
        // 90° of yaw about y takes the stylus axis z to x (column 2).
        let r = stylus_rotation(&identity, [half_pi, 0.0, 0.0]);
        let z = [r[6], r[7], r[8]];
        assert!((z[0] - 1.0).abs() < 1e-12 && z[1].abs() < 1e-12 && z[2].abs() < 1e-12);
        // Then 90° of pitch about the yawed x (now −z) takes it to −y.
        let r = stylus_rotation(&identity, [half_pi, half_pi, 0.0]);
        assert!((r[7] + 1.0).abs() < 1e-12, "{r:?}");
        // Roll leaves the stylus axis where it is.
        let rolled = stylus_rotation(&identity, [half_pi, half_pi, 0.7]);
        assert!(
            (rolled[6] - r[6]).abs() + (rolled[7] - r[7]).abs() + (rolled[8] - r[8]).abs() < 1e-12
        );
    }
}
