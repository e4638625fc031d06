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
//! `10⁻¹⁰ σ_max` truncated, `ΔS = Y − F μ`. `G` is factored once: densely
//! by nalgebra's LU for an island of up to [`DENSE_ISLAND_BODIES`] bodies,
//! else by faer's sparse LU, supernodal: its dense 6 × 6 blocks make
//! supernodes (in the 50-body pile forces, solve and integration took 13 %
//! less time than with the simplicial one faer picks by itself).
//!
//! A step whose poses then move by `h` along the solved velocities
//! (semi-implicit, symplectic Euler) changes `C` by `h (Ċ⁺ − h e)`, not
//! `h Ċ⁺`: the anchors move along arcs (`e = J̇u/2`), and symplectic Euler's
//! rotation also leaves out the gyroscopic term (`e = J̇u/2 − J_θ J⁻¹(ω × Jω)`).
//! Damping `Ċ` would let `C` settle at `−4 h e / α`; such a step damps
//! `Ċ − h e`, the rate at which `C` actually moves, which leaves only a drift
//! falling as `h/α²` with the rate of change of `e`. RK4's stages, which are
//! rates, damp `Ċ`.

use crate::body::RigidBody;
use crate::forces::{ConstraintRow, Forces};
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::prelude::*;
use faer::sparse::linalg::lu::{factorize_symbolic_lu, LuSymbolicParams, NumericLu, SymbolicLu};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::Par;
use foldhash::HashMap;
use haptic_core::{skew, Matrix6};
use nalgebra::{DMatrix, DVector, Matrix3, Vector3};
use std::collections::hash_map::Entry;
use std::collections::BTreeMap;

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
    let domega = inverse_inertia * skew(&momentum) - skew(&body.angular_velocity);
    (Matrix3::identity() - domega * h)
        .try_inverse()
        .unwrap_or_else(Matrix3::identity)
}

/// `G⁻¹` applied to each column of a matrix.
type Solve<'a> = dyn Fn(&DMatrix<f64>) -> DMatrix<f64> + 'a;

/// An island system's nonzero blocks as `(body, body)` pairs.
type BlockPattern = Vec<(usize, usize)>;

/// The symbolic LU factorizations of the islands' systems, kept while an
/// island keeps its bodies and the pattern of its blocks (a resting pile
/// keeps both from step to step).
#[derive(Default)]
pub struct Factorizations {
    /// Keyed by the island's blocks as `(body, body)` pairs, sorted; with
    /// whether it was used since the last [`prune`](Self::prune).
    symbolic: HashMap<BlockPattern, (SymbolicLu<usize>, bool)>,
}

impl Factorizations {
    /// Forgets the factorizations not used since the last call.
    pub fn prune(&mut self) {
        self.symbolic.retain(|_, (_, used)| std::mem::take(used));
    }
}

