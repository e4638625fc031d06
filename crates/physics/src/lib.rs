//! The physics thread's rigid world: bodies with mass properties from closed
//! meshes, penalty contact between every colliding pair in both roles with
//! exact gradients (Xu, Zhao & Barbič §4), semi-implicit integration of the
//! global block-sparse system per contact island (eqs 5, 15–18), joints in
//! maximal coordinates with Baumgarte stabilisation and an SVD
//! pseudo-inverse Schur complement (§5, eqs 52–66), and Drumwright's PID
//! penalty resting contact as a selectable model.
//!
//! # A step's stages and where they live
//!
//! [`World::step`] splits the step into substeps and runs each one's stages
//! in order:
//!
//! | Stage | Module |
//! |---|---|
//! | Substep planning and undo | [`substeps`], [`world`] |
//! | Broad phase: pairs of overlapping bounds | [`broad_phase`] |
//! | Narrow phase: shell points in fields, [`PairContact`]s | [`narrow_phase`] |
//! | Stiffness scaling per pair (eq 77) | [`stiffness`] |
//! | Penalty and damping force laws, their gradients | [`penalty`] |
//! | Friction anchors (sticking springs, sliding) | [`friction_anchors`] |
//! | PID penalty contact, the other contact model | [`pid`] |
//! | Joints: kinds, constraint rows, PD servo | [`joints`] |
//! | Wrenches and gradient blocks the forces hand on | [`forces`] |
//! | Force evaluation and islands, with the step's buffers | [`pipeline`], [`island`] |
//! | One island's solve (eqs 15–18, 62–64) | [`solver`] |
//! | Integrators: semi-implicit and symplectic Euler, RK4 | [`integrators`] |
//! | Joint post-stabilisation | [`post_stabilisation`] |
//!
//! Bodies and their mass properties and geometry are in [`body`], the
//! world's parameters in [`parameters`], a step's report in [`report`].
//!
//! # Model, state and scratch
//!
//! As MuJoCo keeps `mjModel` apart from `mjData` and rapier its sets apart
//! from its pipeline, a body is a [`RigidBodyModel`] (what it is: mass,
//! inertia, geometry, friction) and a [`RigidBodyState`] (where it is and
//! how it moves). The [`World`] holds the model (bodies' models, joints,
//! parameters), the state (bodies' states, the friction anchors, the PID
//! pairs: what undoing a substep restores, copied into buffers sized once)
//! and the [`pipeline::Pipeline`]: the buffers and caches of the stages,
//! which are neither, sized by the largest step so far. After warm-up a
//! step allocates nothing.
//!
//! Deformable bodies are not in this crate: `haptic-deformable`'s
//! `CoupledWorld` owns a [`World`] and reaches it only through
//! [`World::step`]'s external impulses, its bodies' states and its joints'
//! rows.
//!
//! A new kind of constraint is a [`joints::JointKind`] with its rows in
//! `joints::rows`; a new contact model a module beside [`penalty`] and
//! [`pid`], selected by [`ContactModel`] in `World::substep`; a new
//! integrator a module in [`integrators`], selected by [`Integrator`].

pub mod body;
pub mod broad_phase;
pub mod forces;
pub mod friction_anchors;
pub mod integrators;
pub mod island;
pub mod joints;
pub mod narrow_phase;
pub mod parameters;
pub mod penalty;
pub mod pid;
pub mod pipeline;
pub mod post_stabilisation;
pub mod report;
pub mod solver;
pub mod stiffness;
pub mod substeps;
pub mod world;

pub use body::{
    centred, mass_properties, BodyGeometry, GeometryResolution, MassError, MassProperties, Motion,
    RigidBody, RigidBodyModel, RigidBodyState,
};
pub use forces::{ConstraintRow, Forces, GradientBlock, PairBlocks};
pub use narrow_phase::PairContact;
pub use parameters::{ContactModel, Integrator, WorldParameters};
pub use penalty::{ContactParameters, DampingMode};
pub use report::StepReport;
pub use world::{BodyLinearisation, World, WorldError};

/// A parameter out of its range: the world's ([`WorldParameters::check`]) or
/// the PID model's ([`pid::PidParameters::check`]), named as in its struct.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("physics parameter `{field}` = {value}: must be {requirement}")]
pub struct ParameterError {
    pub field: &'static str,
    pub value: f64,
    pub requirement: &'static str,
}
