//! The penalty contact force laws and their exact gradients (Xu, Zhao &
//! Barbič §4.1–4.2): every contact of the narrow phase gives a force on
//! both bodies, with its gradient with respect to both bodies' poses and
//! velocities.
//!
//! For one contact (see [`crate::narrow_phase`] for `P`, `d`, `a`, `m`):
//!
//! ```text
//! F_S = k d m,  F_A = −F_S                    (eqs 19–21, forces from the shell's normal)
//! τ_S = r_S × F_S,  τ_A = r_A × F_A           (eq 20)
//! δd = aᵀ (δx_S − [r_S]× δθ_S − δx_A + [r_A]× δθ_A),   δm = −[m]× δθ_S   (eqs 22–29)
//! ```
//!
//! The paper's eq 19 writes `F_B = k d N̂` with `N̂` the point's inward
//! normal; the extraction loses the sign convention, so the direction is
//! derived here: the force pushes `S` out of `A`, along `−m`.
//!
//! Damping (§4.2, eq 42) acts on the relative velocity of the two bodies'
//! material points at `P`, `u = v_S + ω_S × r_S − v_A − ω_A × r_A`.
//! The paper damps all of it, `F_S = −c u` ([`DampingMode::Full`]), which
//! adds viscous drag to sliding. The default ([`DampingMode::Normal`])
//! damps only the rate of penetration `ḋ = aᵀ u`, along the field's
//! gradient: `F_S = −c ḋ a`, so that `F_S · u = −c ḋ² ≤ 0`. Damping `mᵀ u`
//! along `m` would drag a sliding box through the shell points of its side
//! faces that dip below the floor at its bottom edges (their normals lie
//! along the slide): 4.8 % less than Coulomb's acceleration on a 30°
//! incline. Damping `ḋ` along `m` would push those points sideways in
//! proportion to the box's fall, which is not dissipative: a 4 cm cube
//! dropped 3 cm at 5 ms steps spun up to 2,300 rad/s.

use crate::body::RigidBody;
use crate::forces::Forces;
use crate::narrow_phase::PairContact;
use haptic_contact::StiffnessScaling;
use haptic_core::{skew, Matrix6, Vector6};
use nalgebra::{Matrix3, SMatrix, Vector3};

pub use haptic_schema::physics::DampingMode;

/// Penalty contact parameters between bodies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactParameters {
    /// `k` per finest-level shell point (N/m), eq 19.
    pub stiffness: f64,
    /// `c` per finest-level shell point (N·s/m), eq 42.
    pub damping: f64,
    pub damping_mode: DampingMode,
    /// `N0` of eq 77, counted per body pair.
    pub scaling: StiffnessScaling,
    /// `k_f` of the friction anchors per finest-level point (N/m).
    pub friction_stiffness: f64,
    /// Shell points within this distance of the other body's surface (m)
    /// are kept from a pair's tree traversal and re-examined alone at the
    /// following steps, until the pair has moved far enough for a point
    /// from beyond it to reach the surface (see [`ContactDetector`]).
    pub detection_margin: f64,
}

impl Default for ContactParameters {
    fn default() -> Self {
        Self {
            stiffness: 2.0e4,
            damping: 20.0,
            damping_mode: DampingMode::Normal,
            scaling: StiffnessScaling::NONE,
            friction_stiffness: 2.0e3,
            detection_margin: 3.0e-3,
        }
    }
}

/// `∂F_S/∂(x_S, θ_S, x_A, θ_A)` or `∂F_S/∂(v_S, ω_S, v_A, ω_A)`.
pub type ForceGradient = SMatrix<f64, 3, 12>;

/// A force at a contact point on the shell body `S` (the field body `A`
/// takes `−F`) and its gradients with respect to both bodies' poses and
/// velocities, before the handle terms.
#[derive(Clone, Copy, Debug)]
pub struct PointForce {
    pub force: Vector3<f64>,
    /// `∂F/∂(x_S, θ_S, x_A, θ_A)`; `None`: the force is held constant.
    pub position: Option<ForceGradient>,
    /// `∂F/∂(v_S, ω_S, v_A, ω_A)`.
    pub velocity: Option<ForceGradient>,
}

