//! Hannaford & Ryu's time-domain passivity observer and controller on the
//! device's two ports, translation and rotation (docs/rendering.md,
//! "Passivity").
//!
//! The observer books, port by port, the energy the virtual environment
//! has taken in from the device: with `F(n)` the force written at tick `n`
//! and held until the next sample (zero-order hold) and `x` the handle's
//! position, `E(n) = E(n−1) − F(n−1)·(x(n) − x(n−1))`, the torque and
//! the handle's turn alike. A passive environment never gives back more
//! than it took, through the two ports together: `E + E_r ≥ 0` (the tool
//! turns what one port gives into what the other takes, so either alone
//! may go negative). The controller predicts the energy after this tick,
//! `E + E_r − h (F·v + τ·ω)` with the handle's velocities; when that is
//! negative it adds the damping `α = β α_max`, `α_r = β α_r,max` on both
//! ports, `β ≤ 1` just large enough to dissipate the deficit, writing
//! `F − α v` and `τ − α_r ω`. It acts only then: a passive exchange is
//! rendered untouched.

use haptic_devices::{DeviceSample, Wrench};
use nalgebra::{Point3, UnitQuaternion, Vector3};
use std::time::Duration;

/// The controller's settings (`[coupling]`'s `passivity_*`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PassivitySettings {
    /// Whether the controller adds damping; the observer books the energy
    /// either way.
    pub enabled: bool,
    /// The largest translational damping it adds (N·s/m).
    pub max_damping: f64,
    /// The largest rotational damping it adds (N·m·s/rad).
    pub max_rotational_damping: f64,
}

impl Default for PassivitySettings {
    fn default() -> Self {
        Self {
            enabled: true,
            max_damping: 50.0,
            max_rotational_damping: 0.05,
        }
    }
}

/// What the observer and the controller hold after a tick, per port.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PassivityRecord {
    /// Energy the environment has taken in through the force port (J):
    /// negative when it has given out more than it took.
    pub energy: f64,
    /// The same through the torque port (J).
    pub rotational_energy: f64,
    /// Damping the controller added this tick (N·s/m).
    pub damping: f64,
    /// Rotational damping it added this tick (N·m·s/rad).
    pub rotational_damping: f64,
}

impl PassivityRecord {
    /// What the scene has taken in through both ports (J): the energy the
    /// controller keeps from going negative.
    pub fn total_energy(&self) -> f64 {
        self.energy + self.rotational_energy
    }
}

/// The handle's state at the last sample read.
#[derive(Clone, Copy, Debug)]
struct HandleState {
    position: Point3<f64>,
    orientation: UnitQuaternion<f64>,
    timestamp: Duration,
}

/// The observer's energies, the controller's settings, and the handle's
/// motion and the written wrench they are booked from.
#[derive(Clone, Debug)]
pub struct PassivityController {
    settings: PassivitySettings,
    record: PassivityRecord,
    last: Option<HandleState>,
    /// Handle velocity, linear and angular, from the last sample.
    velocity: (Vector3<f64>, Vector3<f64>),
    /// What the device was commanded after the last write.
    written: Wrench,
}

impl PassivityController {
    pub fn new(settings: PassivitySettings) -> Self {
        Self {
            settings,
            record: PassivityRecord::default(),
            last: None,
            velocity: (Vector3::zeros(), Vector3::zeros()),
            written: Wrench::ZERO,
        }
    }

    /// Books the last written wrench over the handle's motion to `sample`
    /// (the observer), and takes the handle's velocity: the device's own
    /// where it measures it, else the motion over the samples' interval.
    pub fn observe(&mut self, sample: &DeviceSample) {
        let now = HandleState {
            position: sample.position,
            orientation: sample.orientation,
            timestamp: sample.timestamp,
        };
        let (mut linear, mut angular) = (Vector3::zeros(), Vector3::zeros());
        if let Some(last) = self.last {
            let moved = now.position - last.position;
            let turned = (now.orientation * last.orientation.inverse()).scaled_axis();
            self.record.energy -= self.written.force.dot(&moved);
            self.record.rotational_energy -= self.written.torque.dot(&turned);
            let interval = now.timestamp.saturating_sub(last.timestamp).as_secs_f64();
            if interval > 0.0 {
                (linear, angular) = (moved / interval, turned / interval);
            }
        }
        self.velocity = (
            sample.linear_velocity.unwrap_or(linear),
            sample.angular_velocity.unwrap_or(angular),
        );
        self.last = Some(now);
    }

