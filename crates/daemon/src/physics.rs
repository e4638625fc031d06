//! The physics thread: steps the scene's rigid world (`haptic-physics`)
//! under the contact impulses the servo publishes, and publishes the
//! movable objects' poses back.
//!
//! Every object but the tool is a body of the world, its frame at its
//! centre of mass: movable objects dynamic, the others static. The world
//! takes care of gravity, contact between the bodies, friction and joints
//! (Xu, Zhao & Barbič). The tool is not one of its bodies: the servo
//! renders it, and hands the world what it does to each body as an
//! impulse. Per step of `dt`, body `b` receives as an external impulse
//!
//! ```text
//! J_b = Σ_entries (S_e(now) − S_e(previous step)) + J_drag
//! ```
//!
//! with `S_e` the servo's running contact impulse of the body's rendering
//! entries (it accumulates every tick, so no tick's push is lost between
//! steps; torques about the body's origin, its centre of mass), and
//! `J_drag` the object's viscous drag, integrated exactly over the step
//! so that it is stable for any mass:
//! `J_drag = −m v (1 − e^{−c dt/m})` and, in the eigenbasis of the world
//! inertia `I_w = Q Λ Qᵀ`, `−Q diag(λ (1 − e^{−c_r dt/λ})) Qᵀ ω`.
//!
//! A scene with `[[deformables]]` steps a `haptic_deformable::CoupledWorld`
//! instead, which owns the rigid world and hands it the same impulses
//! ([`CoupledWorld::step_with_impulses`]); its rigid bodies' poses reach
//! the servo as the rigid world's do. The tool touches each deformable
//! through its surface points near the tool, which every step publishes
//! with their motion model, and its impulse on them reaches their nodes
//! ([`crate::patches`]). Their surfaces go to the state stream
//! ([`SurfaceStream`]) and their nodes to the telemetry thread, which
//! records them ([`DeformableNodes`]).
//!
//! A body whose step comes out non-finite is put back by the world at
//! rest and counted ([`PhysicsReport::quarantined`], and
//! [`PhysicsReport::deformables_quarantined`] for deformable bodies); only
//! finite poses reach the servo. The physics thread exchanges with the
//! servo and the telemetry thread only through lock-free latest-value
//! hand-off: neither ever waits for a step, nor a step for them.

use crate::lifecycle::{StoppableThread, ThreadName, ThreadPanicked};
use crate::pacer::Pacer;
use crate::patches::ToolPatches;
use haptic_contact::SharedField;
use haptic_deformable::{CoupledWorld, DeformableBody};
use haptic_handoff::{LatestReader, LatestWriter};
use haptic_physics::{PairContact, RigidBody, StepReport, World};
use haptic_server::{surface_frame, StreamHub};
use haptic_servo::{LocalBodyModel, PhysicsSnapshot, ThreadSchedule, ToolState, NO_ENTRY};
use nalgebra::{DMatrix, Isometry3, Matrix3, Matrix6, Point3, SymmetricEigen, Vector3, Vector6};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A movable object as the physics world left it.
#[derive(Clone, Debug, PartialEq)]
pub struct MovableBody {
    /// Its name in the config.
    pub name: String,
    /// kg.
    pub mass: f64,
    /// Body frame (origin at the centre of mass) → world.
    pub pose: Isometry3<f64>,
    /// Of the centre of mass, world frame (m/s).
    pub velocity: Vector3<f64>,
    /// World frame (rad/s).
    pub angular_velocity: Vector3<f64>,
    /// The tool's linear contact impulse received so far, world frame
    /// (N·s).
    pub impulse: Vector3<f64>,
}

/// What the physics world did over its steps.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PhysicsReport {
    /// Steps the physics thread ran.
    pub steps: u64,
    /// Steps that ended after the next one was due.
    pub overruns: u64,
    /// Rigid bodies put back at rest because their step came out
    /// non-finite, over every step.
    pub quarantined: u64,
    /// Deformable bodies put back where they were because their step came
    /// out non-finite or too fast, over every step.
    pub deformables_quarantined: u64,
    /// Deformable bodies the world steps.
    pub deformables: usize,
    /// Per deformable, the tool's linear contact impulse it received so
    /// far, world frame (N·s).
    pub tool_impulse_on_deformables: Vec<Vector3<f64>>,
    /// Most penetrating shell points between bodies in a step.
    pub max_contacts: usize,
    /// Deepest penetration between bodies (m).
    pub max_penetration: f64,
    /// The movable objects at the end.
    pub bodies: Vec<MovableBody>,
}

