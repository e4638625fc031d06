//! Touched bodies moved at the servo rate between physics steps (an
//! intermediate representation in the sense of Mark et al. 1996, for 6-DoF
//! rigid bodies as in Otaduy & Lin's multirate rendering).
//!
//! With every step the physics thread publishes, for each dynamic body the
//! tool can touch, a [`LocalBodyModel`]: its state, its mass and inertia,
//! and what holds it linearised about that state — the wrench of its
//! contacts, friction springs and gravity with their gradients, the other
//! bodies held where they are ([`haptic_physics::BodyLinearisation`]).
//! Every tick the servo advances each body under the wrench the tool's
//! contacts put on it, by the same linearly implicit step the physics
//! thread takes (Xu, Zhao & Barbič eqs 15–18), restricted to the body:
//!
//! ```text
//! (M − h G_v − h² G_x) Δu = h (f₀ + G_x (δ + h u) + G_v (u − u₀) + w_tool),
//! u ← u + Δu,   δ ← δ + h u,
//! ```
//!
//! with `M = diag(m 1, I_world)`, `u = (v, ω)`, `δ = (δx, δθ)` the body's
//! offset from the published pose (`x₀ + δx`, `exp([δθ]×) R₀`) and `h` the
//! servo period. The tool renders against the body where it is now.
//!
//! The physics thread stays authoritative: the tool's impulses reach it as
//! before (the servo's running contact impulses), so momentum is booked
//! once. When a new model arrives, the servo starts from its state and
//! replays the tool's wrenches of the ticks the step has not yet taken
//! (those after [`PhysicsSnapshot::tool_tick`](crate::PhysicsSnapshot)),
//! which brings it to now; what still separates that prediction from the
//! pose the tool felt a tick ago is kept as a correction that decays with
//! time constant `blend`, so the contact force does not step.
//!
//! A body held by joints moves only as they let it: with `P` the
//! orthogonal projector onto the motions its joints allow
//! ([`LocalBodyModel::free_motion`], the null space of the joints'
//! Jacobians), the step solves `(P A P + I − P) Δu = P h (…)`, which is the
//! constrained step `Nᵀ A N q̇ = Nᵀ h (…)`, `u = N q̇`, for any basis `N` of
//! those motions: the joints' reactions, which do no work along them, are
//! the part of the wrench `P` takes away.
//!
//! A deformable's patch of surface nodes near the tool is moved the same
//! way, as a body that only translates (`free_motion` the translations):
//! its mass is the patch's, and its stiffness and damping about the
//! published nodes come from the deformable's one-step response there
//! (docs/rendering.md, "Deformables at the servo rate").
//!
//! Every buffer is sized at construction: nothing here allocates or locks
//! on the servo thread.

use haptic_render::RenderingCycle;
use nalgebra::{
    Isometry3, Matrix3, Matrix6, Translation3, UnitQuaternion, Vector3, Vector6, LU, U6,
};

/// Ticks of the tool's wrenches kept for replay: a step that took the tool
/// state of more than this many ticks ago is replayed from the oldest kept.
pub const LOCAL_MODEL_HISTORY: usize = 512;

/// No environment entry (in [`LocalBodyModel::entries`]).
pub const NO_ENTRY: u16 = u16::MAX;

/// How far (m) a body may move from its published pose, or how fast (m/s,
/// rad/s) it may go, before its local model is taken for diverging and
/// reset to the published state.
const MAX_OFFSET_M: f64 = 0.1;
const MAX_SPEED: f64 = 50.0;

