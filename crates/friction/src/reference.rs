//! Reference solvers of the static-friction LP (Zhao, Li & Barbič eqs 32–37) through
//! `good_lp` and its clarabel interior-point backend: general, slow, and the
//! ground truth the real-time solver is tested against.
//!
//! # Scaling
//!
//! In SI units the data span many decades (stiffness ~10⁴ N/m, mass ~0.1 kg,
//! displacements ~10⁻⁴ m), which stalls interior-point solvers. [`Scaled`]
//! changes units without changing the problem. With `L = max‖r_i‖` (the
//! length unit), `D = diag(I, I/L)` (turns torques into forces and rotations
//! into arc lengths), `F₀ = Σ‖F_n‖` (the force unit), `k̄ = max|(DHD)_ij|`
//! (the stiffness unit), `δ = F₀/k̄` (the displacement unit) and
//! `m̄ = max|(DM̄D)_ij|` (a free positive constant on the objective):
//!
//! ```text
//! f̃ = D f / F₀,   H̃ = D H D / k̄,   M̃ = D M̄ D / m̄,   W̃ = D W,
//! β̃ = β / F₀,     Δq = δ D Δq̃,     limits μ‖F_n‖ / F₀.
//! ```
//!
//! Eqs 35–36, `f + HΔq + Wβ = 0`, become `f̃ + H̃Δq̃ + W̃β̃ = 0` (rows multiplied
//! by `D/F₀`); the objective of eq 28 is multiplied by `1/(m̄δ²)`, which leaves
//! the minimisers and so the stationarity conditions 32–34 equivalent, with
//! `λ = (m̄δ²/F₀) D λ̃`. Every entry of `H̃`, `M̃` and `W̃` is at most 1.
//!
//! # Reduction
//!
//! Write `K = −H` and `S = K M̄⁻¹ Kᵀ` (symmetric positive definite when `H` is
//! invertible). Eqs 32–33, `M̄Δq + Hᵀλ = 0`, give `Δq = M̄⁻¹Kᵀλ`; eqs 35–36 then
//! read `Wβ = Sλ − f`, and eq 34 says `λ ∈ null(Wᵀ)`. Of the `2k + 12` equality
//! rows only `12 + rank W` are independent. With `U` an orthonormal basis of
//! `null(Wᵀ)` (the left singular vectors of `W` with zero singular value) and
//! `λ = Uy`, multiplying `Wβ = SUy − f` by `Uᵀ` gives `0 = UᵀSUy − Uᵀf`, so
//!
//! ```text
//! y = (UᵀSU)⁻¹ Uᵀ f,   λ = U y,   g = Sλ − f ∈ range(W),   Δq = M̄⁻¹Kᵀλ,
//! ```
//!
//! all unique, and the LP is feasible iff some `β` with every `β_i` in its
//! pyramid (eq 37) has `Wβ = g`. When `rank W = 6` (no rigid motion moves
//! every contact point along its own normal: typically contacts on three or
//! more differently oriented faces), `λ = 0`, `Δq = 0` and `g = −f`; contacts
//! on one plane with one normal give `rank W = 3`, on one line at most 5.
//! `Δq` is the unique minimiser of eq 28 subject to eqs 29–30 alone: it is
//! the minimum-`M̄`-norm solution of `UᵀKΔq = Uᵀf`, the condition that
//! `f + HΔq ∈ range(W)`. [`ReferenceLpSolver`] hands the solver only the
//! `rank W_a` independent rows `V_aᵀβ_a = Σ_a⁻¹U_aᵀg` of the SVD
//! `W_a = U_a Σ_a V_aᵀ` over the contacts with a positive friction limit
//! (the others have `β_i = 0` by eq 37), plus the `kℓ` pyramid rows.
//! [`FullLpSolver`] hands it eqs 32–37 unreduced, for comparison.

use clarabel::solver::{DefaultSolver, IPSolver, SolverStatus};
use good_lp::solvers::clarabel::ClarabelProblem;
use good_lp::{variable, Expression, ProblemVariables, SolverModel, Variable};
use haptic_core::{Matrix6, Vector6};
use nalgebra::{DMatrix, DVector, Vector2};

use crate::problem::{
    FrictionSolution, FrictionState, SolverError, StaticFrictionProblem, StaticFrictionSolver,
};

