//! Deformable surfaces against each other and against themselves: every
//! surface sample of one body (its nodes and face centroids) against the
//! triangles of another, or of its own away from the sample's
//! neighbourhood, through axis-aligned bounding box trees of faces (the
//! paper's §4.3 detection) refitted every step.
//!
//! Each body keeps two trees (parry's [`Bvh`]): one over its triangles and
//! one over its samples, their leaves the boxes each swept over the step by
//! its free velocities and grown by the body's half thickness and the
//! contact margin. The trees are built once, from the bodies as they are
//! given; every step moves their leaves and refits them, keeping the tree's
//! shape. A simultaneous descent of a sample tree and a triangle tree gives
//! the candidate pairs, which a point–triangle test turns into
//! [`SurfaceContact`]s.
//!
//! A contact is speculative, as against a rigid field: it is made while the
//! gap between the surfaces, less both half thicknesses, is below the
//! contact margin plus the pair's relative travel in the step, and its row
//! lets the gap close and no further.
//!
//! In a self-contact a sample meets no triangle holding one of its nodes
//! or a neighbour of one along a surface edge (the triangles within two
//! rings of a node): those are at rest next to it, and would otherwise hold
//! the surface apart from itself within its own plane. Self-collision
//! therefore needs the surface's spacing beyond twice its half thickness
//! plus the margin.

use crate::body::DeformableBody;
use crate::constraints::contact::SurfaceContact;
use crate::topology::SurfaceSample;
use nalgebra::{Point3, Vector3};
use parry3d_f64::bounding_volume::Aabb as LeafBox;
use parry3d_f64::math::Vector as LeafVector;
use parry3d_f64::partitioning::{Bvh, BvhBuildStrategy, BvhNode, BvhWorkspace};

/// An axis-aligned box (m).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweptBox {
    pub min: Point3<f64>,
    pub max: Point3<f64>,
}

impl SweptBox {
    /// The box around `points`, grown by `grow` each way.
    pub fn around(points: &[Point3<f64>], grow: f64) -> SweptBox {
        let mut min = points[0];
        let mut max = points[0];
        for p in &points[1..] {
            min = min.inf(p);
            max = max.sup(p);
        }
        let g = Vector3::repeat(grow);
        SweptBox {
            min: min - g,
            max: max + g,
        }
    }

    /// Whether the two boxes share a point (boundaries included).
    pub fn overlaps(&self, other: &SweptBox) -> bool {
        (0..3).all(|k| self.min[k] <= other.max[k] && other.min[k] <= self.max[k])
    }

    fn leaf(&self) -> LeafBox {
        LeafBox::new(
            LeafVector::new(self.min.x, self.min.y, self.min.z),
            LeafVector::new(self.max.x, self.max.y, self.max.z),
        )
    }
}

/// A sample's box over a step: its position now and after `h` at its free
/// velocity, grown by `grow`.
pub fn sample_box(
    sample: &SurfaceSample,
    positions: &[Point3<f64>],
    velocities: &[Vector3<f64>],
    h: f64,
    grow: f64,
) -> SweptBox {
    let p = sample.position(positions);
    let v = blend(&sample.nodes, &sample.weights, velocities);
    SweptBox::around(&[p, p + h * v], grow)
}

/// A triangle's box over a step: its corners now and after `h` at their
/// free velocities, grown by `grow`.
pub fn triangle_box(
    triangle: &[u32; 3],
    positions: &[Point3<f64>],
    velocities: &[Vector3<f64>],
    h: f64,
    grow: f64,
) -> SweptBox {
    let [a, b, c] = triangle.map(|i| positions[i as usize]);
    let [va, vb, vc] = triangle.map(|i| velocities[i as usize]);
    SweptBox::around(&[a, b, c, a + h * va, b + h * vb, c + h * vc], grow)
}

/// The box of `positions` now and after `h` at `velocities`, grown by
/// `grow`; `None` without positions.
fn body_box(
    positions: &[Point3<f64>],
    velocities: &[Vector3<f64>],
    h: f64,
    grow: f64,
) -> Option<SweptBox> {
    let first = positions.first()?;
    let (mut min, mut max) = (*first, *first);
    for (x, v) in positions.iter().zip(velocities) {
        let y = x + h * v;
        min = min.inf(x).inf(&y);
        max = max.sup(x).sup(&y);
    }
    let g = Vector3::repeat(grow);
    Some(SweptBox {
        min: min - g,
        max: max + g,
    })
}

