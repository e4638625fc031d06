//! The unit cube written in every supported format, for the loader tests.

use crate::TriangleMesh;

/// Corner `i` is `(i & 1, i >> 1 & 1, i >> 2 & 1)`.
pub(crate) fn cube_corners() -> Vec<[f64; 3]> {
    (0..8)
        .map(|i| [i & 1, i >> 1 & 1, i >> 2 & 1].map(f64::from))
        .collect()
}

/// The six faces, counter-clockwise seen from outside.
pub(crate) const CUBE_QUADS: [[u32; 4]; 6] = [
    [0, 2, 3, 1],
    [4, 5, 7, 6],
    [0, 1, 5, 4],
    [2, 6, 7, 3],
    [0, 4, 6, 2],
    [1, 3, 7, 5],
];

pub(crate) fn cube_triangles() -> Vec<[u32; 3]> {
    CUBE_QUADS
        .iter()
        .flat_map(|&[a, b, c, d]| [[a, b, c], [a, c, d]])
        .collect()
}

/// Enclosed volume by the divergence theorem: positive when faces point out.
pub(crate) fn signed_volume(mesh: &TriangleMesh) -> f64 {
    (0..mesh.triangles.len())
        .map(|t| {
            let [a, b, c] = mesh.corners(t);
            a.coords.dot(&b.coords.cross(&c.coords)) / 6.0
        })
        .sum()
}

pub(crate) fn cube_obj() -> String {
    let mut text = String::from("# unit cube\nmtllib cube.mtl\no cube\n");
    for [x, y, z] in cube_corners() {
        text += &format!("v {x} {y} {z}\n");
    }
    text += "vt 0 0\nvn 0 0 1\ng sides\nusemtl grey\ns off\n";
    for (face, quad) in CUBE_QUADS.iter().enumerate() {
        let corners: Vec<String> = quad
            .iter()
            .map(|&v| match face % 3 {
                0 => format!("{}", v + 1),
                1 => format!("{}/1", v + 1),
                _ => format!("{}/1/1", v + 1),
            })
            .collect();
        text += &format!("f {}\n", corners.join(" "));
    }
    text
}

pub(crate) fn cube_ascii_stl() -> String {
    let corners = cube_corners();
    let mut text = String::from("solid cube\n");
    for triangle in cube_triangles() {
        text += "  facet normal 0 0 0\n    outer loop\n";
        for v in triangle {
            let [x, y, z] = corners[v as usize];
            text += &format!("      vertex {x:e} {y:e} {z:e}\n");
        }
        text += "    endloop\n  endfacet\n";
    }
    text + "endsolid cube\n"
}

/// Binary STL whose header starts with `solid`, as many CAD exporters write it.
pub(crate) fn cube_binary_stl() -> Vec<u8> {
    binary_stl(&cube_corners(), &cube_triangles())
}

pub(crate) fn binary_stl(corners: &[[f64; 3]], triangles: &[[u32; 3]]) -> Vec<u8> {
    let mut bytes = b"solid cube, binary".to_vec();
    bytes.resize(80, b' ');
    bytes.extend_from_slice(&(triangles.len() as u32).to_le_bytes());
    for triangle in triangles {
        bytes.extend_from_slice(&[0; 12]);
        for v in triangle {
            for c in corners[*v as usize] {
                bytes.extend_from_slice(&(c as f32).to_le_bytes());
            }
        }
        bytes.extend_from_slice(&[0, 0]);
    }
    bytes
}

pub(crate) fn cube_ascii_ply() -> String {
    let mut text = String::from(
        "ply\nformat ascii 1.0\ncomment unit cube\nelement vertex 8\n\
         property float x\nproperty float y\nproperty float z\n\
         element face 6\nproperty list uchar int vertex_indices\nend_header\n",
    );
    for [x, y, z] in cube_corners() {
        text += &format!("{x} {y} {z}\n");
    }
    for [a, b, c, d] in CUBE_QUADS {
        text += &format!("4 {a} {b} {c} {d}\n");
    }
    text
}

/// Little-endian binary PLY with double coordinates, an extra vertex property
/// and an extra element, to check that both are skipped.
pub(crate) fn cube_binary_ply() -> Vec<u8> {
    let mut bytes = b"ply\nformat binary_little_endian 1.0\nelement vertex 8\n\
        property double x\nproperty double y\nproperty double z\nproperty uchar red\n\
        element face 6\nproperty list uchar uint vertex_index\n\
        element edge 1\nproperty int vertex1\nproperty int vertex2\nend_header\n"
        .to_vec();
    for corner in cube_corners() {
        for c in corner {
            bytes.extend_from_slice(&c.to_le_bytes());
        }
        bytes.push(200);
    }
    for quad in CUBE_QUADS {
        bytes.push(4);
        for v in quad {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
    }
    bytes.extend_from_slice(&0i32.to_le_bytes());
    bytes.extend_from_slice(&1i32.to_le_bytes());
    bytes
}

pub(crate) fn cube_off() -> String {
    let mut text = String::from("OFF\n# unit cube\n8 6 12\n");
    for [x, y, z] in cube_corners() {
        text += &format!("{x} {y} {z}\n");
    }
    for [a, b, c, d] in CUBE_QUADS {
        text += &format!("4 {a} {b} {c} {d}\n");
    }
    text
}
