//! Test fixtures shared by the workspace's tests and benchmarks, kept out of
//! the production crates: random static-friction instances, analytic
//! distance fields, contact scenes, the finite-difference checker of
//! contact gradients and a reader of simulation recordings.

pub mod fields;
pub mod gradient_check;
pub mod instances;
pub mod scenes;
pub mod simulation;