/// How far a body's boxes are grown beyond the sweep: its half thickness
/// and the contact margin.
pub fn grow(body: &DeformableBody, margin: f64) -> f64 {
    body.model.material.thickness + margin
}

/// `Σ weights[k] · values[nodes[k]]`.
fn blend(nodes: &[u32; 3], weights: &[f64; 3], values: &[Vector3<f64>]) -> Vector3<f64> {
    (0..3)
        .filter(|&k| weights[k] != 0.0)
        .map(|k| weights[k] * values[nodes[k] as usize])
        .sum()
}

/// The point of triangle `(a, b, c)` nearest `p`, as barycentric weights
/// (Ericson, *Real-Time Collision Detection*, §5.1.5: the Voronoi region of
/// `p` among the vertices, edges and face).
pub fn nearest_on_triangle(
    p: &Point3<f64>,
    a: &Point3<f64>,
    b: &Point3<f64>,
    c: &Point3<f64>,
) -> [f64; 3] {
    let ab = b - a;
    let ac = c - a;
    let ap = p - a;
    let d1 = ab.dot(&ap);
    let d2 = ac.dot(&ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return [1.0, 0.0, 0.0];
    }
    let bp = p - b;
    let d3 = ab.dot(&bp);
    let d4 = ac.dot(&bp);
    if d3 >= 0.0 && d4 <= d3 {
        return [0.0, 1.0, 0.0];
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return [1.0 - v, v, 0.0];
    }
    let cp = p - c;
    let d5 = ab.dot(&cp);
    let d6 = ac.dot(&cp);
    if d6 >= 0.0 && d5 <= d6 {
        return [0.0, 0.0, 1.0];
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return [1.0 - w, 0.0, w];
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return [0.0, 1.0 - w, w];
    }
    let denominator = va + vb + vc;
    if !(denominator.abs() > 0.0) {
        // A degenerate triangle: its first vertex.
        return [1.0, 0.0, 0.0];
    }
    let v = vb / denominator;
    let w = vc / denominator;
    [1.0 - v - w, v, w]
}

/// Eq 32's contact mass of `contact`: the sample's and the triangle
/// point's masses, each blended from its nodes.
pub fn contact_mass(bodies: &[DeformableBody], contact: &SurfaceContact) -> f64 {
    let (a, b) = (
        &bodies[contact.body as usize],
        &bodies[contact.other as usize],
    );
    let sample = &a.model.samples[contact.sample as usize];
    let face = &b.model.surface[contact.face as usize];
    (0..3)
        .map(|k| {
            sample.weights[k] * a.model.masses[sample.nodes[k] as usize]
                + contact.face_weights[k] * b.model.masses[face[k] as usize]
        })
        .sum()
}

/// One body's surface as the detection sees it.
#[derive(Clone, Debug)]
struct SurfaceTree {
    triangles: Bvh,
    samples: Bvh,
    /// Whether every surface edge has exactly two triangles: a closed
    /// surface bounds a solid, and a sample behind one of its faces is
    /// inside it.
    closed: bool,
    /// Each node, then its neighbours along surface edges, sorted, from
    /// `near_start[node]` to `near_start[node + 1]`.
    near_start: Vec<u32>,
    near: Vec<u32>,
    triangle_boxes: Vec<SweptBox>,
    sample_boxes: Vec<SweptBox>,
    /// What the tree was built for.
    counts: (usize, usize, usize),
}

