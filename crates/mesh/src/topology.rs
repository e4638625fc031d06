//! Edge and vertex topology of a triangle mesh: boundaries, non-manifold
//! spots, orientation consistency, components, Euler characteristic, genus.

use crate::plural::counted;
use crate::TriangleMesh;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::fmt;

/// Topological facts about a mesh, as computed by `analyze_topology`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TopologyReport {
    /// Vertices used by at least one triangle.
    pub vertices: usize,
    /// Distinct undirected edges.
    pub edges: usize,
    pub triangles: usize,
    /// Edges used by exactly one triangle (boundary edges).
    pub(crate) open_edges: usize,
    /// Edges used by more than two triangles.
    pub(crate) non_manifold_edges: usize,
    /// Edges used by exactly two triangles that traverse it in the same
    /// direction, so one of them is flipped.
    pub(crate) inconsistent_edges: usize,
    /// Vertices whose triangles form more than one edge-connected fan (two
    /// sheets touching at a point).
    pub(crate) non_manifold_vertices: usize,
    /// Groups of triangles connected through shared vertices.
    pub components: usize,
    /// `vertices − edges + triangles`.
    pub(crate) euler_characteristic: i64,
    /// Total genus (handles) over all components, known when the mesh is a
    /// closed, consistently oriented manifold.
    pub(crate) genus: Option<u64>,
}

impl TopologyReport {
    /// No open and no non-manifold edges: the surface encloses a volume
    /// (though it may still be inconsistently oriented).
    pub fn is_closed(&self) -> bool {
        self.open_edges == 0 && self.non_manifold_edges == 0
    }

    /// Closed, manifold at every vertex and consistently oriented.
    pub(crate) fn is_watertight(&self) -> bool {
        self.is_closed() && self.non_manifold_vertices == 0 && self.inconsistent_edges == 0
    }
}

impl fmt::Display for TopologyReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.is_closed() {
            "closed"
        } else {
            "not closed"
        })?;
        for (count, one, many) in [
            (self.open_edges, "open edge", "open edges"),
            (
                self.non_manifold_edges,
                "non-manifold edge",
                "non-manifold edges",
            ),
            (
                self.non_manifold_vertices,
                "non-manifold vertex",
                "non-manifold vertices",
            ),
            (
                self.inconsistent_edges,
                "inconsistently oriented edge",
                "inconsistently oriented edges",
            ),
        ] {
            if count > 0 {
                write!(f, ", {}", counted(count, one, many))?;
            }
        }
        write!(
            f,
            ", {}, Euler characteristic {}",
            counted(self.components, "component", "components"),
            self.euler_characteristic
        )?;
        if let Some(genus) = self.genus {
            write!(f, ", genus {genus}")?;
        }
        Ok(())
    }
}

/// How the triangles use one undirected edge `(low, high)`.
struct EdgeUse {
    /// Triangles traversing it `low → high`.
    forward: usize,
    /// Triangles traversing it `high → low`.
    backward: usize,
    first_triangle: usize,
}

