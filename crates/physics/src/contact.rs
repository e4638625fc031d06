//! Penalty contact between two moving rigid bodies, both ways (Xu, Zhao &
//! Barbič §4.1–4.2): each body's point shell is queried in the other's
//! signed distance field, and every penetrating point gives a force on both
//! bodies with its exact gradient with respect to both bodies' poses and
//! velocities.
//!
//! For one contact, with `S` the body carrying the shell point and `A` the
//! body whose field it lies in (all world frame):
//!
//! ```text
//! P = x_S + R_S p,  r_S = P − x_S,  r_A = P − x_A
//! d = φ_A(R_Aᵀ (P − x_A)),  a = R_A ∇φ_A     (d < 0 inside)
//! m = R_S n                                  (S's outward normal: it rotates with S)
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
//!
//! Friction is the anchor-spring model of Yamane & Nakamura that the paper
//! adopts (§4, its ref \[14\]), its sticking springs implicit: a new
//! contact sets an anchor on `A` where `P` lies; a tangential spring
//! `−k_f s_t` pulls `P` back to it while `k_f |s_t| ≤ μ_s F_n`; beyond, the
//! contact slides with `μ_d F_n` against the spring's direction and the
//! anchor is dragged behind `P` to where the spring carries `μ_d F_n`.

use crate::body::RigidBody;
use crate::forces::Forces;
use foldhash::{HashMap, HashSet};
use haptic_contact::StiffnessScaling;
use haptic_core::{skew, Matrix6, Vector6};
use haptic_pointshell::{Contact, NodeBounds, PointTreeTraversal, TraversalBudget};
use nalgebra::{Isometry3, Matrix3, Point3, Rotation3, SMatrix, Vector3};

/// One shell point of `shell_body` inside the field of `field_body`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairContact {
    pub shell_body: usize,
    pub field_body: usize,
    /// Index of the point in the shell body's point shell.
    pub point: u32,
    /// Finest-level shell points this contact stands for.
    pub weight: u32,
    /// `P`, world frame (m).
    pub position: Point3<f64>,
    /// `m = R_S n`: the shell body's outward unit normal at `P`.
    pub normal: Vector3<f64>,
    /// `d` (m), negative inside.
    pub distance: f64,
    /// `a = R_A ∇φ_A`: the world gradient of the field body's distance at `P`.
    pub distance_gradient: Vector3<f64>,
}

impl PairContact {
    /// `r_S = P − x_S`.
    pub fn shell_handle(&self, bodies: &[RigidBody]) -> Vector3<f64> {
        self.position - Point3::from(bodies[self.shell_body].pose.translation.vector)
    }

    /// `r_A = P − x_A`.
    pub fn field_handle(&self, bodies: &[RigidBody]) -> Vector3<f64> {
        self.position - Point3::from(bodies[self.field_body].pose.translation.vector)
    }
}

/// What contact damping acts on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DampingMode {
    /// The rate of penetration `ḋ`, along the field's gradient: sliding is
    /// left to Coulomb friction.
    #[default]
    Normal,
    /// The whole relative velocity, as Xu, Zhao & Barbič §4.2 (adds viscous
    /// drag to sliding).
    Full,
}

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

/// A penetrating shell point is a contact only where its surface faces
/// into the other body: its outward normal within 75° of the field's
/// inward direction, `mᵀ a < −cos 75°`. Points of faces that meet the other
/// body edge-on (a box's side faces dipping below a floor at its bottom
/// edges) would push along their normals, across the contact; these
/// forces do no work on a body at rest but turn it: a frictionless 4 cm
/// cube resting on a table at 5 ms steps spun up to 700 rad/s through
/// them. Drumwright's §III-A selects the bottom of the penetration volume
/// the same way (see `pid`).
pub const FACING_COSINE: f64 = 0.2588190451025208;

/// Pairs of bodies whose bounds, grown by `margin`, overlap, at least one
/// of them dynamic (the broad phase), sorted: a sweep over the world
/// bounds, then the oriented boxes ([`RigidBody::bounds_overlap`]). Bodies
/// without geometry take no part.
pub fn overlapping_pairs(bodies: &[RigidBody], margin: f64, out: &mut Vec<(usize, usize)>) {
    out.clear();
    let bounds: Vec<_> = bodies
        .iter()
        .map(|b| b.world_bounds().map(|a| a.dilated(margin)))
        .collect();
    // Sweep along x.
    let mut order: Vec<usize> = (0..bodies.len()).filter(|&i| bounds[i].is_some()).collect();
    order.sort_by(|&i, &j| {
        bounds[i]
            .unwrap()
            .min
            .x
            .total_cmp(&bounds[j].unwrap().min.x)
    });
    for (k, &i) in order.iter().enumerate() {
        let bi = bounds[i].unwrap();
        for &j in &order[k + 1..] {
            let bj = bounds[j].unwrap();
            if bj.min.x > bi.max.x {
                break;
            }
            if bi.overlaps(&bj)
                && (bodies[i].is_dynamic() || bodies[j].is_dynamic())
                && bodies[i].bounds_overlap(&bodies[j], margin)
            {
                out.push((i.min(j), i.max(j)));
            }
        }
    }
    out.sort_unstable();
}

