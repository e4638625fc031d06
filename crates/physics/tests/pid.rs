//! Drumwright's experiments with a block against a plane (§IV-A, §IV-B),
//! with the block's point shell against the half-space `z < 0` in closed
//! form and the PID forces stepped by symplectic Euler.

use haptic_core::Vector6;
use haptic_physics::pid::{ContactPhase, PidContacts, PidParameters, PidPoints};
use haptic_physics::{Forces, Motion, PairContact, RigidBody};
use nalgebra::{Isometry3, Matrix3, Point3, Translation3, UnitQuaternion, Vector3};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

const GRAVITY: f64 = 9.81;
const PLANE: usize = 0;
const BLOCK: usize = 1;

/// A box's surface sampled on the lattice of `divisions` cells per edge:
/// corners, edges and faces, each with its outward normal (the normalised
/// sum of the faces' normals at edges and corners), body frame.
struct BoxShell {
    points: Vec<Point3<f64>>,
    normals: Vec<Vector3<f64>>,
}

fn box_shell(half: f64, divisions: usize) -> BoxShell {
    let coordinate = |k: usize| -half + 2.0 * half * k as f64 / divisions as f64;
    let mut shell = BoxShell {
        points: Vec::new(),
        normals: Vec::new(),
    };
    for i in 0..=divisions {
        for j in 0..=divisions {
            for k in 0..=divisions {
                let index = [i, j, k];
                let side = |c: usize| match index[c] {
                    0 => -1.0,
                    n if n == divisions => 1.0,
                    _ => 0.0,
                };
                let normal = Vector3::new(side(0), side(1), side(2));
                if normal == Vector3::zeros() {
                    continue;
                }
                shell.points.push(Point3::new(coordinate(i), coordinate(j), coordinate(k)));
                shell.normals.push(normal.normalize());
            }
        }
    }
    shell
}

/// The block's shell points below `z = 0`, in the plane's field `φ = z`.
fn plane_contacts(bodies: &[RigidBody], shell: &BoxShell, out: &mut Vec<PairContact>) {
    out.clear();
    let pose = &bodies[BLOCK].pose;
    for (k, (p, n)) in shell.points.iter().zip(&shell.normals).enumerate() {
        let position = pose * p;
        if position.z < 0.0 {
            out.push(PairContact {
                shell_body: BLOCK,
                field_body: PLANE,
                point: k as u32,
                weight: 1,
                position,
                normal: pose.rotation * n,
                distance: position.z,
                distance_gradient: Vector3::z(),
            });
        }
    }
}

/// A static plane and a uniform box of edge `2 half` and `mass` at `pose`, at rest.
fn plane_and_block(half: f64, mass: f64, pose: Isometry3<f64>) -> Vec<RigidBody> {
    let body = |name: &str, motion, mass, inertia, pose| RigidBody {
        name: name.to_string(),
        motion,
        mass,
        body_inertia: inertia,
        pose,
        velocity: Vector3::zeros(),
        angular_velocity: Vector3::zeros(),
        geometry: None,
        static_friction: 0.5,
        dynamic_friction: 0.5,
    };
    let inertia = Matrix3::identity() * (mass * (2.0 * half).powi(2) / 6.0);
    vec![
        body("plane", Motion::Static, 1.0, Matrix3::identity(), Isometry3::identity()),
        body("block", Motion::Dynamic, mass, inertia, pose),
    ]
}

/// The block on the plane under the PID model, stepped by symplectic Euler
/// (`v += dt M⁻¹ F`, `L`'s rate with the gyroscopic term, then the pose).
struct Simulation {
    bodies: Vec<RigidBody>,
    shell: BoxShell,
    pid: PidContacts,
    contacts: Vec<PairContact>,
    forces: Forces,
}

impl Simulation {
    fn new(bodies: Vec<RigidBody>, shell: BoxShell, parameters: PidParameters) -> Self {
        parameters.check().unwrap();
        Self {
            bodies,
            shell,
            pid: PidContacts::new(parameters),
            contacts: Vec::new(),
            forces: Forces::default(),
        }
    }

