//! A device that replays a recorded [`Trajectory`].
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
use nalgebra::{Point3, UnitQuaternion, Vector3};
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