/// Distance (m) far above the rounding of a point's transform and lookup,
/// far below any penetration that matters.
const ROUNDING_SLACK: f64 = 1e-12;

/// The narrow phase: each pair's shells in the other's field.
///
/// A role (one body's shell in the other's field) is traversed down its
/// point tree for the points whose value lies below the margin `δ`; those
/// are kept with the relative pose `T₀` they were found at. At a later
/// pose `T`, a point `p` moved at most `|t − t₀| + θ |p|` in the field's
/// frame (`θ` the angle of `R₀ᵀR`); for a point now inside the field's
/// positive box (`DistanceField::positive_beyond`: outside it every value
/// is positive), at most
/// `|t_D| + θ |q|` with `q = T p` and `T₀T⁻¹ = (R_D, t_D)`. Its value fell
/// by at most `L` times that, `L` the field's Lipschitz bound. While the
/// smaller bound, with `|p|` and `|q|` at the shell's and the box's
/// reach, times `L` stays below `δ`, no point left out can be inside the
/// field, and only the kept points are looked up: the contacts are exactly
/// a full traversal's, in the same order. Resting and slowly moving pairs
/// are traversed once in many steps. Nor are the kept points whose value
/// at the traversal exceeded `L` times the motion since looked up again:
/// they cannot be inside. A traversal, in turn, passes over the tree nodes
/// whose values at the role's earlier traversals, less `L` times the
/// motion since, still put their subtrees outside ([`NodeBounds`]).
#[derive(Default)]
pub struct ContactDetector {
    margin: f64,
    traversals: HashMap<usize, PointTreeTraversal>,
    near: HashMap<(usize, usize), NearPoints>,
    stats: DetectionStats,
}

/// A role's points below the margin at its last traversal.
struct NearPoints {
    /// `field_from_shell` then (`None` before the first).
    pose: Option<Isometry3<f64>>,
    /// The field values its traversals looked up.
    bounds: NodeBounds,
    /// In traversal order.
    points: Vec<Contact>,
    /// Whether the current detection has used them.
    used: bool,
}

/// What the last detection did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DetectionStats {
    /// Roles (a shell in a field) examined.
    pub roles: usize,
    /// Of which traversed down their trees; the rest reused kept points.
    pub traversals: usize,
    /// Field lookups, traversals and kept points together.
    pub lookups: usize,
}

impl ContactDetector {
    /// A detector keeping the points within `margin` (m) of the surface;
    /// 0 traverses every role at every detection (the default).
    pub fn new(margin: f64) -> ContactDetector {
        ContactDetector {
            margin,
            ..ContactDetector::default()
        }
    }

    /// What the last [`detect`](Self::detect) did.
    pub fn stats(&self) -> DetectionStats {
        self.stats
    }

    /// Appends the contacts of every pair in `pairs` to `out` (cleared
    /// first): for `(i, j)`, `i`'s points in `j`'s field, then `j`'s in `i`'s.
    pub fn detect(
        &mut self,
        bodies: &[RigidBody],
        pairs: &[(usize, usize)],
        out: &mut Vec<PairContact>,
    ) {
        out.clear();
        self.stats = DetectionStats::default();
        for near in self.near.values_mut() {
            near.used = false;
        }
        for &(i, j) in pairs {
            self.detect_role(bodies, i, j, out);
            self.detect_role(bodies, j, i, out);
        }
        self.near.retain(|_, near| near.used);
    }

