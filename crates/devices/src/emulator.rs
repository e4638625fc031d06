//! A device that replays a recorded [`Trajectory`], and a recorder (and
//! reader) of what the servo loop did each tick.
//!
//! [`TrajectoryEmulator`] is the device CI drives the daemon with. In
//! [`EmulatorMode::Kinematic`] the handle is the recording. In
//! [`EmulatorMode::Hand`] the recording is the hand's intention: a handle of
//! mass `m` is held by a spring-damper hand and pushed by the rendered
//! wrench, integrated with semi-implicit Euler at the tick `dt`:
//!
//! ```text
//! a = (k_hand (x_rec − x) + c_hand (ẋ_rec − ẋ) − b ẋ + F) / m
//! ẋ ← ẋ + a dt,   x ← x + ẋ dt
//! ```
//!
//! For a rendered stiffness `k` this is stable iff
//! `k_hand + k < 4 m / dt² − 2 (c_hand + b) / dt` (see
//! [`HandParams::max_render_stiffness`]).

use crate::device::{DeviceCapabilities, DeviceError, DeviceSample, HapticDevice, Wrench};
use crate::rate::ServoRate;
use crate::trajectory::Trajectory;
use nalgebra::{Isometry3, Point3, Quaternion, Translation3, UnitQuaternion, Vector3};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// The handle's dynamics.
#[derive(Clone, Debug, PartialEq)]
pub enum EmulatorMode {
    /// The handle follows the recording exactly; written wrenches are
    /// ignored.
    Kinematic,
    /// The recording drives a spring-damper hand holding a handle with mass.
    Hand(HandParams),
}

/// Handle and hand parameters of [`EmulatorMode::Hand`], in SI units.
#[derive(Clone, Debug, PartialEq)]
pub struct HandParams {
    /// Handle mass (kg).
    pub mass: f64,
    /// Hand stiffness (N/m).
    pub k_hand: f64,
    /// Hand damping (N·s/m).
    pub c_hand: f64,
    /// The handle's own damping to ground (N·s/m).
    pub damping: f64,
    /// Rotational dynamics; `None` keeps the orientation kinematic (it
    /// follows the recording and rendered torques are ignored).
    pub rotation: Option<RotationParams>,
}

/// Isotropic rotational handle and hand, in SI units.
#[derive(Clone, Debug, PartialEq)]
pub struct RotationParams {
    /// Handle inertia about every axis (kg·m²).
    pub inertia: f64,
    /// Hand rotational stiffness (N·m/rad).
    pub k_hand: f64,
    /// Hand rotational damping (N·m·s/rad).
    pub c_hand: f64,
    /// The handle's own rotational damping to ground (N·m·s/rad).
    pub damping: f64,
}

impl HandParams {
    /// Largest rendered (wall) stiffness, in N/m, for which semi-implicit
    /// Euler at `dt` stays stable: `4 m / dt² − 2 (c_hand + b) / dt − k_hand`.
    ///
    /// With `K = k_hand + k` and `C = c_hand + b`, one step maps
    /// `(x, dt·ẋ)` by `[[1 − a, 1 − c], [−a, 1 − c]]`, `a = K dt²/m`,
    /// `c = C dt/m`; the Jury conditions give `0 < a < 4 − 2c` (and
    /// `c < 2`). Without damping the bound is marginal: energy stays
    /// bounded but does not decay.
    pub fn max_render_stiffness(&self, dt: f64) -> f64 {
        4.0 * self.mass / (dt * dt) - 2.0 * (self.c_hand + self.damping) / dt - self.k_hand
    }
}

/// How emulated time advances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// Wall clock since the first read, quantised to ticks of `dt`; a read
    /// integrates every tick that has elapsed.
    RealTime,
    /// The first read is tick 0; every later read advances exactly one tick.
    /// Deterministic.
    Stepped,
}

