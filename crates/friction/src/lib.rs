//! Static Coulomb friction for static virtual coupling by linear programming
//! (Zhao, Li & Barbič, "6-DoF Haptic Rendering of Static Coulomb Friction Using
//! Linear Programming", §4).
//!
//! A [`StaticFrictionProblem`] holds one servo cycle's data: the wrench `f`
//! on the tool (virtual coupling plus penalty normal forces,
//! eq 9), its stiffness `H = ∂f/∂q` (eqs 2–3 and the coupling), the mass
//! matrix `M̄ = diag(M, I)` and the contacts with their normal force and
//! friction coefficient. The object is in static friction exactly when the LP
//! of eqs 32–37 is feasible; a [`StaticFrictionSolver`] decides that and
//! returns the friction forces `β` and the displacement `Δq`.
//!
//! The reference solvers (clarabel, good_lp: `ReferenceLpSolver`, the QP,
//! `ReferencePreSlidingSolver`) are built with the feature `reference`;
//! [`reference_lp_solver`] and [`reference_pre_sliding_solver`] build them
//! where it is on and say so where it is off.

mod fast;
mod pre_sliding;
#[cfg(feature = "reference")]
mod pre_sliding_reference;
mod problem;
#[cfg(feature = "reference")]
mod qp;
#[cfg(feature = "reference")]
mod reference;
mod wolfe;

pub use fast::{FastSolveReport, FastSolverParameters, FastStaticFrictionSolver, MembershipStatus};
pub use pre_sliding::{FastPreSlidingSolver, PreSlidingParameters, PreSlidingReport};
#[cfg(feature = "reference")]
pub use pre_sliding_reference::{PreSlidingOutcome, ReferencePreSlidingSolver};
pub use problem::{
    FrictionContact, FrictionSolution, FrictionState, SolverError, StaticFrictionProblem,
    StaticFrictionSolver,
};
#[cfg(feature = "reference")]
pub use qp::{QpOutcome, QpSolver};
#[cfg(feature = "reference")]
pub use reference::{reduce, FullLpSolver, Reduction, ReferenceLpSolver};
pub use wolfe::ITERATIONS_PAST_DEADLINE;

/// The reference solvers were not compiled in (feature `reference`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the reference solvers are not built in; rebuild hapticd with `--features reference`")]
pub struct ReferenceNotBuilt;

/// A boxed `ReferenceLpSolver`, if this build has the reference solvers.
pub fn reference_lp_solver() -> Result<Box<dyn StaticFrictionSolver + Send>, ReferenceNotBuilt> {
    #[cfg(feature = "reference")]
    return Ok(Box::new(ReferenceLpSolver::default()));
    #[cfg(not(feature = "reference"))]
    Err(ReferenceNotBuilt)
}

/// A boxed `ReferencePreSlidingSolver` with `parameters`, if this build has
/// the reference solvers.
pub fn reference_pre_sliding_solver(
    parameters: PreSlidingParameters,
) -> Result<Box<dyn StaticFrictionSolver + Send>, ReferenceNotBuilt> {
    #[cfg(feature = "reference")]
    return Ok(Box::new(ReferencePreSlidingSolver::new(parameters)));
    #[cfg(not(feature = "reference"))]
    {
        let _ = parameters;
        Err(ReferenceNotBuilt)
    }
}
