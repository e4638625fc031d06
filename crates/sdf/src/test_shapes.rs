//! Shapes for this crate's tests.

pub use haptic_mesh::shapes::{box_mesh, torus};
use haptic_mesh::TriangleMesh;
use nalgebra::Vector3;

/// A cube of half-size `half` without its +z face: an open mesh with a square hole.
pub fn open_box(half: f64) -> TriangleMesh {
    let mut mesh = box_mesh(Vector3::repeat(half));
    mesh.triangles
        .retain(|t| !t.iter().all(|&v| mesh.vertices[v as usize].z > 0.0));
    mesh
}
