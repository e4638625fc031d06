//! One island's momentum update: the block-sparse system of eqs 15–18,
//! augmented with joint constraints (eq 62) and solved through the Schur
//! complement with an SVD pseudo-inverse (eq 64).
//!
//! Unknowns are the momentum changes `ΔS_i = (ΔP_i, ΔL_i)` of the island's
//! dynamic bodies over a step `h`. Linearising every force about the
//! current state, with `Δx_j = h (v_j + ΔP_j / m_j)`,
//! `Δθ_j = h V_j (ω_j + J_j⁻¹ ΔL_j)` and `V_j = (I − h ∂ω_j/∂θ_j)⁻¹`,
//! `∂ω/∂θ = J⁻¹ [L]× − [ω]×` (the rotation of `J⁻¹ = R J_b⁻¹ Rᵀ` at fixed
//! `L`, the `(I − ∂q̇/∂q)⁻¹` of eq 6):
//!
//! ```text
//! G_ij = δ_ij I − h [ (∂F_ij/∂v_j + h ∂F_ij/∂x_j) / m_j ,  (∂F_ij/∂ω_j + h ∂F_ij/∂θ_j V_j) J_j⁻¹ ]   (eq 16)
//! Z_i  = F_i + h Σ_j (∂F_ij/∂x_j v_j + ∂F_ij/∂θ_j V_j ω_j)                                       (eq 17)
//! G ΔS = h Z                                                                                      (eq 15)
//! ```
//!
//! (rows `F` stand for the whole wrench `(F, τ)`). For `i ≠ j` this is the
//! paper's `V_ij = I`; the diagonal keeps the gyroscopic `V_j`.
//!
//! Joints add `C̈ + α Ċ + β C = 0` (eq 56) at the new velocities:
//! `C̈ = Σ_j J_j M_j⁻¹ ΔS_j / h + J̇u − Σ_j J_θj J_j⁻¹ (ω_j × J_j ω_j)` (eqs 58–61),
//! with constraint wrenches `−J_jᵀ λ`. The paper's eq 62 scales its
//! multipliers' wrenches by `M⁻¹`, which for bodies of unequal mass breaks
//! action and reaction; here the wrench is `Jᵀ λ` itself, so a joint's
//! forces on its two bodies are equal and opposite. With `μ = h λ`:
//!
//! ```text
//! [ G      Jᵀ ] [ΔS]   [ h Z  ]
//! [ J M⁻¹  0  ] [ μ] = [ −h d ],   d = α Ċ + β C + J̇u − Σ J_θ J⁻¹ (ω × J ω)
//! ```
//!
//! solved as eq 64 does: `Y = G⁻¹ h Z`, `F = G⁻¹ Jᵀ` (one solve per
//! row), `S = J M⁻¹ F`, `μ = S⁺ (J M⁻¹ Y + h d)` with singular values below
//! `10⁻¹⁰ σ_max` truncated, `ΔS = Y − F μ`. `G` is factored once ([`factorization`]): densely
//! by nalgebra's LU for an island of up to [`DENSE_ISLAND_BODIES`] bodies,
//! else by faer's sparse LU, supernodal: its dense 6 × 6 blocks make
//! supernodes (in the 50-body pile forces, solve and integration took 13 %
//! less time than with the simplicial one faer picks by itself).
//!
//! Every matrix of a solve lives in [`SolverScratch`], sized by the largest
//! island so far and reused: after warm-up a solve allocates nothing. The
//! Schur complement's SVD is faer's, in a kept workspace, and the joint
//! solve's dense products are plain loops over the kept buffers.
//!
//! A step whose poses then move by `h` along the solved velocities
//! (semi-implicit, symplectic Euler) changes `C` by `h (Ċ⁺ − h e)`, not
//! `h Ċ⁺`: the anchors move along arcs (`e = J̇u/2`), and symplectic Euler's
//! rotation also leaves out the gyroscopic term (`e = J̇u/2 − J_θ J⁻¹(ω × Jω)`).
//! Damping `Ċ` would let `C` settle at `−4 h e / α`; such a step damps
//! `Ċ − h e`, the rate at which `C` actually moves, which leaves only a drift
//! falling as `h/α²` with the rate of change of `e`. RK4's stages, which are
//! rates, damp `Ċ`.

pub mod factorization;

use crate::body::RigidBody;
use crate::forces::{ConstraintRow, Forces};
use factorization::{stack, DenseLu, Factors, MatrixBuffer, SparseLu};
use faer::linalg::svd::{svd, svd_scratch, ComputeSvdVectors};
use faer::{diag::DiagMut, MatMut, MatRef, Par};
use haptic_core::{skew, Matrix6};
use nalgebra::{DMatrixView, DMatrixViewMut, Matrix3, Vector3};
use std::mem::MaybeUninit;

