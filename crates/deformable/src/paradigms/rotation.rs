//! The rotational part of a 3×3 matrix, as co-rotational FEM and shape
//! matching need it.

use nalgebra::{Matrix3, UnitQuaternion, Vector3};

/// The rotation `R` of the polar decomposition `A = R S`, started from
/// `guess` (the previous step's answer). Each iteration turns `R` by
/// `R ← R exp(δ)`, where `w = axial(M − Mᵀ)` of `M = Rᵀ A` measures how far
/// `M` is from symmetric. Müller, Bender, Chentanez & Macklin's step ("A
/// robust method to extract the rotational part of deformations", 2016),
/// `δ = w / |tr M|`, corrects only part of the error each iteration (a
/// third for `S ≈ I`, so twenty iterations to go from 10⁻³ to 10⁻¹²
/// rad); where `H = tr(S) I − S` (`S` the symmetric part of `M`) is
/// positive definite its Newton step `δ = H⁻¹ w` is taken instead, since
/// `M − Mᵀ ≈ [H δ]×` to first order, converging quadratically to the same
/// rotation. Unlike an SVD it never returns a reflection, and, falling back
/// to Müller et al.'s step, it stays continuous through inversion.
pub fn extract_rotation(
    a: &Matrix3<f64>,
    guess: UnitQuaternion<f64>,
    max_iterations: usize,
) -> UnitQuaternion<f64> {
    let mut q = guess;
    for _ in 0..max_iterations {
        let r = q.to_rotation_matrix();
        let m = r.matrix().transpose() * a;
        let w = Vector3::new(
            m[(2, 1)] - m[(1, 2)],
            m[(0, 2)] - m[(2, 0)],
            m[(1, 0)] - m[(0, 1)],
        );
        let trace = m.trace();
        let symmetric = 0.5 * (m + m.transpose());
        let hessian = Matrix3::from_diagonal_element(trace) - symmetric;
        let newton =
            solve_positive_definite(&hessian, &w).filter(|step| step.norm_squared() < 0.25);
        let step = newton.unwrap_or_else(|| w / (trace.abs() + 1e-9));
        let angle = step.norm();
        if angle < 1e-12 {
            break;
        }
        q *= UnitQuaternion::from_scaled_axis(step);
    }
    q
}

/// `H⁻¹ w` for a symmetric `H` that is positive definite (its leading
/// minors positive, Sylvester's criterion), by its adjugate; `None` if it is
/// not.
fn solve_positive_definite(h: &Matrix3<f64>, w: &Vector3<f64>) -> Option<Vector3<f64>> {
    let minor = h[(0, 0)] * h[(1, 1)] - h[(0, 1)] * h[(0, 1)];
    let c0 = h[(1, 1)] * h[(2, 2)] - h[(1, 2)] * h[(1, 2)];
    let c1 = h[(0, 2)] * h[(1, 2)] - h[(0, 1)] * h[(2, 2)];
    let c2 = h[(0, 1)] * h[(1, 2)] - h[(0, 2)] * h[(1, 1)];
    let det = h[(0, 0)] * c0 + h[(0, 1)] * c1 + h[(0, 2)] * c2;
    if !(h[(0, 0)] > 0.0 && minor > 0.0 && det > 0.0) {
        return None;
    }
    let c4 = h[(0, 0)] * h[(2, 2)] - h[(0, 2)] * h[(0, 2)];
    let c5 = h[(0, 1)] * h[(0, 2)] - h[(0, 0)] * h[(1, 2)];
    let adjugate = Matrix3::new(c0, c1, c2, c1, c4, c5, c2, c5, minor);
    Some(adjugate * w / det)
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
        // From near the answer, Newton's steps converge in a few iterations.
        let near = UnitQuaternion::from_scaled_axis(Vector3::new(1e-3, -2e-3, 5e-4)) * rotation;
        let found = extract_rotation(&a, near, 4);
        assert!(
            found.angle_to(&rotation) < 1e-8,
            "{}",
            found.angle_to(&rotation)
        );
    }
}