/// What the daemon keeps of one body of the world beside the world.
#[derive(Clone, Debug, PartialEq)]
pub struct BodyLink {
    /// Indices of its entries in the rendering cycle's environment (two
    /// for an object of role `both`; none in `hapticd simulate`).
    pub entries: Vec<usize>,
    /// Viscous drag: linear (N·s/m) and angular (N·m·s/rad).
    pub drag: (f64, f64),
}

/// What the physics thread steps: the rigid world alone, or the
/// deformables coupled with it.
enum Bodies {
    Rigid(Box<World>),
    Coupled(Box<CoupledWorld>),
}

impl Bodies {
    fn rigid(&self) -> &World {
        match self {
            Bodies::Rigid(world) => world,
            Bodies::Coupled(world) => world.rigid(),
        }
    }
}

/// The scene's rigid world (with its deformables, if any) and the
/// environment poses the servo renders. The default world has no bodies:
/// a scene without movable objects or deformables has nothing to step.
#[derive(Default)]
pub struct PhysicsWorld {
    world: Option<Bodies>,
    /// Per body of the world, in its order.
    links: Vec<BodyLink>,
    /// In the rendering cycle's environment order.
    poses: Vec<Isometry3<f64>>,
    /// The servo's running contact impulses at the previous step.
    impulses: Vec<Vector6<f64>>,
    /// Per body: this step's external impulse, and the tool's linear
    /// impulse received so far.
    external: Vec<Vector6<f64>>,
    received: Vec<Vector3<f64>>,
    sequence: u64,
    /// The last tool tick whose impulses a step took.
    tool_tick: u64,
    /// Whether snapshots carry the bodies' local models
    /// ([`haptic_servo::LocalBodies`]).
    local_models: bool,
    /// The tool against the deformables, when the scene has both.
    patches: Option<ToolPatches>,
    report: PhysicsReport,
}

impl PhysicsWorld {
    /// `world` with its bodies' `links` (in the world's order), rendering
    /// `environment_poses` (the cycle's, as built).
    pub fn new(world: World, links: Vec<BodyLink>, environment_poses: Vec<Isometry3<f64>>) -> Self {
        let bodies = world.bodies().len();
        Self {
            impulses: vec![Vector6::zeros(); environment_poses.len()],
            external: vec![Vector6::zeros(); bodies],
            received: vec![Vector3::zeros(); bodies],
            world: Some(Bodies::Rigid(Box::new(world))),
            links,
            poses: environment_poses,
            sequence: 0,
            tool_tick: 0,
            local_models: false,
            patches: None,
            report: PhysicsReport::default(),
        }
    }

    /// `world`'s deformables and rigid bodies, its rigid bodies linked as
    /// in [`new`](Self::new).
    pub fn coupled(
        world: CoupledWorld,
        links: Vec<BodyLink>,
        environment_poses: Vec<Isometry3<f64>>,
    ) -> Self {
        let bodies = world.rigid().bodies().len();
        Self {
            impulses: vec![Vector6::zeros(); environment_poses.len()],
            external: vec![Vector6::zeros(); bodies],
            received: vec![Vector3::zeros(); bodies],
            world: Some(Bodies::Coupled(Box::new(world))),
            links,
            poses: environment_poses,
            sequence: 0,
            tool_tick: 0,
            local_models: false,
            patches: None,
            report: PhysicsReport::default(),
        }
    }

    /// Publishes with every snapshot a local model of each dynamic body the
    /// tool can touch that its joints do not hold still (see
    /// [`haptic_servo::LocalBodies`]).
    pub fn with_local_models(mut self, on: bool) -> Self {
        self.local_models = on;
        self
    }

    /// Lets the tool touch the deformables: their surface nodes near the
    /// tool, in its `field`, rendered as the cycle's `entries` (one per
    /// deformable, `capacity` slots each; see [`crate::patches`]). Nothing
    /// without deformables or a field.
    pub fn with_tool_patches(
        mut self,
        field: Option<SharedField>,
        entries: Vec<usize>,
        capacity: usize,
    ) -> Self {
        if let (Some(field), Some(Bodies::Coupled(world))) = (field, &self.world) {
            self.patches = Some(ToolPatches::new(field, &entries, capacity, world.bodies()));
        }
        self
    }