/// Islands of up to this many bodies are factored densely (nalgebra's LU),
/// larger ones by faer's sparse LU: in the 50-body pile, whose islands
/// hold 1 to about 30 bodies, forces, solve and integration took 20 % less
/// time than with every island of two bodies or more sparse, and less than
/// with limits of 10, 24 or 32 bodies.
pub const DENSE_ISLAND_BODIES: usize = 16;

/// Singular values of the Schur complement below this fraction of the
/// largest are truncated (eq 64's `ε = 10⁻¹⁰`).
pub const PSEUDO_INVERSE_TOLERANCE: f64 = 1e-10;

/// What one island's solve needs besides the bodies.
pub struct IslandProblem<'a> {
    /// The island's dynamic bodies (indices into the world's bodies).
    pub bodies: &'a [usize],
    /// The indices in the forces' `gradients` of the blocks between them.
    pub gradients: &'a [usize],
    /// Its constraint rows (bodies outside the island are static).
    pub rows: &'a [ConstraintRow],
    /// Whether to use the gradients (semi-implicit) or drop them (`G = I`:
    /// symplectic Euler's explicit forces, with the same joint solve).
    pub implicit: bool,
    /// Baumgarte `α` (1/s); `β = α²/4`.
    pub baumgarte_alpha: f64,
    /// Whether the poses then move by `h` along the solved velocities (a
    /// semi-implicit or symplectic Euler step) rather than the solve giving
    /// rates (RK4's stages): `α` then damps `Ċ − h e` (see above).
    pub stepped: bool,
}

/// Why an island could not be solved.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SolveError {
    #[error("the island's system matrix is singular: {0}")]
    Singular(String),
    #[error("the solve produced non-finite values")]
    NonFinite,
}

/// `V = (I − h ∂ω/∂θ)⁻¹` with `∂ω/∂θ = J⁻¹[L]× − [ω]×`.
pub fn rotation_velocity_map(body: &RigidBody, h: f64) -> Matrix3<f64> {
    let inverse_inertia = body.world_inverse_inertia();
    let momentum = body.angular_momentum();
    let domega = inverse_inertia * skew(&momentum) - skew(&body.state.angular_velocity);
    (Matrix3::identity() - domega * h)
        .try_inverse()
        .unwrap_or_else(Matrix3::identity)
}

/// What an island's solve reuses from island to island and step to step:
/// every matrix of the solve, sized by the largest island so far, and the
/// sparse factorizations' symbolic parts.
#[derive(Default)]
pub struct SolverScratch {
    maps: Vec<Matrix3<f64>>,
    inverse_inertias: Vec<Matrix3<f64>>,
    /// `G`'s blocks as assembled: `((column, row), order, block)`.
    assembled: Vec<((usize, usize), usize, Matrix6)>,
    /// `G`'s blocks summed and sorted by `(column, row)`.
    blocks: Vec<((usize, usize), Matrix6)>,
    /// The blocks' `(body, body)` pairs in the world's bodies.
    pattern: Vec<(usize, usize)>,
    dense: DenseLu,
    sparse: SparseLu,
    /// `ΔS`, `6n × 1`.
    delta: MatrixBuffer,
    /// `Jᵀ` (`6n × m`) and `J M⁻¹` (`m × 6n`).
    jt: MatrixBuffer,
    jm: MatrixBuffer,
    /// `d` of the constraint rows, `m × 1`.
    d: MatrixBuffer,
    /// `G⁻¹ Jᵀ`, `6n × m`.
    f: MatrixBuffer,
    /// The Schur complement, `m × m`.
    schur: MatrixBuffer,
    /// The Schur system's right-hand side, `m × 1`.
    target: MatrixBuffer,
    /// A correction, `6n × 1`.
    correction: MatrixBuffer,
    /// The Schur system's solution `S⁺ b` and its SVD's buffers.
    pseudo_inverse: PseudoInverse,
    /// The last solve's answer, per body.
    changes: Vec<[Vector3<f64>; 2]>,
}

impl SolverScratch {
    /// Forgets the sparse symbolic factorizations not used since the last
    /// call.
    pub fn prune(&mut self) {
        self.sparse.prune();
    }
}