/// One dynamic body as a physics step left it, for the servo to move
/// between steps (see the module's doc).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LocalBodyModel {
    /// The body's index in the physics world, the same body from snapshot
    /// to snapshot: its rigid bodies first, then its deformables (a
    /// deformable's patch is `rigid bodies + its index`).
    pub body: u32,
    /// Its entries in the rendering cycle's environment (two for an object
    /// of role `both`), [`NO_ENTRY`] where none.
    pub entries: [u16; 2],
    /// Body frame (origin at the centre of mass) → world.
    pub pose: Isometry3<f64>,
    /// `u₀ = (v, ω)`, world frame.
    pub velocity: Vector6<f64>,
    /// kg.
    pub mass: f64,
    /// World-frame inertia about the centre of mass (kg·m²).
    pub inertia: Matrix3<f64>,
    /// `f₀`: what acts on it at `pose` and `velocity` but the tool (N, N·m).
    pub wrench: Vector6<f64>,
    /// `G_x = ∂f/∂(x, θ)`.
    pub position_gradient: Matrix6<f64>,
    /// `G_v = ∂f/∂(v, ω)`.
    pub velocity_gradient: Matrix6<f64>,
    /// The orthogonal projector onto the motions `(δx, δθ)` it may take:
    /// the identity for a free body, the translations for a deformable's
    /// patch (the tool's torque on it is left out), the null space of its
    /// joints' Jacobians for a jointed body.
    pub free_motion: Matrix6<f64>,
}

impl LocalBodyModel {
    /// [`free_motion`](Self::free_motion) of a body that translates and
    /// turns freely.
    pub const FREE: Matrix6<f64> = diagonal([1.0; 6]);
    /// [`free_motion`](Self::free_motion) of a body that only translates.
    pub const TRANSLATES: Matrix6<f64> = diagonal([1.0, 1.0, 1.0, 0.0, 0.0, 0.0]);
}

/// The diagonal matrix of `d`.
const fn diagonal(d: [f64; 6]) -> Matrix6<f64> {
    #[rustfmt::skip]
    let m = Matrix6::new(
        d[0], 0.0, 0.0, 0.0, 0.0, 0.0,
        0.0, d[1], 0.0, 0.0, 0.0, 0.0,
        0.0, 0.0, d[2], 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, d[3], 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0, d[4], 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0, d[5],
    );
    m
}

/// A body the servo moves.
struct LocalBody {
    model: LocalBodyModel,
    /// `M − h G_v − h² G_x`, factored.
    system: LU<f64, U6, U6>,
    /// `δ` about `model.pose`.
    offset: Vector6<f64>,
    /// `u`.
    velocity: Vector6<f64>,
    /// Rendered pose = `correction ∘` predicted pose (`(δx, δθ)`, decaying).
    correction: Vector6<f64>,
}

impl LocalBody {
    /// `model` at its own state, or `None` when its system is singular.
    fn new(model: LocalBodyModel, h: f64) -> Option<Self> {
        let mut mass = Matrix6::zeros();
        mass.fixed_view_mut::<3, 3>(0, 0)
            .copy_from(&(Matrix3::identity() * model.mass));
        mass.fixed_view_mut::<3, 3>(3, 3).copy_from(&model.inertia);
        let free = &model.free_motion;
        let system = mass - model.velocity_gradient * h - model.position_gradient * (h * h);
        // P A P + (I − P): the allowed motions' block, the others held.
        let system = free * system * free + (Matrix6::identity() - free);
        let velocity = free * model.velocity;
        let system = system.lu();
        system.is_invertible().then_some(Self {
            model,
            system,
            offset: Vector6::zeros(),
            velocity,
            correction: Vector6::zeros(),
        })
    }

    /// One step of `h` under the tool's wrench `tool`; `false` (and the
    /// state left as it was) when it comes out non-finite or beyond
    /// [`MAX_OFFSET_M`] / [`MAX_SPEED`].
    fn advance(&mut self, tool: &Vector6<f64>, h: f64) -> bool {
        let m = &self.model;
        let force = m.wrench
            + m.position_gradient * (self.offset + self.velocity * h)
            + m.velocity_gradient * (self.velocity - m.velocity)
            + tool;
        let Some(change) = self.system.solve(&(m.free_motion * force * h)) else {
            return false;
        };
        let velocity = self.velocity + change;
        let offset = self.offset + velocity * h;
        let sane = velocity.iter().all(|v| v.is_finite())
            && offset.iter().all(|v| v.is_finite())
            && offset.fixed_rows::<3>(0).norm() <= MAX_OFFSET_M
            && velocity.fixed_rows::<3>(0).norm() <= MAX_SPEED
            && velocity.fixed_rows::<3>(3).norm() <= MAX_SPEED;
        if sane {
            self.velocity = velocity;
            self.offset = offset;
        }
        sane
    }

