//! One servo tick, from device sample to published record.
use crate::local_models::{LocalBodies, LocalBodyModel};
use crate::passivity::{PassivityController, PassivityRecord, PassivitySettings};
use crate::stage::{PerStage, Stage};
use haptic_contact::ContactScene;
use haptic_devices::{
    DeviceError, DeviceSample, HapticDevice, SafetyLayer, SafetyState, TripCause, Wrench,
};
use haptic_friction::FrictionState;
use haptic_handoff::{
    mailbox, Latest, LatestReader, LatestWriter, MailboxReceiver, MailboxSender, TickProducer,
};
use haptic_render::{
    BudgetCut, ContactFriction, CycleLayout, FrictionVerdict, RenderError, RenderingCycle,
    RenderingUpdate,
};
use nalgebra::{Isometry3, Point3, Translation3, UnitQuaternion, Vector3, Vector6};
use std::time::{Duration, Instant};

/// Maps the device handle into the scene: the handle's position is scaled
/// by `scale` and placed by `offset`; its orientation is turned by `grip`
/// (identity until a clutch re-indexes it), then placed by `offset`. The
/// rendered wrench goes back rotated into the device frame and, to keep the
/// mapping energy-consistent, its force multiplied by `scale`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorkspaceMapping {
    pub offset: Isometry3<f64>,
    pub scale: f64,
    /// Orientation re-index, applied in the handle frame.
    pub grip: UnitQuaternion<f64>,
}

impl WorkspaceMapping {
    /// `offset` and `scale` with no orientation re-index.
    pub fn new(offset: Isometry3<f64>, scale: f64) -> Self {
        Self {
            offset,
            scale,
            grip: UnitQuaternion::identity(),
        }
    }

    /// Re-indexes the mapping so that `sample` maps to `manipulandum`: the
    /// handle picks up the tool where it was left when the clutch was
    /// released. Only the position offset and the grip change, so moving
    /// the hand along a device axis still moves the tool along the same
    /// scene axis, however the handle was turned while declutched.
    pub fn reindex(&mut self, sample: &DeviceSample, manipulandum: &Isometry3<f64>) {
        let placed = self.offset.rotation * (sample.position.coords * self.scale);
        self.offset.translation = Translation3::from(manipulandum.translation.vector - placed);
        self.grip = (self.offset.rotation * sample.orientation).inverse() * manipulandum.rotation;
    }

    /// The manipulandum pose for the handle in `sample`.
    pub fn manipulandum(&self, sample: &DeviceSample) -> Isometry3<f64> {
        let position = self.offset * Point3::from(sample.position.coords * self.scale);
        Isometry3::from_parts(
            Translation3::from(position.coords),
            self.offset.rotation * sample.orientation * self.grip,
        )
    }

    /// A scene wrench `[F; τ]` on the manipulandum, in the device frame.
    pub fn to_device(&self, wrench: &Vector6<f64>) -> Wrench {
        let back = self.offset.rotation.inverse();
        Wrench {
            force: back * Vector3::new(wrench[0], wrench[1], wrench[2]) * self.scale,
            torque: back * Vector3::new(wrench[3], wrench[4], wrench[5]),
        }
    }
}

/// The physics thread's latest state, published physics → servo.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PhysicsSnapshot {
    /// Incremented by the physics thread on every publish; recorded per tick.
    pub sequence: u64,
    /// Pose (object frame → world) of each environment object of the
    /// rendering cycle, in the cycle's order. The tick copies the first
    /// `min(len, objects)`: extra poses are ignored, and objects without a
    /// pose keep theirs.
    pub environment_poses: Vec<Isometry3<f64>>,
    /// The last [`ToolState::tick`] whose contact impulses the step took.
    pub tool_tick: u64,
    /// The dynamic bodies the tool can touch, for the servo to move between
    /// steps ([`crate::LocalBodies`]); none when local models are off.
    pub local_models: Vec<LocalBodyModel>,
    /// Per deformable the tool can touch, its surface nodes near the tool.
    pub patches: Vec<NodePatch>,
}

/// A deformable's surface nodes near the tool, as a physics step left
/// them, for the servo to render in the tool's field: the points of an
/// environment entry of `haptic_contact::EnvironmentGeometry::Nodes`, whose
/// pose is the identity (or, with local models on, the patch's motion since
/// the step, a translation).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodePatch {
    /// Its entry in the rendering cycle's environment.
    pub entry: u16,
    /// Slot `k`'s node, world frame (m); a non-finite point is an empty
    /// slot. A node keeps its slot from step to step while it stays near.
    pub points: Vec<Point3<f64>>,
    /// Slot `k`'s outward unit normal.
    pub normals: Vec<Vector3<f64>>,
    /// What slot `k` holds (the point's index in the deformable's surface
    /// samples), so that the servo knows a point kept from one moved.
    pub ids: Vec<u32>,
}

