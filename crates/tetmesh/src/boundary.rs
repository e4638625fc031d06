//! The surface of a tet mesh, and the check that a surface is closed and
//! manifold.

use crate::tet_mesh::{TetMesh, OUTWARD_FACES};
use haptic_mesh::TriangleMesh;
use std::collections::HashMap;
use thiserror::Error;

/// The boundary of a [`TetMesh`]: faces used by exactly one tet, wound
/// counter-clockwise seen from outside.
#[derive(Clone, Debug, PartialEq)]
pub struct Boundary {
    /// The surface, with its own compact vertex numbering.
    pub surface: TriangleMesh,
    /// `surface_to_node[v]`: the tet-mesh node of surface vertex `v`.
    pub surface_to_node: Vec<u32>,
    /// `face_tets[f]`: the tet that surface triangle `f` bounds.
    pub face_tets: Vec<u32>,
}

impl Boundary {
    /// The surface triangles numbered by tet-mesh node instead of surface
    /// vertex, for models that keep one array of nodes for both.
    pub fn node_triangles(&self) -> Vec<[u32; 3]> {
        self.surface
            .triangles
            .iter()
            .map(|t| t.map(|v| self.surface_to_node[v as usize]))
            .collect()
    }
}

/// Why a boundary or surface is not a closed 2-manifold. Vertices are named
/// as the surface numbers them; [`TetMesh::check_boundary`] names tet-mesh
/// nodes instead.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum BoundaryError {
    #[error("a face of nodes {face:?} is shared by {count} tets (at most 2 may share one)")]
    OverusedFace { face: [u32; 3], count: usize },
    #[error("the surface is open: edge ({a}, {b}) bounds only {count} triangle(s)")]
    OpenEdge { a: u32, b: u32, count: usize },
    #[error("the surface is not manifold: edge ({a}, {b}) bounds {count} triangles")]
    NonManifoldEdge { a: u32, b: u32, count: usize },
    #[error("the surface is not consistently oriented: edge ({a}, {b}) runs the same way in both of its triangles")]
    MisorientedEdge { a: u32, b: u32 },
    #[error(
        "the surface is not manifold at vertex {vertex}: its triangles form {fans} separate fans"
    )]
    NonManifoldVertex { vertex: u32, fans: usize },
}

impl BoundaryError {
    /// The same error with its node numbers passed through `f`.
    /// Edges keep their lower number first.
    pub fn map_nodes(self, f: impl Fn(u32) -> u32) -> Self {
        let sorted = |a: u32, b: u32| [a.min(b), a.max(b)];
        match self {
            BoundaryError::OverusedFace { face, count } => BoundaryError::OverusedFace {
                face: face.map(&f),
                count,
            },
            BoundaryError::OpenEdge { a, b, count } => {
                let [a, b] = sorted(f(a), f(b));
                BoundaryError::OpenEdge { a, b, count }
            }
            BoundaryError::NonManifoldEdge { a, b, count } => {
                let [a, b] = sorted(f(a), f(b));
                BoundaryError::NonManifoldEdge { a, b, count }
            }
            BoundaryError::MisorientedEdge { a, b } => {
                let [a, b] = sorted(f(a), f(b));
                BoundaryError::MisorientedEdge { a, b }
            }
            BoundaryError::NonManifoldVertex { vertex, fans } => BoundaryError::NonManifoldVertex {
                vertex: f(vertex),
                fans,
            },
        }
    }
}

