//! Where a deformable body's elements come from: generated cloth grids and
//! rope strips, and the edges, bending hinges and collision samples of any
//! triangle surface.

use nalgebra::{Isometry3, Point3, Vector3};
use std::collections::BTreeMap;

/// An edge between two nodes with its rest length (m).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Edge {
    pub a: u32,
    pub b: u32,
    pub rest_length: f64,
}

/// Two triangles sharing the edge `(i, j)`, with `l` and `r` the vertices
/// opposite it (eq 33's `x̃_i, x̃_j, x̃_L, x̃_R`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hinge {
    pub i: u32,
    pub j: u32,
    pub l: u32,
    pub r: u32,
}

/// A point of the surface tested for contact: `Σ weights[k] · x[nodes[k]]`
/// (a node or a face centroid), so that a rigid edge cannot pass between
/// nodes unnoticed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfaceSample {
    pub nodes: [u32; 3],
    pub weights: [f64; 3],
}

impl SurfaceSample {
    /// Its position among `positions`.
    pub fn position(&self, positions: &[Point3<f64>]) -> Point3<f64> {
        let mut p = nalgebra::Vector3::zeros();
        for k in 0..3 {
            p += self.weights[k] * positions[self.nodes[k] as usize].coords;
        }
        Point3::from(p)
    }
}

/// A generated sheet: nodes, triangles and the springs a cloth is made of.
#[derive(Clone, Debug)]
pub struct Sheet {
    pub positions: Vec<Point3<f64>>,
    pub triangles: Vec<[u32; 3]>,
    /// Between grid neighbours along the rows and columns.
    pub structural: Vec<Edge>,
    /// Along both diagonals of every grid cell.
    pub shear: Vec<Edge>,
}

/// A `columns × rows` grid of nodes spanning `width × depth` metres in the
/// plane `z = 0` of `pose`, centred on its origin, each cell split into two
/// triangles along alternating diagonals (so that the sheet has no preferred
/// fold direction). The Fig. 3 cloth is `sheet(51, 51, 1.0, 1.0, …)`:
/// 5,100 structural edges and 7,400 interior (bending) edges.
pub fn sheet(columns: usize, rows: usize, width: f64, depth: f64, pose: &Isometry3<f64>) -> Sheet {
    assert!(
        columns >= 2 && rows >= 2,
        "a sheet needs at least 2×2 nodes"
    );
    let index = |c: usize, r: usize| (r * columns + c) as u32;
    let mut positions = Vec::with_capacity(columns * rows);
    for r in 0..rows {
        for c in 0..columns {
            let x = width * (c as f64 / (columns - 1) as f64 - 0.5);
            let y = depth * (r as f64 / (rows - 1) as f64 - 0.5);
            positions.push(pose * Point3::new(x, y, 0.0));
        }
    }
    let mut triangles = Vec::with_capacity(2 * (columns - 1) * (rows - 1));
    for r in 0..rows - 1 {
        for c in 0..columns - 1 {
            let (a, b, cc, d) = (
                index(c, r),
                index(c + 1, r),
                index(c + 1, r + 1),
                index(c, r + 1),
            );
            if (r + c) % 2 == 0 {
                triangles.push([a, b, cc]);
                triangles.push([a, cc, d]);
            } else {
                triangles.push([a, b, d]);
                triangles.push([b, cc, d]);
            }
        }
    }
    let edge = |a: u32, b: u32| Edge {
        a,
        b,
        rest_length: (positions[b as usize] - positions[a as usize]).norm(),
    };
    let mut structural = Vec::new();
    let mut shear = Vec::new();
    for r in 0..rows {
        for c in 0..columns {
            if c + 1 < columns {
                structural.push(edge(index(c, r), index(c + 1, r)));
            }
            if r + 1 < rows {
                structural.push(edge(index(c, r), index(c, r + 1)));
            }
            if c + 1 < columns && r + 1 < rows {
                shear.push(edge(index(c, r), index(c + 1, r + 1)));
                shear.push(edge(index(c + 1, r), index(c, r + 1)));
            }
        }
    }
    Sheet {
        positions,
        triangles,
        structural,
        shear,
    }
}

