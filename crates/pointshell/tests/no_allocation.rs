//! The haptic-loop query must not allocate once its buffers exist.

use haptic_alloc_counter::{allocations, CountingAllocator};
use haptic_mesh::shapes::icosphere;
use haptic_pointshell::{
    sample_point_shell, spacing_for_count, NestedPointTree, PointTreeTraversal, TraversalBudget,
};
use haptic_testkit::fields::HalfSpaceField;
use nalgebra::{Isometry3, Vector3};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[test]
fn traversal_does_not_allocate() {
    let mesh = icosphere(0.05, 4);
    let shell = sample_point_shell(&mesh, spacing_for_count(&mesh, 5000), 1);
    let tree = NestedPointTree::new(&shell, 7);
    let mut traversal = PointTreeTraversal::new(&tree);
    let mut contacts = Vec::with_capacity(shell.len());
    let plane = HalfSpaceField {
        normal: Vector3::z(),
        offset: 0.0,
    };
    let budgets = [
        TraversalBudget::default(),
        TraversalBudget {
            max_level: Some(3),
            ..Default::default()
        },
        TraversalBudget {
            max_lookups: Some(300),
            ..Default::default()
        },
    ];
    let before = allocations();
    let mut found = 0;
    // Down to the centre: from no contact to half the shell in contact.
    for step in 0..=50 {
        let pose = Isometry3::translation(0.0, 0.0, 0.05 - 0.001 * f64::from(step));
        for budget in budgets {
            traversal.traverse(&tree, &shell, &plane, &pose, budget, &mut contacts);
            found += contacts.len();
        }
    }
    assert_eq!(allocations(), before);
    assert!(found > 0);
}
