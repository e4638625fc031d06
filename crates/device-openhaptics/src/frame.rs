//! The HD API's units and axes, and ours: the one place they meet.
//!
//! The HD API reports positions in mm, velocities in mm/s, forces in N and
//! gimbal torques in mN·m, in a frame with x to the right, y up and z
//! toward the user. Ours is SI with x toward the user, y to the right and
//! z up (as the Force Dimension devices report). The axes map by a cyclic
//! permutation, a proper rotation: ours = (z, x, y) of the HD API's.
//!
//! A 6-DoF Phantom takes torques about its gimbal's three joints
//! (`HD_CURRENT_GIMBAL_TORQUE`), not about Cartesian axes:
//! [`gimbal_torques`] maps a Cartesian torque on the stylus onto them
//! through the gimbal's kinematics ([`GIMBAL_JOINT_AXES`]).

use nalgebra::{Matrix3, Point3, Rotation3, Unit, UnitQuaternion, Vector3};

/// Metres per millimetre.
pub const M_PER_MM: f64 = 1e-3;
/// Millinewton-metres per newton-metre.
pub const MNM_PER_NM: f64 = 1e3;

/// The gimbal's joints from the arm to the stylus — yaw, pitch, roll, in
/// `HD_CURRENT_GIMBAL_ANGLES`' order — each as the axis it turns about in
/// the frame of the link before it, HD axes, its angle positive by the
/// right-hand rule: yaw about the gimbal base's y (up), pitch about the
/// yawed x (right), roll about the stylus' own z (its length). With every
/// angle zero the stylus frame is the gimbal base's, so the stylus
/// rotation `HD_CURRENT_TRANSFORM` reports is
/// R = R_base · R_y(q₁) · R_x(q₂) · R_z(q₃).
pub const GIMBAL_JOINT_AXES: [[f64; 3]; 3] = [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]];

/// An HD-frame vector in our axes, its unit unchanged.
pub fn from_hd_axes(v: [f64; 3]) -> Vector3<f64> {
    Vector3::new(v[2], v[0], v[1])
}

/// One of our vectors in the HD frame's axes, its unit unchanged.
pub fn to_hd_axes(v: &Vector3<f64>) -> [f64; 3] {
    [v.y, v.z, v.x]
}

/// `HD_CURRENT_POSITION` (mm) as a position (m).
pub fn position(mm: [f64; 3]) -> Point3<f64> {
    Point3::from(from_hd_axes(mm) * M_PER_MM)
}

/// `HD_CURRENT_VELOCITY` (mm/s) as a velocity (m/s).
pub fn velocity(mm_s: [f64; 3]) -> Vector3<f64> {
    from_hd_axes(mm_s) * M_PER_MM
}

/// `HD_CURRENT_ANGULAR_VELOCITY` (rad/s) in our axes.
pub fn angular_velocity(rad_s: [f64; 3]) -> Vector3<f64> {
    from_hd_axes(rad_s)
}

/// A force (N) as `HD_CURRENT_FORCE` takes it (N).
pub fn force(newtons: &Vector3<f64>) -> [f64; 3] {
    to_hd_axes(newtons)
}

/// The handle's orientation from `HD_CURRENT_TRANSFORM` (a column-major
/// 4×4 whose upper-left 3×3 holds the stylus axes in the HD frame): the
/// same rotation expressed in our axes, P·R·Pᵀ with P the axis map.
pub fn orientation(transform: &[f64; 16]) -> UnitQuaternion<f64> {
    let r = hd_rotation(transform);
    let p = axis_map();
    let ours = p * r * p.transpose();
    UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(ours))
}

/// The handle's orientation (ours) as the HD API's rotation, column-major:
/// the inverse of [`orientation`], for tests and simulations.
pub fn rotation_to_hd(orientation: &UnitQuaternion<f64>) -> [f64; 9] {
    let p = axis_map();
    let r = p.transpose() * orientation.to_rotation_matrix().matrix() * p;
    std::array::from_fn(|k| r[(k % 3, k / 3)])
}