/// Singular values of `W̃` below this fraction of the largest count as zero.
const RANK_TOLERANCE: f64 = 1e-6;
/// `g̃` farther than this (relative to `max(1, ‖f̃‖)`) from `range(W̃_a)`
/// cannot be produced by the contacts with a positive friction limit.
const RANGE_TOLERANCE: f64 = 1e-9;

/// One problem in the nondimensional units of the module documentation.
pub(crate) struct Scaled {
    /// `L`: the length unit (m).
    length: f64,
    /// `F₀`: the force unit (N).
    force: f64,
    /// `δ = F₀/k̄`: the displacement unit (m).
    displacement: f64,
    /// `m̄`: the objective's unit (kg).
    mass: f64,
    /// `f̃`.
    pub(crate) f: Vector6,
    /// `H̃`.
    pub(crate) h: Matrix6,
    /// `M̃`.
    pub(crate) m: Matrix6,
    /// `W̃ = D W`, 6 × 2k.
    pub(crate) w: DMatrix<f64>,
    /// `μ_i‖F_n^i‖/F₀`, the scaled right-hand sides of eq 37.
    pub(crate) limits: Vec<f64>,
    /// `(cos θ_j, sin θ_j)` of eq 37.
    pub(crate) sides: Vec<Vector2<f64>>,
}

impl Scaled {
    pub(crate) fn new(problem: &StaticFrictionProblem) -> Result<Self, SolverError> {
        let length = problem
            .contacts
            .iter()
            .map(|c| c.handle.norm())
            .fold(0.0, f64::max);
        let length = if length > 0.0 { length } else { 1.0 };
        let d = Matrix6::from_diagonal(&Vector6::new(
            1.0,
            1.0,
            1.0,
            1.0 / length,
            1.0 / length,
            1.0 / length,
        ));
        let normal: f64 = problem.contacts.iter().map(|c| c.normal_force).sum();
        let wrench = (d * problem.wrench).norm();
        let force = if normal > 0.0 {
            normal
        } else if wrench > 0.0 {
            wrench
        } else {
            1.0
        };
        let h = d * problem.stiffness * d;
        let stiffness = h.amax();
        if !(stiffness > 0.0 && stiffness.is_finite()) {
            return Err(SolverError::SingularStiffness);
        }
        let m = d * problem.mass * d;
        let mass = m.amax();
        let m = m / mass;
        if !(mass.is_finite() && m.cholesky().is_some()) {
            return Err(SolverError::Backend(
                "the mass matrix is not positive definite".into(),
            ));
        }
        let k = problem.contacts.len();
        let mut w = DMatrix::zeros(6, 2 * k);
        for (i, contact) in problem.contacts.iter().enumerate() {
            w.fixed_view_mut::<6, 2>(0, 2 * i)
                .copy_from(&(d * contact.wrench_basis()));
        }
        Ok(Self {
            length,
            force,
            displacement: force / stiffness,
            mass,
            f: d * problem.wrench / force,
            h: h / stiffness,
            m,
            w,
            limits: problem
                .contacts
                .iter()
                .map(|c| c.friction_limit() / force)
                .collect(),
            sides: problem.side_directions().collect(),
        })
    }

    /// `D = diag(I, I/L)` as a vector.
    fn d(&self) -> Vector6 {
        let r = 1.0 / self.length;
        Vector6::new(1.0, 1.0, 1.0, r, r, r)
    }

    /// `Δq = δ D Δq̃` (m, rad).
    pub(crate) fn displacement_si(&self, dq: &Vector6) -> Vector6 {
        self.d().component_mul(dq) * self.displacement
    }

    /// `β = F₀ β̃` (N).
    pub(crate) fn force_si(&self, beta: f64) -> f64 {
        beta * self.force
    }

    /// A wrench `F₀ D⁻¹ w̃` (N, N·m).
    fn wrench_si(&self, w: &Vector6) -> Vector6 {
        w.component_div(&self.d()) * self.force
    }

    /// `λ = (m̄δ²/F₀) D λ̃`.
    fn multiplier_si(&self, lambda: &Vector6) -> Vector6 {
        self.d().component_mul(lambda) * (self.mass * self.displacement.powi(2) / self.force)
    }

