//! Triangle meshes for the geometry pipeline: loading OBJ, STL, PLY and OFF
//! files, scaling them to metres, repairing them, and reporting their topology.
//!
//! A [`TriangleMesh`] holds vertex positions in metres and counter-clockwise
//! (outward-facing) triangles as vertex-index triples. [`load_mesh`] reads a
//! file, welds duplicate vertices, drops degenerate triangles (`clean`) and
//! describes the result in a [`MeshReport`]. Loading never panics on bad
//! input: every problem is a [`MeshError`] naming the file (and line, for text
//! formats).

mod aabb;
mod error;
mod format;
mod load;
mod plural;
mod repair;
mod report;
pub mod shapes;
#[cfg(test)]
mod test_meshes;
mod topology;
mod triangle_mesh;
mod unit;

pub use aabb::Aabb;
pub use error::MeshError;
pub use format::MeshFormat;
pub use load::{load_mesh, load_mesh_from_bytes, LoadOptions, LoadedMesh};
pub use repair::RepairReport;
pub use report::MeshReport;
pub use topology::TopologyReport;
pub use triangle_mesh::TriangleMesh;
pub use unit::{LengthUnit, ParseLengthUnitError};

pub use nalgebra::{Point3, Vector3};
