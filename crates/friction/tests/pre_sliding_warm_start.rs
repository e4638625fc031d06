//! The pre-sliding solver's warm start across changing problems: one solver
//! fed instances of changing `k` and `ℓ` answers as a fresh solver does.

use haptic_friction::{
    FastPreSlidingSolver, FrictionSolution, PreSlidingParameters, StaticFrictionSolver,
};
use haptic_testkit::instances::{Family, Instance, InstanceSpec};

fn instance(contacts: usize, pyramid_sides: usize, seed: u64) -> Instance {
    Instance::generate(&InstanceSpec {
        family: Family::Generic,
        contacts,
        pyramid_sides,
        seed,
    })
}

#[test]
fn a_reused_solver_answers_as_a_fresh_one_when_k_and_sides_change() {
    let params = PreSlidingParameters::default();
    // More contacts after fewer, with ℓ changed in between: the warm start
    // reads vertex choices stored before the change of ℓ.
    let sequence = [(50, 8), (10, 4), (50, 4), (30, 8), (60, 8), (5, 4), (60, 4)];
    let mut reused = FastPreSlidingSolver::new(60, 8, params);
    let mut solution = FrictionSolution::with_capacity(60);
    let mut expected = FrictionSolution::with_capacity(60);
    for (n, &(k, sides)) in sequence.iter().enumerate() {
        let problem = instance(k, sides, 77 + n as u64).problem;
        reused.solve(&problem, &mut solution).unwrap();
        FastPreSlidingSolver::new(60, 8, params)
            .solve(&problem, &mut expected)
            .unwrap();
        assert_eq!(solution.state, expected.state, "k = {k}, ℓ = {sides}");
        let scale = expected.displacement.norm().max(1e-12);
        assert!(
            (solution.displacement - expected.displacement).norm() <= 1e-6 * scale,
            "k = {k}, ℓ = {sides}: {} vs {}",
            solution.displacement,
            expected.displacement
        );
    }
}
