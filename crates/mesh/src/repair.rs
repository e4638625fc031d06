//! Welding near-duplicate vertices and dropping degenerate triangles and
//! unused vertices.

use crate::TriangleMesh;
use nalgebra::Point3;
use std::collections::HashMap;

/// A triangle is zero-area when `|(b−a)×(c−a)| <= ZERO_AREA_EPSILON × (|ab|² + |bc|² + |ca|²)`:
/// for a sliver of height `h` on a base of length `L`, when `h <= 2e-12 L` or so.
pub(crate) const ZERO_AREA_EPSILON: f64 = 1e-12;

/// What `clean` changed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RepairReport {
    /// The weld distance used, in the mesh's units.
    pub weld_tolerance: f64,
    /// Vertices merged into an earlier vertex within the weld distance.
    pub(crate) welded_vertices: usize,
    /// Triangles dropped for naming a vertex twice (after welding) or having zero area.
    pub degenerate_triangles: usize,
    /// Vertices dropped because no remaining triangle uses them.
    pub(crate) unreferenced_vertices: usize,
}

/// Welds vertices within `tolerance` of each other, drops degenerate
/// triangles (see [`ZERO_AREA_EPSILON`]), then drops vertices no triangle
/// uses. What is kept stays in its original order.
///
/// Each vertex merges into an earlier kept vertex within `tolerance`, if
/// there is one, so a chain of points each just within `tolerance` of the next
/// need not collapse to one. `tolerance <= 0`, or one below the floating-point
/// resolution of the mesh's extent (2⁻⁵² × extent), merges identical positions
/// only. Expected time is linear: candidates come from a spatial hash.
///
/// # Panics
///
/// If a triangle names a vertex index past the end of `mesh.vertices`.
pub(crate) fn clean(mesh: &TriangleMesh, tolerance: f64) -> (TriangleMesh, RepairReport) {
    let bounds = mesh.aabb();
    let extent = bounds.extents().max();
    let (representative, representative_count) =
        if tolerance > 0.0 && extent / tolerance < 2f64.powi(52) {
            weld_within(&mesh.vertices, bounds.min, tolerance)
        } else {
            weld_identical(&mesh.vertices)
        };

    let mut triangles: Vec<[u32; 3]> = mesh
        .triangles
        .iter()
        .map(|triangle| triangle.map(|v| representative[v as usize]))
        .filter(|&triangle| !is_degenerate(&mesh.vertices, triangle))
        .collect();

    let mut used = vec![false; mesh.vertices.len()];
    for &v in triangles.iter().flatten() {
        used[v as usize] = true;
    }
    let mut new_index = vec![0; mesh.vertices.len()];
    let mut vertices = Vec::new();
    for (old, _) in used.iter().enumerate().filter(|&(_, &is_used)| is_used) {
        new_index[old] = vertices.len() as u32;
        vertices.push(mesh.vertices[old]);
    }
    for v in triangles.iter_mut().flatten() {
        *v = new_index[*v as usize];
    }

    let report = RepairReport {
        weld_tolerance: tolerance.max(0.0),
        welded_vertices: mesh.vertices.len() - representative_count,
        degenerate_triangles: mesh.triangles.len() - triangles.len(),
        unreferenced_vertices: representative_count - vertices.len(),
    };
    (TriangleMesh::new(vertices, triangles), report)
}

/// For each vertex, the first vertex with bitwise the same position (`-0`
/// counts as `0`); and how many distinct positions there are.
fn weld_identical(vertices: &[Point3<f64>]) -> (Vec<u32>, usize) {
    let mut first_at: HashMap<[u64; 3], u32> = HashMap::with_capacity(vertices.len());
    let representative = vertices
        .iter()
        .enumerate()
        .map(|(v, p)| {
            let key = [p.x, p.y, p.z].map(|c| (c + 0.0).to_bits());
            *first_at.entry(key).or_insert(v as u32)
        })
        .collect();
    (representative, first_at.len())
}