impl std::ops::AddAssign<&PointForce> for PointForce {
    fn add_assign(&mut self, other: &PointForce) {
        let add = |to: &mut Option<ForceGradient>, from: &Option<ForceGradient>| {
            if let Some(from) = from {
                *to = Some(to.map_or(*from, |to| to + from));
            }
        };
        self.force += other.force;
        add(&mut self.position, &other.position);
        add(&mut self.velocity, &other.velocity);
    }
}

/// The wrench a force `F` at `P` puts on `S` (`+F`) and on `A` (`−F`),
/// and the gradient blocks, from the force's own gradients. The handle
/// terms follow from `δr_S = −[r_S]× δθ_S` and
/// `δr_A = δx_S − [r_S]× δθ_S − δx_A`.
pub(crate) fn add_point_force(
    contact: &PairContact,
    bodies: &[RigidBody],
    point_force: &PointForce,
    forces: &mut Forces,
) {
    let force = &point_force.force;
    let (position_gradient, velocity_gradient) =
        (point_force.position.as_ref(), point_force.velocity.as_ref());
    let (s, a) = (contact.shell_body, contact.field_body);
    let rs = contact.shell_handle(bodies);
    let ra = contact.field_handle(bodies);
    let skew_f = skew(force);
    let torque_s = rs.cross(force);
    let torque_a = -ra.cross(force);
    forces.add_wrench(
        s,
        &Vector6::new(
            force.x, force.y, force.z, torque_s.x, torque_s.y, torque_s.z,
        ),
    );
    forces.add_wrench(
        a,
        &Vector6::new(
            -force.x, -force.y, -force.z, torque_a.x, torque_a.y, torque_a.z,
        ),
    );
    let Some(position_gradient) = position_gradient else {
        return;
    };

    // Rows (F, τ) on S and on A, columns (S, A), added in place where both
    // bodies move: the force rows are ±∂F, the torque rows the arm times
    // ∂F (τ_S = r_S × F, τ_A = −r_A × F) plus the handle terms of
    // ∂τ/∂(x_S, θ_S, x_A, θ_A).
    let moving = [bodies[s].is_dynamic(), bodies[a].is_dynamic()];
    let blocks = forces.pair_blocks(s, a, moving);
    let sign = [1.0, -1.0];
    // τ's arm: [r_S]× on S, −[r_A]× on A.
    let arm = [rs, -ra];
    // [F]×[r_S]×: τ_S's handle term by θ_S, and −τ_A's.
    let turn = skew_product(force, &rs);
    for (on, row_blocks) in blocks.iter().enumerate() {
        for (by, k) in row_blocks.iter().enumerate() {
            let Some(k) = *k else {
                continue;
            };
            let block = &mut forces.gradients[k];
            let add = |to: &mut Matrix6, g: &ForceGradient, handles: bool| {
                let g = g.fixed_view::<3, 6>(0, 6 * by);
                let mut torque = SMatrix::<f64, 3, 6>::zeros();
                for (mut column, g) in torque.column_iter_mut().zip(g.column_iter()) {
                    column.copy_from(&arm[on].cross(&g));
                }
                if handles {
                    let (mut by_x, mut by_theta) = torque.columns_range_pair_mut(0..3, 3..6);
                    match (on, by) {
                        (0, 0) => by_theta += &turn,
                        (1, 0) => {
                            by_x += &skew_f;
                            by_theta -= &turn;
                        }
                        (1, 1) => by_x -= &skew_f,
                        _ => {}
                    }
                }
                let mut force_rows = to.fixed_view_mut::<3, 6>(0, 0);
                force_rows += g * sign[on];
                let mut torque_rows = to.fixed_view_mut::<3, 6>(3, 0);
                torque_rows += torque;
            };
            add(&mut block.position, position_gradient, true);
            if let Some(velocity_gradient) = velocity_gradient {
                add(&mut block.velocity, velocity_gradient, false);
            }
        }
    }
}

