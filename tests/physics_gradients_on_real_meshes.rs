//! The physics world's contact gradients (Xu, Zhao & Barbič §4.1–4.2)
//! against central finite differences, between two moving bodies made from
//! real meshes, in both roles at once (each body's shell in the other's
//! field), on random poses and velocities, with and without damping, with
//! and without sticking friction springs.

use haptic_acceptance::mesh_sized;
use haptic_physics::broad_phase::overlapping_pairs;
use haptic_physics::friction_anchors::add_sticking_springs;
use haptic_physics::narrow_phase::ContactDetector;
use haptic_physics::penalty::add_contact_forces;
use haptic_physics::{DampingMode, PairContact};
use haptic_physics::{Forces, GeometryResolution, RigidBody};
use haptic_testkit::jacobian_check::{
    central_differences, compare, pose_central_differences, Comparison, Tolerance,
};
use haptic_testkit::scenes::random_rotation;
use nalgebra::{DMatrix, DVector, Isometry3, Point3, Translation3, Vector3};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::collections::HashMap;

const STIFFNESS: f64 = 5e3;
/// Without it, the damping's own pose gradients (its moving handles and,
/// for normal damping, the field's curvature), a ten-thousandth of the
/// penalty's at these velocities, are checked alone.
const NO_STIFFNESS: f64 = 0.0;
const DAMPING: f64 = 3.0;
const FRICTION_STIFFNESS: f64 = 800.0;

/// Friction anchors, each in its field body's frame.
type Anchors = HashMap<(usize, usize, u32), Point3<f64>>;