    /// `Δq̃` of the frictionless equilibrium, `−H̃⁻¹f̃` (eqs 29–30 with `β = 0`).
    pub(crate) fn frictionless(&self) -> Result<Vector6, SolverError> {
        self.h
            .lu()
            .solve(&(-self.f))
            .ok_or(SolverError::SingularStiffness)
    }
}

/// The SVD `W = U Σ Vᵀ` of a 6 × n matrix, from the eigen-decomposition of
/// the 6 × 6 `WWᵀ = U Σ² Uᵀ` (nalgebra 0.34's `svd` returns a wrong
/// factorisation for some of these matrices, dimforge/nalgebra#1172).
struct WrenchSvd {
    /// All of `U`, columns by decreasing singular value.
    u: DMatrix<f64>,
    /// The `rank` nonzero singular values.
    sigma: DVector<f64>,
    /// `V_rᵀ = Σ_r⁻¹ U_rᵀ W`, the `rank` independent rows of `W`.
    v_t: DMatrix<f64>,
    rank: usize,
}

impl WrenchSvd {
    fn new(w: &DMatrix<f64>) -> Self {
        let eigen = Matrix6::from_iterator((w * w.transpose()).iter().copied()).symmetric_eigen();
        let mut order: Vec<usize> = (0..6).collect();
        order.sort_by(|&a, &b| eigen.eigenvalues[b].total_cmp(&eigen.eigenvalues[a]));
        let u = DMatrix::from_fn(6, 6, |row, col| eigen.eigenvectors[(row, order[col])]);
        let largest = eigen.eigenvalues[order[0]];
        // σ_i > tol σ_max, compared squared: eigenvalues carry an absolute
        // error ~1e-16 σ_max², so the tolerance must stay well above 1e-8.
        let rank = order
            .iter()
            .filter(|&&i| eigen.eigenvalues[i] > RANK_TOLERANCE.powi(2) * largest)
            .count();
        let sigma = DVector::from_fn(rank, |i, _| eigen.eigenvalues[order[i]].sqrt());
        let mut v_t = u.columns(0, rank).transpose() * w;
        for (mut row, s) in v_t.row_iter_mut().zip(sigma.iter()) {
            row /= *s;
        }
        Self {
            u,
            sigma,
            v_t,
            rank,
        }
    }

    /// The `rank` independent rows `V_rᵀ x = Σ_r⁻¹ U_rᵀ g` of `W x = g`, or
    /// `None` when `g ∉ range(W)`.
    fn independent_rows(
        &self,
        g: &Vector6,
        tolerance: f64,
    ) -> Option<(DMatrix<f64>, DVector<f64>)> {
        let g = DVector::from_column_slice(g.as_slice());
        let u_r = self.u.columns(0, self.rank);
        let coefficients = u_r.transpose() * &g;
        if (&g - u_r * &coefficients).norm() > tolerance {
            return None;
        }
        Some((self.v_t.clone(), coefficients.component_div(&self.sigma)))
    }
}

/// The analytic part of the reduced LP: everything but `β` (module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Reduction {
    /// `rank W`: the number of independent friction wrenches.
    pub rank: usize,
    /// `λ ∈ null(Wᵀ)`, the multiplier of eqs 32–34.
    pub multiplier: Vector6,
    /// `Δq = M̄⁻¹Kᵀλ` (m, rad): the displacement if the object is static.
    pub displacement: Vector6,
    /// `g = Sλ − f` (N, N·m): the wrench friction must supply, `Wβ = g`.
    pub friction_wrench: Vector6,
}

/// `(rank W̃, λ̃, Δq̃, g̃)` in scaled units.
struct ScaledReduction {
    svd: WrenchSvd,
    multiplier: Vector6,
    displacement: Vector6,
    friction_wrench: Vector6,
}

