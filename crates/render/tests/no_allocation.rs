//! `RenderingCycle::step` allocates nothing after warm-up, with the LP and
//! with Yamane's springs.

use haptic_alloc_counter::{allocations, CountingAllocator};
use haptic_render::scenario::cube_corner;
use haptic_render::{FrictionModel, RenderingCycle};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

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