impl PhysicsSnapshot {
    /// Sequence 0 with `poses`. As a channel's initial value it sizes the
    /// slots that in-place publishes reuse; the servo applies only values
    /// published after it.
    pub fn new(poses: Vec<Isometry3<f64>>) -> Self {
        Self {
            sequence: 0,
            environment_poses: poses,
            tool_tick: 0,
            local_models: Vec::new(),
            patches: Vec::new(),
        }
    }
}

/// The servo's state, published servo → physics every tick.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolState {
    /// The tick that published it.
    pub tick: u64,
    /// Its scheduled time since the servo started.
    pub time: Duration,
    /// The tool after the tick's step (object frame → world).
    pub tool_pose: Isometry3<f64>,
    /// The manipulandum: the handle mapped into the scene (the last one
    /// read when this tick's read failed).
    pub manipulandum: Isometry3<f64>,
    /// Per environment object, the contact wrench `[F; τ]` the tool exerts
    /// on it (world frame, torque about the object's frame origin at its
    /// current pose), from the contacts of this tick's step: the reaction
    /// of each contact's penalty force `−k d N` and friction on the tool,
    /// applied at the contact point. Zero when the tick's device read
    /// failed (it rendered nothing).
    pub contact_wrenches: Vec<Vector6<f64>>,
    /// Per environment object, the contact impulse `[∫F dt; ∫τ dt]` (N·s,
    /// N·m·s) since the start of the run up to this tick's scheduled `time`:
    /// each tick's [`contact_wrenches`](Self::contact_wrenches) held until
    /// the next tick, as the tool stays where that tick put it and the
    /// device holds that tick's output. A tick late after an overrun
    /// therefore books the wrench rendered before the stall over the
    /// stall, not its own, newer one. World frame; each tick's torque is
    /// about the object's origin at that tick, as in `contact_wrenches`. A reader
    /// sampling at a lower rate takes the difference between two reads to
    /// get every tick's push in between, not just the last tick's.
    pub contact_impulses: Vec<Vector6<f64>>,
}

impl ToolState {
    /// Tick 0 at the origin with zero wrenches and impulses for
    /// `environment_objects` objects. Build the channel from this with the
    /// cycle's environment object count so that the tick's in-place
    /// publishes never allocate.
    pub fn new(environment_objects: usize) -> Self {
        Self {
            tick: 0,
            time: Duration::ZERO,
            tool_pose: Isometry3::identity(),
            manipulandum: Isometry3::identity(),
            contact_wrenches: vec![Vector6::zeros(); environment_objects],
            contact_impulses: vec![Vector6::zeros(); environment_objects],
        }
    }
}

/// Contact points a [`SceneFrame`] holds at most.
pub const SCENE_FRAME_CONTACTS: usize = 256;

/// One contact of a tick, for the visualizer: world frame, forces on the
/// tool.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactPoint {
    /// Index of the environment object in the rendering cycle.
    pub object: u16,
    /// The contact point (m).
    pub position: [f64; 3],
    /// `N`, the unit direction of the penalty force, out of the environment.
    pub normal: [f64; 3],
    /// The penalty force `−k d N` (eq 1; N).
    pub normal_force: [f64; 3],
    /// The friction stage's force at the contact
    /// ([`ContactFriction`](haptic_render::ContactFriction); N).
    pub friction_force: [f64; 3],
    /// The contact sticks (static friction).
    pub stuck: bool,
}

/// What the scene looked like in one tick, published servo → control
/// every tick through a [`Latest`] built from [`SceneFrame::new`].
#[derive(Debug, PartialEq)]
pub struct SceneFrame {
    pub tick: u64,
    /// [`PhysicsSnapshot::sequence`] of the last snapshot the tick applied:
    /// the physics step whose poses `environment_poses` are (moved since by
    /// local models when they are on).
    pub physics_sequence: u64,
    /// Pose (object frame → world) of each environment object, as applied
    /// in the tick.
    pub environment_poses: Vec<Isometry3<f64>>,
    /// The tick's first [`SCENE_FRAME_CONTACTS`] contacts; none when the
    /// device read failed and nothing was rendered.
    pub contacts: Vec<ContactPoint>,
    /// All the tick's contacts, including those left out of `contacts`.
    pub contacts_total: u32,
}

impl SceneFrame {
    /// Tick 0 with identity poses for `environment_objects` objects and
    /// room for [`SCENE_FRAME_CONTACTS`] contacts.
    pub fn new(environment_objects: usize) -> Self {
        Self {
            tick: 0,
            physics_sequence: 0,
            environment_poses: vec![Isometry3::identity(); environment_objects],
            contacts: Vec::with_capacity(SCENE_FRAME_CONTACTS),
            contacts_total: 0,
        }
    }
}

