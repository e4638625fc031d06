//! `[physics]` and `[[joints]]`: the rigid world the physics thread steps
//! (`haptic-physics`), its parameters, and the joints between its bodies.
//!
//! Every object but the tool is a body of the world: a movable one
//! dynamic, the others static. The defaults are
//! [`WorldParameters::default`]'s.

use crate::check::{fail, finite, Check, Invalid};
use crate::schema::ObjectConfig;
use haptic_contact::StiffnessScaling;
use haptic_physics::joints::{Joint, JointError, PdController};
use haptic_physics::pid::PidParameters;
use haptic_physics::{ContactParameters, RigidBody, WorldParameters};
use haptic_schema::physics::{ContactModel, DampingMode, Integrator, PidPoints};
use nalgebra::{Point3, UnitQuaternion, Vector3};
use serde::Deserialize;

/// The world's parameters (Xu, Zhao & Barbič; Drumwright for the PID
/// model). A field left out keeps [`WorldParameters::default`]'s value.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Physics {
    /// Gravity (m/s²). Default `[0, 0, −9.81]`: scenes are z up.
    pub gravity_m_s2: [f64; 3],
    /// Default `semi_implicit`: backward Euler with the exact contact
    /// gradients (eqs 5, 15–18), stable at stiff contact;
    /// `symplectic_euler` (forces explicit) and `rk4` for comparison.
    pub integrator: Integrator,
    /// Default `implicit_penalty`: penalty springs with exact gradients,
    /// damping and anchor-spring friction (§4); `pid_penalty`: Drumwright's
    /// PID penalty resting contact with impulses at impact.
    pub contact_model: ContactModel,
    /// Penalty stiffness `k` per finest-level shell point (N/m), eq 19.
    /// Default 2×10⁴ N/m.
    pub contact_stiffness_n_per_m: f64,
    /// Contact damping `c` per finest-level shell point (N·s/m), eq 42.
    /// Default 20 N·s/m.
    pub contact_damping_n_s_per_m: f64,
    /// Default `normal`: damping of the rate of penetration only, along
    /// the field's gradient, sliding left to Coulomb friction; `full`: the
    /// whole relative velocity, as §4.2 (drags sliding bodies too).
    pub damping_mode: DampingMode,
    /// `N0` of eq 77, per body pair: above `N0` contacts the stiffness is
    /// scaled by `N0/N`. Default `inf`, no scaling.
    pub stiffness_scaling_contacts: f64,
    /// Stiffness of the friction anchor springs per finest-level shell
    /// point (N/m). Default 2×10³ N/m.
    pub friction_stiffness_n_per_m: f64,
    /// How near the surface a shell point must lie to be re-examined
    /// every step without a new tree traversal (m); a pair is traversed
    /// again once its bodies have moved apart enough to bring a point from
    /// beyond it into contact. Default 3 mm; 0 traverses every step.
    pub detection_margin_m: f64,
    /// The farthest a body's point may travel in one physics step (m); a
    /// faster step is split into substeps. Default 1 mm; 0 never splits.
    pub max_travel_per_step_m: f64,
    /// Baumgarte `α` of the joints (1/s), with `β = α²/4` critically
    /// damped (eq 56). Default 200 /s, about `1/dt` at the physics
    /// thread's 200 Hz, which holds joints tightest.
    pub baumgarte_alpha_per_s: f64,
    /// After each step, move jointed bodies back onto their joints (a
    /// least-mass-weighted correction of the poses, beyond the paper).
    /// Default `true`; `false` leaves Baumgarte alone holding them, as the
    /// paper does.
    pub joint_post_stabilisation: bool,
    /// The PID penalty model's gains (`contact_model = "pid_penalty"`).
    pub pid: Pid,
}

impl Default for Physics {
    fn default() -> Self {
        let p = WorldParameters::default();
        let c = p.contact;
        Self {
            gravity_m_s2: p.gravity.into(),
            integrator: p.integrator,
            contact_model: p.contact_model,
            contact_stiffness_n_per_m: c.stiffness,
            contact_damping_n_s_per_m: c.damping,
            damping_mode: c.damping_mode,
            stiffness_scaling_contacts: c.scaling.reference_contacts,
            friction_stiffness_n_per_m: c.friction_stiffness,
            detection_margin_m: c.detection_margin,
            max_travel_per_step_m: p.max_travel,
            baumgarte_alpha_per_s: p.baumgarte_alpha,
            joint_post_stabilisation: p.joint_post_stabilisation,
            pid: Pid::from(p.pid),
        }
    }
}

