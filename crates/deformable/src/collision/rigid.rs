//! A deformable surface's samples against a rigid body's signed distance
//! field.

use crate::body::DeformableBody;
use crate::constraints::contact::RigidContact;
use crate::topology::SurfaceSample;
use haptic_mesh::Aabb;
use haptic_physics::RigidBody;
use nalgebra::{Point3, Vector3};

/// The share of a body's thickness by which a rigid surface may reach
/// deeper under a face than under its nodes, all of them in contact, before
/// the face's centroid makes a contact of its own. A smooth surface of
/// radius `R` under a face of edge `L` reaches about `L²/(6R)` deeper at
/// its centroid (0.35 mm for the Fig. 3 cloth's 2 cm spacing over its
/// 0.25 m ball, against its 4 mm thickness), an edge or a corner of the
/// order of `L`: the former is held by the nodes' rows within half the
/// thickness, the latter met at the face. A face with a node out of
/// contact keeps its centroid wherever the field is deeper there than the
/// nodes' gaps interpolated: at the rim of a contact patch, where the
/// rows of a few nodes hold a sheet striking a ball, its faces hold it too
/// (without them the Fig. 3 cloth's nodes reach 2.2 mm into the ball at
/// the impact in one 20 ms step, against 3.0 mm clear with them).
pub const FACE_BULGE_SHARE: f64 = 0.5;

/// Bounds of `positions` grown by `margin`.
pub fn bounds(positions: &[Point3<f64>], margin: f64) -> Aabb {
    let mut b = Aabb::from_points(positions);
    let grow = Vector3::repeat(margin);
    b.min -= grow;
    b.max += grow;
    b
}

/// Appends to `out` a contact for every surface sample of `body` (index
/// `body_index`) whose distance from `rigid`'s surface, less the body's
/// half thickness, is below what the step can close: `margin` (the contact
/// margin and the rigid body's reach in the step) plus `h` times the
/// sample's speed bound, the weighted speeds of its nodes at their free
/// `velocities`. The normal is the field's gradient, turned into the world. Samples on a node anchored
/// to this rigid body (`anchored_to[node] == Some(rigid_index)`) are left
/// out: the anchor holds the node where it is, and a contact pushing it out
/// by the thickness would fight it.
///
/// A sample inside a face (a centroid) is there so that a rigid edge or
/// corner cannot pass between the face's nodes. Where the field is no
/// deeper at it than its nodes' gaps interpolated (a flat or concave
/// surface under the face), less [`FACE_BULGE_SHARE`] of the body's
/// thickness where every node of the face is in contact (a surface that
/// curves away more gently than the mesh's spacing), the nodes' own rows
/// already hold it, as their velocities interpolate: it makes no contact.
/// A face whose nodes' gaps and the field's Lipschitz bound put its
/// centroid beyond reach is not looked up. `node_gaps` is scratch of one
/// gap per node.
#[allow(clippy::too_many_arguments)]
pub fn detect(
    body_index: u32,
    body: &DeformableBody,
    body_bounds: &Aabb,
    rigid_index: u32,
    rigid: &RigidBody,
    margin: f64,
    h: f64,
    velocities: &[Vector3<f64>],
    anchored_to: &[Option<u32>],
    node_gaps: &mut Vec<f64>,
    out: &mut Vec<RigidContact>,
) {
    let Some(geometry) = rigid.model.geometry.as_ref() else {
        return;
    };
    let Some(rigid_bounds) = rigid.world_bounds() else {
        return;
    };
    if !body_bounds.overlaps(&rigid_bounds) {
        return;
    }
    let thickness = body.model.material.thickness;
    let fastest = velocities.iter().map(|v| v.norm()).fold(0.0, f64::max);
    let reach = margin + h * fastest + thickness;
    let local_bounds = Aabb {
        min: geometry.bounds.min - Vector3::repeat(reach),
        max: geometry.bounds.max + Vector3::repeat(reach),
    };
    let friction = (body.model.material.friction * rigid.model.static_friction).sqrt();
    let pose = rigid.state.pose;
    let lipschitz = geometry.field.lipschitz_bound();
    node_gaps.clear();
    node_gaps.resize(body.state.positions.len(), f64::NAN);
    let at_node = |sample: &SurfaceSample| sample.weights[1] == 0.0 && sample.weights[2] == 0.0;
    // Nodes first, so that each face knows its nodes' gaps.
    let nodes_then_faces = body
        .model
        .samples
        .iter()
        .enumerate()
        .filter(|(_, sample)| at_node(sample))
        .chain(
            body.model
                .samples
                .iter()
                .enumerate()
                .filter(|(_, sample)| !at_node(sample)),
        );
    for (s, sample) in nodes_then_faces {
        if (0..3).any(|k| {
            sample.weights[k] != 0.0 && anchored_to[sample.nodes[k] as usize] == Some(rigid_index)
        }) {
            continue;
        }
        let p = sample.position(&body.state.positions);
        let local = pose.inverse_transform_point(&p);
        if !local_bounds.contains(&local) {
            continue;
        }
        let speed: f64 = (0..3)
            .map(|k| sample.weights[k] * velocities[sample.nodes[k] as usize].norm())
            .sum();
        let reach = margin + h * speed;
        let face = !at_node(sample);
        // The field rises no faster than its Lipschitz bound: a face whose
        // nodes' gaps put its centroid beyond reach is left unlooked-up
        // (a node out of reach, its gap NaN, bounds nothing).
        if face
            && (0..3)
                .map(|k| {
                    let node = sample.nodes[k] as usize;
                    node_gaps[node] - lipschitz * (p - body.state.positions[node]).norm()
                })
                .fold(f64::NEG_INFINITY, f64::max)
                >= reach
        {
            continue;
        }
        let (distance, gradient) = geometry.field.value_gradient(&local);
        let gap = distance - thickness;
        if face {
            // NaN (a node out of reach) keeps the face's sample.
            let interpolated: f64 = (0..3)
                .map(|k| sample.weights[k] * node_gaps[sample.nodes[k] as usize])
                .sum();
            // Within the bulge allowance only where every node of the face
            // makes a contact of its own, whose row holds it.
            let held = (0..3).all(|k| {
                let node = sample.nodes[k] as usize;
                sample.weights[k] == 0.0 || node_gaps[node] < margin + h * velocities[node].norm()
            });
            let allowance = if held {
                FACE_BULGE_SHARE * thickness
            } else {
                0.0
            };
            if gap >= interpolated - allowance {
                continue;
            }
        } else {
            node_gaps[sample.nodes[0] as usize] = gap;
        }
        let length = gradient.norm();
        if gap >= reach || !(length > 1e-9) || !gap.is_finite() {
            continue;
        }
        out.push(RigidContact {
            body: body_index,
            sample: s as u32,
            rigid: rigid_index,
            point: p,
            normal: pose.rotation * (gradient / length),
            gap,
            friction,
        });
    }
}
