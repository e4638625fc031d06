//! The real-time solver: the LP of eqs 32–37 as a membership test in a
//! Minkowski sum of polygons (technical notes §1), decided by Wolfe's
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

use nalgebra::{Matrix6x2, SymmetricEigen, Vector2};

use crate::problem::{
    FrictionSolution, FrictionState, Matrix6, SolverError, StaticFrictionProblem,
    StaticFrictionSolver, Vector6,
};

/// Affinely independent points in `R^6`: the most atoms a corral can hold.
const MAX_ATOMS: usize = 7;

/// Wolfe's optimality test: the iterate `x` is the minimum-norm point to
/// working precision once `‖x‖ − ⟨x̂, p⟩ ≤ WOLFE_EPSILON · max ‖p_j‖`.
const WOLFE_EPSILON: f64 = 1e-14;

/// A new atom closer than this (relative to its offset) to the affine hull
/// of the others is numerically dependent.
const DEPENDENCE_EPSILON: f64 = 1e-12;

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

/// The iterate of Wolfe's algorithm: `x = Σ_j w_j p_j`, `p_j = z_j − g`.
#[derive(Clone, Copy)]
struct Atoms {
    len: usize,
    point: [Vector6; MAX_ATOMS],
    weight: [f64; MAX_ATOMS],
    /// Row of `choices` holding this atom's vertices; `None` for `β = 0`.
    slot: [Option<usize>; MAX_ATOMS],
}

impl Atoms {
    fn origin(g: &Vector6) -> Self {
        let mut atoms = Self {
            len: 1,
            point: [Vector6::zeros(); MAX_ATOMS],
            weight: [0.0; MAX_ATOMS],
            slot: [None; MAX_ATOMS],
        };
        atoms.point[0] = -g;
        atoms.weight[0] = 1.0;
        atoms
    }

    fn free_slot(&self) -> usize {
        let used = &self.slot[..self.len];
        (0..MAX_ATOMS)
            .find(|s| !used.contains(&Some(*s)))
            .expect("at most MAX_ATOMS - 1 atoms when a slot is requested")
    }

    fn push(&mut self, point: Vector6, slot: usize) {
        self.point[self.len] = point;
        self.weight[self.len] = 0.0;
        self.slot[self.len] = Some(slot);
        self.len += 1;
    }

    fn remove(&mut self, j: usize) {
        self.len -= 1;
        self.point.swap(j, self.len);
        self.weight.swap(j, self.len);
        self.slot.swap(j, self.len);
    }

    fn iterate(&self) -> Vector6 {
        self.point[..self.len]
            .iter()
            .zip(&self.weight[..self.len])
            .fold(Vector6::zeros(), |x, (p, w)| x + p * *w)
    }

    /// One major step's minor cycles (Wolfe 1976): move to the affine
    /// minimiser of the atoms, stepping back to the hull and dropping atoms
    /// whenever it leaves it. `false` when the atoms are numerically
    /// affinely dependent.
    fn minor_cycles(&mut self) -> bool {
        let mut alpha = [0.0; MAX_ATOMS];
        loop {
            let n = self.len;
            if !affine_minimizer(&self.point[..n], &mut alpha[..n]) {
                return false;
            }
            if alpha[..n].iter().all(|&a| a > 0.0) {
                self.weight[..n].copy_from_slice(&alpha[..n]);
                return true;
            }
            // The largest step towards α that keeps every weight ≥ 0.
            let (mut theta, mut leaving) = (f64::INFINITY, 0);
            for (j, (&w, &a)) in self.weight[..n].iter().zip(&alpha[..n]).enumerate() {
                if a <= 0.0 {
                    let t = if w > a { w / (w - a) } else { 0.0 };
                    if t < theta {
                        (theta, leaving) = (t, j);
                    }
                }
            }
            for (w, a) in self.weight[..n].iter_mut().zip(&alpha[..n]) {
                *w = (1.0 - theta) * *w + theta * a;
            }
            self.weight[leaving] = 0.0;
            for j in (0..n).rev() {
                if self.weight[j] <= 0.0 {
                    self.remove(j);
                }
            }
            let total: f64 = self.weight[..self.len].iter().sum();
            self.weight[..self.len].iter_mut().for_each(|w| *w /= total);
        }
    }
}

/// Weights `α` (`Σα = 1`) of the point of `aff{p_j}` nearest the origin, by
/// twice-iterated Gram–Schmidt on `p_j − p_0`; `false` when the points are
/// numerically affinely dependent.
fn affine_minimizer(points: &[Vector6], alpha: &mut [f64]) -> bool {
    let base = points[0];
    let m = points.len() - 1;
    let mut q = [Vector6::zeros(); MAX_ATOMS - 1];
    let mut r = [[0.0; MAX_ATOMS - 1]; MAX_ATOMS - 1];
    for j in 0..m {
        let mut v = points[j + 1] - base;
        let offset = v.norm();
        for _ in 0..2 {
            for i in 0..j {
                let c = q[i].dot(&v);
                r[i][j] += c;
                v -= q[i] * c;
            }
        }
        let height = v.norm();
        if height.is_nan() || height <= DEPENDENCE_EPSILON * offset {
            return false;
        }
        r[j][j] = height;
        q[j] = v / height;
    }
    // Minimise ‖base + Σ c_j (p_{j+1} − base)‖: R c = −Qᵀ base.
    let mut c = [0.0; MAX_ATOMS - 1];
    for j in (0..m).rev() {
        let tail: f64 = (j + 1..m).map(|i| r[j][i] * c[i]).sum();
        c[j] = (-q[j].dot(&base) - tail) / r[j][j];
    }
    alpha[0] = 1.0 - c[..m].iter().sum::<f64>();
    alpha[1..].copy_from_slice(&c[..m]);
    true
}

