//! What the friction stage reports per contact, whichever friction model
//! decided it.

use nalgebra::Vector3;

/// What the friction stage reports for one contact of the cycle's
/// [`scene`](crate::RenderingCycle::scene), in the scene's contact order.
///
/// The force is the friction stage's own, before static damping: with the
/// pre-sliding model and the LP, the pyramid force `β_u T_u + β_v T_v` of
/// the solution's equilibrium (eqs 13, 30); zero where the LP slides (Zhao
/// et al. slide frictionless), for contacts §4.1 dropped, and when the
/// solve failed. With Yamane's springs, the spring force.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactFriction {
    /// Friction force on the tool at the contact, world frame (N).
    pub force: Vector3<f64>,
    /// The contact sticks: the cycle is static and the contact is in the
    /// friction problem, or, with Yamane's springs, its spring was not
    /// clamped to the cone.
    pub stuck: bool,
}
