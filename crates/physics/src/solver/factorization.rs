//! `G`'s factorizations, dense (nalgebra's LU) and sparse (faer's
//! supernodal LU), and the matrix buffers a solve reuses.

use super::SolveError;
use faer::dyn_stack::{MemStack, StackReq};
use faer::sparse::linalg::lu::{
    factorize_symbolic_lu, LuRef, LuSymbolicParams, NumericLu, SymbolicLu,
};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Mat, Par};
use foldhash::HashMap;
use haptic_core::Matrix6;
use nalgebra::linalg::{gauss_step, gauss_step_swap};
use nalgebra::{DMatrixView, DMatrixViewMut};
use std::mem::MaybeUninit;

/// An island's blocks of `G`, `((column body, row body), block)` with the
/// bodies numbered in the island, sorted.
pub type Blocks = [((usize, usize), Matrix6)];

/// A column-major matrix whose storage is kept from solve to solve: it
/// grows to the largest island's and is never given back.
#[derive(Default)]
pub struct MatrixBuffer {
    values: Vec<f64>,
    nrows: usize,
    ncols: usize,
}

impl MatrixBuffer {
    /// The buffer as an `nrows × ncols` matrix of zeros.
    pub fn zeroed(&mut self, nrows: usize, ncols: usize) -> DMatrixViewMut<'_, f64> {
        self.values.clear();
        self.values.resize(nrows * ncols, 0.0);
        (self.nrows, self.ncols) = (nrows, ncols);
        self.view_mut()
    }

    /// The buffer as a copy of `other`.
    pub fn copy_of(&mut self, other: &MatrixBuffer) -> DMatrixViewMut<'_, f64> {
        self.values.clone_from(&other.values);
        (self.nrows, self.ncols) = (other.nrows, other.ncols);
        self.view_mut()
    }

    pub fn view(&self) -> DMatrixView<'_, f64> {
        DMatrixView::from_slice(&self.values, self.nrows, self.ncols)
    }

    pub fn view_mut(&mut self) -> DMatrixViewMut<'_, f64> {
        DMatrixViewMut::from_slice(&mut self.values, self.nrows, self.ncols)
    }

    pub fn as_slice(&self) -> &[f64] {
        &self.values
    }
}

/// `G` as one dense matrix, factored in place by nalgebra's LU with
/// partial pivoting (its `LU::new`, step by step, on the buffer).
#[derive(Default)]
pub struct DenseLu {
    lu: MatrixBuffer,
    /// The row swaps, in order.
    swaps: Vec<(usize, usize)>,
}

impl DenseLu {
    /// Factors the `6n × 6n` matrix of `blocks`; refuses a singular one.
    pub fn factor(&mut self, blocks: &Blocks, n: usize) -> Result<(), SolveError> {
        let dim = 6 * n;
        let mut g = self.lu.zeroed(dim, dim);
        for &((j, i), block) in blocks {
            g.fixed_view_mut::<6, 6>(6 * i, 6 * j).copy_from(&block);
        }
        self.swaps.clear();
        for i in 0..dim {
            let piv = g.view_range(i.., i).icamax() + i;
            let diag = g[(piv, i)];
            if diag == 0.0 {
                continue;
            }
            if piv != i {
                self.swaps.push((i, piv));
                g.columns_range_mut(..i).swap_rows(i, piv);
                gauss_step_swap(&mut g, diag, i, piv);
            } else {
                gauss_step(&mut g, diag, i);
            }
        }
        if (0..dim).any(|i| g[(i, i)] == 0.0) {
            return Err(SolveError::Singular(format!(
                "the {n}-body island's {dim} × {dim} system"
            )));
        }
        Ok(())
    }

    /// Replaces each column `b` by `G⁻¹ b`.
    pub fn solve_in_place(&self, columns: &mut DMatrixViewMut<f64>) {
        for &(a, b) in &self.swaps {
            columns.swap_rows(a, b);
        }
        let lu = self.lu.view();
        // Invertible, as checked when factored: neither solve can fail.
        let _ = lu.solve_lower_triangular_with_diag_mut(columns, 1.0);
        let _ = lu.solve_upper_triangular_mut(columns);
    }
}

/// An island system's nonzero blocks as `(body, body)` pairs.
type BlockPattern = Vec<(usize, usize)>;

