//! The physics thread: moves the scene's movable objects under the contact
//! wrenches the servo publishes, and publishes their poses back.
//!
//! Each movable object is a free rigid body with viscous drag, integrated
//! by semi-implicit Euler at the thread's rate:
//!
//! ```text
//! v ← v + dt (F − c v) / m
//! ω ← ω + dt I_w⁻¹ (τ − ω × I_w ω − c_r ω),   I_w = R I_body Rᵀ
//! x ← x + dt v,   R ← exp(dt ω) R
//! ```
//!
//! `F` and `τ` (about the body's frame origin) are the penalty contact
//! wrench the tool exerts on it in the servo's latest tick. Both threads
//! exchange only through lock-free latest-value hand-off: the servo never
//! waits for a step and a step never waits for the servo.

use haptic_handoff::{LatestReader, LatestWriter};
use haptic_servo::{PhysicsSnapshot, ThreadSchedule, ToolState};
use nalgebra::{Isometry3, Matrix3, Translation3, UnitQuaternion, Vector3};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

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
}

impl MovableBody {
    /// Advances the body by `dt` under `force` and `torque` (world frame,
    /// torque about the body's origin).
    pub fn step(&mut self, force: Vector3<f64>, torque: Vector3<f64>, dt: f64) {
        let rotation = self.pose.rotation.to_rotation_matrix();
        let inertia = rotation.matrix() * self.body_inertia * rotation.matrix().transpose();
        self.velocity += dt * (force - self.linear_damping * self.velocity) / self.mass;
        let w = self.angular_velocity;
        let net = torque - w.cross(&(inertia * w)) - self.angular_damping * w;
        if let Some(inverse) = inertia.try_inverse() {
            self.angular_velocity += dt * (inverse * net);
        }
        let translation = self.pose.translation.vector + dt * self.velocity;
        let rotation =
            UnitQuaternion::from_scaled_axis(dt * self.angular_velocity) * self.pose.rotation;
        self.pose = Isometry3::from_parts(Translation3::from(translation), rotation);
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
    /// The servo's last tool state seen.
    pub last_tool_tick: Option<u64>,
}

/// A running physics thread.
pub struct PhysicsThread {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<PhysicsReport>,
}

impl PhysicsThread {
    /// Starts stepping at `options.rate_hz`, reading the servo's tool state
    /// from `tool` and publishing poses to `snapshots`.
    pub fn spawn(
        options: PhysicsOptions,
        tool: LatestReader<ToolState>,
        snapshots: LatestWriter<PhysicsSnapshot>,
    ) -> io::Result<PhysicsThread> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("haptic-physics".into())
            .spawn(move || run(options, tool, snapshots, &flag))?;
        Ok(PhysicsThread { stop, thread })
    }

    pub fn stop(self) -> PhysicsReport {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("the physics thread panicked")
    }
}

/// The movable bodies and the environment poses the servo renders.
pub struct PhysicsWorld {
    pub bodies: Vec<MovableBody>,
    /// In the rendering cycle's environment order.
    poses: Vec<Isometry3<f64>>,
    sequence: u64,
}

impl PhysicsWorld {
    pub fn new(environment_poses: Vec<Isometry3<f64>>, bodies: Vec<MovableBody>) -> Self {
        Self {
            bodies,
            poses: environment_poses,
            sequence: 0,
        }
    }

    /// Advances every body by `dt` under the wrenches of `tool`'s tick.
    pub fn step(&mut self, tool: &ToolState, dt: f64) {
        for body in &mut self.bodies {
            let mut force = Vector3::zeros();
            let mut torque = Vector3::zeros();
            for &entry in &body.entries {
                if let Some(w) = tool.contact_wrenches.get(entry) {
                    force += Vector3::new(w[0], w[1], w[2]);
                    torque += Vector3::new(w[3], w[4], w[5]);
                }
            }
            body.step(force, torque, dt);
            for &entry in &body.entries {
                if let Some(pose) = self.poses.get_mut(entry) {
                    *pose = body.pose;
                }
            }
        }
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
    stop: &AtomicBool,
) -> PhysicsReport {
    options.schedule.apply("physics");
    let period = Duration::from_secs_f64(1.0 / options.rate_hz);
    let dt = period.as_secs_f64();
    let mut world = PhysicsWorld::new(options.environment_poses, options.bodies);
    let mut report = PhysicsReport {
        steps: 0,
        overruns: 0,
        bodies: Vec::new(),
        last_tool_tick: None,
    };
    let mut next = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        if let Some(state) = tool.read_new() {
            report.last_tool_tick = Some(state.tick);
        }
        world.step(tool.read(), dt);
        world.publish(&mut snapshots);
        report.steps += 1;
        next += period;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            report.overruns += 1;
            next = now;
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
        }
    }

    #[test]
    fn a_constant_force_accelerates_as_newton_says() {
        let mut body = cube(0.5, 0.0);
        let dt = 0.005;
        for _ in 0..200 {
            body.step(Vector3::new(1.0, 0.0, 0.0), Vector3::zeros(), dt);
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
        for _ in 0..4000 {
            body.step(Vector3::new(0.0, 1.0, 0.0), Vector3::zeros(), 0.005);
        }
        // F = c v.
        assert!((body.velocity.y - 0.5).abs() < 1e-9);
    }

    #[test]
    fn free_spin_about_a_principal_axis_keeps_its_energy_and_axis() {
        let mut body = cube(0.5, 0.0);
        body.body_inertia = Matrix3::from_diagonal(&Vector3::new(1e-4, 2e-4, 3e-4));
        body.angular_velocity = Vector3::new(0.0, 0.0, 2.0);
        let energy = body.kinetic_energy();
        for _ in 0..1000 {
            body.step(Vector3::zeros(), Vector3::zeros(), 0.005);
        }
        assert!((body.kinetic_energy() - energy).abs() < 1e-12 * energy.max(1.0));
        let axis = body.pose.rotation.scaled_axis();
        assert!(axis.xy().norm() < 1e-9);
        assert!((body.angular_velocity.z - 2.0).abs() < 1e-12);
    }

    #[test]
    fn a_torque_turns_the_body_about_its_axis() {
        let mut body = cube(0.5, 0.0);
        let i = body.body_inertia[(0, 0)];
        let dt = 0.001;
        for _ in 0..100 {
            body.step(Vector3::zeros(), Vector3::new(0.0, 0.0, 1e-3), dt);
        }
        // ω = τ t / I.
        assert!((body.angular_velocity.z - 1e-3 * 0.1 / i).abs() < 1e-9);
    }
}
