//! The equality rows eliminated exactly, beyond the paper.
//!
//! Projected Gauss–Seidel carries an impulse one row per sweep, and a row
//! between a light node and a heavy body moves the body by the light
//! node's share: a rope of 50 one-gram nodes between bodies of 0.3 and
//! 0.2 kg (the Fig. 4 machine) needs thousands of sweeps to carry their
//! weights. Here the equality rows `e` (anchors, inextensibility, the rigid
//! joints) are instead held exactly while the other rows `o` (contacts,
//! friction, bending) are swept:
//!
//! - `A_ee = J_e W J_eᵀ` (`W` the participants' inverse masses and world
//!   inverse inertias) is factored by sparse Cholesky (faer; its ordering
//!   kept while the pattern stays the same);
//! - each other row's coupling `a_i = J_e W J_iᵀ` gives `z_i = A_ee⁻¹ a_i`:
//!   an impulse `δ` along row `i` is answered by `−δ z_i` along the
//!   equality rows, which keeps `J_e v` where it was;
//! - the row is swept with the Schur complement's diagonal
//!   `s_i = J_i W J_iᵀ − a_i · z_i` as its effective mass: what the
//!   contact of a node on a taut rope meets is the whole rope and the
//!   bodies on it.
//!
//! The equality rows are bilateral here (an inextensible edge holds its
//! length in compression too, a chain of rods), and the memory and the work
//! per sweep grow as `n_e · n_o`: meant for ropes and mechanisms, not for
//! a 5,000-edge cloth, for which [`DirectSolver::prepare`] declines (more
//! than [`DirectSolver::MAX_COUPLINGS`]) and the PGS solves every row.

use crate::constraints::{Row, RowSource, Rows};
use crate::solver::{HeldRows, Velocities};
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::cholesky::llt::factor::LltRegularization;
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, CholeskySymbolicParams, LltRef, SymbolicCholesky,
    SymmetricOrdering,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par, Side};
use std::mem::MaybeUninit;

/// Whether `row` is one of the rows held exactly: anchors,
/// inextensibility and the rigid joints.
pub fn is_equality(row: &Row) -> bool {
    matches!(
        row.source,
        RowSource::Anchor { .. } | RowSource::Inextensibility { .. } | RowSource::Joint { .. }
    )
}

/// A participant a row acts on: a node, or a rigid body (numbered past the
/// nodes).
type Participant = u32;

/// The most distinct participants a row has (four nodes, or three nodes and
/// a body, or two bodies).
const PARTICIPANTS: usize = 6;

/// The equality rows' factorisation and the other rows' answers.
#[derive(Default)]
pub struct DirectSolver {
    /// Indices of the equality rows among the rows.
    equality: Vec<u32>,
    /// Each row's place among the equality rows, or among the others.
    place: Vec<u32>,
    /// (participant, equality row) pairs, sorted.
    incidence: Vec<(Participant, u32)>,
    column_starts: Vec<usize>,
    row_indices: Vec<usize>,
    values: Vec<f64>,
    symbolic: Option<SymbolicCholesky<usize>>,
    /// The pattern `symbolic` was made for.
    symbolic_pattern: (Vec<usize>, Vec<usize>),
    factor: Vec<f64>,
    workspace: Vec<MaybeUninit<u8>>,
    pairs: Vec<(usize, usize)>,
    /// `z_i` of each other row, `equality.len()` values each.
    answers: Vec<f64>,
    rhs: Vec<f64>,
}

impl std::fmt::Debug for DirectSolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectSolver")
            .field("equality_rows", &self.equality.len())
            .finish()
    }
}

fn stack(workspace: &mut Vec<MaybeUninit<u8>>, request: StackReq) -> &mut MemStack {
    let bytes = request.unaligned_bytes_required();
    if workspace.len() < bytes {
        workspace.resize(bytes, MaybeUninit::uninit());
    }
    MemStack::new(workspace)
}

/// The distinct participants of `row`.
fn participants(rows: &Rows, row: &Row, nodes: u32) -> ([Participant; PARTICIPANTS], usize) {
    let mut list = ([0; PARTICIPANTS], 0);
    let terms = rows.node_terms[row.nodes.0 as usize..row.nodes.1 as usize]
        .iter()
        .map(|t| t.node)
        .chain(
            rows.rigid_terms[row.rigids.0 as usize..row.rigids.1 as usize]
                .iter()
                .map(|t| nodes + t.body),
        );
    for p in terms {
        if !list.0[..list.1].contains(&p) && list.1 < PARTICIPANTS {
            list.0[list.1] = p;
            list.1 += 1;
        }
    }
    list
}

