//! A simulated Force Dimension SDK, for tests only.
//!
//! Built as a shared library exporting the functions of `libdhd` and
//! `libdrd` that `haptic-device-forcedim` loads, with the SDK's C
//! signatures, so that the backend's tests run its real loading and
//! calling code without hardware. Behind them is one simulated device: a
//! point mass on a spring (and a rotor on a torsional spring) moved by the
//! commanded force and torque, integrated by semi-implicit Euler over a
//! fixed step per force command (or the wall time between commands).
//!
//! Extra `fdsim_*` symbols let tests steer it: make the device vanish, send
//! non-finite samples, choose the model, read the state. A process that
//! loads it without calling them (`hapticd run`) can have the device
//! unplugged by the environment: `FDSIM_UNPLUG_AFTER_MS` after the first
//! open, for `FDSIM_UNPLUG_FOR_MS` (unset: for good).

#![allow(clippy::missing_safety_doc)]

use std::ffi::{c_char, c_int, c_uint, CStr};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

mod unplug;
use unplug::Unplug;

/// The SDK's error codes this simulation reports (`dhdc.h`'s `dhd_errors`).
const DHD_NO_ERROR: c_int = 0;
const DHD_ERROR_COM: c_int = 2;
const DHD_ERROR_NO_DEVICE_FOUND: c_int = 5;
const DHD_ERROR_NOT_AVAILABLE: c_int = 6;
const DHD_ERROR_TIMEOUT: c_int = 7;
const DHD_ERROR_EXPERT_MODE_DISABLED: c_int = 9;
const DHD_ERROR_INVALID_INDEX: c_int = 15;
const DHD_ERROR_NULL_ARGUMENT: c_int = 17;

fn error_text(code: c_int) -> &'static CStr {
    match code {
        DHD_NO_ERROR => c"no error",
        DHD_ERROR_COM => c"communication error between the host and the haptic device",
        DHD_ERROR_NO_DEVICE_FOUND => c"no compatible haptic device found",
        DHD_ERROR_NOT_AVAILABLE => c"feature not available on this device",
        DHD_ERROR_TIMEOUT => c"timeout",
        DHD_ERROR_EXPERT_MODE_DISABLED => c"expert mode is disabled",
        DHD_ERROR_INVALID_INDEX => c"invalid device index",
        DHD_ERROR_NULL_ARGUMENT => c"null argument",
        _ => c"undocumented error",
    }
}

/// Standard gravity (m/s²), pulling the mass along −z while gravity
/// compensation is off.
const GRAVITY: f64 = 9.81;

/// What a system type is: name, wrist (sensed, actuated), gripper,
/// left-handed, supported by the robotic SDK's initialisation.
struct Model {
    name: &'static CStr,
    wrist: bool,
    active_wrist: bool,
    gripper: bool,
    left: bool,
    drd: bool,
}

fn model(system_type: c_int) -> Model {
    let (name, wrist, active_wrist, gripper, left, drd) = match system_type {
        33 => (c"omega.3", false, false, false, false, true),
        34 => (c"omega.6", true, false, false, false, true),
        35 => (c"omega.7", true, false, true, false, true),
        60 => (c"Falcon", false, false, false, false, false),
        63 => (c"delta.3", false, false, false, false, true),
        64 => (c"delta.6", true, true, false, false, true),
        105 => (c"sigma.7", true, true, true, true, true),
        _ => (c"sigma.7", true, true, true, false, true),
    };
    Model {
        name,
        wrist,
        active_wrist,
        gripper,
        left,
        drd,
    }
}

