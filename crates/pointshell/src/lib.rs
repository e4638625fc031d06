//! Point shells and nested point trees (Barbič & James 2008), the
//! collision-detection side of Zhao, Li & Barbič's 6-DoF haptic rendering:
//! surface samples of the tool tested against the other object's
//! signed distance field.
//!
//! - [`sample_point_shell`]: Poisson-disk surface samples with outward normals.
//! - [`NestedPointTree`]: nested levels of those samples with bounding spheres,
//!   in flat arrays that a file format can store.
//! - [`PointTreeTraversal`]: the allocation-free, budgeted contact query.
//!
//! Test meshes come from `haptic_mesh::shapes`.

mod grid;
mod sampling;
pub mod shapes;
mod traversal;
mod tree;

pub use sampling::{sample_point_shell, spacing_for_count, PointShell, POISSON_DISK_DENSITY};
pub use traversal::{
    contacts_brute_force, Contact, LookupDeadline, NodeBounds, PointTreeTraversal, TraversalBudget,
    TraversalStats, ALWAYS_AFFORDED_LOOKUPS,
};
pub use tree::{NestedPointTree, TreeError};
