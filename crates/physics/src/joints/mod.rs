//! Joints in maximal coordinates (Xu, Zhao & Barbič §5): ball, hinge and
//! prismatic joints between two bodies or a body and the world, the target
//! rotation constraint of eq 66 and the prismatic PD servo of eq 65.
//! Baumgarte stabilisation (eq 56, `α` in the world's parameters) is the
//! system's: it combines these rows into `C̈ + α Ċ + β C = 0`.
//!
//! Every joint hands the augmented system (eq 62) one [`ConstraintRow`] per
//! scalar constraint: `C`, its analytic gradient `∂C/∂(x, θ)` for each body
//! under the perturbation `x → x + δx`, `R → exp([δθ]×) R` (the `∂C/∂R :
//! (ẽ_l R)` of eq 60), and `C̈` at zero linear and angular accelerations (the
//! velocity-product terms of eq 58 that eq 61's `d` collects). All of them
//! are closed forms; none is a finite difference.
//!
//! For a joint to the world (`b = None`) the world stands in for body `b` as
//! the frame at the origin with identity rotation, at rest: its anchor and
//! axis are world quantities.
//!
//! [`Joint`] and its kinds are built and checked here; [`rows`] gives each
//! kind's constraint rows and Jacobians, [`control`] the prismatic PD
//! servo's forces. The world's solver (`crate::solver`) combines the rows
//! into the augmented system, and `crate::post_stabilisation` moves bodies
//! back onto them. A new kind of constraint is a new [`JointKind`] with its
//! rows in [`rows`].

mod control;
mod rows;
mod side;
#[cfg(test)]
pub(crate) mod tests;

use crate::body::RigidBody;
use nalgebra::{Point3, Unit, UnitQuaternion, Vector3};
use side::sides;

/// What a joint constrains. Quantities named `_a` are in body `a`'s frame,
/// `_b` in body `b`'s frame, or in the world frame for a joint to the world.
#[derive(Clone, Debug, PartialEq)]
pub enum JointKind {
    /// Ball and socket, 3 rows (eq 52): `x_a + R_a X_a − x_b − R_b X_b = 0`.
    Ball {
        anchor_a: Point3<f64>,
        anchor_b: Point3<f64>,
    },
    /// Hinge, 5 rows: eq 52 at the anchors and again at the points one metre
    /// along the axis, `X + axis`. Of the second triple, the component in
    /// which the world axis `R_a axis_a` is largest is dropped: it is the
    /// redundant one (§5), and the two kept are the best conditioned.
    Hinge {
        anchor_a: Point3<f64>,
        anchor_b: Point3<f64>,
        axis_a: Unit<Vector3<f64>>,
        axis_b: Unit<Vector3<f64>>,
    },
    /// Prismatic, 8 rows, 3 of them redundant (the SVD solve of eq 64 drops
    /// them). Eq 53: the first two columns of `R_a R₀` equal those of `R_b`,
    /// `R₀ = R_a⁻¹ R_b` at creation, so bodies assembled in different
    /// orientations stay so. Eq 54: `(x_a − p_b)·(R_a a_k) = 0` for the two
    /// normals `a_2, a_3` of the slide axis, with `p_b = x_b + R_b X_b` the
    /// point of `b` (`anchor_b`) that coincided with `a`'s centre of mass at
    /// creation; with the axis along the line of centres, `X_b` lies on that
    /// line and eq 54 is the paper's.
    Prismatic {
        /// The slide direction (the paper's `a_1`).
        axis_a: Unit<Vector3<f64>>,
        /// `a_2, a_3`: with `axis_a`, a right-handed orthonormal frame.
        normals_a: [Unit<Vector3<f64>>; 2],
        /// `R₀ = R_a⁻¹ R_b` at creation (`R_a⁻¹` for a joint to the world).
        rest_rotation: UnitQuaternion<f64>,
        anchor_b: Point3<f64>,
    },
    /// Eq 66, 6 rows (3 redundant) on body `a` alone: the first two columns
    /// of `R_a` equal those of `target`.
    TargetRotation { target: UnitQuaternion<f64> },
}

/// The PD servo of a prismatic joint (eq 65). With `a = R_a axis_a` and the
/// slide `s = (p_b − x_a)·a` (zero at creation),
/// `F = k_p (s − L) a + k_d ((ṗ_b − v_a)·a) a` acts on `a` at its centre of
/// mass and `−F` on `b` at `p_b`. Both lie on the slide line while the joint
/// holds, so the pair exerts no net torque; with the axis along the line of
/// centres `p_b` is on `b`'s centre line and the forces are the paper's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PdController {
    /// `k_p` (N/m).
    pub stiffness: f64,
    /// `k_d` (N·s/m).
    pub damping: f64,
    /// `L`, the target slide (m).
    pub target: f64,
}