impl SurfaceTree {
    fn new(body: &DeformableBody) -> SurfaceTree {
        let model = &body.model;
        let nodes = body.state.positions.len();
        let mut neighbours: Vec<Vec<u32>> = vec![Vec::new(); nodes];
        for t in &model.surface {
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                neighbours[a as usize].push(b);
                neighbours[b as usize].push(a);
            }
        }
        let closed = model.surface_is_closed();
        let mut near_start = Vec::with_capacity(nodes + 1);
        let mut near = Vec::new();
        for (node, list) in neighbours.iter_mut().enumerate() {
            near_start.push(near.len() as u32);
            list.push(node as u32);
            list.sort_unstable();
            list.dedup();
            near.extend_from_slice(list);
        }
        near_start.push(near.len() as u32);
        let zero = vec![Vector3::zeros(); nodes];
        let positions = &body.state.positions;
        let triangle_boxes: Vec<SweptBox> = model
            .surface
            .iter()
            .map(|t| triangle_box(t, positions, &zero, 0.0, 0.0))
            .collect();
        let sample_boxes: Vec<SweptBox> = model
            .samples
            .iter()
            .map(|s| sample_box(s, positions, &zero, 0.0, 0.0))
            .collect();
        let leaves = |boxes: &[SweptBox]| -> Bvh {
            let leaves: Vec<LeafBox> = boxes.iter().map(SweptBox::leaf).collect();
            Bvh::from_leaves(BvhBuildStrategy::Binned, &leaves)
        };
        SurfaceTree {
            triangles: leaves(&triangle_boxes),
            samples: leaves(&sample_boxes),
            closed,
            near_start,
            near,
            triangle_boxes,
            sample_boxes,
            counts: (nodes, model.surface.len(), model.samples.len()),
        }
    }

    fn fits(&self, body: &DeformableBody) -> bool {
        self.counts
            == (
                body.state.positions.len(),
                body.model.surface.len(),
                body.model.samples.len(),
            )
    }

    /// The node and its neighbours along surface edges.
    fn near(&self, node: u32) -> &[u32] {
        &self.near
            [self.near_start[node as usize] as usize..self.near_start[node as usize + 1] as usize]
    }

    /// Whether `triangle` is within two rings of one of `sample`'s nodes.
    fn adjacent(&self, sample: &SurfaceSample, triangle: &[u32; 3]) -> bool {
        (0..3).any(|k| {
            sample.weights[k] != 0.0 && {
                let near = self.near(sample.nodes[k]);
                triangle.iter().any(|v| near.binary_search(v).is_ok())
            }
        })
    }

    /// Moves the leaves to this step's swept boxes and refits both trees.
    fn refit(
        &mut self,
        body: &DeformableBody,
        velocities: &[Vector3<f64>],
        h: f64,
        grow: f64,
        workspace: &mut BvhWorkspace,
    ) {
        let positions = &body.state.positions;
        for (k, t) in body.model.surface.iter().enumerate() {
            let b = triangle_box(t, positions, velocities, h, grow);
            self.triangle_boxes[k] = b;
            self.triangles
                .insert_or_update_partially(b.leaf(), k as u32, 0.0);
        }
        for (k, s) in body.model.samples.iter().enumerate() {
            let b = sample_box(s, positions, velocities, h, grow);
            self.sample_boxes[k] = b;
            self.samples
                .insert_or_update_partially(b.leaf(), k as u32, 0.0);
        }
        self.triangles.refit(workspace);
        self.samples.refit(workspace);
    }
}

/// The detection's trees and scratch, kept across steps.
#[derive(Default)]
pub struct SurfaceCollision {
    trees: Vec<SurfaceTree>,
    workspace: BvhWorkspace,
    pairs: Vec<(u32, u32)>,
    /// Each body's box over the step (`None` without nodes), and whether
    /// its trees are refitted this step.
    body_boxes: Vec<Option<SweptBox>>,
    active: Vec<bool>,
}

impl std::fmt::Debug for SurfaceCollision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SurfaceCollision")
            .field("trees", &self.trees)
            .finish_non_exhaustive()
    }
}

impl SurfaceCollision {
    /// Builds the trees of `bodies` as they are.
    pub fn new(bodies: &[DeformableBody]) -> SurfaceCollision {
        SurfaceCollision {
            trees: bodies.iter().map(SurfaceTree::new).collect(),
            workspace: BvhWorkspace::default(),
            pairs: Vec::new(),
            body_boxes: Vec::new(),
            active: Vec::new(),
        }
    }

    /// Refits every tree to the boxes swept by `bodies` over a step of `h`
    /// at their free `velocities` (all bodies' nodes in turn, body `b`'s
    /// from `node_offsets[b]`); a body whose surface changed gets a new
    /// tree.
    pub fn refit(
        &mut self,
        bodies: &[DeformableBody],
        node_offsets: &[u32],
        velocities: &[Vector3<f64>],
        h: f64,
        margin: f64,
    ) {
        self.active.clear();
        self.active.resize(bodies.len(), true);
        self.refit_active(bodies, node_offsets, velocities, h, margin);
    }

