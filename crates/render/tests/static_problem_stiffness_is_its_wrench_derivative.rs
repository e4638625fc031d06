//! One cycle's friction problem holds the coupling plus the contacts, and its
//! stiffness is the derivative of its wrench.

use haptic_contact::{ForceDirection, GradientModel, StiffnessScaling, VirtualCoupling};
use haptic_render::{MassProperties, StaticCoupling};
use haptic_testkit::jacobian_check::{pose_jacobian, stiffness_errors};
use haptic_testkit::scenes::*;

use haptic_pointshell::TraversalBudget;
use nalgebra::{Isometry3, Matrix3, UnitQuaternion, Vector3};
use rand::SeedableRng;
use rand_pcg::Pcg64;

#[test]
fn assembled_problem_is_coupling_plus_contacts_with_a_consistent_stiffness() {
    let mut rng = Pcg64::seed_from_u64(21);
    let pose = random_pose(&mut rng);
    let mut scene = mixed_scene(
        &pose,
        0.002,
        StiffnessScaling::NONE,
        ForceDirection::default(),
        &mut rng,
    );
    let coupling = StaticCoupling {
        coupling: VirtualCoupling {
            translational_stiffness: 1500.0,
            rotational_stiffness: 4.0,
        },
        mass: MassProperties {
            mass: 0.3,
            body_inertia: Matrix3::from_diagonal(&Vector3::new(1e-4, 2e-4, 3e-4)),
        },
        gradient: GradientModel::Exact,
    };
    let manipulandum = Isometry3::from_parts(
        (pose.translation.vector + Vector3::new(0.004, -0.002, 0.003)).into(),
        UnitQuaternion::from_scaled_axis(Vector3::new(0.5, 0.2, -0.3)) * pose.rotation,
    );
    let mut problem = coupling.problem_for(&scene, 6);
    let assembled = |scene: &mut haptic_contact::ContactScene,
                     problem: &mut haptic_friction::StaticFrictionProblem,
                     at: &Isometry3<f64>| {
        scene.evaluate(at, TraversalBudget::default());
        coupling.assemble(scene, &manipulandum, problem);
        scene
            .contacts()
            .iter()
            .map(|c| (c.environment, c.point))
            .collect::<Vec<_>>()
    };
    let keys = assembled(&mut scene, &mut problem, &pose);
    let (wrench, stiffness) = (problem.wrench, problem.stiffness);

    assert_eq!(problem.pyramid_sides, 6);
    assert_eq!(problem.contacts.len(), scene.contacts().len());
    for (friction, penalty) in problem.contacts.iter().zip(scene.contacts()) {
        let mu = scene.environment()[penalty.environment as usize].friction_coefficient;
        assert_eq!(friction.friction_coefficient, mu);
        assert_eq!(friction.handle, penalty.handle);
        assert!((friction.normal * friction.normal_force - penalty.force()).norm() < 1e-15);
    }
    let r = pose.rotation.to_rotation_matrix();
    let inertia = r.matrix() * coupling.mass.body_inertia * r.matrix().transpose();
    assert!((problem.mass.fixed_view::<3, 3>(3, 3) - inertia).norm() < 1e-18);
    assert_eq!(
        problem.mass.fixed_view::<3, 3>(0, 0),
        Matrix3::identity() * 0.3
    );

    // Central differences of f = f_vc + Σ (F_i, τ_i) on the same contact set.
    let fd = pose_jacobian(&pose, 1e-7, 1e-6, |at| {
        let moved = assembled(&mut scene, &mut problem, at);
        assert_eq!(moved, keys, "the stencil changed the contact set");
        Some(problem.wrench)
    })
    .unwrap();
    let errors = stiffness_errors(&stiffness, &fd);
    println!("H against central differences of f, per block: {errors:?}");
    assert!(errors.iter().all(|&e| e < 1e-6), "{errors:?}");
    assert!(wrench.norm() > 0.0);
}
