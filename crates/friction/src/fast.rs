//! The real-time solver: the LP of Zhao, Li & Barbič (eqs 32–37) as a
//! membership test in a Minkowski sum of polygons, decided by Wolfe's
//! minimum-norm-point iteration, allocation-free after construction.
//!
//! **Reduction.** Eqs 32–34 give `Δq = M̄⁻¹Kᵀλ` (`K = −H`) with `λ ∈ null(Wᵀ)`;
//! substituting into eqs 35–36 leaves `Wβ = Sλ − f`, `S = K M̄⁻¹ Kᵀ`. With `U`
//! an orthonormal basis of `null(Wᵀ)` and `λ = Uy`, multiplying by `Uᵀ` kills
//! `Wβ`, so `y = (UᵀSU)⁻¹Uᵀf` is unique and the friction must supply
//! `g = SUy − f ∈ range(W)`. When `rank W = 6`, `U` is empty: `λ = 0`,
//! `Δq = 0`, `g = −f`. The LP is feasible iff `g ∈ Z = Σ_i W_i P_i`, with
//! `P_i` the ℓ-gon of eq 13 (vertices at angles `2πm/ℓ`, radius
//! `μ_i‖F_n^i‖ / cos(π/ℓ)`, the theorem of eqs 14–26).
//!
//! **Membership.** Wolfe's algorithm minimises `‖z − g‖` over `z ∈ Z` with only
//! the support function `h_Z(d) = Σ_i max_m ⟨W_iᵀd, v_{i,m}⟩` (O(kℓ)), keeping
//! the iterate as a convex combination of at most `rank W + 1 ≤ 7` support
//! points ("atoms"); each atom remembers the vertex it chose at every contact,
//! so `β` is the same convex combination of those vertices and lies in the
//! pyramids exactly. The first atom is `β = 0`.
//!
//! **Units.** Lengths are divided by `L = max_i ‖r_i‖`, torques by `L`
//! (every wrench component is then a force), and forces by
//! `s = max(‖f‖, ‖g‖, max_i μ_i‖F_n^i‖)` after that; all tolerances are
//! relative to these.

use haptic_core::{Matrix6, Vector6};
use nalgebra::SymmetricEigen;

use crate::problem::{
    FrictionSolution, FrictionState, SolverError, StaticFrictionProblem, StaticFrictionSolver,
};
use crate::wolfe::{End, PolygonSum, Query};

/// Tolerances and limits, all relative to the scales `L` and `s` above.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FastSolverParameters {
    /// Static is certified when `‖Wβ − g‖ ≤ tolerance · s`; sliding when a
    /// direction `d` separates `g` from `Z` by more than `tolerance · s`. The
    /// default 1e-9 sits far above rounding (≈ 1e-15 · k) and far below any
    /// physically meaningful force.
    pub tolerance: f64,
    /// At the iteration cap, or when the iteration stalls at working
    /// precision, the object is static iff `‖Wβ − g‖ ≤ band · s`: friction
    /// then balances the wrench up to a relative error `band`. 1e-6 by
    /// default, at the level of a general LP solver's feasibility tolerance.
    pub band: f64,
    /// Major iterations (support-function evaluations, O(kℓ) each) per solve:
    /// the worst-case cost bound.
    pub max_iterations: u32,
    /// Singular values of `W` (length-scaled) below `rank_tolerance` times
    /// the largest count as zero: such wrench directions are balanced by the
    /// displacement `Δq` (eqs 32–34), not by friction. 1e-6 by default, above
    /// the noise of normals computed in single precision.
    pub rank_tolerance: f64,
}

impl Default for FastSolverParameters {
    fn default() -> Self {
        Self {
            tolerance: 1e-9,
            band: 1e-6,
            max_iterations: 200,
            rank_tolerance: 1e-6,
        }
    }
}

/// How the membership test `g ∈ Z` ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MembershipStatus {
    /// No contacts: nothing to test.
    #[default]
    NoContact,
    /// Certified static: `‖Wβ − g‖ ≤ tolerance · s` with every `β_i ∈ P_i`.
    Contained,
    /// Certified sliding: `⟨d, g⟩ − h_Z(d) > tolerance · s` for the reported
    /// unit direction `d` (in length-scaled units).
    Separated,
    /// Undecided at the cap or at working precision; static because the
    /// residual is within the band.
    BandContained,
    /// Undecided at the cap or at working precision; sliding because the
    /// residual exceeds the band.
    BandSeparated,
}

