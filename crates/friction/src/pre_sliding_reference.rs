//! The pre-sliding model's quadratic program posed to clarabel directly:
//! general, slow, and the ground truth [`crate::FastPreSlidingSolver`] is
//! tested against.
//!
//! Variables `x = (β/F₀, u, y)` with `F₀ = Σ‖F_n^i‖` and `u = q̃/σ` the
//! length-scaled displacement `q̃ = (Δx/L, Δθ)` in units of `σ`, the value of
//! `‖y‖` at `β = 0` (which bounds the optimum's), so that every variable is
//! of order one:
//!
//! ```text
//! minimise   ‖y‖²,  y = Lᵀu                       (J/L² of the module docs / σ²,
//!                                                  G = LLᵀ)
//! subject to f̃/F₀ + (σ/F₀) H̃ u + W̃ β/F₀ = 0      (eqs 35–36, rows · D/F₀)
//!            ⟨(cos θ_j, sin θ_j), β_i⟩ ≤ μ_i‖F_n^i‖   (eq 37)
//! ```

use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, SolverStatus, SupportedConeT,
};
use haptic_core::Vector6;

use crate::fast::scaled;
use crate::pre_sliding::{PreSlidingParameters, SlipTerms};
use crate::problem::{
    FrictionSolution, FrictionState, SolverError, StaticFrictionProblem, StaticFrictionSolver,
};

/// What [`ReferencePreSlidingSolver::analyse`] found, in SI units.
#[derive(Clone, Debug, PartialEq)]
pub struct PreSlidingOutcome {
    /// The RMS slip of the optimum is within `ε`.
    pub static_friction: bool,
    /// Load-weighted RMS slip from the anchors at the optimum (m).
    pub rms_slip: f64,
    /// `Δq` at the optimum (m, rad).
    pub displacement: Vector6,
    /// `β` at the optimum (N).
    pub beta: Vec<[f64; 2]>,
    /// Interior-point iterations.
    pub iterations: u32,
    /// No contact slips at the optimum (`J ≤ (10⁻⁹ ε)²`).
    pub held_in_place: bool,
}

/// Solves the pre-sliding QP with clarabel. Allocates: for tests and
/// offline comparison only.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReferencePreSlidingSolver {
    pub(crate) params: PreSlidingParameters,
}

impl ReferencePreSlidingSolver {
    pub fn new(params: PreSlidingParameters) -> Self {
        Self { params }
    }

