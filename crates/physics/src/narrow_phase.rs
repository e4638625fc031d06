//! The narrow phase: the contacts of each overlapping pair, both ways (Xu,
//! Zhao & Barbič §4.1): each body's point shell is queried in the other's
//! signed distance field, and every penetrating shell point facing into
//! the other body is a [`PairContact`].
//!
//! For one contact, with `S` the body carrying the shell point and `A` the
//! body whose field it lies in (all world frame):
//!
//! ```text
//! P = x_S + R_S p,  r_S = P − x_S,  r_A = P − x_A
//! d = φ_A(R_Aᵀ (P − x_A)),  a = R_A ∇φ_A     (d < 0 inside)
//! m = R_S n                                  (S's outward normal: it rotates with S)
//! ```

use crate::body::RigidBody;
use foldhash::HashMap;
use haptic_pointshell::{Contact, NodeBounds, PointTreeTraversal, TraversalBudget};
use nalgebra::{Isometry3, Point3, Vector3};

/// One shell point of `shell_body` inside the field of `field_body`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairContact {
    pub shell_body: usize,
    pub field_body: usize,
    /// Index of the point in the shell body's point shell.
    pub point: u32,
    /// Finest-level shell points this contact stands for.
    pub weight: u32,
    /// `P`, world frame (m).
    pub position: Point3<f64>,
    /// `m = R_S n`: the shell body's outward unit normal at `P`.
    pub normal: Vector3<f64>,
    /// `d` (m), negative inside.
    pub distance: f64,
    /// `a = R_A ∇φ_A`: the world gradient of the field body's distance at `P`.
    pub distance_gradient: Vector3<f64>,
}

impl PairContact {
    /// `r_S = P − x_S`.
    pub fn shell_handle(&self, bodies: &[RigidBody]) -> Vector3<f64> {
        self.position - Point3::from(bodies[self.shell_body].state.pose.translation.vector)
    }

    /// `r_A = P − x_A`.
    pub fn field_handle(&self, bodies: &[RigidBody]) -> Vector3<f64> {
        self.position - Point3::from(bodies[self.field_body].state.pose.translation.vector)
    }
}

/// A penetrating shell point is a contact only where its surface faces
/// into the other body: its outward normal within 75° of the field's
/// inward direction, `mᵀ a < −cos 75°`. Points of faces that meet the other
/// body edge-on (a box's side faces dipping below a floor at its bottom
/// edges) would push along their normals, across the contact; these
/// forces do no work on a body at rest but turn it: a frictionless 4 cm
/// cube resting on a table at 5 ms steps spun up to 700 rad/s through
/// them. Drumwright's §III-A selects the bottom of the penetration volume
/// the same way (see `pid`).
pub const FACING_COSINE: f64 = 0.2588190451025208;

/// Distance (m) far above the rounding of a point's transform and lookup,
/// far below any penetration that matters.
const ROUNDING_SLACK: f64 = 1e-12;

/// The narrow phase: each pair's shells in the other's field.
///
/// A role (one body's shell in the other's field) is traversed down its
/// point tree for the points whose value lies below the margin `δ`; those
/// are kept with the relative pose `T₀` they were found at. At a later
/// pose `T`, a point `p` moved at most `|t − t₀| + θ |p|` in the field's
/// frame (`θ` the angle of `R₀ᵀR`); for a point now inside the field's
/// positive box (`DistanceField::positive_beyond`: outside it every value
/// is positive), at most
/// `|t_D| + θ |q|` with `q = T p` and `T₀T⁻¹ = (R_D, t_D)`. Its value fell
/// by at most `L` times that, `L` the field's Lipschitz bound. While the
/// smaller bound, with `|p|` and `|q|` at the shell's and the box's
/// reach, times `L` stays below `δ`, no point left out can be inside the
/// field, and only the kept points are looked up: the contacts are exactly
/// a full traversal's, in the same order. Resting and slowly moving pairs
/// are traversed once in many steps. Nor are the kept points whose value
/// at the traversal exceeded `L` times the motion since looked up again:
/// they cannot be inside. A traversal, in turn, passes over the tree nodes
/// whose values at the role's earlier traversals, less `L` times the
/// motion since, still put their subtrees outside ([`NodeBounds`]).
#[derive(Default)]
pub struct ContactDetector {
    margin: f64,
    traversals: HashMap<usize, PointTreeTraversal>,
    near: HashMap<(usize, usize), NearPoints>,
    stats: DetectionStats,
}

/// A role's points below the margin at its last traversal.
struct NearPoints {
    /// `field_from_shell` then (`None` before the first).
    pose: Option<Isometry3<f64>>,
    /// The field values its traversals looked up.
    bounds: NodeBounds,
    /// In traversal order.
    points: Vec<Contact>,
    /// Whether the current detection has used them.
    used: bool,
}

