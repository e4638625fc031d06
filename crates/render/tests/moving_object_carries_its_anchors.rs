//! A tool stuck on an object that moves stays stuck where it touched it:
//! the stick anchors are points of the object, carried with it
//! (`RenderingCycle::move_environment_pose`, as the servo moves a touched
//! body every tick). Zhao et al.'s cube pressed on the floor with 3 N
//! (μ = 0.3, so up to 0.9 N of friction) and loaded along x with about
//! 0.2 N; then the floor and the hand travel together along x, 50 µm a
//! cycle for 200 cycles (1 cm): nothing moves relative to the floor, so
//! the tangential force stays where it was and the cube stays stuck. With
//! Yamane's springs, anchors left in the world would stretch by the
//! floor's travel and hold the cube back (0.22 mm behind in the first
//! cycle); the pre-sliding model, which places its anchors afresh in every
//! cycle that holds the tool in place, is carried either way.

use haptic_friction::FrictionState;
use haptic_render::{FrictionModel, RenderParameters, RenderingCycle};
use haptic_scenarios::slide;
use nalgebra::{Isometry3, Vector3};

const STEP_M: f64 = 5e-5;
const MOVES: usize = 200;

/// The largest tangential force (N) while the floor and the hand travel,
/// the tangential force before, and the cycles that were not static.
fn carried(friction: FrictionModel) -> (f64, f64, usize) {
    let scenario = slide(0.3);
    let poses = scenario
        .path
        .poses(scenario.parameters.coupling.translational_stiffness);
    let setup = scenario.scene.clone();
    let parameters = RenderParameters {
        friction,
        ..scenario.parameters
    };
    let mut cycle =
        RenderingCycle::new(setup.moving, setup.environment, parameters, poses[0].0).unwrap();
    // The press and the settling (segments 0 and 1).
    let pressed: Vec<_> = poses
        .iter()
        .take_while(|(_, segment)| *segment < 2)
        .collect();
    let mut before = 0.0;
    for (pose, _) in &pressed {
        before = cycle.step(pose).coupling_wrench.xy().norm();
    }
    // A tangential load inside the cone: the hand 0.2 mm along x of
    // where it pressed (about 0.2 N at 1,000 N/m, against 0.9 N).
    let hand = Isometry3::translation(2e-4, 0.0, 0.0) * pressed.last().unwrap().0;
    for _ in 0..200 {
        before = cycle.step(&hand).coupling_wrench.xy().norm();
    }
    let held = hand.translation.vector - cycle.tool_pose().translation.vector;
    let floor = cycle.scene().environment()[0].pose;
    let (mut largest, mut not_static) = (0.0f64, 0);
    for k in 1..=MOVES {
        let shift = Isometry3::translation(STEP_M * k as f64, 0.0, 0.0);
        cycle.move_environment_pose(0, shift * floor);
        let report = cycle.step(&(shift * hand));
        largest = largest.max(report.coupling_wrench.xy().norm());
        if report.verdict.state() != FrictionState::Static {
            not_static += 1;
        }
        let lag = (shift * hand).translation.vector - cycle.tool_pose().translation.vector - held;
        assert!(
            Vector3::new(lag.x, lag.y, 0.0).norm() < 1e-5,
            "cycle {k}: the cube lags the floor by {lag:?} beyond the load's offset"
        );
    }
    (largest, before, not_static)
}

#[test]
fn a_tool_stuck_on_a_moving_floor_travels_with_it() {
    for (name, friction) in [
        ("pre-sliding", RenderParameters::default().friction),
        (
            "Yamane's springs",
            FrictionModel::YamaneSprings { stiffness: 200.0 },
        ),
    ] {
        let (largest, before, not_static) = carried(friction);
        println!(
            "{name}: tangential force {before:.4} N before, up to {largest:.4} N while carried \
             1 cm; {not_static} cycles not static"
        );
        assert!(before > 0.1, "{name}: a load of {before} N");
        assert!(
            largest < before + 0.02,
            "{name}: {largest} N while carried, {before} N before"
        );
        assert_eq!(not_static, 0, "{name}");
    }
}
