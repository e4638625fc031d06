//! `RenderingCycle::apply`: a cycle retuned to parameters `P` renders as a
//! cycle built with `P` at the same pose; a change of `μ` alone keeps the
//! stick anchors and moves where sliding stops; applying allocates nothing.

use haptic_alloc_counter::{allocations, CountingAllocator};
use haptic_friction::PreSlidingParameters;
use haptic_render::{
    CycleReport, FrictionModel, RenderError, RenderParameters, RenderingCycle, RenderingUpdate,
    SolverChoice, StageTimings,
};
use haptic_scenarios::{slide, Scenario};
use nalgebra::Isometry3;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

const PRE_SLIDING: FrictionModel = FrictionModel::PreSliding { displacement: 5e-6 };

fn cycle(
    scenario: &Scenario,
    parameters: RenderParameters,
    pose: Isometry3<f64>,
) -> RenderingCycle {
    let setup = scenario.scene.clone();
    RenderingCycle::new(setup.moving, setup.environment, parameters, pose).unwrap()
}

fn mu_of(scenario: &Scenario) -> Vec<f64> {
    scenario
        .scene
        .environment
        .iter()
        .map(|o| o.friction_coefficient)
        .collect()
}

/// The report without its wall-clock timings.
fn untimed(report: CycleReport) -> CycleReport {
    CycleReport {
        timings: StageTimings::default(),
        ..report
    }
}

#[test]
fn a_retuned_cycle_renders_as_one_built_with_its_parameters() {
    let scenario = slide(0.3);
    let poses = scenario
        .path
        .poses(scenario.parameters.coupling.translational_stiffness);
    // Retuned in the hold after the press, before the sideways jump.
    let switch = 350;
    let defaults = RenderParameters::default();
    let changes = [
        (
            PRE_SLIDING,
            RenderParameters {
                friction: FrictionModel::StaticLp,
                pyramid_sides: 6,
                static_damping: 0.3,
                ..defaults
            },
        ),
        (
            FrictionModel::StaticLp,
            RenderParameters {
                friction: FrictionModel::PreSliding { displacement: 2e-5 },
                pyramid_sides: 12,
                ..defaults
            },
        ),
        (
            PRE_SLIDING,
            RenderParameters {
                friction: FrictionModel::YamaneSprings { stiffness: 150.0 },
                anti_stickiness: false,
                ..defaults
            },
        ),
        (
            FrictionModel::YamaneSprings { stiffness: 200.0 },
            RenderParameters {
                friction: PRE_SLIDING,
                pyramid_sides: 4,
                coupling: haptic_contact::VirtualCoupling {
                    translational_stiffness: 800.0,
                    rotational_stiffness: 0.5,
                },
                ..defaults
            },
        ),
    ];
    for (before, after) in changes {
        let mut retuned = cycle(
            &scenario,
            RenderParameters {
                friction: before,
                ..defaults
            },
            scenario.scene.initial_pose,
        );
        for (pose, _) in &poses[..switch] {
            retuned.step(pose);
        }
        let mut update = RenderingUpdate::new(retuned.layout(), after, mu_of(&scenario)).unwrap();
        retuned.apply(&mut update).unwrap();
        assert_eq!(update.parameters().friction, after.friction);
        let mut built = cycle(&scenario, after, *retuned.tool_pose());
        let mut static_ticks = 0;
        for (pose, _) in &poses[switch..] {
            let (a, b) = (retuned.step(pose), built.step(pose));
            assert_eq!(untimed(a), untimed(b), "{before:?} → {:?}", after.friction);
            assert_eq!(retuned.contact_friction(), built.contact_friction());
            static_ticks +=
                usize::from(a.verdict.state() == haptic_friction::FrictionState::Static);
        }
        assert!(static_ticks > 0, "{before:?} → {:?}", after.friction);
    }
}

/// Runs `slide(0.3)` and, just before the sideways jump, applies `mu`.
fn slide_retuned_to(mu: f64) -> (Vec<CycleReport>, RenderingCycle) {
    let scenario = slide(0.3);
    let p = scenario.parameters;
    let poses = scenario.path.poses(p.coupling.translational_stiffness);
    let mut cycle = cycle(&scenario, p, scenario.scene.initial_pose);
    let jump = 500;
    let mut reports: Vec<CycleReport> = poses[..jump].iter().map(|(m, _)| cycle.step(m)).collect();
    let mut update = RenderingUpdate::new(cycle.layout(), p, vec![mu]).unwrap();
    cycle.apply(&mut update).unwrap();
    reports.extend(poses[jump..].iter().map(|(m, _)| untimed(cycle.step(m))));
    (reports.into_iter().map(untimed).collect(), cycle)
}

