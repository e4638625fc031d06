//! Static virtual coupling without friction: iterating `q ← q + Δq`,
//! `Δq = −H⁻¹ f` (eqs 7–8), settles a ball pressed onto a plane where the
//! contact force balances the coupling force.

use haptic_contact::{
    total_wrench, ContactScene, EnvironmentGeometry, EnvironmentObject, ForceDirection,
    GradientModel, PenaltyParameters, StiffnessScaling, ToolGeometry, VirtualCoupling,
};
use haptic_core::displaced;
use haptic_mesh::shapes::{box_mesh, icosphere};
use haptic_pointshell::TraversalBudget;
use haptic_render::{MassProperties, StaticCoupling};
use haptic_testkit::fields::{HalfSpaceField, SphereField};
use haptic_testkit::scenes::*;
use nalgebra::{Isometry3, Matrix3, Point3, Translation3, UnitQuaternion, Vector3};
use std::sync::Arc;

const RADIUS: f64 = 0.05;
const K_N: f64 = 100.0;

#[derive(Clone, Copy, Debug)]
enum Setup {
    /// Role A: the ball's point shell on the floor's field.
    BallShellOnFloorField,
    /// Role B: the ball's field on a slab's point shell.
    BallFieldOnSlabShell,
}

fn scene(setup: Setup, scaling: StiffnessScaling) -> ContactScene {
    let parameters = PenaltyParameters {
        stiffness: K_N,
        scaling,
        direction: ForceDirection::default(),
    };
    match setup {
        Setup::BallShellOnFloorField => ContactScene::new(
            ToolGeometry {
                shell: Some(mesh_shell(&icosphere(RADIUS, 4), 3000, 7)),
                field: None,
            },
            vec![EnvironmentObject {
                pose: Isometry3::identity(),
                geometry: EnvironmentGeometry::Field(Arc::new(HalfSpaceField {
                    normal: Vector3::z(),
                    offset: 0.0,
                })),
                friction_coefficient: 0.5,
            }],
            parameters,
        ),
        Setup::BallFieldOnSlabShell => {
            let half = Vector3::new(0.1, 0.1, 0.01);
            ContactScene::new(
                ToolGeometry {
                    shell: None,
                    field: Some(Arc::new(SphereField {
                        center: Point3::origin(),
                        radius: RADIUS,
                    })),
                },
                vec![EnvironmentObject {
                    pose: Isometry3::translation(0.0, 0.0, -half.z),
                    geometry: EnvironmentGeometry::Shell(mesh_shell(&box_mesh(half), 12_000, 7)),
                    friction_coefficient: 0.5,
                }],
                parameters,
            )
        }
    }
    .unwrap()
}

struct Equilibrium {
    /// The coupling force at equilibrium (N).
    force: Vector3<f64>,
    /// Mean penetration `Σ |d_i| / n` (m).
    depth: f64,
    /// Mean penetration along the force's line, `Σ |d_i| N_i·F̂ / n` (m).
    projected_depth: f64,
    contacts: usize,
    stiffness_factor: f64,
}