/// One joint between body `a` and body `b` or the world.
#[derive(Clone, Debug, PartialEq)]
pub struct Joint {
    pub name: String,
    pub a: usize,
    /// `None`: to the world.
    pub b: Option<usize>,
    pub kind: JointKind,
    /// Only for prismatic joints.
    pub controller: Option<PdController>,
}

/// Why a joint cannot be built.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum JointError {
    #[error("joint `{joint}`: body index {body} is out of range ({count} bodies)")]
    BodyOutOfRange {
        joint: String,
        body: usize,
        count: usize,
    },
    #[error("joint `{joint}` joins body {body} to itself")]
    SelfJoint { joint: String, body: usize },
    #[error("joint `{joint}`: the axis is zero or not finite")]
    ZeroAxis { joint: String },
    #[error("joint `{joint}`: the {quantity} is not finite")]
    NonFinite {
        joint: String,
        quantity: &'static str,
    },
    #[error("joint `{joint}`: the prismatic axis is the line of centres, but the centres of mass coincide")]
    CoincidentCentres { joint: String },
    #[error("joint `{joint}`: a PD controller drives only prismatic joints")]
    ControllerNotPrismatic { joint: String },
    #[error("joint `{joint}`: PD gains must be finite and ≥ 0 and the target finite (k_p {stiffness}, k_d {damping}, L {target})")]
    InvalidController {
        joint: String,
        stiffness: f64,
        damping: f64,
        target: f64,
    },
}

/// Two unit normals completing `axis` to a right-handed orthonormal frame.
fn normals(axis: &Unit<Vector3<f64>>) -> [Unit<Vector3<f64>>; 2] {
    let smallest = axis.iamin();
    let n2 = Unit::new_normalize(axis.cross(&Vector3::ith(smallest, 1.0)));
    let n3 = Unit::new_normalize(axis.cross(&n2));
    [n2, n3]
}

fn unit_axis(joint: &str, axis: &Vector3<f64>) -> Result<Unit<Vector3<f64>>, JointError> {
    let ok = axis.iter().all(|v| v.is_finite());
    ok.then(|| Unit::try_new(*axis, 1e-12))
        .flatten()
        .ok_or_else(|| JointError::ZeroAxis {
            joint: joint.to_string(),
        })
}

fn finite_point(joint: &str, p: &Point3<f64>, quantity: &'static str) -> Result<(), JointError> {
    if p.iter().all(|v| v.is_finite()) {
        Ok(())
    } else {
        Err(JointError::NonFinite {
            joint: joint.to_string(),
            quantity,
        })
    }
}

impl Joint {
    /// A ball joint at `world_point` (eq 52).
    pub fn ball(
        name: impl Into<String>,
        a: usize,
        b: Option<usize>,
        bodies: &[RigidBody],
        world_point: Point3<f64>,
    ) -> Result<Joint, JointError> {
        let name = name.into();
        check_bodies(&name, a, b, bodies.len())?;
        finite_point(&name, &world_point, "anchor point")?;
        let (sa, sb) = sides(a, b, bodies);
        Ok(Joint {
            kind: JointKind::Ball {
                anchor_a: sa.local_point(&world_point),
                anchor_b: sb.local_point(&world_point),
            },
            name,
            a,
            b,
            controller: None,
        })
    }

    /// A hinge through `world_point` about `world_axis` (any length).
    pub fn hinge(
        name: impl Into<String>,
        a: usize,
        b: Option<usize>,
        bodies: &[RigidBody],
        world_point: Point3<f64>,
        world_axis: Vector3<f64>,
    ) -> Result<Joint, JointError> {
        let name = name.into();
        check_bodies(&name, a, b, bodies.len())?;
        finite_point(&name, &world_point, "anchor point")?;
        let axis = unit_axis(&name, &world_axis)?;
        let (sa, sb) = sides(a, b, bodies);
        Ok(Joint {
            kind: JointKind::Hinge {
                anchor_a: sa.local_point(&world_point),
                anchor_b: sb.local_point(&world_point),
                axis_a: Unit::new_normalize(sa.local_vector(&axis)),
                axis_b: Unit::new_normalize(sb.local_vector(&axis)),
            },
            name,
            a,
            b,
            controller: None,
        })
    }

