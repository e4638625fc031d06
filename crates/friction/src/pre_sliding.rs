//! Static friction with bounded pre-sliding: a decision that is continuous in
//! the geometry and renders Coulomb's law on real contact (docs/rendering.md,
//! "Static friction with bounded pre-sliding").
//!
//! **Why not eqs 32–37 alone.** The LP of Zhao, Li & Barbič asks friction to balance
//! every wrench direction in `range(W)` with `Δq` restricted to
//! `M̄⁻¹Kᵀnull(Wᵀ)`. Contact points that are not exactly coplanar (any tilt,
//! any sampled field) give `W` full rank, so `Δq = 0`: the tool may not tilt,
//! its normal forces cannot shift towards the leading edge, and friction
//! would have to cancel the push's torque through lever arms as short as the
//! spread of penetration depths. The LP then reports sliding far below `μ`.
//!
//! **The model.** Each contact keeps a stick anchor, placed where the
//! tool's material point was when the contact last stuck, and
//! `s_i` is that point's tangential offset from it. A cycle's displacement
//! `Δq` and friction forces `β_i` in the pyramids of eq 13 must balance the
//! wrench to first order, `f + HΔq + Wβ = 0` (eqs 35–36). Among these
//! equilibria the solver takes the one that slips the contacts least,
//!
//! ```text
//! minimise  J(Δq) = Σ_i w_i ‖W_iᵀΔq‖² + ρ L² ‖(Δx/L, Δθ)‖²
//! subject to  f + HΔq + Wβ = 0,  β_i ∈ P_i,
//! ```
//!
//! with load weights `w_i = ‖F_n^i‖ / Σ_j ‖F_n^j‖` (`W_iᵀΔq` is contact `i`'s
//! tangential slip, eq 30's columns) and a tie-breaking `ρ = 10⁻⁸`. The
//! object is **static** iff that equilibrium keeps the load-weighted RMS slip
//! from the anchors, `√(Σ w_i ‖s_i + W_iᵀΔq‖²)`, within the pre-sliding
//! displacement `ε`; otherwise it **slides** to that same equilibrium
//! (friction at its limit: the kinetic Coulomb force) and the render cycle
//! re-anchors its contacts. When friction can balance the wrench in place,
//! `Δq = 0`: a held load does not creep, and friction never pulls the object
//! back towards its anchors, which would spend its capacity. Motions that do
//! not slip (pressing, tilting about the contact plane) cost nothing, so the
//! tool tilts and its load shifts to the leading edge; a tilt that slips
//! points by the tiny spread of their heights costs almost nothing, so the
//! decision varies continuously with the geometry. Slip accumulates only
//! while the load sits at the cone's edge, and `ε` bounds it.
//!
//! **Solver.** With `K = −H` invertible, `Δq = K⁻¹(f + Wβ)`, so in the
//! length-scaled displacement `q̃ = (Δx/L, Δθ)` and with `G = LLᵀ` the
//! Cholesky factor of `J`'s Hessian, `y = Lᵀq̃` ranges over
//! `a + Σ_i B_i P_i` with `a = LᵀK̃⁻¹f̃`, `B_i = LᵀK̃⁻¹W̃_i`: the minimiser is
//! the minimum-norm point of a Minkowski sum of polygons, which Wolfe's
//! iteration ([`crate::wolfe`]) finds exactly, and `β` comes with it.
//! Everything is sized at construction: `solve` never allocates.

use haptic_core::{Matrix6, Vector6};
use nalgebra::{Matrix6x2, Vector2};

use crate::fast::{scaled, start};
use crate::problem::{
    FrictionSolution, FrictionState, SolverError, StaticFrictionProblem, StaticFrictionSolver,
};
use crate::wolfe::{End, PolygonSum, Query};

/// The tie-breaking weight `ρ` of `J` on the length-scaled displacement.
pub(crate) const TIE_BREAK: f64 = 1e-8;

/// Parameters of the pre-sliding model and its real-time solver.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PreSlidingParameters {
    /// `ε`, the pre-sliding displacement (m): the largest load-weighted RMS
    /// slip of the contacts from their stick anchors that static friction
    /// allows. Default 5 µm.
    pub displacement: f64,
    /// Wolfe's iteration stops once `‖y‖ ≤ tolerance · ε` (friction balances
    /// the wrench in place). Default 1e-9.
    pub tolerance: f64,
    /// Support-function evaluations per solve (O(kℓ) each). Default 200.
    pub max_iterations: u32,
}

