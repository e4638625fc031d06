//! Penalty contact between point shells and signed distance fields, its
//! exact 6×6 gradient, and static virtual coupling (Zhao, Li & Barbič,
//! static friction LP, §3; Xu, Zhao & Barbič, implicit penalty contact, §4.1).
//!
//! One moving rigid object, the *tool* at pose `(x, R)` (its
//! frame's origin is the reference point), touches static environment
//! objects in two roles ([`Role`]): its point shell in their fields (A), or
//! their point shells in its field (B). Per cycle:
//!
//! 1. [`ContactScene::evaluate`] queries every (environment object, role)
//!    pair through its nested point tree and makes the penalty contacts
//!    `F = −k d N`, `τ = r × F` (eq 1), their stiffness scaled by
//!    [`StiffnessScaling`] (Xu et al. eq 77). No allocation.
//! 2. [`total_wrench`] and [`total_stiffness`] sum the wrench and its exact
//!    gradient `∂(F, τ)/∂(x, θ)` ([`GradientModel::Exact`]) or Zhao et al.'s
//!    eqs 2–3 ([`GradientModel::NormalDirection`]).
//! 3. [`VirtualCoupling`] gives the coupling's wrench and stiffness
//!    (eqs 5–6). `haptic-render` adds them to the contacts' in the friction
//!    stage's problem, whose frictionless step `Δq = −H⁻¹ f` (eqs 7–8
//!    without friction) [`haptic_core::displaced`] applies.
//!
//! Conventions: world frame throughout; `q = (x, θ)` with the rotation
//! perturbed as `R → exp([θ]×) R`; wrenches act on the tool,
//! torques about `x`; `H = ∂f/∂q`, not symmetric in general (the `gradient` module);
//! distances negative inside; `N` is the direction of the contact force on
//! the tool, out of the environment (the `penalty` module has the table).

mod coupling;
mod gradient;
mod penalty;
mod scene;
mod stiffness_scaling;

pub use coupling::VirtualCoupling;
pub use gradient::{contact_stiffness, total_stiffness, GradientModel};
pub use penalty::{total_wrench, ForceDirection, PenaltyContact, Role, MIN_GRADIENT_NORM};
pub use scene::{
    check_friction_coefficient, ContactScene, CycleStats, EnvironmentGeometry, EnvironmentObject,
    PenaltyParameters, SceneError, SharedField, ShellTree, ToolGeometry,
};
pub use stiffness_scaling::StiffnessScaling;