/// The rotation (HD axes) of `HD_CURRENT_TRANSFORM`'s upper-left 3×3.
pub fn hd_rotation(transform: &[f64; 16]) -> Matrix3<f64> {
    Matrix3::from_fn(|i, j| transform[j * 4 + i])
}

/// The gimbal's joint axes in the HD frame, one column per joint, for the
/// stylus rotation `rotation` (HD axes) at gimbal angles `angles` (rad):
/// the angular-velocity Jacobian of the stylus in the gimbal's angles,
/// ω = Σᵢ aᵢ q̇ᵢ. From R = R_base·R₁(q₁)·R₂(q₂)·R₃(q₃) ([`GIMBAL_JOINT_AXES`])
/// each joint's axis uᵢ is carried to the HD frame by the links before it,
/// aᵢ = R_base·R₁⋯Rᵢ₋₁·uᵢ = R·R₃ᵀ⋯Rᵢ₊₁ᵀ·uᵢ (Rᵢ fixes uᵢ), so the arm's
/// kinematics are not needed: the reported rotation carries them.
pub fn gimbal_axes(rotation: &Matrix3<f64>, angles: [f64; 3]) -> Matrix3<f64> {
    let mut axes = Matrix3::zeros();
    let mut outer = *rotation;
    for joint in (0..3).rev() {
        let axis = Unit::new_unchecked(Vector3::from(GIMBAL_JOINT_AXES[joint]));
        axes.set_column(joint, &(outer * axis.into_inner()));
        outer *= Rotation3::from_axis_angle(&axis, -angles[joint]).matrix();
    }
    axes
}

/// A torque on the stylus (N·m, our axes) as the gimbal torques
/// `HD_CURRENT_GIMBAL_TORQUE` takes (mN·m, joint space, yaw, pitch, roll),
/// at the frame's `transform` and gimbal `angles`: τ_g = Jᵀ·τ with J the
/// angular Jacobian of [`gimbal_axes`] (virtual work: τ_g·q̇ = τ·ω). Each
/// axis is a unit vector, so no gimbal torque exceeds ‖τ‖: a torque
/// clamped in Cartesian space stays clamped per joint, near gimbal lock
/// too (where the part of τ about no joint is not rendered).
pub fn gimbal_torques(
    torque_n_m: &Vector3<f64>,
    transform: &[f64; 16],
    angles: [f64; 3],
) -> [f64; 3] {
    let torque = Vector3::from(to_hd_axes(torque_n_m));
    let joints = gimbal_axes(&hd_rotation(transform), angles).transpose() * torque * MNM_PER_NM;
    joints.into()
}

/// `HD_NOMINAL_MAX_TORQUE_FORCE` (mN·m) in N·m.
pub fn torque(mnm: f64) -> f64 {
    mnm / MNM_PER_NM
}

/// `HD_USABLE_WORKSPACE_DIMENSIONS` (min x, y, z then max x, y, z, mm) as
/// half extents (m) in our axes.
pub fn half_extents(dimensions_mm: [f64; 6]) -> Vector3<f64> {
    let [x0, y0, z0, x1, y1, z1] = dimensions_mm;
    let half = [(x1 - x0) / 2.0, (y1 - y0) / 2.0, (z1 - z0) / 2.0].map(f64::abs);
    from_hd_axes(half) * M_PER_MM
}

/// `HD_NOMINAL_MAX_STIFFNESS` (N/mm) in N/m.
pub fn stiffness(n_per_mm: f64) -> f64 {
    n_per_mm / M_PER_MM
}