/// A rope as a strip two nodes wide: `length` metres along `pose`'s x axis,
/// `width` across its y axis, `pairs` rungs. The Fig. 4 rope is 25 pairs:
/// 50 nodes, 48 triangles, 97 edges (two rails, the rungs and one
/// diagonal per cell) and 47 interior edges.
pub fn strip(pairs: usize, length: f64, width: f64, pose: &Isometry3<f64>) -> Sheet {
    let mut grid = sheet(pairs, 2, length, width, pose);
    // Each cell's diagonal along its triangles' shared edge: with the rails
    // and rungs, exactly as many rows as the strip's in-plane freedoms
    // (`2n·2 − 3`), so that no row repeats what the others hold.
    let shared: Vec<(u32, u32)> = grid
        .triangles
        .chunks(2)
        .map(|pair| {
            let [a, b, c] = pair[0];
            let common: Vec<u32> = [a, b, c]
                .into_iter()
                .filter(|v| pair[1].contains(v))
                .collect();
            (common[0].min(common[1]), common[0].max(common[1]))
        })
        .collect();
    let mut diagonals: Vec<Edge> = grid
        .shear
        .drain(..)
        .filter(|e| shared.contains(&(e.a.min(e.b), e.a.max(e.b))))
        .collect();
    grid.structural.append(&mut diagonals);
    grid
}

/// Why a strip cannot follow a path.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PathError {
    #[error("a path needs at least 2 points and a strip 2 pairs, not {points} and {pairs}")]
    TooShort { points: usize, pairs: usize },
    #[error("path point {point} is not finite or repeats the one before it")]
    Degenerate { point: usize },
    #[error("`across` is parallel to the path's segment ending at point {point}, or not finite")]
    Across { point: usize },
}

/// A strip (as [`strip`]) whose centre line follows the polyline `path`,
/// its `pairs` rungs spaced equally along it, `width` across it: each rung
/// along `across` less its component along the path's local direction.
/// Rest lengths are those of the laid-out strip.
pub fn strip_along(
    path: &[Point3<f64>],
    pairs: usize,
    width: f64,
    across: &Vector3<f64>,
) -> Result<Sheet, PathError> {
    if path.len() < 2 || pairs < 2 {
        return Err(PathError::TooShort {
            points: path.len(),
            pairs,
        });
    }
    let mut along = vec![0.0];
    for (k, pair) in path.windows(2).enumerate() {
        let step = (pair[1] - pair[0]).norm();
        if !(step > 0.0 && step.is_finite()) {
            return Err(PathError::Degenerate { point: k + 1 });
        }
        along.push(along[k] + step);
    }
    let length = along[path.len() - 1];
    let mut laid = strip(pairs, length, width, &Isometry3::identity());
    let mut segment = 0;
    for column in 0..pairs {
        let s = length * column as f64 / (pairs - 1) as f64;
        while segment + 2 < path.len() && along[segment + 1] < s {
            segment += 1;
        }
        let direction = (path[segment + 1] - path[segment]) / (along[segment + 1] - along[segment]);
        let centre = path[segment] + (s - along[segment]) * direction;
        let side = across - across.dot(&direction) * direction;
        let side = side
            .try_normalize(1e-9 * across.norm())
            .ok_or(PathError::Across { point: segment + 1 })?;
        laid.positions[column] = centre - 0.5 * width * side;
        laid.positions[pairs + column] = centre + 0.5 * width * side;
    }
    for edge in &mut laid.structural {
        edge.rest_length =
            (laid.positions[edge.b as usize] - laid.positions[edge.a as usize]).norm();
    }
    Ok(laid)
}