    /// [`Self::refit`] of the bodies marked in `self.active` alone.
    fn refit_active(
        &mut self,
        bodies: &[DeformableBody],
        node_offsets: &[u32],
        velocities: &[Vector3<f64>],
        h: f64,
        margin: f64,
    ) {
        self.trees.truncate(bodies.len());
        for (b, body) in bodies.iter().enumerate() {
            if !self.active[b] {
                if b >= self.trees.len() {
                    self.trees.push(SurfaceTree::new(body));
                }
                continue;
            }
            if b >= self.trees.len() {
                self.trees.push(SurfaceTree::new(body));
            } else if !self.trees[b].fits(body) {
                self.trees[b] = SurfaceTree::new(body);
            }
            let offset = node_offsets[b] as usize;
            let v = &velocities[offset..offset + body.state.positions.len()];
            self.trees[b].refit(body, v, h, grow(body, margin), &mut self.workspace);
        }
    }

    /// Appends to `out` the candidate pairs `(sample, triangle)` of
    /// `bodies[a]`'s samples against `bodies[b]`'s triangles whose swept
    /// boxes overlap, as the last [`Self::refit`] left them; for `a == b`,
    /// those whose triangle is not within two rings of the sample.
    pub fn candidates(
        &self,
        a: usize,
        b: usize,
        bodies: &[DeformableBody],
        out: &mut Vec<(u32, u32)>,
    ) {
        let (ta, tb) = (&self.trees[a], &self.trees[b]);
        if ta.samples.is_empty() || tb.triangles.is_empty() {
            return;
        }
        let pairs = ta
            .samples
            .leaf_pairs(&tb.triangles, |x: &BvhNode, y: &BvhNode| x.intersects(y));
        for (s, t) in pairs {
            // The descent starts from the roots' first children unchecked.
            if !ta.sample_boxes[s as usize].overlaps(&tb.triangle_boxes[t as usize]) {
                continue;
            }
            if a == b
                && ta.adjacent(
                    &bodies[a].model.samples[s as usize],
                    &bodies[b].model.surface[t as usize],
                )
            {
                continue;
            }
            out.push((s, t));
        }
    }

    /// Appends to `out` the contacts of a step of `h` (see the module's
    /// documentation): between every two bodies both ways, and within
    /// each body whose material asks for self-collision. `velocities` are
    /// the free velocities of all bodies' nodes, body `b`'s from
    /// `node_offsets[b]`. Refits the trees first.
    pub fn detect(
        &mut self,
        bodies: &[DeformableBody],
        node_offsets: &[u32],
        velocities: &[Vector3<f64>],
        h: f64,
        margin: f64,
        out: &mut Vec<SurfaceContact>,
    ) {
        let wanted = bodies.len() > 1 || bodies.iter().any(|b| b.model.material.self_collision);
        if !wanted {
            return;
        }
        // Each body's box over the step holds every sample's and every
        // triangle's swept box (a sample and a triangle's corners are
        // blends of its nodes): two bodies whose boxes do not meet have no
        // candidate pair, and a body meeting none (nor itself) needs no
        // refit.
        self.body_boxes.clear();
        for (b, body) in bodies.iter().enumerate() {
            let offset = node_offsets[b] as usize;
            let v = &velocities[offset..offset + body.state.positions.len()];
            self.body_boxes
                .push(body_box(&body.state.positions, v, h, grow(body, margin)));
        }
        let meet = |boxes: &[Option<SweptBox>], a: usize, b: usize| match (boxes[a], boxes[b]) {
            (Some(x), Some(y)) => x.overlaps(&y),
            _ => false,
        };
        self.active.clear();
        self.active.extend((0..bodies.len()).map(|a| {
            bodies[a].model.material.self_collision
                || (0..bodies.len()).any(|b| b != a && meet(&self.body_boxes, a, b))
        }));
        if !self.active.iter().any(|&a| a) {
            return;
        }
        self.refit_active(bodies, node_offsets, velocities, h, margin);
        for a in 0..bodies.len() {
            for b in 0..bodies.len() {
                if a == b && !bodies[a].model.material.self_collision {
                    continue;
                }
                if a != b && !meet(&self.body_boxes, a, b) {
                    continue;
                }
                let mut pairs = std::mem::take(&mut self.pairs);
                pairs.clear();
                self.candidates(a, b, bodies, &mut pairs);
                let va = &velocities[node_offsets[a] as usize..];
                let vb = &velocities[node_offsets[b] as usize..];
                for &(s, t) in &pairs {
                    if let Some(c) = self.contact(a, s, b, t, bodies, va, vb, h, margin) {
                        out.push(c);
                    }
                }
                self.pairs = pairs;
            }
        }
    }

