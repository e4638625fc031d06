//! A deformable surface's samples against a rigid body's signed distance
//! field.

use crate::body::DeformableBody;
use crate::constraints::contact::RigidContact;
use crate::topology::SurfaceSample;
use haptic_mesh::Aabb;
use haptic_physics::RigidBody;
use nalgebra::{Point3, Vector3};

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
/// surface under the face), the nodes' own rows already hold it, as their
/// velocities interpolate: it makes no contact. `node_gaps` is scratch of
/// one gap per node.
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
        let (distance, gradient) = geometry.field.value_gradient(&local);
        let gap = distance - thickness;
        if at_node(sample) {
            node_gaps[sample.nodes[0] as usize] = gap;
        } else {
            // NaN (a node out of reach) keeps the face's sample.
            let interpolated: f64 = (0..3)
                .map(|k| sample.weights[k] * node_gaps[sample.nodes[k] as usize])
                .sum();
            if gap >= interpolated {
                continue;
            }
        }
        let length = gradient.norm();
        let speed: f64 = (0..3)
            .map(|k| sample.weights[k] * velocities[sample.nodes[k] as usize].norm())
            .sum();
        if gap >= margin + h * speed || !(length > 1e-9) || !gap.is_finite() {
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
