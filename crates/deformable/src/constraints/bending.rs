//! Bending rows (§4.5, eqs 33–35): the two wings of a hinge kept near their
//! rest angle.

use super::{NodeTerm, RowKind, RowSource, Rows};
use crate::topology::Hinge;
use nalgebra::Point3;

/// Eq 33's `(x_L − x_C)·(x_R − x_C)`, `x_C` the hinge edge's midpoint.
pub fn value(hinge: &Hinge, positions: &[Point3<f64>]) -> f64 {
    let [i, j, l, r] = [hinge.i, hinge.j, hinge.l, hinge.r].map(|k| positions[k as usize]);
    let c = nalgebra::center(&i, &j);
    (l - c).dot(&(r - c))
}

/// One row per hinge: eq 34's Jacobians `J̃_L = x_R − x_C`,
/// `J̃_R = x_L − x_C`, `J̃_i = J̃_j = −(x_D − x_C)` (with `x_D` the wings'
/// midpoint), divided by the hinge's edge length so that the impulse is in
/// N·s, driven to `−β C_bend / h`. The paper's bias
/// `−β |n_L·n_R − n⁰_L·n⁰_R|` has one sign whichever way the hinge is bent
/// (§4.5); this one is eq 33's own error, signed, so that it restores
/// either way. `limit` bounds the impulse both ways (`λ⁻ = −λ⁺`).
#[allow(clippy::too_many_arguments)]
pub fn add_rows(
    rows: &mut Rows,
    body: u32,
    offset: u32,
    hinges: &[(Hinge, f64)],
    positions: &[Point3<f64>],
    inverse_masses: &[f64],
    bias_rate: f64,
    limit: f64,
) {
    for (k, (hinge, rest)) in hinges.iter().enumerate() {
        let [i, j, l, r] = [hinge.i, hinge.j, hinge.l, hinge.r].map(|n| positions[n as usize]);
        let c = nalgebra::center(&i, &j);
        let d = nalgebra::center(&l, &r);
        let scale = 1.0 / (j - i).norm();
        if !scale.is_finite() {
            continue;
        }
        let middle = -(d - c) * scale;
        let error = ((l - c).dot(&(r - c)) - rest) * scale;
        rows.push(
            &[
                NodeTerm {
                    node: offset + hinge.l,
                    jacobian: (r - c) * scale,
                },
                NodeTerm {
                    node: offset + hinge.r,
                    jacobian: (l - c) * scale,
                },
                NodeTerm {
                    node: offset + hinge.i,
                    jacobian: middle,
                },
                NodeTerm {
                    node: offset + hinge.j,
                    jacobian: middle,
                },
            ],
            &[],
            inverse_masses,
            -bias_rate * error,
            -limit,
            limit,
            RowKind::Bounded,
            RowSource::Bending {
                body,
                hinge: k as u32,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eq 34's Jacobians are the gradient of eq 33: checked against central
    /// differences.
    #[test]
    fn jacobians_are_the_gradient_of_the_bending_value() {
        let positions = vec![
            Point3::new(0.0, 0.0, 0.0),
            Point3::new(1.0, 0.1, 0.0),
            Point3::new(0.4, 0.9, 0.2),
            Point3::new(0.6, -0.8, 0.3),
        ];
        let hinge = Hinge {
            i: 0,
            j: 1,
            l: 2,
            r: 3,
        };
        let mut rows = Rows::default();
        add_rows(
            &mut rows,
            0,
            0,
            &[(hinge, 0.0)],
            &positions,
            &[1.0; 4],
            0.0,
            1.0,
        );
        let scale = (positions[1] - positions[0]).norm();
        for term in &rows.node_terms {
            for axis in 0..3 {
                let step = 1e-6;
                let mut plus = positions.clone();
                let mut minus = positions.clone();
                plus[term.node as usize][axis] += step;
                minus[term.node as usize][axis] -= step;
                let numeric = (value(&hinge, &plus) - value(&hinge, &minus)) / (2.0 * step);
                let analytic = term.jacobian[axis] * scale;
                assert!(
                    (numeric - analytic).abs() < 1e-8,
                    "node {} axis {axis}",
                    term.node
                );
            }
        }
    }
}
