//! Isosurface stuffing (Labelle & Shewchuk, "Isosurface Stuffing: Fast
//! Tetrahedral Meshes with Good Dihedral Angles", SIGGRAPH 2007) on a
//! uniform body-centred cubic (BCC) lattice.
//!
//! 1. The BCC lattice: cube corners and cube centres at spacing `h`; each
//!    pair of neighbouring centres and the square face between them make
//!    four tets. Edges are *long* (axis-aligned, length `h`) or *short*
//!    (centre to corner, `h√3/2`).
//! 2. The field is sampled at every lattice node; on every edge whose ends
//!    have strictly opposite signs a *cut point* is placed at the field's
//!    zero (root-found on the field itself, not on the linear interpolant).
//! 3. Warping: a cut point closer to an end than `α` times the edge's
//!    length *violates* that end; each node with violating cut points moves
//!    to the nearest one and becomes a zero, and the cut points on its
//!    edges are dropped. `α_long = 0.24999`, `α_short = 0.41189` (the paper's
//!    values for its dihedral bounds).
//! 4. Stencils: each lattice tet with no positive node is kept
//!    whole; one with negative and positive nodes is replaced by its inside
//!    part — a tet, a pyramid (2 tets) or a prism (3 tets) — through the cut
//!    points. Quadrilaterals are split along the diagonal through their
//!    lowest-numbered vertex (Dompierre et al. 1999's rule), which makes
//!    neighbours agree and every prism splittable; the paper's parity rule,
//!    on which its 10.7°–164.8° dihedral bounds rest, is not used, so those
//!    bounds are not claimed: [`StuffingReport::quality`] measures them.
//!
//! Each output tet is oriented by its volume in a reference configuration
//! (lattice nodes unwarped, cut points at edge midpoints), where every
//! stencil piece is convex; a tet that is negative in the real
//! configuration is therefore a real inversion, and refused.

use crate::boundary::{non_manifold_parts, BoundaryError};
use crate::tet_mesh::{signed_volume, Quality, TetMesh};
use crate::validate::{TetMeshError, DEGENERATE_RELATIVE_VOLUME};
use haptic_mesh::Aabb;
use haptic_sdf::DistanceField;
use nalgebra::{Point3, Vector3};
use std::collections::HashMap;
use thiserror::Error;

/// Parameters of [`stuff_isosurface`].
#[derive(Clone, Debug, PartialEq)]
pub struct StuffingOptions {
    /// Cube size `h` of the BCC lattice (m): the long edges' length, and
    /// about the size of an interior tet.
    pub spacing: f64,
    /// The region to fill; `None` takes the field's [`DistanceField::bounds`].
    /// The lattice reaches one spacing beyond it on every side.
    pub bounds: Option<Aabb>,
    /// Warping thresholds as fractions of a long and a short edge.
    pub alpha_long: f64,
    pub alpha_short: f64,
    /// Refuse a lattice of more nodes than this (memory: about 40 bytes a
    /// node).
    pub max_lattice_nodes: usize,
}

impl StuffingOptions {
    /// The paper's warping thresholds, the field's bounds, at most 20 million
    /// lattice nodes.
    pub fn new(spacing: f64) -> Self {
        Self {
            spacing,
            bounds: None,
            alpha_long: 0.24999,
            alpha_short: 0.41189,
            max_lattice_nodes: 20_000_000,
        }
    }
}

/// What [`stuff_isosurface`] did, and the quality of its mesh.
#[derive(Clone, Debug, PartialEq)]
pub struct StuffingReport {
    /// Lattice cubes along x, y, z.
    pub lattice_cubes: [usize; 3],
    pub lattice_nodes: usize,
    /// Cut points placed, and how many nodes warped onto one.
    pub cut_points: usize,
    pub warped_nodes: usize,
    /// Lattice tets kept whole, and cut by the surface.
    pub whole_tets: usize,
    pub cut_tets: usize,
    /// Tets removed where the surface pinched to an edge or a vertex.
    pub removed_tets: usize,
    /// Total volume (m³) and element quality of the result.
    pub volume: f64,
    pub quality: Quality,
}

/// A generated mesh and its report.
#[derive(Clone, Debug, PartialEq)]
pub struct Stuffed {
    pub mesh: TetMesh,
    pub report: StuffingReport,
}