    /// The pose `offset` (and `correction`) take the published pose to.
    fn pose_with(&self, offset: &Vector6<f64>) -> Isometry3<f64> {
        let base = &self.model.pose;
        Isometry3::from_parts(
            Translation3::from(base.translation.vector + offset.fixed_rows::<3>(0)),
            UnitQuaternion::from_scaled_axis(offset.fixed_rows::<3>(3).into_owned())
                * base.rotation,
        )
    }

    fn predicted(&self) -> Isometry3<f64> {
        self.pose_with(&self.offset)
    }

    fn rendered(&self) -> Isometry3<f64> {
        let predicted = self.predicted();
        let turn = self.correction.fixed_rows::<3>(3).into_owned();
        Isometry3::from_parts(
            Translation3::from(predicted.translation.vector + self.correction.fixed_rows::<3>(0)),
            UnitQuaternion::from_scaled_axis(turn) * predicted.rotation,
        )
    }
}

/// `(δx, δθ)` taking pose `to` to pose `from`: `x_from − x_to`,
/// `log(R_from R_toᵀ)`.
fn difference(from: &Isometry3<f64>, to: &Isometry3<f64>) -> Vector6<f64> {
    let moved = from.translation.vector - to.translation.vector;
    let turn = (from.rotation * to.rotation.inverse()).scaled_axis();
    Vector6::new(moved.x, moved.y, moved.z, turn.x, turn.y, turn.z)
}

/// The servo's local models of the bodies the tool can touch (see the
/// module's doc).
pub struct LocalBodies {
    /// The bodies moved now, and the buffer the next snapshot's are built
    /// in; both with room for every environment entry.
    bodies: Vec<LocalBody>,
    spare: Vec<LocalBody>,
    /// The servo period `h` (s).
    period: f64,
    /// The correction's decay per tick, `exp(−h / blend)`.
    decay: f64,
    /// The tool's wrench on each environment entry, by tick:
    /// `history[(tick % HISTORY) · entries + entry]`.
    history: Vec<Vector6<f64>>,
    entries: usize,
    /// The newest tick in `history`, and how many ticks it holds.
    newest: u64,
    held: usize,
    /// Models refused (singular) or reset (diverging), since the start.
    faults: u64,
}

impl LocalBodies {
    /// Room for the bodies of `entries` environment entries, advanced every
    /// `period` seconds, corrections decaying with time constant `blend`
    /// seconds (0: none kept).
    pub fn new(entries: usize, period: f64, blend: f64) -> Self {
        Self {
            bodies: Vec::with_capacity(entries),
            spare: Vec::with_capacity(entries),
            period,
            decay: if blend > 0.0 {
                (-period / blend).exp()
            } else {
                0.0
            },
            history: vec![Vector6::zeros(); LOCAL_MODEL_HISTORY * entries],
            entries,
            newest: 0,
            held: 0,
            faults: 0,
        }
    }

    /// Bodies moved now.
    pub fn len(&self) -> usize {
        self.bodies.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bodies.is_empty()
    }

    /// Models refused or reset so far.
    pub fn faults(&self) -> u64 {
        self.faults
    }

    /// The tool's wrench on `entries` in kept tick `tick`.
    fn tool_wrench(&self, entries: &[u16; 2], tick: u64) -> Vector6<f64> {
        let row = (tick % LOCAL_MODEL_HISTORY as u64) as usize * self.entries;
        entries
            .iter()
            .filter(|&&e| (e as usize) < self.entries)
            .map(|&e| self.history[row + e as usize])
            .sum()
    }

