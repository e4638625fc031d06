//! What the SDK does not report about a model: its nominal continuous
//! force and torque and its workspace, from Force Dimension's and Novint's
//! data sheets, by `dhdGetSystemType` code (`dhdc.h`'s `DHD_DEVICE_*`).

use nalgebra::Vector3;

/// A model's nominal figures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Nominal {
    /// Continuous translational force (N).
    pub force: f64,
    /// Continuous torque of an actuated wrist (N·m); 0 without one.
    pub torque: f64,
    /// Half-extents of the translational workspace (m): a cylinder's
    /// radius twice, then half its height.
    pub half_extents: Vector3<f64>,
}

/// The nominal figures of system type `system_type`, when known.
pub fn nominal(system_type: i32) -> Option<Nominal> {
    let (force, torque, diameter_mm, height_mm) = match system_type {
        // omega.3, omega.6 and omega.7, right and left: Ø 160 × 110 mm, 12 N.
        33..=37 => (12.0, 0.0, 160.0, 110.0),
        // Novint Falcon: a 4 in (101.6 mm) cube, 2 lbf (8.9 N).
        60 => (8.9, 0.0, 101.6, 101.6),
        // delta.3: Ø 400 × 260 mm, 20 N.
        63 => (20.0, 0.0, 400.0, 260.0),
        // delta.6: the delta.3's base with an actuated wrist, 0.15 N·m.
        64 => (20.0, 0.15, 400.0, 260.0),
        // sigma.7, right and left: Ø 190 × 130 mm, 20 N, 0.4 N·m.
        104 | 105 => (20.0, 0.4, 190.0, 130.0),
        _ => return None,
    };
    let r = diameter_mm / 2000.0;
    Some(Nominal {
        force,
        torque,
        half_extents: Vector3::new(r, r, height_mm / 2000.0),
    })
}