impl Clone for SceneFrame {
    /// Keeps room for [`SCENE_FRAME_CONTACTS`] contacts, so that the
    /// [`Latest`] slots cloned from [`SceneFrame::new`] never grow.
    fn clone(&self) -> Self {
        let mut contacts = Vec::with_capacity(SCENE_FRAME_CONTACTS.max(self.contacts.len()));
        contacts.extend_from_slice(&self.contacts);
        Self {
            tick: self.tick,
            physics_sequence: self.physics_sequence,
            environment_poses: self.environment_poses.clone(),
            contacts,
            contacts_total: self.contacts_total,
        }
    }
}

/// New rendering parameters on their way to the servo and back: the
/// servo applies `rendering` at the start of a tick and returns the box,
/// holding the cycle's previous friction stage, with `applied` set.
pub struct ParameterUpdate {
    /// The parameter generation the update brings into force.
    pub generation: u64,
    pub rendering: RenderingUpdate,
    /// `None` until the servo took it; then the tick from which it is in
    /// force, or why the cycle refused it.
    pub applied: Option<Result<u64, RenderError>>,
}

impl ParameterUpdate {
    /// `rendering` as generation `generation`, not yet applied.
    pub fn new(generation: u64, rendering: RenderingUpdate) -> Self {
        Self {
            generation,
            rendering,
            applied: None,
        }
    }
}

/// The control thread's ends of a servo's control channels.
pub struct ServoControl {
    /// Sends [`ParameterUpdate`]s and collects them back once applied.
    pub updates: MailboxSender<ParameterUpdate>,
    /// The newest tick's [`SceneFrame`].
    pub scene_frames: LatestReader<SceneFrame>,
    /// What updates must be built for.
    pub layout: CycleLayout,
}

/// A servo tick's channels to the other threads, allocated at start-up.
pub struct ServoChannels {
    pub physics: LatestReader<PhysicsSnapshot>,
    pub tool: LatestWriter<ToolState>,
    pub telemetry: TickProducer<TickRecord>,
    pub updates: MailboxReceiver<ParameterUpdate>,
    pub scene_frames: LatestWriter<SceneFrame>,
}

impl ServoChannels {
    /// `physics`, `tool` and `telemetry` with new control channels for
    /// `cycle`, and the control thread's ends of them.
    pub fn with_control(
        cycle: &RenderingCycle,
        physics: LatestReader<PhysicsSnapshot>,
        tool: LatestWriter<ToolState>,
        telemetry: TickProducer<TickRecord>,
    ) -> (Self, ServoControl) {
        let layout = cycle.layout();
        let (sender, receiver) = mailbox();
        let (frame_writer, frame_reader) =
            Latest::new(&SceneFrame::new(layout.environment_objects)).split();
        (
            Self {
                physics,
                tool,
                telemetry,
                updates: receiver,
                scene_frames: frame_writer,
            },
            ServoControl {
                updates: sender,
                scene_frames: frame_reader,
                layout,
            },
        )
    }
}

