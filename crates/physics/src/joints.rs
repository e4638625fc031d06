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

use crate::body::RigidBody;
use crate::forces::{ConstraintRow, Forces};
use haptic_core::{skew, Matrix6, Vector6};
use nalgebra::{Matrix3, Point3, Unit, UnitQuaternion, Vector3};

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

/// Pose and velocity of one side of a joint; the world is the frame at the
/// origin with identity rotation, at rest.
struct Side {
    x: Vector3<f64>,
    rotation: Matrix3<f64>,
    v: Vector3<f64>,
    w: Vector3<f64>,
}

impl Side {
    fn of(body: &RigidBody) -> Self {
        Side {
            x: body.pose.translation.vector,
            rotation: *body.pose.rotation.to_rotation_matrix().matrix(),
            v: body.velocity,
            w: body.angular_velocity,
        }
    }

    fn world() -> Self {
        Side {
            x: Vector3::zeros(),
            rotation: Matrix3::identity(),
            v: Vector3::zeros(),
            w: Vector3::zeros(),
        }
    }

    /// A world point or vector in this side's frame.
    fn local_point(&self, p: &Point3<f64>) -> Point3<f64> {
        Point3::from(self.rotation.transpose() * (p.coords - self.x))
    }

    fn local_vector(&self, v: &Vector3<f64>) -> Vector3<f64> {
        self.rotation.transpose() * v
    }
}

fn six(top: &Vector3<f64>, bottom: &Vector3<f64>) -> Vector6 {
    Vector6::new(top.x, top.y, top.z, bottom.x, bottom.y, bottom.z)
}