/// A solid box meshed by tetrahedra.
#[derive(Clone, Debug)]
pub struct TetBox {
    pub positions: Vec<Point3<f64>>,
    pub tets: Vec<[u32; 4]>,
    /// Its boundary, triangles facing out.
    pub surface: Vec<[u32; 3]>,
}

/// A box of `cells[0] × cells[1] × cells[2]` cubes spanning `size`, centred
/// on `pose`'s origin, each cube split into six positive tetrahedra about
/// its main diagonal (Freudenthal's subdivision, which conforms across
/// cells).
pub fn tet_box(cells: [usize; 3], size: [f64; 3], pose: &Isometry3<f64>) -> TetBox {
    let [nx, ny, nz] = cells;
    assert!(nx > 0 && ny > 0 && nz > 0, "a box needs at least one cell");
    let index = |i: usize, j: usize, k: usize| (i + (nx + 1) * (j + (ny + 1) * k)) as u32;
    let mut positions = Vec::with_capacity((nx + 1) * (ny + 1) * (nz + 1));
    for k in 0..=nz {
        for j in 0..=ny {
            for i in 0..=nx {
                positions.push(
                    pose * Point3::new(
                        size[0] * (i as f64 / nx as f64 - 0.5),
                        size[1] * (j as f64 / ny as f64 - 0.5),
                        size[2] * (k as f64 / nz as f64 - 0.5),
                    ),
                );
            }
        }
    }
    // The six paths from corner (0,0,0) to (1,1,1) along the axes.
    const PATHS: [[usize; 3]; 6] = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    let mut tets = Vec::with_capacity(6 * nx * ny * nz);
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                for path in PATHS {
                    let mut corner = [i, j, k];
                    let mut t = [index(i, j, k); 4];
                    for (step, axis) in path.iter().enumerate() {
                        corner[*axis] += 1;
                        t[step + 1] = index(corner[0], corner[1], corner[2]);
                    }
                    if tet_volume(&positions, &t) < 0.0 {
                        t.swap(2, 3);
                    }
                    tets.push(t);
                }
            }
        }
    }
    let surface = boundary(&tets, &positions);
    TetBox {
        positions,
        tets,
        surface,
    }
}

