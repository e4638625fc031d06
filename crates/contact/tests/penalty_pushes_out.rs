//! Force and torque directions of eq 1 (Zhao, Li & Barbič) in both roles.

use haptic_contact::{
    total_wrench, ContactScene, EnvironmentGeometry, EnvironmentObject, ForceDirection,
    PenaltyParameters, ShellTree, StiffnessScaling, ToolGeometry,
};
use haptic_mesh::shapes::box_mesh;
use haptic_pointshell::TraversalBudget;
use haptic_testkit::fields::{HalfSpaceField, SphereField};
use haptic_testkit::scenes::*;
use nalgebra::{Isometry3, Point3, Translation3, Vector3};
use rand::SeedableRng;
use rand_pcg::Pcg64;
use std::sync::Arc;

const RADIUS: f64 = 0.05;

fn parameters() -> PenaltyParameters {
    PenaltyParameters {
        stiffness: 500.0,
        scaling: StiffnessScaling::NONE,
        direction: ForceDirection::default(),
    }
}

/// Role A: a ball's point shell (exactly radial normals) pushed 3 mm into
/// the floor `z < 0`, at any orientation, is pushed straight up. Along the
/// turned shell normals (eq 1) every force passes through the centre: no
/// torque. Along the floor's gradient every force is vertical, and the
/// torque about the centre is only the sampled patch's asymmetry.
#[test]
fn a_ball_shell_in_a_floor_field_is_pushed_out_without_torque() {
    for direction in [ForceDirection::ShellNormal, ForceDirection::FieldGradient] {
        ball_in_floor(direction);
    }
}

fn ball_in_floor(direction: ForceDirection) {
    let mut scene = ContactScene::new(
        ToolGeometry {
            shell: Some(Arc::new(ShellTree::build(
                radial_sphere_shell(RADIUS, 4000),
                6,
            ))),
            field: None,
        },
        vec![EnvironmentObject {
            pose: Isometry3::identity(),
            geometry: EnvironmentGeometry::Field(Arc::new(HalfSpaceField {
                normal: Vector3::z(),
                offset: 0.0,
            })),
            friction_coefficient: 0.0,
        }],
        PenaltyParameters {
            direction,
            ..parameters()
        },
    )
    .unwrap();
    let mut rng = Pcg64::seed_from_u64(1);
    for _ in 0..10 {
        let pose = Isometry3::from_parts(
            Translation3::new(0.01, -0.02, RADIUS - 0.003),
            random_rotation(&mut rng),
        );
        scene.evaluate(&pose, TraversalBudget::default());
        assert!(scene.contacts().len() > 50);
        let w = total_wrench(scene.contacts());
        let (force, torque) = (w.fixed_rows::<3>(0), w.fixed_rows::<3>(3));
        assert!(force.z > 0.0, "{force}");
        assert!(force.xy().norm() < 0.05 * force.z, "{force}");
        match direction {
            ForceDirection::ShellNormal => {
                assert!(torque.norm() < 1e-12 * force.norm() * RADIUS, "{torque}");
            }
            ForceDirection::FieldGradient => {
                assert!(force.xy().norm() < 1e-12 * force.z, "{force}");
                assert!(torque.norm() < 0.01 * force.norm() * RADIUS, "{torque}");
            }
        }
        for c in scene.contacts() {
            assert!(c.distance < 0.0 && c.normal.z > 0.0 && c.force().z > 0.0);
        }
    }
}

/// Role B: a ball-shaped moving field pressed onto a slab's point shell is
/// pushed up and the reaction on the slab points down into it.
#[test]
fn a_ball_field_on_a_slab_shell_is_pushed_out() {
    let half = Vector3::new(0.08, 0.08, 0.01);
    let mut scene = ContactScene::new(
        ToolGeometry {
            shell: None,
            field: Some(Arc::new(SphereField {
                center: Point3::origin(),
                radius: RADIUS,
            })),
        },
        vec![EnvironmentObject {
            // Top face at z = 0.
            pose: Isometry3::translation(0.0, 0.0, -half.z),
            geometry: EnvironmentGeometry::Shell(mesh_shell(&box_mesh(half), 20_000, 7)),
            friction_coefficient: 0.0,
        }],
        parameters(),
    )
    .unwrap();
    let mut rng = Pcg64::seed_from_u64(2);
    for _ in 0..10 {
        let pose = Isometry3::from_parts(
            Translation3::new(0.003, 0.001, RADIUS - 0.003),
            random_rotation(&mut rng),
        );
        scene.evaluate(&pose, TraversalBudget::default());
        assert!(scene.contacts().len() > 10);
        let force = total_wrench(scene.contacts())
            .fixed_rows::<3>(0)
            .into_owned();
        assert!(
            force.z > 0.0 && force.xy().norm() < 1e-9 * force.z,
            "{force}"
        );
        for c in scene.contacts() {
            // The environment point's own force k d n_e points into the slab.
            let on_environment = c.normal * (c.stiffness * c.distance);
            assert!(on_environment.z < 0.0);
            assert!(c.handle.z < 0.0);
        }
    }
}