/// Why [`stuff_isosurface`] made no mesh.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum StuffingError {
    #[error("the lattice spacing must be finite and positive, got {0}")]
    BadSpacing(f64),
    #[error("the warping thresholds must lie in (0, 0.5), got α_long {long}, α_short {short}")]
    BadAlpha { long: f64, short: f64 },
    #[error("the region to fill is empty or not finite")]
    EmptyBounds,
    #[error(
        "a lattice of {cubes:?} cubes has {nodes} nodes, more than the limit of {max}: use a larger spacing"
    )]
    TooLarge {
        cubes: [usize; 3],
        nodes: usize,
        max: usize,
    },
    #[error("the field is nowhere negative on the lattice: nothing to fill")]
    NothingInside,
    #[error(
        "the inside is thinner than the lattice resolves: no tet was made (use a smaller spacing)"
    )]
    TooThin,
    #[error("the generated mesh is invalid: {0}")]
    Invalid(TetMeshError),
    #[error("the generated mesh's boundary is not a closed manifold: {0}")]
    Boundary(BoundaryError),
}

/// The BCC lattice: node numbering and positions.
struct Lattice {
    origin: Point3<f64>,
    h: f64,
    /// Cubes per axis.
    n: [usize; 3],
}

impl Lattice {
    fn corners(&self) -> usize {
        (self.n[0] + 1) * (self.n[1] + 1) * (self.n[2] + 1)
    }

    fn nodes(&self) -> usize {
        self.corners() + self.n[0] * self.n[1] * self.n[2]
    }

    fn corner(&self, [i, j, k]: [usize; 3]) -> u32 {
        (i + (self.n[0] + 1) * (j + (self.n[1] + 1) * k)) as u32
    }

    fn centre(&self, [i, j, k]: [usize; 3]) -> u32 {
        (self.corners() + i + self.n[0] * (j + self.n[1] * k)) as u32
    }

    fn position(&self, id: u32) -> Point3<f64> {
        let id = id as usize;
        let (index, offset, dims) = if id < self.corners() {
            (id, 0.0, [self.n[0] + 1, self.n[1] + 1])
        } else {
            (id - self.corners(), 0.5, [self.n[0], self.n[1]])
        };
        let i = index % dims[0];
        let j = (index / dims[0]) % dims[1];
        let k = index / (dims[0] * dims[1]);
        self.origin + self.h * Vector3::new(i as f64 + offset, j as f64 + offset, k as f64 + offset)
    }

    /// Every lattice tet, as four node ids (not yet oriented).
    fn for_each_tet(&self, mut f: impl FnMut([u32; 4])) {
        let n = self.n;
        for axis in 0..3 {
            let (b, c) = ((axis + 1) % 3, (axis + 2) % 3);
            for k in 0..n[2] {
                for j in 0..n[1] {
                    for i in 0..n[0] {
                        let c1 = [i, j, k];
                        if c1[axis] + 1 >= n[axis] {
                            continue;
                        }
                        let mut c2 = c1;
                        c2[axis] += 1;
                        let face = |db: usize, dc: usize| {
                            let mut p = c1;
                            p[axis] += 1;
                            p[b] += db;
                            p[c] += dc;
                            self.corner(p)
                        };
                        let ring = [face(0, 0), face(1, 0), face(1, 1), face(0, 1)];
                        let (ca, cb) = (self.centre(c1), self.centre(c2));
                        for m in 0..4 {
                            f([ca, cb, ring[m], ring[(m + 1) % 4]]);
                        }
                    }
                }
            }
        }
    }

    /// Every lattice edge, with whether it is long.
    fn for_each_edge(&self, mut f: impl FnMut(u32, u32, bool)) {
        let n = self.n;
        // Long edges between corners and between centres.
        for k in 0..=n[2] {
            for j in 0..=n[1] {
                for i in 0..=n[0] {
                    let p = [i, j, k];
                    for axis in 0..3 {
                        if p[axis] < n[axis] {
                            let mut q = p;
                            q[axis] += 1;
                            f(self.corner(p), self.corner(q), true);
                        }
                        if p.iter().zip(&n).all(|(a, b)| a < b) && p[axis] + 1 < n[axis] {
                            let mut q = p;
                            q[axis] += 1;
                            f(self.centre(p), self.centre(q), true);
                        }
                    }
                    // Short edges: the centre of cube p to its 8 corners.
                    if p.iter().zip(&n).all(|(a, b)| a < b) {
                        for corner in 0..8 {
                            let q = [i + (corner & 1), j + ((corner >> 1) & 1), k + (corner >> 2)];
                            f(self.centre(p), self.corner(q), false);
                        }
                    }
                }
            }
        }
    }
}

