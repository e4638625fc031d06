//! Spatial vectors and small linear algebra shared by the rendering stages
//! (contact, friction, rendering, servo).
//!
//! Conventions: `q = (x, θ)` with the rotation perturbed as
//! `R → exp([θ]×) R`; a wrench `f = (F, τ)` and a displacement
//! `Δq = (Δx, Δθ)` are [`Vector6`]s, a stiffness `H = ∂f/∂q` or a mass
//! matrix `M̄ = diag(M, I)` a [`Matrix6`] (Zhao, Li & Barbič, static friction LP,
//! eqs 2–9, 27).

use nalgebra::{Isometry3, Matrix3, Translation3, UnitQuaternion, Vector3};

/// A wrench `(F, τ)` or a displacement `(Δx, Δθ)`.
pub type Vector6 = nalgebra::Vector6<f64>;
/// A 6×6 stiffness, mass or gradient over `q = (x, θ)`.
pub type Matrix6 = nalgebra::Matrix6<f64>;

/// `[v]×`, the cross-product matrix of eq 4.
pub fn skew(v: &Vector3<f64>) -> Matrix3<f64> {
    Matrix3::new(0.0, -v.z, v.y, v.z, 0.0, -v.x, -v.y, v.x, 0.0)
}

/// `q + Δq`: `x + Δx` and `exp([Δθ]×) R`, the displacement convention of the
/// gradients (eqs 7–8 and the update after them).
pub fn displaced(pose: &Isometry3<f64>, delta: &Vector6) -> Isometry3<f64> {
    let dx = Vector3::new(delta[0], delta[1], delta[2]);
    let dtheta = Vector3::new(delta[3], delta[4], delta[5]);
    Isometry3::from_parts(
        Translation3::from(pose.translation.vector + dx),
        UnitQuaternion::from_scaled_axis(dtheta) * pose.rotation,
    )
}

/// A force (N) and a torque (N·m): what a device renders, in its frame,
/// and what a recording keeps of it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Wrench {
    pub force: Vector3<f64>,
    pub torque: Vector3<f64>,
}

impl Wrench {
    pub const ZERO: Wrench = Wrench {
        force: Vector3::new(0.0, 0.0, 0.0),
        torque: Vector3::new(0.0, 0.0, 0.0),
    };

    /// Whether every component is finite.
    pub fn is_finite(&self) -> bool {
        self.force
            .iter()
            .chain(self.torque.iter())
            .all(|v| v.is_finite())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skew_is_the_cross_product() {
        let (a, b) = (Vector3::new(0.3, -1.2, 2.0), Vector3::new(-0.7, 0.4, 1.1));
        assert!((skew(&a) * b - a.cross(&b)).norm() < 1e-15);
    }
}
