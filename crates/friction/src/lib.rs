//! Static Coulomb friction for static virtual coupling by linear programming
//! (Zhao, Li & Barbič, seed 002 §4).
//!
//! A [`StaticFrictionProblem`] holds one servo cycle's data: the wrench `f`
//! on the simulation object (virtual coupling plus penalty normal forces,
//! eq 9), its stiffness `H = ∂f/∂q` (eqs 2–3 and the coupling), the mass
//! matrix `M̄ = diag(M, I)` and the contacts with their normal force and
//! friction coefficient. The object is in static friction exactly when the LP
//! of eqs 32–37 is feasible; a [`StaticFrictionSolver`] decides that and
//! returns the friction forces `β` and the displacement `Δq`.

mod fast;
mod pre_sliding;
mod pre_sliding_reference;
mod problem;
mod qp;
mod reference;
mod wolfe;

pub use fast::{FastSolveReport, FastSolverParameters, FastStaticFrictionSolver, MembershipStatus};
pub use pre_sliding::{FastPreSlidingSolver, PreSlidingParameters, PreSlidingReport, TIE_BREAK};
pub use pre_sliding_reference::{PreSlidingOutcome, ReferencePreSlidingSolver};
pub use problem::{
    FrictionContact, FrictionSolution, FrictionState, SolverError, StaticFrictionProblem,
    StaticFrictionSolver,
};
pub use qp::{QpOutcome, QpSolver};
pub use reference::{reduce, FullLpSolver, Reduction, ReferenceLpSolver};
