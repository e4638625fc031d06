//! Yamane & Nakamura's penalty friction springs (Zhao, Li & Barbič's ref \[6\]), the
//! baseline of their §5.6, integrated implicitly as they did: the
//! springs' wrench `F_f` and its gradient join `f` and `H` in eqs 7–8.
//!
//! Each contact, keyed by (environment object, shell point), gets an
//! anchor when it appears: a point `w` fixed in the world and a point `b`
//! fixed in the tool, both where the contact point is then.
//! The spring pulls the object's point `m = x + R b` towards `w` in the
//! contact's tangent plane, `F = k_f P_t (w − m)`, `P_t = I − N Nᵀ`, applied
//! at `m` (`τ = r_b × F`, `r_b = R b`). When `‖F‖ > μ‖F_n‖` the contact
//! slides: `F` is clamped onto the cone and the anchor dragged so the
//! spring sits on it (role A moves `w`, role B moves `b`, the sides that
//! are not a shell point). An anchor is released as soon as its contact is
//! missing for a cycle.
//!
//! Gradient w.r.t. `q = (x, θ)` (`δm = δx − [r_b]× δθ`, `N` held fixed),
//! with `G = ∂F/∂m`: `−k_f P_t` for a sticking spring and, for a sliding one
//! of tangential direction `t`, `−(μ‖F_n‖/‖P_t(w − m)‖)(P_t − t tᵀ)`:
//!
//! ```text
//! ∂F/∂x = G          ∂F/∂θ = −G [r_b]×
//! ∂τ/∂x = [r_b]× G   ∂τ/∂θ = [r_b]× ∂F/∂θ + [F]× [r_b]×
//! ```

use crate::anchors::ContactAnchors;
use crate::contact_friction::ContactFriction;
use haptic_contact::{ContactScene, EnvironmentObject, Role};
use haptic_core::{skew, Matrix6, Vector6};
use haptic_friction::StaticFrictionProblem;
use nalgebra::Matrix3;

/// The springs' anchors, sized at construction.
#[derive(Clone, Debug)]
pub struct YamaneSprings {
    anchors: ContactAnchors,
    sliding: usize,
}

impl YamaneSprings {
    /// Room for every shell point of every (environment object, role) pair;
    /// `moving_shell_points` is the tool's shell size (role A).
    pub fn new(environment: &[EnvironmentObject], moving_shell_points: usize) -> Self {
        Self {
            anchors: ContactAnchors::new(environment, moving_shell_points),
            sliding: 0,
        }
    }

    /// Releases every anchor: each contact gets a fresh spring next.
    pub(crate) fn release_all(&mut self) {
        self.anchors.release_all();
    }

    /// Springs that slid (were clamped to the cone) in the last cycle.
    pub fn sliding(&self) -> usize {
        self.sliding
    }

    /// Updates the anchors for the contacts of the last `scene.evaluate` and
    /// adds the springs' wrench to `problem.wrench` and their gradient to
    /// `problem.stiffness`, and each spring's force to `contact_friction`.
    /// `problem` must have just been assembled from `scene` (its contacts
    /// carry the normal forces and `μ`). A `coarse` scene (a budget cut)
    /// reads the anchors of the last full cycle and moves none
    /// ([`ContactAnchors::peek`]).
    pub(crate) fn add_to(
        &mut self,
        scene: &ContactScene,
        stiffness: f64,
        problem: &mut StaticFrictionProblem,
        contact_friction: &mut Vec<ContactFriction>,
        coarse: bool,
    ) {
        if !coarse {
            self.anchors.next_cycle();
        }
        self.sliding = 0;
        let pose = scene.pose();
        let (x, rotation) = (pose.translation.vector, pose.rotation);
        for (contact, friction) in scene.contacts().iter().zip(&problem.contacts) {
            let object = &scene.environment()[contact.environment as usize].pose;
            let mut anchor = if coarse {
                self.anchors.peek(contact, pose, object)
            } else {
                self.anchors.anchor(contact, pose, object)
            };

            let n = contact.normal;
            let projector = Matrix3::identity() - n * n.transpose();
            let r = rotation * anchor.body;
            let stretch = projector * (anchor.world - (x + r));
            let (limit, length) = (friction.friction_limit(), stretch.norm());
            let sliding = stiffness * length > limit;
            let (force, gradient) = if sliding {
                self.sliding += 1;
                let t = stretch / length;
                let clamped = t * limit;
                let dragged = clamped / stiffness - stretch;
                match contact.role {
                    Role::MovingShell => anchor.world += dragged,
                    Role::MovingField => anchor.body -= rotation.inverse_transform_vector(&dragged),
                }
                if !coarse {
                    self.anchors.keep(contact, object, &anchor);
                }
                (clamped, (projector - t * t.transpose()) * (-limit / length))
            } else {
                (stretch * stiffness, projector * -stiffness)
            };

            let (rx, fx) = (skew(&r), skew(&force));
            let df_dtheta = -gradient * rx;
            let mut h = Matrix6::zeros();
            h.fixed_view_mut::<3, 3>(0, 0).copy_from(&gradient);
            h.fixed_view_mut::<3, 3>(0, 3).copy_from(&df_dtheta);
            h.fixed_view_mut::<3, 3>(3, 0).copy_from(&(rx * gradient));
            h.fixed_view_mut::<3, 3>(3, 3)
                .copy_from(&(rx * df_dtheta + fx * rx));
            problem.stiffness += h;
            contact_friction.push(ContactFriction {
                force,
                stuck: !sliding,
            });
            let torque = r.cross(&force);
            problem.wrench += Vector6::new(force.x, force.y, force.z, torque.x, torque.y, torque.z);
        }
    }
}
