use crate::DistanceField;
use nalgebra::{Isometry3, Point3, Vector3};

/// A field placed in the world by a rigid pose (field frame → world frame).
/// World queries transform the point once and rotate the gradient back.
#[derive(Clone, Copy, Debug)]
pub struct PlacedField<'a, F: DistanceField + ?Sized> {
    pub field: &'a F,
    pub pose: Isometry3<f64>,
}

impl<'a, F: DistanceField + ?Sized> PlacedField<'a, F> {
    pub fn new(field: &'a F, pose: Isometry3<f64>) -> Self {
        Self { field, pose }
    }

    /// Signed distance at the world point `p`.
    #[inline]
    pub fn value(&self, p: &Point3<f64>) -> f64 {
        self.field.value(&self.pose.inverse_transform_point(p))
    }

    /// Signed distance at the world point `p` and its world-frame gradient.
    #[inline]
    pub fn value_gradient(&self, p: &Point3<f64>) -> (f64, Vector3<f64>) {
        let (value, local_gradient) = self
            .field
            .value_gradient(&self.pose.inverse_transform_point(p));
        (value, self.pose.rotation * local_gradient)
    }
}