    /// One step with an optional force `(body point, world force)` on the block.
    fn step(&mut self, dt: f64, push: Option<(Point3<f64>, Vector3<f64>)>) {
        plane_contacts(&self.bodies, &self.shell, &mut self.contacts);
        self.pid.apply_impacts(&mut self.bodies, &self.contacts);
        self.forces.reset(self.bodies.len());
        self.pid
            .add_forces(&self.bodies, &self.contacts, dt, &mut self.forces);
        let block = &mut self.bodies[BLOCK];
        let mut wrench = self.forces.wrench[BLOCK];
        wrench[2] -= block.mass * GRAVITY;
        if let Some((point, force)) = push {
            let arm = block.pose.rotation * point.coords;
            let torque = arm.cross(&force);
            wrench += Vector6::new(force.x, force.y, force.z, torque.x, torque.y, torque.z);
        }
        let force = wrench.fixed_rows::<3>(0).into_owned();
        let torque = wrench.fixed_rows::<3>(3).into_owned();
        let w = block.angular_velocity;
        let gyroscopic = w.cross(&(block.world_inertia() * w));
        block.velocity += force * (dt / block.mass);
        block.angular_velocity += block.world_inverse_inertia() * (torque - gyroscopic) * dt;
        block.advance_pose(dt);
    }

    /// The deepest point's penetration (m), 0 out of contact.
    fn penetration(&self) -> f64 {
        let pose = &self.bodies[BLOCK].pose;
        self.shell
            .points
            .iter()
            .map(|p| -(pose * p).z)
            .fold(0.0, f64::max)
    }

    fn kinetic_energy(&self) -> f64 {
        self.bodies[BLOCK].kinetic_energy()
    }
}

/// A pose of `orientation` whose lowest corner lies `depth` below the plane.
fn penetrating_pose(half: f64, orientation: UnitQuaternion<f64>, depth: f64) -> Isometry3<f64> {
    let lowest = box_shell(half, 1)
        .points
        .iter()
        .map(|p| (orientation * p).z)
        .fold(f64::INFINITY, f64::min);
    Isometry3::from_parts(Translation3::new(0.0, 0.0, -lowest - depth), orientation)
}

#[test]
fn block_set_into_the_plane_settles_flat() {
    // §IV-A: a randomly oriented block started penetrating, 3000 steps of 1 ms.
    let (half, mass, dt) = (0.5, 10.0, 1e-3);
    let mut rng = Pcg64::seed_from_u64(4);
    let axis = Vector3::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0));
    let orientation = UnitQuaternion::from_scaled_axis(axis.normalize() * rng.gen_range(0.3..1.2));
    for points in [PidPoints::BottomOfVolume, PidPoints::Deepest] {
        let parameters = PidParameters {
            points,
            ..PidParameters::default()
        };
        let pose = penetrating_pose(half, orientation, 0.05);
        let mut sim = Simulation::new(plane_and_block(half, mass, pose), box_shell(half, 10), parameters);
        let mut energy = Vec::new();
        let mut penetration = Vec::new();
        for _ in 0..3000 {
            sim.step(dt, None);
            energy.push(sim.kinetic_energy());
            penetration.push(sim.penetration());
        }
        let window_max = |w: usize| energy[w * 500..(w + 1) * 500].iter().cloned().fold(0.0, f64::max);
        let windows: Vec<f64> = (0..6).map(window_max).collect();
        println!(
            "{points:?}: KE max per 500 steps {windows:?}; penetration final {:.4e} min {:.4e} max {:.4e}; up {:.4}",
            penetration[2999],
            penetration.iter().cloned().fold(f64::INFINITY, f64::min),
            penetration.iter().cloned().fold(0.0, f64::max),
            (sim.bodies[BLOCK].pose.rotation * Vector3::z()).z.abs(),
        );
        assert_eq!(sim.pid.phase(PLANE, BLOCK), ContactPhase::Resting);
    }
}

/// §IV-B's protocol: ten times, a downward force of uniform random magnitude
/// in [10, 100] N on a uniform random point of the top face for 500 steps,
/// then none for 500; steps of 1 ms. Returns the mean penetration and the
/// mean kinetic energy over the 10 000 steps.
fn perturbed_block(parameters: PidParameters, seed: u64) -> (f64, f64) {
    perturbed_block_dt(parameters, seed, 1e-3).0
}

fn perturbed_block_dt(parameters: PidParameters, seed: u64, dt: f64) -> ((f64, f64), f64, f64) {
    let (half, mass) = (0.5, 10.0);
    let steps = (0.5 / dt).round() as usize;
    let pose = Isometry3::translation(0.0, 0.0, half);
    let mut sim = Simulation::new(plane_and_block(half, mass, pose), box_shell(half, 10), parameters);
    let mut rng = Pcg64::seed_from_u64(seed);
    let (mut penetration, mut energy) = (0.0, 0.0);
    let mut rest_energy: f64 = 0.0;
    let mut max_pen: f64 = 0.0;
    for _ in 0..10 {
        let magnitude = rng.gen_range(10.0..100.0);
        let point = Point3::new(rng.gen_range(-half..half), rng.gen_range(-half..half), half);
        for step in 0..2 * steps {
            let push = (step < steps).then(|| (point, Vector3::new(0.0, 0.0, -magnitude)));
            sim.step(dt, push);
            penetration += sim.penetration();
            max_pen = max_pen.max(sim.penetration());
            energy += sim.kinetic_energy();
            if step > 2 * steps - steps / 5 { rest_energy = rest_energy.max(sim.kinetic_energy()); }
        }
    }
    let n = 20.0 * steps as f64;
    ((penetration / n, energy / n), rest_energy, max_pen)
}

