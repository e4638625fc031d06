//! The projected Gauss–Seidel solver of §4.6 (Algorithm 1) over the rows of
//! [`crate::constraints`], with deformable nodes and rigid bodies as
//! participants alike.

use crate::constraints::{Row, RowKind, Rows};
use nalgebra::Vector3;

/// The velocities the rows act on, updated in place by every impulse (the
/// paper's accumulated `Ĩ`, `I_x`, `I_q` added to the free velocities).
pub struct Velocities<'a> {
    pub nodes: &'a mut [Vector3<f64>],
    pub node_inverse_masses: &'a [f64],
    pub rigid_linear: &'a mut [Vector3<f64>],
    pub rigid_angular: &'a mut [Vector3<f64>],
}

impl Velocities<'_> {
    /// `J V` of `row`.
    #[inline]
    pub(crate) fn row_velocity(&self, rows: &Rows, row: &Row) -> f64 {
        let mut jv = 0.0;
        for t in &rows.node_terms[row.nodes.0 as usize..row.nodes.1 as usize] {
            jv += t.jacobian.dot(&self.nodes[t.node as usize]);
        }
        for t in &rows.rigid_terms[row.rigids.0 as usize..row.rigids.1 as usize] {
            jv += t.linear.dot(&self.rigid_linear[t.body as usize])
                + t.angular.dot(&self.rigid_angular[t.body as usize]);
        }
        jv
    }

    /// Applies impulse `delta` along `row` (eqs 36–37).
    #[inline]
    pub(crate) fn apply(&mut self, rows: &Rows, row: &Row, delta: f64) {
        for t in &rows.node_terms[row.nodes.0 as usize..row.nodes.1 as usize] {
            let i = t.node as usize;
            self.nodes[i] += (delta * self.node_inverse_masses[i]) * t.jacobian;
        }
        for t in &rows.rigid_terms[row.rigids.0 as usize..row.rigids.1 as usize] {
            self.rigid_linear[t.body as usize] += delta * t.linear_response;
            self.rigid_angular[t.body as usize] += delta * t.angular_response;
        }
    }
}

/// Applies every row's starting impulse (warm starting, eqs 36–37).
pub fn apply_start(rows: &Rows, velocities: &mut Velocities) {
    for row in &rows.rows {
        if row.impulse != 0.0 {
            velocities.apply(rows, row, row.impulse);
        }
    }
}

/// Rows held by another solver, which answers the swept rows' impulses
/// (the exact equality solve of [`crate::direct`]).
pub trait HeldRows {
    /// Whether `row` is held, not swept.
    fn holds(&self, row: &Row) -> bool;
    /// Answers impulse `delta` along swept row `row`.
    fn answer(&self, rows: &mut Rows, velocities: &mut Velocities, row: usize, delta: f64);
}

/// No rows held: every row swept.
struct NoRowsHeld;

impl HeldRows for NoRowsHeld {
    #[inline]
    fn holds(&self, _: &Row) -> bool {
        false
    }

    #[inline]
    fn answer(&self, _: &mut Rows, _: &mut Velocities, _: usize, _: f64) {}
}

/// One sweep of Algorithm 1 over all rows; or, with `direct`, over the
/// rows it does not hold exactly, each impulse answered by the equality
/// rows (see [`crate::direct`]). Returns the root mean square of the
/// impulse changes (the paper's Fig. 1 measure).
pub fn iterate(rows: &mut Rows, velocities: &mut Velocities, direct: Option<&dyn HeldRows>) -> f64 {
    match direct {
        Some(direct) => sweep(rows, velocities, direct),
        None => sweep(rows, velocities, &NoRowsHeld),
    }
}

/// [`iterate`] with `held` answering the swept rows' impulses; monomorphised
/// so that a sweep with nothing held costs no call per row.
fn sweep<H: HeldRows + ?Sized>(rows: &mut Rows, velocities: &mut Velocities, held: &H) -> f64 {
    let mut squares = 0.0;
    let mut i = 0;
    let apply = |rows: &mut Rows, velocities: &mut Velocities, i: usize, delta: f64| {
        velocities.apply(rows, &rows.rows[i], delta);
        held.answer(rows, velocities, i, delta);
    };
    while i < rows.rows.len() {
        let row = rows.rows[i];
        if held.holds(&row) {
            i += 1;
            continue;
        }
        match row.kind {
            RowKind::Bounded => {
                let delta =
                    (row.target - velocities.row_velocity(rows, &row)) * row.inverse_effective_mass;
                let impulse = (row.impulse + delta).clamp(row.lower, row.upper);
                let delta = impulse - row.impulse;
                rows.rows[i].impulse = impulse;
                apply(rows, velocities, i, delta);
                squares += delta * delta;
                i += 1;
            }
            RowKind::FrictionPair {
                normal,
                coefficient,
            } => {
                let second = rows.rows[i + 1];
                let radius = match normal {
                    Some(n) => coefficient * rows.rows[n as usize].impulse,
                    None => row.upper,
                };
                let du =
                    (row.target - velocities.row_velocity(rows, &row)) * row.inverse_effective_mass;
                let dw = (second.target - velocities.row_velocity(rows, &second))
                    * second.inverse_effective_mass;
                let (mut u, mut w) = (row.impulse + du, second.impulse + dw);
                let length = (u * u + w * w).sqrt();
                if length > radius {
                    let scale = radius.max(0.0) / length;
                    u *= scale;
                    w *= scale;
                }
                let (du, dw) = (u - row.impulse, w - second.impulse);
                rows.rows[i].impulse = u;
                rows.rows[i + 1].impulse = w;
                apply(rows, velocities, i, du);
                apply(rows, velocities, i + 1, dw);
                squares += du * du + dw * dw;
                i += 2;
            }
            // Solved with its first row, which always precedes it.
            RowKind::FrictionSecond => i += 1,
        }
    }
    if rows.rows.is_empty() {
        0.0
    } else {
        (squares / rows.rows.len() as f64).sqrt()
    }
}