    /// The world's rigid bodies, in its order (none without movable
    /// objects or deformables).
    pub fn bodies(&self) -> &[RigidBody] {
        self.world.as_ref().map_or(&[], |w| w.rigid().bodies())
    }

    /// The deformable bodies, in the config's order (none without
    /// `[[deformables]]`).
    pub fn deformables(&self) -> &[DeformableBody] {
        match &self.world {
            Some(Bodies::Coupled(world)) => world.bodies(),
            _ => &[],
        }
    }

    /// Physics steps taken so far.
    pub fn steps(&self) -> u64 {
        self.sequence
    }

    /// The contacts between the rigid bodies found by the last step (none
    /// without movable objects).
    pub fn contacts(&self) -> &[PairContact] {
        self.world.as_ref().map_or(&[], |w| w.rigid().contacts())
    }

    /// Kinetic energy of the dynamic bodies, deformables included (J).
    pub fn kinetic_energy(&self) -> f64 {
        match &self.world {
            None => 0.0,
            Some(Bodies::Rigid(world)) => world.kinetic_energy(),
            Some(Bodies::Coupled(world)) => world.kinetic_energy(),
        }
    }

    /// Advances the world by `dt` under the contact impulse `tool`'s
    /// running sums gained since the previous step.
    pub fn step(&mut self, tool: &ToolState, dt: f64) {
        if self.world.is_none() {
            return;
        }
        for (b, link) in self.links.iter().enumerate() {
            let mut impulse = Vector6::zeros();
            for &entry in &link.entries {
                if let (Some(now), Some(before)) =
                    (tool.contact_impulses.get(entry), self.impulses.get(entry))
                {
                    impulse += now - before;
                }
            }
            self.received[b] += impulse.fixed_rows::<3>(0);
            self.external[b] = impulse;
        }
        if let (Some(patches), Some(Bodies::Coupled(world))) = (&mut self.patches, &mut self.world)
        {
            patches.push(
                world,
                &tool.contact_impulses,
                &self.impulses,
                &tool.tool_pose,
                dt,
            );
        }
        let known = self.impulses.len().min(tool.contact_impulses.len());
        self.impulses[..known].copy_from_slice(&tool.contact_impulses[..known]);
        self.tool_tick = tool.tick;
        self.advance(dt);
        if let (Some(patches), Some(Bodies::Coupled(world))) = (&mut self.patches, &mut self.world)
        {
            let rigid_bodies = world.rigid().bodies().len();
            patches.select(world, rigid_bodies, self.local_models);
        }
    }

    /// Advances the world by `dt` under the external impulses gathered so
    /// far and the bodies' drag; the next step starts with none. Returns
    /// the world's report of the step (the default without a world); with
    /// deformables, its contacts, deepest penetration and quarantines
    /// count theirs too.
    pub fn advance(&mut self, dt: f64) -> StepReport {
        let Some(world) = &mut self.world else {
            return StepReport::default();
        };
        for ((external, link), body) in self
            .external
            .iter_mut()
            .zip(&self.links)
            .zip(world.rigid().bodies())
        {
            if body.is_dynamic() {
                *external += drag_impulse(body, link.drag, dt);
            }
        }
        let step = match world {
            Bodies::Rigid(world) => world.step(dt, &self.external),
            Bodies::Coupled(world) => {
                let coupled = world.step_with_impulses(dt, &self.external);
                StepReport {
                    contacts: coupled.rigid.contacts + coupled.contacts,
                    max_penetration: coupled.rigid.max_penetration.max(coupled.max_penetration),
                    quarantined: coupled.rigid.quarantined + coupled.quarantined,
                    ..coupled.rigid
                }
            }
        };
        self.external.fill(Vector6::zeros());
        self.sequence += 1;
        let report = &mut self.report;
        report.max_contacts = report.max_contacts.max(step.contacts);
        report.max_penetration = report.max_penetration.max(step.max_penetration);
        // The world puts a non-finite body back where it was; the servo
        // gets finite poses only, whatever happens.
        for (body, link) in world.rigid().bodies().iter().zip(&self.links) {
            if body.is_dynamic() && body.is_finite() {
                for &entry in &link.entries {
                    if let Some(pose) = self.poses.get_mut(entry) {
                        *pose = body.state.pose;
                    }
                }
            }
        }
        step
    }

