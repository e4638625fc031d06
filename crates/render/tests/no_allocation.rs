//! `RenderingCycle::step` allocates nothing after warm-up, with each
//! friction model set explicitly: static friction with bounded pre-sliding
//! (the default), the LP and Yamane's springs.

use haptic_alloc_counter::{allocations, CountingAllocator};
use haptic_friction::{FrictionState, PreSlidingParameters};
use haptic_render::{FrictionModel, RenderingCycle};
use haptic_scenarios::cube_corner;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[test]
fn a_cycle_does_not_allocate() {
    for friction in [
        FrictionModel::PreSliding {
            displacement: PreSlidingParameters::default().displacement,
        },
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
        let (mut contacts, mut states) = (0, [0; 3]);
        for (pose, _) in &poses[100..] {
            let report = cycle.step(pose);
            contacts = contacts.max(report.contacts);
            states[report.verdict.state() as usize] += 1;
        }
        let allocated = allocations() - before;
        println!(
            "{friction:?}: {} cycles, up to {contacts} contacts, {} static, {} sliding, \
             {} free, {allocated} allocations",
            poses.len() - 100,
            states[FrictionState::Static as usize],
            states[FrictionState::Sliding as usize],
            states[FrictionState::Free as usize],
        );
        assert_eq!(cycle.parameters().friction, friction);
        assert!(contacts > 0);
        assert!(states[FrictionState::Static as usize] > 0);
        assert_eq!(allocated, 0);
    }
}