/// P: HD-frame coordinates to ours.
fn axis_map() -> Matrix3<f64> {
    Matrix3::new(0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hd_up_is_our_z_and_toward_the_user_our_x() {
        assert_eq!(position([0.0, 10.0, 0.0]), Point3::new(0.0, 0.0, 0.01));
        assert_eq!(position([0.0, 0.0, 20.0]), Point3::new(0.02, 0.0, 0.0));
        assert_eq!(position([30.0, 0.0, 0.0]), Point3::new(0.0, 0.03, 0.0));
        assert_eq!(velocity([1000.0, 0.0, 0.0]), Vector3::new(0.0, 1.0, 0.0));
        assert_eq!(force(&Vector3::new(0.0, 0.0, 2.0)), [0.0, 2.0, 0.0]);
        assert_eq!(axis_map().determinant(), 1.0);
    }

    #[test]
    fn vectors_and_rotations_round_trip() {
        let v = Vector3::new(0.1, -2.0, 3.5);
        assert_eq!(from_hd_axes(to_hd_axes(&v)), v);
        let q = UnitQuaternion::from_scaled_axis(Vector3::new(0.3, -0.7, 1.1));
        let r = rotation_to_hd(&q);
        let mut transform = [0.0; 16];
        for k in 0..9 {
            transform[(k / 3) * 4 + k % 3] = r[k];
        }
        transform[15] = 1.0;
        assert!(orientation(&transform).angle_to(&q) < 1e-12);
    }

    #[test]
    fn a_rotation_about_hd_y_is_one_about_our_z() {
        // 90° about the HD y axis (up), column-major.
        let (c, s) = (0.0, 1.0);
        let transform = [
            c, 0.0, -s, 0.0, 0.0, 1.0, 0.0, 0.0, s, 0.0, c, 0.0, 5.0, 6.0, 7.0, 1.0,
        ];
        let q = orientation(&transform);
        let expected =
            UnitQuaternion::from_axis_angle(&Vector3::z_axis(), std::f64::consts::FRAC_PI_2);
        assert!(q.angle_to(&expected) < 1e-12, "{q:?}");
    }

    #[test]
    fn at_zero_angles_the_gimbal_axes_are_the_stylus_axes() {
        let axes = gimbal_axes(&Matrix3::identity(), [0.0; 3]);
        assert_eq!(axes.column(0), Vector3::y());
        assert_eq!(axes.column(1), Vector3::x());
        assert_eq!(axes.column(2), Vector3::z());
        let mut transform = [0.0; 16];
        for k in [0, 5, 10, 15] {
            transform[k] = 1.0;
        }
        // 0.1 N·m about our z (HD y, the yaw axis) is 100 mN·m of yaw.
        let t = gimbal_torques(&Vector3::new(0.0, 0.0, 0.1), &transform, [0.0; 3]);
        assert!(
            (t[0] - 100.0).abs() < 1e-12 && t[1] == 0.0 && t[2] == 0.0,
            "{t:?}"
        );
    }

    #[test]
    fn a_yawed_stylus_pitches_about_its_turned_x() {
        // Yawed 90° (about HD y): the pitch axis, x turned about y, is −z;
        // the roll axis, z turned about y, is x.
        let yaw = std::f64::consts::FRAC_PI_2;
        let r = *Rotation3::from_axis_angle(&Vector3::y_axis(), yaw).matrix();
        let axes = gimbal_axes(&r, [yaw, 0.0, 0.0]);
        assert!((axes.column(0) - Vector3::y()).norm() < 1e-12, "{axes}");
        assert!((axes.column(1) + Vector3::z()).norm() < 1e-12, "{axes}");
        assert!((axes.column(2) - Vector3::x()).norm() < 1e-12, "{axes}");
        assert_eq!(torque(188.0), 0.188);
    }

    #[test]
    fn workspace_and_stiffness_in_si() {
        let h = half_extents([-80.0, -60.0, -35.0, 80.0, 60.0, 35.0]);
        assert!((h - Vector3::new(0.035, 0.08, 0.06)).norm() < 1e-15);
        assert!((stiffness(1.26) - 1260.0).abs() < 1e-9);
    }
}
