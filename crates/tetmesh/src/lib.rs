//! Tetrahedral volume meshes for deformable bodies.
//!
//! A [`TetMesh`] is nodes and positively oriented 4-node tets. What a
//! deformable model needs from it:
//!
//! - [`TetMesh::validate`]: indices in range, no inverted or degenerate tet
//!   (named by index, with its volume), unreferenced nodes reported;
//! - [`TetMesh::boundary`] / [`TetMesh::check_boundary`]: the outward surface
//!   as a [`haptic_mesh::TriangleMesh`] with the map from its vertices to tet
//!   nodes (for contact and rendering), checked closed and manifold;
//!   [`Boundary::node_triangles`] numbers it by tet node;
//! - [`TetMesh::edges`] (springs, distance constraints),
//!   [`TetMesh::lumped_masses`], [`TetMesh::volume`], [`TetMesh::quality`].
//!
//! Files: Gmsh MSH 4.1 ASCII and binary ([`read_msh`], [`write_msh`]) and
//! Medit `.mesh` ([`read_medit`]); [`read_tet_mesh`] picks by extension.
//! Every reader validates, and its errors name the file and the line, byte
//! or element.
//!
//! Generation: [`stuff_isosurface`] fills the inside of any signed distance
//! field (so any closed mesh) with tets by isosurface stuffing on a BCC
//! lattice (Labelle & Shewchuk 2007).

mod boundary;
mod medit;
mod msh;
mod read_error;
mod stuffing;
mod tet_mesh;
mod validate;

pub use boundary::{check_closed, check_closed_manifold, enclosed_volume, Boundary, BoundaryError};
pub use medit::{parse_medit, parse_medit_file};
pub use msh::{msh_string, parse_msh, parse_msh_file, write_msh, TETRAHEDRON};
pub use read_error::{LoadedTetMesh, Location, ParsedTetMesh, Place, ReadError};
pub use stuffing::{
    lattice_size, stuff_isosurface, Stuffed, StuffingError, StuffingOptions, StuffingReport,
    BYTES_PER_LATTICE_NODE,
};
pub use tet_mesh::{dihedral_angles, signed_volume, Quality, TetMesh, OUTWARD_FACES, TET_EDGES};
pub use validate::{TetMeshError, ValidationReport, DEGENERATE_RELATIVE_VOLUME};

use std::path::Path;

/// Reads a Gmsh MSH 4.1 file (ASCII or binary), validates it and checks its
/// boundary.
pub fn read_msh(path: &Path) -> Result<LoadedTetMesh, ReadError> {
    parse_msh_file(path)?.checked(path)
}

/// Reads a Medit `.mesh` file, validates it and checks its boundary.
pub fn read_medit(path: &Path) -> Result<LoadedTetMesh, ReadError> {
    parse_medit_file(path)?.checked(path)
}

/// Reads `.msh` (Gmsh MSH 4.1) or `.mesh` (Medit) by the file's extension.
pub fn read_tet_mesh(path: &Path) -> Result<LoadedTetMesh, ReadError> {
    let extension = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    match extension.as_deref() {
        Some("msh") => read_msh(path),
        Some("mesh") => read_medit(path),
        _ => Err(ReadError::syntax(
            path,
            None,
            "unknown volume-mesh extension: expected .msh (Gmsh MSH 4.1) or .mesh (Medit)",
        )),
    }
}