/// Solves one island's momentum changes `ΔS_i` (in `problem.bodies` order).
pub fn solve_island(
    bodies: &[RigidBody],
    forces: &Forces,
    problem: &IslandProblem,
    h: f64,
    factorizations: &mut Factorizations,
) -> Result<Vec<[Vector3<f64>; 2]>, SolveError> {
    let n = problem.bodies.len();
    let mut local = BTreeMap::new();
    for (k, &b) in problem.bodies.iter().enumerate() {
        local.insert(b, k);
    }
    let maps: Vec<Matrix3<f64>> = problem
        .bodies
        .iter()
        .map(|&b| {
            if problem.implicit {
                rotation_velocity_map(&bodies[b], h)
            } else {
                Matrix3::identity()
            }
        })
        .collect();
    let inverse_inertias: Vec<Matrix3<f64>> = problem
        .bodies
        .iter()
        .map(|&b| bodies[b].world_inverse_inertia())
        .collect();

    // G blocks by (column, row) and the right-hand side h Z.
    let mut blocks: BTreeMap<(usize, usize), Matrix6> = BTreeMap::new();
    let mut rhs = DVector::<f64>::zeros(6 * n);
    for (k, &b) in problem.bodies.iter().enumerate() {
        blocks.insert((k, k), Matrix6::identity());
        rhs.fixed_rows_mut::<6>(6 * k)
            .copy_from(&(forces.wrench[b] * h));
    }
    if problem.implicit {
        for g in problem.gradients.iter().map(|&k| &forces.gradients[k]) {
            let (Some(&i), Some(&j)) = (local.get(&g.on), local.get(&g.by)) else {
                continue;
            };
            let body = &bodies[g.by];
            let (v, w) = (body.velocity, body.angular_velocity);
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
                .copy_from(&((dv + kx * h) * (-h / body.mass)));
            block
                .fixed_view_mut::<6, 3>(0, 3)
                .copy_from(&((dw + kt * h) * inverse_inertias[j] * (-h)));
            *blocks.entry((j, i)).or_insert_with(Matrix6::zeros) += block;
        }
    }
    let mut numeric = NumericLu::<usize, f64>::new();
    let solve = if n <= DENSE_ISLAND_BODIES {
        dense_solver(&blocks, n)?
    } else {
        let pattern = blocks
            .keys()
            .map(|&(j, i)| (problem.bodies[i], problem.bodies[j]))
            .collect();
        sparse_solver(&blocks, n, pattern, factorizations, &mut numeric)?
    };
    let y = solve(&DMatrix::from_column_slice(6 * n, 1, rhs.as_slice()));
    let mut delta = y.column(0).into_owned();

    if !problem.rows.is_empty() {
        let m = problem.rows.len();
        let alpha = problem.baumgarte_alpha;
        let beta = alpha * alpha / 4.0;
        let (jt, jm) = constraint_jacobians(bodies, problem.rows, n, |b| local.get(&b).copied());
        let mut d = DVector::<f64>::zeros(m);
        for (r, row) in problem.rows.iter().enumerate() {
            let mut rate = 0.0;
            let mut gyroscopic = 0.0;
            let sides = [(Some(row.a), row.jacobian_a), (row.b, row.jacobian_b)];
            for (body, jacobian) in sides {
                let Some(body) = body else { continue };
                let state = &bodies[body];
                let jth = jacobian.fixed_rows::<3>(3);
                rate += jacobian.fixed_rows::<3>(0).dot(&state.velocity)
                    + jth.dot(&state.angular_velocity);
                let Some(&k) = local.get(&body) else { continue };
                let w = state.angular_velocity;
                gyroscopic +=
                    jth.dot(&(inverse_inertias[k] * w.cross(&(state.world_inertia() * w))));
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
        let f = solve(&jt);
        let schur = &jm * &f;
        let target = &jm * &delta + d * h;
        delta -= f * pseudo_inverse_solve(schur, &target)?;
    }
    per_body(&delta)
}

/// `S⁺ b` with the singular values of `S` below [`PSEUDO_INVERSE_TOLERANCE`]
/// of the largest truncated (eq 64).
pub(crate) fn pseudo_inverse_solve(
    s: DMatrix<f64>,
    b: &DVector<f64>,
) -> Result<DVector<f64>, SolveError> {
    let svd = s.svd(true, true);
    let largest = svd.singular_values.max();
    svd.solve(b, PSEUDO_INVERSE_TOLERANCE * largest.max(f64::MIN_POSITIVE))
        .map_err(|e| SolveError::Singular(e.to_string()))
}

/// A `6n` vector split into its bodies' linear and angular parts, refused
/// if any is not finite.
pub(crate) fn per_body(delta: &DVector<f64>) -> Result<Vec<[Vector3<f64>; 2]>, SolveError> {
    if delta.iter().any(|v| !v.is_finite()) {
        return Err(SolveError::NonFinite);
    }
    Ok((0..delta.len() / 6)
        .map(|k| {
            [
                delta.fixed_rows::<3>(6 * k).into_owned(),
                delta.fixed_rows::<3>(6 * k + 3).into_owned(),
            ]
        })
        .collect())
}

/// `Jᵀ` (6n × m) and `J M⁻¹` (m × 6n) of `rows` over the `n` bodies that
/// `index` numbers; a row's side on any other body (static, or the world)
/// is left out.
pub(crate) fn constraint_jacobians(
    bodies: &[RigidBody],
    rows: &[ConstraintRow],
    n: usize,
    index: impl Fn(usize) -> Option<usize>,
) -> (DMatrix<f64>, DMatrix<f64>) {
    let m = rows.len();
    let mut jt = DMatrix::<f64>::zeros(6 * n, m);
    let mut jm = DMatrix::<f64>::zeros(m, 6 * n);
    for (r, row) in rows.iter().enumerate() {
        for (body, jacobian) in [(Some(row.a), row.jacobian_a), (row.b, row.jacobian_b)] {
            let Some((body, k)) = body.and_then(|b| Some((b, index(b)?))) else {
                continue;
            };
            let state = &bodies[body];
            let angular = state.world_inverse_inertia() * jacobian.fixed_rows::<3>(3);
            for c in 0..3 {
                jt[(6 * k + c, r)] += jacobian[c];
                jt[(6 * k + 3 + c, r)] += jacobian[3 + c];
                jm[(r, 6 * k + c)] += jacobian[c] / state.mass;
                jm[(r, 6 * k + 3 + c)] += angular[c];
            }
        }
    }
    (jt, jm)
}

/// `G`'s blocks (by column, then row) as one dense matrix, factored by
/// nalgebra's LU.
fn dense_solver(
    blocks: &BTreeMap<(usize, usize), Matrix6>,
    n: usize,
) -> Result<Box<Solve<'static>>, SolveError> {
    let mut g = DMatrix::<f64>::zeros(6 * n, 6 * n);
    for (&(j, i), block) in blocks {
        g.fixed_view_mut::<6, 6>(6 * i, 6 * j).copy_from(block);
    }
    let lu = g.lu();
    if !lu.is_invertible() {
        return Err(SolveError::Singular(format!(
            "the {n}-body island's {0} × {0} system",
            6 * n
        )));
    }
    Ok(Box::new(move |columns: &DMatrix<f64>| {
        // Invertible, as checked: a failure would come out non-finite.
        lu.solve(columns)
            .unwrap_or_else(|| DMatrix::repeat(columns.nrows(), columns.ncols(), f64::NAN))
    }))
}

/// `G`'s blocks (by column, then row) factored by faer's sparse LU,
/// supernodal, its symbolic part kept in `factorizations` under the
/// island's `pattern` and its numeric part in `numeric`.
fn sparse_solver<'a>(
    blocks: &BTreeMap<(usize, usize), Matrix6>,
    n: usize,
    pattern: BlockPattern,
    factorizations: &'a mut Factorizations,
    numeric: &'a mut NumericLu<usize, f64>,
) -> Result<Box<Solve<'a>>, SolveError> {
    let singular = |e: &dyn std::fmt::Debug| SolveError::Singular(format!("{e:?}"));
    // Compressed columns, every entry of every block, zeros included: the
    // pattern is the blocks', so a factorization's symbolic part can be
    // reused.
    let mut column_starts = Vec::with_capacity(6 * n + 1);
    let mut row_indices = Vec::with_capacity(blocks.len() * 36);
    let mut values = Vec::with_capacity(blocks.len() * 36);
    column_starts.push(0);
    let mut from = blocks.iter().peekable();
    for j in 0..n {
        let column: Vec<(usize, &Matrix6)> = std::iter::from_fn(|| {
            from.next_if(|((bj, _), _)| *bj == j)
                .map(|(&(_, i), block)| (i, block))
        })
        .collect();
        for c in 0..6 {
            for &(i, block) in &column {
                row_indices.extend((0..6).map(|r| 6 * i + r));
                values.extend(block.column(c).iter());
            }
            column_starts.push(row_indices.len());
        }
    }
    let g = SparseColMatRef::new(
        SymbolicSparseColMatRef::new_checked(6 * n, 6 * n, &column_starts, None, &row_indices),
        &values,
    );
    let symbolic: &SymbolicLu<usize> = match factorizations.symbolic.entry(pattern) {
        Entry::Occupied(entry) => {
            let (symbolic, used) = entry.into_mut();
            *used = true;
            symbolic
        }
        Entry::Vacant(entry) => {
            let symbolic = factorize_symbolic_lu(
                g.symbolic(),
                LuSymbolicParams {
                    supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SUPERNODAL,
                    ..Default::default()
                },
            )
            .map_err(|e| singular(&e))?;
            &entry.insert((symbolic, true)).0
        }
    };
    let lu = symbolic
        .factorize_numeric_lu(
            numeric,
            g,
            Par::Seq,
            MemStack::new(&mut MemBuffer::new(
                symbolic.factorize_numeric_lu_scratch::<f64>(Par::Seq, Default::default()),
            )),
            Default::default(),
        )
        .map_err(|e| singular(&e))?;
    Ok(Box::new(move |columns: &DMatrix<f64>| {
        let mut m = Mat::<f64>::from_fn(columns.nrows(), columns.ncols(), |r, c| columns[(r, c)]);
        let scratch = symbolic.solve_in_place_scratch::<f64>(columns.ncols(), Par::Seq);
        lu.solve_in_place_with_conj(
            faer::Conj::No,
            m.as_mut(),
            Par::Seq,
            MemStack::new(&mut MemBuffer::new(scratch)),
        );
        DMatrix::from_fn(columns.nrows(), columns.ncols(), |r, c| m[(r, c)])
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    /// A chain of `n` bodies' blocks: identity plus small random diagonal
    /// and neighbour blocks, by (column, row).
    fn chain_blocks(n: usize, rng: &mut Pcg64) -> BTreeMap<(usize, usize), Matrix6> {
        let mut random = || Matrix6::from_fn(|_, _| rng.gen_range(-0.1..0.1));
        let mut blocks = BTreeMap::new();
        for k in 0..n {
            blocks.insert((k, k), Matrix6::identity() + random());
            if k + 1 < n {
                blocks.insert((k, k + 1), random());
                blocks.insert((k + 1, k), random());
            }
        }
        blocks
    }

    #[test]
    fn dense_and_sparse_solvers_agree_and_solve_the_system() {
        let mut rng = Pcg64::seed_from_u64(3);
        let n = DENSE_ISLAND_BODIES + 2;
        let blocks = chain_blocks(n, &mut rng);
        let mut g = DMatrix::<f64>::zeros(6 * n, 6 * n);
        for (&(j, i), block) in &blocks {
            g.fixed_view_mut::<6, 6>(6 * i, 6 * j).copy_from(block);
        }
        let rhs = DMatrix::<f64>::from_fn(6 * n, 2, |_, _| rng.gen_range(-1.0..1.0));
        let dense = dense_solver(&blocks, n).unwrap()(&rhs);
        let (mut factorizations, mut numeric) = (Factorizations::default(), NumericLu::new());
        let pattern: BlockPattern = blocks.keys().copied().collect();
        let sparse =
            sparse_solver(&blocks, n, pattern, &mut factorizations, &mut numeric).unwrap()(&rhs);
        assert!((&g * &dense - &rhs).amax() < 1e-12);
        assert!((&dense - &sparse).amax() < 1e-12);
    }

    #[test]
    fn a_singular_island_is_refused_by_both_solvers() {
        // Body 1's columns are zero.
        let mut blocks = chain_blocks(2, &mut Pcg64::seed_from_u64(4));
        blocks.insert((1, 0), Matrix6::zeros());
        blocks.insert((1, 1), Matrix6::zeros());
        assert!(matches!(
            dense_solver(&blocks, 2),
            Err(SolveError::Singular(_))
        ));
        let (mut factorizations, mut numeric) = (Factorizations::default(), NumericLu::new());
        let pattern: BlockPattern = blocks.keys().copied().collect();
        let sparse = sparse_solver(&blocks, 2, pattern, &mut factorizations, &mut numeric);
        // faer's LU may factor a singular matrix without error; what it
        // then solves is not finite.
        if let Ok(solve) = sparse {
            let x = solve(&DMatrix::from_element(12, 1, 1.0));
            assert!(x.iter().any(|v| !v.is_finite()));
        }
    }
}