    /// Publishes the environment poses to the servo, when anything moves,
    /// numbered by the steps taken.
    pub fn publish(&mut self, snapshots: &mut LatestWriter<PhysicsSnapshot>) {
        if self.world.is_none() {
            return;
        }
        let world = self.world.as_ref().map(Bodies::rigid);
        let (links, local_models) = (&self.links, self.local_models);
        let patches = self.patches.as_ref();
        snapshots.publish_with(|snapshot| {
            snapshot.sequence = self.sequence;
            snapshot.environment_poses.clone_from(&self.poses);
            snapshot.tool_tick = self.tool_tick;
            snapshot.local_models.clear();
            if let (Some(world), true) = (world, local_models) {
                snapshot
                    .local_models
                    .extend((0..links.len()).filter_map(|b| local_model(world, b, &links[b])));
            }
            snapshot.patches.clear();
            if let Some(patches) = patches {
                patches.publish(&mut snapshot.patches, &mut snapshot.local_models);
            }
        });
    }

    /// What the steps did, with the movable objects as they are now.
    pub fn report(&self) -> PhysicsReport {
        let bodies = self
            .bodies()
            .iter()
            .zip(&self.received)
            .filter(|(body, _)| body.is_dynamic())
            .map(|(body, impulse)| MovableBody {
                name: body.model.name.clone(),
                mass: body.model.mass,
                pose: body.state.pose,
                velocity: body.state.velocity,
                angular_velocity: body.state.angular_velocity,
                impulse: *impulse,
            })
            .collect();
        let (deformables_quarantined, deformables) = match &self.world {
            Some(Bodies::Coupled(world)) => (world.quarantined(), world.bodies().len()),
            _ => (0, 0),
        };
        PhysicsReport {
            bodies,
            quarantined: self.world.as_ref().map_or(0, |w| w.rigid().quarantined()),
            deformables_quarantined,
            deformables,
            tool_impulse_on_deformables: self
                .patches
                .as_ref()
                .map_or_else(Vec::new, |p| p.received().collect()),
            ..self.report.clone()
        }
    }
}

/// The deformables' surfaces on their way to the state stream: per body,
/// the nodes its surface triangles use, in the order of the vertices of
/// its surface frames ([`haptic_server::surface_frame`]).
pub struct SurfaceStream {
    hub: StreamHub,
    nodes: Vec<Vec<u32>>,
    vertices: Vec<[f32; 3]>,
}

impl SurfaceStream {
    /// Streams the surfaces of `bodies` (the world's, as built) into
    /// `hub`.
    pub fn new(hub: StreamHub, bodies: &[DeformableBody]) -> Self {
        Self {
            hub,
            nodes: bodies
                .iter()
                .map(|b| surface_nodes(&b.model.surface))
                .collect(),
            vertices: Vec::new(),
        }
    }

    /// Sends every deformable's surface frame of the world's last step to
    /// the clients they are due for at physics time `time_s`; encodes
    /// nothing when none is.
    pub fn publish(&mut self, world: &PhysicsWorld, time_s: f64) {
        if self.nodes.is_empty() || !self.hub.wants_surfaces(time_s) {
            return;
        }
        let frames: Arc<[_]> = world
            .deformables()
            .iter()
            .zip(&self.nodes)
            .enumerate()
            .map(|(index, (body, nodes))| {
                self.vertices.clear();
                self.vertices.extend(nodes.iter().map(|&n| {
                    let p = body.state.positions[n as usize];
                    [p.x as f32, p.y as f32, p.z as f32]
                }));
                surface_frame(index as u32, world.steps(), &self.vertices)
            })
            .collect();
        self.hub.publish_surfaces(time_s, frames);
    }
}

/// The deformables' nodes after a physics step, on their way to the
/// telemetry thread, which records them with the surface triangles it
/// took from the scene as built.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeformableNodes {
    /// Physics steps taken when the nodes were copied.
    pub sequence: u64,
    /// Per deformable body, in the config's order: its nodes, world frame
    /// (m).
    pub positions: Vec<Vec<Point3<f64>>>,
}

