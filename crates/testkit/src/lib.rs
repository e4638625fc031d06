//! Test fixtures shared by the workspace's tests and benchmarks, kept out of
//! the production crates: random static-friction instances, analytic
//! distance fields, contact scenes, the one checker of derivatives
//! against central finite differences, a reader of simulation recordings
//! and the loader of the simulated vendor libraries the device backends'
//! tests and examples share ([`vendor_library`]).

pub mod fields;
pub mod instances;
pub mod jacobian_check;
pub mod scenes;
pub mod simulation;
pub mod vendor_library;