/// How the length scale `L` turns the problem's quantities into forces.
struct LengthScale {
    length: f64,
    /// `D = diag(1, 1, 1, 1/L, 1/L, 1/L)`: wrench `(F, τ)` → `(F, τ/L)`.
    wrench: Vector6,
    /// `E⁻¹ = diag(L, L, L, 1, 1, 1)`: scaled displacement `(Δx/L, Δθ)` → `Δq`.
    displacement: Vector6,
}

impl LengthScale {
    fn new(problem: &StaticFrictionProblem) -> Self {
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
    fn stiffness(&self, h: &Matrix6) -> Matrix6 {
        Matrix6::from_fn(|i, j| h[(i, j)] * self.wrench[i] * self.displacement[j])
    }

    /// `E⁻¹ M̄ E⁻¹`: the same kinetic energy (eq 27) in scaled displacement.
    fn mass(&self, m: &Matrix6) -> Matrix6 {
        Matrix6::from_fn(|i, j| m[(i, j)] * self.displacement[i] * self.displacement[j])
    }
}

/// Static friction by the structure of notes §1: a 6×6 reduction, then a
/// closest-point iteration on the Minkowski sum of the contacts' polygons.
/// All buffers are sized in [`new`](Self::new); `solve` never allocates
/// (except to describe invalid input in an error).
pub struct FastStaticFrictionSolver {
    params: FastSolverParameters,
    max_contacts: usize,
    /// `W̃_i`: tangential wrench bases, torques divided by `L`, projected onto
    /// `range(W)` when `rank W < 6`.
    bases: Vec<Matrix6x2<f64>>,
    /// Vertex radius of each `P_i` divided by `s`: `μ_i‖F_n^i‖ / (s cos(π/ℓ))`.
    radii: Vec<f64>,
    /// `(cos 2πm/ℓ, sin 2πm/ℓ)`: the ℓ-gon's vertex directions (eqs 14–16).
    vertex_directions: Vec<Vector2<f64>>,
    /// The ℓ `vertex_directions` currently holds (0 before the first solve).
    sides: usize,
    /// `choices[a · max_contacts + i]`: the vertex of `P_i` in atom slot `a`.
    choices: Vec<u16>,
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
        assert!(
            max_sides <= usize::from(u16::MAX),
            "pyramids of at most 65535 sides"
        );
        Self {
            params,
            max_contacts,
            bases: vec![Matrix6x2::zeros(); max_contacts],
            radii: vec![0.0; max_contacts],
            vertex_directions: vec![Vector2::zeros(); max_sides],
            sides: 0,
            choices: vec![0; MAX_ATOMS * max_contacts],
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

    fn check(&mut self, problem: &StaticFrictionProblem) -> Result<(), SolverError> {
        let sides = problem.pyramid_sides;
        if problem.contacts.len() > self.max_contacts {
            return Err(SolverError::Backend(format!(
                "{} contacts exceed the capacity of {}",
                problem.contacts.len(),
                self.max_contacts
            )));
        }
        if sides < 3 || sides > self.vertex_directions.len() {
            return Err(SolverError::Backend(format!(
                "pyramid of {sides} sides outside 3..={}",
                self.vertex_directions.len()
            )));
        }
        if sides != self.sides {
            let step = std::f64::consts::TAU / sides as f64;
            for (m, v) in self.vertex_directions[..sides].iter_mut().enumerate() {
                let (sin, cos) = (step * m as f64).sin_cos();
                *v = Vector2::new(cos, sin);
            }
            self.sides = sides;
        }
        Ok(())
    }

    /// The support point of `Z` in direction `d` (scaled units), recording
    /// each contact's maximising vertex in row `slot` of `choices`.
    fn support(&mut self, k: usize, d: &Vector6, slot: usize) -> Vector6 {
        let directions = &self.vertex_directions[..self.sides];
        let row = &mut self.choices[slot * self.max_contacts..][..k];
        let mut z = Vector6::zeros();
        for ((w, &radius), choice) in self.bases[..k].iter().zip(&self.radii[..k]).zip(row) {
            if radius == 0.0 {
                *choice = 0;
                continue;
            }
            let a = w.tr_mul(d);
            let (mut best, mut best_value) = (0, f64::NEG_INFINITY);
            for (m, v) in directions.iter().enumerate() {
                let value = a.dot(v);
                if value > best_value {
                    (best, best_value) = (m, value);
                }
            }
            *choice = best as u16;
            z += w * (directions[best] * radius);
        }
        z
    }

    /// Wolfe's minimum-norm-point iteration on `Z − g` (scaled units), from
    /// the atom `β = 0`. Returns the status, the final atoms and `x = z − g`.
    fn membership(&mut self, k: usize, rank: usize, g: &Vector6) -> (MembershipStatus, Atoms) {
        let p = self.params;
        let mut atoms = Atoms::origin(g);
        let mut x = -g;
        let mut largest = x.norm();
        self.report.separation = f64::NEG_INFINITY;
        loop {
            let norm = x.norm();
            self.report.residual = norm;
            if norm <= p.tolerance {
                return (MembershipStatus::Contained, atoms);
            }
            let band = if norm <= p.band {
                MembershipStatus::BandContained
            } else {
                MembershipStatus::BandSeparated
            };
            if self.report.iterations >= p.max_iterations || atoms.len > rank {
                return (band, atoms);
            }
            self.report.iterations += 1;
            let slot = atoms.free_slot();
            let point = self.support(k, &-x, slot) - g;
            let lower = x.dot(&point) / norm;
            self.report.separation = self.report.separation.max(lower);
            if lower > p.tolerance {
                return (MembershipStatus::Separated, atoms);
            }
            largest = largest.max(point.norm());
            if norm - lower <= WOLFE_EPSILON * largest {
                return (band, atoms);
            }
            let before = atoms;
            atoms.push(point, slot);
            let next = if atoms.minor_cycles() {
                atoms.iterate()
            } else {
                x
            };
            // Wolfe's iterates strictly decrease in norm; anything else is
            // rounding (or NaN), and the band decides.
            if next.norm().is_nan() || next.norm() >= norm {
                return (band, before);
            }
            x = next;
        }
    }
}

impl StaticFrictionSolver for FastStaticFrictionSolver {
    fn solve(
        &mut self,
        problem: &StaticFrictionProblem,
        solution: &mut FrictionSolution,
    ) -> Result<(), SolverError> {
        self.check(problem)?;
        let k = problem.contacts.len();
        let scale = LengthScale::new(problem);
        let f = problem.wrench.component_mul(&scale.wrench);
        let h = scale.stiffness(&problem.stiffness);
        self.report = FastSolveReport {
            length_scale: scale.length,
            ..FastSolveReport::default()
        };
        solution.beta.clear();
        solution.iterations = 0;
        solution.decided_in_band = false;
        if k == 0 {
            solution.state = FrictionState::Free;
            solution.displacement = frictionless(&h, &f, &scale)?;
            return Ok(());
        }

        // W̃ W̃ᵀ: its eigenvectors span range(W) and null(Wᵀ).
        let mut gram = Matrix6::zeros();
        let mut largest_limit: f64 = 0.0;
        for ((contact, w), radius) in problem
            .contacts
            .iter()
            .zip(&mut self.bases)
            .zip(&mut self.radii)
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
            for w in &mut self.bases[..k] {
                *w = projector * *w;
            }
        }

