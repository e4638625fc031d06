//! Generated closed meshes: known geometry for tests, benchmarks, the
//! built-in scenarios and the embedded default scene, and the dimensions of
//! the scenarios' objects. All are counter-clockwise seen from outside.

use crate::TriangleMesh;
use nalgebra::{Point3, Vector3};
use std::collections::HashMap;
use std::f64::consts::{PI, TAU};

/// An axis-aligned box centred at the origin: 8 vertices, 12 triangles.
pub fn box_mesh(half_extents: Vector3<f64>) -> TriangleMesh {
    let h = half_extents;
    let vertices = (0..8)
        .map(|i| {
            Point3::new(
                if i & 1 == 0 { -h.x } else { h.x },
                if i & 2 == 0 { -h.y } else { h.y },
                if i & 4 == 0 { -h.z } else { h.z },
            )
        })
        .collect();
    let triangles = vec![
        [0, 2, 1],
        [1, 2, 3], // -z
        [4, 5, 6],
        [5, 7, 6], // +z
        [0, 1, 4],
        [1, 5, 4], // -y
        [2, 6, 3],
        [3, 6, 7], // +y
        [0, 4, 2],
        [2, 4, 6], // -x
        [1, 3, 5],
        [3, 7, 5], // +x
    ];
    TriangleMesh::new(vertices, triangles)
}