/// Penalty force `F_S = k d m` of one contact (stiffness `k` already
/// weighted and scaled) and its exact gradients (eqs 31–40 for two moving
/// bodies, rotating normal included).
pub(crate) fn penalty(contact: &PairContact, bodies: &[RigidBody], k: f64) -> PointForce {
    let (d, m, a) = (contact.distance, contact.normal, contact.distance_gradient);
    let rs = contact.shell_handle(bodies);
    let ra = contact.field_handle(bodies);
    // k m aᵀ, and k m aᵀ[r]× = k m (a × r)ᵀ.
    let km = m * k;
    let kma: Matrix3<f64> = km * a.transpose();
    let mut gradient = ForceGradient::zeros();
    gradient.fixed_view_mut::<3, 3>(0, 0).copy_from(&kma);
    gradient
        .fixed_view_mut::<3, 3>(0, 3)
        .copy_from(&(-km * a.cross(&rs).transpose() - skew(&m) * (k * d)));
    gradient.fixed_view_mut::<3, 3>(0, 6).copy_from(&(-kma));
    gradient
        .fixed_view_mut::<3, 3>(0, 9)
        .copy_from(&(km * a.cross(&ra).transpose()));
    PointForce {
        force: m * (k * d),
        position: Some(gradient),
        velocity: None,
    }
}

/// `[a]×[b]× = b aᵀ − (a · b) I`, without forming either skew matrix.
fn skew_product(a: &Vector3<f64>, b: &Vector3<f64>) -> Matrix3<f64> {
    b * a.transpose() - Matrix3::identity() * a.dot(b)
}

/// The penalty force of one contact and, for `c > 0`, its damping, summed.
pub(crate) fn contact_force(
    contact: &PairContact,
    bodies: &[RigidBody],
    k: f64,
    c: f64,
    mode: DampingMode,
) -> PointForce {
    let mut total = penalty(contact, bodies, k);
    if c > 0.0 {
        total += &damping(contact, bodies, c, mode);
    }
    total
}

/// Adds each contact's penalty force (`stiffnesses[i]`, already weighted
/// and scaled) and its damping (`damping` per finest-level point, weighted
/// by the contact's weight), with their exact gradients, to `forces`.
pub fn add_contact_forces(
    contacts: &[PairContact],
    stiffnesses: &[f64],
    bodies: &[RigidBody],
    damping: f64,
    mode: DampingMode,
    forces: &mut Forces,
) {
    for (contact, &k) in contacts.iter().zip(stiffnesses) {
        let c = damping * contact.weight as f64;
        add_point_force(
            contact,
            bodies,
            &contact_force(contact, bodies, k, c, mode),
            forces,
        );
    }
}