impl TetMesh {
    /// The faces used by exactly one tet, oriented outward (for positively
    /// oriented tets), as a triangle mesh with the map back to tet nodes.
    /// Fails when a face is shared by more than two tets.
    pub fn boundary(&self) -> Result<Boundary, BoundaryError> {
        let mut faces: HashMap<[u32; 3], (usize, u32, usize)> =
            HashMap::with_capacity(self.tets.len() * 2);
        for (t, tet) in self.tets.iter().enumerate() {
            for (local, face) in OUTWARD_FACES.iter().enumerate() {
                let mut key = face.map(|i| tet[i]);
                key.sort_unstable();
                faces
                    .entry(key)
                    .and_modify(|e| e.0 += 1)
                    .or_insert((1, t as u32, local));
            }
        }
        let mut once: Vec<(u32, usize)> = Vec::new();
        for (key, &(count, tet, local)) in &faces {
            if count > 2 {
                return Err(BoundaryError::OverusedFace { face: *key, count });
            }
            if count == 1 {
                once.push((tet, local));
            }
        }
        // Deterministic order: by tet, then by face.
        once.sort_unstable();
        let mut node_to_surface: HashMap<u32, u32> = HashMap::new();
        let mut surface_to_node = Vec::new();
        let mut vertices = Vec::new();
        let mut triangles = Vec::with_capacity(once.len());
        let mut face_tets = Vec::with_capacity(once.len());
        for &(tet, local) in &once {
            let nodes = OUTWARD_FACES[local].map(|i| self.tets[tet as usize][i]);
            let triangle = nodes.map(|n| {
                *node_to_surface.entry(n).or_insert_with(|| {
                    surface_to_node.push(n);
                    vertices.push(self.positions[n as usize]);
                    (vertices.len() - 1) as u32
                })
            });
            triangles.push(triangle);
            face_tets.push(tet);
        }
        Ok(Boundary {
            surface: TriangleMesh::new(vertices, triangles),
            surface_to_node,
            face_tets,
        })
    }

    /// The boundary, checked to be a closed, consistently oriented
    /// 2-manifold; errors name tet-mesh nodes.
    pub fn check_boundary(&self) -> Result<Boundary, BoundaryError> {
        let boundary = self.boundary()?;
        let to_node = |v: u32| boundary.surface_to_node[v as usize];
        check_closed_manifold(&boundary.surface).map_err(|error| error.map_nodes(to_node))?;
        Ok(boundary)
    }
}

/// Each undirected edge of `surface` (lowest index first, sorted) with the
/// number of its triangles that run it from low to high and from high to
/// low.
fn edge_uses(surface: &TriangleMesh) -> Vec<([u32; 2], (usize, usize))> {
    let mut edges: HashMap<[u32; 2], (usize, usize)> = HashMap::new();
    for t in &surface.triangles {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            let entry = edges.entry([a.min(b), a.max(b)]).or_insert((0, 0));
            if a < b {
                entry.0 += 1;
            } else {
                entry.1 += 1;
            }
        }
    }
    let mut sorted: Vec<_> = edges.into_iter().collect();
    sorted.sort_unstable();
    sorted
}

/// Checks that `surface` is closed, as a solid filled from it needs: no
/// edge bounds a single triangle. The first open edge is named (lowest
/// indices first). Unlike [`check_closed_manifold`], non-manifold spots
/// and orientation are allowed: a distance field's sign still tells inside
/// from outside.
pub fn check_closed(surface: &TriangleMesh) -> Result<(), BoundaryError> {
    match edge_uses(surface)
        .into_iter()
        .find(|(_, (forward, backward))| forward + backward == 1)
    {
        Some(([a, b], _)) => Err(BoundaryError::OpenEdge { a, b, count: 1 }),
        None => Ok(()),
    }
}

/// Checks that every edge of `surface` bounds exactly two triangles that
/// run it in opposite directions, and that the triangles around every
/// vertex form a single fan. The first offending edge or vertex is named
/// (lowest indices first).
pub fn check_closed_manifold(surface: &TriangleMesh) -> Result<(), BoundaryError> {
    for ([a, b], (forward, backward)) in edge_uses(surface) {
        let count = forward + backward;
        if count < 2 {
            return Err(BoundaryError::OpenEdge { a, b, count });
        }
        if count > 2 {
            return Err(BoundaryError::NonManifoldEdge { a, b, count });
        }
        if forward != 1 {
            return Err(BoundaryError::MisorientedEdge { a, b });
        }
    }
    // Around each vertex, the link edges (the far edge of each incident
    // triangle) must chain into one cycle: count the fans by union-find over
    // the incident triangles joined through shared edges.
    let mut incident: Vec<Vec<u32>> = vec![Vec::new(); surface.vertices.len()];
    for (f, t) in surface.triangles.iter().enumerate() {
        for &v in t {
            if let Some(list) = incident.get_mut(v as usize) {
                list.push(f as u32);
            }
        }
    }
    for (vertex, faces) in incident.iter().enumerate() {
        if faces.len() < 2 {
            continue;
        }
        let fans = count_fans(vertex as u32, faces, surface);
        if fans != 1 {
            return Err(BoundaryError::NonManifoldVertex {
                vertex: vertex as u32,
                fans,
            });
        }
    }
    Ok(())
}