/// What the last [`FastStaticFrictionSolver::solve`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FastSolveReport {
    pub status: MembershipStatus,
    /// Major iterations (support-function evaluations).
    pub iterations: u32,
    /// Numerical rank of `W` (0 without contacts).
    pub rank: usize,
    /// `g = −f − HΔq` (N, N·m): the wrench friction must supply, with `Δq`
    /// of eqs 32–34.
    pub target: Vector6,
    /// `L` (m).
    pub length_scale: f64,
    /// `s` (N).
    pub force_scale: f64,
    /// `‖Wβ − g‖ / s` of the final iterate, torques divided by `L`.
    pub residual: f64,
    /// The best certified lower bound on `dist(g, Z) / s` (negative when none).
    pub separation: f64,
    /// When sliding, `d = D d̃` (`d̃` a unit vector in length-scaled units, so
    /// 1 on forces and 1/L on torques) with `⟨d, g⟩ > max_{β ∈ ΠP_i} ⟨d, Wβ⟩`
    /// when certified; zero when static.
    pub separating_direction: Vector6,
}

/// How the length scale `L` turns the problem's quantities into forces.
pub(crate) struct LengthScale {
    pub(crate) length: f64,
    /// `D = diag(1, 1, 1, 1/L, 1/L, 1/L)`: wrench `(F, τ)` → `(F, τ/L)`.
    pub(crate) wrench: Vector6,
    /// `E⁻¹ = diag(L, L, L, 1, 1, 1)`: scaled displacement `(Δx/L, Δθ)` → `Δq`.
    pub(crate) displacement: Vector6,
}

impl LengthScale {
    pub(crate) fn new(problem: &StaticFrictionProblem) -> Self {
        let max = problem
            .contacts
            .iter()
            .map(|c| c.handle.norm())
            .fold(0.0, f64::max);
        let length = if max > 0.0 && max.is_finite() {
            max
        } else {
            1.0
        };
        let inv = 1.0 / length;
        Self {
            length,
            wrench: Vector6::new(1.0, 1.0, 1.0, inv, inv, inv),
            displacement: Vector6::new(length, length, length, 1.0, 1.0, 1.0),
        }
    }

    /// `D H E⁻¹`: the stiffness between scaled wrench and scaled displacement.
    pub(crate) fn stiffness(&self, h: &Matrix6) -> Matrix6 {
        Matrix6::from_fn(|i, j| h[(i, j)] * self.wrench[i] * self.displacement[j])
    }

    /// `E⁻¹ M̄ E⁻¹`: the same kinetic energy (eq 27) in scaled displacement.
    pub(crate) fn mass(&self, m: &Matrix6) -> Matrix6 {
        Matrix6::from_fn(|i, j| m[(i, j)] * self.displacement[i] * self.displacement[j])
    }
}

/// Static friction in two steps: a 6×6 reduction, then a
/// closest-point iteration on the Minkowski sum of the contacts' polygons.
/// All buffers are sized in [`new`](Self::new); `solve` never allocates
/// (except to describe invalid input in an error).
pub struct FastStaticFrictionSolver {
    params: FastSolverParameters,
    /// `Z = Σ_i W̃_i P_i`: `W̃_i` the tangential wrench bases, torques divided
    /// by `L` and projected onto `range(W)` when `rank W < 6`; vertex radii
    /// `μ_i‖F_n^i‖ / (s cos(π/ℓ))`.
    sum: PolygonSum,
    report: FastSolveReport,
}

impl FastStaticFrictionSolver {
    /// A solver for up to `max_contacts` contacts and `max_sides`-sided pyramids.
    pub fn new(max_contacts: usize, max_sides: usize) -> Self {
        Self::with_parameters(max_contacts, max_sides, FastSolverParameters::default())
    }

    pub fn with_parameters(
        max_contacts: usize,
        max_sides: usize,
        params: FastSolverParameters,
    ) -> Self {
        Self {
            params,
            sum: PolygonSum::new(max_contacts, max_sides),
            report: FastSolveReport::default(),
        }
    }

    pub fn parameters(&self) -> &FastSolverParameters {
        &self.params
    }

