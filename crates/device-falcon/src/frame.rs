//! The one place where the Falcon frame meets the device frame.
//!
//! The Falcon frame (libnifalcon's, [`crate::kinematics`]): x right, y up,
//! z out of the device towards the user, origin at the leg bases. The device
//! frame, which every [`haptic_devices::DeviceSample`] of this crate is in,
//! is right-handed with z up like the scenes: x right, y away from the user
//! (into the device), z up, with its origin at the workspace centre
//! (`[device.falcon] centre_m`, in the Falcon frame):
//!
//! ```text
//! device = (x_F − c_x,  −(z_F − c_z),  y_F − c_y)
//! ```

use nalgebra::{Point3, Vector3};

/// Device-frame position of Falcon-frame point `p`, with the device origin
/// at Falcon-frame point `centre`.
pub fn position_to_device(p: &Point3<f64>, centre: &Point3<f64>) -> Point3<f64> {
    let d = p - centre;
    Point3::new(d.x, -d.z, d.y)
}

/// Device-frame components of Falcon-frame vector `v` (a velocity).
pub fn vector_to_device(v: &Vector3<f64>) -> Vector3<f64> {
    Vector3::new(v.x, -v.z, v.y)
}

/// Falcon-frame components of device-frame vector `v` (a force).
pub fn vector_to_falcon(v: &Vector3<f64>) -> Vector3<f64> {
    Vector3::new(v.x, v.z, -v.y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_conversions_are_inverse_rotations() {
        let v = Vector3::new(0.3, -1.2, 2.5);
        assert_eq!(vector_to_falcon(&vector_to_device(&v)), v);
        let centre = Point3::new(0.0, 0.0, 0.11);
        // Towards the user in the Falcon frame is −y in the device frame;
        // up is up.
        let towards_user = Point3::new(0.0, 0.0, 0.12);
        assert!(
            (position_to_device(&towards_user, &centre) - Point3::new(0.0, -0.01, 0.0)).norm()
                < 1e-15
        );
        let up = Point3::new(0.0, 0.02, 0.11);
        assert_eq!(
            position_to_device(&up, &centre),
            Point3::new(0.0, 0.0, 0.02)
        );
        // A right-handed rotation: x × y = z in both frames.
        let (x, y) = (
            vector_to_device(&Vector3::x()),
            vector_to_device(&Vector3::y()),
        );
        assert_eq!(x.cross(&y), vector_to_device(&Vector3::z()));
    }
}
