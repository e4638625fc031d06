//! Friction between bodies: the anchor-spring model of Yamane & Nakamura
//! that Xu, Zhao & Barbič adopt (§4, its ref \[14\]), its sticking springs implicit: a new
//! contact sets an anchor on `A` where `P` lies; a tangential spring
//! `−k_f s_t` pulls `P` back to it while `k_f |s_t| ≤ μ_s F_n`; beyond, the
//! contact slides with `μ_d F_n` against the spring's direction and the
//! anchor is dragged behind `P` to where the spring carries `μ_d F_n`.

use crate::body::RigidBody;
use crate::forces::Forces;
use crate::narrow_phase::PairContact;
use crate::penalty::{add_point_force, ForceGradient, PointForce};
use foldhash::{HashMap, HashSet};
use haptic_core::skew;
use nalgebra::{Matrix3, Point3, Rotation3, Vector3};

/// The sticking spring `F_S = −k_f (I − m mᵀ)(P − Q)` towards the anchor
/// `Q` (world, fixed on the field body), with its exact pose gradient:
/// `δ(P − Q) = δx_S − [r_S]× δθ_S − δx_A + [Q − x_A]× δθ_A`, `δm = −[m]× δθ_S`.
pub(crate) fn sticking_spring(
    contact: &PairContact,
    bodies: &[RigidBody],
    anchor: &Point3<f64>,
    kf: f64,
) -> PointForce {
    let m = contact.normal;
    let s = contact.position - anchor;
    let projector = Matrix3::identity() - m * m.transpose();
    let force = -kf * (s - m * m.dot(&s));
    let rs = contact.shell_handle(bodies);
    let qa = anchor - Point3::from(bodies[contact.field_body].state.pose.translation.vector);
    // −k_f (I − m mᵀ) ∂s, with (I − m mᵀ)[r]× = [r]× − m (m × r)ᵀ.
    let projected_skew = |r: &Vector3<f64>| skew(r) - m * m.cross(r).transpose();
    // −δ(m mᵀ) s = (m·s)[m]× δθ_S − m (m × s)ᵀ δθ_S.
    let rotating = skew(&m) * m.dot(&s) - m * m.cross(&s).transpose();
    let mut gradient = ForceGradient::zeros();
    gradient
        .fixed_view_mut::<3, 3>(0, 0)
        .copy_from(&(projector * -kf));
    gradient
        .fixed_view_mut::<3, 3>(0, 3)
        .copy_from(&((projected_skew(&rs) - rotating) * kf));
    gradient
        .fixed_view_mut::<3, 3>(0, 6)
        .copy_from(&(projector * kf));
    gradient
        .fixed_view_mut::<3, 3>(0, 9)
        .copy_from(&(projected_skew(&qa) * -kf));
    PointForce {
        force,
        position: Some(gradient),
        velocity: None,
    }
}

/// Adds each contact's sticking spring towards its anchor `anchor(contact)`
/// (world, fixed on the field body; `friction_stiffness` per finest-level
/// point), with its exact pose gradient, to `forces`.
pub fn add_sticking_springs(
    contacts: &[PairContact],
    bodies: &[RigidBody],
    friction_stiffness: f64,
    anchor: impl Fn(&PairContact) -> Point3<f64>,
    forces: &mut Forces,
) {
    for contact in contacts {
        let kf = friction_stiffness * contact.weight as f64;
        let spring = sticking_spring(contact, bodies, &anchor(contact), kf);
        add_point_force(contact, bodies, &spring, forces);
    }
}

/// Coulomb coefficients between two bodies: the geometric mean of theirs.
pub fn pair_friction(a: &RigidBody, b: &RigidBody) -> (f64, f64) {
    (
        (a.model.static_friction * b.model.static_friction).sqrt(),
        (a.model.dynamic_friction * b.model.dynamic_friction).sqrt(),
    )
}

/// What a role's friction springs share: its bodies `(shell, field)`, their
/// Coulomb coefficients and the field body's frame.
#[derive(Clone, Copy)]
struct RoleFrame {
    bodies: (usize, usize),
    friction: (f64, f64),
    rotation: Rotation3<f64>,
    origin: Vector3<f64>,
}

impl RoleFrame {
    fn of(bodies: &[RigidBody], shell: usize, field: usize) -> RoleFrame {
        let pose = &bodies[field].state.pose;
        RoleFrame {
            bodies: (shell, field),
            friction: pair_friction(&bodies[shell], &bodies[field]),
            rotation: pose.rotation.to_rotation_matrix(),
            origin: pose.translation.vector,
        }
    }
}

/// A contact's friction anchor: `(shell body, field body, point)`.
pub type AnchorKey = (usize, usize, u32);

/// Per-contact friction anchors, kept from step to step.
#[derive(Clone, Default)]
pub struct FrictionAnchors {
    /// The anchor in the field body's frame.
    anchors: HashMap<AnchorKey, Point3<f64>>,
    seen: HashMap<AnchorKey, Point3<f64>>,
    /// Whether `seen` holds the anchors from before the last
    /// [`FrictionAnchors::add_friction`] (see [`FrictionAnchors::undo`]).
    undoable: bool,
    /// The last [`FrictionAnchors::add_friction`]'s sliding contacts: the
    /// contact's index, the tangential direction it slid in (world) and
    /// the spring's stretch at the cone's edge, `μ_d F_n / k_f` (m).
    sliding: Vec<(usize, Vector3<f64>, f64)>,
}