/// Every edge of `surface` that does not bound exactly two triangles, and
/// every vertex whose triangles form more than one fan.
pub(crate) fn non_manifold_parts(surface: &TriangleMesh) -> (Vec<[u32; 2]>, Vec<u32>) {
    let mut counts: HashMap<[u32; 2], usize> = HashMap::new();
    let mut incident: Vec<Vec<u32>> = vec![Vec::new(); surface.vertices.len()];
    for (f, t) in surface.triangles.iter().enumerate() {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            *counts.entry([a.min(b), a.max(b)]).or_default() += 1;
            incident[t[k] as usize].push(f as u32);
        }
    }
    let mut edges: Vec<[u32; 2]> = counts
        .into_iter()
        .filter(|&(_, count)| count != 2)
        .map(|(edge, _)| edge)
        .collect();
    edges.sort_unstable();
    let vertices = (0..surface.vertices.len() as u32)
        .filter(|&v| {
            let faces = &incident[v as usize];
            faces.len() >= 2 && count_fans(v, faces, surface) != 1
        })
        .collect();
    (edges, vertices)
}

/// Connected components of the triangles around `vertex`, joined where two
/// share an edge through `vertex`.
fn count_fans(vertex: u32, faces: &[u32], surface: &TriangleMesh) -> usize {
    let mut parent: Vec<usize> = (0..faces.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    // Each incident triangle meets the vertex with two edges; key by the
    // other endpoint.
    let mut by_neighbour: HashMap<u32, usize> = HashMap::new();
    for (i, &f) in faces.iter().enumerate() {
        for &n in &surface.triangles[f as usize] {
            if n == vertex {
                continue;
            }
            if let Some(&j) = by_neighbour.get(&n) {
                let (ri, rj) = (root(&mut parent, i), root(&mut parent, j));
                parent[ri] = rj;
            } else {
                by_neighbour.insert(n, i);
            }
        }
    }
    (0..faces.len())
        .filter(|&i| root(&mut parent, i) == i)
        .count()
}

/// The volume enclosed by a closed, outward-oriented surface (m³), by the
/// divergence theorem.
pub fn enclosed_volume(surface: &TriangleMesh) -> f64 {
    surface
        .triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|i| surface.vertices[i as usize].coords);
            a.dot(&b.cross(&c))
        })
        .sum::<f64>()
        / 6.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Point3;

    /// A unit cube split into 6 tets around its diagonal 0–6.
    pub(crate) fn cube() -> TetMesh {
        let positions: Vec<Point3<f64>> = (0..8)
            .map(|i| {
                let [x, y, z] = [
                    [0, 0, 0],
                    [1, 0, 0],
                    [1, 1, 0],
                    [0, 1, 0],
                    [0, 0, 1],
                    [1, 0, 1],
                    [1, 1, 1],
                    [0, 1, 1],
                ][i];
                Point3::new(x as f64, y as f64, z as f64)
            })
            .collect();
        let ring = [1, 2, 3, 7, 4, 5];
        let mut tets: Vec<[u32; 4]> = (0..6).map(|k| [0, ring[k], ring[(k + 1) % 6], 6]).collect();
        let mut mesh = TetMesh::new(positions, Vec::new());
        for tet in &mut tets {
            mesh.tets = vec![*tet];
            if mesh.tet_volume(0) < 0.0 {
                tet.swap(0, 1);
            }
        }
        mesh.tets = tets;
        mesh
    }

    #[test]
    fn cube_boundary_is_closed_outward_and_encloses_the_volume() {
        let mesh = cube();
        mesh.validate().unwrap();
        assert!((mesh.volume() - 1.0).abs() < 1e-12);
        let boundary = mesh.check_boundary().unwrap();
        assert_eq!(boundary.surface.triangles.len(), 12);
        assert_eq!(boundary.surface.vertices.len(), 8);
        assert!((enclosed_volume(&boundary.surface) - 1.0).abs() < 1e-12);
        for (v, &n) in boundary.surface_to_node.iter().enumerate() {
            assert_eq!(boundary.surface.vertices[v], mesh.positions[n as usize]);
        }
        for (f, t) in boundary.node_triangles().iter().enumerate() {
            let corners = t.map(|n| mesh.positions[n as usize]);
            assert_eq!(corners, boundary.surface.corners(f));
            assert!(
                mesh.tets[boundary.face_tets[f] as usize]
                    .iter()
                    .filter(|n| t.contains(n))
                    .count()
                    == 3
            );
        }
        assert_eq!(mesh.edges().len(), 19);
    }

    #[test]
    fn tets_meeting_at_an_edge_are_not_manifold() {
        let p = |x: f64, y: f64, z: f64| Point3::new(x, y, z);
        // Two tets sharing only the edge 0–1.
        let mesh = TetMesh::new(
            vec![
                p(0.0, 0.0, 0.0),
                p(1.0, 0.0, 0.0),
                p(0.0, 1.0, 0.0),
                p(0.0, 0.0, 1.0),
                p(0.0, -1.0, 0.0),
                p(0.0, 0.0, -1.0),
            ],
            vec![[0, 1, 2, 3], [0, 1, 4, 5]],
        );
        let mut mesh = mesh;
        if mesh.tet_volume(1) < 0.0 {
            mesh.tets[1].swap(2, 3);
        }
        mesh.validate().unwrap();
        let error = mesh.check_boundary().unwrap_err();
        assert_eq!(
            error,
            BoundaryError::NonManifoldEdge {
                a: 0,
                b: 1,
                count: 4
            }
        );
    }

    #[test]
    fn tets_meeting_at_a_vertex_are_not_manifold() {
        let p = |x: f64, y: f64, z: f64| Point3::new(x, y, z);
        let mesh = TetMesh::new(
            vec![
                p(0.0, 0.0, 0.0),
                p(1.0, 0.0, 0.0),
                p(0.0, 1.0, 0.0),
                p(0.0, 0.0, 1.0),
                p(-1.0, 0.0, 0.0),
                p(0.0, -1.0, 0.0),
                p(0.0, 0.0, -1.0),
            ],
            vec![[0, 1, 2, 3], [0, 4, 6, 5]],
        );
        let mut mesh = mesh;
        if mesh.tet_volume(1) < 0.0 {
            mesh.tets[1].swap(2, 3);
        }
        mesh.validate().unwrap();
        assert_eq!(
            mesh.check_boundary().unwrap_err(),
            BoundaryError::NonManifoldVertex { vertex: 0, fans: 2 }
        );
    }

    #[test]
    fn open_surface_names_its_edge() {
        let mut surface = cube().boundary().unwrap().surface;
        surface.triangles.pop();
        assert!(matches!(
            check_closed(&surface),
            Err(BoundaryError::OpenEdge { count: 1, .. })
        ));
        let error = check_closed_manifold(&surface).unwrap_err();
        assert!(matches!(error, BoundaryError::OpenEdge { count: 1, .. }));
        assert!(
            error.to_string().contains("the surface is open: edge ("),
            "{error}"
        );
    }

    #[test]
    fn a_face_shared_by_three_tets_is_refused() {
        let mut mesh = cube();
        let first = mesh.tets[0];
        mesh.tets.push(first);
        assert!(matches!(
            mesh.boundary(),
            Err(BoundaryError::OverusedFace { count: 3, .. })
        ));
    }
}