/// `J_a W J_bᵀ` through participant `p`.
fn coupling(
    rows: &Rows,
    a: &Row,
    b: &Row,
    p: Participant,
    nodes: u32,
    inverse_masses: &[f64],
) -> f64 {
    if p < nodes {
        let sum = |row: &Row| {
            rows.node_terms[row.nodes.0 as usize..row.nodes.1 as usize]
                .iter()
                .filter(|t| t.node == p)
                .map(|t| t.jacobian)
                .sum::<nalgebra::Vector3<f64>>()
        };
        inverse_masses[p as usize] * sum(a).dot(&sum(b))
    } else {
        let body = p - nodes;
        let terms = |row: &Row| {
            rows.rigid_terms[row.rigids.0 as usize..row.rigids.1 as usize]
                .iter()
                .filter(move |t| t.body == body)
        };
        terms(a)
            .flat_map(|ta| {
                terms(b).map(move |tb| {
                    ta.linear.dot(&tb.linear_response) + ta.angular.dot(&tb.angular_response)
                })
            })
            .sum()
    }
}

/// `J_a W J_bᵀ` over every participant the rows share.
fn shared_coupling(rows: &Rows, a: &Row, b: &Row, nodes: u32, inverse_masses: &[f64]) -> f64 {
    let (pa, na) = participants(rows, a, nodes);
    let (pb, nb) = participants(rows, b, nodes);
    pa[..na]
        .iter()
        .filter(|p| pb[..nb].contains(p))
        .map(|&p| coupling(rows, a, b, p, nodes, inverse_masses))
        .sum()
}

impl DirectSolver {
    /// The largest `n_e · n_o` the solver takes on.
    pub const MAX_COUPLINGS: usize = 4_000_000;

    /// Factors the equality rows of `rows` (the first `nodes` participants
    /// nodes with `inverse_masses`, the rest rigid bodies), finds every
    /// other row's answer `z_i` and sets its effective mass to the Schur
    /// complement's. `false` when there are no equality rows, too many
    /// couplings, or the factorisation fails: the PGS then solves every row.
    pub fn prepare(&mut self, rows: &mut Rows, nodes: u32, inverse_masses: &[f64]) -> bool {
        self.equality.clear();
        self.place.clear();
        let mut others = 0u32;
        for (i, row) in rows.rows.iter().enumerate() {
            if is_equality(row) {
                self.place.push(self.equality.len() as u32);
                self.equality.push(i as u32);
            } else {
                self.place.push(others);
                others += 1;
            }
        }
        let n = self.equality.len();
        if n == 0 || n * others as usize > Self::MAX_COUPLINGS {
            return false;
        }
        self.incidence.clear();
        for (k, &i) in self.equality.iter().enumerate() {
            let (list, count) = participants(rows, &rows.rows[i as usize], nodes);
            self.incidence
                .extend(list[..count].iter().map(|&p| (p, k as u32)));
        }
        self.incidence.sort_unstable();
        // The lower triangle's pattern: pairs of equality rows sharing a
        // participant.
        self.pairs.clear();
        for group in self.incidence.chunk_by(|x, y| x.0 == y.0) {
            for (x, &(_, a)) in group.iter().enumerate() {
                for &(_, b) in &group[..=x] {
                    let (a, b) = (a as usize, b as usize);
                    self.pairs.push((a.min(b), a.max(b)));
                }
            }
        }
        self.pairs.extend((0..n).map(|k| (k, k)));
        self.pairs.sort_unstable();
        self.pairs.dedup();
        self.column_starts.clear();
        self.row_indices.clear();
        self.column_starts.push(0);
        for column in 0..n {
            let start = self.row_indices.len();
            let end = start + self.pairs[start..].partition_point(|&(c, _)| c == column);
            self.row_indices
                .extend(self.pairs[start..end].iter().map(|&(_, r)| r));
            self.column_starts.push(self.row_indices.len());
        }
        self.values.clear();
        for c in 0..n {
            for k in self.column_starts[c]..self.column_starts[c + 1] {
                let (a, b) = (
                    &rows.rows[self.equality[c] as usize],
                    &rows.rows[self.equality[self.row_indices[k]] as usize],
                );
                self.values
                    .push(shared_coupling(rows, a, b, nodes, inverse_masses));
            }
        }
        let same = self.symbolic.is_some()
            && self.symbolic_pattern.0 == self.column_starts
            && self.symbolic_pattern.1 == self.row_indices;
        if !same {
            self.symbolic = factorize_symbolic_cholesky(
                SymbolicSparseColMatRef::new_checked(
                    n,
                    n,
                    &self.column_starts,
                    None,
                    &self.row_indices,
                ),
                Side::Lower,
                SymmetricOrdering::Amd,
                CholeskySymbolicParams::default(),
            )
            .ok();
            self.symbolic_pattern = (self.column_starts.clone(), self.row_indices.clone());
        }
        let Some(symbolic) = self.symbolic.as_ref() else {
            return false;
        };
        self.factor.resize(symbolic.len_val(), 0.0);
        let request = StackReq::any_of(&[
            symbolic.factorize_numeric_llt_scratch::<f64>(Par::Seq, Default::default()),
            symbolic.solve_in_place_scratch::<f64>(1, Par::Seq),
        ]);
        let matrix = SparseColMatRef::new(
            SymbolicSparseColMatRef::new_checked(
                n,
                n,
                &self.column_starts,
                None,
                &self.row_indices,
            ),
            &self.values,
        );
        let factored = symbolic
            .factorize_numeric_llt(
                &mut self.factor,
                matrix,
                Side::Lower,
                LltRegularization::default(),
                Par::Seq,
                stack(&mut self.workspace, request),
                Default::default(),
            )
            .is_ok();
        if !factored {
            return false;
        }
        // Each other row's answer, and its effective mass through them.
        self.answers.clear();
        self.answers.resize(n * others as usize, 0.0);
        let llt = LltRef::<'_, usize, f64>::new(symbolic, &self.factor);
        for (i, place) in self.place.iter().enumerate() {
            let row = rows.rows[i];
            if is_equality(&row) {
                continue;
            }
            let z = &mut self.answers[*place as usize * n..(*place as usize + 1) * n];
            let (list, count) = participants(rows, &row, nodes);
            for &p in &list[..count] {
                let from = self.incidence.partition_point(|&(q, _)| q < p);
                for &(_, k) in self.incidence[from..].iter().take_while(|&&(q, _)| q == p) {
                    z[k as usize] += coupling(
                        rows,
                        &rows.rows[self.equality[k as usize] as usize],
                        &row,
                        p,
                        nodes,
                        inverse_masses,
                    );
                }
            }
            if z.iter().all(|v| *v == 0.0) {
                continue;
            }
            self.rhs.clear();
            self.rhs.extend_from_slice(z);
            llt.solve_in_place_with_conj(
                Conj::No,
                MatMut::from_column_major_slice_mut(z, n, 1),
                Par::Seq,
                stack(&mut self.workspace, request),
            );
            let reduced = shared_coupling(rows, &row, &row, nodes, inverse_masses)
                - self
                    .rhs
                    .iter()
                    .zip(z.iter())
                    .map(|(a, b)| a * b)
                    .sum::<f64>();
            if reduced > 1e-12 * (1.0 / row.inverse_effective_mass) && reduced.is_finite() {
                rows.rows[i].inverse_effective_mass = 1.0 / reduced;
            }
        }
        true
    }

