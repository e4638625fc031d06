//! One servo cycle of 6-DoF haptic rendering with static Coulomb friction
//! (Zhao, Li & Barbič, static friction LP, §3–§4.2), the Yamane friction-spring
//! baseline of its §5.6 (scripted scenarios to measure both are in
//! `haptic-scenarios`).
//!
//! [`RenderingCycle::step`] reads top to bottom: penalty contacts at the
//! tool's pose → `f`, `H`, `M̄` (eqs 2–9, 27) → §4.1 drops
//! separating contacts → the LP of eqs 32–37 (static) or the frictionless
//! equilibrium `Δq₀ = −H⁻¹f` (sliding) → §4.2 static damping `(1 − α)Δq`
//! in cycles with contacts → the pose update → the coupling wrench on the
//! manipulandum, which the device renders.
//!
//! A [`RenderingUpdate`], built off the servo thread, retunes a running
//! cycle at a tick boundary ([`RenderingCycle::apply`]) without allocating.
//!
//! Conventions (those of `haptic-contact`): world frame, SI units;
//! `q = (x, θ)` with rotations applied as `R → exp([Δθ]×) R` about the
//! tool's frame origin; wrenches act on the tool,
//! torques about that origin; `N` is the contact force's direction on the
//! tool, out of the environment; the coupling wrench reported
//! is the one on the manipulandum, `−(F_vc, τ_vc)` (eqs 5–6).

mod anchors;
mod contact_friction;
mod cycle;
mod static_problem;
mod yamane;

pub use contact_friction::ContactFriction;
pub use cycle::{
    BudgetCut, CycleBudget, CycleLayout, CycleReport, FrictionModel, FrictionVerdict, RenderError,
    RenderParameters, RenderingCycle, RenderingUpdate, SolverChoice, StageTimings,
};
pub use static_problem::{MassProperties, StaticCoupling};
