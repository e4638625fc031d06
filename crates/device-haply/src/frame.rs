//! The Inverse Service's frame to the device frame, in one place.
//!
//! The service reports, with its basis left at `XYZ` (which the session
//! asks for), a right-handed frame with +x to the user's right, +y forward
//! (away from the user) and +z up, in metres, its origin on the Inverse3's
//! mounting plate (Haply, "Basis Permutation",
//! <https://docs.haply.co/inverseSDK/service/commons/basis>). The device
//! frame of every backend here is the same: x right, y away from the
//! user, z up. So the axes carry over unchanged, and only the origin moves
//! to `centre` (the middle of the reach the user chooses):
//! `device = service − centre`; velocities and forces are the same
//! vectors in both. The grip's orientation, in the same basis, is taken as
//! it comes, normalised.

use nalgebra::{Point3, Quaternion, UnitQuaternion, Vector3};

/// A position reported by the service → the device frame.
pub fn position(service: [f64; 3], centre: &Point3<f64>) -> Point3<f64> {
    Point3::from(Vector3::from(service) - centre.coords)
}

/// A velocity reported by the service → the device frame.
pub fn velocity(service: [f64; 3]) -> Vector3<f64> {
    Vector3::from(service)
}

/// A force in the device frame → the service's `set_cursor_force` vector.
pub fn force(device: &Vector3<f64>) -> [f64; 3] {
    [device.x, device.y, device.z]
}

/// The grip's `[w, x, y, z]` → a rotation. A quaternion that cannot be
/// normalised (zero, or not finite) becomes NaN: a non-finite sample,
/// which the safety layer withholds and counts.
pub fn orientation(wxyz: [f64; 4]) -> UnitQuaternion<f64> {
    let [w, x, y, z] = wxyz;
    let q = Quaternion::new(w, x, y, z);
    let norm = q.norm();
    if norm.is_finite() && norm > 1e-6 {
        UnitQuaternion::from_quaternion(q)
    } else {
        UnitQuaternion::new_unchecked(Quaternion::new(f64::NAN, f64::NAN, f64::NAN, f64::NAN))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_move_to_the_centre_and_axes_carry_over() {
        let centre = Point3::new(0.0, -0.15, 0.15);
        assert_eq!(
            position([0.01, -0.12, 0.2], &centre),
            Point3::new(0.01, 0.03, 0.2 - 0.15)
        );
        assert_eq!(velocity([1.0, 2.0, 3.0]), Vector3::new(1.0, 2.0, 3.0));
        assert_eq!(force(&Vector3::new(-1.0, 0.5, 2.0)), [-1.0, 0.5, 2.0]);
    }

    #[test]
    fn orientations_are_normalised_and_a_zero_quaternion_is_not_finite() {
        let q = orientation([2.0, 0.0, 0.0, 2.0]);
        let expected =
            UnitQuaternion::from_axis_angle(&Vector3::z_axis(), std::f64::consts::FRAC_PI_2);
        assert!(q.angle_to(&expected) < 1e-12);
        assert!(orientation([0.0; 4]).w.is_nan());
    }
}
