//! The rigid world's joints as rows of the deformable solver, so that the
//! impulses the deformables exchange with a jointed body are solved with the
//! joint holding it (a wheel on a hinge turns instead of being pushed off
//! its axle). Their impulses stay in the solver: the rigid world's own
//! implicit step enforces its joints.

use super::anchor::RigidView;
use super::{RigidTerm, RowKind, RowSource, Rows};
use haptic_physics::ConstraintRow;
use nalgebra::Vector3;

/// One bilateral row per joint row, driven to zero velocity (the rigid
/// world corrects the joints' drift itself).
pub fn add_rows(rows: &mut Rows, joint_rows: &[ConstraintRow], rigid: &[RigidView]) {
    for (k, row) in joint_rows.iter().enumerate() {
        let mut terms: [RigidTerm; 2] = [rigid[row.a].term(
            row.a,
            Vector3::new(row.jacobian_a[0], row.jacobian_a[1], row.jacobian_a[2]),
            Vector3::new(row.jacobian_a[3], row.jacobian_a[4], row.jacobian_a[5]),
        ); 2];
        let mut count = 1;
        if let Some(b) = row.b {
            terms[1] = rigid[b].term(
                b,
                Vector3::new(row.jacobian_b[0], row.jacobian_b[1], row.jacobian_b[2]),
                Vector3::new(row.jacobian_b[3], row.jacobian_b[4], row.jacobian_b[5]),
            );
            count = 2;
        }
        rows.push(
            &[],
            &terms[..count],
            &[],
            0.0,
            f64::NEG_INFINITY,
            f64::INFINITY,
            RowKind::Bounded,
            RowSource::Joint { row: k as u32 },
        );
    }
}