/// What happens after the last recorded sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtEnd {
    /// Reads fail with [`DeviceError::EndOfRecording`].
    Error,
    /// The last sample is held, at rest, forever.
    Hold,
}

/// Configuration of a [`TrajectoryEmulator`].
#[derive(Clone, Debug, PartialEq)]
pub struct EmulatorConfig {
    pub mode: EmulatorMode,
    pub clock: Clock,
    /// The servo's rate, one emulator tick per servo tick.
    pub rate: ServoRate,
    pub at_end: AtEnd,
    /// Hand mode: where the handle starts (at rest) relative to the first
    /// recorded position (m).
    pub initial_offset: Vector3<f64>,
    /// What the emulator reports as its capabilities.
    pub capabilities: DeviceCapabilities,
}

impl EmulatorConfig {
    /// A 1 kHz emulator that ends with [`AtEnd::Error`]; capabilities are 6
    /// DoF in, none out for kinematic and 3 or 6 out for hand mode, with
    /// `max_stiffness` the hand mode's stability limit at 1 kHz.
    pub fn new(mode: EmulatorMode, clock: Clock) -> Self {
        let rate = ServoRate::DEFAULT;
        let (output_dof, max_force, max_torque, max_stiffness) = match &mode {
            EmulatorMode::Kinematic => (0, 0.0, 0.0, 0.0),
            EmulatorMode::Hand(h) => (
                if h.rotation.is_some() { 6 } else { 3 },
                100.0,
                if h.rotation.is_some() { 10.0 } else { 0.0 },
                h.max_render_stiffness(rate.dt()),
            ),
        };
        let capabilities = DeviceCapabilities {
            name: "trajectory emulator".to_owned(),
            input_dof: 6,
            output_dof,
            workspace_half_extents: Vector3::repeat(0.5),
            max_force,
            max_torque,
            max_stiffness,
            native_rate: rate.hz(),
        };
        EmulatorConfig {
            mode,
            clock,
            rate,
            at_end: AtEnd::Error,
            initial_offset: Vector3::zeros(),
            capabilities,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Handle {
    position: Point3<f64>,
    velocity: Vector3<f64>,
    orientation: UnitQuaternion<f64>,
    angular_velocity: Vector3<f64>,
}

/// A [`HapticDevice`] replaying a [`Trajectory`].
pub struct TrajectoryEmulator {
    trajectory: Trajectory,
    config: EmulatorConfig,
    handle: Handle,
    wrench: Wrench,
    tick: u64,
    started: Option<Instant>,
}

impl TrajectoryEmulator {
    /// An emulator at the start of the recording, the handle at rest on the
    /// first sample (plus [`EmulatorConfig::initial_offset`] in hand mode).
    pub fn new(trajectory: Trajectory, config: EmulatorConfig) -> Self {
        let start = trajectory.at(trajectory.start_s());
        TrajectoryEmulator {
            handle: Handle {
                position: start.position + config.initial_offset,
                velocity: Vector3::zeros(),
                orientation: start.orientation,
                angular_velocity: Vector3::zeros(),
            },
            trajectory,
            config,
            wrench: Wrench::ZERO,
            tick: 0,
            started: None,
        }
    }

    /// The configuration in use.
    pub fn config(&self) -> &EmulatorConfig {
        &self.config
    }

    /// Current tick (0 at the first read).
    pub fn tick(&self) -> u64 {
        self.tick
    }

    fn elapsed_s(&self, tick: u64) -> f64 {
        tick as f64 * self.config.rate.dt()
    }

    /// Advances the handle by one tick under the last written wrench.
    fn step(&mut self) {
        let dt = self.config.rate.dt();
        let t = self.trajectory.start_s() + self.elapsed_s(self.tick);
        let rec = self.trajectory.at(t);
        if let EmulatorMode::Hand(p) = &self.config.mode {
            let h = &mut self.handle;
            let force = p.k_hand * (rec.position - h.position)
                + p.c_hand * (rec.linear_velocity - h.velocity)
                - p.damping * h.velocity
                + self.wrench.force;
            h.velocity += force / p.mass * dt;
            h.position += h.velocity * dt;
            if let Some(r) = &p.rotation {
                let error = (rec.orientation * h.orientation.inverse()).scaled_axis();
                let torque = r.k_hand * error
                    + r.c_hand * (rec.angular_velocity - h.angular_velocity)
                    - r.damping * h.angular_velocity
                    + self.wrench.torque;
                h.angular_velocity += torque / r.inertia * dt;
                h.orientation =
                    UnitQuaternion::from_scaled_axis(h.angular_velocity * dt) * h.orientation;
            }
        }
        self.tick += 1;
    }
}

impl HapticDevice for TrajectoryEmulator {
    fn capabilities(&self) -> &DeviceCapabilities {
        &self.config.capabilities
    }

    fn read(&mut self) -> Result<DeviceSample, DeviceError> {
        let target = match (self.config.clock, self.started) {
            (_, None) => {
                self.started = Some(Instant::now());
                0
            }
            (Clock::Stepped, Some(_)) => self.tick + 1,
            (Clock::RealTime, Some(start)) => {
                (start.elapsed().as_secs_f64() / self.config.rate.dt()) as u64
            }
        };
        let duration = self.trajectory.end_s() - self.trajectory.start_s();
        let end_tick = (duration / self.config.rate.dt() + 1e-6).floor() as u64;
        let target = match self.config.at_end {
            AtEnd::Error if target > end_tick => return Err(DeviceError::EndOfRecording),
            _ => target,
        };
        while self.tick < target {
            self.step();
        }
        let elapsed = self.elapsed_s(self.tick);
        let rec = self.trajectory.at(self.trajectory.start_s() + elapsed);
        let (position, orientation, velocity, angular_velocity) = match &self.config.mode {
            EmulatorMode::Kinematic => (
                rec.position,
                rec.orientation,
                rec.linear_velocity,
                rec.angular_velocity,
            ),
            EmulatorMode::Hand(p) => {
                let h = &self.handle;
                match p.rotation {
                    Some(_) => (h.position, h.orientation, h.velocity, h.angular_velocity),
                    None => (
                        h.position,
                        rec.orientation,
                        h.velocity,
                        rec.angular_velocity,
                    ),
                }
            }
        };
        Ok(DeviceSample {
            timestamp: Duration::from_secs_f64(elapsed),
            position,
            orientation,
            buttons: rec.buttons,
            linear_velocity: Some(velocity),
            angular_velocity: Some(angular_velocity),
        })
    }

    fn write(&mut self, wrench: &Wrench) -> Result<(), DeviceError> {
        if !wrench.is_finite() {
            return Err(DeviceError::WrenchNotFinite);
        }
        self.wrench = *wrench;
        Ok(())
    }
}

/// What the servo loop did in one tick, as the [`Recorder`] stores it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RecordedTick {
    pub tick: u64,
    /// Device time of the tick's sample.
    pub time: Duration,
    /// Device pose read this tick.
    pub pose: Isometry3<f64>,
    /// Wrench written to the device this tick, after the safety layer.
    pub wrench: Wrench,
    /// Wrench rendered this tick, in the device frame: what the servo asked
    /// for before the safety layer and before any output mask of the device
    /// (a kinematic emulator writes nothing, but this shows what it would
    /// have felt).
    pub rendered: Wrench,
    /// The tool after the tick, scene frame.
    pub tool_pose: Isometry3<f64>,
    /// Number of contacts.
    pub contacts: u32,
    /// Servo state code (defined by the caller).
    pub state: u8,
    /// Friction verdict code (defined by the caller).
    pub verdict: u8,
    /// The tool pose came out non-finite and was reset this tick.
    pub quarantined: bool,
    /// Duration of the tick's computation (ns); pass a deterministic value
    /// (e.g. 0) when runs are compared byte for byte.
    pub cycle_time_ns: u64,
}

impl RecordedTick {
    /// The pose of a device sample.
    pub fn pose_of(sample: &DeviceSample) -> Isometry3<f64> {
        Isometry3::from_parts(
            Translation3::from(sample.position.coords),
            sample.orientation,
        )
    }
}

/// The tick format version the [`Recorder`] writes and [`read_ticks`] reads.
pub(crate) const TICK_FORMAT_VERSION: u32 = 2;

/// Column layout of a tick recording: version 1's columns, then (since
/// version 2) the rendered wrench, the tool pose, the friction verdict and
/// the quarantine flag.
pub(crate) const TICK_COLUMNS: &str =
    "tick,time_ns,x,y,z,qw,qx,qy,qz,fx,fy,fz,tx,ty,tz,contacts,state,cycle_time_ns,\
rendered_fx,rendered_fy,rendered_fz,rendered_tx,rendered_ty,rendered_tz,\
tool_x,tool_y,tool_z,tool_qw,tool_qx,tool_qy,tool_qz,verdict,quarantined";

/// Number of columns of [`TICK_COLUMNS`].
const TICK_COLUMN_COUNT: usize = 33;

/// Writes one line per [`RecordedTick`] in a text format like the trajectory
/// format: `# hapticd-ticks: 2` and `# columns:` (docs/devices.md), then
/// comma-separated values, positions in metres, floats as the shortest
/// decimal that round-trips. Equal records give equal bytes.
pub struct Recorder<W: Write> {
    out: W,
}

impl Recorder<BufWriter<File>> {
    /// Creates (or truncates) a recording file.
    pub fn create(path: impl AsRef<Path>) -> io::Result<Self> {
        Recorder::new(BufWriter::new(File::create(path)?))
    }
}

impl<W: Write> Recorder<W> {
    /// Starts a recording on `out` by writing the header.
    pub fn new(mut out: W) -> io::Result<Self> {
        writeln!(out, "# hapticd-ticks: {TICK_FORMAT_VERSION}")?;
        writeln!(out, "# columns: {TICK_COLUMNS}")?;
        Ok(Recorder { out })
    }

    /// Appends one tick.
    pub fn record(&mut self, r: &RecordedTick) -> io::Result<()> {
        let p = r.pose.translation.vector;
        let q = r.pose.rotation;
        let (f, t) = (r.wrench.force, r.wrench.torque);
        let (rf, rt) = (r.rendered.force, r.rendered.torque);
        let s = r.tool_pose.translation.vector;
        let sq = r.tool_pose.rotation;
        writeln!(
            self.out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},\
             {},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            r.tick,
            r.time.as_nanos(),
            p.x,
            p.y,
            p.z,
            q.w,
            q.i,
            q.j,
            q.k,
            f.x,
            f.y,
            f.z,
            t.x,
            t.y,
            t.z,
            r.contacts,
            r.state,
            r.cycle_time_ns,
            rf.x,
            rf.y,
            rf.z,
            rt.x,
            rt.y,
            rt.z,
            s.x,
            s.y,
            s.z,
            sq.w,
            sq.i,
            sq.j,
            sq.k,
            r.verdict,
            u8::from(r.quarantined),
        )
    }

    /// Flushes what is written so far.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Flushes and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// A tick recording that could not be read: the file, the 1-based line
/// (`None` for the whole file) and the cause.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{}{message}", line.map_or(String::new(), |l| format!("{l}: ")))]
pub struct TickFileError {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

/// Parses a tick recording written by [`Recorder`] (version 2);
/// `file` names it in errors. Every value comes
/// back with the bits it was written with; quaternions are taken as
/// written, not renormalised.
pub fn read_ticks(text: &str, file: &str) -> Result<Vec<RecordedTick>, TickFileError> {
    let error = |line: Option<usize>, message: String| TickFileError {
        file: file.to_owned(),
        line,
        message,
    };
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    let version = format!("# hapticd-ticks: {TICK_FORMAT_VERSION}");
    match lines.next() {
        Some((_, line)) if line.trim_end() == version => {}
        Some((n, line)) if line.starts_with("# hapticd-ticks:") => {
            return Err(error(
                Some(n),
                format!(
                    "unsupported tick format `{}` (supported: {TICK_FORMAT_VERSION})",
                    line["# hapticd-ticks:".len()..].trim()
                ),
            ))
        }
        _ => {
            return Err(error(
                Some(1),
                format!("the first line must be `{version}`"),
            ))
        }
    }
    let columns = format!("# columns: {TICK_COLUMNS}");
    match lines.next() {
        Some((_, line)) if line.trim_end() == columns => {}
        Some((n, _)) => return Err(error(Some(n), format!("expected `{columns}`"))),
        None => return Err(error(None, format!("missing `{columns}`"))),
    }
    let names: Vec<&str> = TICK_COLUMNS.split(',').collect();
    lines
        .map(|(n, line)| {
            let fields: Vec<&str> = line.trim_end().split(',').map(str::trim).collect();
            if fields.len() != TICK_COLUMN_COUNT {
                return Err(error(
                    Some(n),
                    format!(
                        "expected {TICK_COLUMN_COUNT} columns, found {}",
                        fields.len()
                    ),
                ));
            }
            let float = |i: usize| {
                fields[i].parse::<f64>().map_err(|_| {
                    error(
                        Some(n),
                        format!("bad number `{}` in column `{}`", fields[i], names[i]),
                    )
                })
            };
            let integer = |i: usize| {
                fields[i].parse::<u64>().map_err(|_| {
                    error(
                        Some(n),
                        format!("bad integer `{}` in column `{}`", fields[i], names[i]),
                    )
                })
            };
            let code = |i: usize| {
                fields[i].parse::<u8>().map_err(|_| {
                    error(
                        Some(n),
                        format!("bad code `{}` in column `{}`", fields[i], names[i]),
                    )
                })
            };
            let vector = |i: usize| -> Result<Vector3<f64>, TickFileError> {
                Ok(Vector3::new(float(i)?, float(i + 1)?, float(i + 2)?))
            };
            let pose = |i: usize| -> Result<Isometry3<f64>, TickFileError> {
                let q = Quaternion::new(float(i + 3)?, float(i + 4)?, float(i + 5)?, float(i + 6)?);
                Ok(Isometry3::from_parts(
                    Translation3::from(vector(i)?),
                    UnitQuaternion::new_unchecked(q),
                ))
            };
            let quarantined = match fields[32] {
                "0" => false,
                "1" => true,
                other => {
                    return Err(error(
                        Some(n),
                        format!("bad flag `{other}` in column `quarantined` (0 or 1)"),
                    ))
                }
            };
            let contacts = u32::try_from(integer(15)?)
                .map_err(|_| error(Some(n), format!("contacts `{}` out of range", fields[15])))?;
            Ok(RecordedTick {
                tick: integer(0)?,
                time: Duration::from_nanos(integer(1)?),
                pose: pose(2)?,
                wrench: Wrench {
                    force: vector(9)?,
                    torque: vector(12)?,
                },
                contacts,
                state: code(16)?,
                cycle_time_ns: integer(17)?,
                rendered: Wrench {
                    force: vector(18)?,
                    torque: vector(21)?,
                },
                tool_pose: pose(24)?,
                verdict: code(31)?,
                quarantined,
            })
        })
        .collect()
}

/// Reads and parses a tick recording file ([`read_ticks`]).
pub fn load_ticks(path: impl AsRef<Path>) -> Result<Vec<RecordedTick>, TickFileError> {
    let path = path.as_ref();
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| TickFileError {
        file: file.clone(),
        line: None,
        message: format!("cannot read: {e}"),
    })?;
    read_ticks(&text, &file)
}
