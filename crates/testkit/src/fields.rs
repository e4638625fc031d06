//! Analytic signed distance fields for tests and benchmarks of contact
//! queries: exact distances with Lipschitz bound 1.

use haptic_mesh::Aabb;
use haptic_sdf::DistanceField;
use nalgebra::{Matrix3, Point3, Vector3};

/// A solid ball.
#[derive(Clone, Copy, Debug)]
pub struct SphereField {
    pub center: Point3<f64>,
    pub radius: f64,
}

impl DistanceField for SphereField {
    #[inline]
    fn value(&self, p: &Point3<f64>) -> f64 {
        (p - self.center).norm() - self.radius
    }

    fn value_gradient(&self, p: &Point3<f64>) -> (f64, Vector3<f64>) {
        let d = p - self.center;
        let norm = d.norm();
        let gradient = if norm > 0.0 { d / norm } else { Vector3::z() };
        (norm - self.radius, gradient)
    }

    /// `(I − ĝĝᵀ) / ‖p − c‖`, the curvature of the spheres about the centre.
    fn value_gradient_hessian(&self, p: &Point3<f64>) -> (f64, Vector3<f64>, Matrix3<f64>) {
        let (value, gradient) = self.value_gradient(p);
        let norm = (p - self.center).norm();
        let hessian = if norm > 0.0 {
            (Matrix3::identity() - gradient * gradient.transpose()) / norm
        } else {
            Matrix3::zeros()
        };
        (value, gradient, hessian)
    }

    fn bounds(&self) -> Aabb {
        let r = Vector3::repeat(2.0 * self.radius);
        Aabb {
            min: self.center - r,
            max: self.center + r,
        }
    }

    fn lipschitz_bound(&self) -> f64 {
        1.0
    }
}

/// The solid half-space `normal · p < offset` (`normal` of unit length).
#[derive(Clone, Copy, Debug)]
pub struct HalfSpaceField {
    pub normal: Vector3<f64>,
    pub offset: f64,
}

impl DistanceField for HalfSpaceField {
    #[inline]
    fn value(&self, p: &Point3<f64>) -> f64 {
        self.normal.dot(&p.coords) - self.offset
    }

    fn value_gradient(&self, p: &Point3<f64>) -> (f64, Vector3<f64>) {
        (self.value(p), self.normal)
    }

    fn value_gradient_hessian(&self, p: &Point3<f64>) -> (f64, Vector3<f64>, Matrix3<f64>) {
        (self.value(p), self.normal, Matrix3::zeros())
    }

    /// Exact everywhere, so the bounds are all of space.
    fn bounds(&self) -> Aabb {
        Aabb {
            min: Point3::from(Vector3::repeat(f64::NEG_INFINITY)),
            max: Point3::from(Vector3::repeat(f64::INFINITY)),
        }
    }

    fn lipschitz_bound(&self) -> f64 {
        1.0
    }
}

/// A solid axis-aligned box centred at the origin.
#[derive(Clone, Copy, Debug)]
pub struct BoxField {
    pub half_extents: Vector3<f64>,
}

impl DistanceField for BoxField {
    #[inline]
    fn value(&self, p: &Point3<f64>) -> f64 {
        self.value_gradient(p).0
    }

    fn value_gradient(&self, p: &Point3<f64>) -> (f64, Vector3<f64>) {
        let q = p.coords.abs() - self.half_extents;
        let sign = p.coords.map(|c| if c < 0.0 { -1.0 } else { 1.0 });
        let outside = q.sup(&Vector3::zeros());
        let distance = outside.norm();
        if distance > 0.0 {
            (distance, outside.component_mul(&sign) / distance)
        } else {
            let axis = q.imax();
            let mut gradient = Vector3::zeros();
            gradient[axis] = sign[axis];
            (q[axis], gradient)
        }
    }

    fn bounds(&self) -> Aabb {
        Aabb {
            min: Point3::from(-2.0 * self.half_extents),
            max: Point3::from(2.0 * self.half_extents),
        }
    }

    fn lipschitz_bound(&self) -> f64 {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn box_field_is_the_exact_distance() {
        let field = BoxField {
            half_extents: Vector3::new(1.0, 2.0, 3.0),
        };
        assert_eq!(field.value(&Point3::new(0.5, 0.0, 0.0)), -0.5);
        assert_eq!(field.value(&Point3::new(0.0, -1.5, 0.0)), -0.5);
        assert!((field.value(&Point3::new(4.0, 6.0, 0.0)) - 5.0).abs() < 1e-12);
        let (_, g) = field.value_gradient(&Point3::new(0.0, 0.0, -2.9));
        assert_eq!(g, -Vector3::z());
    }
}