/// Bytes [`stuff_isosurface`] holds per lattice node at its peak (an upper
/// estimate: position, value, cut points and output).
pub const BYTES_PER_LATTICE_NODE: usize = 64;

/// The cubes per axis and the node count of the BCC lattice that
/// [`stuff_isosurface`] lays over `bounds` at `spacing` (saturating).
pub fn lattice_size(bounds: &Aabb, spacing: f64) -> ([usize; 3], usize) {
    let extents = bounds.extents();
    let cubes = |e: f64| ((e / spacing).ceil() as usize).saturating_add(2);
    let n = [cubes(extents.x), cubes(extents.y), cubes(extents.z)];
    let corners = n
        .iter()
        .try_fold(1usize, |acc, &c| acc.checked_mul(c.checked_add(1)?));
    let centres = n.iter().try_fold(1usize, |acc, &c| acc.checked_mul(c));
    let nodes = corners
        .zip(centres)
        .and_then(|(a, b)| a.checked_add(b))
        .unwrap_or(usize::MAX);
    (n, nodes)
}

/// A cut point on the lattice edge `a`–`b`, at `a + t (b − a)`.
struct Cut {
    a: u32,
    b: u32,
    t: f64,
    long: bool,
    position: Point3<f64>,
    alive: bool,
}

