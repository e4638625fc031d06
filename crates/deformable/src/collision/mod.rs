//! Collision detection for deformable surfaces against rigid bodies'
//! signed distance fields.

pub mod rigid;