impl DeformableNodes {
    /// The nodes of `bodies` (the world's, as built): the hand-off's
    /// initial value, whose buffers every later [`fill`](Self::fill)
    /// reuses.
    pub fn new(bodies: &[DeformableBody]) -> Self {
        Self {
            sequence: 0,
            positions: bodies.iter().map(|b| b.state.positions.clone()).collect(),
        }
    }

    /// Copies `world`'s nodes into the buffers, which allocates nothing
    /// once they hold as many bodies and nodes as the world (a body's
    /// node count never changes).
    pub fn fill(&mut self, world: &PhysicsWorld) {
        let bodies = world.deformables();
        self.sequence = world.steps();
        self.positions.resize_with(bodies.len(), Vec::new);
        for (nodes, body) in self.positions.iter_mut().zip(bodies) {
            nodes.clear();
            nodes.extend_from_slice(&body.state.positions);
        }
    }
}

/// The nodes `triangles` use, each once, in increasing order.
pub fn surface_nodes(triangles: &[[u32; 3]]) -> Vec<u32> {
    let mut nodes: Vec<u32> = triangles.iter().flatten().copied().collect();
    nodes.sort_unstable();
    nodes.dedup();
    nodes
}

/// `triangles` with their node indices replaced by their positions in
/// `nodes` ([`surface_nodes`] of them): the triangles over a surface
/// frame's vertices.
pub fn surface_triangles(triangles: &[[u32; 3]], nodes: &[u32]) -> Vec<[u32; 3]> {
    let at = |n: u32| nodes.binary_search(&n).expect("a surface node") as u32;
    triangles
        .iter()
        .map(|t| [at(t[0]), at(t[1]), at(t[2])])
        .collect()
}

/// The local model of body `b` of `world` as its last step left it: `None`
/// for a static body, one without entries in the rendering cycle, one its
/// joints hold still or one the world cannot linearise. Its drag joins the
/// linearisation. A jointed body moves as its joints let it, the bodies at
/// their other ends held where they are ([`joint_free_motion`]).
fn local_model(world: &World, b: usize, link: &BodyLink) -> Option<LocalBodyModel> {
    let body = &world.bodies()[b];
    if link.entries.is_empty() {
        return None;
    }
    let free_motion = joint_free_motion(world, b)?;
    let mut linearisation = world.linearisation(b)?;
    let (linear, angular) = link.drag;
    let (v, w) = (body.state.velocity, body.state.angular_velocity);
    for k in 0..3 {
        linearisation.wrench[k] -= linear * v[k];
        linearisation.wrench[k + 3] -= angular * w[k];
        linearisation.velocity_gradient[(k, k)] -= linear;
        linearisation.velocity_gradient[(k + 3, k + 3)] -= angular;
    }
    let mut entries = [NO_ENTRY; 2];
    for (slot, &entry) in entries.iter_mut().zip(&link.entries) {
        *slot = u16::try_from(entry).ok()?;
    }
    Some(LocalBodyModel {
        body: b as u32,
        entries,
        pose: body.state.pose,
        velocity: Vector6::new(v.x, v.y, v.z, w.x, w.y, w.z),
        mass: body.model.mass,
        inertia: body.world_inertia(),
        wrench: linearisation.wrench,
        position_gradient: linearisation.position_gradient,
        velocity_gradient: linearisation.velocity_gradient,
        free_motion,
    })
}

/// The orthogonal projector onto the motions `(δx, δθ)` of body `b`'s
/// centre of mass that its joints' rows allow at its present pose, `I −
/// J⁺ J` with `J` their Jacobians on `b` (the identity without joints);
/// `None` when they allow none.
fn joint_free_motion(world: &World, b: usize) -> Option<Matrix6<f64>> {
    let mut rows = Vec::new();
    for joint in world.joints().iter().filter(|j| j.a == b || j.b == Some(b)) {
        joint.rows(world.bodies(), &mut rows);
    }
    if rows.is_empty() {
        return Some(LocalBodyModel::FREE);
    }
    let jacobian = DMatrix::from_fn(rows.len(), 6, |r, c| {
        let row = &rows[r];
        if row.a == b {
            row.jacobian_a[c]
        } else {
            row.jacobian_b[c]
        }
    });
    let held = jacobian.clone().pseudo_inverse(1e-12).ok()? * jacobian;
    let free = Matrix6::identity() - Matrix6::from_fn(|r, c| held[(r, c)]);
    // Its trace is the count of motions left.
    (free.trace() > 0.5).then_some(free)
}