#[test]
#[ignore]
fn explore() {
    let gains = [
        ("default", 2500.0, 60.0, 50.0),
        ("k2500d150", 2500.0, 150.0, 50.0),
        ("k4000d150", 4000.0, 150.0, 80.0),
        ("k4000d250", 4000.0, 250.0, 80.0),
        ("k5000d300", 5000.0, 300.0, 100.0),
    ];
    for dt in [1e-3, 5e-3] {
        for (name, kp, kd, ki) in gains {
            for points in [PidPoints::BottomOfVolume, PidPoints::Deepest] {
                let parameters = PidParameters { kp, kd, ki, points, ..PidParameters::default() };
                let ((pen, ke), rest, maxp) = perturbed_block_dt(parameters, 12, dt);
                let (w, fin) = drop_dt(parameters, dt, 0.05); let w: Vec<String> = w.iter().map(|x| format!("{x:.1e}")).collect();
                println!("dt {dt:e} {name:10} {points:?}: B pen {pen:.3e} max {maxp:.3e} KE {ke:.3e} restKE {rest:.3e} | A KE windows {w:?} final pen {fin:.3e}");
            }
        }
    }
}

fn drop_dt(parameters: PidParameters, dt: f64, depth: f64) -> (Vec<f64>, f64) {
    let (half, mass) = (0.5, 10.0);
    let mut rng = Pcg64::seed_from_u64(4);
    let axis = Vector3::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0));
    let orientation = UnitQuaternion::from_scaled_axis(axis.normalize() * rng.gen_range(0.3..1.2));
    let pose = penetrating_pose(half, orientation, depth);
    let mut sim = Simulation::new(plane_and_block(half, mass, pose), box_shell(half, 10), parameters);
    let steps = (3.0 / dt).round() as usize;
    let mut energy = Vec::new();
    for _ in 0..steps { sim.step(dt, None); energy.push(sim.kinetic_energy()); }
    let w = steps / 6;
    ((0..6).map(|k| energy[k * w..(k + 1) * w].iter().cloned().fold(0.0, f64::max)).collect(), sim.penetration())
}

#[test]
fn bottom_of_volume_resists_perturbations_better_than_the_deepest_point() {
    let at = |points| PidParameters { points, ..PidParameters::default() };
    let (bottom, bottom_energy) = perturbed_block(at(PidPoints::BottomOfVolume), 12);
    let (deepest, deepest_energy) = perturbed_block(at(PidPoints::Deepest), 12);
    println!("bottom of volume: mean penetration {bottom:.4e} m, mean KE {bottom_energy:.4e} J");
    println!("deepest point:    mean penetration {deepest:.4e} m, mean KE {deepest_energy:.4e} J");
}

#[test]
#[ignore]
fn trace() {
    for dt in [1e-3f64, 5e-3] {
        let parameters = PidParameters::default();
        let (half, mass) = (0.5, 10.0);
        let pose = Isometry3::translation(0.0, 0.0, half);
        let mut sim = Simulation::new(plane_and_block(half, mass, pose), box_shell(half, 10), parameters);
        let steps = (0.5 / dt).round() as usize;
        let point = Point3::new(0.4, 0.3, half);
        for step in 0..4 * steps {
            let push = (step < steps).then(|| (point, Vector3::new(0.0, 0.0, -100.0)));
            sim.step(dt, push);
            if step % (steps / 10) == 0 {
                let b = &sim.bodies[BLOCK];
                println!("dt {dt:e} t {:.3} KE {:.3e} v {:.2e} {:.2e} {:.2e} w {:.2e} {:.2e} {:.2e} pen {:.3e} I {:.3e} n {}", step as f64 * dt, sim.kinetic_energy(), b.velocity.x, b.velocity.y, b.velocity.z, b.angular_velocity.x, b.angular_velocity.y, b.angular_velocity.z, sim.penetration(), sim.pid.integral(0, 1), sim.contacts.len());
            }
        }
    }
}