/// `G` factored by faer's sparse LU, supernodal. Its symbolic part is kept
/// while an island keeps its bodies and the pattern of its blocks (a
/// resting pile keeps both from step to step); the numeric part, the
/// compressed columns and the workspace are reused.
#[derive(Default)]
pub struct SparseLu {
    /// Keyed by the island's blocks as `(body, body)` pairs, sorted; with
    /// whether it was used since the last [`prune`](Self::prune).
    symbolic: HashMap<BlockPattern, (SymbolicLu<usize>, bool)>,
    numeric: Option<NumericLu<usize, f64>>,
    column_starts: Vec<usize>,
    row_indices: Vec<usize>,
    values: Vec<f64>,
    workspace: Vec<MaybeUninit<u8>>,
    /// The columns being solved, as faer takes them.
    columns: Option<Mat<f64>>,
}

/// A factored [`SparseLu`]: the numeric factors, and the buffers its solves
/// use.
pub struct SparseFactors<'a> {
    lu: LuRef<'a, usize, f64>,
    workspace: &'a mut Vec<MaybeUninit<u8>>,
    columns: &'a mut Mat<f64>,
}

/// A stack of at least `request` in `workspace`, grown if it is not.
pub(crate) fn stack(workspace: &mut Vec<MaybeUninit<u8>>, request: StackReq) -> &mut MemStack {
    let bytes = request.unaligned_bytes_required();
    if workspace.len() < bytes {
        workspace.resize(bytes, MaybeUninit::uninit());
    }
    MemStack::new(workspace)
}

impl SparseLu {
    /// Forgets the symbolic factorizations not used since the last call.
    pub fn prune(&mut self) {
        self.symbolic.retain(|_, (_, used)| std::mem::take(used));
    }

    /// Factors the `6n × 6n` matrix of `blocks`, whose pattern in the
    /// world's bodies is `pattern`.
    pub fn factor<'a>(
        &'a mut self,
        blocks: &Blocks,
        n: usize,
        pattern: &[(usize, usize)],
    ) -> Result<SparseFactors<'a>, SolveError> {
        let singular = |e: &dyn std::fmt::Debug| SolveError::Singular(format!("{e:?}"));
        // Compressed columns, every entry of every block, zeros included:
        // the pattern is the blocks', so a factorization's symbolic part
        // can be reused.
        let (column_starts, row_indices, values) = (
            &mut self.column_starts,
            &mut self.row_indices,
            &mut self.values,
        );
        column_starts.clear();
        row_indices.clear();
        values.clear();
        column_starts.push(0);
        let mut start = 0;
        for j in 0..n {
            let end = start + blocks[start..].partition_point(|((bj, _), _)| *bj == j);
            let column = &blocks[start..end];
            for c in 0..6 {
                for &((_, i), block) in column {
                    row_indices.extend((0..6).map(|r| 6 * i + r));
                    values.extend(block.column(c).iter());
                }
                column_starts.push(row_indices.len());
            }
            start = end;
        }
        let g = SparseColMatRef::new(
            SymbolicSparseColMatRef::new_checked(6 * n, 6 * n, column_starts, None, row_indices),
            values,
        );
        if !self.symbolic.contains_key(pattern) {
            let symbolic = factorize_symbolic_lu(
                g.symbolic(),
                LuSymbolicParams {
                    supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SUPERNODAL,
                    ..Default::default()
                },
            )
            .map_err(|e| singular(&e))?;
            self.symbolic.insert(pattern.to_vec(), (symbolic, false));
        }
        let (symbolic, used) = self
            .symbolic
            .get_mut(pattern)
            .expect("inserted if it was missing");
        *used = true;
        let request = symbolic.factorize_numeric_lu_scratch::<f64>(Par::Seq, Default::default());
        let lu = symbolic
            .factorize_numeric_lu(
                self.numeric.get_or_insert_with(NumericLu::new),
                g,
                Par::Seq,
                stack(&mut self.workspace, request),
                Default::default(),
            )
            .map_err(|e| singular(&e))?;
        Ok(SparseFactors {
            lu,
            workspace: &mut self.workspace,
            columns: self.columns.get_or_insert_with(|| Mat::zeros(0, 0)),
        })
    }
}