/// The simulated SDK and its one device.
struct Sim {
    device_count: c_int,
    system_type: c_int,
    disconnected: bool,
    /// `FDSIM_UNPLUG_AFTER_MS`, `FDSIM_UNPLUG_FOR_MS`.
    unplug: Unplug,
    nan_reads: u32,
    /// The next call on an open device fails with this code (0: none).
    fail_next: c_int,
    initialized: bool,
    auto_init_calls: u32,
    /// Bit `i`: device `i` is open.
    open: u32,
    expert: bool,
    forces_enabled: bool,
    brakes: bool,
    gravity_compensation: bool,
    watchdog: c_int,
    velocity_threshold: c_uint,
    max_force: f64,
    max_torque: f64,
    last_error: c_int,
    /// Seconds per force command; 0: the wall time since the last one.
    step: f64,
    last_command: Option<Instant>,
    mass: f64,
    stiffness: f64,
    damping: f64,
    inertia: f64,
    rotational_stiffness: f64,
    rotational_damping: f64,
    position: [f64; 3],
    velocity: [f64; 3],
    rotation: [[f64; 3]; 3],
    angular_velocity: [f64; 3],
    force: [f64; 3],
    torque: [f64; 3],
    gripper_force: f64,
    gripper_angle: f64,
    buttons: c_uint,
    reads: u64,
    commands: u64,
}

const IDENTITY: [[f64; 3]; 3] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

impl Sim {
    const fn new() -> Sim {
        Sim {
            device_count: 1,
            system_type: 104,
            disconnected: false,
            unplug: Unplug::new("FDSIM"),
            nan_reads: 0,
            fail_next: DHD_NO_ERROR,
            initialized: false,
            auto_init_calls: 0,
            open: 0,
            expert: false,
            forces_enabled: false,
            brakes: true,
            gravity_compensation: true,
            watchdog: -1,
            velocity_threshold: 10,
            max_force: -1.0,
            max_torque: -1.0,
            last_error: DHD_NO_ERROR,
            step: 0.001,
            last_command: None,
            mass: 0.2,
            stiffness: 100.0,
            damping: 1.0,
            inertia: 1e-4,
            rotational_stiffness: 0.05,
            rotational_damping: 0.002,
            position: [0.0; 3],
            velocity: [0.0; 3],
            rotation: IDENTITY,
            angular_velocity: [0.0; 3],
            force: [0.0; 3],
            torque: [0.0; 3],
            gripper_force: 0.0,
            gripper_angle: 0.0,
            buttons: 0,
            reads: 0,
            commands: 0,
        }
    }

    /// Unplugged by a hook or by the environment's schedule.
    fn is_disconnected(&self) -> bool {
        self.disconnected || self.unplug.now()
    }

    fn fail(&mut self, code: c_int) -> c_int {
        self.last_error = code;
        -1
    }

    /// Whether device `id` answers a query (a call without an error
    /// return, which `fail_next` spares).
    fn answers(&self, id: c_char) -> bool {
        !self.is_disconnected()
            && id >= 0
            && (id as c_int) < self.device_count
            && self.open & (1 << id) != 0
    }

    /// Checks that device `id` can be talked to: an error code otherwise.
    fn reach(&mut self, id: c_char) -> Result<(), c_int> {
        let code = if self.is_disconnected() {
            DHD_ERROR_COM
        } else if self.fail_next != DHD_NO_ERROR {
            std::mem::replace(&mut self.fail_next, DHD_NO_ERROR)
        } else if id < 0 || id as c_int >= self.device_count || self.open & (1 << id) == 0 {
            DHD_ERROR_INVALID_INDEX
        } else {
            return Ok(());
        };
        self.last_error = code;
        Err(code)
    }

    fn model(&self) -> Model {
        model(self.system_type)
    }

    /// One force command's step of the mass and the rotor.
    fn advance(&mut self) {
        let now = Instant::now();
        let dt = if self.step > 0.0 {
            self.step
        } else {
            self.last_command
                .map_or(0.0, |t| now.duration_since(t).as_secs_f64().min(0.01))
        };
        self.last_command = Some(now);
        let driven = self.forces_enabled && !self.brakes;
        // Brakes short the motors: a strong viscous drag.
        let drag = if self.brakes { 20.0 } else { 0.0 };
        for i in 0..3 {
            let mut f =
                -self.stiffness * self.position[i] - (self.damping + drag) * self.velocity[i];
            if driven {
                f += self.force[i];
            }
            if i == 2 && !self.gravity_compensation {
                f -= self.mass * GRAVITY;
            }
            self.velocity[i] += f / self.mass * dt;
            self.position[i] += self.velocity[i] * dt;
        }
        let theta = rotation_vector(&self.rotation);
        let mut w = [0.0; 3];
        for i in 0..3 {
            let mut t = -self.rotational_stiffness * theta[i]
                - (self.rotational_damping + drag * 1e-3) * self.angular_velocity[i];
            if driven && self.model().active_wrist {
                t += self.torque[i];
            }
            self.angular_velocity[i] += t / self.inertia * dt;
            w[i] = self.angular_velocity[i] * dt;
        }
        self.rotation = multiply(&exp(w), &self.rotation);
    }
}