/// Fills the region where `field` is negative with tets by isosurface
/// stuffing (see the module documentation); the result is validated
/// (positive, non-degenerate tets) and its boundary checked closed and
/// manifold.
pub fn stuff_isosurface(
    field: &dyn DistanceField,
    options: &StuffingOptions,
) -> Result<Stuffed, StuffingError> {
    let h = options.spacing;
    if !(h.is_finite() && h > 0.0) {
        return Err(StuffingError::BadSpacing(h));
    }
    let alpha_ok = |a: f64| a > 0.0 && a < 0.5;
    if !(alpha_ok(options.alpha_long) && alpha_ok(options.alpha_short)) {
        return Err(StuffingError::BadAlpha {
            long: options.alpha_long,
            short: options.alpha_short,
        });
    }
    let bounds = options.bounds.unwrap_or_else(|| field.bounds());
    let extents = bounds.extents();
    if bounds.is_empty() || !extents.iter().all(|e| e.is_finite()) {
        return Err(StuffingError::EmptyBounds);
    }
    let (n, nodes) = lattice_size(&bounds, h);
    let lattice = Lattice {
        origin: bounds.min - Vector3::repeat(h),
        h,
        n,
    };
    // Output ids number the lattice nodes, then the cut points (at most
    // seven edges a node): all must fit a u32.
    if nodes > options.max_lattice_nodes || nodes > u32::MAX as usize / 8 {
        return Err(StuffingError::TooLarge {
            cubes: n,
            nodes,
            max: options.max_lattice_nodes,
        });
    }
    debug_assert_eq!(nodes, lattice.nodes());

    // 2. Sample the field and place cut points.
    let mut position: Vec<Point3<f64>> = (0..nodes as u32).map(|id| lattice.position(id)).collect();
    let mut phi: Vec<f64> = position.iter().map(|p| field.value(p)).collect();
    if !phi.iter().any(|&v| v < 0.0) {
        return Err(StuffingError::NothingInside);
    }
    let mut cuts: Vec<Cut> = Vec::new();
    let mut cut_of: HashMap<(u32, u32), u32> = HashMap::new();
    lattice.for_each_edge(|a, b, long| {
        let (fa, fb) = (phi[a as usize], phi[b as usize]);
        if (fa < 0.0 && fb > 0.0) || (fa > 0.0 && fb < 0.0) {
            let (pa, pb) = (position[a as usize], position[b as usize]);
            let t = edge_root(field, &pa, &pb, fa, fb);
            cut_of.insert((a.min(b), a.max(b)), cuts.len() as u32);
            cuts.push(Cut {
                a,
                b,
                t,
                long,
                position: pa + t * (pb - pa),
                alive: true,
            });
        }
    });
    let cut_points = cuts.len();

    // 3. Warp: each node with violating cut points moves to the nearest.
    let mut incident: HashMap<u32, Vec<u32>> = HashMap::new();
    for (c, cut) in cuts.iter().enumerate() {
        incident.entry(cut.a).or_default().push(c as u32);
        incident.entry(cut.b).or_default().push(c as u32);
    }
    let mut order: Vec<u32> = incident.keys().copied().collect();
    order.sort_unstable();
    let mut warped_nodes = 0;
    for v in order {
        let list = &incident[&v];
        let mut nearest: Option<(f64, u32)> = None;
        for &c in list {
            let cut = &cuts[c as usize];
            if !cut.alive {
                continue;
            }
            let alpha = if cut.long {
                options.alpha_long
            } else {
                options.alpha_short
            };
            let fraction = if cut.a == v { cut.t } else { 1.0 - cut.t };
            if fraction < alpha && nearest.is_none_or(|(f, _)| fraction < f) {
                nearest = Some((fraction, c));
            }
        }
        if let Some((_, c)) = nearest {
            position[v as usize] = cuts[c as usize].position;
            phi[v as usize] = 0.0;
            warped_nodes += 1;
            for &c in list {
                cuts[c as usize].alive = false;
            }
        }
    }

    // 4. Stencils. Output ids: lattice nodes, then cut points.
    let cut_id = |a: u32, b: u32| -> u32 { nodes as u32 + cut_of[&(a.min(b), a.max(b))] };
    let reference = |id: u32| -> Point3<f64> {
        if (id as usize) < nodes {
            lattice.position(id)
        } else {
            let cut = &cuts[id as usize - nodes];
            nalgebra::center(&lattice.position(cut.a), &lattice.position(cut.b))
        }
    };
    let mut tets: Vec<[u32; 4]> = Vec::new();
    let mut emit = |mut tet: [u32; 4]| {
        let [a, b, c, d] = tet.map(reference);
        if signed_volume(&a, &b, &c, &d) < 0.0 {
            tet.swap(2, 3);
        }
        tets.push(tet);
    };
    let (mut whole_tets, mut cut_tets) = (0, 0);
    let sign = |v: f64| -> i8 {
        if v < 0.0 {
            -1
        } else if v > 0.0 {
            1
        } else {
            0
        }
    };
    lattice.for_each_tet(|tet| {
        let s = tet.map(|v| sign(phi[v as usize]));
        let negative: Vec<u32> = (0..4).filter(|&i| s[i] < 0).map(|i| tet[i]).collect();
        let zero: Vec<u32> = (0..4).filter(|&i| s[i] == 0).map(|i| tet[i]).collect();
        let positive: Vec<u32> = (0..4).filter(|&i| s[i] > 0).map(|i| tet[i]).collect();
        if positive.is_empty() && !negative.is_empty() {
            whole_tets += 1;
            emit(tet);
            return;
        }
        if negative.is_empty() {
            // All four on the surface: keep the tet if its middle is inside.
            if zero.len() == 4 {
                let centre = tet.iter().fold(Vector3::zeros(), |acc, &v| {
                    acc + position[v as usize].coords
                }) / 4.0;
                if field.value(&Point3::from(centre)) < 0.0 {
                    whole_tets += 1;
                    emit(tet);
                }
            }
            return;
        }
        cut_tets += 1;
        match (negative.len(), zero.len()) {
            (1, 0) => {
                let n = negative[0];
                emit([
                    n,
                    cut_id(n, positive[0]),
                    cut_id(n, positive[1]),
                    cut_id(n, positive[2]),
                ]);
            }
            (1, 1) => {
                let n = negative[0];
                emit([n, zero[0], cut_id(n, positive[0]), cut_id(n, positive[1])]);
            }
            (1, 2) => {
                let n = negative[0];
                emit([n, zero[0], zero[1], cut_id(n, positive[0])]);
            }
            (2, 0) => {
                let [n1, n2] = [negative[0], negative[1]];
                let [p1, p2] = [positive[0], positive[1]];
                prism(
                    [n1, cut_id(n1, p1), cut_id(n1, p2)],
                    [n2, cut_id(n2, p1), cut_id(n2, p2)],
                    &mut emit,
                );
            }
            (2, 1) => {
                let [n1, n2] = [negative[0], negative[1]];
                let p = positive[0];
                let quad = [n1, n2, cut_id(n2, p), cut_id(n1, p)];
                for [a, b, c] in split_quad(quad) {
                    emit([a, b, c, zero[0]]);
                }
            }
            (3, 0) => {
                let p = positive[0];
                let [a, b, c] = [negative[0], negative[1], negative[2]];
                prism(
                    [a, b, c],
                    [cut_id(a, p), cut_id(b, p), cut_id(c, p)],
                    &mut emit,
                );
            }
            _ => unreachable!("a tet with a positive node has at most three negative ones"),
        }
    });

    // Compact: the used nodes, in id order.
    let mut new_index = vec![u32::MAX; nodes + cuts.len()];
    let mut used: Vec<u32> = tets.iter().flatten().copied().collect();
    used.sort_unstable();
    used.dedup();
    let positions: Vec<Point3<f64>> = used
        .iter()
        .enumerate()
        .map(|(i, &id)| {
            new_index[id as usize] = i as u32;
            if (id as usize) < nodes {
                position[id as usize]
            } else {
                cuts[id as usize - nodes].position
            }
        })
        .collect();
    for tet in &mut tets {
        *tet = tet.map(|id| new_index[id as usize]);
    }
    let mut mesh = TetMesh::new(positions, tets);
    let removed_tets = remove_pinches(&mut mesh);
    if mesh.tets.is_empty() {
        return Err(StuffingError::TooThin);
    }
    let validation = mesh
        .validate_with(DEGENERATE_RELATIVE_VOLUME)
        .map_err(StuffingError::Invalid)?;
    mesh.check_boundary().map_err(StuffingError::Boundary)?;
    let report = StuffingReport {
        lattice_cubes: n,
        lattice_nodes: nodes,
        cut_points,
        warped_nodes,
        whole_tets,
        cut_tets,
        removed_tets,
        volume: validation.volume,
        quality: mesh.quality(),
    };
    Ok(Stuffed { mesh, report })
}

