//! Decoded axes → a pose: taken as is (position control) or integrated from
//! velocities (rate control).

use super::decode::SpaceMouseState;
use super::profile::ControlMode;
use nalgebra::{Point3, UnitQuaternion, Vector3};

/// A pose, with the twist that produced it under rate control.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    pub position: Point3<f64>,
    pub orientation: UnitQuaternion<f64>,
    pub linear_velocity: Option<Vector3<f64>>,
    pub angular_velocity: Option<Vector3<f64>>,
}

/// Turns successive decoded states into poses.
#[derive(Clone, Debug)]
pub struct PoseTracker {
    mode: ControlMode,
    half_extents: Vector3<f64>,
    position: Point3<f64>,
    orientation: UnitQuaternion<f64>,
}

impl PoseTracker {
    /// Starts at the origin with identity orientation.
    pub fn new(mode: ControlMode, workspace_half_extents: Vector3<f64>) -> PoseTracker {
        PoseTracker {
            mode,
            half_extents: workspace_half_extents,
            position: Point3::origin(),
            orientation: UnitQuaternion::identity(),
        }
    }

    /// The pose after `dt` seconds at `state`.
    ///
    /// Position control: x, y, z are the position (m) and rx, ry, rz
    /// roll-pitch-yaw angles (rad). Rate control: x, y, z are a linear
    /// velocity (m/s) and rx, ry, rz an angular velocity (rad/s), both in the
    /// device frame; the integrated position is clamped to the workspace.
    pub fn update(&mut self, state: &SpaceMouseState, dt: f64) -> Pose {
        let [x, y, z, rx, ry, rz] = state.axes;
        let linear = Vector3::new(x, y, z);
        let angular = Vector3::new(rx, ry, rz);
        match self.mode {
            ControlMode::Position => {
                self.position = Point3::from(linear);
                self.orientation = UnitQuaternion::from_euler_angles(rx, ry, rz);
                Pose {
                    position: self.position,
                    orientation: self.orientation,
                    linear_velocity: None,
                    angular_velocity: None,
                }
            }
            ControlMode::Rate => {
                let dt = if dt.is_finite() { dt.max(0.0) } else { 0.0 };
                let moved = self.position.coords + linear * dt;
                self.position =
                    Point3::from(moved.zip_map(&self.half_extents, |p, h| p.clamp(-h, h)));
                self.orientation =
                    UnitQuaternion::from_scaled_axis(angular * dt) * self.orientation;
                Pose {
                    position: self.position,
                    orientation: self.orientation,
                    linear_velocity: Some(linear),
                    angular_velocity: Some(angular),
                }
            }
        }
    }
}
