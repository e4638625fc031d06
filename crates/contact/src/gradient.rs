//! The 6×6 gradient `∂(F, τ)/∂(x, θ)` of penalty contact wrenches, for a
//! tool displaced by `x → x + δx`, `R → exp([δθ]×) R` (a small
//! rotation about the world axes, applied about the reference point).
//!
//! Per contact, with `a = ∂d/∂x` ([`PenaltyContact::distance_gradient`]) and
//! `F = −k d N`, the contact point moves relative to the field by
//! `±(δx − [r]× δθ)`, so in both roles `δd = aᵀ δx − aᵀ [r]× δθ` and
//!
//! ```text
//! ∂F/∂x = −k N aᵀ         (− k d ∂N/∂P  role A along the field's gradient)
//! ∂F/∂θ = −(∂F/∂x) [r]×  (+ k d [N]×   role A, eq 1: N = −R n rotates, δN = −[N]× δθ)
//! ∂τ/∂x = [r]× ∂F/∂x     (+ [F]×       role B: r = P − x with P fixed, δr = −δx)
//! ∂τ/∂θ = [r]× ∂F/∂θ     (+ [F]× [r]×  role A: r = R p rotates, δr = −[r]× δθ)
//! ```
//!
//! Along the environment field's gradient ([`ForceDirection::FieldGradient`])
//! `N` is a function of the contact point, which moves by `δx − [r]× δθ`,
//! so `∂N/∂P = (I − NNᵀ) ∇²φ / ‖∇φ‖` ([`PenaltyContact::normal_derivative`])
//! joins `∂F/∂x` and, through `−(∂F/∂x) [r]×`, `∂F/∂θ`.
//!
//! Zhao, Li & Barbič's eqs 2–3 ([`GradientModel::NormalDirection`]) take `a = N` and
//! keep `N` fixed. Its eq 3 puts `[F]×` in `∂τ/∂x`: that is role B's handle
//! term. With the point shell on the tool (role A) the handle
//! rotates instead, and the geometric term is `[F]× [r]×` in `∂τ/∂θ`; this
//! model uses each role's own handle term, so it equals the exact gradient
//! whenever `a = N` and the normals do not rotate.

use crate::penalty::{ForceDirection, PenaltyContact, Role};
use haptic_core::{skew, Matrix6};

use nalgebra::Matrix3;

pub use haptic_schema::rendering::GradientModel;

/// `∂(F, τ)/∂(x, θ)` of one contact's wrench.
pub fn contact_stiffness(contact: &PenaltyContact, model: GradientModel) -> Matrix6 {
    let (k, d, n) = (contact.stiffness, contact.distance, contact.normal);
    let a = match model {
        GradientModel::Exact => contact.distance_gradient,
        GradientModel::NormalDirection => n,
    };
    let r = skew(&contact.handle);
    let force = skew(&contact.force());
    let exact = model == GradientModel::Exact;
    let mut df_dx: Matrix3<f64> = n * a.transpose() * (-k);
    if exact && contact.direction == ForceDirection::FieldGradient {
        df_dx -= contact.normal_derivative * (k * d);
    }
    let mut df_dtheta = -df_dx * r;
    let mut dtau_dx = r * df_dx;
    let dtau_dtheta = match contact.role {
        Role::MovingShell => {
            if exact && contact.direction == ForceDirection::ShellNormal {
                df_dtheta += skew(&n) * (k * d);
            }
            r * df_dtheta + force * r
        }
        Role::MovingField => {
            dtau_dx += force;
            r * df_dtheta
        }
    };
    let mut h = Matrix6::zeros();
    h.fixed_view_mut::<3, 3>(0, 0).copy_from(&df_dx);
    h.fixed_view_mut::<3, 3>(0, 3).copy_from(&df_dtheta);
    h.fixed_view_mut::<3, 3>(3, 0).copy_from(&dtau_dx);
    h.fixed_view_mut::<3, 3>(3, 3).copy_from(&dtau_dtheta);
    h
}

/// `H_c = Σ_i ∂(F_i, τ_i)/∂(x, θ)`, the contact part of the stiffness in
/// eqs 7–8 (exact for a fixed contact set).
pub fn total_stiffness(contacts: &[PenaltyContact], model: GradientModel) -> Matrix6 {
    contacts.iter().map(|c| contact_stiffness(c, model)).sum()
}
