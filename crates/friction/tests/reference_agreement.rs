//! The reduced reference LP, the unreduced LP (eqs 32–37) and the QP
//! (eqs 28–31) on 2,000 random instances of every family: the same state
//! every time; when static the same `Δq`, admissible `β`, and (Zhao, Li &
//! Barbič's theorem) the LP's `Δq` attains the QP's optimal objective.

use haptic_core::{Matrix6, Vector6};
use std::collections::BTreeMap;

use haptic_friction::{
    reduce, FrictionSolution, FrictionState, FullLpSolver, QpSolver, ReferenceLpSolver,
    StaticFrictionProblem, StaticFrictionSolver,
};
use haptic_testkit::instances::{Instance, InstanceSpec};

/// `√(vᵀM̄v)`: one norm for translations and rotations.
fn mass_norm(mass: &Matrix6, v: &Vector6) -> f64 {
    v.dot(&(mass * v)).max(0.0).sqrt()
}

/// `(max_i,j a_jᵀβ_i − μ_i‖F_n^i‖, ‖D(f + HΔq + Wβ)‖)` over `Σ‖F_n‖`, with
/// `D = diag(I, I/max‖r‖)`: how far a static answer is from eqs 35–37.
fn violation(p: &StaticFrictionProblem, s: &FrictionSolution) -> (f64, f64) {
    let total: f64 = p.contacts.iter().map(|c| c.normal_force).sum();
    let length = p
        .contacts
        .iter()
        .map(|c| c.handle.norm())
        .fold(0.0, f64::max);
    let mut residual = p.wrench + p.stiffness * s.displacement;
    let mut pyramid = f64::NEG_INFINITY;
    for (c, b) in p.contacts.iter().zip(&s.beta) {
        residual += c.wrench_basis() * nalgebra::Vector2::new(b[0], b[1]);
        for side in p.side_directions() {
            pyramid = pyramid.max(side.x * b[0] + side.y * b[1] - c.friction_limit());
        }
    }
    let scaled = Vector6::new(
        residual[0],
        residual[1],
        residual[2],
        residual[3] / length,
        residual[4] / length,
        residual[5] / length,
    );
    (pyramid / total, scaled.norm() / total)
}

#[derive(Default)]
struct Worst {
    full_dq: f64,
    qp_dq: f64,
    objective: f64,
    pyramid: f64,
    residual: f64,
    kkt: f64,
}

fn check(seeds: std::ops::Range<u64>) {
    let mut reduced = ReferenceLpSolver::default();
    let mut full = FullLpSolver::default();
    let qp = QpSolver::default();
    let mut a = FrictionSolution::with_capacity(60);
    let mut b = FrictionSolution::with_capacity(60);
    let mut counts: BTreeMap<(String, usize, bool), usize> = BTreeMap::new();
    let mut worst = Worst::default();
    for seed in seeds.clone() {
        let spec = InstanceSpec::mixed(seed, 60);
        let p = Instance::generate(&spec).problem;
        let tag = format!("seed {seed}, {spec:?}");
        reduced.solve(&p, &mut a).expect(&tag);
        full.solve(&p, &mut b).expect(&tag);
        let q = qp.analyse(&p).expect(&tag);
        let r = reduce(&p).expect(&tag);
        *counts
            .entry((format!("{:?}", spec.family), r.rank, q.static_friction))
            .or_default() += 1;

        // The reduction solves eqs 32–34 and defines g by eqs 35–36.
        let mut w = nalgebra::DMatrix::zeros(6, 2 * p.contacts.len());
        for (i, c) in p.contacts.iter().enumerate() {
            w.fixed_view_mut::<6, 2>(0, 2 * i)
                .copy_from(&c.wrench_basis());
        }
        let lambda = nalgebra::DVector::from_column_slice(r.multiplier.as_slice());
        let kkt = [
            (w.transpose() * &lambda).norm() / (w.norm() * lambda.norm()).max(1e-300),
            (p.mass * r.displacement + p.stiffness.transpose() * r.multiplier).norm()
                / (p.stiffness.norm() * r.multiplier.norm()).max(1e-300),
            (r.friction_wrench + p.wrench + p.stiffness * r.displacement).norm() / p.wrench.norm(),
        ];
        worst.kkt = kkt.into_iter().fold(worst.kkt, f64::max);

        assert_eq!(a.state, b.state, "reduced vs full LP, {tag}");
        let qp_state = if q.static_friction {
            FrictionState::Static
        } else {
            FrictionState::Sliding
        };
        assert_eq!(
            a.state, qp_state,
            "LP vs QP, {tag}, deviation {}",
            q.deviation
        );
        assert!(q.objective >= q.relaxed_objective * (1.0 - 1e-6), "{tag}");

        let free = p.frictionless_displacement().unwrap();
        let scale = mass_norm(&p.mass, &free);
        if a.state == FrictionState::Sliding {
            for s in [&a, &b] {
                assert_eq!(s.displacement, free, "{tag}");
                assert!(s.beta.iter().all(|b| *b == [0.0; 2]), "{tag}");
            }
            continue;
        }
        assert_eq!(a.displacement, r.displacement, "{tag}");
        worst.full_dq = worst
            .full_dq
            .max(mass_norm(&p.mass, &(a.displacement - b.displacement)) / scale);
        worst.qp_dq = worst
            .qp_dq
            .max(mass_norm(&p.mass, &(a.displacement - q.displacement)) / scale);
        // Any feasible LP point minimises the QP: both LPs' Δq attain its optimum.
        for s in [&a, &b] {
            let objective = 0.5 * s.displacement.dot(&(p.mass * s.displacement));
            worst.objective = worst
                .objective
                .max((objective - q.objective).abs() / (0.5 * scale * scale));
            let (pyramid, residual) = violation(&p, s);
            worst.pyramid = worst.pyramid.max(pyramid);
            worst.residual = worst.residual.max(residual);
        }
    }
    println!("instances {seeds:?}: (family, rank W, static) → count");
    for (key, n) in &counts {
        println!("  {key:?}: {n}");
    }
    println!(
        "worst: Δq full/reduced {:.1e}, QP/reduced {:.1e}, objective {:.1e}, pyramid {:.1e}, \
         eqs 35–36 {:.1e}, reduction KKT {:.1e}; fallbacks {} / {}",
        worst.full_dq,
        worst.qp_dq,
        worst.objective,
        worst.pyramid,
        worst.residual,
        worst.kkt,
        reduced.fallbacks,
        full.fallbacks
    );
    assert!(worst.full_dq < 1e-7);
    assert!(worst.qp_dq < 1e-5);
    assert!(worst.objective < 1e-8);
    assert!(worst.pyramid < 1e-8);
    assert!(worst.residual < 1e-7);
    assert!(worst.kkt < 1e-9);
    let statics: usize = counts.iter().filter(|(k, _)| k.2).map(|(_, n)| n).sum();
    assert!(statics > 300 && statics < 700, "{statics} static of 1,000");
}

#[test]
fn reduced_full_and_qp_agree_on_instances_0_to_999() {
    check(0..1000);
}

#[test]
fn reduced_full_and_qp_agree_on_instances_1000_to_1999() {
    check(1000..2000);
}
