//! Inextensibility rows (§4.2, eq 23): two nodes held at their rest
//! distance.

use super::{NodeTerm, RowKind, RowSource, Rows};
use crate::topology::Edge;
use nalgebra::Point3;

/// One row per edge, written with the unit direction `n = (x_j − x_i)/l`
/// (eq 23's Jacobians divided by `l`, so that the impulse is in N·s):
/// `J̃_i = −nᵀ`, `J̃_j = nᵀ`, driven to `−β (l − L)/h`. A positive impulse
/// pushes the nodes apart: `upper` bounds compression, `−lower` tension
/// (§4.2's `λ⁺`, `λ⁻`). What the linearisation leaves, an edge that turns
/// in the step, the position projection takes back
/// ([`crate::post_stabilisation`]). An edge whose nodes are both anchored
/// to the same rigid body (`anchored_to`, per node of all bodies) makes no
/// row: the body holds its length, and a row repeating the anchors' would
/// make the rows redundant.
#[allow(clippy::too_many_arguments)]
pub fn add_rows(
    rows: &mut Rows,
    body: u32,
    offset: u32,
    edges: &[Edge],
    positions: &[Point3<f64>],
    anchored_to: &[Option<u32>],
    inverse_masses: &[f64],
    bias_rate: f64,
    lower: f64,
    upper: f64,
) {
    for (k, edge) in edges.iter().enumerate() {
        let held = anchored_to[(offset + edge.a) as usize];
        if held.is_some() && held == anchored_to[(offset + edge.b) as usize] {
            continue;
        }
        let d = positions[edge.b as usize] - positions[edge.a as usize];
        let length = d.norm();
        if length <= 0.0 {
            continue;
        }
        let n = d / length;
        rows.push(
            &[
                NodeTerm {
                    node: offset + edge.a,
                    jacobian: -n,
                },
                NodeTerm {
                    node: offset + edge.b,
                    jacobian: n,
                },
            ],
            &[],
            inverse_masses,
            -bias_rate * (length - edge.rest_length),
            lower,
            upper,
            RowKind::Bounded,
            RowSource::Inextensibility {
                body,
                edge: k as u32,
            },
        );
    }
}