/// A solid cylinder of `radius` and `height`, its axis `pose`'s z axis and
/// its bottom face on `pose`'s origin, meshed by tetrahedra: `layers` (at
/// least 2) copies of a disc of `rings` (at least 1) rings of nodes, ring
/// `k` holding `6k` nodes at radius `k · radius / rings` about a centre
/// node, triangulated ring to ring and extruded into prisms between layers.
/// Each prism splits into three tetrahedra by joining, on each side face,
/// the higher-numbered bottom node to the lower-numbered top node, a rule
/// neighbouring prisms share, so the mesh conforms. `rings = 4, layers = 7`
/// gives 427 nodes and 1,728 tetrahedra.
pub fn tet_cylinder(
    rings: usize,
    layers: usize,
    radius: f64,
    height: f64,
    pose: &Isometry3<f64>,
) -> TetBox {
    assert!(
        rings >= 1 && layers >= 2,
        "a cylinder needs a ring and two layers"
    );
    let mut disc = vec![[0.0, 0.0]];
    let mut triangles: Vec<[u32; 3]> = Vec::new();
    let mut inner: Vec<u32> = vec![0];
    for k in 1..=rings {
        let count = 6 * k;
        let r = radius * k as f64 / rings as f64;
        let first = disc.len() as u32;
        let outer: Vec<u32> = (first..first + count as u32).collect();
        disc.extend((0..count).map(|m| {
            let angle = std::f64::consts::TAU * m as f64 / count as f64;
            [r * angle.cos(), r * angle.sin()]
        }));
        // Advance around both rings by angle, each triangle taking one step
        // along one of them.
        let (ni, no) = (inner.len(), outer.len());
        let (mut a, mut b) = (0, 0);
        while b < no || (ni > 1 && a < ni) {
            let inner_next = (a + 1) as f64 / ni as f64;
            let outer_next = (b + 1) as f64 / no as f64;
            if ni > 1 && a < ni && (b == no || inner_next < outer_next) {
                triangles.push([inner[a], inner[(a + 1) % ni], outer[b % no]]);
                a += 1;
            } else {
                triangles.push([inner[a % ni], outer[b], outer[(b + 1) % no]]);
                b += 1;
            }
        }
        inner = outer;
    }
    let per_layer = disc.len() as u32;
    let dz = height / (layers - 1) as f64;
    let positions: Vec<Point3<f64>> = (0..layers)
        .flat_map(|l| {
            disc.iter()
                .map(move |&[x, y]| pose * Point3::new(x, y, dz * l as f64))
        })
        .collect();
    let mut tets = Vec::with_capacity(3 * triangles.len() * (layers - 1));
    for l in 0..layers as u32 - 1 {
        for triangle in &triangles {
            let mut sorted = *triangle;
            sorted.sort_unstable();
            let [a, b, c] = sorted;
            let low = |v: u32| l * per_layer + v;
            let high = |v: u32| (l + 1) * per_layer + v;
            for mut t in [
                [low(a), low(b), low(c), high(a)],
                [low(b), low(c), high(a), high(b)],
                [low(c), high(a), high(b), high(c)],
            ] {
                if tet_volume(&positions, &t) < 0.0 {
                    t.swap(2, 3);
                }
                tets.push(t);
            }
        }
    }
    let surface = boundary(&tets, &positions);
    TetBox {
        positions,
        tets,
        surface,
    }
}

/// The faces of `tets` that belong to one tetrahedron only, turned to face
/// away from it.
pub fn boundary(tets: &[[u32; 4]], positions: &[Point3<f64>]) -> Vec<[u32; 3]> {
    let mut faces: BTreeMap<[u32; 3], ([u32; 3], usize)> = BTreeMap::new();
    for t in tets {
        for (face, opposite) in [
            ([t[1], t[2], t[3]], t[0]),
            ([t[0], t[3], t[2]], t[1]),
            ([t[0], t[1], t[3]], t[2]),
            ([t[0], t[2], t[1]], t[3]),
        ] {
            let mut key = face;
            key.sort_unstable();
            let entry = faces.entry(key).or_insert((face, 0));
            entry.1 += 1;
            let [a, b, c] = face.map(|v| positions[v as usize]);
            let outward = (b - a)
                .cross(&(c - a))
                .dot(&(a - positions[opposite as usize]))
                > 0.0;
            if !outward {
                entry.0 = [face[0], face[2], face[1]];
            } else {
                entry.0 = face;
            }
        }
    }
    faces
        .into_values()
        .filter(|(_, count)| *count == 1)
        .map(|(face, _)| face)
        .collect()
}

/// Every edge of `triangles` once, with its rest length among `positions`.
pub fn edges(triangles: &[[u32; 3]], positions: &[Point3<f64>]) -> Vec<Edge> {
    edge_faces(triangles)
        .keys()
        .map(|&(a, b)| Edge {
            a,
            b,
            rest_length: (positions[b as usize] - positions[a as usize]).norm(),
        })
        .collect()
}

/// The hinge over every interior edge of `triangles` (an edge of exactly two
/// triangles); edges of one or of more than two triangles have none.
pub fn hinges(triangles: &[[u32; 3]]) -> Vec<Hinge> {
    edge_faces(triangles)
        .into_iter()
        .filter_map(|((i, j), faces)| match faces[..] {
            [f, g] => Some(Hinge {
                i,
                j,
                l: opposite(&triangles[f], i, j),
                r: opposite(&triangles[g], i, j),
            }),
            _ => None,
        })
        .collect()
}

