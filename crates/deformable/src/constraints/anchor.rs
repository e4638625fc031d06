//! Anchor rows (§4.1, eqs 20–22): a node held at a point of the world or of
//! a rigid body.

use super::{NodeTerm, RigidTerm, RowKind, RowSource, Rows};
use nalgebra::{Matrix3, Point3, Vector3};

/// Where an anchored node is held.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AnchorTarget {
    /// A fixed world point `y` (eq 20).
    World(Point3<f64>),
    /// A point `r` of rigid body `body`, in its body frame (eq 21).
    Rigid { body: usize, point: Point3<f64> },
}

/// Node `node` of deformable body `body` held at `target`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Anchor {
    pub body: usize,
    pub node: u32,
    pub target: AnchorTarget,
}

/// A rigid body as the rows see it at the start of a step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RigidView {
    pub centre: Point3<f64>,
    pub inverse_mass: f64,
    pub inverse_inertia: Matrix3<f64>,
}

impl RigidView {
    /// The term of a row whose `J_x` is `linear` and `J_q` `angular`.
    pub fn term(&self, body: usize, linear: Vector3<f64>, angular: Vector3<f64>) -> RigidTerm {
        RigidTerm {
            body: body as u32,
            linear,
            angular,
            linear_response: self.inverse_mass * linear,
            angular_response: self.inverse_inertia * angular,
        }
    }
}

/// Three rows per anchor to a rigid point, one along each world axis `e`,
/// driven to `−β (e · d)/h` with `d` the node's offset from its target:
/// `J̃ = e`, `J_x = −e`, `J_q = −(r × e)` with `r` the point's offset from
/// the centre of mass (eqs 21–22). The paper's single row `J̃ = −dᵀ`
/// vanishes when the node is on its target and holds it only along the
/// offset; three rows hold it in every direction, with unbounded impulses
/// as §4.1 has. Anchors to the world (eq 20) make no rows: their nodes are
/// pinned, held in their paradigm's solve and fixed for the rows (see
/// [`crate::world`]).
#[allow(clippy::too_many_arguments)]
pub fn add_rows(
    rows: &mut Rows,
    anchors: &[Anchor],
    node_offsets: &[u32],
    positions: &[Point3<f64>],
    rigid: &[RigidView],
    rigid_points: impl Fn(usize, &Point3<f64>) -> Point3<f64>,
    inverse_masses: &[f64],
    bias_rate: f64,
) {
    for (k, anchor) in anchors.iter().enumerate() {
        if let AnchorTarget::World(_) = anchor.target {
            continue;
        }
        let node = node_offsets[anchor.body] + anchor.node;
        let x = positions[node as usize];
        for axis in 0..3 {
            let e = Vector3::ith(axis, 1.0);
            let (held, rigid_term) = match anchor.target {
                AnchorTarget::World(y) => (y, None),
                AnchorTarget::Rigid { body, point } => {
                    let world = rigid_points(body, &point);
                    let r = world - rigid[body].centre;
                    (world, Some(rigid[body].term(body, -e, -r.cross(&e))))
                }
            };
            let terms = [NodeTerm { node, jacobian: e }];
            rows.push(
                &terms,
                rigid_term.as_slice(),
                inverse_masses,
                -bias_rate * e.dot(&(x - held)),
                f64::NEG_INFINITY,
                f64::INFINITY,
                RowKind::Bounded,
                RowSource::Anchor {
                    anchor: k as u32,
                    axis: axis as u8,
                },
            );
        }
    }
}
