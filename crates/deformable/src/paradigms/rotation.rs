//! The rotational part of a 3×3 matrix, as co-rotational FEM and shape
//! matching need it.

use nalgebra::{Matrix3, UnitQuaternion, Vector3};

/// The rotation `R` of the polar decomposition `A = R S`, found by Müller,
/// Bender, Chentanez & Macklin's iteration ("A robust method to extract the
/// rotational part of deformations", 2016) started from `guess` (the
/// previous step's answer): each iteration turns `R` about
/// `Σ rᵢ × aᵢ / |Σ rᵢ · aᵢ|`. Unlike an SVD it never returns a reflection,
/// and it stays continuous through inversion.
pub fn extract_rotation(
    a: &Matrix3<f64>,
    guess: UnitQuaternion<f64>,
    max_iterations: usize,
) -> UnitQuaternion<f64> {
    let mut q = guess;
    for _ in 0..max_iterations {
        let r = q.to_rotation_matrix();
        let r = r.matrix();
        let mut axis = Vector3::zeros();
        let mut alignment = 0.0;
        for k in 0..3 {
            axis += r.column(k).cross(&a.column(k));
            alignment += r.column(k).dot(&a.column(k));
        }
        let omega = axis / (alignment.abs() + 1e-9);
        let angle = omega.norm();
        if angle < 1e-12 {
            break;
        }
        q = UnitQuaternion::from_scaled_axis(omega) * q;
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_the_rotation_of_a_stretched_rotated_matrix() {
        let rotation = UnitQuaternion::from_euler_angles(0.4, -1.1, 2.0);
        let stretch = Matrix3::new(1.3, 0.1, 0.0, 0.1, 0.8, 0.05, 0.0, 0.05, 1.1);
        let a = rotation.to_rotation_matrix().matrix() * stretch;
        let found = extract_rotation(&a, UnitQuaternion::identity(), 100);
        assert!(
            found.angle_to(&rotation) < 1e-8,
            "{}",
            found.angle_to(&rotation)
        );
    }
}