    /// The wrench to request for `rendered` over the next `period`
    /// seconds: `rendered` itself, or with the damping that keeps the
    /// predicted energy of the two ports together from going negative.
    pub fn shape(&mut self, rendered: Wrench, period: f64) -> Wrench {
        self.record.damping = 0.0;
        self.record.rotational_damping = 0.0;
        if !self.settings.enabled || period <= 0.0 || !rendered.is_finite() {
            return rendered;
        }
        let (v, w) = self.velocity;
        let predicted = self.record.total_energy()
            - period * (rendered.force.dot(&v) + rendered.torque.dot(&w));
        // Dissipation per unit of β at the caps `α = β α_max`.
        let (max, max_rotational) = (
            self.settings.max_damping,
            self.settings.max_rotational_damping,
        );
        let capacity = period * (max * v.norm_squared() + max_rotational * w.norm_squared());
        if predicted >= 0.0 || !(capacity > f64::MIN_POSITIVE) || !capacity.is_finite() {
            return rendered;
        }
        let share = (-predicted / capacity).min(1.0);
        self.record.damping = share * max;
        self.record.rotational_damping = share * max_rotational;
        Wrench {
            force: rendered.force - v * self.record.damping,
            torque: rendered.torque - w * self.record.rotational_damping,
        }
    }

    /// Takes what the device was commanded after the write, which the next
    /// [`observe`](Self::observe) books.
    pub fn wrote(&mut self, written: Wrench) {
        // A tripped layer writes zero; a non-finite wrench never reaches
        // the device.
        self.written = if written.is_finite() {
            written
        } else {
            Wrench::ZERO
        };
    }

    /// The energies and the damping of the last tick.
    pub fn record(&self) -> PassivityRecord {
        self.record
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t: f64, x: f64) -> DeviceSample {
        DeviceSample {
            timestamp: Duration::from_secs_f64(t),
            position: Point3::new(x, 0.0, 0.0),
            orientation: UnitQuaternion::identity(),
            buttons: 0,
            linear_velocity: None,
            angular_velocity: None,
        }
    }

    /// A sampled spring wall `F = −k x` (x > 0 inside) pressed and
    /// released at constant speed: held for a period, each sample's force
    /// pushes back less than the wall's on the way in and more on the way
    /// out, so the cycle gives energy to the hand (Colgate & Schenkel).
    /// The observer books that loss; the controller cancels it.
    fn press_and_release(settings: PassivitySettings) -> (f64, f64) {
        let (k, h, speed) = (5_000.0, 1e-3, 0.05);
        let mut controller = PassivityController::new(settings);
        let mut lowest = 0.0f64;
        for n in 0..=400 {
            let t = n as f64 * h;
            // In for 0.2 s, out for 0.2 s.
            let x = speed * if t <= 0.2 { t } else { 0.4 - t };
            controller.observe(&sample(t, x));
            let rendered = Wrench {
                force: Vector3::new(-k * x.max(0.0), 0.0, 0.0),
                torque: Vector3::zeros(),
            };
            let written = controller.shape(rendered, h);
            controller.wrote(written);
            lowest = lowest.min(controller.record().energy);
        }
        (controller.record().energy, lowest)
    }

    #[test]
    fn a_sampled_wall_gives_energy_back_and_the_controller_takes_it() {
        let off = PassivitySettings {
            enabled: false,
            ..PassivitySettings::default()
        };
        let (net_off, _) = press_and_release(off);
        // The zero-order hold's loss: half a step's force `k v h / 2` per
        // unit travel, both ways, over the 0.01 m depth: `k X v h`.
        assert!(
            (net_off + 2.5e-3).abs() < 1e-4,
            "the sampled wall gave back {net_off} J"
        );
        // Cancelling the spring's return near the surface takes `α ≈ k x / v`
        // (500 N·s/m at 5 mm): with a cap far above, the energy never goes
        // negative.
        let uncapped = PassivitySettings {
            max_damping: 1e6,
            ..PassivitySettings::default()
        };
        let (net_on, lowest) = press_and_release(uncapped);
        assert!(
            net_on >= -1e-12 && lowest >= -1e-12,
            "energy {net_on} J, lowest {lowest} J"
        );
        // The default cap takes back part of it.
        let (net_capped, _) = press_and_release(PassivitySettings::default());
        assert!(
            net_capped > 0.5 * net_off,
            "{net_capped} J with the default cap against {net_off} J off"
        );
    }

    #[test]
    fn a_passive_exchange_is_left_alone() {
        // A damper takes energy every tick: the controller adds nothing.
        let mut controller = PassivityController::new(PassivitySettings::default());
        for n in 0..100 {
            let t = n as f64 * 1e-3;
            controller.observe(&sample(t, 0.1 * t));
            let rendered = Wrench {
                force: Vector3::new(-2.0 * 0.1, 0.0, 0.0),
                torque: Vector3::zeros(),
            };
            let written = controller.shape(rendered, 1e-3);
            assert_eq!(written, rendered);
            controller.wrote(written);
        }
        let record = controller.record();
        assert!((record.energy - 0.2 * 0.1 * 0.099).abs() < 1e-9);
        assert_eq!(record.damping, 0.0);
    }
}