/// Where a feature is thinner than the lattice resolves, two parts of the
/// mesh can meet at a single edge or node, and the boundary is not a
/// manifold there. Removes the tets at every such edge and node until the
/// boundary is a manifold (at most a few rounds), then the nodes no tet
/// uses; returns how many tets went.
fn remove_pinches(mesh: &mut TetMesh) -> usize {
    const ROUNDS: usize = 8;
    let before = mesh.tets.len();
    for _ in 0..ROUNDS {
        let Ok(boundary) = mesh.boundary() else {
            break;
        };
        let (edges, vertices) = non_manifold_parts(&boundary.surface);
        if edges.is_empty() && vertices.is_empty() {
            break;
        }
        let node = |v: u32| boundary.surface_to_node[v as usize];
        let edges: Vec<[u32; 2]> = edges.iter().map(|e| e.map(node)).collect();
        let vertices: Vec<u32> = vertices.iter().map(|&v| node(v)).collect();
        mesh.tets.retain(|tet| {
            let at_edge = edges
                .iter()
                .any(|[a, b]| tet.contains(a) && tet.contains(b));
            let at_vertex = vertices.iter().any(|v| tet.contains(v));
            !(at_edge || at_vertex)
        });
    }
    // Drop the nodes no tet uses any more.
    let mut new_index = vec![u32::MAX; mesh.positions.len()];
    let mut positions = Vec::with_capacity(mesh.positions.len());
    for tet in &mut mesh.tets {
        for n in tet.iter_mut() {
            if new_index[*n as usize] == u32::MAX {
                new_index[*n as usize] = positions.len() as u32;
                positions.push(mesh.positions[*n as usize]);
            }
            *n = new_index[*n as usize];
        }
    }
    mesh.positions = positions;
    before - mesh.tets.len()
}

/// The zero of the field on the segment `a`–`b` (values `fa`, `fb` of
/// opposite signs), as a fraction from `a`: the Illinois variant of regula
/// falsi on the field, kept within the bracket.
fn edge_root(field: &dyn DistanceField, a: &Point3<f64>, b: &Point3<f64>, fa: f64, fb: f64) -> f64 {
    let (mut t0, mut t1, mut f0, mut f1) = (0.0, 1.0, fa, fb);
    let mut t = f0 / (f0 - f1);
    let mut last_side = 0i8;
    let tolerance = 1e-12 * (b - a).norm().max(f64::MIN_POSITIVE);
    for _ in 0..30 {
        t = t0 - f0 * (t1 - t0) / (f1 - f0);
        if !(t > t0 && t < t1) {
            t = 0.5 * (t0 + t1);
        }
        let f = field.value(&(a + t * (b - a)));
        if f.abs() <= tolerance || (t1 - t0) <= 1e-12 {
            break;
        }
        if (f < 0.0) == (f0 < 0.0) {
            t0 = t;
            f0 = f;
            if last_side == -1 {
                f1 *= 0.5;
            }
            last_side = -1;
        } else {
            t1 = t;
            f1 = f;
            if last_side == 1 {
                f0 *= 0.5;
            }
            last_side = 1;
        }
    }
    t.clamp(0.0, 1.0)
}