/// What one tick did, as published to telemetry. Timings in nanoseconds;
/// orientations as quaternions `[w, i, j, k]`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TickRecord {
    /// Ticks before this one.
    pub tick: u64,
    /// Scheduled time of the tick since the servo started.
    pub time: Duration,
    pub contacts: u32,
    /// The friction stage's verdict; `None` when the device read failed and
    /// nothing was rendered.
    pub verdict: Option<FrictionVerdict>,
    /// The tool pose came out non-finite and the rendering cycle
    /// reset it to the manipulandum (`CycleReport::quarantined`).
    pub quarantined: bool,
    /// Sequence of the last physics snapshot applied.
    pub physics_sequence: u64,
    /// Handle position read this tick, device frame (m); zero when the read
    /// failed.
    pub device_position: [f64; 3],
    /// Handle orientation read this tick, device frame; identity when the
    /// read failed.
    pub device_orientation: [f64; 4],
    /// Tool position after the tick, world frame (m).
    pub tool_position: [f64; 3],
    /// Tool orientation after the tick, world frame.
    pub tool_orientation: [f64; 4],
    /// The manipulandum's position, world frame (m): the handle mapped
    /// into the scene this tick, or the last one when the read failed or
    /// the clutch is held.
    pub manipulandum_position: [f64; 3],
    /// The manipulandum's orientation, world frame.
    pub manipulandum_orientation: [f64; 4],
    /// Force rendered this tick, device frame (N): the coupling wrench mapped
    /// to the device, before the passivity controller's damping, the safety
    /// layer's limits and the device's output mask. Zero while clutched or when nothing was
    /// rendered; not finite when the rendering was not.
    pub rendered_force: [f64; 3],
    /// Torque rendered this tick, device frame (N·m), as `rendered_force`.
    pub rendered_torque: [f64; 3],
    /// Force written to the device after the safety layer, device frame (N).
    pub force: [f64; 3],
    /// Torque written to the device after the safety layer, device frame (N·m).
    pub torque: [f64; 3],
    /// How late the tick woke after its deadline.
    pub wake_latency_ns: u64,
    /// Safety trip episodes so far, all causes.
    pub safety_trips: u64,
    /// The servo's fault counts so far, this tick included.
    pub faults: TickFaults,
    /// Ticks decided within the friction solver's band so far, this tick
    /// included ([`VerdictCounts::band_decisions`]).
    pub band_decisions: u64,
    /// The most recent trip's cause, if any trip happened yet.
    pub last_trip: Option<TripCause>,
    /// The safety layer's state after the tick's write.
    pub safety_state: SafetyState,
    /// The clutch button was held: the tool stayed put and zero was written.
    pub clutched: bool,
    /// Time spent in each stage (ns).
    pub stage_ns: PerStage<u64>,
    /// The rendering parameters' generation in force: 0 as started, then
    /// that of the last [`ParameterUpdate`] applied.
    pub generation: u64,
    /// What the rendering budget cut this tick.
    pub budget_cut: BudgetCut,
    /// What it cut so far, this tick included.
    pub budget_cuts: BudgetCuts,
    /// The passivity observer's energies and the controller's damping
    /// after the tick.
    pub passivity: PassivityRecord,
    /// The bodies the local models moved this tick, the first
    /// [`RECORDED_LOCAL_BODIES`] of them.
    pub local_bodies: [LocalBodyState; RECORDED_LOCAL_BODIES],
    /// How many bodies the local models moved, all of them.
    pub local_body_count: u32,
}

/// How many of the bodies moved by local models a [`TickRecord`] carries.
pub const RECORDED_LOCAL_BODIES: usize = 8;

/// A body moved by its local model, after the tick.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LocalBodyState {
    /// Its index in the physics world.
    pub body: u32,
    /// Its rendered centre of mass, world frame (m).
    pub position: [f64; 3],
    /// Its rendered orientation.
    pub orientation: [f64; 4],
    /// `(v, ω)`, world frame (m/s, rad/s).
    pub velocity: [f64; 6],
}

/// Ticks the rendering budget cut, counted by the servo: the companion of
/// [`VerdictCounts`] for the cycles that ran out of time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BudgetCuts {
    /// Ticks whose collision stage stopped at a coarser tree level.
    pub collision: u64,
    /// Ticks whose friction solve stopped at its deadline.
    pub friction: u64,
    /// Shell points left unresolved, summed over the ticks.
    pub unresolved_points: u64,
    /// The most shell points one tick left unresolved.
    pub max_unresolved_points: u32,
}

impl BudgetCuts {
    pub fn add(&mut self, cut: &BudgetCut) {
        self.collision += u64::from(cut.collision());
        self.friction += u64::from(cut.friction_out_of_time);
        self.unresolved_points += u64::from(cut.unresolved_points);
        self.max_unresolved_points = self.max_unresolved_points.max(cut.unresolved_points);
    }

    /// Shell points left unresolved per collision-cut tick.
    pub fn mean_unresolved_points(&self) -> f64 {
        if self.collision == 0 {
            0.0
        } else {
            self.unresolved_points as f64 / self.collision as f64
        }
    }
}

/// Faults seen by the tick, each counted once per tick.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TickFaults {
    /// Device reads that failed (including non-finite samples), not
    /// counting reads that reported the end of the device's recording.
    pub read: u64,
    /// Rendered wrenches that were not finite.
    pub render: u64,
    /// Device writes that failed.
    pub write: u64,
    /// Ticks whose friction solve failed ([`FrictionVerdict::SolverFailed`]):
    /// they slid without friction.
    pub solver_failed: u64,
    /// Ticks whose tool pose came out non-finite and was reset to the
    /// manipulandum (`CycleReport::quarantined`); they rendered zero.
    pub quarantined: u64,
}

impl TickFaults {
    /// All faults, every kind.
    pub fn total(&self) -> u64 {
        self.read + self.render + self.write + self.solver_failed + self.quarantined
    }

    /// Counts a rendered cycle's friction and pose faults: a failed solve
    /// and a quarantined pose.
    pub fn count_cycle(&mut self, verdict: FrictionVerdict, quarantined: bool) {
        self.solver_failed += u64::from(verdict == FrictionVerdict::SolverFailed);
        self.quarantined += u64::from(quarantined);
    }
}