    /// Solves the equality rows at the current velocities, adding the
    /// impulses to the rows and applying them; returns the RMS impulse
    /// change.
    pub fn solve(&mut self, rows: &mut Rows, velocities: &mut Velocities) -> f64 {
        let n = self.equality.len();
        let Some(symbolic) = self.symbolic.as_ref() else {
            return 0.0;
        };
        self.rhs.clear();
        for &i in &self.equality {
            let row = rows.rows[i as usize];
            self.rhs
                .push(row.target - velocities.row_velocity(rows, &row));
        }
        let request = symbolic.solve_in_place_scratch::<f64>(1, Par::Seq);
        LltRef::<'_, usize, f64>::new(symbolic, &self.factor).solve_in_place_with_conj(
            Conj::No,
            MatMut::from_column_major_slice_mut(&mut self.rhs, n, 1),
            Par::Seq,
            stack(&mut self.workspace, request),
        );
        let mut squares = 0.0;
        for (k, &i) in self.equality.iter().enumerate() {
            let delta = self.rhs[k];
            if delta.is_finite() {
                rows.rows[i as usize].impulse += delta;
                velocities.apply(rows, &rows.rows[i as usize], delta);
                squares += delta * delta;
            }
        }
        (squares / n.max(1) as f64).sqrt()
    }
}

impl HeldRows for DirectSolver {
    fn holds(&self, row: &Row) -> bool {
        is_equality(row)
    }

    /// The equality rows' answer to impulse `delta` along other row `row`:
    /// `−δ z_i`, added to their impulses and applied.
    fn answer(&self, rows: &mut Rows, velocities: &mut Velocities, row: usize, delta: f64) {
        let n = self.equality.len();
        let place = self.place[row] as usize;
        for (k, z) in self.answers[place * n..(place + 1) * n].iter().enumerate() {
            if *z != 0.0 {
                let i = self.equality[k] as usize;
                rows.rows[i].impulse -= delta * z;
                velocities.apply(rows, &rows.rows[i], -delta * z);
            }
        }
    }
}