fn reduce_scaled(scaled: &Scaled) -> Result<ScaledReduction, SolverError> {
    let svd = WrenchSvd::new(&scaled.w);
    let r = svd.rank;
    if r == 6 {
        return Ok(ScaledReduction {
            svd,
            multiplier: Vector6::zeros(),
            displacement: Vector6::zeros(),
            friction_wrench: -scaled.f,
        });
    }
    let mass = scaled
        .m
        .cholesky()
        .ok_or_else(|| SolverError::Backend("the mass matrix is not positive definite".into()))?;
    let k = -scaled.h;
    // M̄⁻¹Kᵀ and S = K M̄⁻¹ Kᵀ.
    let m_inv_kt = mass.solve(&k.transpose());
    let s = k * m_inv_kt;
    let s = DMatrix::from_column_slice(6, 6, s.as_slice());
    let null = svd.u.columns(r, 6 - r);
    let f = DVector::from_column_slice(scaled.f.as_slice());
    let y = (null.transpose() * &s * null)
        .cholesky()
        .ok_or(SolverError::SingularStiffness)?
        .solve(&(null.transpose() * f));
    let lambda = Vector6::from_iterator((null * y).iter().copied());
    Ok(ScaledReduction {
        svd,
        multiplier: lambda,
        displacement: m_inv_kt * lambda,
        friction_wrench: k * m_inv_kt * lambda - scaled.f,
    })
}

/// The reduction of the module documentation in SI units, for tests and
/// diagnostics. `Δq` and `g` are unique; `β` needs the LP.
pub fn reduce(problem: &StaticFrictionProblem) -> Result<Reduction, SolverError> {
    let scaled = Scaled::new(problem)?;
    let r = reduce_scaled(&scaled)?;
    Ok(Reduction {
        rank: r.svd.rank,
        multiplier: scaled.multiplier_si(&r.multiplier),
        displacement: scaled.displacement_si(&r.displacement),
        friction_wrench: scaled.wrench_si(&r.friction_wrench),
    })
}

/// The LP of eqs 32–37 after the scaling and row reduction of the module
/// documentation: `rank W_a` equality rows and `kℓ` pyramid rows in the `2k`
/// unknowns `β`. clarabel `Solved` ⇒ `Static` with its `β` and the reduction's
/// `Δq`; `PrimalInfeasible` ⇒ `Sliding` with `β = 0` and `Δq = −H⁻¹f`; and
/// `Sliding` without an LP when `g ∉ range(W_a)` (only zero-limit contacts
/// could supply it).
#[derive(Clone, Copy, Debug, Default)]
pub struct ReferenceLpSolver {
    /// Solves in which the feasibility LP stalled and the load-factor LP
    /// decided (see [`FullLpSolver::fallbacks`]).
    pub fallbacks: u32,
}

/// The LP of eqs 32–37 scaled but unreduced: unknowns `(β, Δq, λ)`,
/// `2k + 12` equality rows and `kℓ` pyramid rows.
#[derive(Clone, Copy, Debug, Default)]
pub struct FullLpSolver {
    /// Solves in which clarabel stalled on the feasibility LP (within its
    /// tolerances of the friction limit, the feasible set has no interior).
    /// The same rows were then solved as "minimise `t` subject to eqs 32–36
    /// and eq 37 with right-hand sides `t μ_i‖F_n^i‖`", which has an interior
    /// whenever eqs 35–36 can be met at all, and the LP is feasible iff
    /// `t* ≤ 1`.
    pub fallbacks: u32,
}

/// How eqs 32–37 are handed to clarabel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Posing {
    /// As written, objective 0: clarabel's status decides.
    Feasibility,
    /// Minimise the load factor `t` (the last variable), eq 37 scaled by `t`.
    LoadFactor,
}

/// A `good_lp` model with variables `β` (`n_beta`), `extra` (`n_extra`) and,
/// for [`Posing::LoadFactor`], `t`, holding the pyramid rows of eq 37.
fn pyramid_model(
    n_beta: usize,
    n_extra: usize,
    limits: &[f64],
    sides: &[Vector2<f64>],
    posing: Posing,
) -> (ClarabelProblem, Vec<Variable>, Vec<Variable>) {
    let mut vars = ProblemVariables::new();
    let beta = vars.add_vector(variable(), n_beta);
    let extra = vars.add_vector(variable(), n_extra);
    let t = (posing == Posing::LoadFactor).then(|| vars.add(variable()));
    let objective = t.map_or_else(|| Expression::from(0.0), Expression::from);
    let mut lp = vars.minimise(objective).using(good_lp::clarabel);
    for (pair, &limit) in beta.chunks_exact(2).zip(limits) {
        for side in sides {
            let mut row = Expression::with_capacity(3);
            row.add_mul(side.x, pair[0]);
            row.add_mul(side.y, pair[1]);
            lp.add_constraint(match t {
                Some(t) => {
                    row.add_mul(-limit, t);
                    row.leq(0.0)
                }
                None => row.leq(limit),
            });
        }
    }
    (lp, beta, extra)
}

