use crate::Aabb;
use nalgebra::{Point3, Vector3};

/// An indexed triangle mesh. Positions are in metres; each triangle lists its
/// vertices counter-clockwise seen from outside, so `(b - a) × (c - a)` points out.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TriangleMesh {
    pub vertices: Vec<Point3<f64>>,
    pub triangles: Vec<[u32; 3]>,
}

impl TriangleMesh {
    pub fn new(vertices: Vec<Point3<f64>>, triangles: Vec<[u32; 3]>) -> Self {
        Self {
            vertices,
            triangles,
        }
    }

    pub fn aabb(&self) -> Aabb {
        Aabb::from_points(&self.vertices)
    }

    /// The three corner positions of triangle `t`.
    #[inline]
    pub fn corners(&self, t: usize) -> [Point3<f64>; 3] {
        let [a, b, c] = self.triangles[t];
        [
            self.vertices[a as usize],
            self.vertices[b as usize],
            self.vertices[c as usize],
        ]
    }

    /// `(b - a) × (c - a)`: outward normal scaled by twice the area.
    #[inline]
    pub fn scaled_normal(&self, t: usize) -> Vector3<f64> {
        let [a, b, c] = self.corners(t);
        (b - a).cross(&(c - a))
    }

    pub fn area(&self, t: usize) -> f64 {
        0.5 * self.scaled_normal(t).norm()
    }

    pub fn surface_area(&self) -> f64 {
        (0..self.triangles.len()).map(|t| self.area(t)).sum()
    }
}
