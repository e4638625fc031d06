//! Static virtual coupling (Zhao, Li & Barbič eqs 5–6) between the manipulandum (the
//! device's pose) and the tool, and its 6×6 stiffness.
//!
//! `F_vc = k_vc (x_m − x_s)` and `τ_vc = k_vc,tor φ`, where
//! `φ = log(R_m R_sᵀ)` is the rotation vector (world frame, angle in
//! `[0, π]`) taking the tool's orientation to the
//! manipulandum's: the rotation-vector reading of eq 6's `ω_m − ω_s`.
//!
//! Gradient w.r.t. the tool's `q = (x, θ)`, `R_s → exp([θ]×) R_s`:
//! `∂F_vc/∂x = −k_vc I`, and since `R_m R_sᵀ → exp([φ]×) exp(−[θ]×)`,
//! `∂φ/∂θ = −J_r⁻¹(φ)` with the inverse right Jacobian of SO(3)
//!
//! ```text
//! J_r⁻¹(φ) = I + ½ [φ]× + (1/|φ|² − cot(|φ|/2) / (2|φ|)) [φ]×²,
//! ```
//!
//! so `∂τ_vc/∂θ = −k_vc,tor J_r⁻¹(φ)`. The small-angle form `−k_vc,tor I`
//! (the diagonal block their paper implies) differs by `O(|φ|)`: by
//! `k_vc,tor |φ|/2` at a relative rotation of `|φ|` rad.

use haptic_core::{skew, Matrix6, Vector6};
use nalgebra::{Isometry3, Matrix3, UnitQuaternion, Vector3};

/// Coupling stiffnesses of eqs 5–6.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VirtualCoupling {
    /// `k_vc` (N/m).
    pub translational_stiffness: f64,
    /// `k_vc,tor` (N·m/rad).
    pub rotational_stiffness: f64,
}

impl VirtualCoupling {
    /// `(F_vc, τ_vc)` on the tool (N, N·m), eqs 5–6.
    pub fn wrench(&self, manipulandum: &Isometry3<f64>, simulation: &Isometry3<f64>) -> Vector6 {
        let force = (manipulandum.translation.vector - simulation.translation.vector)
            * self.translational_stiffness;
        let torque = relative_rotation_vector(&manipulandum.rotation, &simulation.rotation)
            * self.rotational_stiffness;
        Vector6::new(force.x, force.y, force.z, torque.x, torque.y, torque.z)
    }

    /// `∂(F_vc, τ_vc)/∂(x_s, θ_s)`: `diag(−k_vc I, −k_vc,tor J_r⁻¹(φ))`.
    pub fn stiffness(&self, manipulandum: &Isometry3<f64>, simulation: &Isometry3<f64>) -> Matrix6 {
        let phi = relative_rotation_vector(&manipulandum.rotation, &simulation.rotation);
        let mut h = Matrix6::zeros();
        h.fixed_view_mut::<3, 3>(0, 0)
            .copy_from(&(Matrix3::identity() * -self.translational_stiffness));
        h.fixed_view_mut::<3, 3>(3, 3)
            .copy_from(&(right_jacobian_inverse(&phi) * -self.rotational_stiffness));
        h
    }
}

/// `φ = log(R_m R_sᵀ)`, angle in `[0, π]`. Computed with `atan2`, accurate
/// at small angles (where `2 acos(w)` loses half the digits).
pub(crate) fn relative_rotation_vector(
    manipulandum: &UnitQuaternion<f64>,
    simulation: &UnitQuaternion<f64>,
) -> Vector3<f64> {
    let q = manipulandum * simulation.inverse();
    let (w, v) = if q.w < 0.0 {
        (-q.w, -q.imag())
    } else {
        (q.w, q.imag())
    };
    let s = v.norm();
    if s == 0.0 {
        return Vector3::zeros();
    }
    v * (2.0 * s.atan2(w) / s)
}

/// `J_r⁻¹(φ)`: `log(exp([φ]×) exp([ε]×)) = φ + J_r⁻¹(φ) ε + O(ε²)`.
pub(crate) fn right_jacobian_inverse(phi: &Vector3<f64>) -> Matrix3<f64> {
    let angle = phi.norm();
    // The closed form cancels at small angles: its series there.
    let c = if angle < SERIES_BELOW {
        square_coefficient_series(angle)
    } else {
        square_coefficient(angle)
    };
    let k = skew(phi);
    Matrix3::identity() + k * 0.5 + k * k * c
}

