//! A sparse matrix of 3×3 blocks over a body's nodes (block compressed
//! rows), for assembling a force-based paradigm's implicit step matrix once
//! per step and multiplying by it in every conjugate-gradient iteration.

use nalgebra::{Matrix3, Vector3};

/// The blocks of a symmetric node-by-node matrix whose pattern (which node
/// pairs couple) is fixed when it is built; the values are refilled each
/// step.
#[derive(Clone, Debug, Default)]
pub struct BlockMatrix {
    /// Row `i`'s blocks are `row_starts[i]..row_starts[i + 1]`.
    row_starts: Vec<u32>,
    /// Each block's column, ascending within a row.
    columns: Vec<u32>,
    blocks: Vec<Matrix3<f64>>,
    /// Each row's diagonal block.
    diagonal: Vec<u32>,
}

impl BlockMatrix {
    /// The pattern of `nodes` rows coupling each node with itself and with
    /// every node it shares a group of `groups` with; values zero.
    pub fn with_pattern<const K: usize>(nodes: usize, groups: &[[u32; K]]) -> Self {
        let mut neighbours: Vec<Vec<u32>> = (0..nodes as u32).map(|i| vec![i]).collect();
        for group in groups {
            for &a in group {
                neighbours[a as usize].extend_from_slice(group);
            }
        }
        let mut row_starts = Vec::with_capacity(nodes + 1);
        let mut columns = Vec::new();
        let mut diagonal = Vec::with_capacity(nodes);
        row_starts.push(0);
        for (i, row) in neighbours.iter_mut().enumerate() {
            row.sort_unstable();
            row.dedup();
            let start = columns.len();
            columns.extend_from_slice(row);
            let own = row
                .binary_search(&(i as u32))
                .expect("each row holds itself");
            diagonal.push((start + own) as u32);
            row_starts.push(columns.len() as u32);
        }
        Self {
            blocks: vec![Matrix3::zeros(); columns.len()],
            row_starts,
            columns,
            diagonal,
        }
    }

    /// Rows (and columns).
    pub fn nodes(&self) -> usize {
        self.diagonal.len()
    }

    /// Blocks stored.
    pub fn block_count(&self) -> usize {
        self.blocks.len()
    }

    /// Where block `(row, column)` is stored, if the pattern has it.
    pub fn slot(&self, row: u32, column: u32) -> Option<u32> {
        let start = self.row_starts[row as usize] as usize;
        let end = self.row_starts[row as usize + 1] as usize;
        self.columns[start..end]
            .binary_search(&column)
            .ok()
            .map(|k| (start + k) as u32)
    }

    /// Sets every block to zero, keeping the pattern.
    pub fn clear(&mut self) {
        self.blocks.iter_mut().for_each(|b| *b = Matrix3::zeros());
    }

    /// Adds `block` to the block stored at `slot`.
    pub fn add(&mut self, slot: u32, block: &Matrix3<f64>) {
        self.blocks[slot as usize] += block;
    }

    /// Adds `value` times the identity to row `i`'s diagonal block.
    pub fn add_to_diagonal(&mut self, i: usize, value: f64) {
        let block = &mut self.blocks[self.diagonal[i] as usize];
        for k in 0..3 {
            block[(k, k)] += value;
        }
    }

    /// Row `i`'s diagonal block.
    pub fn diagonal_block(&self, i: usize) -> &Matrix3<f64> {
        &self.blocks[self.diagonal[i] as usize]
    }

    /// `out = A y`.
    pub fn multiply(&self, y: &[Vector3<f64>], out: &mut [Vector3<f64>]) {
        for (i, o) in out.iter_mut().enumerate() {
            let (start, end) = (self.row_starts[i] as usize, self.row_starts[i + 1] as usize);
            let mut sum = Vector3::zeros();
            for (block, &column) in self.blocks[start..end]
                .iter()
                .zip(&self.columns[start..end])
            {
                sum += block * y[column as usize];
            }
            *o = sum;
        }
    }
}

impl BlockMatrix {
    /// `out += s (A − diag(d)) y`, `d_i = diagonal(i)` taken off each
    /// diagonal block as a multiple of the identity.
    pub fn add_scaled_product(
        &self,
        s: f64,
        diagonal: impl Fn(usize) -> f64,
        y: &[Vector3<f64>],
        out: &mut [Vector3<f64>],
    ) {
        for (i, o) in out.iter_mut().enumerate() {
            let (start, end) = (self.row_starts[i] as usize, self.row_starts[i + 1] as usize);
            let mut sum = -diagonal(i) * y[i];
            for (block, &column) in self.blocks[start..end]
                .iter()
                .zip(&self.columns[start..end])
            {
                sum += block * y[column as usize];
            }
            *o += s * sum;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiplies_as_the_dense_matrix_it_holds() {
        // Two triangles sharing the edge 1–2 over four nodes.
        let groups = [[0u32, 1, 2], [1, 2, 3]];
        let mut matrix = BlockMatrix::with_pattern(4, &groups);
        assert_eq!(matrix.block_count(), 3 + 4 + 4 + 3);
        assert_eq!(matrix.slot(0, 3), None);
        let mut dense = [[Matrix3::zeros(); 4]; 4];
        for (k, group) in groups.iter().enumerate() {
            for &a in group {
                for &b in group {
                    let block = Matrix3::from_fn(|r, c| {
                        (k + 1) as f64 * (r + 2 * c + 1) as f64 + (a * b) as f64
                    });
                    matrix.add(matrix.slot(a, b).unwrap(), &block);
                    dense[a as usize][b as usize] += block;
                }
            }
        }
        matrix.add_to_diagonal(3, 2.0);
        dense[3][3] += 2.0 * Matrix3::identity();
        assert_eq!(*matrix.diagonal_block(3), dense[3][3]);
        let y: Vec<Vector3<f64>> = (0..4)
            .map(|i| Vector3::new(i as f64, 1.0 - i as f64, 0.5 * i as f64))
            .collect();
        let mut out = vec![Vector3::zeros(); 4];
        matrix.multiply(&y, &mut out);
        for a in 0..4 {
            let expected: Vector3<f64> = (0..4).map(|b| dense[a][b] * y[b]).sum();
            assert!((out[a] - expected).norm() < 1e-12, "row {a}");
        }
        let mut scaled = vec![Vector3::new(1.0, 2.0, 3.0); 4];
        matrix.add_scaled_product(0.5, |i| i as f64, &y, &mut scaled);
        for a in 0..4 {
            let expected = Vector3::new(1.0, 2.0, 3.0) + 0.5 * (out[a] - a as f64 * y[a]);
            assert!((scaled[a] - expected).norm() < 1e-12, "row {a}");
        }
        matrix.clear();
        matrix.multiply(&y, &mut out);
        assert!(out.iter().all(|o| *o == Vector3::zeros()));
    }
}
