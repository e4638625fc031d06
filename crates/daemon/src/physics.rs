//! The physics thread: moves the scene's movable objects under the contact
//! wrenches the servo publishes, and publishes their poses back.
//!
//! Each movable object is a free rigid body with viscous drag, its frame's
//! origin at its centre of mass and its axes principal. Per step of `dt`,
//! with `J` the contact impulse the tool gave it since the previous step
//! (linear `J_F`, angular `J_τ` about the origin) — the servo accumulates
//! impulse every tick, so no tick's force is lost between steps — Newton's
//! and Euler's equations are integrated semi-implicitly, the drag
//! implicitly so that any mass and drag are stable:
//!
//! ```text
//! v ← (v + J_F / m) / (1 + dt c / m)
//! ω ← (I_w + dt c_r)⁻¹ (I_w ω + J_τ − dt ω × I_w ω),   I_w = R I_body Rᵀ
//! x ← x + dt v,   R ← exp(dt ω) R
//! ```
//!
//! Both threads exchange only through lock-free latest-value hand-off: the
//! servo never waits for a step and a step never waits for the servo.

use crate::lifecycle::{StoppableThread, ThreadName, ThreadPanicked};
use crate::pacer::Pacer;
use haptic_handoff::{LatestReader, LatestWriter};
use haptic_servo::{PhysicsSnapshot, ThreadSchedule, ToolState};
use nalgebra::{Isometry3, Matrix3, Translation3, UnitQuaternion, Vector3, Vector6};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

/// A movable scene object as the physics thread integrates it.
#[derive(Clone, Debug, PartialEq)]
pub struct MovableBody {
    /// Its name in the config.
    pub name: String,
    /// Indices of its entries in the rendering cycle's environment (two
    /// for an object of role `both`).
    pub entries: Vec<usize>,
    /// Mass (kg).
    pub mass: f64,
    /// Inertia about the body frame's axes (kg·m²).
    pub body_inertia: Matrix3<f64>,
    /// Viscous drag on the velocity (N·s/m).
    pub linear_damping: f64,
    /// Viscous drag on the angular velocity (N·m·s/rad).
    pub angular_damping: f64,
    /// Body frame → world.
    pub pose: Isometry3<f64>,
    /// World frame (m/s).
    pub velocity: Vector3<f64>,
    /// World frame (rad/s).
    pub angular_velocity: Vector3<f64>,
    /// Linear contact impulse received so far, world frame (N·s).
    pub impulse: Vector3<f64>,
}

impl MovableBody {
    /// World-frame inertia `R I_body Rᵀ`.
    fn world_inertia(&self) -> Matrix3<f64> {
        let rotation = self.pose.rotation.to_rotation_matrix();
        rotation.matrix() * self.body_inertia * rotation.matrix().transpose()
    }

    /// Advances the body by `dt` after the impulse `linear` (N·s) and
    /// `angular` (N·m·s, about the body's origin), world frame.
    pub fn step(&mut self, linear: Vector3<f64>, angular: Vector3<f64>, dt: f64) {
        let inertia = self.world_inertia();
        self.impulse += linear;
        self.velocity =
            (self.velocity + linear / self.mass) / (1.0 + dt * self.linear_damping / self.mass);
        let w = self.angular_velocity;
        let momentum = inertia * w + angular - dt * w.cross(&(inertia * w));
        let damped = inertia + Matrix3::identity() * (dt * self.angular_damping);
        if let Some(inverse) = damped.try_inverse() {
            self.angular_velocity = inverse * momentum;
        }
        let translation = self.pose.translation.vector + dt * self.velocity;
        let rotation =
            UnitQuaternion::from_scaled_axis(dt * self.angular_velocity) * self.pose.rotation;
        self.pose = Isometry3::from_parts(Translation3::from(translation), rotation);
    }

    /// Angular momentum about the centre of mass, world frame (N·m·s).
    pub fn angular_momentum(&self) -> Vector3<f64> {
        self.world_inertia() * self.angular_velocity
    }

    /// Kinetic energy (J).
    pub fn kinetic_energy(&self) -> f64 {
        let rotation = self.pose.rotation.to_rotation_matrix();
        let inertia = rotation.matrix() * self.body_inertia * rotation.matrix().transpose();
        0.5 * self.mass * self.velocity.norm_squared()
            + 0.5
                * self
                    .angular_velocity
                    .dot(&(inertia * self.angular_velocity))
    }
}