/// Computes the [`TopologyReport`] of `mesh`. Meant for a [`clean`](crate::clean)ed
/// mesh: edges from a vertex to itself are ignored.
///
/// # Panics
///
/// If a triangle names a vertex index past the end of `mesh.vertices`.
pub(crate) fn analyze_topology(mesh: &TriangleMesh) -> TopologyReport {
    let triangles = &mesh.triangles;
    let mut edges: HashMap<(u32, u32), EdgeUse> = HashMap::with_capacity(triangles.len() * 3 / 2);
    // Corners (3 × triangle + slot) joined across shared edges: the fans around each vertex.
    let mut fans = DisjointSets::new(3 * triangles.len());
    for (t, triangle) in triangles.iter().enumerate() {
        for slot in 0..3 {
            let (from, to) = (triangle[slot], triangle[(slot + 1) % 3]);
            if from == to {
                continue;
            }
            let forward = from < to;
            match edges.entry((from.min(to), from.max(to))) {
                Entry::Vacant(entry) => {
                    entry.insert(EdgeUse {
                        forward: usize::from(forward),
                        backward: usize::from(!forward),
                        first_triangle: t,
                    });
                }
                Entry::Occupied(mut entry) => {
                    let edge = entry.get_mut();
                    if forward {
                        edge.forward += 1;
                    } else {
                        edge.backward += 1;
                    }
                    let first = edge.first_triangle;
                    fans.union(corner(triangles, first, from), 3 * t + slot);
                    fans.union(corner(triangles, first, to), 3 * t + (slot + 1) % 3);
                }
            }
        }
    }

    let (mut open_edges, mut non_manifold_edges, mut inconsistent_edges) = (0, 0, 0);
    for edge in edges.values() {
        match edge.forward + edge.backward {
            1 => open_edges += 1,
            2 if edge.forward != 1 => inconsistent_edges += 1,
            2 => {}
            _ => non_manifold_edges += 1,
        }
    }

    // A vertex is non-manifold when its corners fall into more than one fan.
    const NO_FAN: usize = usize::MAX;
    let mut fan_of_vertex = vec![NO_FAN; mesh.vertices.len()];
    let mut is_non_manifold = vec![false; mesh.vertices.len()];
    for (c, &v) in triangles.iter().flatten().enumerate() {
        let fan = fans.find(c);
        let v = v as usize;
        if fan_of_vertex[v] == NO_FAN {
            fan_of_vertex[v] = fan;
        } else if fan_of_vertex[v] != fan {
            is_non_manifold[v] = true;
        }
    }
    let non_manifold_vertices = is_non_manifold.iter().filter(|&&flag| flag).count();

    let mut linked = DisjointSets::new(mesh.vertices.len());
    for &[a, b, c] in triangles {
        linked.union(a as usize, b as usize);
        linked.union(a as usize, c as usize);
    }
    let used: Vec<usize> = (0..mesh.vertices.len())
        .filter(|&v| fan_of_vertex[v] != NO_FAN)
        .collect();
    let components = used.iter().filter(|&&v| linked.find(v) == v).count();

    let euler_characteristic = used.len() as i64 - edges.len() as i64 + triangles.len() as i64;
    let mut report = TopologyReport {
        vertices: used.len(),
        edges: edges.len(),
        triangles: triangles.len(),
        open_edges,
        non_manifold_edges,
        inconsistent_edges,
        non_manifold_vertices,
        components,
        euler_characteristic,
        genus: None,
    };
    // Each closed orientable component has χ = 2 − 2g.
    let twice_genus = 2 * components as i64 - euler_characteristic;
    if report.is_watertight() && twice_genus >= 0 && twice_genus % 2 == 0 {
        report.genus = Some(twice_genus as u64 / 2);
    }
    report
}

/// The corner of triangle `t` at vertex `v`.
fn corner(triangles: &[[u32; 3]], t: usize, v: u32) -> usize {
    let slot = triangles[t].iter().position(|&u| u == v).unwrap_or(0);
    3 * t + slot
}

/// Union-find over `0..n` with path halving; a set's root is its smallest member.
struct DisjointSets {
    parent: Vec<usize>,
}