    /// A prismatic joint sliding along `world_axis`, or with `None` along the
    /// paper's `a_1 = (x_a − x_b)/‖x_a − x_b‖` (the world origin standing in
    /// for `x_b` for a joint to the world).
    pub fn prismatic(
        name: impl Into<String>,
        a: usize,
        b: Option<usize>,
        bodies: &[RigidBody],
        world_axis: Option<Vector3<f64>>,
    ) -> Result<Joint, JointError> {
        let name = name.into();
        check_bodies(&name, a, b, bodies.len())?;
        let (sa, sb) = sides(a, b, bodies);
        let axis = match world_axis {
            Some(axis) => unit_axis(&name, &axis)?,
            None => {
                Unit::try_new(sa.x - sb.x, 1e-12).ok_or_else(|| JointError::CoincidentCentres {
                    joint: name.clone(),
                })?
            }
        };
        let axis_a = Unit::new_normalize(sa.local_vector(&axis));
        let rotation_a = bodies[a].state.pose.rotation;
        let rotation_b = b.map_or_else(UnitQuaternion::identity, |b| bodies[b].state.pose.rotation);
        Ok(Joint {
            kind: JointKind::Prismatic {
                axis_a,
                normals_a: normals(&axis_a),
                rest_rotation: rotation_a.inverse() * rotation_b,
                anchor_b: sb.local_point(&Point3::from(sa.x)),
            },
            name,
            a,
            b,
            controller: None,
        })
    }

    /// Holds body `a` at the world orientation `target` (eq 66).
    pub fn target_rotation(
        name: impl Into<String>,
        a: usize,
        bodies: &[RigidBody],
        target: UnitQuaternion<f64>,
    ) -> Result<Joint, JointError> {
        let name = name.into();
        check_bodies(&name, a, None, bodies.len())?;
        if !target.coords.iter().all(|v| v.is_finite()) {
            return Err(JointError::NonFinite {
                joint: name,
                quantity: "target rotation",
            });
        }
        Ok(Joint {
            name,
            a,
            b: None,
            kind: JointKind::TargetRotation { target },
            controller: None,
        })
    }

    /// This joint driven by `controller` (prismatic joints only).
    pub fn with_controller(mut self, controller: PdController) -> Result<Joint, JointError> {
        self.controller = Some(controller);
        self.check_controller()?;
        Ok(self)
    }

    /// Checks a joint against a world of `count` bodies: indices, axes and
    /// controller (what the constructors guarantee, for joints built field
    /// by field).
    pub fn check(&self, count: usize) -> Result<(), JointError> {
        check_bodies(&self.name, self.a, self.b, count)?;
        let axes = match &self.kind {
            JointKind::Hinge { axis_a, axis_b, .. } => vec![axis_a, axis_b],
            JointKind::Prismatic {
                axis_a, normals_a, ..
            } => vec![axis_a, &normals_a[0], &normals_a[1]],
            JointKind::Ball { .. } | JointKind::TargetRotation { .. } => Vec::new(),
        };
        for axis in axes {
            unit_axis(&self.name, axis)?;
        }
        self.check_controller()
    }

    fn check_controller(&self) -> Result<(), JointError> {
        let Some(c) = self.controller else {
            return Ok(());
        };
        if !matches!(self.kind, JointKind::Prismatic { .. }) {
            return Err(JointError::ControllerNotPrismatic {
                joint: self.name.clone(),
            });
        }
        let gain = |k: f64| k >= 0.0 && k.is_finite();
        if gain(c.stiffness) && gain(c.damping) && c.target.is_finite() {
            Ok(())
        } else {
            Err(JointError::InvalidController {
                joint: self.name.clone(),
                stiffness: c.stiffness,
                damping: c.damping,
                target: c.target,
            })
        }
    }

    /// Scalar constraints this joint contributes.
    pub fn row_count(&self) -> usize {
        match self.kind {
            JointKind::Ball { .. } => 3,
            JointKind::Hinge { .. } => 5,
            JointKind::Prismatic { .. } => 8,
            JointKind::TargetRotation { .. } => 6,
        }
    }
}

fn check_bodies(joint: &str, a: usize, b: Option<usize>, count: usize) -> Result<(), JointError> {
    for body in std::iter::once(a).chain(b) {
        if body >= count {
            return Err(JointError::BodyOutOfRange {
                joint: joint.to_string(),
                body,
                count,
            });
        }
    }
    if b == Some(a) {
        return Err(JointError::SelfJoint {
            joint: joint.to_string(),
            body: a,
        });
    }
    Ok(())
}