/// How the physics thread runs.
pub struct PhysicsOptions {
    pub rate_hz: f64,
    pub schedule: ThreadSchedule,
    /// The environment's poses in the cycle's order, as built.
    pub environment_poses: Vec<Isometry3<f64>>,
    pub bodies: Vec<MovableBody>,
}

/// What the physics thread did.
#[derive(Clone, Debug)]
pub struct PhysicsReport {
    pub steps: u64,
    /// Steps that ended after the next one was due.
    pub overruns: u64,
    /// The bodies at the end.
    pub bodies: Vec<MovableBody>,
}

/// A running physics thread, stopped and joined when dropped.
pub struct PhysicsThread(StoppableThread<PhysicsReport>);

impl PhysicsThread {
    /// Starts stepping at `options.rate_hz`, reading the servo's tool state
    /// from `tool` and publishing poses to `snapshots`. `step` advances the
    /// world by a step (the daemon's is [`PhysicsWorld::step`]).
    pub fn spawn(
        options: PhysicsOptions,
        tool: LatestReader<ToolState>,
        snapshots: LatestWriter<PhysicsSnapshot>,
        step: impl FnMut(&mut PhysicsWorld, &ToolState, f64) + Send + 'static,
    ) -> io::Result<PhysicsThread> {
        StoppableThread::spawn(ThreadName::Physics, move |stop| {
            run(options, tool, snapshots, step, stop)
        })
        .map(PhysicsThread)
    }

    /// Whether the thread has ended, which before [`stop`](Self::stop)
    /// means it panicked.
    pub fn is_finished(&self) -> bool {
        self.0.is_finished()
    }

    /// Stops stepping and returns the report, or the thread's panic.
    pub fn stop(self) -> Result<PhysicsReport, ThreadPanicked> {
        self.0.stop()
    }
}

/// The movable bodies and the environment poses the servo renders.
pub struct PhysicsWorld {
    pub bodies: Vec<MovableBody>,
    /// In the rendering cycle's environment order.
    poses: Vec<Isometry3<f64>>,
    /// The servo's running contact impulses at the previous step.
    impulses: Vec<Vector6<f64>>,
    sequence: u64,
}

impl PhysicsWorld {
    pub fn new(environment_poses: Vec<Isometry3<f64>>, bodies: Vec<MovableBody>) -> Self {
        Self {
            impulses: vec![Vector6::zeros(); environment_poses.len()],
            bodies,
            poses: environment_poses,
            sequence: 0,
        }
    }

    /// Advances every body by `dt` under the contact impulse `tool`'s
    /// running sums gained since the previous step.
    pub fn step(&mut self, tool: &ToolState, dt: f64) {
        for body in &mut self.bodies {
            let mut impulse = Vector6::zeros();
            for &entry in &body.entries {
                if let (Some(now), Some(before)) =
                    (tool.contact_impulses.get(entry), self.impulses.get(entry))
                {
                    impulse += now - before;
                }
            }
            body.step(
                impulse.fixed_rows::<3>(0).into(),
                impulse.fixed_rows::<3>(3).into(),
                dt,
            );
            for &entry in &body.entries {
                if let Some(pose) = self.poses.get_mut(entry) {
                    *pose = body.pose;
                }
            }
        }
        let known = self.impulses.len().min(tool.contact_impulses.len());
        self.impulses[..known].copy_from_slice(&tool.contact_impulses[..known]);
    }

    /// Publishes the environment poses to the servo, when anything moves.
    pub fn publish(&mut self, snapshots: &mut LatestWriter<PhysicsSnapshot>) {
        if self.bodies.is_empty() {
            return;
        }
        self.sequence += 1;
        snapshots.publish_with(|snapshot| {
            snapshot.sequence = self.sequence;
            snapshot.environment_poses.clone_from(&self.poses);
        });
    }
}