/// Solves one island's momentum changes `ΔS_i` (in `problem.bodies` order,
/// which is sorted).
pub fn solve_island<'s>(
    bodies: &[RigidBody],
    forces: &Forces,
    problem: &IslandProblem,
    h: f64,
    scratch: &'s mut SolverScratch,
) -> Result<&'s [[Vector3<f64>; 2]], SolveError> {
    let n = problem.bodies.len();
    let local = |b: usize| problem.bodies.binary_search(&b).ok();
    let SolverScratch {
        maps,
        inverse_inertias,
        assembled,
        blocks,
        pattern,
        dense,
        sparse,
        delta,
        jt,
        jm,
        d,
        f,
        schur,
        target,
        correction,
        pseudo_inverse,
        changes,
        ..
    } = scratch;
    maps.clear();
    maps.extend(problem.bodies.iter().map(|&b| {
        if problem.implicit {
            rotation_velocity_map(&bodies[b], h)
        } else {
            Matrix3::identity()
        }
    }));
    inverse_inertias.clear();
    inverse_inertias.extend(
        problem
            .bodies
            .iter()
            .map(|&b| bodies[b].world_inverse_inertia()),
    );

    // G blocks by (column, row) and the right-hand side h Z.
    assembled.clear();
    let mut rhs = delta.zeroed(6 * n, 1);
    for (k, &b) in problem.bodies.iter().enumerate() {
        assembled.push(((k, k), assembled.len(), Matrix6::identity()));
        rhs.fixed_rows_mut::<6>(6 * k)
            .copy_from(&(forces.wrench[b] * h));
    }
    if problem.implicit {
        for g in problem.gradients.iter().map(|&k| &forces.gradients[k]) {
            let (Some(i), Some(j)) = (local(g.on), local(g.by)) else {
                continue;
            };
            let body = &bodies[g.by];
            let (v, w) = (body.state.velocity, body.state.angular_velocity);
            let kx = g.position.fixed_view::<6, 3>(0, 0);
            let kt = g.position.fixed_view::<6, 3>(0, 3) * maps[j];
            let dv = g.velocity.fixed_view::<6, 3>(0, 0);
            let dw = g.velocity.fixed_view::<6, 3>(0, 3);
            let z = kx * v + kt * w;
            let mut row = rhs.fixed_rows_mut::<6>(6 * i);
            row += z * (h * h);
            let mut block = Matrix6::zeros();
            block
                .fixed_view_mut::<6, 3>(0, 0)
                .copy_from(&((dv + kx * h) * (-h / body.model.mass)));
            block
                .fixed_view_mut::<6, 3>(0, 3)
                .copy_from(&((dw + kt * h) * inverse_inertias[j] * (-h)));
            assembled.push(((j, i), assembled.len(), block));
        }
    }
    // Each block the sum of its parts in the order assembled: the diagonal
    // from the identity, the others from zero.
    assembled.sort_unstable_by_key(|&(key, order, _)| (key, order));
    blocks.clear();
    for &((j, i), _, block) in assembled.iter() {
        match blocks.last_mut() {
            Some((key, sum)) if *key == (j, i) => *sum += block,
            _ if j == i => blocks.push(((j, i), block)),
            _ => blocks.push(((j, i), Matrix6::zeros() + block)),
        }
    }
    let mut factors = if n <= DENSE_ISLAND_BODIES {
        dense.factor(blocks, n)?;
        Factors::Dense(dense)
    } else {
        pattern.clear();
        pattern.extend(
            blocks
                .iter()
                .map(|&((j, i), _)| (problem.bodies[i], problem.bodies[j])),
        );
        Factors::Sparse(sparse.factor(blocks, n, pattern)?)
    };
    factors.solve_in_place(&mut delta.view_mut());

    if !problem.rows.is_empty() {
        let m = problem.rows.len();
        let alpha = problem.baumgarte_alpha;
        let beta = alpha * alpha / 4.0;
        constraint_jacobians(bodies, problem.rows, n, local, jt, jm);
        let mut d = d.zeroed(m, 1);
        for (r, row) in problem.rows.iter().enumerate() {
            let mut rate = 0.0;
            let mut gyroscopic = 0.0;
            let sides = [(Some(row.a), row.jacobian_a), (row.b, row.jacobian_b)];
            for (body, jacobian) in sides {
                let Some(body) = body else { continue };
                let side = &bodies[body];
                let jth = jacobian.fixed_rows::<3>(3);
                rate += jacobian.fixed_rows::<3>(0).dot(&side.state.velocity)
                    + jth.dot(&side.state.angular_velocity);
                let Some(k) = local(body) else { continue };
                let w = side.state.angular_velocity;
                gyroscopic +=
                    jth.dot(&(inverse_inertias[k] * w.cross(&(side.world_inertia() * w))));
            }
            let lag = if !problem.stepped {
                0.0
            } else if problem.implicit {
                0.5 * row.velocity_product
            } else {
                0.5 * row.velocity_product - gyroscopic
            };
            d[r] = alpha * (rate - h * lag) + beta * row.value + row.velocity_product - gyroscopic;
        }
        factors.solve_in_place(&mut f.copy_of(jt));
        product(jm.view(), f.view(), &mut schur.zeroed(m, m));
        let mut right = target.zeroed(m, 1);
        product(jm.view(), delta.view(), &mut right);
        for r in 0..m {
            right[r] += d[r] * h;
        }
        let mu = pseudo_inverse.solve(schur.as_slice(), target.as_slice())?;
        let mut correction = correction.zeroed(6 * n, 1);
        product(f.view(), DMatrixView::from_slice(mu, m, 1), &mut correction);
        let mut delta = delta.view_mut();
        delta -= correction;
    }
    per_body(delta.as_slice(), changes)?;
    Ok(changes)
}

