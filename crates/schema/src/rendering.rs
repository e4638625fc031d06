//! The names of the rendering cycle's choices: which contact gradient it
//! assembles, how friction enters it and which solver decides static
//! friction. `haptic-contact` and `haptic-render` re-export the ones they
//! use as they are.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Which contact gradient to assemble.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = Gradient)]
pub enum GradientModel {
    /// The true field gradient and, in role A, the rotating normals
    /// (Xu, Zhao & Barbič §4.1).
    #[default]
    Exact,
    /// Zhao et al. eqs 2–3: `∂d/∂x ≈ N`, normals held fixed.
    NormalDirection,
}

/// How friction enters the cycle ([`FrictionModel`](haptic_render::FrictionModel)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Friction {
    PreSliding,
    StaticLp,
    YamaneSprings,
}

/// Which solver decides static friction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = Solver)]
pub enum SolverChoice {
    /// `FastPreSlidingSolver` or `FastStaticFrictionSolver`:
    /// allocation-free, microseconds.
    #[default]
    Fast,
    /// `ReferencePreSlidingSolver` or `ReferenceLpSolver` (clarabel):
    /// allocates, for cross-checks. Built with `haptic-render`'s feature
    /// `reference`; without it `RenderingCycle::new` fails with
    /// `RenderError::ReferenceNotBuilt`.
    Reference,
}
