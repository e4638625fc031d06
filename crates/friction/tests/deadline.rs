//! A solve whose deadline passes answers from the iterate it holds after
//! its [`ITERATIONS_PAST_DEADLINE`]: an equilibrium with every friction
//! force inside its pyramid, static only when that iterate already
//! certifies it, and marked out of time.

mod fast_common;

use fast_common::{equilibrium_residual, pyramid_violation};
use haptic_friction::{
    FastPreSlidingSolver, FastStaticFrictionSolver, FrictionSolution, FrictionState,
    PreSlidingParameters, StaticFrictionProblem, StaticFrictionSolver, ITERATIONS_PAST_DEADLINE,
};
use haptic_testkit::instances::{with_anchor_slips, Instance, InstanceSpec};
use rand::SeedableRng;
use rand_pcg::Pcg64;
use std::time::{Duration, Instant};

const INSTANCES: u64 = 300;

/// `(force, torque)` scales of a problem: its wrench plus every contact's
/// friction limit, the torques' at the farthest handle.
fn scales(p: &StaticFrictionProblem) -> (f64, f64) {
    let limits: f64 = p.contacts.iter().map(|c| c.friction_limit()).sum();
    let arm = p
        .contacts
        .iter()
        .map(|c| c.handle.norm())
        .fold(0.0, f64::max);
    (
        p.wrench.fixed_rows::<3>(0).norm() + limits,
        p.wrench.fixed_rows::<3>(3).norm() + limits * arm,
    )
}

fn assert_admissible(p: &StaticFrictionProblem, s: &FrictionSolution, what: &str) {
    let r = equilibrium_residual(p, s);
    let (force, torque) = scales(p);
    assert!(
        r.fixed_rows::<3>(0).norm() <= 1e-6 * force && r.fixed_rows::<3>(3).norm() <= 1e-6 * torque,
        "{what}: residual {r}"
    );
    let (force, _) = scales(p);
    assert!(pyramid_violation(p, &s.beta) <= 1e-9 * force, "{what}");
}

#[test]
fn a_pre_sliding_solve_out_of_time_is_an_admissible_equilibrium() {
    let params = PreSlidingParameters::default();
    let mut rng = Pcg64::seed_from_u64(5);
    let (mut cut, mut static_kept) = (0, 0);
    for seed in 0..INSTANCES {
        let spec = InstanceSpec::mixed(seed, 120);
        let mut problem = with_anchor_slips(Instance::generate(&spec).problem, 4e-6, &mut rng);
        let mut full = FrictionSolution::with_capacity(120);
        FastPreSlidingSolver::new(120, 8, params)
            .solve(&problem, &mut full)
            .unwrap();
        assert!(!full.out_of_time);

        problem.deadline = Some(Instant::now());
        let mut late = FrictionSolution::with_capacity(120);
        FastPreSlidingSolver::new(120, 8, params)
            .solve(&problem, &mut late)
            .unwrap();
        let what = format!("{spec:?}");
        if full.iterations <= ITERATIONS_PAST_DEADLINE {
            assert_eq!(late, full, "{what}");
            continue;
        }
        cut += 1;
        assert!(late.out_of_time, "{what}");
        assert_eq!(late.iterations, ITERATIONS_PAST_DEADLINE, "{what}");
        assert_admissible(&problem, &late, &what);
        match late.state {
            // An equilibrium within ε certifies static: the optimum slips less.
            FrictionState::Static => {
                assert!(late.slip <= params.displacement, "{what}");
                assert_eq!(full.state, FrictionState::Static, "{what}");
                static_kept += 1;
            }
            _ => assert!(late.decided_in_band, "{what}"),
        }
    }
    println!("{cut} of {INSTANCES} solves cut, {static_kept} of them still certified static");
    assert!(cut > INSTANCES / 2);
}

#[test]
fn the_lp_solve_out_of_time_is_decided_in_band() {
    let mut cut = 0;
    for seed in 0..INSTANCES {
        let spec = InstanceSpec::mixed(seed, 120);
        let mut problem = Instance::generate(&spec).problem;
        let mut full = FrictionSolution::with_capacity(120);
        let mut solver = FastStaticFrictionSolver::new(120, 8);
        solver.solve(&problem, &mut full).unwrap();
        problem.deadline = Some(Instant::now());
        let mut late = FrictionSolution::with_capacity(120);
        solver.solve(&problem, &mut late).unwrap();
        let what = format!("{spec:?}");
        if full.iterations <= ITERATIONS_PAST_DEADLINE {
            continue;
        }
        cut += 1;
        assert!(late.out_of_time && late.decided_in_band, "{what}");
        if late.state == FrictionState::Static {
            assert_admissible(&problem, &late, &what);
        }
    }
    println!("{cut} of {INSTANCES} LP solves cut");
    assert!(cut > INSTANCES / 4);
}

/// A deadline far off changes nothing.
#[test]
fn a_distant_deadline_changes_no_answer() {
    let params = PreSlidingParameters::default();
    let mut rng = Pcg64::seed_from_u64(6);
    for seed in 0..60 {
        let spec = InstanceSpec::mixed(seed, 120);
        let mut problem = with_anchor_slips(Instance::generate(&spec).problem, 4e-6, &mut rng);
        let mut free = FrictionSolution::with_capacity(120);
        FastPreSlidingSolver::new(120, 8, params)
            .solve(&problem, &mut free)
            .unwrap();
        problem.deadline = Some(Instant::now() + Duration::from_secs(3600));
        let mut bounded = FrictionSolution::with_capacity(120);
        FastPreSlidingSolver::new(120, 8, params)
            .solve(&problem, &mut bounded)
            .unwrap();
        assert_eq!(bounded, free, "{spec:?}");
    }
}

/// The servo's solver is warm: the last solve's final vertex choices are
/// tried before the deadline is first checked. Out of time on the problem
/// it last solved, it answers as the full solve did.
#[test]
fn a_warm_solver_out_of_time_answers_from_its_warm_start() {
    let params = PreSlidingParameters::default();
    let mut rng = Pcg64::seed_from_u64(7);
    let mut same = 0;
    for seed in 0..INSTANCES {
        let spec = InstanceSpec::mixed(seed, 120);
        let mut problem = with_anchor_slips(Instance::generate(&spec).problem, 4e-6, &mut rng);
        let mut solver = FastPreSlidingSolver::new(120, 8, params);
        let mut full = FrictionSolution::with_capacity(120);
        solver.solve(&problem, &mut full).unwrap();
        problem.deadline = Some(Instant::now());
        let mut late = FrictionSolution::with_capacity(120);
        solver.solve(&problem, &mut late).unwrap();
        assert_admissible(&problem, &late, &format!("{spec:?}"));
        same += u64::from(late.state == full.state);
    }
    println!("{same} of {INSTANCES} warm solves out of time decide as the full solve");
    assert!(same >= INSTANCES * 9 / 10, "{same}");
}