/// Below this angle (rad) the series is exact to f64 and the closed form is not.
const SERIES_BELOW: f64 = 1e-2;

/// `1/φ² − cot(φ/2)/(2φ)`, the `[φ]×²` coefficient of `J_r⁻¹`.
fn square_coefficient(angle: f64) -> f64 {
    1.0 / (angle * angle) - 1.0 / (2.0 * angle * (0.5 * angle).tan())
}

/// Its Taylor series `1/12 + φ²/720 + φ⁴/30240 + O(φ⁶)`.
fn square_coefficient_series(angle: f64) -> f64 {
    let a2 = angle * angle;
    1.0 / 12.0 + a2 / 720.0 + a2 * a2 / 30240.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use haptic_testkit::jacobian_check::{compare, dynamic, pose_jacobian, Tolerance};
    use nalgebra::Translation3;
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    const RELATIVE: Tolerance = Tolerance::Relative {
        bound: 1e-8,
        floor: 0.0,
    };

    const COUPLING: VirtualCoupling = VirtualCoupling {
        translational_stiffness: 2000.0,
        rotational_stiffness: 3.0,
    };

    fn random_vector(rng: &mut Pcg64, scale: f64) -> Vector3<f64> {
        (Vector3::new(rng.gen(), rng.gen(), rng.gen()) * 2.0 - Vector3::repeat(1.0)) * scale
    }

    #[test]
    fn stiffness_is_the_derivative_of_the_coupling_wrench() {
        let mut rng = Pcg64::seed_from_u64(3);
        let mut worst = 0.0f64;
        for angle in [0.0, 1e-4, 0.01, 0.3, 1.0, 2.0, 3.0] {
            for _ in 0..20 {
                let simulation =
                    Isometry3::new(random_vector(&mut rng, 0.1), random_vector(&mut rng, 3.0));
                let phi = random_vector(&mut rng, 1.0).normalize() * angle;
                let manipulandum = Isometry3::from_parts(
                    Translation3::from(
                        simulation.translation.vector + random_vector(&mut rng, 0.01),
                    ),
                    UnitQuaternion::from_scaled_axis(phi) * simulation.rotation,
                );
                // Central differences in the tool's `q`, with the rotation
                // perturbed as the contact gradients are.
                let fd = pose_jacobian(&simulation, 1e-6, 1e-6, |at| {
                    Some(COUPLING.wrench(&manipulandum, at))
                })
                .unwrap();
                let analytic = COUPLING.stiffness(&manipulandum, &simulation);
                let comparison = compare(&dynamic(&analytic), &dynamic(&fd), (6, 6), RELATIVE);
                worst = worst.max(comparison.worst().error);
                let rotation =
                    relative_rotation_vector(&manipulandum.rotation, &simulation.rotation);
                assert!((rotation - phi).norm() < 1e-12, "{rotation} vs {phi}");
            }
        }
        println!("coupling stiffness vs finite differences: worst relative error {worst:.1e}");
        assert!(worst < RELATIVE.bound());
    }

    #[test]
    fn small_angle_stiffness_is_off_by_half_the_angle() {
        for angle in [0.01, 0.1, 0.5] {
            let phi = Vector3::new(1.0, 2.0, -2.0) / 3.0 * angle;
            // ‖[φ]×‖_F = √2 |φ|.
            let gap = (right_jacobian_inverse(&phi) - Matrix3::identity()).norm() / 2f64.sqrt();
            assert!((gap / (0.5 * angle) - 1.0).abs() < angle, "{angle}: {gap}");
        }
    }

    #[test]
    fn tiny_rotations_keep_their_digits() {
        let phi = Vector3::new(3e-10, -1e-10, 2e-10);
        let q = UnitQuaternion::from_scaled_axis(phi);
        let back = relative_rotation_vector(&q, &UnitQuaternion::identity());
        assert!((back - phi).norm() < 1e-14 * phi.norm());
    }

    #[test]
    fn the_series_and_the_closed_form_meet() {
        let (series, closed) = (
            square_coefficient_series(SERIES_BELOW),
            square_coefficient(SERIES_BELOW),
        );
        // The closed form's own rounding there is about ε/φ² ≈ 1e-12.
        assert!(
            (series - closed).abs() < 1e-10 * series,
            "{series} vs {closed}"
        );
    }
}