/// Ticks per friction verdict, and ticks that rendered nothing: the
/// companion of [`TickFaults`] that counts the decisions the friction
/// solver could not certify.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VerdictCounts {
    /// Indexed by [`FrictionVerdict::code`].
    pub by_code: [u64; FrictionVerdict::ALL.len()],
    /// Ticks whose device read failed.
    pub not_rendered: u64,
}

impl VerdictCounts {
    /// Counts one tick's [`TickRecord::verdict`].
    pub fn add(&mut self, verdict: Option<FrictionVerdict>) {
        match verdict {
            Some(verdict) => self.by_code[usize::from(verdict.code())] += 1,
            None => self.not_rendered += 1,
        }
    }

    /// Ticks with `verdict`.
    pub fn get(&self, verdict: FrictionVerdict) -> u64 {
        self.by_code[usize::from(verdict.code())]
    }

    /// Ticks decided within the solver's band, static or sliding.
    pub fn band_decisions(&self) -> u64 {
        self.get(FrictionVerdict::StaticInBand) + self.get(FrictionVerdict::SlidingInBand)
    }

    /// Every tick counted.
    pub fn total(&self) -> u64 {
        self.by_code.iter().sum::<u64>() + self.not_rendered
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

fn wijk(q: &UnitQuaternion<f64>) -> [f64; 4] {
    [q.w, q.i, q.j, q.k]
}

impl TickRecord {
    /// What the tool did, free, sliding or static; `None` when nothing was
    /// rendered.
    pub fn friction_state(&self) -> Option<FrictionState> {
        self.verdict.map(FrictionVerdict::state)
    }

    /// Compute time of the tick: the sum of its stages (ns).
    pub fn compute_ns(&self) -> u64 {
        self.stage_ns.total()
    }
}

/// Sets `wrenches`, one per environment object of `scene`, to the reaction
/// of its last contacts' forces on the tool, about each object's origin:
/// each contact's penalty force and its friction (`friction`, per contact
/// in the scene's order), so that an object takes what the tool took from
/// it, the tangential drag of a stuck or sliding tool included.
fn reaction_wrenches(
    scene: &ContactScene,
    friction: &[ContactFriction],
    wrenches: &mut [Vector6<f64>],
) {
    wrenches.fill(Vector6::zeros());
    let x = scene.pose().translation.vector;
    for (k, contact) in scene.contacts().iter().enumerate() {
        let index = contact.environment as usize;
        let origin = scene.environment()[index].pose.translation.vector;
        let drag = friction.get(k).map_or(Vector3::zeros(), |f| f.force);
        let force = -(contact.force() + drag);
        let torque = (x + contact.handle - origin).cross(&force);
        wrenches[index] += Vector6::new(force.x, force.y, force.z, torque.x, torque.y, torque.z);
    }
}

/// Fills `frame` with the tick's environment poses and, when `rendered`,
/// the contacts of the cycle's last step.
fn fill_scene_frame(
    frame: &mut SceneFrame,
    record: &TickRecord,
    cycle: &RenderingCycle,
    rendered: bool,
) {
    let scene = cycle.scene();
    frame.tick = record.tick;
    frame.physics_sequence = record.physics_sequence;
    for (slot, object) in frame.environment_poses.iter_mut().zip(scene.environment()) {
        *slot = object.pose;
    }
    frame.contacts.clear();
    frame.contacts_total = 0;
    if !rendered {
        return;
    }
    frame.contacts_total = scene.contacts().len() as u32;
    let x = scene.pose().translation.vector;
    let points = scene.contacts().iter().zip(cycle.contact_friction());
    frame.contacts.extend(
        points
            .take(SCENE_FRAME_CONTACTS)
            .map(|(contact, friction)| ContactPoint {
                object: contact.environment as u16,
                position: (x + contact.handle).into(),
                normal: contact.normal.into(),
                normal_force: contact.force().into(),
                friction_force: friction.force.into(),
                stuck: friction.stuck,
            }),
    );
}

/// Everything one servo tick needs; [`ServoTick::run`] is the tick.
pub struct ServoTick<D: HapticDevice> {
    device: SafetyLayer<D>,
    mapping: WorkspaceMapping,
    cycle: RenderingCycle,
    physics: LatestReader<PhysicsSnapshot>,
    physics_sequence: u64,
    tool: LatestWriter<ToolState>,
    telemetry: TickProducer<TickRecord>,
    updates: MailboxReceiver<ParameterUpdate>,
    scene_frames: LatestWriter<SceneFrame>,
    /// [`TickRecord::generation`].
    generation: u64,
    manipulandum: Isometry3<f64>,
    /// Bit mask of the clutch button, if any.
    clutch: u32,
    clutched: bool,
    ticks: u64,
    faults: TickFaults,
    verdicts: VerdictCounts,
    budget_cuts: BudgetCuts,
    ended: bool,
    /// The device reported [`DeviceError::Lost`].
    lost: bool,
    /// The previous tick's scheduled time.
    last_time: Option<Duration>,
    /// This tick's [`ToolState::contact_wrenches`].
    contact_wrenches: Vec<Vector6<f64>>,
    /// The running [`ToolState::contact_impulses`].
    contact_impulses: Vec<Vector6<f64>>,
    /// The touched bodies moved between physics steps (room for none
    /// unless [`with_local_models`](Self::with_local_models)).
    local: LocalBodies,
    /// The energy exchanged with the device, and the damping that keeps it
    /// passive.
    passivity: PassivityController,
}

impl<D: HapticDevice> ServoTick<D> {
    /// Build `channels.physics` from [`PhysicsSnapshot::new`] with one pose
    /// per environment object and `channels.tool` from [`ToolState::new`]
    /// with the cycle's environment object count, so that neither grows in
    /// a tick, and the control channels with [`ServoChannels::with_control`].
    pub fn new(
        device: SafetyLayer<D>,
        mapping: WorkspaceMapping,
        cycle: RenderingCycle,
        channels: ServoChannels,
    ) -> Self {
        let objects = cycle.scene().environment().len();
        let ServoChannels {
            physics,
            tool,
            telemetry,
            updates,
            scene_frames,
        } = channels;
        Self {
            device,
            mapping,
            manipulandum: *cycle.tool_pose(),
            cycle,
            physics,
            physics_sequence: 0,
            tool,
            telemetry,
            updates,
            scene_frames,
            generation: 0,
            clutch: 0,
            clutched: false,
            ticks: 0,
            faults: TickFaults::default(),
            verdicts: VerdictCounts::default(),
            budget_cuts: BudgetCuts::default(),
            ended: false,
            lost: false,
            last_time: None,
            contact_wrenches: vec![Vector6::zeros(); objects],
            contact_impulses: vec![Vector6::zeros(); objects],
            local: LocalBodies::new(0, 0.0, 0.0),
            passivity: PassivityController::new(PassivitySettings::default()),
        }
    }

    /// The passivity controller's settings (the observer runs either way).
    pub fn with_passivity(mut self, settings: PassivitySettings) -> Self {
        self.passivity = PassivityController::new(settings);
        self
    }

    /// Moves the bodies of the physics snapshots' local models every tick
    /// of `period` seconds ([`LocalBodies`]), blending each new model in
    /// over `blend` seconds.
    pub fn with_local_models(mut self, period: f64, blend: f64) -> Self {
        let objects = self.cycle.scene().environment().len();
        self.local = LocalBodies::new(objects, period, blend);
        self
    }

    /// The bodies moved between physics steps.
    pub fn local_models(&self) -> &LocalBodies {
        &self.local
    }

    /// Declutches the tool while button `button` (0–31) is held: the tool
    /// stays where it was, the device gets zero, and on release the mapping
    /// is re-indexed so the tool moves on from there without a jump. For
    /// devices whose workspace is smaller than the scene.
    pub fn with_clutch(mut self, button: u32) -> Self {
        self.clutch = 1 << button;
        self
    }

    /// One tick scheduled at `time`, woken `wake_latency` after it: apply a
    /// pending [`ParameterUpdate`] (and hand it back), read the device,
    /// apply a newly published physics snapshot, map the handle into
    /// the scene, render, write the wrench through the safety layer, publish
    /// the tool state, the [`SceneFrame`] and the record (dropped and
    /// counted when telemetry is full). A failed read writes zero and publishes zero contact wrenches.
    /// The end of the device's recording, or a lost device not to be
    /// waited for ([`DeviceError::Lost`]), is no fault: it starts the safety
    /// layer's shutdown ramp from the last commanded wrench, as a stop
    /// request does, and sets [`ServoTick::device_ended`]. `time` is
    /// expected not to decrease from tick to tick. Never allocates, locks
    /// or panics on device faults.
    pub fn run(&mut self, time: Duration, wake_latency: Duration) -> TickRecord {
        let mut record = TickRecord {
            tick: self.ticks,
            time,
            device_orientation: wijk(&UnitQuaternion::identity()),
            wake_latency_ns: nanos(wake_latency),
            ..TickRecord::default()
        };
        self.ticks += 1;

        let (cycle, generation) = (&mut self.cycle, &mut self.generation);
        self.updates.take_with(|update| {
            let outcome = cycle.apply(&mut update.rendering).map(|()| record.tick);
            if outcome.is_ok() {
                *generation = update.generation;
            }
            update.applied = Some(outcome);
        });
        record.generation = self.generation;

        let started = Instant::now();
        let sample = self.device.read();
        record.stage_ns[Stage::Read] = nanos(started.elapsed());

        let bodies_started = Instant::now();
        if let Some(snapshot) = self.physics.read_new() {
            self.physics_sequence = snapshot.sequence;
            let objects = self.cycle.scene().environment().len();
            self.local
                .take(&snapshot.local_models, snapshot.tool_tick, record.tick);
            for patch in &snapshot.patches {
                let entry = usize::from(patch.entry);
                if let Some(moved) = self.cycle.set_environment_nodes(
                    entry,
                    &patch.points,
                    &patch.normals,
                    &patch.ids,
                ) {
                    // The nodes the tool felt stay where it felt them; the
                    // frame's jump that keeps them there is no motion of
                    // the surface, and carries the tool nowhere.
                    if self.local.carry(entry, &-moved) {
                        let pose = self.cycle.scene().environment()[entry].pose;
                        self.cycle
                            .set_environment_pose(entry, Translation3::from(-moved) * pose);
                    }
                }
            }
            // A body moved here goes on from where it was rendered.
            for (index, pose) in snapshot.environment_poses.iter().take(objects).enumerate() {
                if !self.local.moves(index) {
                    self.cycle.set_environment_pose(index, *pose);
                }
            }
        }
        self.local.place(&mut self.cycle);
        let mut bodies_time = bodies_started.elapsed();
        record.physics_sequence = self.physics_sequence;

        let period = self
            .last_time
            .map_or(0.0, |last| time.saturating_sub(last).as_secs_f64());
        self.last_time = Some(time);
        let mut rendered = false;
        let mut controlled = false;
        let request = match sample {
            Ok(sample) => {
                rendered = true;
                self.passivity.observe(&sample);
                record.device_position = sample.position.coords.into();
                record.device_orientation = wijk(&sample.orientation);
                let held = sample.buttons & self.clutch != 0;
                if self.clutched && !held {
                    self.mapping.reindex(&sample, &self.manipulandum);
                }
                self.clutched = held;
                record.clutched = held;
                if !held {
                    self.manipulandum = self.mapping.manipulandum(&sample);
                }
                let report = self.cycle.step(&self.manipulandum);
                record.contacts = report.contacts as u32;
                record.verdict = Some(report.verdict);
                record.quarantined = report.quarantined;
                self.faults.count_cycle(report.verdict, report.quarantined);
                record.budget_cut = report.budget_cut;
                self.budget_cuts.add(&report.budget_cut);
                let timings = &report.timings;
                record.stage_ns[Stage::Collision] = nanos(timings.collision);
                record.stage_ns[Stage::Assembly] = nanos(timings.assembly);
                record.stage_ns[Stage::Friction] = nanos(timings.friction);
                record.stage_ns[Stage::Coupling] = nanos(timings.coupling);
                let wrench = if held {
                    Wrench::ZERO
                } else {
                    self.mapping.to_device(&report.coupling_wrench)
                };
                if !wrench.is_finite() {
                    // The safety layer trips and writes zero.
                    self.faults.render += 1;
                }
                controlled = !held;
                wrench
            }
            Err(e @ (DeviceError::EndOfRecording | DeviceError::Lost)) => {
                self.ended = true;
                self.lost |= e == DeviceError::Lost;
                // Idempotent: the ramp starts once; the request is ignored.
                self.device.shutdown();
                Wrench::ZERO
            }
            Err(_) => {
                self.faults.read += 1;
                Wrench::ZERO
            }
        };
        record.rendered_force = request.force.into();
        record.rendered_torque = request.torque.into();
        let write_started = Instant::now();
        // Zero while clutched or unread stays zero.
        let request = self
            .passivity
            .shape(request, if controlled { period } else { 0.0 });
        if self.device.write(&request).is_err() {
            self.faults.write += 1;
        }
        record.stage_ns[Stage::Write] = nanos(write_started.elapsed());
        // What reached the device, after the safety layer's limits.
        let written = self.device.commanded();
        self.passivity.wrote(written);
        record.passivity = self.passivity.record();
        record.force = written.force.into();
        record.torque = written.torque.into();
        record.safety_trips = self.device.counters().total();
        self.verdicts.add(record.verdict);
        record.faults = self.faults;
        record.band_decisions = self.verdicts.band_decisions();
        record.budget_cuts = self.budget_cuts;
        record.last_trip = self.device.last_trip().map(|trip| trip.cause);
        record.safety_state = self.device.state();
        let tool_pose = *self.cycle.tool_pose();
        record.tool_position = tool_pose.translation.vector.into();
        record.tool_orientation = wijk(&tool_pose.rotation);
        record.manipulandum_position = self.manipulandum.translation.vector.into();
        record.manipulandum_orientation = wijk(&self.manipulandum.rotation);

        // The previous tick's wrenches held until now, before this tick's
        // replace them.
        for (impulse, wrench) in self.contact_impulses.iter_mut().zip(&self.contact_wrenches) {
            // A non-finite wrench would spoil every later difference.
            if wrench.iter().all(|v| v.is_finite()) {
                *impulse += wrench * period;
            }
        }
        if rendered {
            reaction_wrenches(
                self.cycle.scene(),
                self.cycle.contact_friction(),
                &mut self.contact_wrenches,
            );
        } else {
            self.contact_wrenches.fill(Vector6::zeros());
        }
        let advance_started = Instant::now();
        self.local.advance(record.tick, &self.contact_wrenches);
        record.local_body_count = self.local.len() as u32;
        for (k, slot) in record.local_bodies.iter_mut().enumerate() {
            if let Some((body, pose, velocity)) = self.local.state(k) {
                *slot = LocalBodyState {
                    body,
                    position: pose.translation.vector.into(),
                    orientation: wijk(&pose.rotation),
                    velocity: velocity.into(),
                };
            }
        }
        bodies_time += advance_started.elapsed();
        record.stage_ns[Stage::Bodies] = nanos(bodies_time);
        let manipulandum = self.manipulandum;
        let (wrenches, impulses) = (&self.contact_wrenches, &self.contact_impulses);
        self.tool.publish_with(|state| {
            state.tick = record.tick;
            state.time = time;
            state.tool_pose = tool_pose;
            state.manipulandum = manipulandum;
            // Reuses the slot's capacity: no allocation.
            state.contact_wrenches.clone_from(wrenches);
            state.contact_impulses.clone_from(impulses);
        });
        let cycle = &self.cycle;
        self.scene_frames
            .publish_with(|frame| fill_scene_frame(frame, &record, cycle, rendered));
        self.telemetry.push(record);
        record
    }

    /// The device behind its safety layer.
    pub fn safety(&self) -> &SafetyLayer<D> {
        &self.device
    }

    /// The device behind its safety layer, mutably (for overruns and shutdown).
    pub fn safety_mut(&mut self) -> &mut SafetyLayer<D> {
        &mut self.device
    }

    /// The rendering cycle, with the contacts of the last step.
    pub fn cycle(&self) -> &RenderingCycle {
        &self.cycle
    }

    /// Ticks run so far.
    pub fn ticks(&self) -> u64 {
        self.ticks
    }

    /// Faults counted so far.
    pub fn faults(&self) -> TickFaults {
        self.faults
    }

    /// Ticks per friction verdict so far.
    pub fn verdicts(&self) -> VerdictCounts {
        self.verdicts
    }

    /// What the rendering budget cut so far.
    pub fn budget_cuts(&self) -> BudgetCuts {
        self.budget_cuts
    }

    /// Whether a device read has reported [`DeviceError::EndOfRecording`]
    /// or [`DeviceError::Lost`] (which started the shutdown ramp).
    pub fn device_ended(&self) -> bool {
        self.ended
    }

    /// Whether the device ended the run because it was lost
    /// ([`DeviceError::Lost`]) rather than at the end of a recording.
    pub fn device_lost(&self) -> bool {
        self.lost
    }

    /// Records dropped because telemetry was full.
    pub fn telemetry_dropped(&self) -> u64 {
        self.telemetry.dropped()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_and_cycle_faults_are_counted_per_tick() {
        let mut faults = TickFaults::default();
        let mut verdicts = VerdictCounts::default();
        let ticks = [
            (FrictionVerdict::Free, false),
            (FrictionVerdict::StaticInBand, false),
            (FrictionVerdict::StaticInBand, true),
            (FrictionVerdict::SlidingInBand, false),
            (FrictionVerdict::SolverFailed, false),
            (FrictionVerdict::SolverFailed, true),
            (FrictionVerdict::Static, false),
        ];
        for (verdict, quarantined) in ticks {
            faults.count_cycle(verdict, quarantined);
            verdicts.add(Some(verdict));
        }
        verdicts.add(None);
        assert_eq!(faults.solver_failed, 2);
        assert_eq!(faults.quarantined, 2);
        assert_eq!((faults.read, faults.render, faults.write), (0, 0, 0));
        assert_eq!(faults.total(), 4);
        assert_eq!(verdicts.get(FrictionVerdict::StaticInBand), 2);
        assert_eq!(verdicts.get(FrictionVerdict::SlidingInBand), 1);
        assert_eq!(verdicts.get(FrictionVerdict::SolverFailed), 2);
        assert_eq!(verdicts.get(FrictionVerdict::Sliding), 0);
        assert_eq!(verdicts.band_decisions(), 3);
        assert_eq!(verdicts.not_rendered, 1);
        assert_eq!(verdicts.total(), ticks.len() as u64 + 1);
    }
}
