//! The pre-sliding model's real-time solver against its clarabel reference
//! on 10,000 random instances (seeds `2³³ + i`), with random stick-anchor
//! offsets.
//!
//! **Instances.** `InstanceSpec::mixed(seed, 300)` (see `agreement_at_scale`:
//! generic, one- and two-contact, collinear and coplanar contact, `k` up to
//! 300, `ℓ` = 4 or 8), each contact given a random tangential slip of up to
//! 10 µm from its anchor (none on one instance in four).
//!
//! **Agreement.** `J` is strictly convex in `Δq`, so both solvers must find
//! the same equilibrium: `Δq` within [`DISPLACEMENT_TOLERANCE`] of the
//! larger of `‖Δq_ref‖` and `10 µm/L` (length-scaled, `(Δx/L, Δθ)`; `J`
//! is nearly flat along motions that slip no contact, where only the
//! tie-break `ρ` holds `Δq`), and the same RMS slip within
//! [`SLIP_TOLERANCE`] of the larger of the two plus [`SLIP_FLOOR`]. The fast solver's `β` lies in the pyramids (to rounding) and
//! balances the wrench, `f + HΔq + Wβ = 0`, to [`RESIDUAL_TOLERANCE`] of
//! `‖f‖ + Σμ‖F_n‖`. Decisions: with `ε` set to the reference's RMS slip (at
//! least `100 ×` [`SLIP_FLOOR`]) times `1 ± δ`, `δ` log-uniform in 10⁻⁹–10⁻¹, both decide alike outside the band
//! `δ ≤` [`BAND`].

use haptic_core::Vector6;
use haptic_friction::{
    FastPreSlidingSolver, FrictionSolution, FrictionState, PreSlidingParameters,
    ReferencePreSlidingSolver, StaticFrictionSolver,
};
use haptic_testkit::instances::{with_anchor_slips, Instance, InstanceSpec};
use nalgebra::{Vector2, Vector3};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use rayon::prelude::*;

const INSTANCES: u64 = 10_000;
const FIRST_SEED: u64 = 1 << 33;
const MAX_CONTACTS: usize = 300;
const DISPLACEMENT_TOLERANCE: f64 = 1e-4;
const SLIP_TOLERANCE: f64 = 1e-4;
/// Absolute slack of the RMS slip comparison (m), and the smallest `ε` the
/// decisions are compared at: far below any pre-sliding displacement.
const SLIP_FLOOR: f64 = 1e-9;
const RESIDUAL_TOLERANCE: f64 = 1e-9;
const BAND: f64 = 1e-4;

/// `(Δx/L, Δθ)`.
fn scaled(q: &Vector6, length: f64) -> Vector6 {
    Vector6::new(
        q[0] / length,
        q[1] / length,
        q[2] / length,
        q[3],
        q[4],
        q[5],
    )
}

struct Case {
    displacement: f64,
    slip: f64,
    residual: f64,
    outside_pyramid: f64,
    disagree_outside_band: bool,
    disagree_in_band: bool,
    fast_static: bool,
}

fn evaluate(index: u64) -> Case {
    let seed = FIRST_SEED + index;
    let spec = InstanceSpec::mixed(seed, MAX_CONTACTS);
    let mut rng = Pcg64::seed_from_u64(seed.rotate_left(11));
    let problem = with_anchor_slips(Instance::generate(&spec).problem, 10e-6, &mut rng);
    let length = problem
        .contacts
        .iter()
        .map(|c| c.handle.norm())
        .fold(0.0, f64::max);

    let reference = ReferencePreSlidingSolver::default()
        .analyse(&problem)
        .unwrap_or_else(|e| panic!("{spec:?}: {e}"));
    let delta = 10f64.powf(rng.gen_range(-9.0..-1.0));
    let sign = if rng.gen_bool(0.5) { 1.0 } else { -1.0 };
    let epsilon = reference.rms_slip.max(100.0 * SLIP_FLOOR) * (1.0 + sign * delta);
    let params = PreSlidingParameters {
        displacement: epsilon,
        ..PreSlidingParameters::default()
    };
    let reference_static = reference.rms_slip <= epsilon;
    let mut fast = FastPreSlidingSolver::new(MAX_CONTACTS, 8, params);
    let mut solution = FrictionSolution::with_capacity(MAX_CONTACTS);
    fast.solve(&problem, &mut solution)
        .unwrap_or_else(|e| panic!("{spec:?}: {e}"));
    let rms = fast.report().rms_slip;

    let q_ref = scaled(&reference.displacement, length);
    let q_fast = scaled(&solution.displacement, length);
    let displacement = (q_fast - q_ref).norm() / q_ref.norm().max(10e-6 / length);
    let slip = (rms - reference.rms_slip).abs()
        / (rms.max(reference.rms_slip) + SLIP_FLOOR / SLIP_TOLERANCE);

    let mut size = problem.wrench.norm();
    for c in &problem.contacts {
        size += c.friction_limit();
    }
    let mut wrench = problem.wrench + problem.stiffness * solution.displacement;
    let mut outside_pyramid: f64 = 0.0;
    for (c, b) in problem.contacts.iter().zip(&solution.beta) {
        let beta = Vector2::new(b[0], b[1]);
        wrench += c.wrench_basis() * beta;
        let limit = c.friction_limit();
        for side in problem.side_directions() {
            outside_pyramid = outside_pyramid.max(side.dot(&beta) - limit);
        }
    }
    let residual = Vector3::new(wrench[0], wrench[1], wrench[2]).norm()
        + Vector3::new(wrench[3], wrench[4], wrench[5]).norm() / length;
    let fast_static = solution.state == FrictionState::Static;
    let disagree = fast_static != reference_static;
    Case {
        displacement,
        slip,
        residual: residual / size,
        outside_pyramid: outside_pyramid / size,
        disagree_outside_band: disagree && delta > BAND,
        disagree_in_band: disagree && delta <= BAND,
        fast_static,
    }
}

#[test]
fn fast_pre_sliding_solver_matches_clarabel_on_10000_instances() {
    let cases: Vec<Case> = (0..INSTANCES).into_par_iter().map(evaluate).collect();
    let worst = |f: fn(&Case) -> f64| cases.iter().map(f).fold(0.0, f64::max);
    let count = |f: fn(&Case) -> bool| cases.iter().filter(|c| f(c)).count();
    println!(
        "pre-sliding, {INSTANCES} instances: {} static; worst Δq {:.2e}, RMS slip {:.2e}, \
         residual {:.2e}, outside a pyramid {:.2e}; decisions differing in the band {}, \
         outside it {}",
        count(|c| c.fast_static),
        worst(|c| c.displacement),
        worst(|c| c.slip),
        worst(|c| c.residual),
        worst(|c| c.outside_pyramid),
        count(|c| c.disagree_in_band),
        count(|c| c.disagree_outside_band),
    );
    assert!(worst(|c| c.displacement) <= DISPLACEMENT_TOLERANCE);
    assert!(worst(|c| c.slip) <= SLIP_TOLERANCE);
    assert!(worst(|c| c.residual) <= RESIDUAL_TOLERANCE);
    assert!(worst(|c| c.outside_pyramid) <= 1e-12);
    assert_eq!(count(|c| c.disagree_outside_band), 0);
}
