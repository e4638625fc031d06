//! The quadratic program of eqs 28–31, solved directly with clarabel, and the
//! Zhao, Li & Barbič's definition of static friction (§4, the "Definition" before the
//! theorem): the object is static iff a minimiser of eqs 28–31 also minimises
//! eqs 28–30, i.e. dropping the pyramid (eq 31) does not change the optimum.
//!
//! The problem is solved in the scaled units of the reference module:
//! minimise `½Δq̃ᵀM̃Δq̃` subject to `f̃ + H̃Δq̃ + W̃β̃ = 0` (eqs 29–30) and the
//! pyramid rows (eq 31). The relaxed problem (no eq 31) has an affine feasible
//! set in `Δq` and a strictly convex objective, so its minimiser `Δq*` is
//! unique and, for every `Δq` feasible for it, `½‖Δq‖²_M̄ − ½‖Δq*‖²_M̄ =
//! ½‖Δq − Δq*‖²_M̄`. Equal optimal objectives therefore mean `Δq_QP = Δq*`;
//! [`QpSolver`] tests the latter, the square root of the objective gap, which
//! resolves a violation `ε` of the friction limit as `O(ε)` rather than `O(ε²)`.

use haptic_core::Vector6;
use std::time::{Duration, Instant};

use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, SolverStatus, SupportedConeT,
};

use crate::problem::{
    FrictionSolution, FrictionState, SolverError, StaticFrictionProblem, StaticFrictionSolver,
};
use crate::reference::{write_frictionless, Scaled};

/// Solves the QP of eqs 28–31 and decides static friction by the paper's
/// definition.
#[derive(Clone, Copy, Debug)]
pub struct QpSolver {
    /// Static iff `‖Δq_QP − Δq*‖_M̃ ≤ tolerance · max(1, ‖Δq_free‖_M̃)` in the
    /// scaled units, `Δq_free` being the frictionless displacement.
    pub tolerance: f64,
}

impl Default for QpSolver {
    fn default() -> Self {
        Self { tolerance: 1e-6 }
    }
}

/// Everything [`QpSolver::analyse`] found, in SI units.
#[derive(Clone, Debug, PartialEq)]
pub struct QpOutcome {
    /// Static friction by the paper's definition.
    pub static_friction: bool,
    /// `β` at the optimum of eqs 28–31 (N).
    pub beta: Vec<[f64; 2]>,
    /// `Δq` at the optimum of eqs 28–31 (m, rad).
    pub displacement: Vector6,
    /// The optimal objective of eqs 28–31, `½ΔqᵀM̄Δq` (kg·m²).
    pub objective: f64,
    /// `Δq*`, the minimiser of eqs 28–30 (no pyramid).
    pub(crate) relaxed_displacement: Vector6,
    /// The optimal objective of eqs 28–30.
    pub relaxed_objective: f64,
    /// `‖Δq_QP − Δq*‖_M̃ / max(1, ‖Δq_free‖_M̃)` (scaled units), compared
    /// with [`QpSolver::tolerance`].
    pub deviation: f64,
    /// Wall time of assembling and solving eqs 28–31.
    pub qp_time: Duration,
    /// Wall time of assembling and solving eqs 28–30.
    pub relaxed_time: Duration,
    /// Interior-point iterations on eqs 28–31.
    pub iterations: u32,
}