/// `out = a b`, summed in plain loops (nalgebra's product of dynamic
/// matrices allocates matrixmultiply's packing buffer).
fn product(a: DMatrixView<f64>, b: DMatrixView<f64>, out: &mut DMatrixViewMut<f64>) {
    debug_assert_eq!(a.ncols(), b.nrows());
    debug_assert_eq!(out.shape(), (a.nrows(), b.ncols()));
    for j in 0..b.ncols() {
        for i in 0..a.nrows() {
            out[(i, j)] = a
                .row(i)
                .iter()
                .zip(b.column(j).iter())
                .map(|(x, y)| x * y)
                .sum();
        }
    }
}

/// `out = aᵀ b`, in plain loops.
fn transposed_product(a: DMatrixView<f64>, b: DMatrixView<f64>, out: &mut DMatrixViewMut<f64>) {
    debug_assert_eq!(a.nrows(), b.nrows());
    debug_assert_eq!(out.shape(), (a.ncols(), b.ncols()));
    for j in 0..b.ncols() {
        for i in 0..a.ncols() {
            out[(i, j)] = a.column(i).dot(&b.column(j));
        }
    }
}

/// `S⁺ b` with the singular values of `S` below [`PSEUDO_INVERSE_TOLERANCE`]
/// of the largest truncated (eq 64), through faer's SVD. Its workspace,
/// factors and answer are kept, grown only by a larger system than any
/// before: a solve allocates nothing after warm-up.
#[derive(Default)]
pub(crate) struct PseudoInverse {
    /// faer's SVD workspace.
    workspace: Vec<MaybeUninit<u8>>,
    /// `S = U Σ Vᵀ`: the singular values in nonincreasing order, `U` and
    /// `V` column-major `m × m`.
    singular_values: Vec<f64>,
    u: Vec<f64>,
    v: Vec<f64>,
    /// `Σ⁺ Uᵀ b` and the answer `V Σ⁺ Uᵀ b`.
    projected: Vec<f64>,
    solution: Vec<f64>,
}

impl PseudoInverse {
    /// `S⁺ b` for `s` column-major `m × m`, `m` the length of `b`; refused
    /// if either is not finite, the SVD does not converge or the answer is
    /// not finite.
    pub(crate) fn solve(&mut self, s: &[f64], b: &[f64]) -> Result<&[f64], SolveError> {
        let m = b.len();
        assert_eq!(s.len(), m * m, "the Schur complement is square");
        let Self {
            workspace,
            singular_values,
            u,
            v,
            projected,
            solution,
        } = self;
        for buffer in [&mut *u, &mut *v] {
            buffer.clear();
            buffer.resize(m * m, 0.0);
        }
        for buffer in [&mut *singular_values, &mut *projected, &mut *solution] {
            buffer.clear();
            buffer.resize(m, 0.0);
        }
        if m == 0 {
            return Ok(solution);
        }
        if s.iter().chain(b).any(|x| !x.is_finite()) {
            return Err(SolveError::NonFinite);
        }
        let matrix = MatRef::from_column_major_slice(s, m, m);
        let request = svd_scratch::<f64>(
            m,
            m,
            ComputeSvdVectors::Full,
            ComputeSvdVectors::Full,
            Par::Seq,
            Default::default(),
        );
        svd(
            matrix,
            DiagMut::from_slice_mut(singular_values),
            Some(MatMut::from_column_major_slice_mut(u, m, m)),
            Some(MatMut::from_column_major_slice_mut(v, m, m)),
            Par::Seq,
            stack(workspace, request),
            Default::default(),
        )
        .map_err(|e| {
            SolveError::Singular(format!("the {m} × {m} Schur complement's SVD: {e:?}"))
        })?;
        let largest = singular_values.iter().copied().fold(0.0, f64::max);
        let tolerance = PSEUDO_INVERSE_TOLERANCE * largest.max(f64::MIN_POSITIVE);
        for (k, &sigma) in singular_values.iter().enumerate() {
            if sigma > tolerance {
                let column = &u[k * m..(k + 1) * m];
                let dot: f64 = column.iter().zip(b).map(|(x, y)| x * y).sum();
                projected[k] = dot / sigma;
            }
        }
        for (k, &p) in projected.iter().enumerate() {
            if p != 0.0 {
                for (x, &vk) in solution.iter_mut().zip(&v[k * m..(k + 1) * m]) {
                    *x += vk * p;
                }
            }
        }
        if solution.iter().any(|x| !x.is_finite()) {
            return Err(SolveError::NonFinite);
        }
        Ok(solution)
    }
}

