//! `[materials]` and `[rendering]`: the contact between the tool and the
//! scene and the rendering cycle's parameters, their defaults (which are
//! the renderer's), and the names of the cycle's choices: which contact
//! gradient it assembles, how friction enters it and which solver decides
//! static friction. `haptic-contact` and `haptic-render` re-export the
//! enums they use as they are, and take their defaults from here.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Coulomb `μ` of a material that gives none: Zhao et al. §5.4's value.
pub const DEFAULT_FRICTION_COEFFICIENT: f64 = 0.5;

/// Penalty stiffness `k_n` per shell point (N/m) of a material that gives
/// none, and the renderer's: for centimetre-sized objects at 1 kHz.
pub const DEFAULT_CONTACT_STIFFNESS_N_PER_M: f64 = 200.0;

/// Virtual coupling `k_vc` (N/m): within desk-top devices' stable range.
pub const DEFAULT_COUPLING_STIFFNESS_N_PER_M: f64 = 1000.0;

/// Virtual coupling `k_vc,tor` (N·m/rad).
pub const DEFAULT_COUPLING_TORSIONAL_STIFFNESS_N_M_PER_RAD: f64 = 1.0;

/// Static damping `α` (§4.2): the paper's value.
pub const DEFAULT_STATIC_DAMPING: f64 = 0.6;

/// `ℓ`, sides of the friction pyramid (eq 13, §5.1).
pub const DEFAULT_PYRAMID_SIDES: usize = 8;

/// Stiffness scaling `N0` (contacts; Xu et al. eq 77): at most 40 `k_n` in
/// total.
pub const DEFAULT_STIFFNESS_SCALING_CONTACTS: f64 = 40.0;

/// `ε`, the pre-sliding displacement static friction allows (m).
pub const DEFAULT_PRE_SLIDING_DISPLACEMENT_M: f64 = 5e-6;

/// The rendering stage's compute budget per servo tick (µs): a quarter of
/// the 1 kHz period, leaving the rest to the device, the safety layer and
/// wake-up jitter.
pub const DEFAULT_CYCLE_BUDGET_US: f64 = 250.0;

/// The part of the budget the collision stage may use before its point-tree
/// traversals stop at a coarser level; the friction solve has the rest.
pub const DEFAULT_COLLISION_BUDGET_SHARE: f64 = 0.5;

/// Along which direction a penalty contact pushes the tool in role A (the
/// tool's point shell in an environment field); role B always pushes along
/// the environment shell's normal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ForceDirection {
    /// The environment field's normalised gradient at the contact: the
    /// surface's normal, whatever the tool's tilt; its gradient carries the
    /// field's Hessian.
    #[default]
    FieldGradient,
    /// Zhao et al. eq 1: the tool's own shell normal, turned with it
    /// (`N = −R n`).
    ShellNormal,
}

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

/// Contact properties between the tool and a static object.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Material {
    /// Coulomb `μ ≥ 0` (dimensionless). Default 0.5, Zhao et al. §5.4's value.
    #[serde(default = "default_mu")]
    pub friction_coefficient: f64,
    /// Penalty stiffness `k_n` per shell point (N/m). Default 200 N/m, the
    /// renderer's default for centimetre-sized objects at 1 kHz. The
    /// renderer has one `k_n`: every material in contact must agree.
    #[serde(default = "default_contact_stiffness")]
    pub contact_stiffness_n_per_m: f64,
}

fn default_mu() -> f64 {
    DEFAULT_FRICTION_COEFFICIENT
}

fn default_contact_stiffness() -> f64 {
    DEFAULT_CONTACT_STIFFNESS_N_PER_M
}

impl Default for Material {
    fn default() -> Self {
        Self {
            friction_coefficient: default_mu(),
            contact_stiffness_n_per_m: default_contact_stiffness(),
        }
    }
}

