//! The public vocabulary of `hapticd`, apart from the engine: the config
//! file's schema and the closed sets of names that the engine, the config,
//! the control API and the stream share. Each type here is plain data with
//! its serde and OpenAPI form; the engine crates that own a concept use and
//! re-export its one definition, and crates that only speak the vocabulary
//! (the control API) depend on this crate alone.

pub mod patch;
pub mod physics;
pub mod rendering;
mod vocabulary;

pub use vocabulary::{
    FrictionState, FrictionVerdict, ObjectRole, OrNotRendered, SafetyState, TripCause, NOT_RENDERED,
};