/// `Σ_j a_j x_j` as a `good_lp` expression.
fn linear(coefficients: impl Iterator<Item = f64>, x: &[Variable]) -> Expression {
    let mut e = Expression::with_capacity(x.len());
    for (a, &v) in coefficients.zip(x) {
        e.add_mul(a, v);
    }
    e
}

/// What clarabel made of one LP.
enum Outcome {
    Solved(Vec<f64>, u32),
    Infeasible(u32),
    Stalled(SolverStatus, u32),
}

fn run(lp: ClarabelProblem) -> Result<Outcome, SolverError> {
    let mut solver: DefaultSolver<f64> = lp
        .try_into_solver()
        .map_err(|e| SolverError::Backend(e.to_string()))?;
    solver.solve();
    let solution = &mut solver.solution;
    let iterations = solution.iterations;
    Ok(match solution.status {
        SolverStatus::Solved | SolverStatus::AlmostSolved => {
            Outcome::Solved(std::mem::take(&mut solution.x), iterations)
        }
        SolverStatus::PrimalInfeasible | SolverStatus::AlmostPrimalInfeasible => {
            Outcome::Infeasible(iterations)
        }
        status => Outcome::Stalled(status, iterations),
    })
}

/// Decides eqs 32–37 as posed by `build`: `Some(x)` if feasible, `None` if
/// not, with the total iterations. A stalled feasibility LP falls back to
/// the load factor and counts in `fallbacks`.
fn decide(
    build: impl Fn(Posing) -> ClarabelProblem,
    fallbacks: &mut u32,
) -> Result<(Option<Vec<f64>>, u32), SolverError> {
    let first = match run(build(Posing::Feasibility))? {
        Outcome::Solved(x, iterations) => return Ok((Some(x), iterations)),
        Outcome::Infeasible(iterations) => return Ok((None, iterations)),
        Outcome::Stalled(_, iterations) => iterations,
    };
    *fallbacks += 1;
    match run(build(Posing::LoadFactor))? {
        Outcome::Solved(x, iterations) => {
            let feasible = x.last().is_some_and(|&t| t <= 1.0);
            Ok((feasible.then_some(x), first + iterations))
        }
        Outcome::Infeasible(iterations) => Ok((None, first + iterations)),
        Outcome::Stalled(SolverStatus::MaxIterations, iterations) => {
            Err(SolverError::NotConverged {
                iterations: first + iterations,
            })
        }
        Outcome::Stalled(status, _) => Err(SolverError::Backend(format!("clarabel: {status:?}"))),
    }
}

/// Writes the frictionless equilibrium (no contacts: `Free`; infeasible LP:
/// `Sliding`).
pub(crate) fn write_frictionless(
    problem: &StaticFrictionProblem,
    solution: &mut FrictionSolution,
    state: FrictionState,
    iterations: u32,
) -> Result<(), SolverError> {
    solution.reset();
    solution.state = state;
    solution
        .beta
        .extend(std::iter::repeat_n([0.0; 2], problem.contacts.len()));
    solution.displacement = problem
        .frictionless_displacement()
        .ok_or(SolverError::SingularStiffness)?;
    solution.iterations = iterations;
    Ok(())
}

/// Writes a static solution from scaled `β̃` pairs and `Δq̃`.
fn write_static(
    scaled: &Scaled,
    beta: impl Iterator<Item = [f64; 2]>,
    displacement: &Vector6,
    solution: &mut FrictionSolution,
    iterations: u32,
) {
    solution.reset();
    solution.state = FrictionState::Static;
    solution
        .beta
        .extend(beta.map(|[u, v]| [scaled.force_si(u), scaled.force_si(v)]));
    solution.displacement = scaled.displacement_si(displacement);
    solution.iterations = iterations;
}