impl Physics {
    /// The world's parameters.
    pub fn world_parameters(&self) -> WorldParameters {
        WorldParameters {
            gravity: Vector3::from(self.gravity_m_s2),
            integrator: self.integrator,
            contact_model: self.contact_model,
            contact: ContactParameters {
                stiffness: self.contact_stiffness_n_per_m,
                damping: self.contact_damping_n_s_per_m,
                damping_mode: self.damping_mode,
                scaling: StiffnessScaling {
                    reference_contacts: self.stiffness_scaling_contacts,
                },
                friction_stiffness: self.friction_stiffness_n_per_m,
                detection_margin: self.detection_margin_m,
            },
            pid: self.pid.parameters(),
            max_travel: self.max_travel_per_step_m,
            baumgarte_alpha: self.baumgarte_alpha_per_s,
            joint_post_stabilisation: self.joint_post_stabilisation,
        }
    }
}

/// What a joint holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JointKindName {
    /// Ball and socket at `point_m` (eq 52).
    Ball,
    /// A hinge through `point_m` about `axis`.
    Hinge,
    /// A slide along `axis`, or along the line of the two centres of mass
    /// without one (eqs 53–54); it may carry a `controller` (eq 65).
    Prismatic,
    /// Holds `body_a` at the orientation `target_rotation_rad` (eq 66).
    TargetRotation,
}

/// One `[[joints]]` entry. Points and axes are in the world frame, at the
/// scene's start (where the config places the objects).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JointConfig {
    /// Shown in errors; unique among the joints.
    pub name: String,
    pub kind: JointKindName,
    /// A movable object.
    pub body_a: String,
    /// Another environment object, movable or static; left out,
    /// `body_a` is held to the world.
    #[serde(default)]
    pub body_b: Option<String>,
    /// The anchor of a ball joint or a hinge (m).
    #[serde(default)]
    pub point_m: Option<[f64; 3]>,
    /// A hinge's axis, or a prismatic joint's slide direction (any
    /// length).
    #[serde(default)]
    pub axis: Option<[f64; 3]>,
    /// A target rotation joint's orientation (rotation vector, rad).
    /// Default `body_a`'s orientation at the start.
    #[serde(default)]
    pub target_rotation_rad: Option<[f64; 3]>,
    /// A PD servo on a prismatic joint's slide (eq 65).
    #[serde(default)]
    pub controller: Option<Controller>,
}

/// A prismatic joint's PD servo: `F = k_p (s − L) + k_d ṡ` along the axis,
/// `s` the slide from the start.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Controller {
    /// `k_p` (N/m).
    pub stiffness_n_per_m: f64,
    /// `k_d` (N·s/m). Default 0.
    #[serde(default)]
    pub damping_n_s_per_m: f64,
    /// `L`, the slide it drives to (m). Default 0: where it starts.
    #[serde(default)]
    pub target_m: f64,
}

impl JointConfig {
    /// The joint between bodies `a` and `b` (indices into `bodies`, the
    /// world's bodies at the start); a target rotation defaults to
    /// `body_a`'s starting orientation.
    pub fn joint(
        &self,
        a: usize,
        b: Option<usize>,
        bodies: &[RigidBody],
    ) -> Result<Joint, JointError> {
        let point = Point3::from(self.point_m.unwrap_or_default());
        let axis = self.axis.map(Vector3::from);
        let name = self.name.clone();
        let joint = match self.kind {
            JointKindName::Ball => Joint::ball(name, a, b, bodies, point),
            JointKindName::Hinge => {
                Joint::hinge(name, a, b, bodies, point, axis.unwrap_or_default())
            }
            JointKindName::Prismatic => Joint::prismatic(name, a, b, bodies, axis),
            JointKindName::TargetRotation => {
                let start = bodies
                    .get(a)
                    .map_or_else(UnitQuaternion::identity, |body| body.state.pose.rotation);
                let target = self.target_rotation_rad.map_or(start, |r| {
                    UnitQuaternion::from_scaled_axis(Vector3::from(r))
                });
                Joint::target_rotation(name, a, bodies, target)
            }
        }?;
        match self.controller {
            Some(c) => joint.with_controller(PdController {
                stiffness: c.stiffness_n_per_m,
                damping: c.damping_n_s_per_m,
                target: c.target_m,
            }),
            None => Ok(joint),
        }
    }

