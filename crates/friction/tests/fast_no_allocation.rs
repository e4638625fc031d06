//! `FastStaticFrictionSolver::solve` allocates nothing once constructed: a
//! counting global allocator watches this thread through solves of every
//! rank and outcome.

mod fast_common;

use std::alloc::{GlobalAlloc, Layout as AllocLayout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use fast_common::{random_problem, Layout};
use haptic_friction::{
    FastStaticFrictionSolver, FrictionSolution, FrictionState, StaticFrictionSolver,
};
use rand::SeedableRng;
use rand_pcg::Pcg64;

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static WATCHED: Cell<bool> = const { Cell::new(false) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: AllocLayout) -> *mut u8 {
        if WATCHED.with(Cell::get) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: AllocLayout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: AllocLayout, size: usize) -> *mut u8 {
        if WATCHED.with(Cell::get) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { System.realloc(ptr, layout, size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

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
    WATCHED.with(|w| w.set(true));
    for p in &problems {
        solver.solve(p, &mut solution).unwrap();
        states[usize::from(solution.state == FrictionState::Sliding)] += 1;
    }
    WATCHED.with(|w| w.set(false));
    assert_eq!(ALLOCATIONS.load(Ordering::Relaxed), 0);
    assert!(states[0] > 20 && states[1] > 20, "{states:?}");
}