        let force = f.norm().max(g.norm()).max(largest_limit);
        if !force.is_finite() {
            return Err(SolverError::Backend("non-finite problem data".into()));
        }
        self.report.target = g.component_div(&scale.wrench);
        self.report.force_scale = force;
        let (status, atoms) = if force == 0.0 {
            self.report.separation = f64::NEG_INFINITY;
            (MembershipStatus::Contained, Atoms::origin(&g))
        } else {
            g /= force;
            let vertex = 1.0 / (force * (std::f64::consts::PI / self.sides as f64).cos());
            self.radii[..k].iter_mut().for_each(|r| *r *= vertex);
            self.membership(k, rank, &g)
        };
        self.report.status = status;
        solution.iterations = self.report.iterations;
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
            let directions = &self.vertex_directions[..self.sides];
            for (i, radius) in self.radii[..k].iter().enumerate() {
                let mut beta = Vector2::zeros();
                for (slot, weight) in atoms.slot[..atoms.len].iter().zip(&atoms.weight) {
                    if let Some(slot) = slot {
                        let m = self.choices[slot * self.max_contacts + i];
                        beta += directions[usize::from(m)] * (weight * radius);
                    }
                }
                solution.beta.push([beta.x * force, beta.y * force]);
            }
        } else {
            // d̃ = −P x exactly in range(W), so ⟨d̃, W̃_i β_i⟩ is the same
            // with or without the projection of the bases.
            let d = -(projector * atoms.iterate());
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

/// `Δq = −H⁻¹f` (eqs 7–8 with `β = 0`), solved in scaled units.
fn frictionless(h: &Matrix6, f: &Vector6, scale: &LengthScale) -> Result<Vector6, SolverError> {
    h.lu()
        .solve(&-f)
        .filter(|q| q.iter().all(|v| v.is_finite()))
        .map(|q| q.component_mul(&scale.displacement))
        .ok_or(SolverError::SingularStiffness)
}