/// The impulse of viscous drag `(c, c_r)` on `body` over `dt`, integrated
/// exactly: what takes its velocity `v` to `v e^{−c dt/m}` and its angular
/// velocity's component along each principal axis of the world inertia
/// alike, so that no drag and no step makes it overshoot.
fn drag_impulse(body: &RigidBody, (linear, angular): (f64, f64), dt: f64) -> Vector6<f64> {
    let force =
        -body.state.velocity * body.model.mass * (1.0 - (-linear * dt / body.model.mass).exp());
    let torque = if angular > 0.0 {
        let eigen = SymmetricEigen::new(body.world_inertia());
        let kept = eigen
            .eigenvalues
            .map(|lambda| lambda * (1.0 - (-angular * dt / lambda).exp()));
        -(eigen.eigenvectors * Matrix3::from_diagonal(&kept) * eigen.eigenvectors.transpose())
            * body.state.angular_velocity
    } else {
        Vector3::zeros()
    };
    Vector6::new(force.x, force.y, force.z, torque.x, torque.y, torque.z)
}

/// How the physics thread runs.
pub struct PhysicsOptions {
    pub rate_hz: f64,
    pub schedule: ThreadSchedule,
    pub world: PhysicsWorld,
    /// Where the deformables' surfaces go, if the scene has any.
    pub surfaces: Option<SurfaceStream>,
    /// Where the deformables' nodes go after each step, if the scene has
    /// any: to the telemetry thread.
    pub nodes: Option<LatestWriter<DeformableNodes>>,
}

/// A running physics thread, stopped and joined when dropped.
pub struct PhysicsThread(StoppableThread<PhysicsReport>);

impl PhysicsThread {
    /// Starts stepping at `options.rate_hz`, reading the servo's tool state
    /// from `tool` and publishing poses to `snapshots`. `step` advances the
    /// world by a step (the daemon's is [`PhysicsWorld::step`]).
    pub fn spawn(
        options: PhysicsOptions,
        tool: LatestReader<ToolState>,
        snapshots: LatestWriter<PhysicsSnapshot>,
        step: impl FnMut(&mut PhysicsWorld, &ToolState, f64) + Send + 'static,
    ) -> io::Result<PhysicsThread> {
        StoppableThread::spawn(ThreadName::Physics, move |stop| {
            run(options, tool, snapshots, step, stop)
        })
        .map(PhysicsThread)
    }

    /// Whether the thread has ended, which before [`stop`](Self::stop)
    /// means it panicked.
    pub fn is_finished(&self) -> bool {
        self.0.is_finished()
    }

    /// Stops stepping and returns the report, or the thread's panic.
    pub fn stop(self) -> Result<PhysicsReport, ThreadPanicked> {
        self.0.stop()
    }
}