    /// Takes a snapshot's `models`, whose step took the tool's impulses up
    /// to tick `tool_tick`, at the start of tick `tick`: each body from its
    /// model's state, with the kept ticks after `tool_tick` replayed and
    /// the rendered pose of the last tick kept as a decaying correction.
    /// Models beyond the room are ignored.
    pub fn take(&mut self, models: &[LocalBodyModel], tool_tick: u64, tick: u64) {
        let h = self.period;
        self.spare.clear();
        let oldest = (self.newest + 1).saturating_sub(self.held as u64);
        let first = (tool_tick + 1).max(oldest);
        for model in models.iter().take(self.spare.capacity()) {
            let Some(mut body) = LocalBody::new(*model, h) else {
                self.faults += 1;
                continue;
            };
            if self.held > 0 {
                for t in first..=self.newest.min(tick.saturating_sub(1)) {
                    let tool = self.tool_wrench(&body.model.entries, t);
                    if !body.advance(&tool, h) {
                        self.faults += 1;
                        break;
                    }
                }
            }
            if let Some(before) = self.bodies.iter().find(|b| b.model.body == model.body) {
                body.correction = difference(&before.rendered(), &body.predicted());
            }
            self.spare.push(body);
        }
        std::mem::swap(&mut self.bodies, &mut self.spare);
    }

    /// Shifts the rendered pose of the body of environment entry `entry` by
    /// `shift` (m, world frame), decaying as its correction does: a
    /// deformable's patch whose published nodes moved under the tool keeps
    /// them where the tool felt them. `false`, and nothing done, when no
    /// body has the entry.
    pub fn carry(&mut self, entry: usize, shift: &Vector3<f64>) -> bool {
        let Some(body) = self
            .bodies
            .iter_mut()
            .find(|b| b.model.entries.iter().any(|&e| e as usize == entry))
        else {
            return false;
        };
        let mut correction = body.correction.fixed_rows_mut::<3>(0);
        correction += shift;
        true
    }

    /// Whether environment entry `entry` is a body moved here.
    pub fn moves(&self, entry: usize) -> bool {
        self.bodies
            .iter()
            .any(|b| b.model.entries.iter().any(|&e| e as usize == entry))
    }

    /// Moves every body to where it is now in `cycle`, carrying the tool
    /// where it touches one ([`RenderingCycle::move_environment_pose`]).
    pub fn place(&self, cycle: &mut RenderingCycle) {
        let objects = cycle.scene().environment().len();
        for body in &self.bodies {
            let pose = body.rendered();
            for &entry in &body.model.entries {
                if (entry as usize) < objects {
                    cycle.move_environment_pose(entry as usize, pose);
                }
            }
        }
    }

    /// Tick `tick`'s end: keeps the tool's `wrenches` on each environment
    /// entry and advances every body a period under them.
    pub fn advance(&mut self, tick: u64, wrenches: &[Vector6<f64>]) {
        let row = (tick % LOCAL_MODEL_HISTORY as u64) as usize * self.entries;
        for (slot, wrench) in self.history[row..row + self.entries]
            .iter_mut()
            .zip(wrenches.iter().chain(std::iter::repeat(&Vector6::zeros())))
        {
            *slot = if wrench.iter().all(|v| v.is_finite()) {
                *wrench
            } else {
                Vector6::zeros()
            };
        }
        self.held = if self.held > 0 && tick == self.newest + 1 {
            (self.held + 1).min(LOCAL_MODEL_HISTORY)
        } else {
            1
        };
        self.newest = tick;
        let (h, decay) = (self.period, self.decay);
        for k in 0..self.bodies.len() {
            let tool = self.tool_wrench(&self.bodies[k].model.entries, tick);
            let body = &mut self.bodies[k];
            if !body.advance(&tool, h) {
                // Diverging: back to the published state, at rest there.
                body.offset = Vector6::zeros();
                body.velocity = Vector6::zeros();
                body.correction = Vector6::zeros();
                self.faults += 1;
            }
            body.correction *= decay;
        }
    }