/// What the last detection did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DetectionStats {
    /// Roles (a shell in a field) examined.
    pub roles: usize,
    /// Of which traversed down their trees; the rest reused kept points.
    pub traversals: usize,
    /// Field lookups, traversals and kept points together.
    pub lookups: usize,
}

impl ContactDetector {
    /// A detector keeping the points within `margin` (m) of the surface;
    /// 0 traverses every role at every detection (the default).
    pub fn new(margin: f64) -> ContactDetector {
        ContactDetector {
            margin,
            ..ContactDetector::default()
        }
    }

    /// What the last [`detect`](Self::detect) did.
    pub fn stats(&self) -> DetectionStats {
        self.stats
    }

    /// Appends the contacts of every pair in `pairs` to `out` (cleared
    /// first): for `(i, j)`, `i`'s points in `j`'s field, then `j`'s in `i`'s.
    pub fn detect(
        &mut self,
        bodies: &[RigidBody],
        pairs: &[(usize, usize)],
        out: &mut Vec<PairContact>,
    ) {
        out.clear();
        self.stats = DetectionStats::default();
        for near in self.near.values_mut() {
            near.used = false;
        }
        for &(i, j) in pairs {
            self.detect_role(bodies, i, j, out);
            self.detect_role(bodies, j, i, out);
        }
        self.near.retain(|_, near| near.used);
    }

    fn detect_role(
        &mut self,
        bodies: &[RigidBody],
        shell_body: usize,
        field_body: usize,
        out: &mut Vec<PairContact>,
    ) {
        let (s, a) = (&bodies[shell_body], &bodies[field_body]);
        let (Some(sg), Some(ag)) = (&s.model.geometry, &a.model.geometry) else {
            return;
        };
        let field_from_shell = a.state.pose.inverse() * s.state.pose;
        let field = ag.field.as_ref();
        let reach = sg.reach();
        let field_reach = field.positive_beyond().map(|b| b.farthest_from_origin());
        let near = self
            .near
            .entry((shell_body, field_body))
            .or_insert_with(|| NearPoints {
                pose: None,
                bounds: NodeBounds::default(),
                points: Vec::new(),
                used: false,
            });
        // How far, times `L`, a point may have come towards the surface
        // since the last traversal: any point, and the points now inside
        // the field's positive box (only they can be inside the field).
        let approach = near.pose.map(|found_at| {
            let angle = found_at.rotation.angle_to(&field_from_shell.rotation);
            // Turned about the shell's origin, or about the field's.
            let about_shell = (field_from_shell.translation.vector - found_at.translation.vector)
                .norm()
                + angle * reach;
            let about_field = field_reach.map_or(f64::INFINITY, |r| {
                (found_at * field_from_shell.inverse())
                    .translation
                    .vector
                    .norm()
                    + angle * r
            });
            let lipschitz = field.lipschitz_bound();
            (
                lipschitz * about_shell,
                lipschitz * about_shell.min(about_field),
            )
        });
        self.stats.roles += 1;
        let approach = match approach {
            Some((_, near_field)) if near_field < self.margin => near_field,
            _ => {
                let traversal = self
                    .traversals
                    .entry(shell_body)
                    .or_insert_with(|| PointTreeTraversal::new(sg.shell.tree()));
                let traversed = traversal.traverse_within(
                    sg.shell.tree(),
                    sg.shell.shell(),
                    field,
                    &field_from_shell,
                    self.margin,
                    TraversalBudget::default(),
                    Some((&mut near.bounds, approach.map_or(0.0, |(any, _)| any))),
                    &mut near.points,
                );
                near.pose = Some(field_from_shell);
                self.stats.traversals += 1;
                self.stats.lookups += traversed.lookups as usize;
                0.0
            }
        };
        near.used = true;
        let shell = sg.shell.shell();
        let (to_field, field_offset) = (
            field_from_shell.rotation.to_rotation_matrix(),
            field_from_shell.translation.vector,
        );
        let (shell_rotation, field_rotation) = (
            s.state.pose.rotation.to_rotation_matrix(),
            a.state.pose.rotation.to_rotation_matrix(),
        );
        for c in &near.points {
            // A point that was farther out than it can have come since
            // cannot be inside now (the slack covers the rounding between
            // the traversal's transform and this one).
            if c.distance > approach + ROUNDING_SLACK {
                continue;
            }
            self.stats.lookups += 1;
            let p = &shell.points[c.point as usize];
            let (distance, gradient) = field.value_gradient(&(to_field * p + field_offset));
            let normal = shell_rotation * shell.outward_normals[c.point as usize];
            let distance_gradient = field_rotation * gradient;
            if distance >= 0.0 || normal.dot(&distance_gradient) > -FACING_COSINE {
                continue;
            }
            out.push(PairContact {
                shell_body,
                field_body,
                point: c.point,
                weight: c.weight,
                position: s.state.pose * p,
                normal,
                distance,
                distance_gradient,
            });
        }
    }
}