    /// The optimum of the QP; `problem` must have at least one contact.
    pub fn analyse(
        &self,
        problem: &StaticFrictionProblem,
    ) -> Result<PreSlidingOutcome, SolverError> {
        let k = problem.contacts.len();
        let (scale, scaled_wrench, stiffness) = scaled(problem);
        let length = scale.length;
        let mut terms = SlipTerms::with_capacity(k);
        let hessian = terms.fill(problem, length);
        let unit = Some(problem.contacts.iter().map(|c| c.normal_force).sum::<f64>())
            .filter(|f| *f > 0.0 && f.is_finite())
            .unwrap_or(1.0);
        let f = scaled_wrench / unit;
        // y = Lᵀu with G = LLᵀ: the objective becomes ‖y‖², which clarabel
        // meets far more accurately than the nearly singular G.
        let factor = hessian
            .cholesky()
            .ok_or_else(|| SolverError::Backend("non-finite problem data".into()))?
            .l();
        // The unit of u and y: ‖y‖ at β = 0 bounds the optimum's.
        let free = stiffness
            .lu()
            .solve(&-scaled_wrench)
            .ok_or(SolverError::SingularStiffness)?;
        let unit_slip = Some((factor.transpose() * free).norm())
            .filter(|u| *u > 0.0 && u.is_finite())
            .unwrap_or(1.0);
        let h = stiffness * (unit_slip / unit);
        let (nb, n) = (2 * k, 2 * k + 12);
        let p = CscMatrix::new_from_triplets(
            n,
            n,
            (nb + 6..n).collect(),
            (nb + 6..n).collect(),
            vec![2.0; 6],
        );
        let q = vec![0.0; n];

        let sides: Vec<_> = problem.side_directions().collect();
        let rows = 12 + k * sides.len();
        let (mut ai, mut aj, mut av) = (Vec::new(), Vec::new(), Vec::new());
        let mut b = Vec::with_capacity(rows);
        for row in 0..6 {
            for (i, w) in terms.wrench.iter().enumerate() {
                for c in 0..2 {
                    ai.push(row);
                    aj.push(2 * i + c);
                    av.push(w[(row, c)]);
                }
            }
            for c in 0..6 {
                ai.push(row);
                aj.push(nb + c);
                av.push(h[(row, c)]);
            }
            b.push(-f[row]);
        }
        // Lᵀu − y = 0.
        for row in 0..6 {
            for c in row..6 {
                ai.push(6 + row);
                aj.push(nb + c);
                av.push(factor[(c, row)]);
            }
            ai.push(6 + row);
            aj.push(nb + 6 + row);
            av.push(-1.0);
            b.push(0.0);
        }
        for (i, contact) in problem.contacts.iter().enumerate() {
            for side in &sides {
                ai.extend([b.len(), b.len()]);
                aj.extend([2 * i, 2 * i + 1]);
                av.extend([side.x, side.y]);
                b.push(contact.friction_limit().max(0.0) / unit);
            }
        }
        let a = CscMatrix::new_from_triplets(rows, n, ai, aj, av);
        let cones = [
            SupportedConeT::ZeroConeT(12),
            SupportedConeT::NonnegativeConeT(rows - 12),
        ];
        let settings = DefaultSettingsBuilder::default()
            .verbose(false)
            .tol_gap_abs(1e-12)
            .tol_gap_rel(1e-12)
            .tol_feas(1e-12)
            .max_iter(400)
            .build()
            .map_err(|e| SolverError::Backend(e.to_string()))?;
        let mut solver = DefaultSolver::new(&p, &q, &a, &b, &cones, settings)
            .map_err(|e| SolverError::Backend(e.to_string()))?;
        solver.solve();
        let iterations = solver.solution.iterations;
        match solver.solution.status {
            SolverStatus::Solved | SolverStatus::AlmostSolved => {}
            SolverStatus::MaxIterations => return Err(SolverError::NotConverged { iterations }),
            status => return Err(SolverError::Backend(format!("clarabel: {status:?}"))),
        }
        let x = &solver.solution.x;
        let q_scaled = Vector6::from_column_slice(&x[nb..nb + 6]) * unit_slip;
        let rms_slip = terms.rms_slip(length, &q_scaled);
        let slip_increment = q_scaled.dot(&(hessian * q_scaled)).max(0.0).sqrt() * length;
        Ok(PreSlidingOutcome {
            static_friction: rms_slip <= self.params.displacement,
            rms_slip,
            displacement: q_scaled.component_mul(&scale.displacement),
            beta: (0..k)
                .map(|i| [x[2 * i] * unit, x[2 * i + 1] * unit])
                .collect(),
            iterations,
            held_in_place: slip_increment <= 1e-9 * self.params.displacement,
        })
    }
}

impl StaticFrictionSolver for ReferencePreSlidingSolver {
    fn solve(
        &mut self,
        problem: &StaticFrictionProblem,
        solution: &mut FrictionSolution,
    ) -> Result<(), SolverError> {
        solution.reset();
        if problem.contacts.is_empty() {
            return crate::reference::write_frictionless(problem, solution, FrictionState::Free, 0);
        }
        let outcome = self.analyse(problem)?;
        solution.state = if outcome.static_friction {
            FrictionState::Static
        } else {
            FrictionState::Sliding
        };
        solution.beta.extend_from_slice(&outcome.beta);
        solution.displacement = outcome.displacement;
        solution.iterations = outcome.iterations;
        solution.slip = outcome.rms_slip;
        solution.held_in_place = outcome.held_in_place;
        Ok(())
    }
}