/// For each vertex, the earlier representative within `tolerance` or itself;
/// and how many representatives there are. Cells are `2 × tolerance` wide,
/// counted from `origin`, so the ball around a point meets exactly two cells
/// per axis.
fn weld_within(vertices: &[Point3<f64>], origin: Point3<f64>, tolerance: f64) -> (Vec<u32>, usize) {
    const NO_VERTEX: u32 = u32::MAX;
    let cell_size = 2.0 * tolerance;
    let tolerance_squared = tolerance * tolerance;
    // Representatives in each cell, as a linked list threaded through `next_in_cell`.
    let mut first_in_cell: HashMap<[i64; 3], u32> = HashMap::new();
    let mut next_in_cell = vec![NO_VERTEX; vertices.len()];
    let mut representative = Vec::with_capacity(vertices.len());
    let mut representative_count = 0;
    for (v, p) in vertices.iter().enumerate() {
        let offset = p - origin;
        let scaled = [offset.x, offset.y, offset.z].map(|c| c / cell_size);
        let cell = scaled.map(|s| s.floor() as i64);
        let step = scaled.map(|s| if s - s.floor() < 0.5 { -1 } else { 1 });
        let found = (0..8).find_map(|neighbour: usize| {
            let probe: [i64; 3] = std::array::from_fn(|axis| {
                let offset = if neighbour >> axis & 1 == 1 {
                    step[axis]
                } else {
                    0
                };
                cell[axis].saturating_add(offset)
            });
            let mut candidate = first_in_cell.get(&probe).copied().unwrap_or(NO_VERTEX);
            while candidate != NO_VERTEX {
                if (vertices[candidate as usize] - p).norm_squared() <= tolerance_squared {
                    return Some(candidate);
                }
                candidate = next_in_cell[candidate as usize];
            }
            None
        });
        match found {
            Some(earlier) => representative.push(earlier),
            None => {
                next_in_cell[v] = first_in_cell.insert(cell, v as u32).unwrap_or(NO_VERTEX);
                representative.push(v as u32);
                representative_count += 1;
            }
        }
    }
    (representative, representative_count)
}

