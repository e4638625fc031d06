//! Collision detection for deformable surfaces against rigid bodies'
//! signed distance fields, and against each other and themselves.

pub mod deformable;
pub mod rigid;