impl DisjointSets {
    fn new(n: usize) -> Self {
        Self {
            parent: (0..n).collect(),
        }
    }

    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        self.parent[a.max(b)] = a.min(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_meshes::{cube_corners, cube_triangles};
    use nalgebra::{Point3, Vector3};

    fn cube_at(offset: Vector3<f64>) -> TriangleMesh {
        let vertices = cube_corners()
            .iter()
            .map(|&c| Point3::from(c) + offset)
            .collect();
        TriangleMesh::new(vertices, cube_triangles())
    }

    fn cube() -> TriangleMesh {
        cube_at(Vector3::zeros())
    }

    /// Both meshes' vertices and triangles, `b`'s renumbered after `a`'s.
    fn union(a: &TriangleMesh, b: &TriangleMesh) -> TriangleMesh {
        let offset = a.vertices.len() as u32;
        let mut mesh = a.clone();
        mesh.vertices.extend_from_slice(&b.vertices);
        mesh.triangles
            .extend(b.triangles.iter().map(|t| t.map(|v| v + offset)));
        mesh
    }

    #[test]
    fn cube_is_a_closed_genus_zero_sphere() {
        let report = analyze_topology(&cube());
        assert_eq!(
            report,
            TopologyReport {
                vertices: 8,
                edges: 18,
                triangles: 12,
                open_edges: 0,
                non_manifold_edges: 0,
                inconsistent_edges: 0,
                non_manifold_vertices: 0,
                components: 1,
                euler_characteristic: 2,
                genus: Some(0),
            }
        );
        assert!(report.is_closed() && report.is_watertight());
        assert_eq!(
            report.to_string(),
            "closed, 1 component, Euler characteristic 2, genus 0"
        );
    }

    #[test]
    fn cube_without_a_face_has_four_open_edges() {
        let mut mesh = cube();
        mesh.triangles.drain(0..2);
        let report = analyze_topology(&mesh);
        assert_eq!(report.open_edges, 4);
        assert_eq!(report.euler_characteristic, 1);
        assert!(!report.is_closed());
        assert_eq!(report.genus, None);
        assert_eq!(
            report.to_string(),
            "not closed, 4 open edges, 1 component, Euler characteristic 1"
        );
    }

    #[test]
    fn three_triangles_on_one_edge_make_it_non_manifold() {
        let vertices = vec![
            Point3::new(0.0, 0.0, 0.0),
            Point3::new(1.0, 0.0, 0.0),
            Point3::new(0.5, 1.0, 0.0),
            Point3::new(0.5, -1.0, 0.0),
            Point3::new(0.5, 0.0, 1.0),
        ];
        let mesh = TriangleMesh::new(vertices, vec![[0, 1, 2], [1, 0, 3], [1, 0, 4]]);
        let report = analyze_topology(&mesh);
        assert_eq!(report.non_manifold_edges, 1);
        assert_eq!(report.open_edges, 6);
        assert_eq!(report.inconsistent_edges, 0);
        assert!(!report.is_closed());
    }

    #[test]
    fn a_flipped_triangle_makes_its_three_edges_inconsistent() {
        let mut mesh = cube();
        mesh.triangles[5].swap(1, 2);
        let report = analyze_topology(&mesh);
        assert_eq!(report.inconsistent_edges, 3);
        assert!(report.is_closed() && !report.is_watertight());
        assert_eq!(report.genus, None);
    }

    #[test]
    fn separate_cubes_are_separate_components() {
        let cubes = union(&cube(), &cube_at(Vector3::new(3.0, 0.0, 0.0)));
        let report = analyze_topology(&union(&cubes, &cube_at(Vector3::new(6.0, 0.0, 0.0))));
        assert_eq!(report.components, 3);
        assert_eq!(report.euler_characteristic, 6);
        assert_eq!(report.genus, Some(0));
    }

    #[test]
    fn cubes_sharing_a_corner_have_a_non_manifold_vertex() {
        let mut mesh = union(&cube(), &cube_at(Vector3::new(1.0, 1.0, 1.0)));
        // Glue the second cube's corner 0 onto the first cube's corner 7.
        for v in mesh.triangles.iter_mut().flatten() {
            if *v == 8 {
                *v = 7;
            }
        }
        let report = analyze_topology(&mesh);
        assert_eq!(report.non_manifold_vertices, 1);
        assert_eq!(report.components, 1);
        assert!(report.is_closed() && !report.is_watertight());
        assert_eq!(report.genus, None);
    }

    #[test]
    fn unused_vertices_are_not_counted() {
        let mut mesh = cube();
        mesh.vertices.push(Point3::new(5.0, 5.0, 5.0));
        let report = analyze_topology(&mesh);
        assert_eq!((report.vertices, report.components), (8, 1));
    }
}
