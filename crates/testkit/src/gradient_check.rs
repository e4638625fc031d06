//! The one checker of contact gradients against central finite differences,
//! shared by the contact and rendering tests and the acceptance tests on
//! real meshes.

use haptic_contact::{total_wrench, ContactScene};
use haptic_core::{displaced, Matrix6, Vector6};

use haptic_pointshell::TraversalBudget;
use nalgebra::Isometry3;

/// The four 3×3 blocks of a contact stiffness: name, first row, first column.
pub const BLOCKS: [(&str, usize, usize); 4] = [
    ("dF/dx", 0, 0),
    ("dF/dθ", 0, 3),
    ("dτ/dx", 3, 0),
    ("dτ/dθ", 3, 3),
];

/// `‖A_b − B_b‖_F / ‖B_b‖_F` for each block `b` of [`BLOCKS`].
pub fn block_errors(a: &Matrix6, b: &Matrix6) -> [f64; 4] {
    BLOCKS.map(|(_, r, c)| {
        let (ba, bb) = (
            a.fixed_view::<3, 3>(r, c).into_owned(),
            b.fixed_view::<3, 3>(r, c).into_owned(),
        );
        (ba - bb).norm() / bb.norm()
    })
}

/// Central differences of the summed contact wrench at `pose` (steps `h_x` m
/// along x and `h_theta` rad about each axis), or `None` when `signature` of
/// the scene changes inside the stencil: the analytic gradient holds for a
/// fixed contact set, and `signature` says what must stay fixed (which
/// contacts, and perhaps which voxel each lies in). The scene is left
/// evaluated at `pose`.
pub fn finite_difference_stiffness<S: PartialEq>(
    scene: &mut ContactScene,
    pose: &Isometry3<f64>,
    h_x: f64,
    h_theta: f64,
    signature: impl Fn(&ContactScene) -> S,
) -> Option<Matrix6> {
    let budget = TraversalBudget::default();
    scene.evaluate(pose, budget);
    let reference = signature(scene);
    let mut fd = Matrix6::zeros();
    for k in 0..6 {
        let h = if k < 3 { h_x } else { h_theta };
        let mut wrench = |sign: f64| {
            let mut step = Vector6::zeros();
            step[k] = sign * h;
            scene.evaluate(&displaced(pose, &step), budget);
            (signature(scene) == reference).then(|| total_wrench(scene.contacts()))
        };
        let column = wrench(1.0)
            .zip(wrench(-1.0))
            .map(|(p, m)| (p - m) / (2.0 * h));
        fd.set_column(k, &column?);
    }
    scene.evaluate(pose, budget);
    Some(fd)
}