/// What the friction springs did in a step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrictionStats {
    pub sticking: usize,
    pub sliding: usize,
}

impl FrictionAnchors {
    /// Hands each contact's friction force over a step of `dt` to
    /// `add(index, force)`, in the contacts' order, and moves the
    /// anchors; anchors of contacts that ended are released. Sticking springs come with their
    /// gradients, so the semi-implicit step takes them implicitly (the
    /// paper steps friction explicitly and notes it could be added to eq 15:
    /// explicit springs over a resting face must stay below `m/h²`, or the
    /// body creeps); the sliding force `μ_d F_n` is explicit. `stiffnesses[i]` is contact `i`'s normal
    /// stiffness, so its normal force is `k_i |d_i|`.
    ///
    /// The contacts in `stopping` stick, anchored where they are: their
    /// explicit sliding force reversed their slip within the step (see
    /// [`FrictionAnchors::reversed`]), so the step is to be taken again
    /// with the slip stopped by the implicit spring instead.
    #[allow(clippy::too_many_arguments)]
    pub fn add_friction(
        &mut self,
        contacts: &[PairContact],
        stiffnesses: &[f64],
        bodies: &[RigidBody],
        friction_stiffness: f64,
        dt: f64,
        stopping: &HashSet<AnchorKey>,
        mut add: impl FnMut(usize, &PointForce),
    ) -> FrictionStats {
        let mut stats = FrictionStats::default();
        self.seen.clear();
        self.sliding.clear();
        // The contacts come role by role: the role's friction and the field
        // body's frame, as a matrix, are worked out once for each.
        let mut role: Option<RoleFrame> = None;
        for (index, (contact, &k)) in contacts.iter().zip(stiffnesses).enumerate() {
            let key = (contact.shell_body, contact.field_body, contact.point);
            let frame = match role {
                Some(frame) if frame.bodies == (key.0, key.1) => frame,
                _ => *role.insert(RoleFrame::of(bodies, key.0, key.1)),
            };
            let RoleFrame {
                friction: (mu_s, mu_d),
                rotation,
                origin,
                ..
            } = frame;
            let kf = friction_stiffness * contact.weight as f64;
            let p = contact.position;
            let stops = stopping.contains(&key);
            let anchor = match self.anchors.get(&key) {
                Some(local) if !stops => rotation * local + origin,
                _ => p,
            };
            let m = contact.normal;
            // The spring's stretch at the end of the step if the contact
            // keeps its relative velocity: a contact about to leave the
            // cone slides now, rather than stick through the step with an
            // implicit force beyond μ_s F_n.
            let (shell, field) = (&bodies[contact.shell_body], &bodies[contact.field_body]);
            let u = shell.point_velocity(&p) - field.point_velocity(&p);
            let s = p - anchor + u * dt;
            let tangential = s - m * m.dot(&s);
            let normal_force = k * (-contact.distance);
            let spring = kf * tangential.norm();
            let anchor = if stops || spring <= mu_s * normal_force {
                stats.sticking += 1;
                add(index, &sticking_spring(contact, bodies, &anchor, kf));
                anchor
            } else {
                stats.sliding += 1;
                let direction = tangential / tangential.norm();
                let slide = mu_d * normal_force;
                let sliding = PointForce {
                    force: -slide * direction,
                    position: None,
                    velocity: None,
                };
                add(index, &sliding);
                self.sliding.push((index, direction, slide / kf));
                p - direction * (slide / kf)
            };
            self.seen
                .insert(key, rotation.inverse_transform_point(&(anchor - origin)));
        }
        std::mem::swap(&mut self.anchors, &mut self.seen);
        self.undoable = true;
        stats
    }

    /// Puts back the anchors from before the last
    /// [`FrictionAnchors::add_friction`] (once; a step taken again starts
    /// from them).
    pub fn undo(&mut self) {
        if std::mem::take(&mut self.undoable) {
            std::mem::swap(&mut self.anchors, &mut self.seen);
        }
    }

    /// The sliding contacts of the last [`FrictionAnchors::add_friction`]
    /// (on `contacts`, as then, over a step of `dt`) whose points now move
    /// back against the way they slid, faster than crosses the friction
    /// cone in a step: the explicit force `μ_d F_n` took away more than
    /// their slip, and they would slide back the next step (a block coming
    /// to rest would otherwise chatter at up to `μ_d g h`, about 1 cm/s at
    /// 5 ms steps).
    /// Into `out`, cleared first.
    pub fn reversed(
        &self,
        contacts: &[PairContact],
        bodies: &[RigidBody],
        dt: f64,
        out: &mut HashSet<AnchorKey>,
    ) {
        out.clear();
        out.extend(
            self.sliding
                .iter()
                .filter(|(index, direction, cone)| {
                    let c = &contacts[*index];
                    let u = bodies[c.shell_body].point_velocity(&c.position)
                        - bodies[c.field_body].point_velocity(&c.position);
                    -u.dot(direction) * dt > *cone
                })
                .map(|(index, _, _)| {
                    let c = &contacts[*index];
                    (c.shell_body, c.field_body, c.point)
                }),
        );
    }

    /// Anchors held now.
    pub fn len(&self) -> usize {
        self.anchors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.anchors.is_empty()
    }
}