    /// The field a [`JointError`] of [`joint`](Self::joint) is about.
    pub fn field_of(&self, error: &JointError) -> &'static str {
        match error {
            JointError::ZeroAxis { .. } | JointError::CoincidentCentres { .. } => "axis",
            JointError::SelfJoint { .. } => "body_b",
            JointError::ControllerNotPrismatic { .. } | JointError::InvalidController { .. } => {
                "controller"
            }
            JointError::NonFinite { quantity, .. } if quantity.contains("rotation") => {
                "target_rotation_rad"
            }
            JointError::NonFinite { .. } => "point_m",
            JointError::BodyOutOfRange { .. } => "body_a",
        }
    }
}

/// Checks `[physics]` and `[[joints]]`.
pub(crate) fn check(physics: &Physics, joints: &[JointConfig], objects: &[ObjectConfig]) -> Check {
    parameters(physics)?;
    for (i, joint) in joints.iter().enumerate() {
        self::joint(&joints[..i], objects, i, joint)?;
    }
    Ok(())
}

/// Checks the ranges [`WorldParameters::check`] and the PID model's set,
/// naming the config's field under `physics`.
fn parameters(p: &Physics) -> Check {
    let field = |f: &str| format!("physics.{f}");
    p.world_parameters().check().map_err(|e| {
        let name = match e.field {
            "gravity" => "gravity_m_s2",
            "contact.stiffness" => "contact_stiffness_n_per_m",
            "contact.damping" => "contact_damping_n_s_per_m",
            "contact.friction_stiffness" => "friction_stiffness_n_per_m",
            "contact.scaling" => "stiffness_scaling_contacts",
            "contact.detection_margin" => "detection_margin_m",
            "max_travel" => "max_travel_per_step_m",
            "baumgarte_alpha" => "baumgarte_alpha_per_s",
            other => other,
        };
        Invalid {
            field: field(name),
            message: format!("must be {}, not {}", e.requirement, e.value),
        }
    })?;
    p.pid.check(&field)
}

/// Checks joint `i`: its bodies exist and are not the tool, `body_a`
/// moves; it has the points and axes its kind needs and none it ignores;
/// every value is finite.
/// `before` are the joints written before it.
fn joint(before: &[JointConfig], objects: &[ObjectConfig], i: usize, joint: &JointConfig) -> Check {
    let field = |f: &str| format!("joints[{i}].{f}");
    if before.iter().any(|j| j.name == joint.name) {
        fail(field("name"), format!("`{}` names two joints", joint.name))?;
    }
    let body = |f: &str, name: &str| match objects.iter().find(|o| o.name == name) {
        None => Err(Invalid {
            field: field(f),
            message: format!("no object named \"{name}\""),
        }),
        Some(o) if o.tool => Err(Invalid {
            field: field(f),
            message: format!(
                "`{name}` is the tool, which the device moves: joints join environment objects"
            ),
        }),
        Some(o) => Ok(o.movable),
    };
    if !body("body_a", &joint.body_a)? {
        fail(
            field("body_a"),
            format!(
                "`{}` is not movable: `body_a` must be (`body_b` may be static, or left out for the world)",
                joint.body_a
            ),
        )?;
    }
    match &joint.body_b {
        Some(b) if *b == joint.body_a => fail(field("body_b"), format!("joins `{b}` to itself"))?,
        Some(b) => drop(body("body_b", b)?),
        None => {}
    }
    let kind = joint.kind;
    let needs_point = matches!(kind, JointKindName::Ball | JointKindName::Hinge);
    let axis = match kind {
        JointKindName::Hinge => Some(true),
        JointKindName::Prismatic => Some(false),
        JointKindName::Ball | JointKindName::TargetRotation => None,
    };
    let name = match kind {
        JointKindName::Ball => "a ball joint",
        JointKindName::Hinge => "a hinge",
        JointKindName::Prismatic => "a prismatic joint",
        JointKindName::TargetRotation => "a target rotation",
    };
    match (&joint.point_m, needs_point) {
        (None, true) => fail(
            field("point_m"),
            format!("{name} needs its anchor `point_m`"),
        )?,
        (Some(_), false) => fail(field("point_m"), format!("{name} has no anchor point"))?,
        (Some(p), true) => finite(field("point_m"), p)?,
        (None, false) => {}
    }
    match (&joint.axis, axis) {
        (None, Some(true)) => fail(field("axis"), format!("{name} needs its `axis`"))?,
        (Some(_), None) => fail(field("axis"), format!("{name} has no axis"))?,
        (Some(v), Some(_)) => {
            finite(field("axis"), v)?;
            if Vector3::from(*v).norm() == 0.0 {
                fail(field("axis"), "must not be zero")?;
            }
        }
        (None, _) => {}
    }
    match (&joint.target_rotation_rad, kind) {
        (Some(r), JointKindName::TargetRotation) => finite(field("target_rotation_rad"), r)?,
        (Some(_), _) => fail(
            field("target_rotation_rad"),
            format!("{name} has no target rotation"),
        )?,
        (None, _) => {}
    }
    if kind == JointKindName::TargetRotation && joint.body_b.is_some() {
        fail(
            field("body_b"),
            "a target rotation holds `body_a` alone, in the world",
        )?;
    }
    if let Some(c) = &joint.controller {
        if kind != JointKindName::Prismatic {
            fail(
                field("controller"),
                "only a prismatic joint carries a PD controller",
            )?;
        }
        for (f, gain) in [
            ("stiffness_n_per_m", c.stiffness_n_per_m),
            ("damping_n_s_per_m", c.damping_n_s_per_m),
        ] {
            if !(gain >= 0.0 && gain.is_finite()) {
                fail(
                    field(&format!("controller.{f}")),
                    format!("must be finite and ≥ 0, not {gain}"),
                )?;
            }
        }
        finite(field("controller.target_m"), &[c.target_m])?;
    }
    Ok(())
}

