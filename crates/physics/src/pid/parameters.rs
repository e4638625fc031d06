//! The PID model's gains, its impacts' restitution and friction, and which
//! points carry its forces.

use crate::ParameterError;

pub use haptic_schema::physics::PidPoints;

/// Parameters of the PID penalty model. §III-C scales the gains by the
/// pair's mass `m_a + m_b`; here they are per kilogram of its reduced mass
/// `m_a m_b / (m_a + m_b)`, the same against a static body (`m`), and
/// between two moving bodies the one that gives a contact the natural
/// frequency `√k_p` and damping ratio `k_v / (2√k_p)` whatever their mass
/// ratio, so the explicit step stays stable for every pair.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PidParameters {
    /// `k_p` of eqs 1, 3 per kg (s⁻²). 4000 s⁻²: a body resting on a face
    /// sinks `g / (k_p + k_i/(1−λ))` = 2.2 mm.
    pub kp: f64,
    /// `k_i` of eq 3 per kg (s⁻² per summed step of depth). 80 s⁻², the
    /// paper's ratio `k_i/k_p` = 1/50 (§III-C).
    pub ki: f64,
    /// `k_v` of eqs 1, 3 per kg (s⁻¹). 80 s⁻¹. One point alone (a box
    /// corner: about a quarter of the mass effective) sees `4k_p` and
    /// `4k_v`; symplectic Euler keeps it stable while
    /// `4k_v h < 2 − 2k_p h²`, which at the physics thread's 5 ms step
    /// bounds `k_v` by 90 s⁻¹. The paper's overdamped ratio
    /// `k_v/k_p` = 0.5 s is out of reach of an explicit step at that rate.
    pub kd: f64,
    /// `λ` of eq 2, per step, in `[0, 1)`. 0.85, the middle of the paper's
    /// empirical range 0.8–0.9: the integral holds about 7 steps of depth.
    pub forgetting: f64,
    /// Newton's coefficient of restitution of impacts, in `[0, 1]`. 0.2.
    pub restitution: f64,
    /// Relative normal speed (m/s) above which a pair coming into contact
    /// collides (gets an impulse) rather than rests (Fig. 2's threshold).
    /// 0.05 m/s: just above one 5 ms step of free fall (0.049 m/s), so a
    /// body set down at rest starts in resting contact.
    pub impact_velocity: f64,
    /// Coulomb coefficient `μ` of sliding friction and of impacts. 0.5.
    pub friction: f64,
    pub points: PidPoints,
}

impl Default for PidParameters {
    fn default() -> Self {
        Self {
            kp: 4000.0,
            ki: 80.0,
            kd: 80.0,
            forgetting: 0.85,
            restitution: 0.2,
            impact_velocity: 0.05,
            friction: 0.5,
            points: PidPoints::BottomOfVolume,
        }
    }
}

impl PidParameters {
    /// Checks every value is finite and in range.
    pub fn check(&self) -> Result<(), ParameterError> {
        const NON_NEGATIVE: &str = "finite and ≥ 0";
        let non_negative = |v: f64| v.is_finite() && v >= 0.0;
        type Field = (&'static str, f64, fn(f64) -> bool, &'static str);
        let fields: [Field; 7] = [
            ("kp", self.kp, non_negative, NON_NEGATIVE),
            ("ki", self.ki, non_negative, NON_NEGATIVE),
            ("kd", self.kd, non_negative, NON_NEGATIVE),
            (
                "forgetting",
                self.forgetting,
                |v| (0.0..1.0).contains(&v),
                "in [0, 1)",
            ),
            (
                "restitution",
                self.restitution,
                |v| (0.0..=1.0).contains(&v),
                "in [0, 1]",
            ),
            (
                "impact_velocity",
                self.impact_velocity,
                non_negative,
                NON_NEGATIVE,
            ),
            ("friction", self.friction, non_negative, NON_NEGATIVE),
        ];
        match fields
            .into_iter()
            .find(|&(_, value, valid, _)| !valid(value))
        {
            Some((field, value, _, requirement)) => Err(ParameterError {
                field,
                value,
                requirement,
            }),
            None => Ok(()),
        }
    }
}