    /// Status, scales, residual and certificate of the last solve.
    pub fn report(&self) -> &FastSolveReport {
        &self.report
    }
}

impl StaticFrictionSolver for FastStaticFrictionSolver {
    fn solve(
        &mut self,
        problem: &StaticFrictionProblem,
        solution: &mut FrictionSolution,
    ) -> Result<(), SolverError> {
        let k = problem.contacts.len();
        self.sum.prepare(k, problem.pyramid_sides)?;
        let (scale, f, h) = scaled(problem);
        self.report = FastSolveReport {
            length_scale: scale.length,
            ..FastSolveReport::default()
        };
        if start(problem, solution, &scale, &f, &h)? {
            return Ok(());
        }

        // W̃ W̃ᵀ: its eigenvectors span range(W) and null(Wᵀ).
        let mut gram = Matrix6::zeros();
        let mut largest_limit: f64 = 0.0;
        for ((contact, w), radius) in problem
            .contacts
            .iter()
            .zip(&mut self.sum.bases)
            .zip(&mut self.sum.radii)
        {
            *w = contact.wrench_basis();
            for mut row in w.fixed_rows_mut::<3>(3).column_iter_mut() {
                row /= scale.length;
            }
            gram += *w * w.transpose();
            *radius = contact.friction_limit().max(0.0);
            largest_limit = largest_limit.max(*radius);
        }
        let (rank, projector, mut g, displacement) = reduce(
            &gram,
            &f,
            &h,
            &scale.mass(&problem.mass),
            self.params.rank_tolerance,
        )?;
        self.report.rank = rank;
        if rank < 6 {
            for w in &mut self.sum.bases[..k] {
                *w = projector * *w;
            }
        }

        let force = f.norm().max(g.norm()).max(largest_limit);
        if !force.is_finite() {
            return Err(SolverError::Backend("non-finite problem data".into()));
        }
        self.report.target = g.component_div(&scale.wrench);
        self.report.force_scale = force;
        self.report.separation = f64::NEG_INFINITY;
        if force == 0.0 {
            self.report.status = MembershipStatus::Contained;
            solution.state = FrictionState::Static;
            solution.displacement = displacement.component_mul(&scale.displacement);
            solution.beta.resize(k, [0.0; 2]);
            return Ok(());
        }
        g /= force;
        let vertex = 1.0 / (force * (std::f64::consts::PI / self.sum.sides() as f64).cos());
        self.sum.radii[..k].iter_mut().for_each(|r| *r *= vertex);
        let p = self.params;
        let outcome = self.sum.nearest(&Query {
            k,
            rank,
            target: &g,
            tolerance: p.tolerance,
            max_iterations: p.max_iterations,
            stop_on_separation: true,
            warm: false,
            deadline: problem.deadline,
        });
        let status = match outcome.end {
            End::Reached => MembershipStatus::Contained,
            End::Separated => MembershipStatus::Separated,
            End::Optimal | End::Stalled | End::Capped | End::OutOfTime
                if outcome.residual <= p.band =>
            {
                MembershipStatus::BandContained
            }
            End::Optimal | End::Stalled | End::Capped | End::OutOfTime => {
                MembershipStatus::BandSeparated
            }
        };
        self.report.status = status;
        self.report.iterations = outcome.iterations;
        self.report.residual = outcome.residual;
        self.report.separation = outcome.separation;
        solution.iterations = outcome.iterations;
        solution.out_of_time = outcome.end == End::OutOfTime;
        solution.decided_in_band = matches!(
            status,
            MembershipStatus::BandContained | MembershipStatus::BandSeparated
        );

        if matches!(
            status,
            MembershipStatus::Contained | MembershipStatus::BandContained
        ) {
            solution.state = FrictionState::Static;
            solution.displacement = displacement.component_mul(&scale.displacement);
            self.sum
                .write_beta(&outcome.atoms, k, force, &mut solution.beta);
        } else {
            // d̃ = −P x exactly in range(W), so ⟨d̃, W̃_i β_i⟩ is the same
            // with or without the projection of the bases.
            let d = -(projector * outcome.atoms.iterate());
            self.report.separating_direction = (d / d.norm()).component_mul(&scale.wrench);
            solution.state = FrictionState::Sliding;
            solution.displacement = frictionless(&h, &f, &scale)?;
            solution.beta.resize(k, [0.0; 2]);
        }
        Ok(())
    }
}