/// R = exp([w]×) by Rodrigues' formula.
fn exp(w: [f64; 3]) -> [[f64; 3]; 3] {
    let angle = (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]).sqrt();
    if angle < 1e-12 {
        return IDENTITY;
    }
    let k = [w[0] / angle, w[1] / angle, w[2] / angle];
    let (s, c) = angle.sin_cos();
    let mut r = [[0.0; 3]; 3];
    let skew = [[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]];
    for i in 0..3 {
        for j in 0..3 {
            let kk = k[i] * k[j];
            r[i][j] = IDENTITY[i][j] * c + s * skew[i][j] + (1.0 - c) * kk;
        }
    }
    r
}

/// The rotation vector of R, for angles below π.
fn rotation_vector(r: &[[f64; 3]; 3]) -> [f64; 3] {
    let cos = ((r[0][0] + r[1][1] + r[2][2] - 1.0) / 2.0).clamp(-1.0, 1.0);
    let angle = cos.acos();
    let v = [r[2][1] - r[1][2], r[0][2] - r[2][0], r[1][0] - r[0][1]];
    if angle < 1e-9 {
        return [v[0] / 2.0, v[1] / 2.0, v[2] / 2.0];
    }
    let scale = angle / (2.0 * angle.sin());
    [v[0] * scale, v[1] * scale, v[2] * scale]
}

fn multiply(a: &[[f64; 3]; 3], b: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let mut r = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            r[i][j] = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    r
}

static SIM: Mutex<Sim> = Mutex::new(Sim::new());

fn sim() -> MutexGuard<'static, Sim> {
    SIM.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

unsafe fn store(p: *mut f64, value: f64) {
    if !p.is_null() {
        unsafe { *p = value };
    }
}

// ---------------------------------------------------------------- libdhd

#[no_mangle]
pub extern "C" fn dhdGetDeviceCount() -> c_int {
    let s = sim();
    if s.is_disconnected() {
        0
    } else {
        s.device_count
    }
}

#[no_mangle]
pub extern "C" fn dhdOpenID(id: c_char) -> c_int {
    let mut s = sim();
    if s.is_disconnected() || s.device_count == 0 {
        return s.fail(DHD_ERROR_NO_DEVICE_FOUND);
    }
    s.unplug.arm();
    if id < 0 || id as c_int >= s.device_count {
        return s.fail(DHD_ERROR_INVALID_INDEX);
    }
    s.open |= 1 << id;
    id as c_int
}

#[no_mangle]
pub extern "C" fn dhdClose(id: c_char) -> c_int {
    let mut s = sim();
    if id < 0 || id as c_int >= s.device_count || s.open & (1 << id) == 0 {
        return s.fail(DHD_ERROR_INVALID_INDEX);
    }
    s.open &= !(1 << id);
    s.forces_enabled = false;
    s.brakes = true;
    0
}

#[no_mangle]
pub extern "C" fn dhdGetSystemType(id: c_char) -> c_int {
    let s = sim();
    match s.answers(id) {
        true => s.system_type,
        false => -1,
    }
}

#[no_mangle]
pub extern "C" fn dhdGetSystemName(id: c_char) -> *const c_char {
    let s = sim();
    match s.answers(id) {
        true => s.model().name.as_ptr(),
        false => std::ptr::null(),
    }
}

#[no_mangle]
pub unsafe extern "C" fn dhdGetSDKVersion(
    major: *mut c_int,
    minor: *mut c_int,
    release: *mut c_int,
    revision: *mut c_int,
) {
    for (p, v) in [(major, 3), (minor, 17), (release, 0), (revision, 0)] {
        if !p.is_null() {
            unsafe { *p = v };
        }
    }
}