/// A sphere approximated by subdividing an icosahedron `subdivisions` times:
/// 20·4ⁿ triangles with vertices on the sphere.
pub fn icosphere(radius: f64, subdivisions: u32) -> TriangleMesh {
    let phi = (1.0 + 5f64.sqrt()) / 2.0;
    let mut vertices: Vec<Point3<f64>> = [
        (-1.0, phi, 0.0),
        (1.0, phi, 0.0),
        (-1.0, -phi, 0.0),
        (1.0, -phi, 0.0),
        (0.0, -1.0, phi),
        (0.0, 1.0, phi),
        (0.0, -1.0, -phi),
        (0.0, 1.0, -phi),
        (phi, 0.0, -1.0),
        (phi, 0.0, 1.0),
        (-phi, 0.0, -1.0),
        (-phi, 0.0, 1.0),
    ]
    .iter()
    .map(|&(x, y, z)| Point3::from(Vector3::new(x, y, z).normalize()))
    .collect();
    let mut triangles: Vec<[u32; 3]> = vec![
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    for _ in 0..subdivisions {
        let mut midpoints: HashMap<(u32, u32), u32> = HashMap::new();
        let mut midpoint = |a: u32, b: u32, vertices: &mut Vec<Point3<f64>>| {
            *midpoints.entry((a.min(b), a.max(b))).or_insert_with(|| {
                let m = (vertices[a as usize].coords + vertices[b as usize].coords).normalize();
                vertices.push(Point3::from(m));
                vertices.len() as u32 - 1
            })
        };
        let mut finer = Vec::with_capacity(triangles.len() * 4);
        for [a, b, c] in triangles {
            let ab = midpoint(a, b, &mut vertices);
            let bc = midpoint(b, c, &mut vertices);
            let ca = midpoint(c, a, &mut vertices);
            finer.extend([[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]);
        }
        triangles = finer;
    }
    for v in &mut vertices {
        *v = Point3::from(v.coords * radius);
    }
    TriangleMesh::new(vertices, triangles)
}

/// A torus around the z axis with tube centre radius `major` and tube radius
/// `minor`, `around` segments along the ring and `tube` around the tube.
pub fn torus(major: f64, minor: f64, around: u32, tube: u32) -> TriangleMesh {
    let mut vertices = Vec::with_capacity((around * tube) as usize);
    for i in 0..around {
        let u = TAU * i as f64 / around as f64;
        for j in 0..tube {
            let v = TAU * j as f64 / tube as f64;
            let r = major + minor * v.cos();
            vertices.push(Point3::new(r * u.cos(), r * u.sin(), minor * v.sin()));
        }
    }
    let index = |i: u32, j: u32| (i % around) * tube + (j % tube);
    let mut triangles = Vec::with_capacity((2 * around * tube) as usize);
    for i in 0..around {
        for j in 0..tube {
            let (a, b, c, d) = (
                index(i, j),
                index(i + 1, j),
                index(i + 1, j + 1),
                index(i, j + 1),
            );
            triangles.push([a, b, c]);
            triangles.push([a, c, d]);
        }
    }
    TriangleMesh::new(vertices, triangles)
}

/// A closed cylinder around the z axis, `z ∈ [−height/2, height/2]`: two
/// rings of `segments` vertices (the first at angle 0) and a centre vertex
/// per cap.
///
/// # Panics
/// If `segments < 3`.
pub fn cylinder(radius: f64, height: f64, segments: u32) -> TriangleMesh {
    assert!(segments >= 3, "a cylinder needs 3 segments, got {segments}");
    let n = segments;
    let half = 0.5 * height;
    let mut vertices = Vec::with_capacity(2 * n as usize + 2);
    for z in [-half, half] {
        vertices.extend((0..n).map(|i| {
            let a = TAU * f64::from(i) / f64::from(n);
            Point3::new(radius * a.cos(), radius * a.sin(), z)
        }));
    }
    let (bottom, top) = (2 * n, 2 * n + 1);
    vertices.extend([Point3::new(0.0, 0.0, -half), Point3::new(0.0, 0.0, half)]);
    let mut triangles = Vec::with_capacity(4 * n as usize);
    for i in 0..n {
        let j = (i + 1) % n;
        triangles.extend([
            [i, j, n + j],
            [i, n + j, n + i],
            [top, n + i, n + j],
            [bottom, j, i],
        ]);
    }
    TriangleMesh::new(vertices, triangles)
}

/// An axis-aligned box centred at the origin with a cylindrical through-hole
/// of `hole_radius` along z: a closed genus-1 mesh. The hole's polygon has a
/// vertex at every multiple of `2π / segments` and at the angle of each box
/// corner; each such ray meets the box outline at a vertex, so the cap
/// between polygon and outline is a ring of quads.
///
/// # Panics
/// If `segments < 3` or the hole does not fit inside the box's xy outline.
pub fn block_with_hole(
    half_extents: Vector3<f64>,
    hole_radius: f64,
    segments: u32,
) -> TriangleMesh {
    let h = half_extents;
    assert!(segments >= 3, "a hole needs 3 segments, got {segments}");
    assert!(
        hole_radius > 0.0 && hole_radius < h.x.min(h.y),
        "hole radius {hole_radius} does not fit in a {} × {} outline",
        2.0 * h.x,
        2.0 * h.y
    );
    let corner = h.y.atan2(h.x);
    let mut angles: Vec<f64> = (0..segments)
        .map(|i| TAU * f64::from(i) / f64::from(segments))
        .chain([corner, PI - corner, PI + corner, TAU - corner])
        .collect();
    angles.sort_by(f64::total_cmp);
    angles.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
    let n = angles.len() as u32;
    // Per z level: the hole's ring (0..n), then the outline's (n..2n).
    let mut vertices = Vec::with_capacity(4 * n as usize);
    for z in [-h.z, h.z] {
        let directions = angles.iter().map(|a| (a.cos(), a.sin()));
        vertices.extend(
            directions
                .clone()
                .map(|(c, s)| Point3::new(hole_radius * c, hole_radius * s, z)),
        );
        vertices.extend(directions.map(|(c, s)| {
            let reach = (h.x / c.abs()).min(h.y / s.abs());
            Point3::new(reach * c, reach * s, z)
        }));
    }
    let (hole, outline) = (
        |level: u32, i: u32| 2 * n * level + i % n,
        |level: u32, i: u32| 2 * n * level + n + i % n,
    );
    let mut triangles = Vec::with_capacity(8 * n as usize);
    for i in 0..n {
        let j = i + 1;
        triangles.extend([
            // Top cap (+z), bottom cap (−z).
            [hole(1, i), outline(1, i), outline(1, j)],
            [hole(1, i), outline(1, j), hole(1, j)],
            [hole(0, i), outline(0, j), outline(0, i)],
            [hole(0, i), hole(0, j), outline(0, j)],
            // Outer wall, facing out; hole wall, facing the axis.
            [outline(0, i), outline(0, j), outline(1, j)],
            [outline(0, i), outline(1, j), outline(1, i)],
            [hole(0, i), hole(1, j), hole(0, j)],
            [hole(0, i), hole(1, i), hole(1, j)],
        ]);
    }
    TriangleMesh::new(vertices, triangles)
}

/// A closed L-shaped prism: a floor slab `x ∈ [−t, reach]`, `z ∈ [−t, 0]`
/// and a wall `x ∈ [−t, 0]`, `z ∈ [0, height]`, for `y ∈ [−depth, depth]`.
/// Its inner corner is the y axis; floor top `z = 0`, wall face `x = 0`.
pub fn corner_mesh(reach: f64, height: f64, thickness: f64, depth: f64) -> TriangleMesh {
    let t = thickness;
    // The profile in (x, z), counter-clockwise (normal −y).
    let profile = [
        (-t, -t),
        (reach, -t),
        (reach, 0.0),
        (0.0, 0.0),
        (0.0, height),
        (-t, height),
    ];
    let n = profile.len() as u32;
    let mut vertices = Vec::with_capacity(2 * profile.len());
    for y in [-depth, depth] {
        vertices.extend(profile.iter().map(|&(x, z)| Point3::new(x, y, z)));
    }
    let mut triangles = Vec::new();
    // Caps: a fan from vertex 0 (valid for this L), −y then +y.
    for i in 1..n - 1 {
        triangles.push([0, i, i + 1]);
        triangles.push([n, n + i + 1, n + i]);
    }
    // Sides: the outward normal of edge (a, b) is (dz, −dx) in (x, z).
    for a in 0..n {
        let b = (a + 1) % n;
        triangles.push([a, n + b, b]);
        triangles.push([a, n + a, n + b]);
    }
    TriangleMesh::new(vertices, triangles)
}

/// Half side of the moving cube of every built-in scene (m).
pub const CUBE_HALF: f64 = 0.025;

/// The peg of the built-in peg-in-hole scene: radius and length (m).
pub const PEG_RADIUS: f64 = 0.01;
pub const PEG_LENGTH: f64 = 0.06;
/// Half extents of the holed block of the built-in peg-in-hole scene (m);
/// the hole runs along z through its centre ([`block_with_hole`]).
pub const BLOCK_HALF: Vector3<f64> = Vector3::new(0.025, 0.025, 0.015);

/// Names of the built-in meshes that configs and `hapticd prep` accept as
/// `builtin:NAME`.
pub const BUILTIN_NAMES: [&str; 3] = ["torus", "sphere", "box"];

/// A built-in mesh by name, in metres, about 10 cm across: `torus` (radii
/// 4 cm and 1.5 cm), `sphere` (radius 5 cm) or `box` (10 × 7 × 5 cm).
pub fn builtin(name: &str) -> Option<TriangleMesh> {
    match name {
        "torus" => Some(torus(0.04, 0.015, 96, 48)),
        "sphere" => Some(icosphere(0.05, 4)),
        "box" => Some(box_mesh(Vector3::new(0.05, 0.035, 0.025))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Divergence theorem: V = Σ (a · (b × c)) / 6 for a closed outward mesh.
    fn volume(mesh: &TriangleMesh) -> f64 {
        (0..mesh.triangles.len())
            .map(|t| {
                let [a, b, c] = mesh.corners(t);
                a.coords.dot(&b.coords.cross(&c.coords)) / 6.0
            })
            .sum()
    }

    #[test]
    fn generated_shapes_are_outward_with_the_expected_volume() {
        let cube = box_mesh(Vector3::new(1.0, 2.0, 3.0));
        assert!((volume(&cube) - 48.0).abs() < 1e-12);
        let sphere = icosphere(2.0, 4);
        assert_eq!(sphere.triangles.len(), 20 * 256);
        let exact = 4.0 / 3.0 * std::f64::consts::PI * 8.0;
        assert!((volume(&sphere) - exact).abs() / exact < 0.01);
        let ring = torus(1.0, 0.25, 96, 48);
        let exact = 2.0 * std::f64::consts::PI.powi(2) * 1.0 * 0.25f64.powi(2);
        assert!((volume(&ring) - exact).abs() / exact < 0.01);
    }

    #[test]
    fn torus_has_genus_one() {
        let report = crate::topology::analyze_topology(&torus(2.0, 1.0, 8, 5));
        assert!(report.is_watertight());
        assert_eq!(report.euler_characteristic, 0);
        assert_eq!(report.genus, Some(1));
    }

    #[test]
    fn cylinder_and_holed_block_are_watertight_with_the_polygon_volume() {
        use crate::topology::analyze_topology;
        // A regular n-gon of circumradius r has area (n/2) r² sin(2π/n).
        let polygon = |r: f64, n: u32| 0.5 * f64::from(n) * r * r * (TAU / f64::from(n)).sin();
        let peg = cylinder(0.01, 0.06, 48);
        let topology = analyze_topology(&peg);
        assert!(topology.is_watertight(), "{topology}");
        assert_eq!(topology.genus, Some(0));
        let exact = polygon(0.01, 48) * 0.06;
        assert!((volume(&peg) - exact).abs() < 1e-12 * exact);

        // Square outline: the corners are already multiples of 2π/64.
        let block = block_with_hole(Vector3::new(0.025, 0.025, 0.015), 0.0099, 64);
        let topology = analyze_topology(&block);
        assert!(topology.is_watertight(), "{topology}");
        assert_eq!(topology.genus, Some(1));
        assert_eq!(block.vertices.len(), 4 * 64);
        let exact = (0.05 * 0.05 - polygon(0.0099, 64)) * 0.03;
        assert!((volume(&block) - exact).abs() < 1e-12 * exact);

        // Oblong outline, odd segment count: the corner rays are added.
        let block = block_with_hole(Vector3::new(3.0, 1.0, 0.5), 0.8, 7);
        let topology = analyze_topology(&block);
        assert!(topology.is_watertight(), "{topology}");
        assert_eq!(topology.genus, Some(1));
        assert_eq!(block.vertices.len(), 4 * 11);
        let hole: f64 = (0..block.vertices.len() / 4)
            .map(|i| {
                let (a, b) = (block.vertices[i], block.vertices[(i + 1) % 11]);
                0.5 * (a.x * b.y - a.y * b.x)
            })
            .sum();
        assert!(hole > 0.0 && hole < PI * 0.64);
        assert!((volume(&block) - (12.0 - hole)).abs() < 1e-12);
    }
}
