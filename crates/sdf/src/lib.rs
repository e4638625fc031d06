//! Signed distance fields for haptic contact queries.
//!
//! Distances are in metres, negative inside the object. Every field answers in
//! its own frame ([`DistanceField`]).
//!
//! Fields are built from a mesh through [`MeshBvh`]: exact unsigned distance by
//! nearest-triangle search, and a sign from the generalised winding number read
//! per connected component of each block (the `sign` module), which keeps the sign right
//! on meshes with small holes or inconsistently oriented triangles.

mod bvh;
mod dense;
mod grid;
mod progress;
pub mod reference;
mod sign;
mod slab;
mod sparse;
#[cfg(test)]
mod test_shapes;
mod triangle_queries;

pub use bvh::{MeshBvh, Nearest};
pub use dense::{DenseField, DenseOptions, InvalidField};
pub use grid::GridSpec;
pub use progress::{BuildProgress, NoProgress};
pub use slab::Slab;
pub use sparse::{
    SparseField, SparseOptions, BRICK_CELLS, MAX_BAND_HALF_WIDTH_VOXELS, STEPS_PER_VOXEL,
};

use haptic_mesh::Aabb;
use nalgebra::{Matrix3, Point3, Vector3};

/// The step (m) of [`DistanceField::value_gradient_hessian`]'s default
/// central differences.
pub const HESSIAN_STEP: f64 = 1e-6;

/// A signed distance field queried in its own frame.
pub trait DistanceField {
    /// Signed distance at `p` (m); negative inside.
    fn value(&self, p: &Point3<f64>) -> f64;

    /// Signed distance at `p` and its analytic gradient (the gradient of the
    /// interpolant, not a finite difference).
    fn value_gradient(&self, p: &Point3<f64>) -> (f64, Vector3<f64>);

    /// Signed distance at `p`, its gradient and its Hessian `∂²d/∂p²`. By
    /// default the Hessian is the central difference of
    /// [`value_gradient`](Self::value_gradient) over `HESSIAN_STEP`; the
    /// grid fields give their interpolant's own.
    fn value_gradient_hessian(&self, p: &Point3<f64>) -> (f64, Vector3<f64>, Matrix3<f64>) {
        let (value, gradient) = self.value_gradient(p);
        let mut hessian = Matrix3::zeros();
        for axis in 0..3 {
            let mut step = Vector3::zeros();
            step[axis] = HESSIAN_STEP;
            let ahead = self.value_gradient(&(p + step)).1;
            let behind = self.value_gradient(&(p - step)).1;
            hessian.set_column(axis, &((ahead - behind) / (2.0 * HESSIAN_STEP)));
        }
        (value, gradient, (hessian + hessian.transpose()) * 0.5)
    }

    /// The region where the field holds samples; outside it the answer is a
    /// conservative bound (never larger than the true distance).
    fn bounds(&self) -> Aabb;

    /// An upper bound on |∇value| everywhere, so that `value(c) > L·r` proves a
    /// ball of radius `r` around `c` lies outside the object.
    fn lipschitz_bound(&self) -> f64;

    /// A box outside which every value is at least the distance to the box,
    /// if the field has one: a query can then pass over far points without
    /// looking them up.
    fn positive_beyond(&self) -> Option<Aabb> {
        None
    }
}

/// A dense or a sparse field, as a prepared file holds one or the other.
#[derive(Clone, Debug)]
pub enum Field {
    Dense(DenseField),
    Sparse(SparseField),
}

impl DistanceField for Field {
    #[inline]
    fn value(&self, p: &Point3<f64>) -> f64 {
        match self {
            Field::Dense(f) => f.value(p),
            Field::Sparse(f) => f.value(p),
        }
    }

    #[inline]
    fn value_gradient(&self, p: &Point3<f64>) -> (f64, Vector3<f64>) {
        match self {
            Field::Dense(f) => f.value_gradient(p),
            Field::Sparse(f) => f.value_gradient(p),
        }
    }

    #[inline]
    fn value_gradient_hessian(&self, p: &Point3<f64>) -> (f64, Vector3<f64>, Matrix3<f64>) {
        match self {
            Field::Dense(f) => f.value_gradient_hessian(p),
            Field::Sparse(f) => f.value_gradient_hessian(p),
        }
    }

    fn bounds(&self) -> Aabb {
        match self {
            Field::Dense(f) => f.bounds(),
            Field::Sparse(f) => f.bounds(),
        }
    }

    fn lipschitz_bound(&self) -> f64 {
        match self {
            Field::Dense(f) => f.lipschitz_bound(),
            Field::Sparse(f) => f.lipschitz_bound(),
        }
    }

    fn positive_beyond(&self) -> Option<Aabb> {
        match self {
            Field::Dense(f) => f.positive_beyond(),
            Field::Sparse(f) => f.positive_beyond(),
        }
    }
}