/// The collision samples of a surface: each of its vertices and the
/// centroid of each triangle.
pub fn surface_samples(triangles: &[[u32; 3]]) -> Vec<SurfaceSample> {
    let mut vertices: Vec<u32> = triangles.iter().flatten().copied().collect();
    vertices.sort_unstable();
    vertices.dedup();
    let mut samples: Vec<SurfaceSample> = vertices
        .into_iter()
        .map(|v| SurfaceSample {
            nodes: [v, v, v],
            weights: [1.0, 0.0, 0.0],
        })
        .collect();
    samples.extend(triangles.iter().map(|&nodes| SurfaceSample {
        nodes,
        weights: [1.0 / 3.0; 3],
    }));
    samples
}

/// Each undirected edge (smaller index first) with the triangles holding it.
fn edge_faces(triangles: &[[u32; 3]]) -> BTreeMap<(u32, u32), Vec<usize>> {
    let mut faces: BTreeMap<(u32, u32), Vec<usize>> = BTreeMap::new();
    for (f, t) in triangles.iter().enumerate() {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            faces.entry((a.min(b), a.max(b))).or_default().push(f);
        }
    }
    faces
}

fn opposite(triangle: &[u32; 3], i: u32, j: u32) -> u32 {
    *triangle
        .iter()
        .find(|&&v| v != i && v != j)
        .expect("a triangle holding an edge has a third vertex")
}

