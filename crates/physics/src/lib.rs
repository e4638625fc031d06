//! The physics thread's rigid world: bodies with mass properties from closed
//! meshes, penalty contact between every colliding pair in both roles with
//! exact gradients (Xu, Zhao & Barbič §4), semi-implicit integration of the
//! global block-sparse system per contact island (eqs 5, 15–18), joints in
//! maximal coordinates with Baumgarte stabilisation and an SVD
//! pseudo-inverse Schur complement (§5, eqs 52–66), and Drumwright's PID
//! penalty resting contact as a selectable model.

pub mod body;
pub mod contact;
pub mod forces;
pub mod island;
pub mod joints;
pub mod pid;
pub mod system;
pub mod world;

pub use body::{
    centred, mass_properties, BodyGeometry, GeometryResolution, MassError, MassProperties, Motion,
    RigidBody,
};
pub use contact::{ContactParameters, DampingMode, PairContact};
pub use forces::{ConstraintRow, Forces, GradientBlock, PairBlocks};
pub use world::{ContactModel, Integrator, StepReport, World, WorldError, WorldParameters};

/// A parameter out of its range: the world's ([`WorldParameters::check`]) or
/// the PID model's ([`pid::PidParameters::check`]), named as in its struct.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("physics parameter `{field}` = {value}: must be {requirement}")]
pub struct ParameterError {
    pub field: &'static str,
    pub value: f64,
    pub requirement: &'static str,
}