fn run(
    options: PhysicsOptions,
    mut tool: LatestReader<ToolState>,
    mut snapshots: LatestWriter<PhysicsSnapshot>,
    mut step: impl FnMut(&mut PhysicsWorld, &ToolState, f64),
    stop: &AtomicBool,
) -> PhysicsReport {
    options.schedule.apply("physics");
    let mut pacer = Pacer::new(options.rate_hz);
    let dt = pacer.period().as_secs_f64();
    let mut world = PhysicsWorld::new(options.environment_poses, options.bodies);
    let mut report = PhysicsReport {
        steps: 0,
        overruns: 0,
        bodies: Vec::new(),
    };
    while !stop.load(Ordering::Acquire) {
        step(&mut world, tool.read(), dt);
        world.publish(&mut snapshots);
        report.steps += 1;
        if !pacer.wait() {
            report.overruns += 1;
        }
    }
    report.bodies = world.bodies;
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cube(mass: f64, damping: f64) -> MovableBody {
        let side: f64 = 0.05;
        MovableBody {
            name: "cube".into(),
            entries: vec![0],
            mass,
            body_inertia: Matrix3::identity() * (mass * side * side / 6.0),
            linear_damping: damping,
            angular_damping: 0.0,
            pose: Isometry3::identity(),
            velocity: Vector3::zeros(),
            angular_velocity: Vector3::zeros(),
            impulse: Vector3::zeros(),
        }
    }

    #[test]
    fn a_constant_force_accelerates_as_newton_says() {
        let mut body = cube(0.5, 0.0);
        let dt = 0.005;
        for _ in 0..200 {
            body.step(Vector3::new(dt, 0.0, 0.0), Vector3::zeros(), dt);
        }
        // v = F t / m = 1 · 1 / 0.5; semi-implicit Euler: x = a dt² n(n+1)/2.
        assert!((body.velocity.x - 2.0).abs() < 1e-12);
        let expected = 2.0 * dt * dt * 200.0 * 201.0 / 2.0;
        assert!((body.pose.translation.x - expected).abs() < 1e-12);
        assert!(body.pose.translation.vector.yz().norm() < 1e-15);
    }

    #[test]
    fn drag_brings_the_body_to_its_terminal_velocity() {
        let mut body = cube(0.5, 2.0);
        let dt = 0.005;
        for _ in 0..4000 {
            body.step(Vector3::new(0.0, dt, 0.0), Vector3::zeros(), dt);
        }
        // F = c v.
        assert!((body.velocity.y - 0.5).abs() < 1e-9);
    }

    /// Explicit drag diverges once dt c / m > 2; the implicit drag decays
    /// monotonically for any mass.
    #[test]
    fn drag_on_a_light_body_decays_without_overshoot() {
        let mut body = cube(0.001, 2.0);
        body.velocity = Vector3::new(1.0, 0.0, 0.0);
        body.angular_damping = 1e-3;
        body.angular_velocity = Vector3::new(0.0, 0.0, 10.0);
        let mut previous = (body.velocity.x, body.angular_velocity.z);
        for _ in 0..50 {
            body.step(Vector3::zeros(), Vector3::zeros(), 0.005);
            let now = (body.velocity.x, body.angular_velocity.z);
            assert!(now.0 >= 0.0 && now.0 < previous.0, "{now:?}");
            assert!(now.1 >= 0.0 && now.1 < previous.1, "{now:?}");
            previous = now;
        }
    }

    /// Torque-free spin about a non-principal axis: the world angular
    /// momentum stays put while ω wobbles, which the gyroscopic term
    /// ω × I ω decides (with its sign flipped the momentum swings away).
    #[test]
    fn free_spin_conserves_angular_momentum() {
        let mut body = cube(0.5, 0.0);
        body.body_inertia = Matrix3::from_diagonal(&Vector3::new(1e-4, 2e-4, 3e-4));
        body.angular_velocity = Vector3::new(1.0, 0.3, 2.0);
        let momentum = body.angular_momentum();
        let energy = body.kinetic_energy();
        let start = body.angular_velocity;
        for _ in 0..2000 {
            body.step(Vector3::zeros(), Vector3::zeros(), 2.5e-4);
        }
        let drift = (body.angular_momentum() - momentum).norm() / momentum.norm();
        assert!(drift < 2e-3, "momentum drifted by {drift}");
        assert!((body.kinetic_energy() - energy).abs() < 1e-2 * energy);
        assert!(
            (body.angular_velocity - start).norm() > 0.1,
            "ω did not wobble"
        );
    }

    #[test]
    fn an_angular_impulse_turns_the_body_about_its_axis() {
        let mut body = cube(0.5, 0.0);
        let i = body.body_inertia[(0, 0)];
        let dt = 0.001;
        for _ in 0..100 {
            body.step(Vector3::zeros(), Vector3::new(0.0, 0.0, 1e-3 * dt), dt);
        }
        // ω = τ t / I.
        assert!((body.angular_velocity.z - 1e-3 * 0.1 / i).abs() < 1e-9);
    }
}