/// A triangle naming a vertex twice, or of zero area.
fn is_degenerate(vertices: &[Point3<f64>], [a, b, c]: [u32; 3]) -> bool {
    if a == b || b == c || c == a {
        return true;
    }
    let [pa, pb, pc] = [a, b, c].map(|v| vertices[v as usize]);
    let (ab, ac, bc) = (pb - pa, pc - pa, pc - pb);
    let twice_area_squared = ab.cross(&ac).norm_squared();
    let bound = ZERO_AREA_EPSILON * (ab.norm_squared() + ac.norm_squared() + bc.norm_squared());
    twice_area_squared <= bound * bound
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_meshes::{cube_corners, cube_triangles};
    use nalgebra::Vector3;
    use proptest::prelude::*;

    fn points(coordinates: &[[f64; 3]]) -> Vec<Point3<f64>> {
        coordinates.iter().map(|&c| Point3::from(c)).collect()
    }

    #[test]
    fn cube_soup_welds_to_eight_shared_vertices() {
        let corners = cube_corners();
        let soup: Vec<Point3<f64>> = cube_triangles()
            .iter()
            .flatten()
            .map(|&v| Point3::from(corners[v as usize]))
            .collect();
        let triangles = (0..12).map(|t| [3 * t, 3 * t + 1, 3 * t + 2]).collect();
        let (mesh, report) = clean(&TriangleMesh::new(soup, triangles), 1e-9);
        assert_eq!((mesh.vertices.len(), mesh.triangles.len()), (8, 12));
        assert_eq!(
            report,
            RepairReport {
                weld_tolerance: 1e-9,
                welded_vertices: 28,
                degenerate_triangles: 0,
                unreferenced_vertices: 0,
            }
        );
        for t in 0..12 {
            assert!((mesh.area(t) - 0.5).abs() < 1e-12);
        }
    }

    #[test]
    fn vertices_weld_within_tolerance_across_cell_boundaries() {
        let vertices = points(&[
            [1.999, 0.0, 0.0],
            [2.001, 0.0, 0.0],
            [-0.0005, 5.0, 5.0],
            [0.0005, 5.0, 5.0],
            [7.0, 7.0, 7.0],
            [7.9, 7.0, 7.0],
        ]);
        let (representative, count) = weld_within(&vertices, Point3::origin(), 1.0);
        assert_eq!(representative, vec![0, 0, 2, 2, 4, 4]);
        assert_eq!(count, 3);
        let (representative, _) = weld_within(&vertices, Point3::new(-3.0, -2.0, -1.0), 0.001);
        assert_eq!(representative, vec![0, 1, 2, 2, 4, 5]);
    }

    #[test]
    fn zero_tolerance_welds_identical_positions_only() {
        let vertices = points(&[[0.0, 1.0, 2.0], [-0.0, 1.0, 2.0], [1e-300, 1.0, 2.0]]);
        assert_eq!(weld_identical(&vertices), (vec![0, 0, 2], 2));
        let triangle = TriangleMesh::new(vertices, vec![[0, 1, 2]]);
        let (mesh, report) = clean(&triangle, 0.0);
        assert!(mesh.triangles.is_empty() && mesh.vertices.is_empty());
        assert_eq!(
            (report.welded_vertices, report.degenerate_triangles),
            (1, 1)
        );
        assert_eq!(report.unreferenced_vertices, 2);
    }

    #[test]
    fn tolerance_below_float_resolution_welds_identical_positions_only() {
        let mut vertices: Vec<Point3<f64>> = (0..3000)
            .map(|i| {
                let corner = Vector3::new(0.0, f64::from(i % 3 == 1), f64::from(i % 3 == 2));
                Point3::new(1e12 + f64::from(i / 3), 1e12, 1e12) + corner * 1e-2
            })
            .collect();
        vertices.push(vertices[7]);
        let triangles = (0..1000).map(|t| [3 * t, 3 * t + 1, 3 * t + 2]).collect();
        let (mesh, report) = clean(&TriangleMesh::new(vertices, triangles), 1e-300);
        assert_eq!(report.welded_vertices, 1);
        assert_eq!(report.unreferenced_vertices, 0);
        assert_eq!(mesh.vertices.len(), 3000);
    }

    #[test]
    fn degenerate_triangles_and_unused_vertices_are_dropped_in_order() {
        let vertices = points(&[
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [9.0, 9.0, 9.0],
            [2.0, 0.0, 0.0],
            [0.5, 1e-9, 0.0],
        ]);
        let triangles = vec![
            [0, 1, 2],
            [0, 1, 4], // collinear
            [2, 2, 1], // repeated vertex
            [0, 4, 5], // a thin sliver, but not zero-area
        ];
        let (mesh, report) = clean(&TriangleMesh::new(vertices, triangles), 1e-12);
        assert_eq!(mesh.triangles, vec![[0, 1, 2], [0, 3, 4]]);
        assert_eq!(mesh.vertices[3], Point3::new(2.0, 0.0, 0.0));
        assert_eq!(report.degenerate_triangles, 2);
        assert_eq!(report.unreferenced_vertices, 1);
        assert_eq!(report.welded_vertices, 0);
    }

    proptest! {
        /// Every vertex lies within tolerance of its representative, and the
        /// representatives are more than the tolerance apart.
        #[test]
        fn welding_is_within_tolerance_and_representatives_are_apart(
            grid in prop::collection::vec((0..6i32, 0..6i32, 0..6i32, -1.0..1.0f64), 1..120),
            tolerance in 0.05..0.6f64,
        ) {
            let vertices: Vec<Point3<f64>> = grid
                .iter()
                .map(|&(x, y, z, jitter)| {
                    Point3::new(f64::from(x), f64::from(y), f64::from(z)) * 0.3
                        + Vector3::repeat(jitter * 0.1)
                })
                .collect();
            let (representative, count) = weld_within(&vertices, Point3::new(-0.1, -0.1, -0.1), tolerance);
            let mut kept = Vec::new();
            for (v, &r) in representative.iter().enumerate() {
                prop_assert!(r as usize <= v);
                prop_assert!((vertices[v] - vertices[r as usize]).norm() <= tolerance);
                if r as usize == v {
                    kept.push(vertices[v]);
                }
            }
            prop_assert_eq!(kept.len(), count);
            for (i, a) in kept.iter().enumerate() {
                for b in &kept[i + 1..] {
                    prop_assert!((a - b).norm() > tolerance);
                }
            }
        }
    }
}
