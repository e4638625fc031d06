//! Generated point shells: known geometry for tests, the built-in scenarios
//! and scene configurations.

use crate::PointShell;
use nalgebra::{Point3, Vector3};

/// A `side × side` grid of points spaced `spacing` in the plane `z = 0`,
/// normals `+z`, centred on the origin: a floor's point shell.
pub fn floor_shell(side: usize, spacing: f64) -> PointShell {
    let half = 0.5 * (side as f64 - 1.0) * spacing;
    let mut shell = PointShell::default();
    for i in 0..side {
        for j in 0..side {
            shell.points.push(Point3::new(
                i as f64 * spacing - half,
                j as f64 * spacing - half,
                0.0,
            ));
            shell.outward_normals.push(Vector3::z());
        }
    }
    shell
}
