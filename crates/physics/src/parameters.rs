//! The world's parameters: gravity, the integrator, the contact model and
//! its parameters, substepping and the joints' stabilisation.

use crate::penalty::ContactParameters;
use crate::pid::PidParameters;
use crate::ParameterError;
use nalgebra::Vector3;

pub use haptic_schema::physics::{ContactModel, Integrator};

/// The world's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorldParameters {
    /// m/s².
    pub gravity: Vector3<f64>,
    pub integrator: Integrator,
    pub contact_model: ContactModel,
    pub contact: ContactParameters,
    pub pid: PidParameters,
    /// The farthest any body's point may travel in one step (m); longer
    /// steps are split (see [`World::step`](crate::World::step)). 0 never splits.
    pub max_travel: f64,
    /// Baumgarte `α` (1/s), `β = α²/4`: critically damped (eq 56). About
    /// `1/h` holds joints tightest (the drift left falls as `h/α²`); `αh`
    /// beyond about 1.9 is unstable. The default suits the physics thread's
    /// default 200 Hz.
    pub baumgarte_alpha: f64,
    /// After each substep, moves the jointed bodies back onto their joints
    /// ([`constraint_correction`](crate::post_stabilisation::constraint_correction), beyond the paper). Without it Baumgarte
    /// alone holds them, as the paper does, and a fast-turning linkage
    /// drifts by some 1e-5 of a link.
    pub joint_post_stabilisation: bool,
}

impl Default for WorldParameters {
    fn default() -> Self {
        Self {
            gravity: Vector3::new(0.0, 0.0, -9.81),
            integrator: Integrator::default(),
            contact_model: ContactModel::default(),
            contact: ContactParameters::default(),
            pid: PidParameters::default(),
            max_travel: 1e-3,
            baumgarte_alpha: 200.0,
            joint_post_stabilisation: true,
        }
    }
}

impl WorldParameters {
    /// Checks every value is finite and in range (the PID gains have their
    /// own [`PidParameters::check`]).
    pub fn check(&self) -> Result<(), ParameterError> {
        const POSITIVE: &str = "finite and positive";
        const NON_NEGATIVE: &str = "finite and ≥ 0";
        let positive = |v: f64| v.is_finite() && v > 0.0;
        let non_negative = |v: f64| v.is_finite() && v >= 0.0;
        type Field = (&'static str, f64, bool, &'static str);
        let c = &self.contact;
        let gravity = self.gravity.iter().copied().find(|g| !g.is_finite());
        let fields: [Field; 8] = [
            (
                "gravity",
                gravity.unwrap_or(0.0),
                gravity.is_none(),
                "finite",
            ),
            (
                "contact.stiffness",
                c.stiffness,
                positive(c.stiffness),
                POSITIVE,
            ),
            (
                "contact.damping",
                c.damping,
                non_negative(c.damping),
                NON_NEGATIVE,
            ),
            (
                "contact.friction_stiffness",
                c.friction_stiffness,
                positive(c.friction_stiffness),
                POSITIVE,
            ),
            (
                "contact.scaling",
                c.scaling.reference_contacts,
                c.scaling.reference_contacts > 0.0,
                "positive (N0 of eq 77; infinite for none)",
            ),
            (
                "contact.detection_margin",
                c.detection_margin,
                non_negative(c.detection_margin),
                NON_NEGATIVE,
            ),
            (
                "max_travel",
                self.max_travel,
                non_negative(self.max_travel),
                NON_NEGATIVE,
            ),
            (
                "baumgarte_alpha",
                self.baumgarte_alpha,
                non_negative(self.baumgarte_alpha),
                NON_NEGATIVE,
            ),
        ];
        match fields.into_iter().find(|(_, _, ok, _)| !ok) {
            None => Ok(()),
            Some((field, value, _, requirement)) => Err(ParameterError {
                field,
                value,
                requirement,
            }),
        }
    }
}