/// Signed volume of tetrahedron `t` among `positions`:
/// `(b − a)·((c − a) × (d − a)) / 6`, positive when `d` is on the side
/// `(b − a) × (c − a)` points to.
pub fn tet_volume(positions: &[Point3<f64>], t: &[u32; 4]) -> f64 {
    let [a, b, c, d] = t.map(|i| positions[i as usize]);
    (b - a).dot(&(c - a).cross(&(d - a))) / 6.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fig_3_cloth_has_the_papers_constraint_counts() {
        let cloth = sheet(51, 51, 1.0, 1.0, &Isometry3::identity());
        assert_eq!(cloth.positions.len(), 2601);
        assert_eq!(cloth.structural.len(), 5100);
        assert_eq!(hinges(&cloth.triangles).len(), 7400);
        assert!((cloth.structural[0].rest_length - 0.02).abs() < 1e-12);
    }

    #[test]
    fn the_fig_4_rope_has_the_papers_element_counts() {
        let rope = strip(25, 1.2, 0.02, &Isometry3::identity());
        assert_eq!(rope.positions.len(), 50);
        assert_eq!(rope.triangles.len(), 48);
        assert_eq!(rope.structural.len(), 2 * rope.positions.len() - 3);
        assert_eq!(rope.structural.len(), 97);
        assert_eq!(hinges(&rope.triangles).len(), 47);
    }

    #[test]
    fn a_strip_along_a_path_keeps_its_width_across_the_path_and_its_length_along_it() {
        // Up, then along x: the rungs turn with the path.
        let path = [
            Point3::new(0.0, 0.0, 0.0),
            Point3::new(0.0, 0.0, 0.3),
            Point3::new(0.3, 0.0, 0.3),
        ];
        let rope = strip_along(&path, 13, 0.02, &Vector3::y()).unwrap();
        for column in 0..13 {
            let rung = rope.positions[13 + column] - rope.positions[column];
            assert!((rung - Vector3::new(0.0, 0.02, 0.0)).norm() < 1e-12);
        }
        let rail: f64 = (0..12)
            .map(|c| (rope.positions[c + 1] - rope.positions[c]).norm())
            .sum();
        assert!((rail - 0.6).abs() < 1e-12, "rail {rail}");
        assert_eq!(rope.structural.len(), 4 * 13 - 3);
        for e in &rope.structural {
            let d = (rope.positions[e.b as usize] - rope.positions[e.a as usize]).norm();
            assert!((e.rest_length - d).abs() < 1e-15);
        }
        assert_eq!(
            strip_along(&path, 13, 0.02, &Vector3::z()).unwrap_err(),
            PathError::Across { point: 1 }
        );
        assert_eq!(
            strip_along(&[path[0], path[0]], 13, 0.02, &Vector3::y()).unwrap_err(),
            PathError::Degenerate { point: 1 }
        );
    }

    #[test]
    fn a_tet_cylinder_fills_its_polygonal_prism_with_positive_tetrahedra_and_a_closed_surface() {
        let pose = Isometry3::translation(0.1, -0.2, 0.3);
        let cylinder = tet_cylinder(4, 7, 0.05, 0.1, &pose);
        assert_eq!(cylinder.positions.len(), 61 * 7);
        assert_eq!(cylinder.tets.len(), 3 * 96 * 6);
        let volume: f64 = cylinder
            .tets
            .iter()
            .map(|t| {
                let v = tet_volume(&cylinder.positions, t);
                assert!(v > 0.0, "{t:?}: {v}");
                v
            })
            .sum();
        // The outer ring is a regular 24-gon of circumradius 0.05.
        let polygon = 0.5 * 24.0 * 0.05f64.powi(2) * (std::f64::consts::TAU / 24.0).sin();
        assert!((volume - polygon * 0.1).abs() < 1e-12, "{volume}");
        let mut edge_use: BTreeMap<(u32, u32), i32> = BTreeMap::new();
        for f in &cylinder.surface {
            for k in 0..3 {
                let (a, b) = (f[k], f[(k + 1) % 3]);
                *edge_use.entry((a.min(b), a.max(b))).or_default() += 1;
            }
        }
        assert!(edge_use.values().all(|&n| n == 2));
        let bottom = cylinder
            .positions
            .iter()
            .map(|p| p.z)
            .fold(f64::MAX, f64::min);
        let top = cylinder
            .positions
            .iter()
            .map(|p| p.z)
            .fold(f64::MIN, f64::max);
        assert!((bottom - 0.3).abs() < 1e-15 && (top - 0.4).abs() < 1e-12);
    }

    #[test]
    fn a_tet_box_fills_its_volume_with_positive_tetrahedra_and_a_closed_outward_surface() {
        let tets = tet_box([3, 2, 4], [0.3, 0.2, 0.4], &Isometry3::identity());
        assert_eq!(tets.tets.len(), 6 * 24);
        let volume: f64 = tets
            .tets
            .iter()
            .map(|t| {
                let v = tet_volume(&tets.positions, t);
                assert!(v > 0.0);
                v
            })
            .sum();
        assert!((volume - 0.3 * 0.2 * 0.4).abs() < 1e-12);
        // The surface is closed: every edge is used by exactly two faces,
        // and the divergence theorem gives the volume back.
        let mut edge_use: BTreeMap<(u32, u32), i32> = BTreeMap::new();
        let mut enclosed = 0.0;
        for f in &tets.surface {
            for k in 0..3 {
                *edge_use.entry((f[k], f[(k + 1) % 3])).or_default() += 1;
            }
            let [a, b, c] = f.map(|v| tets.positions[v as usize].coords);
            enclosed += a.dot(&b.cross(&c)) / 6.0;
        }
        assert!(edge_use
            .keys()
            .all(|&(a, b)| edge_use.get(&(b, a)) == Some(&1)));
        assert!((enclosed - volume).abs() < 1e-12, "{enclosed}");
    }

    #[test]
    fn samples_cover_vertices_and_faces_with_unit_weights() {
        let cloth = sheet(3, 3, 1.0, 1.0, &Isometry3::identity());
        let samples = surface_samples(&cloth.triangles);
        assert_eq!(samples.len(), 9 + 8);
        for s in &samples {
            assert!((s.weights.iter().sum::<f64>() - 1.0).abs() < 1e-15);
        }
    }
}
