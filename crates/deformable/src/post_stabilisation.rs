//! Position-level projection after each step, beyond the paper.
//!
//! A velocity-level row holds `J v = 0` along the edge's direction at the
//! start of the step; a node that turns about its neighbour still moves the
//! pair apart by `√(L² + (h Δv)²) − L`. When a cloth strikes a ball and its
//! touching nodes stop, that is tens of percent in one step, and Baumgarte
//! (eq 13) takes back only a fraction of it per step. After the nodes
//! advance (eq 38), anchored nodes are put on their points (on a rigid
//! body, where the point will be at the end of the step) and the
//! over-long inextensible edges are projected back to their rest length by
//! Gauss–Seidel passes (Provot's deformation constraints, the paper's ref.
//! [14]), each followed by a pass moving penetrating contact samples back
//! out along their normals. This is the post-stabilisation the rigid joints
//! take too. Velocities are left as the solver made them.
//!
//! Sweeps carry a correction one edge per pass: a long chain pulled at one
//! end (a cloth hanging from a line of anchors) is held by the solver's
//! warm-started impulses over steps, not by this projection.

use crate::body::DeformableBody;
use crate::constraints::anchor::{Anchor, AnchorTarget};
use crate::constraints::contact::{RigidContact, SurfaceContact};
use crate::topology::SurfaceSample;
use nalgebra::Point3;

/// Scratch of [`project`], kept between steps.
#[derive(Debug, Default)]
pub struct ProjectionScratch {
    /// One per node of all bodies: its inverse mass, zero where an anchor
    /// holds it.
    inverse_masses: Vec<f64>,
    /// The rigid contacts, each as what its passes need.
    contacts: Vec<PreparedContact>,
}

/// A rigid contact as its projection needs it: the sample's gap after the
/// step is `base + normal · Σ weights[k] x[k]`, and a penetration `gap < 0`
/// moves node `k` by `−gap shares[k] normal`.
#[derive(Debug)]
struct PreparedContact {
    body: usize,
    nodes: [u32; 3],
    weights: [f64; 3],
    /// `w_k m_k⁻¹ / Σ_j w_j² m_j⁻¹` of each node, zero for a held one.
    shares: [f64; 3],
    normal: nalgebra::Vector3<f64>,
    base: f64,
}

/// Projects every body (see the module's documentation), and after each
/// pass over the edges moves every contact's sample back out of its rigid
/// body along the contact normal. A rigid body's point `p` now is at
/// `rigid_end(body, p)` at the end of the step: a contact's gap then is the
/// detected gap plus the sample's motion along the normal less the rigid
/// point's, and a node anchored to a rigid body is held where its anchor
/// point (`rigid_point(body, local point)` now) will be. Likewise every
/// contact between deformable surfaces: the sample and the triangle's
/// nearest point (its barycentric weights kept) are moved apart along the
/// normal, each side by its share of inverse mass, so that the correction
/// moves no centre of mass; `start` holds all bodies' node positions at the
/// start of the step. Returns the largest relative edge error met by the
/// last pass.
#[allow(clippy::too_many_arguments)]
pub fn project(
    bodies: &mut [DeformableBody],
    node_offsets: &[u32],
    anchors: &[Anchor],
    contacts: &[RigidContact],
    rigid_point: impl Fn(usize, &Point3<f64>) -> Point3<f64>,
    rigid_end: impl Fn(usize, &Point3<f64>) -> Point3<f64>,
    surface_contacts: &[SurfaceContact],
    start: &[Point3<f64>],
    sweeps: usize,
    scratch: &mut ProjectionScratch,
) -> f64 {
    if sweeps == 0 {
        return 0.0;
    }
    let inverse_masses = &mut scratch.inverse_masses;
    inverse_masses.clear();
    for body in bodies.iter() {
        inverse_masses.extend(body.model.masses.iter().map(|m| 1.0 / m));
    }
    for anchor in anchors {
        bodies[anchor.body].state.positions[anchor.node as usize] = match anchor.target {
            AnchorTarget::World(point) => point,
            AnchorTarget::Rigid { body, point } => rigid_end(body, &rigid_point(body, &point)),
        };
        inverse_masses[node_offsets[anchor.body] as usize + anchor.node as usize] = 0.0;
    }
    let inverse_masses = &scratch.inverse_masses;
    scratch.contacts.clear();
    for contact in contacts {
        let body = contact.body as usize;
        let offset = node_offsets[body] as usize;
        let sample = bodies[body].model.samples[contact.sample as usize];
        let inverse = sample.nodes.map(|n| inverse_masses[offset + n as usize]);
        let curvature: f64 = (0..3)
            .map(|k| sample.weights[k] * sample.weights[k] * inverse[k])
            .sum();
        if curvature <= 0.0 {
            continue;
        }
        // The gap as detected, less the sample's position then and the
        // rigid point's motion over the step along the normal.
        let rigid_motion = rigid_end(contact.rigid as usize, &contact.point) - contact.point;
        scratch.contacts.push(PreparedContact {
            body,
            nodes: sample.nodes,
            weights: sample.weights,
            shares: [0, 1, 2].map(|k| sample.weights[k] * inverse[k] / curvature),
            normal: contact.normal,
            base: contact.gap - contact.normal.dot(&(contact.point.coords + rigid_motion)),
        });
    }
    let mut worst = 0.0f64;
    for _ in 0..sweeps {
        worst = 0.0;
        for (b, body) in bodies.iter_mut().enumerate() {
            let offset = node_offsets[b] as usize;
            let inverse = &inverse_masses[offset..offset + body.state.positions.len()];
            let DeformableBody { model, state } = body;
            worst = worst.max(gauss_seidel(model, &mut state.positions, inverse));
        }
        for c in &scratch.contacts {
            let positions = &mut bodies[c.body].state.positions;
            let at: f64 = (0..3)
                .map(|k| c.weights[k] * c.normal.dot(&positions[c.nodes[k] as usize].coords))
                .sum();
            let gap = c.base + at;
            if gap >= 0.0 {
                continue;
            }
            for k in 0..3 {
                if c.shares[k] != 0.0 {
                    positions[c.nodes[k] as usize] -= (gap * c.shares[k]) * c.normal;
                }
            }
        }
        for contact in surface_contacts {
            separate(bodies, node_offsets, contact, start, inverse_masses);
        }
    }
    worst
}

