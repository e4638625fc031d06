//! One side of a joint as its rows see it: a body's pose and velocity, or
//! the world's frame at rest.

use crate::body::RigidBody;
use haptic_core::Vector6;
use nalgebra::{Matrix3, Point3, Vector3};

/// Pose and velocity of one side of a joint; the world is the frame at the
/// origin with identity rotation, at rest.
pub(super) struct Side {
    pub(super) x: Vector3<f64>,
    pub(super) rotation: Matrix3<f64>,
    pub(super) v: Vector3<f64>,
    pub(super) w: Vector3<f64>,
}

impl Side {
    pub(super) fn of(body: &RigidBody) -> Self {
        Side {
            x: body.state.pose.translation.vector,
            rotation: *body.state.pose.rotation.to_rotation_matrix().matrix(),
            v: body.state.velocity,
            w: body.state.angular_velocity,
        }
    }

    pub(super) fn world() -> Self {
        Side {
            x: Vector3::zeros(),
            rotation: Matrix3::identity(),
            v: Vector3::zeros(),
            w: Vector3::zeros(),
        }
    }

    /// A world point or vector in this side's frame.
    pub(super) fn local_point(&self, p: &Point3<f64>) -> Point3<f64> {
        Point3::from(self.rotation.transpose() * (p.coords - self.x))
    }

    pub(super) fn local_vector(&self, v: &Vector3<f64>) -> Vector3<f64> {
        self.rotation.transpose() * v
    }
}

pub(super) fn six(top: &Vector3<f64>, bottom: &Vector3<f64>) -> Vector6 {
    Vector6::new(top.x, top.y, top.z, bottom.x, bottom.y, bottom.z)
}

pub(super) fn sides(a: usize, b: Option<usize>, bodies: &[RigidBody]) -> (Side, Side) {
    (
        Side::of(&bodies[a]),
        b.map_or_else(Side::world, |b| Side::of(&bodies[b])),
    )
}
