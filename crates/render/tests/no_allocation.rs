//! `RenderingCycle::step` allocates nothing after warm-up, with the LP and
//! with Yamane's springs.

use haptic_render::scenario::cube_corner;
use haptic_render::{FrictionModel, RenderingCycle};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts this thread's allocations, so the harness's own threads don't count.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn a_cycle_does_not_allocate() {
    for friction in [
        FrictionModel::StaticLp,
        FrictionModel::YamaneSprings { stiffness: 200.0 },
    ] {
        let scenario = cube_corner(0.5).with_friction(friction);
        let p = scenario.parameters;
        let poses = scenario.path.poses(p.coupling.translational_stiffness);
        let setup = scenario.scene;
        let mut cycle =
            RenderingCycle::new(setup.moving, setup.environment, p, setup.initial_pose).unwrap();
        for (pose, _) in &poses[..100] {
            cycle.step(pose);
        }
        let before = allocations();
        let mut contacts = 0;
        for (pose, _) in &poses[100..] {
            contacts = contacts.max(cycle.step(pose).contacts);
        }
        let allocated = allocations() - before;
        println!(
            "{friction:?}: {} cycles, up to {contacts} contacts, {allocated} allocations",
            poses.len() - 100
        );
        assert!(contacts > 0);
        assert_eq!(allocated, 0);
    }
}