impl SparseFactors<'_> {
    /// Replaces each column `b` by `G⁻¹ b`.
    pub fn solve_in_place(&mut self, columns: &mut DMatrixViewMut<f64>) {
        let (nrows, ncols) = columns.shape();
        self.columns.resize_with(nrows, ncols, |_, _| 0.0);
        for c in 0..ncols {
            for r in 0..nrows {
                self.columns[(r, c)] = columns[(r, c)];
            }
        }
        let request = self
            .lu
            .symbolic()
            .solve_in_place_scratch::<f64>(ncols, Par::Seq);
        self.lu.solve_in_place_with_conj(
            faer::Conj::No,
            self.columns.as_mut(),
            Par::Seq,
            stack(self.workspace, request),
        );
        for c in 0..ncols {
            for r in 0..nrows {
                columns[(r, c)] = self.columns[(r, c)];
            }
        }
    }
}

/// `G` factored one way or the other.
pub enum Factors<'a> {
    Dense(&'a DenseLu),
    Sparse(SparseFactors<'a>),
}

impl Factors<'_> {
    /// Replaces each column `b` by `G⁻¹ b`.
    pub fn solve_in_place(&mut self, columns: &mut DMatrixViewMut<f64>) {
        match self {
            Factors::Dense(lu) => lu.solve_in_place(columns),
            Factors::Sparse(factors) => factors.solve_in_place(columns),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    /// A chain of `n` bodies' blocks: identity plus small random diagonal
    /// and neighbour blocks, by (column, row), sorted.
    fn chain_blocks(n: usize, rng: &mut Pcg64) -> Vec<((usize, usize), Matrix6)> {
        let mut random = || Matrix6::from_fn(|_, _| rng.gen_range(-0.1..0.1));
        let mut blocks = Vec::new();
        for k in 0..n {
            blocks.push(((k, k), Matrix6::identity() + random()));
            if k + 1 < n {
                blocks.push(((k, k + 1), random()));
                blocks.push(((k + 1, k), random()));
            }
        }
        blocks.sort_by_key(|&(key, _)| key);
        blocks
    }

    fn pattern(blocks: &Blocks) -> Vec<(usize, usize)> {
        blocks.iter().map(|&(key, _)| key).collect()
    }

    #[test]
    fn dense_and_sparse_solvers_agree_and_solve_the_system() {
        let mut rng = Pcg64::seed_from_u64(3);
        let n = super::super::DENSE_ISLAND_BODIES + 2;
        let blocks = chain_blocks(n, &mut rng);
        let mut g = DMatrix::<f64>::zeros(6 * n, 6 * n);
        for &((j, i), block) in &blocks {
            g.fixed_view_mut::<6, 6>(6 * i, 6 * j).copy_from(&block);
        }
        let rhs = DMatrix::<f64>::from_fn(6 * n, 2, |_, _| rng.gen_range(-1.0..1.0));
        let mut dense = DenseLu::default();
        dense.factor(&blocks, n).unwrap();
        let mut dense_x = rhs.clone();
        dense.solve_in_place(&mut dense_x.as_view_mut());
        let mut sparse = SparseLu::default();
        let mut sparse_x = rhs.clone();
        sparse
            .factor(&blocks, n, &pattern(&blocks))
            .unwrap()
            .solve_in_place(&mut sparse_x.as_view_mut());
        assert!((&g * &dense_x - &rhs).amax() < 1e-12);
        assert!((&dense_x - &sparse_x).amax() < 1e-12);
    }

    #[test]
    fn a_singular_island_is_refused_by_both_solvers() {
        // Body 1's columns are zero.
        let mut blocks = chain_blocks(2, &mut Pcg64::seed_from_u64(4));
        for (key, block) in &mut blocks {
            if key.0 == 1 {
                *block = Matrix6::zeros();
            }
        }
        assert!(matches!(
            DenseLu::default().factor(&blocks, 2),
            Err(SolveError::Singular(_))
        ));
        let mut sparse = SparseLu::default();
        // faer's LU may factor a singular matrix without error; what it
        // then solves is not finite.
        if let Ok(mut factors) = sparse.factor(&blocks, 2, &pattern(&blocks)) {
            let mut x = DMatrix::from_element(12, 1, 1.0);
            factors.solve_in_place(&mut x.as_view_mut());
            assert!(x.iter().any(|v| !v.is_finite()));
        }
    }
}