#[test]
fn changing_mu_alone_keeps_the_anchors_and_moves_where_sliding_stops() {
    let unchanged: Vec<_> = haptic_scenarios::run(&slide(0.3))
        .unwrap()
        .rows
        .iter()
        .map(|row| row.simulation)
        .collect();
    // The same μ through an update: anchors and warm start carry on, so
    // the run is the one never retuned.
    let (same, _) = slide_retuned_to(0.3);
    let poses: Vec<_> = same.iter().map(|r| r.tool_pose).collect();
    assert_eq!(poses, unchanged);
    // Sliding stops where friction at the new μ balances the coupling:
    // F_x / F_z ≈ μ, up to the pyramid's factor along x (slide's own test).
    for mu in [0.15, 0.6] {
        let (reports, cycle) = slide_retuned_to(mu);
        let end = reports.last().unwrap().coupling_wrench;
        let ratio = end.x.abs() / end.z.abs() / mu;
        println!("μ → {mu}: final F_x/F_z = {:.4} μ", ratio);
        assert!((0.95..1.136).contains(&ratio), "μ {mu}: {ratio}");
        assert_eq!(cycle.scene().environment()[0].friction_coefficient, mu);
        // In a static hold every contact in the problem sticks, with its
        // friction inside the cone.
        let friction = cycle.contact_friction();
        assert_eq!(friction.len(), cycle.scene().contacts().len());
        assert!(friction.iter().any(|f| f.stuck));
        for (contact, f) in cycle.scene().contacts().iter().zip(friction) {
            let limit = mu * contact.normal_force() / (std::f64::consts::PI / 8.0).cos();
            assert!(f.force.norm() <= limit * (1.0 + 1e-9), "{f:?}");
            assert!(f.force.dot(&contact.normal).abs() < 1e-9 * (1.0 + f.force.norm()));
        }
    }
}

#[test]
fn an_update_is_refused_unless_it_fits() {
    let scenario = slide(0.3);
    let p = scenario.parameters;
    let mut cycle = cycle(&scenario, p, scenario.scene.initial_pose);
    let layout = cycle.layout();
    assert!(matches!(
        RenderingUpdate::new(layout, p, vec![0.3, 0.3]),
        Err(RenderError::FrictionCoefficients {
            given: 2,
            objects: 1
        })
    ));
    assert!(RenderingUpdate::new(layout, p, vec![-1.0]).is_err());
    let mut soft = p;
    soft.penalty.stiffness = 0.0;
    assert!(RenderingUpdate::new(layout, soft, vec![0.3]).is_err());
    let mut reference = p;
    reference.solver = SolverChoice::Reference;
    // Built with `reference` in tests (the dev-dependency's feature).
    assert!(RenderingUpdate::new(layout, reference, vec![0.3]).is_ok());
    let mut other = layout;
    other.max_contacts += 1;
    let mut update = RenderingUpdate::new(other, p, vec![0.3]).unwrap();
    assert!(matches!(
        cycle.apply(&mut update),
        Err(RenderError::LayoutMismatch { .. })
    ));
}

#[test]
fn applying_an_update_allocates_nothing() {
    let scenario = slide(0.3);
    let p = scenario.parameters;
    let poses = scenario.path.poses(p.coupling.translational_stiffness);
    let mut cycle = cycle(&scenario, p, scenario.scene.initial_pose);
    let models = [
        FrictionModel::StaticLp,
        FrictionModel::YamaneSprings { stiffness: 200.0 },
        FrictionModel::PreSliding {
            displacement: PreSlidingParameters::default().displacement,
        },
    ];
    for (pose, _) in &poses[..100] {
        cycle.step(pose);
    }
    for (round, (pose, _)) in poses[100..].iter().enumerate() {
        let mut update = (round % 50 == 0).then(|| {
            let friction = models[round / 50 % models.len()];
            let parameters = RenderParameters {
                friction,
                pyramid_sides: 4 + round / 50 % 3,
                ..p
            };
            RenderingUpdate::new(cycle.layout(), parameters, vec![0.2 + 0.001 * round as f64])
                .unwrap()
        });
        let before = allocations();
        if let Some(update) = &mut update {
            cycle.apply(update).unwrap();
        }
        cycle.step(pose);
        assert_eq!(allocations() - before, 0, "round {round}");
        drop(update);
    }
}