    fn detect_role(
        &mut self,
        bodies: &[RigidBody],
        shell_body: usize,
        field_body: usize,
        out: &mut Vec<PairContact>,
    ) {
        let (s, a) = (&bodies[shell_body], &bodies[field_body]);
        let (Some(sg), Some(ag)) = (&s.geometry, &a.geometry) else {
            return;
        };
        let field_from_shell = a.pose.inverse() * s.pose;
        let field = ag.field.as_ref();
        let reach = sg.reach();
        let field_reach = field.positive_beyond().map(|b| b.farthest_from_origin());
        let near = self
            .near
            .entry((shell_body, field_body))
            .or_insert_with(|| NearPoints {
                pose: None,
                bounds: NodeBounds::default(),
                points: Vec::new(),
                used: false,
            });
        // How far, times `L`, a point may have come towards the surface
        // since the last traversal: any point, and the points now inside
        // the field's positive box (only they can be inside the field).
        let approach = near.pose.map(|found_at| {
            let angle = found_at.rotation.angle_to(&field_from_shell.rotation);
            // Turned about the shell's origin, or about the field's.
            let about_shell = (field_from_shell.translation.vector - found_at.translation.vector)
                .norm()
                + angle * reach;
            let about_field = field_reach.map_or(f64::INFINITY, |r| {
                (found_at * field_from_shell.inverse())
                    .translation
                    .vector
                    .norm()
                    + angle * r
            });
            let lipschitz = field.lipschitz_bound();
            (
                lipschitz * about_shell,
                lipschitz * about_shell.min(about_field),
            )
        });
        self.stats.roles += 1;
        let approach = match approach {
            Some((_, near_field)) if near_field < self.margin => near_field,
            _ => {
                let traversal = self
                    .traversals
                    .entry(shell_body)
                    .or_insert_with(|| PointTreeTraversal::new(sg.shell.tree()));
                let traversed = traversal.traverse_within(
                    sg.shell.tree(),
                    sg.shell.shell(),
                    field,
                    &field_from_shell,
                    self.margin,
                    TraversalBudget::default(),
                    Some((&mut near.bounds, approach.map_or(0.0, |(any, _)| any))),
                    &mut near.points,
                );
                near.pose = Some(field_from_shell);
                self.stats.traversals += 1;
                self.stats.lookups += traversed.lookups as usize;
                0.0
            }
        };
        near.used = true;
        let shell = sg.shell.shell();
        let (to_field, field_offset) = (
            field_from_shell.rotation.to_rotation_matrix(),
            field_from_shell.translation.vector,
        );
        let (shell_rotation, field_rotation) = (
            s.pose.rotation.to_rotation_matrix(),
            a.pose.rotation.to_rotation_matrix(),
        );
        for c in &near.points {
            // A point that was farther out than it can have come since
            // cannot be inside now (the slack covers the rounding between
            // the traversal's transform and this one).
            if c.distance > approach + ROUNDING_SLACK {
                continue;
            }
            self.stats.lookups += 1;
            let p = &shell.points[c.point as usize];
            let (distance, gradient) = field.value_gradient(&(to_field * p + field_offset));
            let normal = shell_rotation * shell.outward_normals[c.point as usize];
            let distance_gradient = field_rotation * gradient;
            if distance >= 0.0 || normal.dot(&distance_gradient) > -FACING_COSINE {
                continue;
            }
            out.push(PairContact {
                shell_body,
                field_body,
                point: c.point,
                weight: c.weight,
                position: s.pose * p,
                normal,
                distance,
                distance_gradient,
            });
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
pub fn add_point_force(
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
pub fn penalty(contact: &PairContact, bodies: &[RigidBody], k: f64) -> PointForce {
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
pub fn contact_force(
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

/// Contact damping (§4.2) of one contact and its gradients with respect to
/// velocities (eqs 43–51) and poses (through the handles, the rotating
/// normal and, for [`DampingMode::Normal`], the field's curvature).
pub fn damping(
    contact: &PairContact,
    bodies: &[RigidBody],
    c: f64,
    mode: DampingMode,
) -> PointForce {
    let (bs, ba) = (&bodies[contact.shell_body], &bodies[contact.field_body]);
    let a = contact.distance_gradient;
    let rs = contact.shell_handle(bodies);
    let ra = contact.field_handle(bodies);
    let (ws, wa) = (bs.angular_velocity, ba.angular_velocity);
    let u = bs.velocity + ws.cross(&rs) - ba.velocity - wa.cross(&ra);
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
    let Some(geometry) = &body.geometry else {
        return Matrix3::zeros();
    };
    let local = body.pose.inverse() * contact.position;
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
    let r = body.pose.rotation.to_rotation_matrix();
    r.matrix() * hessian * r.matrix().transpose()
}

/// The sticking spring `F_S = −k_f (I − m mᵀ)(P − Q)` towards the anchor
/// `Q` (world, fixed on the field body), with its exact pose gradient:
/// `δ(P − Q) = δx_S − [r_S]× δθ_S − δx_A + [Q − x_A]× δθ_A`, `δm = −[m]× δθ_S`.
pub fn sticking_spring(
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
    let qa = anchor - Point3::from(bodies[contact.field_body].pose.translation.vector);
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

/// Coulomb coefficients between two bodies: the geometric mean of theirs.
pub fn pair_friction(a: &RigidBody, b: &RigidBody) -> (f64, f64) {
    (
        (a.static_friction * b.static_friction).sqrt(),
        (a.dynamic_friction * b.dynamic_friction).sqrt(),
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
        let pose = &bodies[field].pose;
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
    pub fn reversed(
        &self,
        contacts: &[PairContact],
        bodies: &[RigidBody],
        dt: f64,
    ) -> HashSet<AnchorKey> {
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
            })
            .collect()
    }

    /// Anchors held now.
    pub fn len(&self) -> usize {
        self.anchors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.anchors.is_empty()
    }
}

/// Each contact's stiffness: `k` times its weight, scaled per body pair by
/// eq 77 with the pair's contact count.
pub fn contact_stiffnesses(
    contacts: &[PairContact],
    parameters: &ContactParameters,
    out: &mut Vec<f64>,
) {
    out.clear();
    let mut counts: HashMap<(usize, usize), f64> = HashMap::default();
    for c in contacts {
        let pair = (
            c.shell_body.min(c.field_body),
            c.shell_body.max(c.field_body),
        );
        *counts.entry(pair).or_default() += c.weight as f64;
    }
    out.extend(contacts.iter().map(|c| {
        let pair = (
            c.shell_body.min(c.field_body),
            c.shell_body.max(c.field_body),
        );
        parameters.stiffness * c.weight as f64 * parameters.scaling.factor(counts[&pair])
    }));
}