/// Runs the loop from above the plane to equilibrium.
fn settle(setup: Setup, scaling: StiffnessScaling, gradient: GradientModel) -> Equilibrium {
    let mut scene = scene(setup, scaling);
    let coupling = StaticCoupling {
        coupling: VirtualCoupling {
            translational_stiffness: 3000.0,
            rotational_stiffness: 10.0,
        },
        mass: MassProperties {
            mass: 0.5,
            body_inertia: Matrix3::identity() * 5e-4,
        },
        gradient,
    };
    let manipulandum = Isometry3::from_parts(
        Translation3::new(0.002, -0.001, RADIUS - 0.02),
        UnitQuaternion::from_scaled_axis(Vector3::new(0.2, -0.1, 0.4)),
    );
    let mut problem = coupling.problem_for(&scene, 8);
    let mut pose = Isometry3::from_parts(
        Translation3::new(0.0, 0.0, RADIUS + 0.01),
        UnitQuaternion::identity(),
    );
    let mut cycles = 0;
    loop {
        let stats = scene.evaluate(&pose, TraversalBudget::default());
        coupling.assemble(&scene, &manipulandum, &mut problem);
        let step = problem.frictionless_displacement().unwrap();
        cycles += 1;
        if step.norm() < 1e-13 {
            let coupling_force = coupling
                .coupling
                .wrench(&manipulandum, &pose)
                .fixed_rows::<3>(0)
                .into_owned();
            let contact = total_wrench(scene.contacts());
            println!(
                "{setup:?}, N0 = {}, {gradient:?}: {cycles} cycles, {} contacts, residual {:.1e} N",
                scaling.reference_contacts,
                scene.contacts().len(),
                problem.wrench.norm()
            );
            assert!(problem.wrench.norm() < 1e-9 * coupling_force.norm());
            assert!(
                (contact.fixed_rows::<3>(0) + coupling_force).norm() < 1e-9 * coupling_force.norm()
            );
            assert_eq!(problem.contacts.len(), scene.contacts().len());
            // Depth along the coupling force: Σ k_i |d_i| N_i·F̂ = |F| exactly.
            let up = -coupling_force.normalize();
            let n = scene.contacts().len() as f64;
            let depth = scene.contacts().iter().map(|c| -c.distance).sum::<f64>() / n;
            let projected = scene
                .contacts()
                .iter()
                .map(|c| -c.distance * c.normal.dot(&up))
                .sum::<f64>()
                / n;
            return Equilibrium {
                force: coupling_force,
                depth,
                projected_depth: projected,
                contacts: scene.contacts().len(),
                stiffness_factor: stats.stiffness_factor,
            };
        }
        assert!(
            cycles < 100,
            "{setup:?}, {gradient:?}: no equilibrium after 100 cycles"
        );
        pose = displaced(&pose, &step);
    }
}

#[test]
fn contact_force_balances_the_coupling_force_at_equilibrium() {
    for setup in [Setup::BallShellOnFloorField, Setup::BallFieldOnSlabShell] {
        for scaling in [
            StiffnessScaling::NONE,
            StiffnessScaling {
                reference_contacts: 40.0,
            },
        ] {
            let e = settle(setup, scaling, GradientModel::Exact);
            // Pressed down, pushed up.
            assert!(
                e.force.z < 0.0 && e.force.xy().norm() < 0.05 * -e.force.z,
                "{}",
                e.force
            );
            // Σ k_i |d_i| N_i·F̂ = |F| with k_i = k_n min(1, N0/n): the mean depth is
            // F/(k_n n), or F/(k_n N0) once scaled, up to the tilt of the shell's
            // facet normals (role A) against the force.
            let expected = e.force.norm() / (K_N * e.stiffness_factor * e.contacts as f64);
            println!(
                "  |F| = {:.3} N, mean depth {:.4e} m (along F {:.4e} m), F/(k n) {expected:.4e} m",
                e.force.norm(),
                e.depth,
                e.projected_depth
            );
            assert!((e.projected_depth / expected - 1.0).abs() < 1e-9);
            assert!(
                (e.depth / expected - 1.0).abs() < 0.1,
                "{} vs {expected}",
                e.depth
            );
            if e.stiffness_factor < 1.0 {
                let capped = e.force.norm() / (K_N * scaling.reference_contacts);
                assert!((e.projected_depth / capped - 1.0).abs() < 1e-9);
            }
        }
    }
}

/// Zhao, Li & Barbič's approximate gradient still reaches the same equilibrium, in
/// more cycles (the step is a quasi-Newton one).
#[test]
fn the_normal_direction_gradient_reaches_the_same_equilibrium() {
    for setup in [Setup::BallShellOnFloorField, Setup::BallFieldOnSlabShell] {
        let exact = settle(setup, StiffnessScaling::NONE, GradientModel::Exact);
        let approximate = settle(
            setup,
            StiffnessScaling::NONE,
            GradientModel::NormalDirection,
        );
        assert!((exact.force - approximate.force).norm() < 1e-6 * exact.force.norm());
    }
}