macro_rules! model_query {
    ($name:ident, $field:ident) => {
        #[no_mangle]
        pub extern "C" fn $name(id: c_char) -> bool {
            let s = sim();
            s.answers(id) && s.model().$field
        }
    };
}

model_query!(dhdHasWrist, wrist);
model_query!(dhdHasActiveWrist, active_wrist);
model_query!(dhdHasGripper, gripper);
model_query!(dhdIsLeftHanded, left);

#[no_mangle]
pub extern "C" fn dhdGetMaxForce(id: c_char) -> f64 {
    let s = sim();
    match s.answers(id) {
        true => s.max_force,
        false => -1.0,
    }
}

#[no_mangle]
pub extern "C" fn dhdGetMaxTorque(id: c_char) -> f64 {
    let s = sim();
    match s.answers(id) {
        true => s.max_torque,
        false => -1.0,
    }
}

#[no_mangle]
pub extern "C" fn dhdEnableForce(val: u8, id: c_char) -> c_int {
    let mut s = sim();
    if s.reach(id).is_err() {
        return -1;
    }
    s.forces_enabled = val != 0;
    // Enabling forces releases the brakes, as on the devices.
    if s.forces_enabled {
        s.brakes = false;
    }
    0
}

#[no_mangle]
pub extern "C" fn dhdSetGravityCompensation(val: c_int, id: c_char) -> c_int {
    let mut s = sim();
    if s.reach(id).is_err() {
        return -1;
    }
    s.gravity_compensation = val != 0;
    0
}

#[no_mangle]
pub extern "C" fn dhdSetBrakes(val: c_int, id: c_char) -> c_int {
    let mut s = sim();
    if s.reach(id).is_err() {
        return -1;
    }
    s.brakes = val != 0;
    0
}

#[no_mangle]
pub extern "C" fn dhdEnableExpertMode() -> c_int {
    sim().expert = true;
    0
}

#[no_mangle]
pub extern "C" fn dhdDisableExpertMode() -> c_int {
    sim().expert = false;
    0
}

#[no_mangle]
pub extern "C" fn dhdSetWatchdog(val: u8, id: c_char) -> c_int {
    let mut s = sim();
    if s.reach(id).is_err() {
        return -1;
    }
    if !s.expert {
        return s.fail(DHD_ERROR_EXPERT_MODE_DISABLED);
    }
    s.watchdog = val as c_int;
    0
}

#[no_mangle]
pub extern "C" fn dhdSetVelocityThreshold(val: c_uint, id: c_char) -> c_int {
    let mut s = sim();
    if s.reach(id).is_err() {
        return -1;
    }
    if !s.expert {
        return s.fail(DHD_ERROR_EXPERT_MODE_DISABLED);
    }
    s.velocity_threshold = val;
    0
}

#[no_mangle]
pub unsafe extern "C" fn dhdGetVelocityThreshold(val: *mut c_uint, id: c_char) -> c_int {
    let mut s = sim();
    if s.reach(id).is_err() {
        return -1;
    }
    if val.is_null() {
        return s.fail(DHD_ERROR_NULL_ARGUMENT);
    }
    unsafe { *val = s.velocity_threshold };
    0
}

#[no_mangle]
pub unsafe extern "C" fn dhdGetPositionAndOrientationFrame(
    px: *mut f64,
    py: *mut f64,
    pz: *mut f64,
    matrix: *mut [[f64; 3]; 3],
    id: c_char,
) -> c_int {
    let mut s = sim();
    if s.reach(id).is_err() {
        return -1;
    }
    s.reads += 1;
    let mut p = s.position;
    if s.nan_reads > 0 {
        s.nan_reads -= 1;
        p[0] = f64::NAN;
    }
    unsafe {
        store(px, p[0]);
        store(py, p[1]);
        store(pz, p[2]);
        if !matrix.is_null() {
            *matrix = if s.model().wrist {
                s.rotation
            } else {
                IDENTITY
            };
        }
    }
    0
}