    /// The state of body `k` now: its world index, rendered pose and
    /// velocity `(v, ω)`.
    pub fn state(&self, k: usize) -> Option<(u32, Isometry3<f64>, Vector6<f64>)> {
        self.bodies
            .get(k)
            .map(|b| (b.model.body, b.rendered(), b.velocity))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Point3;

    fn free_box(mass: f64) -> LocalBodyModel {
        LocalBodyModel {
            body: 0,
            entries: [0, NO_ENTRY],
            pose: Isometry3::identity(),
            velocity: Vector6::zeros(),
            mass,
            inertia: Matrix3::identity() * 1e-3,
            wrench: Vector6::zeros(),
            position_gradient: Matrix6::zeros(),
            velocity_gradient: Matrix6::zeros(),
            free_motion: LocalBodyModel::FREE,
        }
    }

    #[test]
    fn a_free_body_accelerates_as_newton_says() {
        let (h, mass, push) = (1e-3, 0.5, 0.25);
        let mut local = LocalBodies::new(1, h, 0.01);
        local.take(&[free_box(mass)], 0, 1);
        let wrench = [Vector6::new(push, 0.0, 0.0, 0.0, 0.0, 0.0)];
        for tick in 1..=100 {
            local.advance(tick, &wrench);
        }
        let (_, pose, velocity) = local.state(0).unwrap();
        let t = 100.0 * h;
        assert!(
            (velocity.x - push / mass * t).abs() < 1e-12,
            "{}",
            velocity.x
        );
        // Symplectic Euler: x = a h² n (n + 1) / 2.
        let x = push / mass * h * h * 100.0 * 101.0 / 2.0;
        assert!((pose.translation.x - x).abs() < 1e-12);
    }

    #[test]
    fn a_new_model_replays_the_ticks_its_step_did_not_take_and_blends_in() {
        let (h, mass, push) = (1e-3, 0.5, 0.25);
        let mut local = LocalBodies::new(1, h, 0.01);
        local.take(&[free_box(mass)], 0, 1);
        let wrench = [Vector6::new(push, 0.0, 0.0, 0.0, 0.0, 0.0)];
        for tick in 1..=10 {
            local.advance(tick, &wrench);
        }
        let (_, before, _) = local.state(0).unwrap();
        // A step that took ticks 1–5 (exactly, as the servo did): the state
        // at tick 5, then ticks 6–10 replayed, reproduce the servo's.
        let mut replayed = LocalBodies::new(1, h, 0.01);
        replayed.take(&[free_box(mass)], 0, 1);
        for tick in 1..=5 {
            replayed.advance(tick, &wrench);
        }
        let (_, at5, velocity5) = replayed.state(0).unwrap();
        let mut model = free_box(mass);
        model.pose = at5;
        model.velocity = velocity5;
        local.take(&[model], 5, 11);
        let (_, after, velocity) = local.state(0).unwrap();
        assert!((after.translation.vector - before.translation.vector).norm() < 1e-12);
        assert!((velocity.x - push / mass * 10.0 * h).abs() < 1e-12);
        // A model that disagrees by 1 mm is rendered where the tool felt the
        // body, the difference fading over the blend time.
        model.pose.translation.vector.x += 1e-3;
        local.take(&[model], 5, 11);
        let (_, shifted, _) = local.state(0).unwrap();
        assert!((shifted.translation.vector - before.translation.vector).norm() < 1e-12);
        for tick in 11..=110 {
            local.advance(tick, &[Vector6::zeros()]);
        }
        let (_, later, velocity) = local.state(0).unwrap();
        let coasted = before.translation.x + velocity.x * 100.0 * h + 1e-3;
        assert!((later.translation.x - coasted).abs() < 1e-3 * (-10.0f64).exp() * 1.01);
    }

    #[test]
    fn a_body_held_by_a_stiff_spring_gains_no_energy() {
        let (h, mass, k) = (1e-3, 0.2, 2e3);
        let mut model = free_box(mass);
        model.position_gradient[(0, 0)] = -k;
        model.velocity = Vector6::new(0.1, 0.0, 0.0, 0.0, 0.0, 0.0);
        let mut local = LocalBodies::new(1, h, 0.0);
        local.take(&[model], 0, 1);
        let energy = |local: &LocalBodies| {
            let (_, pose, v) = local.state(0).unwrap();
            0.5 * mass * v.x * v.x + 0.5 * k * pose.translation.x * pose.translation.x
        };
        let start = energy(&local);
        for tick in 1..=2000 {
            local.advance(tick, &[Vector6::zeros()]);
            assert!(energy(&local) <= start * (1.0 + 1e-12));
        }
    }

    /// A door hinged about the vertical through `(−a, 0, 0)` from its
    /// centre of mass, pushed at its free edge: it turns about the hinge
    /// as `I_hinge α = τ` (the parallel axis, `I + m a²`), its centre moving
    /// on the circle and never along the door, whatever the push's
    /// direction.
    #[test]
    fn a_hinged_body_turns_about_its_hinge_at_the_rate_its_inertia_there_allows() {
        let (h, mass, a, izz) = (1e-3, 0.1, 0.04, 2e-5);
        // The hinge's rows: the hinge point's velocity v + ω × r (r from
        // the centre to the hinge) and ωx, ωy held.
        let r = Vector3::new(-a, 0.0, 0.0);
        let mut rows = nalgebra::SMatrix::<f64, 5, 6>::zeros();
        for k in 0..3 {
            rows[(k, k)] = 1.0;
        }
        // v + ω × r = v − r × ω.
        let cross = -r.cross_matrix();
        rows.fixed_view_mut::<3, 3>(0, 3).copy_from(&cross);
        rows[(3, 3)] = 1.0;
        rows[(4, 4)] = 1.0;
        let free = Matrix6::identity() - rows.pseudo_inverse(1e-12).unwrap() * rows;
        let mut door = free_box(mass);
        door.inertia = Matrix3::from_diagonal(&Vector3::new(1e-5, 1e-5, izz));
        door.free_motion = free;
        let mut local = LocalBodies::new(1, h, 0.0);
        local.take(&[door], 0, 1);
        // 0.1 N at the free edge (a from the centre), along y and into the
        // door's plane alike: only the y part turns it.
        let lever = Vector3::new(a, 0.0, 0.0);
        let push = Vector3::new(0.05, 0.1, 0.0);
        let torque = lever.cross(&push);
        let wrench = [Vector6::new(
            push.x, push.y, push.z, torque.x, torque.y, torque.z,
        )];
        let ticks = 20;
        for tick in 1..=ticks {
            local.advance(tick, &wrench);
        }
        let (_, pose, velocity) = local.state(0).unwrap();
        let hinge_inertia = izz + mass * a * a;
        // About the hinge: the push's moment (2a × 0.1 N).
        let alpha = (2.0 * a * push.y) / hinge_inertia;
        let omega = alpha * ticks as f64 * h;
        assert!(
            (velocity[5] - omega).abs() < 1e-9 * omega.abs(),
            "ω {} against {omega}",
            velocity[5]
        );
        // The centre moves on the circle: v = ω × (centre − hinge).
        let v = Vector3::new(velocity[0], velocity[1], velocity[2]);
        let expected = Vector3::new(0.0, 0.0, velocity[5]).cross(&(-r));
        assert!(
            (v - expected).norm() < 1e-9 * expected.norm(),
            "{v} against {expected}"
        );
        // The hinge point stays put (to second order in the turn).
        let hinge = pose * Point3::from(r);
        assert!((hinge.coords - r).norm() < 1e-5, "{hinge}");
    }
}