    /// The contact of sample `s` of body `a` with triangle `t` of body `b`,
    /// if the two may meet within the step.
    #[allow(clippy::too_many_arguments)]
    fn contact(
        &self,
        a: usize,
        s: u32,
        b: usize,
        t: u32,
        bodies: &[DeformableBody],
        va: &[Vector3<f64>],
        vb: &[Vector3<f64>],
        h: f64,
        margin: f64,
    ) -> Option<SurfaceContact> {
        let (body_a, body_b) = (&bodies[a], &bodies[b]);
        let sample = &body_a.model.samples[s as usize];
        let face = body_b.model.surface[t as usize];
        let p = sample.position(&body_a.state.positions);
        let [x0, x1, x2] = face.map(|i| body_b.state.positions[i as usize]);
        let weights = nearest_on_triangle(&p, &x0, &x1, &x2);
        let q =
            Point3::from(weights[0] * x0.coords + weights[1] * x1.coords + weights[2] * x2.coords);
        let relative = blend(&sample.nodes, &sample.weights, va) - blend(&face, &weights, vb);
        let offset = p - q;
        let distance = offset.norm();
        let face_normal = (x1 - x0).cross(&(x2 - x0));
        let area = face_normal.norm();
        let scale = (x1 - x0).norm().max((x2 - x0).norm());
        let face_normal = if area > 1e-12 * scale * scale {
            Some(face_normal / area)
        } else {
            None
        };
        let thickness = body_a.model.material.thickness + body_b.model.material.thickness;
        let reach = thickness + margin + h * relative.norm();
        // Just behind a face of a closed surface: inside its solid. Deeper
        // behind it, the sample is at another face (a thin solid's far
        // side), whose own contact holds it.
        let inside = self.trees[b].closed && distance < reach && weights.iter().all(|&w| w > 1e-9);
        let (normal, signed) = match face_normal {
            Some(n) if inside && offset.dot(&n) < 0.0 => (n, -distance),
            _ if distance > 1e-9 * scale.max(1e-9) => (offset / distance, distance),
            // On the face itself: the side it comes from.
            Some(n) if relative.dot(&n) <= 0.0 => (n, distance),
            Some(n) => (-n, distance),
            None => return None,
        };
        let gap = signed - thickness;
        if !(gap < margin + h * relative.norm()) {
            return None;
        }
        Some(SurfaceContact {
            body: a as u32,
            sample: s,
            other: b as u32,
            face: t,
            face_weights: weights,
            point: p,
            normal,
            gap,
            friction: (body_a.model.material.friction * body_b.model.material.friction).sqrt(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_point_on_a_triangle_is_found_in_each_region() {
        let (a, b, c) = (
            Point3::new(0.0, 0.0, 0.0),
            Point3::new(1.0, 0.0, 0.0),
            Point3::new(0.0, 1.0, 0.0),
        );
        let cases = [
            (Point3::new(0.2, 0.3, 0.5), [0.5, 0.2, 0.3]),
            (Point3::new(-1.0, -1.0, 0.0), [1.0, 0.0, 0.0]),
            (Point3::new(2.0, -0.1, 1.0), [0.0, 1.0, 0.0]),
            (Point3::new(0.5, -1.0, 0.0), [0.5, 0.5, 0.0]),
            (Point3::new(1.0, 1.0, -3.0), [0.0, 0.5, 0.5]),
            (Point3::new(-0.5, 0.25, 0.0), [0.75, 0.0, 0.25]),
        ];
        for (p, expected) in cases {
            let w = nearest_on_triangle(&p, &a, &b, &c);
            for k in 0..3 {
                assert!((w[k] - expected[k]).abs() < 1e-12, "{p:?}: {w:?}");
            }
        }
    }
}
