//! A grid of stiffnesses, steps and resolutions: every run stays finite
//! and its energy bounded, or, integrated explicitly past its stability
//! limit, is quarantined and counted instead of passing non-finite values
//! on.
//!
//! No run gains energy: the contacts a jelly lands on hold its nodes in its
//! implicit solve, so its stiffness stops the whole body within the step.
//! With the contacts' impulses passed through it after the rows instead, a
//! stiff jelly at a large step gained energy at the impact (E = 1 MPa at
//! 20 ms: 287 times its drop energy at 4³ cells).

use haptic_deformable::body::solid_masses;
use haptic_deformable::paradigms::{CorotationalFem, ForceIntegration, Paradigm};
use haptic_deformable::scenes::ground;
use haptic_deformable::topology::tet_box;
use haptic_deformable::{CoupledWorld, DeformableBody, DeformableMaterial, SolverParameters};
use haptic_physics::{World, WorldParameters};
use nalgebra::{Isometry3, Translation3, UnitQuaternion};

/// Drops a 6 cm FEM cube from 2 cm onto a slab for 0.4 s; returns the
/// highest total energy (kinetic, gravitational above the slab, elastic)
/// over the start's, whether every state was finite, and the quarantines.
fn drop(young: f64, h: f64, cells: usize, integration: ForceIntegration) -> (f64, bool, u64) {
    let pose = Isometry3::from_parts(
        Translation3::new(0.0, 0.0, 0.05),
        UnitQuaternion::identity(),
    );
    let mesh = tet_box([cells; 3], [0.06; 3], &pose);
    let masses = solid_masses(&mesh.positions, &mesh.tets, 1000.0);
    let fem = CorotationalFem::new(
        "jelly",
        &mesh.positions,
        &mesh.tets,
        young,
        0.4,
        integration,
    )
    .unwrap();
    let body = DeformableBody::new(
        "jelly",
        mesh.positions.clone(),
        masses,
        mesh.surface.clone(),
        vec![],
        DeformableMaterial {
            thickness: 0.001,
            ..DeformableMaterial::default()
        },
        Paradigm::CorotationalFem(fem),
    )
    .unwrap();
    let rigid = World::new(
        vec![ground(0.0, 0.3, 0.5)],
        vec![],
        WorldParameters::default(),
    )
    .unwrap();
    let mut world =
        CoupledWorld::new(rigid, vec![body], vec![], SolverParameters::default()).unwrap();
    let energy = |w: &CoupledWorld| {
        let b = &w.bodies()[0];
        let gravity: f64 = b
            .model
            .masses
            .iter()
            .zip(&b.state.positions)
            .map(|(m, p)| m * 9.81 * p.z)
            .sum();
        b.kinetic_energy() + gravity + b.model.paradigm.potential_energy(&b.state.positions)
    };
    let start = energy(&world);
    let mut highest = start;
    let mut finite = true;
    for _ in 0..(0.4 / h).round() as usize {
        world.step(h);
        finite &= world.bodies()[0].is_finite();
        highest = highest.max(energy(&world));
    }
    (highest / start, finite, world.quarantined())
}

#[test]
fn implicit_jellies_stay_finite_with_bounded_energy_over_the_grid() {
    let mut worst: f64 = 0.0;
    for young in [1e3, 1e4, 1e5, 1e6] {
        for h in [0.001, 0.005, 0.02] {
            for cells in [2, 4] {
                let (ratio, finite, quarantined) =
                    drop(young, h, cells, ForceIntegration::default());
                println!("E {young:e} Pa, h {h} s, {cells}³ cells: highest energy {ratio:.4} × the start's, finite {finite}, quarantined {quarantined}");
                assert!(
                    finite && quarantined == 0,
                    "E {young}, h {h}, cells {cells}"
                );
                worst = worst.max(ratio);
            }
        }
    }
    println!("highest energy over the grid: {worst:.6} × the start's");
    assert!(worst <= 1.0 + 1e-9, "energy gained: {worst} × the start's");
}

/// Symplectic Euler (the paper's eq 38) past its limit: the world puts the
/// body back and counts it; nothing non-finite is kept.
#[test]
fn an_explicit_jelly_past_its_stability_limit_is_quarantined_and_counted() {
    let (_, finite, quarantined) = drop(1e6, 0.02, 4, ForceIntegration::SymplecticEuler);
    println!("explicit, E 1e6 Pa, h 20 ms: finite {finite}, quarantined {quarantined}");
    assert!(finite);
    assert!(quarantined > 0);
}

/// A rigid body that a coupled step sends faster than
/// `SolverParameters::max_speed` (here given that speed from outside) is
/// put back where it was, at rest, and counted with the quarantines.
#[test]
fn a_launched_rigid_body_is_put_back_at_rest_and_counted() {
    use haptic_deformable::scenes::{fig2_jellies, Fig2Spec};
    use haptic_physics::RigidBodyState;
    use nalgebra::Vector3;
    let scene = fig2_jellies(&Fig2Spec::default()).unwrap();
    let bar = scene.bar;
    let mut world = CoupledWorld::new(
        scene.rigid,
        scene.jellies,
        vec![],
        SolverParameters::default(),
    )
    .unwrap();
    world.step(0.01);
    assert_eq!(world.quarantined(), 0);
    let pose = world.rigid().bodies()[bar].state.pose;
    world.rigid_mut().set_state(
        bar,
        RigidBodyState {
            pose,
            velocity: Vector3::new(0.0, 0.0, 500.0),
            angular_velocity: Vector3::zeros(),
        },
    );
    let report = world.step(0.01);
    assert_eq!(report.quarantined, 1);
    assert_eq!(world.quarantined(), 1);
    let state = world.rigid().bodies()[bar].state;
    assert_eq!(state.pose, pose);
    assert_eq!(state.velocity, Vector3::zeros());
}