fn body(name: &str, size: f64) -> RigidBody {
    let resolution = GeometryResolution {
        shell_points: 1500,
        tree_levels: 4,
        field_resolution: 64,
    };
    RigidBody::from_mesh(
        name,
        &mesh_sized(name, size),
        500.0,
        &Isometry3::identity(),
        &resolution,
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn contacts(bodies: &[RigidBody], detector: &mut ContactDetector) -> Vec<PairContact> {
    let mut pairs = Vec::new();
    overlapping_pairs(bodies, 0.0, &mut pairs);
    let mut out = Vec::new();
    detector.detect(bodies, &pairs, &mut out);
    out
}

fn forces(
    bodies: &[RigidBody],
    contacts: &[PairContact],
    stiffness: f64,
    damping: Option<DampingMode>,
    anchors: Option<&Anchors>,
) -> Forces {
    let mut forces = Forces::default();
    forces.reset(bodies.len());
    let stiffnesses: Vec<f64> = contacts
        .iter()
        .map(|c| stiffness * c.weight as f64)
        .collect();
    add_contact_forces(
        contacts,
        &stiffnesses,
        bodies,
        damping.map_or(0.0, |_| DAMPING),
        damping.unwrap_or_default(),
        &mut forces,
    );
    if let Some(anchors) = anchors {
        let anchor = |c: &PairContact| {
            bodies[c.field_body].state.pose * anchors[&(c.shell_body, c.field_body, c.point)]
        };
        add_sticking_springs(contacts, bodies, FRICTION_STIFFNESS, anchor, &mut forces);
    }
    forces
}

/// An anchor for every contact, a few millimetres from its point.
fn anchors_near(bodies: &[RigidBody], contacts: &[PairContact], rng: &mut Pcg64) -> Anchors {
    contacts
        .iter()
        .map(|c| {
            let offset =
                (Vector3::new(rng.gen(), rng.gen(), rng.gen()) - Vector3::repeat(0.5)) * 4e-3;
            let local = bodies[c.field_body].state.pose.inverse() * (c.position + offset);
            ((c.shell_body, c.field_body, c.point), local)
        })
        .collect()
}

/// `(shell, field, point)` of every contact: what must not change inside the stencil.
fn signature(contacts: &[PairContact]) -> Vec<(usize, usize, u32)> {
    contacts
        .iter()
        .map(|c| (c.shell_body, c.field_body, c.point))
        .collect()
}

/// `(F_0, τ_0, F_1, τ_1)`.
fn stacked(forces: &Forces) -> DVector<f64> {
    DVector::from_iterator(12, forces.wrench.iter().flat_map(|w| w.iter().copied()))
}

/// The analytic `∂(wrench on i)/∂(state of j)`, 6×6 block `(i, j)`, for the
/// positions and the velocities.
fn analytic(forces: &Forces) -> (DMatrix<f64>, DMatrix<f64>) {
    let (mut position, mut velocity) = (DMatrix::zeros(12, 12), DMatrix::zeros(12, 12));
    for g in &forces.gradients {
        let mut block = position.fixed_view_mut::<6, 6>(6 * g.on, 6 * g.by);
        block += g.position;
        let mut block = velocity.fixed_view_mut::<6, 6>(6 * g.on, 6 * g.by);
        block += g.velocity;
    }
    (position, velocity)
}

/// Each 6×6 block `∂(F_i, τ_i)/∂(q_j)` (and `∂/∂(u_j)` with damping)
/// against central differences, relative to the block's central
/// differences; `None` when the contact set changed inside the stencil.
fn check(
    bodies: &[RigidBody],
    stiffness: f64,
    damping: Option<DampingMode>,
    anchors: Option<&Anchors>,
) -> Option<Comparison> {
    let mut detector = ContactDetector::default();
    let base = contacts(bodies, &mut detector);
    assert!(
        base.iter().any(|c| c.shell_body == 0) && base.iter().any(|c| c.shell_body == 1),
        "both roles in contact"
    );
    let reference = signature(&base);
    let (h_x, h_theta, h_v) = (1e-7, 1e-7, 1e-4);
    let mut wrenches = |moved: &[RigidBody]| {
        let found = contacts(moved, &mut detector);
        (signature(&found) == reference)
            .then(|| stacked(&forces(moved, &found, stiffness, damping, anchors)))
    };
    let poses: Vec<_> = bodies.iter().map(|b| b.state.pose).collect();
    let fd_position = pose_central_differences(&poses, h_x, h_theta, |moved| {
        let mut at = bodies.to_vec();
        for (body, pose) in at.iter_mut().zip(moved) {
            body.state.pose = *pose;
        }
        wrenches(&at)
    })?;
    let fd_velocity = central_differences(&[h_v; 12], |increment| {
        let mut kicked = bodies.to_vec();
        for (j, body) in kicked.iter_mut().enumerate() {
            body.state.velocity += increment.fixed_rows::<3>(6 * j);
            body.state.angular_velocity += increment.fixed_rows::<3>(6 * j + 3);
        }
        wrenches(&kicked)
    })?;
    let (position, velocity) = analytic(&forces(bodies, &base, stiffness, damping, anchors));
    let relative = Tolerance::Relative {
        bound: 1e-4,
        floor: 1e-9,
    };
    let mut comparison = compare(&position, &fd_position, (6, 6), relative);
    if damping.is_some() {
        let velocities = compare(&velocity, &fd_velocity, (6, 6), relative);
        comparison.errors.extend(velocities.errors);
    } else {
        assert_eq!(velocity, DMatrix::zeros(12, 12));
    }
    Some(comparison)
}

/// Two bodies overlapping in general position with random velocities.
fn random_pair(rng: &mut Pcg64, a: &RigidBody, b: &RigidBody) -> Vec<RigidBody> {
    let mut bodies = vec![a.clone(), b.clone()];
    let shell = a.model.geometry.as_ref().unwrap().shell.shell();
    bodies[0].state.pose = Isometry3::from_parts(
        Translation3::new(rng.gen(), rng.gen(), rng.gen()),
        random_rotation(rng),
    );
    // b's centre near a surface point of a, pushed out along its normal.
    let k = rng.gen_range(0..shell.len());
    let surface = bodies[0].state.pose * shell.points[k];
    let normal = bodies[0].state.pose.rotation * shell.outward_normals[k];
    let reach = b.model.geometry.as_ref().unwrap().bounds.extents().max() * 0.4;
    bodies[1].state.pose = Isometry3::from_parts(
        Translation3::from(surface.coords + normal * reach),
        random_rotation(rng),
    );
    for body in &mut bodies {
        body.state.velocity = Vector3::new(rng.gen(), rng.gen(), rng.gen()) - Vector3::repeat(0.5);
        body.state.angular_velocity = Vector3::new(rng.gen(), rng.gen(), rng.gen()) * 4.0;
    }
    bodies
}

fn run(first: &str, second: &str, stiffness: f64, damping: Option<DampingMode>, friction: bool) {
    let a = body(first, 0.08);
    let b = body(second, 0.05);
    let mut rng = Pcg64::seed_from_u64(23);
    let (mut checked, mut tries, mut worst) = (0, 0, 0.0f64);
    while checked < 6 {
        tries += 1;
        assert!(tries < 400, "too few poses in contact in both roles");
        let bodies = random_pair(&mut rng, &a, &b);
        let mut detector = ContactDetector::default();
        let found = contacts(&bodies, &mut detector);
        let roles = [0, 1].map(|s| found.iter().filter(|c| c.shell_body == s).count());
        if roles.iter().any(|&n| n < 3) {
            continue;
        }
        let anchors = friction.then(|| anchors_near(&bodies, &found, &mut rng));
        let Some(comparison) = check(&bodies, stiffness, damping, anchors.as_ref()) else {
            continue;
        };
        comparison.assert_passes(&format!(
            "{first} × {second}, damping {damping:?}, {roles:?} contacts per role"
        ));
        worst = worst.max(comparison.worst().error);
        checked += 1;
    }
    println!("{first} × {second}, damping {damping:?}: worst {worst:.1e} relative per 6×6 block");
}

#[test]
fn mug_and_bunny_gradients_match_finite_differences() {
    run(
        "metaworld-mug.stl",
        "pybullet-bunny.obj",
        STIFFNESS,
        None,
        false,
    );
}

#[test]
fn mug_and_bunny_gradients_with_normal_damping_match_finite_differences() {
    run(
        "metaworld-mug.stl",
        "pybullet-bunny.obj",
        STIFFNESS,
        Some(DampingMode::Normal),
        false,
    );
}

#[test]
fn torus_and_cube_gradients_with_full_damping_match_finite_differences() {
    run(
        "pybullet-torus.obj",
        "cgal-cube.off",
        STIFFNESS,
        Some(DampingMode::Full),
        false,
    );
}

#[test]
fn damping_alone_has_the_gradients_of_its_moving_handles() {
    for mode in [DampingMode::Full, DampingMode::Normal] {
        run(
            "pybullet-torus.obj",
            "metaworld-mug.stl",
            NO_STIFFNESS,
            Some(mode),
            false,
        );
    }
}

#[test]
fn mug_and_torus_gradients_with_sticking_friction_match_finite_differences() {
    run(
        "metaworld-mug.stl",
        "pybullet-torus.obj",
        STIFFNESS,
        Some(DampingMode::Normal),
        true,
    );
}
