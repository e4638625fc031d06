//! Deformable bodies coupled two-way with the rigid world through one
//! velocity-level projected Gauss–Seidel constraint solver (Vezzano,
//! Zerbato & Fiorini, *Interactive constrained dynamics for rigid and
//! deformable objects*, 2015).
//!
//! # A step's stages and where they live
//!
//! [`CoupledWorld::step`] runs, in order:
//!
//! | Stage | Module |
//! |---|---|
//! | Free node velocities from each body's paradigm (eqs 1–3) | [`paradigms`] |
//! | Surface samples against rigid fields and deformable triangles | [`collision`] |
//! | Rows: anchors, inextensibility, bending, contact and friction, rigid joints (§4.1–4.5) | [`constraints`] |
//! | Warm start (§4.6) | [`warm_start`] |
//! | PGS sweeps (Algorithm 1) | [`solver`] |
//! | The equality rows solved directly between sweeps | [`direct`] |
//! | Symplectic Euler for nodes (eq 38), impulses into the rigid step | [`world`] |
//! | Position projection of over-long edges | [`post_stabilisation`] |
//!
//! Bodies (model and state apart, as the rigid bodies) are in [`body`];
//! generated sheets and strips, edges, hinges and collision samples in
//! [`topology`]; the solver's parameters in [`parameters`].
//!
//! A new paradigm is a module in [`paradigms`] and a variant of
//! [`Paradigm`]; a new kind of constraint a module in [`constraints`]
//! making [`constraints::Row`]s with a [`constraints::RowSource`].

// `!(x > 0.0)` is how a check refuses NaN along with the out-of-range, and
// numeric kernels index several arrays by one node or element index.
#![allow(clippy::neg_cmp_op_on_partial_ord, clippy::needless_range_loop)]

pub mod body;
pub mod collision;
pub mod constraints;
pub mod direct;
pub mod error;
pub mod paradigms;
pub mod parameters;
pub mod post_stabilisation;
pub mod scenes;
pub mod solver;
pub mod topology;
pub mod warm_start;
pub mod world;

pub use body::{
    DeformableBody, DeformableError, DeformableMaterial, DeformableModel, DeformableState,
};
pub use constraints::anchor::{Anchor, AnchorTarget};
pub use paradigms::{CorotationalFem, ForceIntegration, MassSpring, Paradigm, ShapeMatching, Xpbd};
pub use parameters::{EqualitySolver, FrictionBound, SolverParameters, TangentBasis};
pub use world::{CoupledStepReport, CoupledWorld, CoupledWorldError};
