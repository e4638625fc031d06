//! Signed distance fields for haptic contact queries.
//!
//! Distances are in metres, negative inside the object. Every field answers in
//! its own frame ([`DistanceField`]); [`PlacedField`] answers in the world frame.

mod placed;
mod slab;

pub use placed::PlacedField;
pub use slab::Slab;

use haptic_mesh::Aabb;
use nalgebra::{Point3, Vector3};

/// A signed distance field queried in its own frame.
pub trait DistanceField {
    /// Signed distance at `p` (m); negative inside.
    fn value(&self, p: &Point3<f64>) -> f64;

    /// Signed distance at `p` and its analytic gradient (the gradient of the
    /// interpolant, not a finite difference).
    fn value_gradient(&self, p: &Point3<f64>) -> (f64, Vector3<f64>);

    /// The region where the field holds samples; outside it the answer is a
    /// conservative bound (never larger than the true distance).
    fn bounds(&self) -> Aabb;

    /// An upper bound on |∇value| everywhere, so that `value(c) > L·r` proves a
    /// ball of radius `r` around `c` lies outside the object.
    fn lipschitz_bound(&self) -> f64;
}