#[no_mangle]
pub unsafe extern "C" fn dhdGetLinearVelocity(
    vx: *mut f64,
    vy: *mut f64,
    vz: *mut f64,
    id: c_char,
) -> c_int {
    let mut s = sim();
    if s.reach(id).is_err() {
        return -1;
    }
    unsafe {
        store(vx, s.velocity[0]);
        store(vy, s.velocity[1]);
        store(vz, s.velocity[2]);
    }
    0
}

#[no_mangle]
pub unsafe extern "C" fn dhdGetAngularVelocityRad(
    wx: *mut f64,
    wy: *mut f64,
    wz: *mut f64,
    id: c_char,
) -> c_int {
    let mut s = sim();
    if s.reach(id).is_err() {
        return -1;
    }
    if !s.model().wrist {
        return s.fail(DHD_ERROR_NOT_AVAILABLE);
    }
    unsafe {
        store(wx, s.angular_velocity[0]);
        store(wy, s.angular_velocity[1]);
        store(wz, s.angular_velocity[2]);
    }
    0
}

#[no_mangle]
pub extern "C" fn dhdGetButtonMask(id: c_char) -> c_uint {
    let s = sim();
    match s.answers(id) {
        true => s.buttons,
        false => 0,
    }
}

#[no_mangle]
pub unsafe extern "C" fn dhdGetGripperAngleRad(a: *mut f64, id: c_char) -> c_int {
    let mut s = sim();
    if s.reach(id).is_err() {
        return -1;
    }
    if !s.model().gripper {
        return s.fail(DHD_ERROR_NOT_AVAILABLE);
    }
    unsafe { store(a, s.gripper_angle) };
    0
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub extern "C" fn dhdSetForceAndTorqueAndGripperForce(
    fx: f64,
    fy: f64,
    fz: f64,
    tx: f64,
    ty: f64,
    tz: f64,
    fg: f64,
    id: c_char,
) -> c_int {
    let mut s = sim();
    if s.reach(id).is_err() {
        return -1;
    }
    s.force = [fx, fy, fz];
    s.torque = [tx, ty, tz];
    s.gripper_force = fg;
    s.commands += 1;
    s.advance();
    0
}

#[no_mangle]
pub extern "C" fn dhdErrorGetLast() -> c_int {
    sim().last_error
}

#[no_mangle]
pub extern "C" fn dhdErrorGetLastStr() -> *const c_char {
    error_text(sim().last_error).as_ptr()
}

// ---------------------------------------------------------------- libdrd

#[no_mangle]
pub extern "C" fn drdOpenID(id: c_char) -> c_int {
    dhdOpenID(id)
}

#[no_mangle]
pub extern "C" fn drdClose(id: c_char) -> c_int {
    dhdClose(id)
}

#[no_mangle]
pub extern "C" fn drdIsSupported(id: c_char) -> bool {
    let s = sim();
    s.answers(id) && s.model().drd
}

#[no_mangle]
pub extern "C" fn drdIsInitialized(id: c_char) -> bool {
    let s = sim();
    s.answers(id) && s.initialized
}

#[no_mangle]
pub extern "C" fn drdAutoInit(id: c_char) -> c_int {
    let mut s = sim();
    if s.reach(id).is_err() {
        return -1;
    }
    if !s.model().drd {
        return s.fail(DHD_ERROR_NOT_AVAILABLE);
    }
    s.auto_init_calls += 1;
    s.initialized = true;
    0
}

#[no_mangle]
pub extern "C" fn drdStop(keep_forces: bool, id: c_char) -> c_int {
    let mut s = sim();
    if s.reach(id).is_err() {
        return -1;
    }
    if !keep_forces {
        s.forces_enabled = false;
    }
    0
}

// ---------------------------------------------------------------- test hooks

/// What a test can read of the simulation; `#[repr(C)]`, mirrored by the
/// tests that load this library.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct FdsimState {
    pub position: [f64; 3],
    pub velocity: [f64; 3],
    pub force: [f64; 3],
    pub torque: [f64; 3],
    pub gripper_force: f64,
    pub reads: u64,
    pub commands: u64,
    pub open: u32,
    pub forces_enabled: bool,
    pub brakes: bool,
    pub gravity_compensation: bool,
    pub expert: bool,
    pub initialized: bool,
    pub auto_init_calls: u32,
    pub watchdog: c_int,
    pub velocity_threshold: c_uint,
}

