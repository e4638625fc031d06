//! The haptic-loop query must not allocate once its buffers exist.

use haptic_mesh::shapes::icosphere;
use haptic_pointshell::testing::HalfSpaceField;
use haptic_pointshell::{
    sample_point_shell, spacing_for_count, NestedPointTree, PointTreeTraversal, TraversalBudget,
};
use nalgebra::{Isometry3, Vector3};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts this thread's allocations, so the harness's own threads don't count.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count_allocation() {
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_allocation();
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_allocation();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

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