/// Minimises `½Δq̃ᵀM̃Δq̃` over `x = (β̃ of the listed contacts, Δq̃)` subject
/// to eqs 29–30 and, if `pyramid`, eq 31. Returns `x` and the iterations.
fn solve_qp(
    scaled: &Scaled,
    contacts: &[usize],
    pyramid: bool,
) -> Result<(Vec<f64>, u32), SolverError> {
    let nb = 2 * contacts.len();
    let n = nb + 6;
    let (mut pi, mut pj, mut pv) = (Vec::new(), Vec::new(), Vec::new());
    for b in 0..6 {
        for a in 0..=b {
            pi.push(nb + a);
            pj.push(nb + b);
            pv.push(0.5 * (scaled.m[(a, b)] + scaled.m[(b, a)]));
        }
    }
    let p = CscMatrix::new_from_triplets(n, n, pi, pj, pv);
    let sides = if pyramid { scaled.sides.len() } else { 0 };
    let rows = 6 + contacts.len() * sides;
    let (mut ai, mut aj, mut av) = (Vec::new(), Vec::new(), Vec::new());
    let mut b = Vec::with_capacity(rows);
    // Eqs 29–30: W̃β̃ + H̃Δq̃ = −f̃ (a zero cone).
    for row in 0..6 {
        for (col, &i) in contacts.iter().enumerate() {
            for c in 0..2 {
                ai.push(row);
                aj.push(2 * col + c);
                av.push(scaled.w[(row, 2 * i + c)]);
            }
        }
        for c in 0..6 {
            ai.push(row);
            aj.push(nb + c);
            av.push(scaled.h[(row, c)]);
        }
        b.push(-scaled.f[row]);
    }
    // Eq 31: a_jᵀβ̃_i + s = μ_i‖F_n^i‖/F₀ with s ≥ 0.
    for (col, &i) in contacts.iter().enumerate().filter(|_| pyramid) {
        for side in &scaled.sides {
            ai.extend([b.len(), b.len()]);
            aj.extend([2 * col, 2 * col + 1]);
            av.extend([side.x, side.y]);
            b.push(scaled.limits[i]);
        }
    }
    let a = CscMatrix::new_from_triplets(rows, n, ai, aj, av);
    let mut cones = vec![SupportedConeT::ZeroConeT(6)];
    if rows > 6 {
        cones.push(SupportedConeT::NonnegativeConeT(rows - 6));
    }
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .tol_gap_abs(1e-11)
        .tol_gap_rel(1e-11)
        .tol_feas(1e-11)
        .build()
        .map_err(|e| SolverError::Backend(e.to_string()))?;
    let mut solver = DefaultSolver::new(&p, &vec![0.0; n], &a, &b, &cones, settings)
        .map_err(|e| SolverError::Backend(e.to_string()))?;
    solver.solve();
    let iterations = solver.solution.iterations;
    match solver.solution.status {
        SolverStatus::Solved | SolverStatus::AlmostSolved => {
            Ok((std::mem::take(&mut solver.solution.x), iterations))
        }
        SolverStatus::MaxIterations => Err(SolverError::NotConverged { iterations }),
        status => Err(SolverError::Backend(format!("clarabel: {status:?}"))),
    }
}

impl QpSolver {
    /// Solves eqs 28–31 and eqs 28–30 and compares their minimisers.
    /// Contacts with a zero friction limit keep `β_i = 0` (eq 31) by leaving
    /// them out of eqs 28–31; eqs 28–30 keep every `β_i` free.
    pub fn analyse(&self, problem: &StaticFrictionProblem) -> Result<QpOutcome, SolverError> {
        let scaled = Scaled::new(problem)?;
        let k = problem.contacts.len();
        let active: Vec<usize> = (0..k).filter(|&i| scaled.limits[i] > 0.0).collect();
        let all: Vec<usize> = (0..k).collect();

        let start = Instant::now();
        let (x, iterations) = solve_qp(&scaled, &active, true)?;
        let qp_time = start.elapsed();
        let start = Instant::now();
        let (relaxed, _) = solve_qp(&scaled, &all, false)?;
        let relaxed_time = start.elapsed();

        let nb = 2 * active.len();
        let dq = Vector6::from_column_slice(&x[nb..nb + 6]);
        let dq_star = Vector6::from_column_slice(&relaxed[2 * k..2 * k + 6]);
        let norm = |v: &Vector6| v.dot(&(scaled.m * v)).max(0.0).sqrt();
        let deviation = norm(&(dq - dq_star)) / norm(&scaled.frictionless()?).max(1.0);

        let mut beta = vec![[0.0; 2]; k];
        for (a, &i) in active.iter().enumerate() {
            beta[i] = [scaled.force_si(x[2 * a]), scaled.force_si(x[2 * a + 1])];
        }
        let displacement = scaled.displacement_si(&dq);
        let relaxed_displacement = scaled.displacement_si(&dq_star);
        let objective = |v: &Vector6| 0.5 * v.dot(&(problem.mass * v));
        Ok(QpOutcome {
            static_friction: deviation <= self.tolerance,
            beta,
            objective: objective(&displacement),
            displacement,
            relaxed_objective: objective(&relaxed_displacement),
            relaxed_displacement,
            deviation,
            qp_time,
            relaxed_time,
            iterations,
        })
    }
}

impl StaticFrictionSolver for QpSolver {
    fn solve(
        &mut self,
        problem: &StaticFrictionProblem,
        solution: &mut FrictionSolution,
    ) -> Result<(), SolverError> {
        if problem.contacts.is_empty() {
            return write_frictionless(problem, solution, FrictionState::Free, 0);
        }
        let outcome = self.analyse(problem)?;
        if !outcome.static_friction {
            return write_frictionless(
                problem,
                solution,
                FrictionState::Sliding,
                outcome.iterations,
            );
        }
        solution.state = FrictionState::Static;
        solution.reset();
        solution.beta.extend_from_slice(&outcome.beta);
        solution.displacement = outcome.displacement;
        solution.iterations = outcome.iterations;
        Ok(())
    }
}
