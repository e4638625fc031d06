//! Test fixtures shared by the workspace's tests and benchmarks, kept out of
//! the production crates: random static-friction instances, analytic
//! distance fields, contact scenes, the one checker of derivatives
//! against central finite differences and a reader of simulation recordings.

pub mod fields;
pub mod instances;
pub mod jacobian_check;
pub mod scenes;
pub mod simulation;