/// Splits the quadrilateral `q0 q1 q2 q3` (in cyclic order) along the
/// diagonal through its lowest-numbered vertex.
fn split_quad([q0, q1, q2, q3]: [u32; 4]) -> [[u32; 3]; 2] {
    if q0.min(q2) < q1.min(q3) {
        [[q0, q1, q2], [q0, q2, q3]]
    } else {
        [[q1, q2, q3], [q1, q3, q0]]
    }
}

/// Splits the prism with triangles `a` and `b` (`a[i]`–`b[i]` its side
/// edges) into three tets whose side diagonals each pass through the
/// quadrilateral's lowest-numbered vertex (Dompierre et al. 1999), so that
/// neighbours agree.
fn prism(a: [u32; 3], b: [u32; 3], emit: &mut impl FnMut([u32; 4])) {
    // Relabel so that the lowest-numbered vertex is a[0].
    let all = [a[0], a[1], a[2], b[0], b[1], b[2]];
    let lowest = (0..6).min_by_key(|&i| all[i]).unwrap_or(0);
    let (bottom, top) = if lowest < 3 { (a, b) } else { (b, a) };
    let r = lowest % 3;
    let a = [bottom[r], bottom[(r + 1) % 3], bottom[(r + 2) % 3]];
    let b = [top[r], top[(r + 1) % 3], top[(r + 2) % 3]];
    if a[1].min(b[2]) < a[2].min(b[1]) {
        emit([a[0], a[1], a[2], b[2]]);
        emit([a[0], a[1], b[2], b[1]]);
    } else {
        emit([a[0], a[1], a[2], b[1]]);
        emit([a[0], b[1], a[2], b[2]]);
    }
    emit([a[0], b[1], b[2], b[0]]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prism_split_covers_the_prism() {
        // A unit right prism: the three tets' volumes add up to its volume.
        let p = [
            Point3::new(0.0, 0.0, 0.0),
            Point3::new(1.0, 0.0, 0.0),
            Point3::new(0.0, 1.0, 0.0),
            Point3::new(0.0, 0.0, 1.0),
            Point3::new(1.0, 0.0, 1.0),
            Point3::new(0.0, 1.0, 1.0),
        ];
        for labels in [
            [0u32, 1, 2, 3, 4, 5],
            [5, 3, 4, 0, 2, 1],
            [2, 5, 0, 4, 1, 3],
        ] {
            let mut total = 0.0;
            let mut count = 0;
            let position = |id: u32| p[labels.iter().position(|&l| l == id).unwrap()];
            prism(
                [labels[0], labels[1], labels[2]],
                [labels[3], labels[4], labels[5]],
                &mut |tet| {
                    let [a, b, c, d] = tet.map(position);
                    total += signed_volume(&a, &b, &c, &d).abs();
                    count += 1;
                },
            );
            assert_eq!(count, 3);
            assert!((total - 0.5).abs() < 1e-12, "{labels:?}: {total}");
        }
    }

    #[test]
    fn lattice_tets_tile_the_interior() {
        let lattice = Lattice {
            origin: Point3::origin(),
            h: 1.0,
            n: [3, 3, 3],
        };
        let mut volume = 0.0;
        let mut count = 0;
        lattice.for_each_tet(|tet| {
            let [a, b, c, d] = tet.map(|v| lattice.position(v));
            let v = signed_volume(&a, &b, &c, &d).abs();
            assert!((v - 1.0 / 12.0).abs() < 1e-12);
            volume += v;
            count += 1;
        });
        // Centre pairs along one axis: 2 × 3 × 3 = 18, times 3 axes, 4 tets each.
        assert_eq!(count, 18 * 3 * 4);
        assert!((volume - count as f64 / 12.0).abs() < 1e-9);
    }
}