/// Eqs 32–36 reduced (module docs) in length-scaled units, from the Gram
/// matrix `G = W̃W̃ᵀ`: `(rank W, P, g, Δq)` with `P` the orthogonal projector
/// onto `range(W)`, `g = P(Sλ − f)` and `Δq = M̄⁻¹Kᵀλ`, `λ = Uy`.
fn reduce(
    gram: &Matrix6,
    f: &Vector6,
    h: &Matrix6,
    mass: &Matrix6,
    rank_tolerance: f64,
) -> Result<(usize, Matrix6, Vector6, Vector6), SolverError> {
    let full = (6, Matrix6::identity(), -f, Vector6::zeros());
    // A sufficient test for rank 6 that skips the eigendecomposition:
    // λ_min(G) ≥ 1/‖G⁻¹‖_F and λ_max(G) ≤ tr G.
    let cutoff = rank_tolerance * rank_tolerance;
    if gram
        .cholesky()
        .is_some_and(|c| c.inverse().norm() * cutoff * gram.trace() < 1.0)
    {
        return Ok(full);
    }
    let eigen = SymmetricEigen::new(*gram);
    let largest = eigen.eigenvalues.max();
    let null = eigen.eigenvalues.map(|e| e <= cutoff * largest);
    let rank = null.iter().filter(|n| !**n).count();
    if rank == 6 {
        return Ok(full);
    }
    let v = &eigen.eigenvectors;
    let mass = mass
        .cholesky()
        .ok_or_else(|| SolverError::Backend("M̄ is not positive definite".into()))?;
    let k_t = -h.transpose();
    let m_inv_k_t = mass.solve(&k_t);
    let s = k_t.transpose() * m_inv_k_t;
    // (UᵀSU) y = Uᵀ f, written in the eigenbasis with identity rows for the
    // range directions so that it stays 6×6.
    let mut reduced = v.transpose() * s * v;
    let mut rhs = v.transpose() * f;
    for i in (0..6).filter(|&i| !null[i]) {
        reduced.row_mut(i).fill(0.0);
        reduced.column_mut(i).fill(0.0);
        reduced[(i, i)] = 1.0;
        rhs[i] = 0.0;
    }
    let y = reduced
        .cholesky()
        .ok_or(SolverError::SingularStiffness)?
        .solve(&rhs);
    let lambda = v * y;
    let range = null.map(|n| if n { 0.0 } else { 1.0 });
    let projector = v * Matrix6::from_diagonal(&range) * v.transpose();
    Ok((
        rank,
        projector,
        projector * (s * lambda - f),
        m_inv_k_t * lambda,
    ))
}

/// `L`, `f̃ = D f` and `H̃ = D H E⁻¹`: `problem` in length-scaled units.
pub(crate) fn scaled(problem: &StaticFrictionProblem) -> (LengthScale, Vector6, Matrix6) {
    let scale = LengthScale::new(problem);
    let f = problem.wrench.component_mul(&scale.wrench);
    let h = scale.stiffness(&problem.stiffness);
    (scale, f, h)
}

/// Resets `solution` for a solve of `problem`; without contacts writes the
/// free, frictionless step and returns `true` (nothing left to solve).
pub(crate) fn start(
    problem: &StaticFrictionProblem,
    solution: &mut FrictionSolution,
    scale: &LengthScale,
    f: &Vector6,
    h: &Matrix6,
) -> Result<bool, SolverError> {
    solution.reset();
    if !problem.contacts.is_empty() {
        return Ok(false);
    }
    solution.state = FrictionState::Free;
    solution.displacement = frictionless(h, f, scale)?;
    Ok(true)
}

/// `Δq = −H⁻¹f` (eqs 7–8 with `β = 0`), solved in scaled units.
pub(crate) fn frictionless(
    h: &Matrix6,
    f: &Vector6,
    scale: &LengthScale,
) -> Result<Vector6, SolverError> {
    h.lu()
        .solve(&-f)
        .filter(|q| q.iter().all(|v| v.is_finite()))
        .map(|q| q.component_mul(&scale.displacement))
        .ok_or(SolverError::SingularStiffness)
}