/// Moves the two sides of `contact` apart along its normal by what the
/// step made them penetrate (see [`project`]).
fn separate(
    bodies: &mut [DeformableBody],
    node_offsets: &[u32],
    contact: &SurfaceContact,
    start: &[Point3<f64>],
    inverse_masses: &[f64],
) {
    let (a, b) = (contact.body as usize, contact.other as usize);
    let sample = bodies[a].model.samples[contact.sample as usize];
    let face = SurfaceSample {
        nodes: bodies[b].model.surface[contact.face as usize],
        weights: contact.face_weights,
    };
    // (body, node, signed weight, inverse mass) of each participant.
    let mut sides = [(0usize, 0usize, 0.0f64, 0.0f64); 6];
    let mut count = 0;
    for (body, s, sign) in [(a, &sample, 1.0), (b, &face, -1.0)] {
        for k in 0..3 {
            if s.weights[k] == 0.0 {
                continue;
            }
            let node = s.nodes[k] as usize;
            let inverse = inverse_masses[node_offsets[body] as usize + node];
            sides[count] = (body, node, sign * s.weights[k], inverse);
            count += 1;
        }
    }
    let sides = &sides[..count];
    // The gap now: as detected, plus both sides' motion along the normal.
    let moved: f64 = sides
        .iter()
        .map(|&(body, node, weight, _)| {
            let begin = start[node_offsets[body] as usize + node];
            weight
                * contact
                    .normal
                    .dot(&(bodies[body].state.positions[node] - begin))
        })
        .sum();
    let gap = contact.gap + moved;
    if gap >= 0.0 {
        return;
    }
    let curvature: f64 = sides
        .iter()
        .map(|&(_, _, w, inverse)| w * w * inverse)
        .sum();
    if !(curvature > 0.0) {
        return;
    }
    for &(body, node, weight, inverse) in sides {
        bodies[body].state.positions[node] -= (gap * weight * inverse / curvature) * contact.normal;
    }
}

/// One Gauss–Seidel pass over the body's active edges, each edge's ends
/// moved in proportion to their `inverse_masses`; returns the largest
/// relative error met.
fn gauss_seidel(
    model: &crate::body::DeformableModel,
    positions: &mut [nalgebra::Point3<f64>],
    inverse_masses: &[f64],
) -> f64 {
    let resists_compression = model.material.compression_limit > 0.0;
    let mut worst = 0.0f64;
    for edge in &model.inextensible {
        let (a, c) = (edge.a as usize, edge.b as usize);
        let d = positions[c] - positions[a];
        let length = d.norm();
        let error = length - edge.rest_length;
        if length <= 0.0 || (error <= 0.0 && !resists_compression) {
            continue;
        }
        let (wa, wc) = (inverse_masses[a], inverse_masses[c]);
        if wa + wc <= 0.0 {
            continue;
        }
        worst = worst.max(error.abs() / edge.rest_length);
        let correction = (error / ((wa + wc) * length)) * d;
        positions[a] += wa * correction;
        positions[c] -= wc * correction;
    }
    worst
}
