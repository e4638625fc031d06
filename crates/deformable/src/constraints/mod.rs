//! The uniform constraint record of §4 (the paper's `Constraint`,
//! `SolverDeformable` and `SolverRigid`) and the rows each kind of
//! constraint makes.
//!
//! A row is one scalar velocity constraint `J V = target` with its impulse
//! bounded to `[lower, upper]`. Its participants are deformable nodes (a
//! Jacobian `J̃` each) and rigid bodies (`J_x`, `J_q` each, with the
//! responses `m⁻¹ J_x` and the torque axis `t̂ = Q⁻¹ J_q` of eqs 22, 26 and
//! 30), stored contiguously so that an iteration streams through them.
//! Impulses are in N·s: the paper's `h λ`.

pub mod anchor;
pub mod bending;
pub mod contact;
pub mod inextensibility;
pub mod joints;

use nalgebra::Vector3;

/// A deformable node's part in a row (the paper's `SolverDeformable`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NodeTerm {
    /// Index into the solver's node arrays (all bodies' nodes in turn).
    pub node: u32,
    pub jacobian: Vector3<f64>,
}

/// A rigid body's part in a row (the paper's `SolverRigid`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RigidTerm {
    /// Index of the body in the rigid world.
    pub body: u32,
    /// `J_x`.
    pub linear: Vector3<f64>,
    /// `J_q`, about the centre of mass.
    pub angular: Vector3<f64>,
    /// `m⁻¹ J_x`.
    pub linear_response: Vector3<f64>,
    /// `t̂ = Q⁻¹ J_q`.
    pub angular_response: Vector3<f64>,
}

/// How a row's impulse is bounded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RowKind {
    /// Bounded by its own `lower` and `upper`.
    Bounded,
    /// The first of a friction pair `(u, w)`, the next row its second: the
    /// pair's impulse is kept inside a disc of radius `coefficient ×` the
    /// impulse of row `normal`, or of radius `upper` when `normal` is
    /// `None` (the paper's eq 32 pressure).
    FrictionPair {
        normal: Option<u32>,
        coefficient: f64,
    },
    /// The second row of a friction pair: solved with the first.
    FrictionSecond,
}

/// What made a row, for warm starting and for reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RowSource {
    Anchor {
        anchor: u32,
        axis: u8,
    },
    Inextensibility {
        body: u32,
        edge: u32,
    },
    Bending {
        body: u32,
        hinge: u32,
    },
    /// A rigid joint's row, holding the rigid side consistent while the
    /// deformables push on it.
    Joint {
        row: u32,
    },
    /// Non-penetration (`axis` 0) and its friction pair (1, 2): a surface
    /// sample of `body` against rigid body `other`.
    Contact {
        body: u32,
        sample: u32,
        other: u32,
        axis: u8,
    },
    /// As `Contact`, against triangle `face` of deformable body `other`
    /// (`body` itself for a self-contact).
    SurfaceContact {
        body: u32,
        sample: u32,
        other: u32,
        face: u32,
        axis: u8,
    },
}

impl RowSource {
    /// A contact row's axis: 0 for non-penetration, 1 and 2 for friction.
    pub fn contact_axis(&self) -> Option<u8> {
        match *self {
            RowSource::Contact { axis, .. } | RowSource::SurfaceContact { axis, .. } => Some(axis),
            _ => None,
        }
    }
}

/// One scalar constraint row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    pub nodes: (u32, u32),
    pub rigids: (u32, u32),
    /// The velocity `J V` is driven to (the bias of eq 13 and eq 14's `ζ/h`).
    pub target: f64,
    pub lower: f64,
    pub upper: f64,
    pub impulse: f64,
    /// `(J M⁻¹ Jᵀ)⁻¹`, Algorithm 1's `d`.
    pub inverse_effective_mass: f64,
    pub kind: RowKind,
    pub source: RowSource,
}

/// Every row of a step with its participants.
#[derive(Clone, Debug, Default)]
pub struct Rows {
    pub rows: Vec<Row>,
    pub node_terms: Vec<NodeTerm>,
    pub rigid_terms: Vec<RigidTerm>,
}

impl Rows {
    pub fn clear(&mut self) {
        self.rows.clear();
        self.node_terms.clear();
        self.rigid_terms.clear();
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Removes the last row and its terms.
    pub fn pop(&mut self) {
        if let Some(row) = self.rows.pop() {
            self.node_terms.truncate(row.nodes.0 as usize);
            self.rigid_terms.truncate(row.rigids.0 as usize);
        }
    }

    /// Adds a row; `node_inverse_masses` gives `m̃⁻¹` of the nodes. A row
    /// that nothing can move (zero effective mass) or with a non-finite
    /// entry is dropped; returns whether it was kept.
    #[allow(clippy::too_many_arguments)]
    pub fn push(
        &mut self,
        nodes: &[NodeTerm],
        rigids: &[RigidTerm],
        node_inverse_masses: &[f64],
        target: f64,
        lower: f64,
        upper: f64,
        kind: RowKind,
        source: RowSource,
    ) -> bool {
        let mut curvature = 0.0;
        for t in nodes {
            curvature += node_inverse_masses[t.node as usize] * t.jacobian.norm_squared();
        }
        for t in rigids {
            curvature += t.linear.dot(&t.linear_response) + t.angular.dot(&t.angular_response);
        }
        if !(curvature > 1e-300 && curvature.is_finite() && target.is_finite()) {
            return false;
        }
        let node_start = self.node_terms.len() as u32;
        let rigid_start = self.rigid_terms.len() as u32;
        self.node_terms.extend_from_slice(nodes);
        self.rigid_terms.extend_from_slice(rigids);
        self.rows.push(Row {
            nodes: (node_start, self.node_terms.len() as u32),
            rigids: (rigid_start, self.rigid_terms.len() as u32),
            target,
            lower,
            upper,
            impulse: 0.0,
            inverse_effective_mass: 1.0 / curvature,
            kind,
            source,
        });
        true
    }
}
