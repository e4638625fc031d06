//! The prismatic PD servo's forces and their exact gradients (eq 65).

use super::side::{sides, six};
use super::{Joint, JointKind};
use crate::body::RigidBody;
use crate::forces::Forces;
use haptic_core::{skew, Matrix6};
use nalgebra::{Matrix3, Vector3};

/// The 6×6 block `[[A, B], [C, D]]`.
fn blocks(a: &Matrix3<f64>, b: &Matrix3<f64>, c: &Matrix3<f64>, d: &Matrix3<f64>) -> Matrix6 {
    let mut m = Matrix6::zeros();
    m.fixed_view_mut::<3, 3>(0, 0).copy_from(a);
    m.fixed_view_mut::<3, 3>(0, 3).copy_from(b);
    m.fixed_view_mut::<3, 3>(3, 0).copy_from(c);
    m.fixed_view_mut::<3, 3>(3, 3).copy_from(d);
    m
}

impl Joint {
    /// Adds the PD servo's wrenches (eq 65, see [`PdController`]) and their
    /// exact gradients for the implicit integrator. With `a = R_a axis_a`,
    /// `d = p_b − x_a`, `u = v_b + ω_b×r_b − v_a`, `f = k_p (d·a − L) + k_d u·a`
    /// and `F = f a`:
    /// `∂F/∂x_a = −k_p aaᵀ`, `∂F/∂θ_a = a (k_p a×d + k_d a×u)ᵀ − f [a]×`,
    /// `∂F/∂x_b = k_p aaᵀ`, `∂F/∂θ_b = a (k_p (r_b×a)ᵀ − k_d aᵀ[ω_b]×[r_b]×)`,
    /// `∂F/∂v_a = −k_d aaᵀ`, `∂F/∂v_b = k_d aaᵀ`, `∂F/∂ω_b = k_d a (r_b×a)ᵀ`;
    /// body `b` takes `−F` and `τ_b = −r_b × F`, whose `θ_b` gradient gains
    /// `−[F]×[r_b]×`. Nothing happens without a controller.
    pub fn add_control_forces(&self, bodies: &[RigidBody], forces: &mut Forces) {
        let (
            Some(pd),
            JointKind::Prismatic {
                axis_a, anchor_b, ..
            },
        ) = (&self.controller, &self.kind)
        else {
            return;
        };
        let (sa, sb) = sides(self.a, self.b, bodies);
        let a = sa.rotation * axis_a.as_ref();
        let rb = sb.rotation * anchor_b.coords;
        let d = sb.x + rb - sa.x;
        let u = sb.v + sb.w.cross(&rb) - sa.v;
        let f = pd.stiffness * (d.dot(&a) - pd.target) + pd.damping * u.dot(&a);
        let force = f * a;
        forces.add_wrench(self.a, &six(&force, &Vector3::zeros()));

        let aat = a * a.transpose();
        let zero = Matrix3::zeros();
        // ∂F/∂(x, θ) and ∂F/∂(v, ω) with respect to a and b.
        let dx_a = -pd.stiffness * aat;
        let dtheta_a =
            a * (pd.stiffness * a.cross(&d) + pd.damping * a.cross(&u)).transpose() - f * skew(&a);
        let dx_b = pd.stiffness * aat;
        let dtheta_b = a
            * (pd.stiffness * rb.cross(&a).transpose()
                - pd.damping * a.transpose() * skew(&sb.w) * skew(&rb));
        let dv_a = -pd.damping * aat;
        let dv_b = pd.damping * aat;
        let dw_b = pd.damping * a * rb.cross(&a).transpose();
        forces.add_gradient(
            self.a,
            self.a,
            blocks(&dx_a, &dtheta_a, &zero, &zero),
            blocks(&dv_a, &zero, &zero, &zero),
        );
        let Some(b) = self.b else {
            return;
        };
        forces.add_gradient(
            self.a,
            b,
            blocks(&dx_b, &dtheta_b, &zero, &zero),
            blocks(&dv_b, &dw_b, &zero, &zero),
        );
        // On b: −F and τ_b = −[r_b]× F.
        let arm = -skew(&rb);
        forces.add_wrench(b, &six(&-force, &(arm * force)));
        forces.add_gradient(
            b,
            self.a,
            blocks(&-dx_a, &-dtheta_a, &(arm * dx_a), &(arm * dtheta_a)),
            blocks(&-dv_a, &zero, &(arm * dv_a), &zero),
        );
        forces.add_gradient(
            b,
            b,
            blocks(
                &-dx_b,
                &-dtheta_b,
                &(arm * dx_b),
                &(arm * dtheta_b - skew(&force) * skew(&rb)),
            ),
            blocks(&-dv_b, &-dw_b, &(arm * dv_b), &(arm * dw_b)),
        );
    }
}