/// Back to a fresh SDK with one closed, uninitialised sigma.7 at rest.
#[no_mangle]
pub extern "C" fn fdsim_reset() {
    *sim() = Sim::new();
}

/// `count` connected devices of `system_type` (`dhdc.h`'s `DHD_DEVICE_*`).
#[no_mangle]
pub extern "C" fn fdsim_set_device(system_type: c_int, count: c_int) {
    let mut s = sim();
    s.system_type = system_type;
    s.device_count = count;
}

/// The limits `dhdGetMaxForce` and `dhdGetMaxTorque` report (negative: none).
#[no_mangle]
pub extern "C" fn fdsim_set_limits(max_force: f64, max_torque: f64) {
    let mut s = sim();
    s.max_force = max_force;
    s.max_torque = max_torque;
}

/// Unplugs (`true`) or replugs the device: every call then fails with a
/// communication error.
#[no_mangle]
pub extern "C" fn fdsim_set_disconnected(on: bool) {
    sim().disconnected = on;
}

/// The next `reads` position reads give a NaN x.
#[no_mangle]
pub extern "C" fn fdsim_inject_nan(reads: u32) {
    sim().nan_reads = reads;
}

/// The next call on an open device fails with error `code`
/// (`dhdc.h`'s `dhd_errors`).
#[no_mangle]
pub extern "C" fn fdsim_fail_next(code: c_int) {
    sim().fail_next = code;
}

/// Whether the device counts as initialised (calibrated).
#[no_mangle]
pub extern "C" fn fdsim_set_initialized(on: bool) {
    sim().initialized = on;
}

/// Seconds per force command (0: the wall time between commands).
#[no_mangle]
pub extern "C" fn fdsim_set_step(dt: f64) {
    sim().step = dt;
}

/// The mass (kg), spring (N/m) and damping (N·s/m) of the simulated handle.
#[no_mangle]
pub extern "C" fn fdsim_set_dynamics(mass: f64, stiffness: f64, damping: f64) {
    let mut s = sim();
    s.mass = mass;
    s.stiffness = stiffness;
    s.damping = damping;
}

/// Places the handle at rest at `position` (m) turned by `rotation`
/// (rotation vector, rad).
#[no_mangle]
pub unsafe extern "C" fn fdsim_set_pose(position: *const [f64; 3], rotation: *const [f64; 3]) {
    let mut s = sim();
    unsafe {
        s.position = *position;
        s.rotation = exp(*rotation);
    }
    s.velocity = [0.0; 3];
    s.angular_velocity = [0.0; 3];
}

/// The button mask and gripper angle (rad) the device reports.
#[no_mangle]
pub extern "C" fn fdsim_set_buttons(mask: c_uint, gripper_angle: f64) {
    let mut s = sim();
    s.buttons = mask;
    s.gripper_angle = gripper_angle;
}

/// Copies the state into `out`.
#[no_mangle]
pub unsafe extern "C" fn fdsim_state(out: *mut FdsimState) {
    let s = sim();
    let state = FdsimState {
        position: s.position,
        velocity: s.velocity,
        force: s.force,
        torque: s.torque,
        gripper_force: s.gripper_force,
        reads: s.reads,
        commands: s.commands,
        open: s.open,
        forces_enabled: s.forces_enabled,
        brakes: s.brakes,
        gravity_compensation: s.gravity_compensation,
        expert: s.expert,
        initialized: s.initialized,
        auto_init_calls: s.auto_init_calls,
        watchdog: s.watchdog,
        velocity_threshold: s.velocity_threshold,
    };
    if !out.is_null() {
        unsafe { *out = state };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotations_round_trip_through_their_vectors() {
        let w = [0.3, -0.2, 0.5];
        let back = rotation_vector(&exp(w));
        for i in 0..3 {
            assert!((back[i] - w[i]).abs() < 1e-12, "{back:?}");
        }
    }
}
