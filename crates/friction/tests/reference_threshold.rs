//! Instances placed at the friction limit by bisection on the push scale
//! ([`Instance::near_threshold`]), then pushed just inside and just outside.

use haptic_friction::{
    FrictionSolution, FrictionState, FullLpSolver, QpSolver, ReferenceLpSolver,
    StaticFrictionSolver,
};
use haptic_testkit::instances::{Instance, InstanceSpec};

/// 10⁻³ of the limit: all three solvers must place it alike.
#[test]
fn lps_and_qp_agree_a_thousandth_from_the_limit() {
    let mut reduced = ReferenceLpSolver::default();
    let mut full = FullLpSolver::default();
    let qp = QpSolver::default();
    let mut s = FrictionSolution::with_capacity(30);
    let mut pairs = 0;
    let (mut inside_deviation, mut outside_deviation) = (0.0f64, f64::INFINITY);
    for seed in 0..100 {
        let spec = InstanceSpec::mixed(seed, 30);
        let Some((inside, outside)) =
            Instance::near_threshold(&spec, &mut ReferenceLpSolver::default(), 1e-3).unwrap()
        else {
            continue;
        };
        pairs += 1;
        for (instance, expected) in [
            (inside, FrictionState::Static),
            (outside, FrictionState::Sliding),
        ] {
            let p = &instance.problem;
            reduced.solve(p, &mut s).unwrap();
            assert_eq!(s.state, expected, "reduced LP, {spec:?}");
            full.solve(p, &mut s).unwrap();
            assert_eq!(s.state, expected, "full LP, {spec:?}");
            let q = qp.analyse(p).unwrap();
            assert_eq!(
                q.static_friction,
                expected == FrictionState::Static,
                "QP, {spec:?}, deviation {}",
                q.deviation
            );
            if q.static_friction {
                inside_deviation = inside_deviation.max(q.deviation);
            } else {
                outside_deviation = outside_deviation.min(q.deviation);
            }
        }
    }
    println!(
        "{pairs} pairs; QP deviation ≤ {inside_deviation:.1e} inside, ≥ {outside_deviation:.1e} \
         outside (tolerance {:.0e})",
        qp.tolerance
    );
    assert!(pairs >= 90);
}

/// 10⁻⁴ of the limit: the reduced LP is exact, the unreduced one may fail
/// numerically (its redundant rows) but never answers wrongly, and some of
/// these feasibility LPs stall, exercising the load-factor fallback.
#[test]
fn the_reduced_lp_resolves_a_ten_thousandth_from_the_limit() {
    let mut reduced = ReferenceLpSolver::default();
    let mut full = FullLpSolver::default();
    let qp = QpSolver::default();
    let mut s = FrictionSolution::with_capacity(30);
    let (mut pairs, mut full_failures, mut qp_wrong) = (0, 0, 0);
    for seed in 0..100 {
        let spec = InstanceSpec::mixed(seed, 30);
        let Some((inside, outside)) =
            Instance::near_threshold(&spec, &mut ReferenceLpSolver::default(), 1e-4).unwrap()
        else {
            continue;
        };
        pairs += 1;
        for (instance, expected) in [
            (inside, FrictionState::Static),
            (outside, FrictionState::Sliding),
        ] {
            let p = &instance.problem;
            reduced.solve(p, &mut s).unwrap();
            assert_eq!(s.state, expected, "reduced LP, {spec:?}");
            match full.solve(p, &mut s) {
                Ok(()) => assert_eq!(s.state, expected, "full LP, {spec:?}"),
                Err(_) => full_failures += 1,
            }
            if qp.analyse(p).unwrap().static_friction != (expected == FrictionState::Static) {
                qp_wrong += 1;
            }
        }
    }
    println!(
        "{pairs} pairs: full LP failed {full_failures}, QP misjudged {qp_wrong}; \
         fallbacks: reduced {}, full {}",
        reduced.fallbacks, full.fallbacks
    );
    assert!(pairs >= 90);
    assert!(full_failures <= 2);
    assert!(reduced.fallbacks + full.fallbacks > 0);
}