impl Default for PreSlidingParameters {
    fn default() -> Self {
        Self {
            // `[rendering].pre_sliding_displacement_m`'s default.
            displacement: haptic_schema::rendering::DEFAULT_PRE_SLIDING_DISPLACEMENT_M,
            tolerance: 1e-9,
            max_iterations: 200,
        }
    }
}

/// What the last [`FastPreSlidingSolver::solve`] found.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PreSlidingReport {
    /// Load-weighted RMS slip from the anchors at the chosen equilibrium (m).
    pub rms_slip: f64,
    /// Support-function evaluations.
    pub iterations: u32,
    /// Wolfe's optimality test held (or the anchors themselves balance the
    /// wrench): the equilibrium is the minimiser of `J`.
    pub(crate) optimal: bool,
    /// `L` (m).
    pub length_scale: f64,
}

/// Each contact's terms of `J` in length-scaled units (module docs): `W̃_i`
/// (torque rows divided by `L`), the anchor offset `s̃_i = s_i / L` in the
/// contact's tangent basis and the load weight `w_i`. Sized once; filling
/// never allocates within that size.
#[derive(Clone, Debug, Default)]
pub(crate) struct SlipTerms {
    pub(crate) wrench: Vec<Matrix6x2<f64>>,
    slip: Vec<Vector2<f64>>,
    weight: Vec<f64>,
}

impl SlipTerms {
    pub(crate) fn with_capacity(contacts: usize) -> Self {
        Self {
            wrench: Vec::with_capacity(contacts),
            slip: Vec::with_capacity(contacts),
            weight: Vec::with_capacity(contacts),
        }
    }

    /// The terms of `problem`'s contacts, and `G = Σ w_i W̃_iW̃_iᵀ + ρI`, the
    /// Hessian of `J / L² = q̃ᵀGq̃`.
    pub(crate) fn fill(&mut self, problem: &StaticFrictionProblem, length: f64) -> Matrix6 {
        let total: f64 = problem
            .contacts
            .iter()
            .map(|c| c.normal_force.max(0.0))
            .sum();
        let k = problem.contacts.len() as f64;
        self.wrench.clear();
        self.slip.clear();
        self.weight.clear();
        let mut hessian = Matrix6::identity() * TIE_BREAK;
        let per_total = 1.0 / total;
        let per_length = 1.0 / length;
        for contact in &problem.contacts {
            let weight = if total > 0.0 {
                contact.normal_force.max(0.0) * per_total
            } else {
                1.0 / k
            };
            let (u, v) = contact.tangents();
            let mut w = contact.wrench_basis_of(&u, &v);
            for mut column in w.fixed_rows_mut::<3>(3).column_iter_mut() {
                column *= per_length;
            }
            // w wᵀ weight, upper triangle only: it is symmetric.
            for j in 0..6 {
                for i in 0..=j {
                    hessian[(i, j)] += (w[(i, 0)] * w[(j, 0)] + w[(i, 1)] * w[(j, 1)]) * weight;
                }
            }
            self.wrench.push(w);
            self.slip
                .push(Vector2::new(u.dot(&contact.slip), v.dot(&contact.slip)) * per_length);
            self.weight.push(weight);
        }
        hessian.fill_lower_triangle_with_upper_triangle();
        hessian
    }

    /// `√(Σ w_i ‖s̃_i + W̃_iᵀq̃‖²) · L`, the RMS slip (m) from the anchors
    /// after `Δq = E⁻¹q̃`.
    pub(crate) fn rms_slip(&self, length: f64, q: &Vector6) -> f64 {
        let sum: f64 = self
            .wrench
            .iter()
            .zip(&self.slip)
            .zip(&self.weight)
            .map(|((w, s), weight)| weight * (s + w.tr_mul(q)).norm_squared())
            .sum();
        sum.sqrt() * length
    }
}

/// The pre-sliding model's real-time solver (module docs).
pub struct FastPreSlidingSolver {
    params: PreSlidingParameters,
    /// `Σ_i B_i P_i`, `B_i` scaled by `s/ε̃` and the radii divided by `s`.
    sum: PolygonSum,
    terms: SlipTerms,
    report: PreSlidingReport,
}

