//! The fast solver against the clarabel reference LP on the shared random
//! instances (`haptic_testkit::instances`): same state, same `Δq`, and the
//! fast solver's own checks on SI-unit data.

mod fast_common;

use fast_common::check_solution;
use haptic_friction::{
    FastStaticFrictionSolver, FrictionSolution, FrictionState, ReferenceLpSolver,
    StaticFrictionSolver,
};
use haptic_testkit::instances::{Family, Instance, InstanceSpec};

#[test]
fn fast_and_reference_agree_on_mixed_instances() {
    let mut fast = FastStaticFrictionSolver::new(100, 8);
    let mut reference = ReferenceLpSolver::default();
    let (mut a, mut b) = (
        FrictionSolution::with_capacity(100),
        FrictionSolution::with_capacity(100),
    );
    let (mut agree, mut stat, mut disagreements) = (0, 0, Vec::new());
    for seed in 0..600 {
        let spec = InstanceSpec::mixed(seed, 100);
        let p = Instance::generate(&spec).problem;
        fast.solve(&p, &mut a).unwrap();
        reference.solve(&p, &mut b).unwrap();
        check_solution(&p, &a, fast.report());
        if a.state != b.state {
            disagreements.push((
                seed,
                spec.family,
                a.state,
                fast.report().residual,
                fast.report().separation,
            ));
            continue;
        }
        agree += 1;
        if a.state == FrictionState::Static {
            stat += 1;
            let scale = a.displacement.norm().max(b.displacement.norm()).max(1e-12);
            assert!(
                (a.displacement - b.displacement).norm() <= 1e-6 * scale,
                "seed {seed}: Δq {:?} vs {:?}",
                a.displacement,
                b.displacement
            );
        } else {
            assert!((a.displacement - b.displacement).norm() <= 1e-12 * b.displacement.norm());
        }
    }
    println!("agree {agree} of 600 ({stat} static); disagreements {disagreements:?}");
    assert!(disagreements.len() <= 3);
}

/// Pairs bracketing the friction limit to 10⁻⁷ by bisection with one solver,
/// pushed 10⁻⁵ inside and outside: the other solver must call them static
/// and sliding. Both directions.
#[test]
fn both_solvers_place_the_friction_limit_alike() {
    let mut fast = FastStaticFrictionSolver::new(100, 8);
    let mut reference = ReferenceLpSolver::default();
    let mut solution = FrictionSolution::with_capacity(100);
    let (mut pairs, mut reference_failures) = (0, 0);
    for seed in 0..60 {
        let spec = InstanceSpec {
            family: [
                Family::Generic,
                Family::OneContact,
                Family::TwoContacts,
                Family::Collinear,
                Family::Coplanar,
            ][seed % 5],
            contacts: 3 + 7 * (seed % 7),
            pyramid_sides: [4, 8][seed % 2],
            seed: seed as u64,
        };
        for bisect_with_fast in [true, false] {
            let (bisector, judge): (&mut dyn StaticFrictionSolver, &mut dyn StaticFrictionSolver) =
                if bisect_with_fast {
                    (&mut fast, &mut reference)
                } else {
                    (&mut reference, &mut fast)
                };
            // clarabel occasionally reports a numerical error near the limit.
            let Ok(bracket) = Instance::near_threshold(&spec, bisector, 1e-5) else {
                reference_failures += 1;
                continue;
            };
            let Some((inside, outside)) = bracket else {
                continue;
            };
            for (instance, expected) in [
                (inside, FrictionState::Static),
                (outside, FrictionState::Sliding),
            ] {
                if judge.solve(&instance.problem, &mut solution).is_err() {
                    reference_failures += 1;
                    continue;
                }
                pairs += 1;
                assert_eq!(
                    solution.state, expected,
                    "{spec:?}, bisected by fast: {bisect_with_fast}"
                );
            }
        }
    }
    println!("{pairs} judged instances, {reference_failures} reference errors");
    assert!(pairs > 120);
}