/// A `6n` vector split into its bodies' linear and angular parts, into
/// `out`; refused if any is not finite.
pub(crate) fn per_body(delta: &[f64], out: &mut Vec<[Vector3<f64>; 2]>) -> Result<(), SolveError> {
    if delta.iter().any(|v| !v.is_finite()) {
        return Err(SolveError::NonFinite);
    }
    out.clear();
    out.extend(delta.chunks_exact(6).map(|c| {
        [
            Vector3::new(c[0], c[1], c[2]),
            Vector3::new(c[3], c[4], c[5]),
        ]
    }));
    Ok(())
}

/// `Jᵀ` (6n × m) and `J M⁻¹` (m × 6n) of `rows` over the `n` bodies that
/// `index` numbers, into `jt` and `jm`; a row's side on any other body
/// (static, or the world) is left out.
pub(crate) fn constraint_jacobians(
    bodies: &[RigidBody],
    rows: &[ConstraintRow],
    n: usize,
    index: impl Fn(usize) -> Option<usize>,
    jt: &mut MatrixBuffer,
    jm: &mut MatrixBuffer,
) {
    let m = rows.len();
    let mut jt = jt.zeroed(6 * n, m);
    let mut jm = jm.zeroed(m, 6 * n);
    for (r, row) in rows.iter().enumerate() {
        for (body, jacobian) in [(Some(row.a), row.jacobian_a), (row.b, row.jacobian_b)] {
            let Some((body, k)) = body.and_then(|b| Some((b, index(b)?))) else {
                continue;
            };
            let side = &bodies[body];
            let angular = side.world_inverse_inertia() * jacobian.fixed_rows::<3>(3);
            for c in 0..3 {
                jt[(6 * k + c, r)] += jacobian[c];
                jt[(6 * k + 3 + c, r)] += jacobian[3 + c];
                jm[(r, 6 * k + c)] += jacobian[c] / side.model.mass;
                jm[(r, 6 * k + 3 + c)] += angular[c];
            }
        }
    }
}

/// Post-stabilisation's displacement (Cline & Pai 2003):
/// `(δx, δθ) = M⁻¹ Jᵀ λ` with `J M⁻¹ Jᵀ λ = −C`, the smallest in the mass
/// metric that takes the island's constraints `rows` to zero to first
/// order. Redundant rows are dropped by eq 64's SVD pseudo-inverse.
/// Returns each of `island`'s bodies' `(δx, δθ)`, for
/// [`RigidBody::displace`].
pub fn constraint_correction<'s>(
    bodies: &[RigidBody],
    island: &[usize],
    rows: &[ConstraintRow],
    scratch: &'s mut SolverScratch,
) -> Result<&'s [[Vector3<f64>; 2]], SolveError> {
    let SolverScratch {
        jt,
        jm,
        schur,
        target,
        correction,
        pseudo_inverse,
        changes,
        ..
    } = scratch;
    let (n, m) = (island.len(), rows.len());
    constraint_jacobians(bodies, rows, n, |b| island.binary_search(&b).ok(), jt, jm);
    product(jm.view(), jt.view(), &mut schur.zeroed(m, m));
    let mut violation = target.zeroed(m, 1);
    for (r, row) in rows.iter().enumerate() {
        violation[r] = -row.value;
    }
    let lambda = pseudo_inverse.solve(schur.as_slice(), target.as_slice())?;
    transposed_product(
        jm.view(),
        DMatrixView::from_slice(lambda, m, 1),
        &mut correction.zeroed(6 * n, 1),
    );
    per_body(correction.as_slice(), changes)?;
    Ok(changes)
}
