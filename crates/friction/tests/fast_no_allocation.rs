//! `FastStaticFrictionSolver::solve` and `FastPreSlidingSolver::solve`
//! allocate nothing once constructed: a counting global allocator watches
//! this thread through solves of every rank and outcome, cold and
//! warm-started.

mod fast_common;

use fast_common::{random_problem, Layout};
use haptic_alloc_counter::{allocations_during, CountingAllocator};
use haptic_friction::{
    FastPreSlidingSolver, FastStaticFrictionSolver, FrictionSolution, FrictionState,
    PreSlidingParameters, StaticFrictionSolver,
};
use haptic_testkit::instances::{with_anchor_slips, Instance, InstanceSpec};
use rand::SeedableRng;
use rand_pcg::Pcg64;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[test]
fn solve_does_not_allocate_after_construction() {
    let mut rng = Pcg64::seed_from_u64(19);
    let problems: Vec<_> = (0..300)
        .map(|n| {
            let layout = [Layout::Generic, Layout::Collinear, Layout::Coplanar][n % 3];
            random_problem(&mut rng, 1 + n % 100, [4, 8][n % 2], layout)
        })
        .collect();
    let mut solver = FastStaticFrictionSolver::new(100, 8);
    let mut solution = FrictionSolution::with_capacity(100);
    solver.solve(&problems[0], &mut solution).unwrap();

    let mut states = [0; 2];
    let allocated = allocations_during(|| {
        for p in &problems {
            solver.solve(p, &mut solution).unwrap();
            states[usize::from(solution.state == FrictionState::Sliding)] += 1;
        }
    });
    assert_eq!(allocated, 0);
    assert!(states[0] > 20 && states[1] > 20, "{states:?}");
}

#[test]
fn pre_sliding_solve_does_not_allocate_after_construction() {
    let mut rng = Pcg64::seed_from_u64(23);
    let mut problems = Vec::new();
    for n in 0..300 {
        let spec = InstanceSpec::mixed(0x5EED + n, 100);
        let problem = with_anchor_slips(Instance::generate(&spec).problem, 10e-6, &mut rng);
        // Every other instance is solved twice in a row, slightly changed,
        // so that the warm start finds atoms to re-use.
        if n % 2 == 0 {
            let mut nearby = problem.clone();
            nearby.wrench *= 1.0 + 1e-4;
            problems.push(nearby);
        }
        problems.push(problem);
    }
    let mut none = problems[0].clone();
    none.contacts.clear();
    problems.insert(problems.len() / 2, none);
    let mut solver = FastPreSlidingSolver::new(100, 8, PreSlidingParameters::default());
    let mut solution = FrictionSolution::with_capacity(100);
    solver.solve(&problems[0], &mut solution).unwrap();

    let mut states = [0; 3];
    let allocated = allocations_during(|| {
        for p in &problems {
            solver.solve(p, &mut solution).unwrap();
            states[match solution.state {
                FrictionState::Static => 0,
                FrictionState::Sliding => 1,
                FrictionState::Free => 2,
            }] += 1;
        }
    });
    assert_eq!(allocated, 0);
    assert!(
        states[0] > 20 && states[1] > 20 && states[2] == 1,
        "{states:?}"
    );
}
