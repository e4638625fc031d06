//! Random instances: every static answer balances the wrench inside the
//! pyramids with the QP's displacement, every sliding answer carries a
//! separating direction that an independent support function confirms.

mod fast_common;

use fast_common::{check_solution, random_problem, Layout};
use haptic_core::Vector6;
use haptic_friction::{
    FastStaticFrictionSolver, FrictionSolution, FrictionState, MembershipStatus,
    StaticFrictionProblem, StaticFrictionSolver,
};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

#[test]
fn random_instances_satisfy_the_lp_or_carry_a_certificate() {
    let mut rng = Pcg64::seed_from_u64(2);
    let mut solver = FastStaticFrictionSolver::new(40, 8);
    let mut solution = FrictionSolution::with_capacity(40);
    let (mut stat, mut slide, mut banded, mut most) = (0, 0, 0, 0);
    for n in 0..1500 {
        let layout = [Layout::Generic, Layout::Collinear, Layout::Coplanar][n % 3];
        let k = rng.gen_range(1..=30);
        let sides = [3, 4, 5, 8][rng.gen_range(0..4)];
        let p = random_problem(&mut rng, k, sides, layout);
        solver.solve(&p, &mut solution).unwrap();
        let report = *solver.report();
        match check_solution(&p, &solution, &report) {
            FrictionState::Static => stat += 1,
            FrictionState::Sliding => slide += 1,
            FrictionState::Free => unreachable!(),
        }
        if matches!(
            report.status,
            MembershipStatus::BandContained | MembershipStatus::BandSeparated
        ) {
            banded += 1;
        }
        most = most.max(report.iterations);
    }
    println!("static {stat}, sliding {slide}, band decisions {banded}, most iterations {most}");
    assert!(stat > 300 && slide > 300);
    assert!(banded <= 3, "{banded} band decisions");
}

/// The same instance in other units (mm, mN, a different mass unit) gets
/// the same answer, with displacements and forces converted.
#[test]
fn answers_do_not_depend_on_units() {
    let mut rng = Pcg64::seed_from_u64(3);
    let mut solver = FastStaticFrictionSolver::new(30, 8);
    let (mut a, mut b) = (
        FrictionSolution::with_capacity(30),
        FrictionSolution::with_capacity(30),
    );
    for n in 0..300 {
        let layout = [Layout::Generic, Layout::Collinear, Layout::Coplanar][n % 3];
        let k = rng.gen_range(1..=30);
        let p = random_problem(&mut rng, k, 8, layout);
        let (length, force, energy) = (0.05, 3.0e-4, 7.0);
        let q = rescale(&p, length, force, energy);
        solver.solve(&p, &mut a).unwrap();
        solver.solve(&q, &mut b).unwrap();
        assert_eq!(a.state, b.state, "instance {n}");
        let scaled = a
            .displacement
            .component_mul(&Vector6::new(length, length, length, 1.0, 1.0, 1.0));
        assert!((scaled - b.displacement).norm() <= 1e-7 * scaled.norm().max(1e-12 * length));
        for (x, y) in a.beta.iter().zip(&b.beta) {
            assert!((x[0] * force - y[0]).abs() + (x[1] * force - y[1]).abs() <= 1e-6 * force);
        }
    }
}

/// Lengths times `length`, forces times `force`, the kinetic energy (eq 27) times `energy`.
fn rescale(
    p: &StaticFrictionProblem,
    length: f64,
    force: f64,
    energy: f64,
) -> StaticFrictionProblem {
    let wrench_unit = Vector6::new(
        force,
        force,
        force,
        force * length,
        force * length,
        force * length,
    );
    let position_unit = Vector6::new(length, length, length, 1.0, 1.0, 1.0);
    let mut q = p.clone();
    q.wrench = p.wrench.component_mul(&wrench_unit);
    q.stiffness = haptic_core::Matrix6::from_fn(|i, j| {
        p.stiffness[(i, j)] * wrench_unit[i] / position_unit[j]
    });
    q.mass = haptic_core::Matrix6::from_fn(|i, j| {
        p.mass[(i, j)] * energy / (position_unit[i] * position_unit[j])
    });
    for c in &mut q.contacts {
        c.handle *= length;
        c.normal_force *= force;
    }
    q
}