/// Contact damping (§4.2) of one contact and its gradients with respect to
/// velocities (eqs 43–51) and poses (through the handles, the rotating
/// normal and, for [`DampingMode::Normal`], the field's curvature).
pub(crate) fn damping(
    contact: &PairContact,
    bodies: &[RigidBody],
    c: f64,
    mode: DampingMode,
) -> PointForce {
    let (bs, ba) = (&bodies[contact.shell_body], &bodies[contact.field_body]);
    let a = contact.distance_gradient;
    let rs = contact.shell_handle(bodies);
    let ra = contact.field_handle(bodies);
    let (ws, wa) = (bs.state.angular_velocity, ba.state.angular_velocity);
    let u = bs.state.velocity + ws.cross(&rs) - ba.state.velocity - wa.cross(&ra);
    // ∂u/∂(v_S, ω_S, v_A, ω_A) = [I, −[r_S]×, −I, [r_A]×], and
    // ∂u/∂(x_S, θ_S, x_A, θ_A) = [−[ω_A]×, ([ω_A]× − [ω_S]×)[r_S]×, [ω_A]×, 0]
    // (the handles move), both times `scale`.
    let relative_motion = |scale: f64| {
        let mut du = ForceGradient::zeros();
        du.fixed_view_mut::<3, 3>(0, 0)
            .copy_from(&(Matrix3::identity() * scale));
        du.fixed_view_mut::<3, 3>(0, 3)
            .copy_from(&(skew(&rs) * -scale));
        du.fixed_view_mut::<3, 3>(0, 6)
            .copy_from(&(Matrix3::identity() * -scale));
        du.fixed_view_mut::<3, 3>(0, 9)
            .copy_from(&(skew(&ra) * scale));
        du
    };
    let moving_handles = |scale: f64| {
        let turning = skew_product(&(wa - ws), &rs);
        let skew_wa = skew(&wa) * scale;
        let mut du = ForceGradient::zeros();
        du.fixed_view_mut::<3, 3>(0, 0).copy_from(&(-skew_wa));
        du.fixed_view_mut::<3, 3>(0, 3)
            .copy_from(&(turning * scale));
        du.fixed_view_mut::<3, 3>(0, 6).copy_from(&skew_wa);
        du
    };

    let (force, velocity_gradient, position_gradient) = match mode {
        DampingMode::Normal => {
            // F_S = −c ḋ a, ḋ = aᵀ u: only the rate of penetration is
            // damped, along the field's gradient, so F_S · u = −c ḋ² ≤ 0.
            let (du_dvel, du_dpos) = (relative_motion(1.0), moving_handles(1.0));
            let rate = a.dot(&u);
            let force = a * (-c * rate);
            let velocity_gradient = a * (a.transpose() * du_dvel) * (-c);
            // δa = H_w δP_A − [a]× δθ_A, H_w the field's world Hessian.
            let hessian = field_hessian(contact, bodies);
            let mut da = hessian * du_dvel;
            let mut block = da.fixed_view::<3, 3>(0, 9).into_owned();
            block -= skew(&a);
            da.fixed_view_mut::<3, 3>(0, 9).copy_from(&block);
            let position_gradient = ((a * u.transpose() + Matrix3::identity() * rate) * da
                + a * (a.transpose() * du_dpos))
                * (-c);
            (force, velocity_gradient, position_gradient)
        }
        DampingMode::Full => (-c * u, relative_motion(-c), moving_handles(-c)),
    };
    PointForce {
        force,
        position: Some(position_gradient),
        velocity: Some(velocity_gradient),
    }
}

/// Step of the differences of the field's gradient (m). Inside a cell the
/// trilinear interpolant's gradient is linear along each axis, so a
/// one-sided difference gives its Hessian exactly; of the two sides the one
/// with the smaller change is taken, so that a point within this step of a
/// cell face does not difference across the gradient's jump there.
const HESSIAN_STEP: f64 = 1e-7;

/// The world Hessian `R_A H R_Aᵀ` of the field body's distance at the
/// contact point.
fn field_hessian(contact: &PairContact, bodies: &[RigidBody]) -> Matrix3<f64> {
    let body = &bodies[contact.field_body];
    let Some(geometry) = &body.model.geometry else {
        return Matrix3::zeros();
    };
    let local = body.state.pose.inverse() * contact.position;
    let (_, centre) = geometry.field.value_gradient(&local);
    let mut hessian = Matrix3::zeros();
    for axis in 0..3 {
        let mut step = Vector3::zeros();
        step[axis] = HESSIAN_STEP;
        let (_, plus) = geometry.field.value_gradient(&(local + step));
        let (_, minus) = geometry.field.value_gradient(&(local - step));
        let (forward, backward) = (plus - centre, centre - minus);
        let change = if forward.norm() <= backward.norm() {
            forward
        } else {
            backward
        };
        hessian.set_column(axis, &(change / HESSIAN_STEP));
    }
    let r = body.state.pose.rotation.to_rotation_matrix();
    r.matrix() * hessian * r.matrix().transpose()
}
