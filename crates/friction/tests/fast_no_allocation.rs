//! `FastStaticFrictionSolver::solve` allocates nothing once constructed: a
//! counting global allocator watches this thread through solves of every
//! rank and outcome.

mod fast_common;

use fast_common::{random_problem, Layout};
use haptic_alloc_counter::{allocations_during, CountingAllocator};
use haptic_friction::{
    FastStaticFrictionSolver, FrictionSolution, FrictionState, StaticFrictionSolver,
};
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