/// `[physics.pid]`: Drumwright's PID penalty gains, per kilogram of the
/// pair's reduced mass, and its impacts. Defaults [`PidParameters::default`]'s.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Pid {
    /// `k_p` of eqs 1, 3 per kg (1/s²). Default 4,000: a body resting on
    /// a face sinks `g/(k_p + k_i/(1 − λ))`, 2.2 mm.
    pub kp_per_s2: f64,
    /// `k_i` of eq 3 per kg (1/s² per summed step of depth). Default 80,
    /// the paper's `k_i/k_p` = 1/50.
    pub ki_per_s2: f64,
    /// `k_v` of eqs 1, 3 per kg (1/s). Default 80, below the 90 an
    /// explicit 5 ms step keeps a single resting point stable at.
    pub kd_per_s: f64,
    /// `λ` of eq 2, per step, in `[0, 1)`. Default 0.85.
    pub forgetting: f64,
    /// Newton's coefficient of restitution at impact, in `[0, 1]`.
    /// Default 0.2.
    pub restitution: f64,
    /// Relative normal speed above which bodies coming into contact
    /// collide rather than rest (m/s). Default 0.05 m/s.
    pub impact_velocity_m_per_s: f64,
    /// Coulomb `μ` of sliding and impacts (dimensionless). Default 0.5.
    pub friction_coefficient: f64,
    /// Default `bottom_of_volume`: the points of the bottom of the volume
    /// of penetration (§III-A); `deepest`: the deepest point alone, the
    /// traditional penalty method the paper compares against.
    pub points: PidPoints,
}

impl From<PidParameters> for Pid {
    fn from(p: PidParameters) -> Self {
        Self {
            kp_per_s2: p.kp,
            ki_per_s2: p.ki,
            kd_per_s: p.kd,
            forgetting: p.forgetting,
            restitution: p.restitution,
            impact_velocity_m_per_s: p.impact_velocity,
            friction_coefficient: p.friction,
            points: p.points,
        }
    }
}

impl Default for Pid {
    fn default() -> Self {
        Pid::from(PidParameters::default())
    }
}

impl Pid {
    fn parameters(&self) -> PidParameters {
        PidParameters {
            kp: self.kp_per_s2,
            ki: self.ki_per_s2,
            kd: self.kd_per_s,
            forgetting: self.forgetting,
            restitution: self.restitution,
            impact_velocity: self.impact_velocity_m_per_s,
            friction: self.friction_coefficient,
            points: self.points,
        }
    }

    /// Checks the ranges [`PidParameters::check`] sets, naming the
    /// config's field under `physics`.
    fn check(&self, physics: &dyn Fn(&str) -> String) -> Check {
        self.parameters().check().map_err(|e| {
            let name = match e.field {
                "kp" => "kp_per_s2",
                "ki" => "ki_per_s2",
                "kd" => "kd_per_s",
                "impact_velocity" => "impact_velocity_m_per_s",
                "friction" => "friction_coefficient",
                other => other,
            };
            Invalid {
                field: physics(&format!("pid.{name}")),
                message: format!("must be {}, not {}", e.requirement, e.value),
            }
        })
    }
}
