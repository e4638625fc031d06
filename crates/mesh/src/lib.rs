//! Triangle meshes for the geometry pipeline.
//!
//! A [`TriangleMesh`] holds vertex positions in metres and counter-clockwise
//! (outward-facing) triangles as vertex-index triples.

mod aabb;
pub mod shapes;
mod triangle_mesh;

pub use aabb::Aabb;
pub use triangle_mesh::TriangleMesh;

pub use nalgebra::{Point3, Vector3};