/// Rendering parameters (Zhao et al. §3–§4.2). The defaults are
/// [`RenderParameters::default`]'s, which suit objects of a few
/// centimetres at 1 kHz.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Rendering {
    /// `k_vc` (N/m). Default 1,000 N/m, within desk-top devices' stable range.
    pub coupling_stiffness_n_per_m: f64,
    /// `k_vc,tor` (N·m/rad). Default 1 N·m/rad.
    pub coupling_torsional_stiffness_n_m_per_rad: f64,
    /// Static damping `α ∈ [0, 1)` (§4.2, dimensionless). Default 0.6, the
    /// paper's value.
    pub static_damping: f64,
    /// `ℓ ≥ 3`, sides of the friction pyramid (eq 13). Default 8 (§5.1).
    pub pyramid_sides: usize,
    /// Stiffness scaling `N0` (contacts; Xu et al. eq 77); `inf` disables
    /// it. Default 40, so at most 40 `k_n` in total.
    pub stiffness_scaling_contacts: f64,
    /// Drop separating contacts from friction (§4.1; with `pre_sliding`,
    /// contacts the frictionless step carries out of contact). Default on,
    /// against sticking to surfaces being left.
    pub anti_stickiness: bool,
    /// Default `exact`: the true gradient, stable at larger stiffness.
    pub gradient: GradientModel,
    /// Default `field_gradient`: in role A the penalty force acts along the
    /// environment field's gradient, normal to the surface however the
    /// tool is tilted; `shell_normal` is Zhao et al.'s eq 1, along the
    /// tool's turned shell normals (docs/rendering.md, "The force's
    /// direction").
    pub force_direction: ForceDirection,
    /// Default `pre_sliding`: static friction with bounded pre-sliding,
    /// which renders Coulomb's breakaway on real contact
    /// (docs/rendering.md). `static_lp` is Zhao et al.'s LP as stated,
    /// `yamane_springs` the baseline it improves on.
    pub friction: Friction,
    /// `ε` of `friction = "pre_sliding"` (m): the load-weighted RMS slip of
    /// the contacts from where they stuck that static friction allows.
    /// Default 5 µm.
    pub pre_sliding_displacement_m: f64,
    /// `k_f` per contact of `friction = "yamane_springs"` (N/m). Default
    /// 200 N/m, the default contact stiffness.
    pub friction_spring_stiffness_n_per_m: f64,
    /// Default `fast`: allocation-free, for the servo loop.
    pub solver: SolverChoice,
    /// The rendering stage's compute budget per tick (µs): past it, the
    /// collision stage answers from a coarser level of the point tree and
    /// the friction solver from its current equilibrium, each counted
    /// (docs/rendering.md, "The time budget"). Default 250 µs.
    pub cycle_budget_us: f64,
    /// The part of `cycle_budget_us` the collision stage may use, in
    /// (0, 1]. Default 0.5.
    pub collision_budget_share: f64,
}

impl Default for Rendering {
    fn default() -> Self {
        Self {
            coupling_stiffness_n_per_m: DEFAULT_COUPLING_STIFFNESS_N_PER_M,
            coupling_torsional_stiffness_n_m_per_rad:
                DEFAULT_COUPLING_TORSIONAL_STIFFNESS_N_M_PER_RAD,
            static_damping: DEFAULT_STATIC_DAMPING,
            pyramid_sides: DEFAULT_PYRAMID_SIDES,
            stiffness_scaling_contacts: DEFAULT_STIFFNESS_SCALING_CONTACTS,
            anti_stickiness: true,
            gradient: GradientModel::default(),
            force_direction: ForceDirection::default(),
            friction: Friction::PreSliding,
            pre_sliding_displacement_m: DEFAULT_PRE_SLIDING_DISPLACEMENT_M,
            friction_spring_stiffness_n_per_m: DEFAULT_CONTACT_STIFFNESS_N_PER_M,
            solver: SolverChoice::default(),
            cycle_budget_us: DEFAULT_CYCLE_BUDGET_US,
            collision_budget_share: DEFAULT_COLLISION_BUDGET_SHARE,
        }
    }
}
