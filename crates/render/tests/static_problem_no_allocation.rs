//! A servo cycle's contact work never allocates once the scene exists:
//! traversals, penalty contacts, wrench, both gradients, problem assembly,
//! the frictionless step.

use haptic_alloc_counter::{allocations, CountingAllocator};
use haptic_contact::{
    total_stiffness, total_wrench, ForceDirection, GradientModel, StiffnessScaling, VirtualCoupling,
};
use haptic_core::{displaced, Vector6};
use haptic_pointshell::TraversalBudget;
use haptic_render::{MassProperties, StaticCoupling};
use haptic_testkit::scenes::*;
use nalgebra::{Isometry3, Matrix3, Translation3, UnitQuaternion, Vector3};
use rand::SeedableRng;
use rand_pcg::Pcg64;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[test]
fn a_cycle_does_not_allocate() {
    let home = Isometry3::from_parts(
        Translation3::new(0.01, 0.02, -0.01),
        UnitQuaternion::from_scaled_axis(Vector3::new(0.3, -0.2, 0.9)),
    );
    let mut scene = mixed_scene(
        &home,
        0.003,
        StiffnessScaling {
            reference_contacts: 100.0,
        },
        ForceDirection::default(),
        &mut Pcg64::seed_from_u64(1),
    );
    let coupling = StaticCoupling {
        coupling: VirtualCoupling {
            translational_stiffness: 2000.0,
            rotational_stiffness: 5.0,
        },
        mass: MassProperties {
            mass: 0.2,
            body_inertia: Matrix3::identity() * 1e-4,
        },
        gradient: GradientModel::Exact,
    };
    let mut problem = coupling.problem_for(&scene, 8);
    let budgets = [
        TraversalBudget::default(),
        TraversalBudget {
            max_level: Some(3),
            ..Default::default()
        },
    ];

    let before = allocations();
    let (mut contacts, mut checksum) = (0, 0.0);
    // From out of contact to twice as deep, along the torus's own z axis.
    for step in 0..=40 {
        let shift = Vector6::new(0.0, 0.0, 0.0003 * f64::from(step) - 0.006, 0.0, 0.0, 0.0);
        let pose = displaced(&home, &shift);
        for budget in budgets {
            scene.evaluate(&pose, budget);
            contacts += scene.contacts().len();
            checksum += total_wrench(scene.contacts()).norm();
            checksum += total_stiffness(scene.contacts(), GradientModel::NormalDirection).norm();
            coupling.assemble(&scene, &home, &mut problem);
            if let Some(delta) = problem.frictionless_displacement() {
                checksum += displaced(&pose, &delta).translation.vector.norm();
            }
        }
    }
    assert_eq!(allocations(), before);
    drop(std::hint::black_box(vec![0u8; 16]));
    assert!(allocations() > before, "the counter counts");
    assert!(contacts > 1000 && checksum.is_finite(), "{contacts}");
}