fn run(
    options: PhysicsOptions,
    mut tool: LatestReader<ToolState>,
    mut snapshots: LatestWriter<PhysicsSnapshot>,
    mut step: impl FnMut(&mut PhysicsWorld, &ToolState, f64),
    stop: &AtomicBool,
) -> PhysicsReport {
    options.schedule.apply("physics");
    let mut pacer = Pacer::new(options.rate_hz);
    let dt = pacer.period().as_secs_f64();
    let mut world = options.world;
    let mut surfaces = options.surfaces;
    let mut nodes = options.nodes;
    let (mut steps, mut overruns) = (0, 0);
    while !stop.load(Ordering::Acquire) {
        step(&mut world, tool.read(), dt);
        world.publish(&mut snapshots);
        if let Some(nodes) = &mut nodes {
            nodes.publish_with(|slot| slot.fill(&world));
        }
        steps += 1;
        if let Some(surfaces) = &mut surfaces {
            surfaces.publish(&world, steps as f64 * dt);
        }
        if !pacer.wait() {
            overruns += 1;
        }
    }
    PhysicsReport {
        steps,
        overruns,
        ..world.report()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use haptic_physics::{Motion, RigidBodyModel, RigidBodyState, WorldParameters};

    /// A 5 cm cube of `mass` in free space, no gravity, with `drag`, at
    /// rest.
    fn cube(mass: f64, drag: (f64, f64)) -> PhysicsWorld {
        moving_cube(mass, drag, Vector3::zeros(), Vector3::zeros())
    }

    /// The same cube moving at `velocity` and `angular_velocity`.
    fn moving_cube(
        mass: f64,
        drag: (f64, f64),
        velocity: Vector3<f64>,
        angular_velocity: Vector3<f64>,
    ) -> PhysicsWorld {
        let side: f64 = 0.05;
        let body = RigidBody {
            model: RigidBodyModel {
                name: "cube".into(),
                motion: Motion::Dynamic,
                mass,
                body_inertia: Matrix3::identity() * (mass * side * side / 6.0),
                geometry: None,
                static_friction: 0.5,
                dynamic_friction: 0.5,
            },
            state: RigidBodyState {
                pose: Isometry3::identity(),
                velocity,
                angular_velocity,
            },
        };
        let parameters = WorldParameters {
            gravity: Vector3::zeros(),
            ..WorldParameters::default()
        };
        let world = World::new(vec![body], Vec::new(), parameters).unwrap();
        let link = BodyLink {
            entries: vec![0],
            drag,
        };
        PhysicsWorld::new(world, vec![link], vec![Isometry3::identity()])
    }

    /// The servo's running impulse after `ticks` ticks of `wrench` at 1 kHz.
    fn pushed(wrench: Vector6<f64>, ticks: u32) -> ToolState {
        let mut tool = ToolState::new(1);
        tool.contact_impulses[0] = wrench * (f64::from(ticks) * 1e-3);
        tool
    }

    /// A solid's interior nodes are on no surface triangle: its surface
    /// frames leave them out, and its triangles index what they carry.
    #[test]
    fn a_surface_frame_carries_only_the_nodes_its_triangles_use() {
        let triangles = [[4, 7, 2], [2, 7, 9]];
        let nodes = surface_nodes(&triangles);
        assert_eq!(nodes, [2, 4, 7, 9]);
        assert_eq!(
            surface_triangles(&triangles, &nodes),
            [[1, 2, 0], [0, 2, 3]]
        );
    }

    /// The hand-off's buffers, sized from the world as built, take every
    /// later step's nodes in place: no step grows or moves them.
    #[test]
    fn deformable_nodes_refill_their_buffers_in_place() {
        use haptic_deformable::{scenes, SolverParameters};
        let pose = Isometry3::translation(0.0, 0.0, 1.0);
        let spec = scenes::ClothSpec {
            nodes: 6,
            side: 0.2,
            ..scenes::ClothSpec::default()
        };
        let (cloth, _) = scenes::cloth("cloth", &spec, &pose).unwrap();
        let rigid = World::new(
            Vec::new(),
            Vec::new(),
            haptic_physics::WorldParameters {
                gravity: Vector3::new(0.0, 0.0, -9.81),
                ..Default::default()
            },
        )
        .unwrap();
        let coupled =
            CoupledWorld::new(rigid, vec![cloth], Vec::new(), SolverParameters::default()).unwrap();
        let mut world = PhysicsWorld::coupled(coupled, Vec::new(), Vec::new());
        let mut nodes = DeformableNodes::new(world.deformables());
        assert_eq!(nodes.positions[0].len(), 36);
        let buffers = |n: &DeformableNodes| {
            let mut b: Vec<_> = n
                .positions
                .iter()
                .map(|p| (p.as_ptr(), p.capacity()))
                .collect();
            b.push((n.positions.as_ptr().cast(), n.positions.capacity()));
            b
        };
        let before = buffers(&nodes);
        let z0 = nodes.positions[0][0].z;
        for _ in 0..10 {
            world.advance(0.01);
            nodes.fill(&world);
            assert_eq!(buffers(&nodes), before);
        }
        assert_eq!(nodes.sequence, 10);
        assert_eq!(nodes.positions[0], world.deformables()[0].state.positions);
        // It falls: the copies are the stepped nodes, not the built ones.
        assert!(
            nodes.positions[0][0].z < z0 - 1e-3,
            "{}",
            nodes.positions[0][0].z
        );
    }

    /// A cube hinged to the world along the vertical through its face's
    /// centre may only turn about that line: its free motions are the one
    /// `(ω × (c − p), ω)`, `ω` along the axis; on a ball joint it keeps the
    /// three turns about the joint; unjointed, all six motions.
    #[test]
    fn a_jointed_body_s_local_model_moves_only_as_its_joints_allow() {
        let free = cube(0.5, (0.0, 0.0));
        let Some(Bodies::Rigid(unjointed)) = &free.world else {
            unreachable!()
        };
        assert_eq!(joint_free_motion(unjointed, 0), Some(LocalBodyModel::FREE));
        let bodies = unjointed.bodies().to_vec();
        let pivot = Point3::new(0.025, 0.0, 0.0);
        let axis = Vector3::z();
        for (joint, motions) in [
            (
                haptic_physics::joints::Joint::hinge("hinge", 0, None, &bodies, pivot, axis)
                    .unwrap(),
                1.0,
            ),
            (
                haptic_physics::joints::Joint::ball("ball", 0, None, &bodies, pivot).unwrap(),
                3.0,
            ),
        ] {
            let world =
                World::new(bodies.clone(), vec![joint], WorldParameters::default()).unwrap();
            let projector = joint_free_motion(&world, 0).unwrap();
            assert!((projector.trace() - motions).abs() < 1e-9);
            assert!((projector * projector - projector).norm() < 1e-9);
            // Turning about the axis through the pivot is allowed.
            let turn = axis.cross(&(Point3::origin() - pivot));
            let about_pivot = Vector6::new(turn.x, turn.y, turn.z, axis.x, axis.y, axis.z);
            assert!((projector * about_pivot - about_pivot).norm() < 1e-9);
            // Sliding the cube, or turning it about its own centre, is not.
            let slide = Vector6::new(1.0, 0.0, 0.0, 0.0, 0.0, 0.0);
            assert!((projector * slide).norm() < 1e-9);
            let spin = Vector6::new(0.0, 0.0, 0.0, axis.x, axis.y, axis.z);
            assert!((projector * spin - spin).norm() > 0.01);
        }
    }

    #[test]
    fn every_tick_s_impulse_reaches_the_body() {
        let mut world = cube(0.5, (0.0, 0.0));
        let force = Vector6::new(1.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        // 200 steps of 5 ms, 5 servo ticks each: 1 N for 1 s.
        for step in 1..=200 {
            world.step(&pushed(force, 5 * step), 0.005);
        }
        let body = &world.report().bodies[0];
        // v = F t / m; the impulse is all there, to rounding.
        assert!((body.velocity.x - 2.0).abs() < 1e-12, "{}", body.velocity.x);
        assert!((body.impulse.x - 1.0).abs() < 1e-12);
        // Semi-implicit Euler: x = a dt² n(n+1)/2.
        let expected = 2.0 * 0.005 * 0.005 * 200.0 * 201.0 / 2.0;
        assert!((body.pose.translation.x - expected).abs() < 1e-9);
        assert!(body.pose.translation.vector.yz().norm() < 1e-15);
    }

    /// Drag integrated exactly: after one step `v e^{−c dt/m}`, however
    /// light the body, where explicit drag diverges once `c dt/m > 2`.
    #[test]
    fn drag_on_a_light_body_decays_as_the_exponential() {
        let (mass, c, c_r, dt) = (0.001, 2.0, 1e-3, 0.005);
        let mut world = moving_cube(
            mass,
            (c, c_r),
            Vector3::new(1.0, 0.0, 0.0),
            Vector3::new(0.0, 0.0, 10.0),
        );
        let inertia = mass * 0.05 * 0.05 / 6.0;
        for step in 1..=5 {
            world.advance(dt);
            let body = &world.bodies()[0];
            let t = dt * f64::from(step);
            let v = (-c * t / mass).exp();
            let w = 10.0 * (-c_r * t / inertia).exp();
            // v − m v (1 − e^{−10})/m cancels all but 1e-5 of v: 1e-10.
            assert!(
                (body.state.velocity.x - v).abs() < 1e-10 * v,
                "{}",
                body.state.velocity.x
            );
            assert!(body.state.velocity.x > 0.0);
            assert!(
                (body.state.angular_velocity.z - w).abs() < 1e-9 * w,
                "{}",
                body.state.angular_velocity.z
            );
        }
    }

    #[test]
    fn a_world_without_bodies_steps_nothing_and_publishes_nothing() {
        let mut world = PhysicsWorld::default();
        world.step(&ToolState::new(2), 0.005);
        assert_eq!(world.advance(0.005), StepReport::default());
        assert!(world.bodies().is_empty());
        assert_eq!(world.report(), PhysicsReport::default());
    }
}