/// The 6×6 block `[[A, B], [C, D]]`.
fn blocks(a: &Matrix3<f64>, b: &Matrix3<f64>, c: &Matrix3<f64>, d: &Matrix3<f64>) -> Matrix6 {
    let mut m = Matrix6::zeros();
    m.fixed_view_mut::<3, 3>(0, 0).copy_from(a);
    m.fixed_view_mut::<3, 3>(0, 3).copy_from(b);
    m.fixed_view_mut::<3, 3>(3, 0).copy_from(c);
    m.fixed_view_mut::<3, 3>(3, 3).copy_from(d);
    m
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
        let rotation_a = bodies[a].pose.rotation;
        let rotation_b = b.map_or_else(UnitQuaternion::identity, |b| bodies[b].pose.rotation);
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

    /// Appends this joint's [`row_count`](Self::row_count) rows at the
    /// bodies' current state (the bodies the joint was built with).
    pub fn rows(&self, bodies: &[RigidBody], out: &mut Vec<ConstraintRow>) {
        out.reserve(self.row_count());
        let (sa, sb) = sides(self.a, self.b, bodies);
        match &self.kind {
            JointKind::Ball { anchor_a, anchor_b } => {
                let (ra, rb) = (sa.rotation * anchor_a.coords, sb.rotation * anchor_b.coords);
                self.difference_rows(&sa, &sb, &ra, &rb, true, None, out);
            }
            JointKind::Hinge {
                anchor_a,
                anchor_b,
                axis_a,
                axis_b,
            } => {
                let (ra, rb) = (sa.rotation * anchor_a.coords, sb.rotation * anchor_b.coords);
                self.difference_rows(&sa, &sb, &ra, &rb, true, None, out);
                let (na, nb) = (sa.rotation * axis_a.as_ref(), sb.rotation * axis_b.as_ref());
                let redundant = na.iamax();
                self.difference_rows(&sa, &sb, &(ra + na), &(rb + nb), true, Some(redundant), out);
            }
            JointKind::Prismatic {
                normals_a,
                rest_rotation,
                anchor_b,
                ..
            } => {
                let rest = sa.rotation * rest_rotation.to_rotation_matrix().matrix();
                for k in 0..2 {
                    let (ca, cb) = (
                        rest.column(k).into_owned(),
                        sb.rotation.column(k).into_owned(),
                    );
                    self.difference_rows(&sa, &sb, &ca, &cb, false, None, out);
                }
                let rb = sb.rotation * anchor_b.coords;
                for normal in normals_a {
                    self.slide_normal_row(&sa, &sb, &(sa.rotation * normal.as_ref()), &rb, out);
                }
            }
            JointKind::TargetRotation { target } => {
                let goal = Side {
                    rotation: *target.to_rotation_matrix().matrix(),
                    ..Side::world()
                };
                for k in 0..2 {
                    let ca = sa.rotation.column(k).into_owned();
                    let cb = goal.rotation.column(k).into_owned();
                    self.difference_rows(&sa, &goal, &ca, &cb, false, None, out);
                }
            }
        }
    }

    /// The components `k` (all but `skip`) of `c (x_a − x_b) + r_a − r_b`,
    /// `c = 1` with `centres` (eq 52) and 0 otherwise (eqs 53, 66), where
    /// `r_a`, `r_b` are world vectors carried by the bodies' rotations:
    /// `∂/∂θ_a = r_a × e_k`, and at zero accelerations
    /// `C̈ = ω_a×(ω_a×r_a) − ω_b×(ω_b×r_b)`.
    #[allow(clippy::too_many_arguments)]
    fn difference_rows(
        &self,
        sa: &Side,
        sb: &Side,
        ra: &Vector3<f64>,
        rb: &Vector3<f64>,
        centres: bool,
        skip: Option<usize>,
        out: &mut Vec<ConstraintRow>,
    ) {
        let c = if centres { 1.0 } else { 0.0 };
        let value = c * (sa.x - sb.x) + ra - rb;
        let accel = sa.w.cross(&sa.w.cross(ra)) - sb.w.cross(&sb.w.cross(rb));
        for k in (0..3).filter(|k| Some(*k) != skip) {
            let e = Vector3::ith(k, 1.0);
            self.push(
                six(&(c * e), &ra.cross(&e)),
                six(&(-c * e), &-rb.cross(&e)),
                value[k],
                accel[k],
                out,
            );
        }
    }

    /// Eq 54 for one world normal `n = R_a a_k`: `C = e·n` with
    /// `e = x_a − x_b − r_b`, `r_b = R_b X_b`, so `∂C/∂θ_a = n × e`,
    /// `∂C/∂θ_b = n × r_b`, and at zero accelerations
    /// `C̈ = ë·n + 2 ė·ṅ + e·n̈` with `ë = −ω_b×(ω_b×r_b)`,
    /// `ė = v_a − v_b − ω_b×r_b`, `ṅ = ω_a×n`, `n̈ = ω_a×(ω_a×n)`.
    fn slide_normal_row(
        &self,
        sa: &Side,
        sb: &Side,
        n: &Vector3<f64>,
        rb: &Vector3<f64>,
        out: &mut Vec<ConstraintRow>,
    ) {
        let e = sa.x - sb.x - rb;
        let e_dot = sa.v - sb.v - sb.w.cross(rb);
        let e_ddot = -sb.w.cross(&sb.w.cross(rb));
        let n_dot = sa.w.cross(n);
        let n_ddot = sa.w.cross(&n_dot);
        self.push(
            six(n, &n.cross(&e)),
            six(&-n, &n.cross(rb)),
            e.dot(n),
            e_ddot.dot(n) + 2.0 * e_dot.dot(&n_dot) + e.dot(&n_ddot),
            out,
        );
    }

    fn push(
        &self,
        jacobian_a: Vector6,
        jacobian_b: Vector6,
        value: f64,
        velocity_product: f64,
        out: &mut Vec<ConstraintRow>,
    ) {
        out.push(ConstraintRow {
            a: self.a,
            b: self.b,
            jacobian_a,
            jacobian_b: if self.b.is_some() {
                jacobian_b
            } else {
                Vector6::zeros()
            },
            value,
            velocity_product,
        });
    }

    /// The slide `s = (p_b − x_a)·(R_a axis_a)` of a prismatic joint (m, zero
    /// at creation); `None` for other kinds.
    pub fn slide(&self, bodies: &[RigidBody]) -> Option<f64> {
        let JointKind::Prismatic {
            axis_a, anchor_b, ..
        } = &self.kind
        else {
            return None;
        };
        let (sa, sb) = sides(self.a, self.b, bodies);
        let p_b = sb.x + sb.rotation * anchor_b.coords;
        Some((p_b - sa.x).dot(&(sa.rotation * axis_a.as_ref())))
    }

    /// Adds the PD servo's wrenches (eq 65, see [`PdController`]) and their
    /// exact gradients for the implicit integrator. With `a = R_a axis_a`,
    /// `d = p_b − x_a`, `u = v_b + ω_b×r_b − v_a`, `f = k_p (d·a − L) + k_d u·a`
    /// and `F = f a`:
    /// `∂F/∂x_a = −k_p aaᵀ`, `∂F/∂θ_a = a (k_p a×d + k_d a×u)ᵀ − f [a]×`,
    /// `∂F/∂x_b = k_p aaᵀ`, `∂F/∂θ_b = a (k_p (r_b×a)ᵀ − k_d aᵀ[ω_b]×[r_b]×)`,
    /// `∂F/∂v_a = −k_d aaᵀ`, `∂F/∂v_b = k_d aaᵀ`, `∂F/∂ω_b = k_d a (r_b×a)ᵀ`;
    /// body `b` takes `−F` and `τ_b = −r_b × F`, whose `θ_b` gradient gains
    /// `−[F]×[r_b]×`. Nothing happens without a controller.
    pub fn add_control_forces(&self, bodies: &[RigidBody], forces: &mut Forces) {
        let (
            Some(pd),
            JointKind::Prismatic {
                axis_a, anchor_b, ..
            },
        ) = (&self.controller, &self.kind)
        else {
            return;
        };
        let (sa, sb) = sides(self.a, self.b, bodies);
        let a = sa.rotation * axis_a.as_ref();
        let rb = sb.rotation * anchor_b.coords;
        let d = sb.x + rb - sa.x;
        let u = sb.v + sb.w.cross(&rb) - sa.v;
        let f = pd.stiffness * (d.dot(&a) - pd.target) + pd.damping * u.dot(&a);
        let force = f * a;
        forces.add_wrench(self.a, &six(&force, &Vector3::zeros()));

        let aat = a * a.transpose();
        let zero = Matrix3::zeros();
        // ∂F/∂(x, θ) and ∂F/∂(v, ω) with respect to a and b.
        let dx_a = -pd.stiffness * aat;
        let dtheta_a =
            a * (pd.stiffness * a.cross(&d) + pd.damping * a.cross(&u)).transpose() - f * skew(&a);
        let dx_b = pd.stiffness * aat;
        let dtheta_b = a
            * (pd.stiffness * rb.cross(&a).transpose()
                - pd.damping * a.transpose() * skew(&sb.w) * skew(&rb));
        let dv_a = -pd.damping * aat;
        let dv_b = pd.damping * aat;
        let dw_b = pd.damping * a * rb.cross(&a).transpose();
        forces.add_gradient(
            self.a,
            self.a,
            blocks(&dx_a, &dtheta_a, &zero, &zero),
            blocks(&dv_a, &zero, &zero, &zero),
        );
        let Some(b) = self.b else {
            return;
        };
        forces.add_gradient(
            self.a,
            b,
            blocks(&dx_b, &dtheta_b, &zero, &zero),
            blocks(&dv_b, &dw_b, &zero, &zero),
        );
        // On b: −F and τ_b = −[r_b]× F.
        let arm = -skew(&rb);
        forces.add_wrench(b, &six(&-force, &(arm * force)));
        forces.add_gradient(
            b,
            self.a,
            blocks(&-dx_a, &-dtheta_a, &(arm * dx_a), &(arm * dtheta_a)),
            blocks(&-dv_a, &zero, &(arm * dv_a), &zero),
        );
        forces.add_gradient(
            b,
            b,
            blocks(
                &-dx_b,
                &-dtheta_b,
                &(arm * dx_b),
                &(arm * dtheta_b - skew(&force) * skew(&rb)),
            ),
            blocks(&-dv_b, &-dw_b, &(arm * dv_b), &(arm * dw_b)),
        );
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

fn sides(a: usize, b: Option<usize>, bodies: &[RigidBody]) -> (Side, Side) {
    (
        Side::of(&bodies[a]),
        b.map_or_else(Side::world, |b| Side::of(&bodies[b])),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::Motion;
    use haptic_core::displaced;
    use nalgebra::{DMatrix, Isometry3, Translation3};
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    fn body(pose: Isometry3<f64>) -> RigidBody {
        RigidBody {
            name: "box".into(),
            motion: Motion::Dynamic,
            mass: 1.5,
            body_inertia: Matrix3::from_diagonal(&Vector3::new(0.02, 0.03, 0.04)),
            pose,
            velocity: Vector3::zeros(),
            angular_velocity: Vector3::zeros(),
            geometry: None,
            static_friction: 0.0,
            dynamic_friction: 0.0,
        }
    }

    fn vector(rng: &mut Pcg64, scale: f64) -> Vector3<f64> {
        Vector3::new(rng.gen(), rng.gen(), rng.gen()).map(|v: f64| scale * (2.0 * v - 1.0))
    }

    fn pose(rng: &mut Pcg64) -> Isometry3<f64> {
        Isometry3::from_parts(
            Translation3::from(vector(rng, 1.0)),
            UnitQuaternion::from_scaled_axis(vector(rng, 3.0)),
        )
    }

    /// Two bodies at random poses and every kind of joint between them and
    /// to the world, built there (the target rotation holds body 1's).
    fn assembly(rng: &mut Pcg64) -> (Vec<RigidBody>, Vec<Joint>) {
        let bodies = vec![body(pose(rng)), body(pose(rng))];
        let (p, n) = (Point3::from(vector(rng, 1.0)), vector(rng, 1.0));
        let joints = vec![
            Joint::ball("ball", 0, Some(1), &bodies, p).unwrap(),
            Joint::ball("ball to world", 1, None, &bodies, p).unwrap(),
            Joint::hinge("hinge", 0, Some(1), &bodies, p, n).unwrap(),
            Joint::hinge("hinge to world", 1, None, &bodies, p, n).unwrap(),
            Joint::prismatic("slider", 0, Some(1), &bodies, Some(n)).unwrap(),
            Joint::prismatic("centre slider", 1, Some(0), &bodies, None).unwrap(),
            Joint::prismatic("slider to world", 0, None, &bodies, Some(n)).unwrap(),
            Joint::target_rotation("cabin", 1, &bodies, bodies[1].pose.rotation).unwrap(),
        ];
        (bodies, joints)
    }

    /// Moves both bodies off the assembled configuration and gives them
    /// velocities, so that every term of the rows is exercised.
    fn scramble(rng: &mut Pcg64, bodies: &mut [RigidBody]) {
        for body in bodies {
            body.pose = displaced(&body.pose, &six(&vector(rng, 0.3), &vector(rng, 0.5)));
            body.velocity = vector(rng, 1.0);
            body.angular_velocity = vector(rng, 2.0);
        }
    }

    fn rows(joint: &Joint, bodies: &[RigidBody]) -> Vec<ConstraintRow> {
        let mut out = Vec::new();
        joint.rows(bodies, &mut out);
        assert_eq!(out.len(), joint.row_count(), "{}", joint.name);
        out
    }

    /// Bodies with coordinate `k` of `(x_0, θ_0, x_1, θ_1)` displaced by `h`.
    fn displaced_bodies(bodies: &[RigidBody], k: usize, h: f64) -> Vec<RigidBody> {
        let mut moved = bodies.to_vec();
        let mut step = Vector6::zeros();
        step[k % 6] = h;
        moved[k / 6].pose = displaced(&moved[k / 6].pose, &step);
        moved
    }

    /// `Ċ = J_a u_a + J_b u_b` (eq 57), `u = (v, ω)`.
    fn constraint_rate(row: &ConstraintRow, bodies: &[RigidBody]) -> f64 {
        let u = |body: &RigidBody| six(&body.velocity, &body.angular_velocity);
        row.jacobian_a.dot(&u(&bodies[row.a]))
            + row.b.map_or(0.0, |b| row.jacobian_b.dot(&u(&bodies[b])))
    }

    fn analytic(row: &ConstraintRow, body: usize, k: usize) -> f64 {
        if body == row.a {
            row.jacobian_a[k]
        } else if Some(body) == row.b {
            row.jacobian_b[k]
        } else {
            0.0
        }
    }

    #[test]
    fn constraints_vanish_at_construction_and_under_the_free_motions() {
        let mut rng = Pcg64::seed_from_u64(3);
        for _ in 0..20 {
            let (mut bodies, joints) = assembly(&mut rng);
            for joint in &joints {
                for row in rows(joint, &bodies) {
                    assert!(row.value.abs() < 1e-12, "{}: C = {}", joint.name, row.value);
                }
            }
            // A hinge turns freely about its axis, a ball about any axis
            // through its anchor, a slider along its axis.
            let turned = |bodies: &[RigidBody], p: &Point3<f64>, axis: &Vector3<f64>| {
                let turn =
                    Isometry3::rotation_wrt_point(UnitQuaternion::from_scaled_axis(*axis), *p);
                let mut moved = bodies.to_vec();
                moved[1].pose = turn * moved[1].pose;
                moved
            };
            let max_value = |joint: &Joint, bodies: &[RigidBody]| {
                rows(joint, bodies)
                    .iter()
                    .map(|r| r.value.abs())
                    .fold(0.0, f64::max)
            };
            let (ball, hinge, slider) = (&joints[0], &joints[2], &joints[4]);
            let JointKind::Hinge {
                anchor_a, axis_a, ..
            } = &hinge.kind
            else {
                unreachable!()
            };
            let p = bodies[0].pose * anchor_a;
            let n = bodies[0].pose.rotation * axis_a.as_ref();
            let about_axis = turned(&bodies, &p, &(1.3 * n));
            assert!(max_value(hinge, &about_axis) < 1e-12);
            let across = turned(&bodies, &p, &(0.1 * n.cross(&Vector3::x())));
            assert!(max_value(hinge, &across) > 1e-3);
            assert!(max_value(ball, &turned(&bodies, &p, &vector(&mut rng, 2.0))) < 1e-12);

            let JointKind::Prismatic { axis_a, .. } = &slider.kind else {
                unreachable!()
            };
            let along = bodies[0].pose.rotation * axis_a.as_ref();
            assert!(slider.slide(&bodies).unwrap().abs() < 1e-12);
            bodies[1].pose.translation.vector += 0.37 * along;
            assert!(max_value(slider, &bodies) < 1e-12);
            assert!((slider.slide(&bodies).unwrap() - 0.37).abs() < 1e-12);
            bodies[1].pose.translation.vector += 0.01 * along.cross(&Vector3::y());
            assert!(max_value(slider, &bodies) > 1e-4);
        }
    }

    #[test]
    fn jacobians_match_finite_differences_of_the_constraints() {
        let mut rng = Pcg64::seed_from_u64(11);
        let h = 1e-6;
        let mut worst = 0.0f64;
        for _ in 0..20 {
            let (mut bodies, joints) = assembly(&mut rng);
            scramble(&mut rng, &mut bodies);
            for joint in &joints {
                let base = rows(joint, &bodies);
                for k in 0..12 {
                    let plus = rows(joint, &displaced_bodies(&bodies, k, h));
                    let minus = rows(joint, &displaced_bodies(&bodies, k, -h));
                    for (i, row) in base.iter().enumerate() {
                        let fd = (plus[i].value - minus[i].value) / (2.0 * h);
                        let error = (fd - analytic(row, k / 6, k % 6)).abs();
                        assert!(
                            error < 1e-7,
                            "{} row {i} coordinate {k}: {error:e}",
                            joint.name
                        );
                        worst = worst.max(error);
                    }
                }
            }
        }
        eprintln!("worst |∂C/∂q − finite difference| = {worst:.1e}");
    }

    /// `C` along `x(t) = x + t v`, `R(t) = exp(t ω) R`: zero linear and
    /// angular accelerations.
    fn values_at(joint: &Joint, bodies: &[RigidBody], t: f64) -> Vec<f64> {
        let mut moved = bodies.to_vec();
        for body in &mut moved {
            body.advance_pose(t);
        }
        rows(joint, &moved).iter().map(|r| r.value).collect()
    }

    #[test]
    fn velocity_products_match_the_second_derivative_along_free_motion() {
        let mut rng = Pcg64::seed_from_u64(17);
        let h = 1e-4;
        let (mut worst_rate, mut worst_product) = (0.0f64, 0.0f64);
        for _ in 0..20 {
            let (mut bodies, joints) = assembly(&mut rng);
            scramble(&mut rng, &mut bodies);
            for joint in &joints {
                let base = rows(joint, &bodies);
                let (plus, minus) = (values_at(joint, &bodies, h), values_at(joint, &bodies, -h));
                for (i, row) in base.iter().enumerate() {
                    let rate = (plus[i] - minus[i]) / (2.0 * h);
                    let second = (plus[i] - 2.0 * row.value + minus[i]) / (h * h);
                    let rate_error = (rate - constraint_rate(row, &bodies)).abs();
                    let product_error = (second - row.velocity_product).abs();
                    assert!(
                        rate_error < 1e-6,
                        "{} row {i}: Ċ off by {rate_error:e}",
                        joint.name
                    );
                    assert!(
                        product_error < 1e-5,
                        "{} row {i}: C̈ off by {product_error:e}",
                        joint.name
                    );
                    worst_rate = worst_rate.max(rate_error);
                    worst_product = worst_product.max(product_error);
                }
            }
        }
        eprintln!("worst Ċ error {worst_rate:.1e}, worst C̈ error {worst_product:.1e}");
    }

    #[test]
    fn hinge_and_slider_leave_seven_degrees_of_freedom() {
        let mut rng = Pcg64::seed_from_u64(5);
        for _ in 0..10 {
            let (bodies, joints) = assembly(&mut rng);
            for (joint, rank) in joints.iter().zip([3, 3, 5, 5, 5, 5, 5, 3]) {
                let rows = rows(joint, &bodies);
                let jacobian = DMatrix::from_fn(rows.len(), 12, |i, k| {
                    if k < 6 {
                        rows[i].jacobian_a[k]
                    } else {
                        rows[i].jacobian_b[k - 6]
                    }
                });
                assert_eq!(jacobian.rank(1e-9), rank, "{}", joint.name);
            }
        }
    }

    #[test]
    fn controller_gradients_match_finite_differences_of_the_wrenches() {
        let mut rng = Pcg64::seed_from_u64(23);
        let h = 1e-6;
        let pd = PdController {
            stiffness: 350.0,
            damping: 12.0,
            target: 0.2,
        };
        let wrenches = |joint: &Joint, bodies: &[RigidBody]| {
            let mut forces = Forces::default();
            forces.reset(bodies.len());
            joint.add_control_forces(bodies, &mut forces);
            forces
        };
        let mut worst = 0.0f64;
        for _ in 0..20 {
            let (mut bodies, joints) = assembly(&mut rng);
            scramble(&mut rng, &mut bodies);
            for joint in joints.into_iter().filter(|j| j.slide(&bodies).is_some()) {
                let joint = joint.with_controller(pd).unwrap();
                let forces = wrenches(&joint, &bodies);
                // Action and reaction: no net force.
                if let Some(b) = joint.b {
                    assert!(
                        (forces.wrench[joint.a] + forces.wrench[b])
                            .fixed_rows::<3>(0)
                            .norm()
                            < 1e-12
                    );
                }
                for on in 0..2 {
                    for by in 0..2 {
                        let (mut position, mut velocity) = (Matrix6::zeros(), Matrix6::zeros());
                        for g in forces.gradients.iter().filter(|g| g.on == on && g.by == by) {
                            position += g.position;
                            velocity += g.velocity;
                        }
                        for k in 0..6 {
                            let q = 6 * by + k;
                            let fd_position = (wrenches(&joint, &displaced_bodies(&bodies, q, h))
                                .wrench[on]
                                - wrenches(&joint, &displaced_bodies(&bodies, q, -h)).wrench[on])
                                / (2.0 * h);
                            let kicked = |s: f64| {
                                let mut moved = bodies.clone();
                                if k < 3 {
                                    moved[by].velocity[k] += s;
                                } else {
                                    moved[by].angular_velocity[k - 3] += s;
                                }
                                wrenches(&joint, &moved).wrench[on]
                            };
                            let fd_velocity = (kicked(h) - kicked(-h)) / (2.0 * h);
                            for (analytic, fd) in [
                                (position.column(k), fd_position),
                                (velocity.column(k), fd_velocity),
                            ] {
                                let error = (analytic - fd).norm() / (1.0 + fd.norm());
                                assert!(
                                    error < 1e-6,
                                    "{} on {on} by {by} column {k}: {error:e}",
                                    joint.name
                                );
                                worst = worst.max(error);
                            }
                        }
                    }
                }
            }
        }
        eprintln!("worst relative PD gradient error {worst:.1e}");
    }

    #[test]
    fn controller_pair_is_collinear_on_the_slide_line() {
        let mut rng = Pcg64::seed_from_u64(29);
        let (mut bodies, joints) = assembly(&mut rng);
        let slider = joints[4]
            .clone()
            .with_controller(PdController {
                stiffness: 100.0,
                damping: 0.0,
                target: 0.5,
            })
            .unwrap();
        let JointKind::Prismatic { axis_a, .. } = &slider.kind else {
            unreachable!()
        };
        let along = bodies[0].pose.rotation * axis_a.as_ref();
        bodies[1].pose.translation.vector += 0.2 * along;
        let mut forces = Forces::default();
        forces.reset(2);
        slider.add_control_forces(&bodies, &mut forces);
        // F = k_p (s − L) a = 100 (0.2 − 0.5) a on a: pulls a towards b's
        // far side, and the pair's moment about the origin cancels.
        let force_a = forces.wrench[0].fixed_rows::<3>(0).into_owned();
        assert!((force_a - (-30.0) * along).norm() < 1e-10);
        let moment = |i: usize| {
            let w = forces.wrench[i];
            let f = w.fixed_rows::<3>(0).into_owned();
            bodies[i].pose.translation.vector.cross(&f) + w.fixed_rows::<3>(3)
        };
        assert!((moment(0) + moment(1)).norm() < 1e-10);
    }

    #[test]
    fn baumgarte_decay_is_critically_damped() {
        // A body whose centre is ball-jointed to the world, displaced by C₀:
        // J = (I, 0), so eq 56 with β = α²/4 gives ẍ = −(C̈₀ + α Ċ + β C) and
        // C(t) = C₀ (1 + α t/2) e^{−α t/2}.
        let (alpha, beta) = (8.0, 16.0);
        let mut bodies = vec![body(Isometry3::identity())];
        let joint = Joint::ball("pin", 0, None, &bodies, Point3::origin()).unwrap();
        let c0 = Vector3::new(0.01, -0.02, 0.005);
        bodies[0].pose.translation.vector = c0;
        let dt = 1e-5;
        let mut worst = 0.0f64;
        for step in 1..=100_000 {
            let acceleration = Vector3::from_iterator(rows(&joint, &bodies).iter().map(|r| {
                -(r.velocity_product + alpha * constraint_rate(r, &bodies) + beta * r.value)
            }));
            bodies[0].velocity += dt * acceleration;
            bodies[0].advance_pose(dt);
            let t = step as f64 * dt;
            let exact = c0 * (1.0 + 0.5 * alpha * t) * (-0.5 * alpha * t).exp();
            let c = bodies[0].pose.translation.vector;
            worst = worst.max((c - exact).norm() / c0.norm());
            assert!(c.dot(&c0) > 0.0, "overshoot at t = {t}");
        }
        eprintln!("worst relative deviation from the critically damped decay {worst:.1e}");
        assert!(worst < 1e-4);
    }

    #[test]
    fn bad_joints_are_rejected_by_name() {
        let bodies = vec![body(Isometry3::identity()), body(Isometry3::identity())];
        let p = Point3::origin();
        let error = Joint::ball("elbow", 0, Some(2), &bodies, p).unwrap_err();
        assert_eq!(
            error.to_string(),
            "joint `elbow`: body index 2 is out of range (2 bodies)"
        );
        let error = Joint::hinge("knee", 1, Some(1), &bodies, p, Vector3::x()).unwrap_err();
        assert_eq!(error.to_string(), "joint `knee` joins body 1 to itself");
        let error = Joint::hinge("wrist", 0, Some(1), &bodies, p, Vector3::zeros()).unwrap_err();
        assert_eq!(
            error,
            JointError::ZeroAxis {
                joint: "wrist".into()
            }
        );
        let error = Joint::prismatic("boom", 0, Some(1), &bodies, None).unwrap_err();
        assert_eq!(
            error,
            JointError::CoincidentCentres {
                joint: "boom".into()
            }
        );
        let ball = Joint::ball("hip", 0, None, &bodies, p).unwrap();
        let pd = PdController {
            stiffness: 1.0,
            damping: 1.0,
            target: 0.0,
        };
        assert_eq!(
            ball.with_controller(pd).unwrap_err(),
            JointError::ControllerNotPrismatic {
                joint: "hip".into()
            }
        );
        let slider = Joint::prismatic("arm", 0, Some(1), &bodies, Some(Vector3::z())).unwrap();
        let negative = PdController {
            stiffness: -1.0,
            ..pd
        };
        assert!(matches!(
            slider.clone().with_controller(negative),
            Err(JointError::InvalidController { .. })
        ));
        let mut broken = slider.clone();
        broken.b = Some(7);
        assert!(matches!(
            broken.check(2),
            Err(JointError::BodyOutOfRange { body: 7, .. })
        ));
    }

    fn largest_value(joint: &Joint, bodies: &[RigidBody]) -> f64 {
        rows(joint, bodies)
            .iter()
            .map(|r| r.value.abs())
            .fold(0.0, f64::max)
    }

    #[test]
    fn post_stabilisation_converges_quadratically_and_keeps_the_centre_of_mass() {
        let mut rng = Pcg64::seed_from_u64(11);
        let island = [0, 1];
        for _ in 0..10 {
            let (assembled, joints) = assembly(&mut rng);
            for joint in &joints {
                let mut bodies = assembled.clone();
                for body in &mut bodies {
                    body.pose = displaced(
                        &body.pose,
                        &six(&vector(&mut rng, 1e-3), &vector(&mut rng, 1e-3)),
                    );
                }
                let centre = |b: &[RigidBody]| {
                    b.iter()
                        .map(|body| body.mass * body.pose.translation.vector)
                        .sum::<Vector3<f64>>()
                };
                let start_centre = centre(&bodies);
                let mut residuals = vec![largest_value(joint, &bodies)];
                for _ in 0..crate::world::POST_STABILISATION_PASSES {
                    let correction = crate::system::constraint_correction(
                        &bodies,
                        &island,
                        &rows(joint, &bodies),
                    )
                    .unwrap();
                    for (body, [dx, dtheta]) in bodies.iter_mut().zip(&correction) {
                        body.displace(dx, dtheta);
                    }
                    residuals.push(largest_value(joint, &bodies));
                }
                let (r0, r1) = (residuals[0], residuals[1]);
                assert!(r0 > 1e-5, "{}: not displaced ({r0:e})", joint.name);
                assert!(r1 < 10.0 * r0 * r0, "{}: {residuals:?}", joint.name);
                assert!(
                    residuals.last().is_some_and(|&r| r < 1e-14),
                    "{}: {residuals:?}",
                    joint.name
                );
                if joint.b.is_some() {
                    // Internal rows' linear parts are equal and opposite.
                    assert!(
                        (centre(&bodies) - start_centre).norm() < 1e-15,
                        "{}: the centre of mass moved",
                        joint.name
                    );
                }
            }
        }
    }

    #[test]
    fn removing_angular_momentum_keeps_momentum_and_the_joints() {
        let mut rng = Pcg64::seed_from_u64(12);
        let island = [0, 1];
        let (mut bodies, joints) = assembly(&mut rng);
        // A rigid turn of both bodies moves them together: only the joints
        // between them stay satisfied.
        let internal: Vec<&Joint> = joints.iter().filter(|j| j.b.is_some()).collect();
        for body in &mut bodies {
            body.velocity = vector(&mut rng, 1.0);
            body.angular_velocity = vector(&mut rng, 2.0);
        }
        let momentum = |b: &[RigidBody]| {
            b.iter()
                .map(|body| body.mass * body.velocity)
                .sum::<Vector3<f64>>()
        };
        let rates = |b: &[RigidBody]| -> Vec<f64> {
            internal
                .iter()
                .flat_map(|j| rows(j, b))
                .map(|r| constraint_rate(&r, b))
                .collect()
        };
        let (linear, angular, before) = (
            momentum(&bodies),
            crate::system::angular_momentum(&bodies, &island),
            rates(&bodies),
        );
        let excess = vector(&mut rng, 0.1);
        crate::system::remove_angular_momentum(&mut bodies, &island, &excess);
        let change = crate::system::angular_momentum(&bodies, &island) - angular;
        assert!(
            (change + excess).norm() < 1e-14,
            "{change} against −{excess}"
        );
        assert!((momentum(&bodies) - linear).norm() < 1e-14);
        for (after, before) in rates(&bodies).iter().zip(&before) {
            assert!((after - before).abs() < 1e-12, "Ċ {before} → {after}");
        }
    }
}