impl FastPreSlidingSolver {
    /// A solver for up to `max_contacts` contacts and `max_sides`-sided pyramids.
    pub fn new(max_contacts: usize, max_sides: usize, params: PreSlidingParameters) -> Self {
        Self {
            params,
            sum: PolygonSum::new(max_contacts, max_sides),
            terms: SlipTerms::with_capacity(max_contacts),
            report: PreSlidingReport::default(),
        }
    }

    pub fn parameters(&self) -> &PreSlidingParameters {
        &self.params
    }

    /// What the last solve found.
    pub fn report(&self) -> &PreSlidingReport {
        &self.report
    }
}

impl StaticFrictionSolver for FastPreSlidingSolver {
    fn solve(
        &mut self,
        problem: &StaticFrictionProblem,
        solution: &mut FrictionSolution,
    ) -> Result<(), SolverError> {
        let k = problem.contacts.len();
        self.sum.prepare(k, problem.pyramid_sides)?;
        let (scale, f, h) = scaled(problem);
        let length = scale.length;
        self.report = PreSlidingReport {
            length_scale: length,
            ..PreSlidingReport::default()
        };
        if start(problem, solution, &scale, &f, &h)? {
            return Ok(());
        }
        let epsilon = self.params.displacement / length;
        if !(epsilon > 0.0 && epsilon.is_finite()) {
            return Err(SolverError::Backend(format!(
                "pre-sliding displacement {} m must be positive",
                self.params.displacement
            )));
        }

        // G = LLᵀ and J/L² = ‖Lᵀq̃‖².
        let factor = self
            .terms
            .fill(problem, length)
            .cholesky()
            .ok_or_else(|| SolverError::Backend("non-finite problem data".into()))?
            .l();
        let compliance = (-h).try_inverse().ok_or(SolverError::SingularStiffness)?;
        let mut force: f64 = f.norm();
        for (contact, radius) in problem.contacts.iter().zip(&mut self.sum.radii) {
            *radius = contact.friction_limit().max(0.0);
            force = force.max(*radius);
        }
        if !force.is_finite() || !factor.iter().all(|v| v.is_finite()) {
            return Err(SolverError::Backend("non-finite problem data".into()));
        }
        let force = if force > 0.0 { force } else { 1.0 };
        // y/ε̃ = Lᵀq̃/ε̃ over a + Σ B_i β_i/s, B_i = M W̃_i with
        // M = LᵀK̃⁻¹ s/ε̃ applied by the iteration.
        let map = factor.transpose() * compliance / epsilon;
        let target = -(map * f);
        self.sum.image = Some(map * force);
        let vertex = 1.0 / (force * (std::f64::consts::PI / problem.pyramid_sides as f64).cos());
        self.sum.bases[..k].copy_from_slice(&self.terms.wrench);
        for radius in &mut self.sum.radii[..k] {
            *radius *= vertex;
        }
        let p = self.params;
        let outcome = self.sum.nearest(&Query {
            k,
            rank: 6,
            target: &target,
            tolerance: p.tolerance,
            max_iterations: p.max_iterations,
            stop_on_separation: false,
            warm: true,
            deadline: problem.deadline,
        });
        let y = outcome.atoms.iterate();
        let q = factor
            .transpose()
            .solve_upper_triangular(&(y * epsilon))
            .ok_or(SolverError::SingularStiffness)?;
        let rms = self.terms.rms_slip(length, &q);
        let optimal = matches!(outcome.end, End::Reached | End::Optimal);
        let holds = rms <= self.params.displacement;
        self.report.rms_slip = rms;
        self.report.iterations = outcome.iterations;
        self.report.optimal = optimal;

        solution.state = if holds {
            FrictionState::Static
        } else {
            FrictionState::Sliding
        };
        // An iterate is always an equilibrium, so a slip within ε certifies
        // static; a larger one is certain only at the optimum.
        solution.decided_in_band = !holds && !optimal;
        solution.iterations = outcome.iterations;
        solution.slip = rms;
        solution.held_in_place = outcome.end == End::Reached;
        solution.out_of_time = outcome.end == End::OutOfTime;
        solution.displacement = q.component_mul(&scale.displacement);
        self.sum
            .write_beta(&outcome.atoms, k, force, &mut solution.beta);
        if !solution.displacement.iter().all(|v| v.is_finite()) {
            return Err(SolverError::Backend("non-finite displacement".into()));
        }
        Ok(())
    }
}