impl StaticFrictionSolver for ReferenceLpSolver {
    fn solve(
        &mut self,
        problem: &StaticFrictionProblem,
        solution: &mut FrictionSolution,
    ) -> Result<(), SolverError> {
        if problem.contacts.is_empty() {
            return write_frictionless(problem, solution, FrictionState::Free, 0);
        }
        let scaled = Scaled::new(problem)?;
        let reduction = reduce_scaled(&scaled)?;
        // Contacts with a zero friction limit have β_i = 0 (eq 37): drop them.
        let active: Vec<usize> = (0..problem.contacts.len())
            .filter(|&i| scaled.limits[i] > 0.0)
            .collect();
        let tolerance = RANGE_TOLERANCE * scaled.f.norm().max(1.0);
        let rows = if active.len() == problem.contacts.len() {
            reduction
                .svd
                .independent_rows(&reduction.friction_wrench, tolerance)
        } else {
            let mut w = DMatrix::zeros(6, 2 * active.len());
            for (a, &i) in active.iter().enumerate() {
                w.columns_mut(2 * a, 2)
                    .copy_from(&scaled.w.columns(2 * i, 2));
            }
            WrenchSvd::new(&w).independent_rows(&reduction.friction_wrench, tolerance)
        };
        // g̃ ∉ range(W̃_a): no admissible friction produces it (eqs 35–36).
        let Some((rows, rhs)) = rows else {
            return write_frictionless(problem, solution, FrictionState::Sliding, 0);
        };
        let limits: Vec<f64> = active.iter().map(|&i| scaled.limits[i]).collect();
        let build = |posing| {
            let (mut lp, beta, _) =
                pyramid_model(2 * active.len(), 0, &limits, &scaled.sides, posing);
            for (row, &b) in rows.row_iter().zip(rhs.iter()) {
                lp.add_constraint(linear(row.iter().copied(), &beta).eq(b));
            }
            lp
        };
        let (x, iterations) = if rows.nrows() == 0 {
            // Nothing for friction to balance: β = 0.
            (Some(vec![0.0; 2 * active.len()]), 0)
        } else {
            decide(build, &mut self.fallbacks)?
        };
        let Some(x) = x else {
            return write_frictionless(problem, solution, FrictionState::Sliding, iterations);
        };
        let mut pairs = vec![[0.0; 2]; problem.contacts.len()];
        for (a, &i) in active.iter().enumerate() {
            pairs[i] = [x[2 * a], x[2 * a + 1]];
        }
        write_static(
            &scaled,
            pairs.into_iter(),
            &reduction.displacement,
            solution,
            iterations,
        );
        Ok(())
    }
}

impl StaticFrictionSolver for FullLpSolver {
    fn solve(
        &mut self,
        problem: &StaticFrictionProblem,
        solution: &mut FrictionSolution,
    ) -> Result<(), SolverError> {
        if problem.contacts.is_empty() {
            return write_frictionless(problem, solution, FrictionState::Free, 0);
        }
        let scaled = Scaled::new(problem)?;
        let n = scaled.w.ncols();
        let build = |posing| {
            let (mut lp, beta, extra) = pyramid_model(n, 12, &scaled.limits, &scaled.sides, posing);
            let (dq, lambda) = extra.split_at(6);
            // Eqs 32–33: M̃Δq̃ + H̃ᵀλ̃ = 0.
            for a in 0..6 {
                let row = linear(scaled.m.row(a).iter().copied(), dq)
                    + linear(scaled.h.column(a).iter().copied(), lambda);
                lp.add_constraint(row.eq(0.0));
            }
            // Eq 34: W̃ᵀλ̃ = 0.
            for column in scaled.w.column_iter() {
                lp.add_constraint(linear(column.iter().copied(), lambda).eq(0.0));
            }
            // Eqs 35–36: H̃Δq̃ + W̃β̃ = −f̃.
            for a in 0..6 {
                let row = linear(scaled.h.row(a).iter().copied(), dq)
                    + linear(scaled.w.row(a).iter().copied(), &beta);
                lp.add_constraint(row.eq(-scaled.f[a]));
            }
            lp
        };
        let (x, iterations) = decide(build, &mut self.fallbacks)?;
        let Some(x) = x else {
            return write_frictionless(problem, solution, FrictionState::Sliding, iterations);
        };
        write_static(
            &scaled,
            x[..n].chunks_exact(2).map(|p| [p[0], p[1]]),
            &Vector6::from_column_slice(&x[n..n + 6]),
            solution,
            iterations,
        );
        Ok(())
    }
}
