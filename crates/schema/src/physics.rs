//! The names of the physics world's closed sets: how it steps, which
//! contact model holds bodies at rest, what contact damping acts on, and
//! which points carry the PID penalty model's forces. `haptic-physics`
//! re-exports each where it uses it.

use serde::{Deserialize, Serialize};

/// How the world advances a step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Integrator {
    /// Xu, Zhao & Barbič's semi-implicit backward Euler with the exact
    /// contact gradients (eqs 5, 15–18).
    #[default]
    SemiImplicit,
    /// Forces explicit, velocities first: `v += h M⁻¹ F`, then the pose.
    SymplecticEuler,
    /// Classical fourth-order Runge–Kutta on `(x, R, v, L)`, forces
    /// (contacts included) evaluated at each stage; friction anchors are
    /// stepped once per step.
    Rk4,
}

/// The resting-contact model between bodies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ContactModel {
    /// Penalty springs with exact gradients, damping and anchor friction
    /// (Xu, Zhao & Barbič §4).
    #[default]
    ImplicitPenalty,
    /// Drumwright's PID penalty with impulses at impact.
    PidPenalty,
}

/// What contact damping acts on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DampingMode {
    /// The rate of penetration `ḋ`, along the field's gradient: sliding is
    /// left to Coulomb friction.
    #[default]
    Normal,
    /// The whole relative velocity, as Xu, Zhao & Barbič §4.2 (adds viscous
    /// drag to sliding).
    Full,
}

/// Which of a pair's penetrating points carry the restoring forces of
/// Drumwright's PID penalty model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PidPoints {
    /// Every point on the bottom of the volume of penetration (§III-A),
    /// the deepest point alone when none is (a shell deeper than the
    /// field's medial surface, where the gradient turns).
    #[default]
    BottomOfVolume,
    /// The deepest point alone: the traditional penalty method the paper
    /// compares against (§I, Fig. 1; §IV).
    Deepest,
}
