//! The rigid world and its step: broad phase over the bodies' bounds,
//! contacts in both roles, the contact model's forces, joints, islands, and
//! one of three integrators.

use crate::body::RigidBody;
use crate::contact::{
    add_point_force, contact_force, contact_stiffnesses, overlapping_pairs, AnchorKey,
    ContactDetector, ContactParameters, DetectionStats, FrictionAnchors, FrictionStats,
    PairContact, PointForce,
};
use crate::forces::{ConstraintRow, Forces};
use crate::island::Islands;
use crate::joints::{Joint, JointError};
use crate::pid::{PidContacts, PidParameters};
use crate::system::{
    angular_momentum, apply_momentum_change, constraint_correction, remove_angular_momentum,
    solve_island, Factorizations, IslandProblem,
};
use crate::ParameterError;
use foldhash::HashSet;
use haptic_core::Vector6;
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use std::time::Instant;

/// How the world advances a step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Integrator {
    /// Xu, Zhao & Barbič's semi-implicit backward Euler with the exact
    /// contact gradients (eqs 5, 15–18).
    #[default]
    SemiImplicit,
    /// Forces explicit, velocities first: `v += h M⁻¹ F`, then the pose.
    SymplecticEuler,
    /// Classical fourth-order Runge–Kutta on `(x, R, v, L)`, forces
    /// (contacts included) evaluated at each stage; friction anchors are
    /// stepped once per step.
    Rk4,
}

/// The resting-contact model between bodies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ContactModel {
    /// Penalty springs with exact gradients, damping and anchor friction
    /// (Xu, Zhao & Barbič §4).
    #[default]
    ImplicitPenalty,
    /// Drumwright's PID penalty with impulses at impact.
    PidPenalty,
}

/// The world's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorldParameters {
    /// m/s².
    pub gravity: Vector3<f64>,
    pub integrator: Integrator,
    pub contact_model: ContactModel,
    pub contact: ContactParameters,
    pub pid: PidParameters,
    /// The farthest any body's point may travel in one step (m); longer
    /// steps are split (see [`World::step`]). 0 never splits.
    pub max_travel: f64,
    /// Baumgarte `α` (1/s), `β = α²/4`: critically damped (eq 56). About
    /// `1/h` holds joints tightest (the drift left falls as `h/α²`); `αh`
    /// beyond about 1.9 is unstable. The default suits the physics thread's
    /// default 200 Hz.
    pub baumgarte_alpha: f64,
    /// After each substep, moves the jointed bodies back onto their joints
    /// ([`constraint_correction`], beyond the paper). Without it Baumgarte
    /// alone holds them, as the paper does, and a fast-turning linkage
    /// drifts by some 1e-5 of a link.
    pub joint_post_stabilisation: bool,
}

impl Default for WorldParameters {
    fn default() -> Self {
        Self {
            gravity: Vector3::new(0.0, 0.0, -9.81),
            integrator: Integrator::default(),
            contact_model: ContactModel::default(),
            contact: ContactParameters::default(),
            pid: PidParameters::default(),
            max_travel: 1e-3,
            baumgarte_alpha: 200.0,
            joint_post_stabilisation: true,
        }
    }
}

impl WorldParameters {
    /// Checks every value is finite and in range (the PID gains have their
    /// own [`PidParameters::check`]).
    pub fn check(&self) -> Result<(), ParameterError> {
        const POSITIVE: &str = "finite and positive";
        const NON_NEGATIVE: &str = "finite and ≥ 0";
        let positive = |v: f64| v.is_finite() && v > 0.0;
        let non_negative = |v: f64| v.is_finite() && v >= 0.0;
        type Field = (&'static str, f64, bool, &'static str);
        let c = &self.contact;
        let gravity = self.gravity.iter().copied().find(|g| !g.is_finite());
        let fields: [Field; 8] = [
            (
                "gravity",
                gravity.unwrap_or(0.0),
                gravity.is_none(),
                "finite",
            ),
            (
                "contact.stiffness",
                c.stiffness,
                positive(c.stiffness),
                POSITIVE,
            ),
            (
                "contact.damping",
                c.damping,
                non_negative(c.damping),
                NON_NEGATIVE,
            ),
            (
                "contact.friction_stiffness",
                c.friction_stiffness,
                positive(c.friction_stiffness),
                POSITIVE,
            ),
            (
                "contact.scaling",
                c.scaling.reference_contacts,
                c.scaling.reference_contacts > 0.0,
                "positive (N0 of eq 77; infinite for none)",
            ),
            (
                "contact.detection_margin",
                c.detection_margin,
                non_negative(c.detection_margin),
                NON_NEGATIVE,
            ),
            (
                "max_travel",
                self.max_travel,
                non_negative(self.max_travel),
                NON_NEGATIVE,
            ),
            (
                "baumgarte_alpha",
                self.baumgarte_alpha,
                non_negative(self.baumgarte_alpha),
                NON_NEGATIVE,
            ),
        ];
        match fields.into_iter().find(|(_, _, ok, _)| !ok) {
            None => Ok(()),
            Some((field, value, _, requirement)) => Err(ParameterError {
                field,
                value,
                requirement,
            }),
        }
    }
}

/// Why a world cannot be built.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum WorldError {
    #[error("body \"{name}\": {problem}")]
    Body { name: String, problem: String },
    #[error(transparent)]
    Joint(#[from] JointError),
    #[error(transparent)]
    Parameter(#[from] ParameterError),
}

/// What one step did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepReport {
    /// Penetrating shell points over every pair and role.
    pub contacts: usize,
    pub islands: usize,
    /// Dynamic bodies in the largest island.
    pub largest_island: usize,
    /// Bodies whose step gave non-finite values this step: they were put
    /// back where they were, at rest.
    pub quarantined: usize,
    /// Sum over the dynamic bodies (J).
    pub kinetic_energy: f64,
    /// Deepest penetration `−min d` over the contacts (m), 0 without contact.
    pub max_penetration: f64,
    pub sticking: usize,
    pub sliding: usize,
    /// Substeps the step was split into.
    pub substeps: usize,
    /// Field lookups of the contact detection, over the substeps.
    pub lookups: usize,
    /// Roles (a shell in a field) traversed down their point trees, over
    /// the substeps; the others reused their points near the surface.
    pub traversals: usize,
    /// The farthest any surface point moved between two contact
    /// detections (in one substep), over the bodies that could touch
    /// another in the step (m).
    pub max_near_motion: f64,
    /// Substeps undone because a body moved too far in them.
    pub undone: usize,
    /// Sliding contacts whose slip the explicit sliding force reversed
    /// within a substep, which was then taken again with them sticking
    /// (see [`FrictionAnchors::reversed`]), over the substeps.
    pub stopped: usize,
    /// Substeps taken again for them.
    pub retaken: usize,
    /// Wall time of the contact detection (broad and narrow phases), over
    /// the substeps taken (s).
    pub detection_seconds: f64,
    /// Wall time of the rest, forces, solve and integration (RK4's stages'
    /// detections included), over the substeps taken (s).
    pub dynamics_seconds: f64,
}

/// Bodies, joints and the state their contacts carry between steps.
pub struct World {
    bodies: Vec<RigidBody>,
    joints: Vec<Joint>,
    parameters: WorldParameters,
    detector: ContactDetector,
    anchors: FrictionAnchors,
    pid: PidContacts,
    pairs: Vec<(usize, usize)>,
    contacts: Vec<PairContact>,
    stiffnesses: Vec<f64>,
    forces: Forces,
    rows: Vec<ConstraintRow>,
    factorizations: Factorizations,
    /// Bodies quarantined so far.
    quarantined: u64,
}

/// A body's pose, velocity and angular velocity, as a substep found them.
type BodyState = (Isometry3<f64>, Vector3<f64>, Vector3<f64>);

/// The most substeps one step is split into.
pub const MAX_SUBSTEPS: usize = 32;

/// A substep in which a body near another moved more than this many times
/// [`WorldParameters::max_travel`] is undone and split (see [`World::step`]).
pub const REJECTED_TRAVEL: f64 = 1.5;

/// Margin of the broad phase's bounds (m).
const BROAD_PHASE_MARGIN: f64 = 1e-4;

/// Post-stabilisation corrects an island's poses at most this many times
/// a substep, stopping once every `|C|` is below
/// [`POST_STABILISED_RESIDUAL`]: each correction squares the residual, and
/// Baumgarte leaves some 1e-6 m to correct.
pub(crate) const POST_STABILISATION_PASSES: usize = 3;

/// The constraint residual (m, or for the rotation rows of eqs 53 and 66
/// dimensionless) post-stabilisation stops at.
const POST_STABILISED_RESIDUAL: f64 = 1e-13;

impl World {
    /// Checks the bodies, joints and parameters.
    pub fn new(
        bodies: Vec<RigidBody>,
        joints: Vec<Joint>,
        parameters: WorldParameters,
    ) -> Result<World, WorldError> {
        for body in &bodies {
            let problem = if body.is_dynamic() && !(body.mass > 0.0 && body.mass.is_finite()) {
                Some(format!("mass {} kg is not positive and finite", body.mass))
            } else if body.is_dynamic()
                && (body.body_inertia.try_inverse().is_none()
                    || body.body_inertia.iter().any(|v| !v.is_finite()))
            {
                Some("inertia is not invertible and finite".to_string())
            } else if !body.is_finite() {
                Some("pose or velocity is not finite".to_string())
            } else if !(body.static_friction >= 0.0 && body.dynamic_friction >= 0.0) {
                Some("friction coefficients must be ≥ 0".to_string())
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(WorldError::Body {
                    name: body.name.clone(),
                    problem,
                });
            }
        }
        for joint in &joints {
            joint.check(bodies.len())?;
        }
        parameters
            .check()
            .and_then(|()| parameters.pid.check())
            .map_err(WorldError::Parameter)?;
        Ok(World {
            bodies,
            joints,
            pid: PidContacts::new(parameters.pid),
            parameters,
            detector: ContactDetector::new(parameters.contact.detection_margin),
            anchors: FrictionAnchors::default(),
            pairs: Vec::new(),
            contacts: Vec::new(),
            stiffnesses: Vec::new(),
            forces: Forces::default(),
            rows: Vec::new(),
            factorizations: Factorizations::default(),
            quarantined: 0,
        })
    }

    pub fn bodies(&self) -> &[RigidBody] {
        &self.bodies
    }

    pub fn bodies_mut(&mut self) -> &mut [RigidBody] {
        &mut self.bodies
    }

    pub fn joints(&self) -> &[Joint] {
        &self.joints
    }

    pub fn parameters(&self) -> &WorldParameters {
        &self.parameters
    }

    /// The contacts of the last step.
    pub fn contacts(&self) -> &[PairContact] {
        &self.contacts
    }

    /// Bodies quarantined since the world was built.
    pub fn quarantined(&self) -> u64 {
        self.quarantined
    }

    /// Total kinetic energy of the dynamic bodies (J).
    pub fn kinetic_energy(&self) -> f64 {
        self.bodies
            .iter()
            .filter(|b| b.is_dynamic())
            .map(RigidBody::kinetic_energy)
            .sum()
    }

    /// Advances the world by `dt` seconds. `external_impulses[i]` (N·s,
    /// N·m·s about the centre of mass, world frame; may be shorter than the
    /// bodies or empty) is spread over the step as a constant wrench: the
    /// tool's contact impulses reach the bodies this way.
    ///
    /// A penalty method cannot resolve an impact that carries a body through
    /// a large part of its thickness between two detections, so the step
    /// is split: before each substep, the time left is divided into as many
    /// equal parts as the farthest travel over it, at the bodies' current
    /// velocities, of a body that may touch another, is multiple of
    /// [`WorldParameters::max_travel`], and one part is taken. A substep in
    /// which such a body's point nevertheless moved more than
    /// [`REJECTED_TRAVEL`] times `max_travel` (an impact changed its
    /// velocity within the substep) is undone and taken again in as many
    /// parts as the travel asks. At most [`MAX_SUBSTEPS`] are taken in
    /// all. The report's contacts and penetration are the taken substeps'
    /// largest, its counts their sums.
    pub fn step(&mut self, dt: f64, external_impulses: &[Vector6]) -> StepReport {
        let mut total = StepReport::default();
        let mut remaining = dt;
        let max_travel = self.parameters.max_travel;
        // Parts the rest of the step is split into at least, after an undone substep.
        let mut at_least = 1;
        while remaining > 0.0 {
            let near_travel = self.near_travel(remaining);
            let travel = near_travel.iter().flatten().copied().fold(0.0, f64::max);
            let left = MAX_SUBSTEPS - total.substeps;
            let parts = if max_travel > 0.0 && travel.is_finite() {
                ((travel / max_travel).ceil() as usize)
                    .max(at_least)
                    .clamp(1, left)
            } else {
                1
            };
            let h = if parts == 1 {
                remaining
            } else {
                remaining / parts as f64
            };
            let before: Vec<BodyState> = self
                .bodies
                .iter()
                .map(|b| (b.pose, b.velocity, b.angular_velocity))
                .collect();
            let pid = self.pid.clone();
            let report = self.substep_stopping_slips(h, dt, external_impulses, &before, &pid);
            let moved = self
                .bodies
                .iter()
                .zip(&before)
                .zip(&near_travel)
                .filter(|(_, near)| near.is_some())
                .filter_map(|((body, (pose, _, _)), _)| {
                    let reach = body.geometry.as_ref()?.reach();
                    Some(
                        (body.pose.translation.vector - pose.translation.vector).norm()
                            + body.pose.rotation.angle_to(&pose.rotation) * reach,
                    )
                })
                .fold(0.0, f64::max);
            if max_travel > 0.0 && moved > REJECTED_TRAVEL * max_travel && parts < left {
                self.restore(&before, pid);
                at_least = (parts * (moved / max_travel).ceil() as usize).min(left);
                total.undone += 1;
                continue;
            }
            self.quarantined += report.quarantined as u64;
            total = StepReport {
                contacts: total.contacts.max(report.contacts),
                max_penetration: total.max_penetration.max(report.max_penetration),
                quarantined: total.quarantined + report.quarantined,
                lookups: total.lookups + report.lookups,
                traversals: total.traversals + report.traversals,
                max_near_motion: total.max_near_motion.max(moved),
                substeps: total.substeps + 1,
                undone: total.undone,
                stopped: total.stopped + report.stopped,
                retaken: total.retaken + report.retaken,
                detection_seconds: total.detection_seconds + report.detection_seconds,
                dynamics_seconds: total.dynamics_seconds + report.dynamics_seconds,
                ..report
            };
            at_least = at_least.saturating_sub(1).max(1);
            remaining = if parts == 1 { 0.0 } else { remaining - h };
        }
        self.factorizations.prune();
        total
    }

    /// A substep of `h` from `before` (poses and velocities; `pid` the PID
    /// state then), taken again with the stopped contacts sticking if its
    /// explicit sliding forces reversed some slips
    /// ([`FrictionAnchors::reversed`]). A retaken substep starts from the
    /// same poses: its contacts are the first pass's, unless RK4's stages
    /// detected anew.
    fn substep_stopping_slips(
        &mut self,
        h: f64,
        dt: f64,
        external_impulses: &[Vector6],
        before: &[BodyState],
        pid: &PidContacts,
    ) -> StepReport {
        let poses: Vec<Isometry3<f64>> = before.iter().map(|b| b.0).collect();
        let mut stopping = HashSet::default();
        let mut first_pass: Option<StepReport> = None;
        loop {
            let detect = first_pass.is_none() || self.parameters.integrator == Integrator::Rk4;
            let report = self.substep(h, dt, external_impulses, &poses, &stopping, detect);
            let reversed = if first_pass.is_none()
                && self.parameters.contact_model == ContactModel::ImplicitPenalty
            {
                self.anchors.reversed(&self.contacts, &self.bodies, h)
            } else {
                HashSet::default()
            };
            if reversed.is_empty() {
                return match first_pass {
                    None => report,
                    Some(first) => StepReport {
                        stopped: stopping.len(),
                        retaken: 1,
                        lookups: first.lookups + report.lookups,
                        traversals: first.traversals + report.traversals,
                        detection_seconds: first.detection_seconds + report.detection_seconds,
                        dynamics_seconds: first.dynamics_seconds + report.dynamics_seconds,
                        ..report
                    },
                };
            }
            self.restore(before, pid.clone());
            stopping = reversed;
            first_pass = Some(report);
        }
    }

    /// Puts the bodies' poses and velocities and the contacts' state back
    /// to what they were before a substep.
    fn restore(&mut self, before: &[BodyState], pid: PidContacts) {
        for (body, &(pose, velocity, angular_velocity)) in self.bodies.iter_mut().zip(before) {
            body.pose = pose;
            body.velocity = velocity;
            body.angular_velocity = angular_velocity;
        }
        self.anchors.undo();
        self.pid = pid;
    }

    /// For each dynamic body that may touch another within `dt` (its
    /// bounds, grown by how far its points travel in `dt` at its current
    /// velocity, overlap another body's), that travel (m).
    fn near_travel(&self, dt: f64) -> Vec<Option<f64>> {
        let bounds: Vec<_> = self.bodies.iter().map(RigidBody::world_bounds).collect();
        (0..self.bodies.len())
            .map(|i| {
                let b = &self.bodies[i];
                let geometry = b.geometry.as_ref().filter(|_| b.is_dynamic())?;
                let travel =
                    (b.velocity.norm() + b.angular_velocity.norm() * geometry.reach()) * dt;
                let swept = bounds[i]?.dilated(travel);
                let near = bounds
                    .iter()
                    .enumerate()
                    .any(|(j, other)| j != i && other.is_some_and(|o| swept.overlaps(&o)));
                near.then_some(travel)
            })
            .collect()
    }

    /// One step of `h`, the external impulses spread over `dt`, from the
    /// poses `before`, the contacts in `stopping` sticking where they are;
    /// without `detect`, on the last detection's contacts.
    fn substep(
        &mut self,
        h: f64,
        dt: f64,
        external_impulses: &[Vector6],
        before: &[Isometry3<f64>],
        stopping: &HashSet<AnchorKey>,
        detect: bool,
    ) -> StepReport {
        let started = Instant::now();
        let detection = if detect {
            self.detect();
            self.detector.stats()
        } else {
            DetectionStats::default()
        };
        let detected = Instant::now();
        let mut report = StepReport {
            contacts: self.contacts.len(),
            lookups: detection.lookups,
            traversals: detection.traversals,
            max_penetration: self
                .contacts
                .iter()
                .map(|c| -c.distance)
                .fold(0.0, f64::max),
            ..StepReport::default()
        };
        // What is evaluated once per step, at its start: the friction
        // anchors (sticking springs with their gradients, which the
        // semi-implicit step takes implicitly; but for RK4's stages, with
        // each contact's other forces) or the PID forces, gravity and the
        // external impulses.
        let mut explicit = Forces::default();
        explicit.reset(self.bodies.len());
        let rk4 = self.parameters.integrator == Integrator::Rk4;
        let mut friction = FrictionStats::default();
        match self.parameters.contact_model {
            ContactModel::ImplicitPenalty if rk4 => {
                let (contacts, bodies) = (&self.contacts, &self.bodies);
                friction = self.anchors.add_friction(
                    contacts,
                    &self.stiffnesses,
                    bodies,
                    self.parameters.contact.friction_stiffness,
                    h,
                    stopping,
                    |i, f| add_point_force(&contacts[i], bodies, f, &mut explicit),
                );
            }
            ContactModel::ImplicitPenalty => {}
            ContactModel::PidPenalty => {
                self.pid.apply_impacts(&mut self.bodies, &self.contacts);
                self.pid
                    .add_forces(&self.bodies, &self.contacts, h, &mut explicit);
            }
        }
        for (i, body) in self.bodies.iter().enumerate() {
            if body.is_dynamic() {
                let g = self.parameters.gravity * body.mass;
                let mut w = Vector6::new(g.x, g.y, g.z, 0.0, 0.0, 0.0);
                if let Some(impulse) = external_impulses.get(i) {
                    w += impulse / dt;
                }
                explicit.add_wrench(i, &w);
            }
        }

        let islands = match self.parameters.integrator {
            Integrator::SemiImplicit | Integrator::SymplecticEuler => {
                let implicit = self.parameters.integrator == Integrator::SemiImplicit;
                friction = self.evaluate_forces(&explicit, Some((h, stopping)));
                self.advance(h, implicit, &mut report)
            }
            Integrator::Rk4 => self.step_rk4(h, &explicit),
        };
        if self.parameters.joint_post_stabilisation {
            self.post_stabilise(&islands);
        }
        report.sticking = friction.sticking;
        report.sliding = friction.sliding;
        report.islands = islands.len();
        report.largest_island = islands.iter().map(Vec::len).max().unwrap_or(0);

        for (body, previous) in self.bodies.iter_mut().zip(before) {
            if body.is_dynamic() && !body.is_finite() {
                body.pose = *previous;
                body.velocity = Vector3::zeros();
                body.angular_velocity = Vector3::zeros();
                report.quarantined += 1;
            }
        }
        report.kinetic_energy = self.kinetic_energy();
        report.detection_seconds = (detected - started).as_secs_f64();
        report.dynamics_seconds = detected.elapsed().as_secs_f64();
        report
    }

    /// The broad and narrow phases at the current poses, and the contacts'
    /// stiffnesses.
    fn detect(&mut self) {
        overlapping_pairs(&self.bodies, BROAD_PHASE_MARGIN, &mut self.pairs);
        self.detector
            .detect(&self.bodies, &self.pairs, &mut self.contacts);
        contact_stiffnesses(
            &self.contacts,
            &self.parameters.contact,
            &mut self.stiffnesses,
        );
    }

    /// Fills `forces` with `constant` (wrenches and gradients) plus, for the
    /// implicit penalty model, the penalty and damping forces with their
    /// gradients at the current state (contacts from the last `detect`),
    /// the joints' controllers and the constraint rows. With `friction` (a
    /// step's length and the contacts stopped in it), each contact's
    /// friction force over that step joins its penalty and damping, and
    /// the anchors move (see [`FrictionAnchors::add_friction`]).
    fn evaluate_forces(
        &mut self,
        constant: &Forces,
        friction: Option<(f64, &HashSet<AnchorKey>)>,
    ) -> FrictionStats {
        self.forces.copy_from(constant);
        let mut stats = FrictionStats::default();
        if self.parameters.contact_model == ContactModel::ImplicitPenalty {
            let World {
                bodies,
                parameters,
                anchors,
                contacts,
                stiffnesses,
                forces,
                ..
            } = self;
            let c = &parameters.contact;
            let mut add = |i: usize, friction: Option<&PointForce>| {
                let contact = &contacts[i];
                let damping = c.damping * contact.weight as f64;
                let mut total =
                    contact_force(contact, bodies, stiffnesses[i], damping, c.damping_mode);
                if let Some(friction) = friction {
                    total += friction;
                }
                add_point_force(contact, bodies, &total, forces);
            };
            match friction {
                Some((dt, stopping)) => {
                    stats = anchors.add_friction(
                        contacts,
                        stiffnesses,
                        bodies,
                        c.friction_stiffness,
                        dt,
                        stopping,
                        |i, f| add(i, Some(f)),
                    );
                }
                None => (0..contacts.len()).for_each(|i| add(i, None)),
            }
        }
        self.rows.clear();
        for joint in &self.joints {
            joint.add_control_forces(&self.bodies, &mut self.forces);
            joint.rows(&self.bodies, &mut self.rows);
        }
        stats
    }

    /// Moves each of `islands` holding joints back onto them
    /// ([`constraint_correction`]) at the current poses, each body keeping
    /// its spin `J ω`. An island whose correction cannot be solved keeps its
    /// poses: Baumgarte still holds it. Moving the bodies at their velocities
    /// changes their angular momentum by `Σ m δx × v`; where every joint of
    /// the island is between its own bodies, so that nothing outside it
    /// torques it, [`remove_angular_momentum`] gives that change back.
    fn post_stabilise(&mut self, islands: &[Vec<usize>]) {
        if self.joints.is_empty() {
            return;
        }
        let mut rows = Vec::new();
        for island in islands {
            let member = |b: usize| island.binary_search(&b).is_ok();
            let touching = |j: &&Joint| member(j.a) || j.b.is_some_and(member);
            if !self.joints.iter().any(|j| touching(&j)) {
                continue;
            }
            let internal = self
                .joints
                .iter()
                .filter(touching)
                .all(|j| member(j.a) && j.b.is_some_and(member));
            let momentum_before = angular_momentum(&self.bodies, island);
            let mut moved = false;
            for _ in 0..POST_STABILISATION_PASSES {
                rows.clear();
                for joint in self.joints.iter().filter(touching) {
                    joint.rows(&self.bodies, &mut rows);
                }
                let residual = rows.iter().map(|r| r.value.abs()).fold(0.0, f64::max);
                if rows.is_empty() || residual < POST_STABILISED_RESIDUAL {
                    break;
                }
                let Ok(correction) = constraint_correction(&self.bodies, island, &rows) else {
                    break;
                };
                for (&b, [dx, dtheta]) in island.iter().zip(&correction) {
                    let body = &mut self.bodies[b];
                    let spin = body.angular_momentum();
                    body.displace(dx, dtheta);
                    body.angular_velocity = body.world_inverse_inertia() * spin;
                }
                moved = true;
            }
            if moved && internal {
                let excess = angular_momentum(&self.bodies, island) - momentum_before;
                remove_angular_momentum(&mut self.bodies, island, &excess);
            }
        }
    }

    /// The islands of the current contacts and joints.
    fn islands(&self) -> Vec<Vec<usize>> {
        let mut islands = Islands::new(self.bodies.len());
        let dynamic = |i: usize| self.bodies[i].is_dynamic();
        for c in &self.contacts {
            if dynamic(c.shell_body) && dynamic(c.field_body) {
                islands.join(c.shell_body, c.field_body);
            }
        }
        for row in &self.rows {
            if let Some(b) = row.b {
                if dynamic(row.a) && dynamic(b) {
                    islands.join(row.a, b);
                }
            }
        }
        islands.components(dynamic)
    }

    /// The constraint rows of `island`: those with a body in it on either
    /// side (the other side may be static or the world).
    fn island_rows(&self, island: &[usize]) -> Vec<ConstraintRow> {
        let member = |b: usize| island.binary_search(&b).is_ok();
        self.rows
            .iter()
            .filter(|r| member(r.a) || r.b.is_some_and(member))
            .copied()
            .collect()
    }

    /// For each of `islands`, the indices in `forces.gradients` of the
    /// blocks between its bodies.
    fn island_gradients(&self, islands: &[Vec<usize>]) -> Vec<Vec<usize>> {
        let mut island_of = vec![None; self.bodies.len()];
        for (k, island) in islands.iter().enumerate() {
            for &b in island {
                island_of[b] = Some(k);
            }
        }
        let mut gradients = vec![Vec::new(); islands.len()];
        for (index, g) in self.forces.gradients.iter().enumerate() {
            if let Some(k) = island_of[g.on].filter(|&k| island_of[g.by] == Some(k)) {
                gradients[k].push(index);
            }
        }
        gradients
    }

    /// Solves each island's momentum change from `forces` and `rows` and
    /// applies it over `dt`; an island whose solve fails keeps its bodies
    /// where they were, at rest, and counts them quarantined.
    fn advance(&mut self, dt: f64, implicit: bool, report: &mut StepReport) -> Vec<Vec<usize>> {
        let islands = self.islands();
        let gradients = if implicit {
            self.island_gradients(&islands)
        } else {
            vec![Vec::new(); islands.len()]
        };
        for (island, gradients) in islands.iter().zip(&gradients) {
            let rows = self.island_rows(island);
            let problem = IslandProblem {
                bodies: island,
                gradients,
                rows: &rows,
                implicit,
                baumgarte_alpha: self.parameters.baumgarte_alpha,
                stepped: true,
            };
            match solve_island(
                &self.bodies,
                &self.forces,
                &problem,
                dt,
                &mut self.factorizations,
            ) {
                Ok(changes) => {
                    for (&b, change) in island.iter().zip(&changes) {
                        apply_momentum_change(&mut self.bodies[b], change, dt, implicit);
                    }
                }
                Err(_) => {
                    for &b in island {
                        self.bodies[b].velocity = Vector3::zeros();
                        self.bodies[b].angular_velocity = Vector3::zeros();
                    }
                    report.quarantined += island.len();
                }
            }
        }
        islands
    }

    /// The explicit accelerations `(v̇, L̇)` of every dynamic body at the
    /// current state, joints' constraint forces included.
    fn rates(&mut self, constant: &Forces, dt: f64, detect: bool) -> Vec<[Vector3<f64>; 2]> {
        if detect {
            self.detect();
        }
        self.evaluate_forces(constant, None);
        let mut rates = vec![[Vector3::zeros(); 2]; self.bodies.len()];
        for island in self.islands() {
            let rows = self.island_rows(&island);
            let problem = IslandProblem {
                bodies: &island,
                gradients: &[],
                rows: &rows,
                implicit: false,
                baumgarte_alpha: self.parameters.baumgarte_alpha,
                stepped: false,
            };
            if let Ok(changes) = solve_island(
                &self.bodies,
                &self.forces,
                &problem,
                dt,
                &mut self.factorizations,
            ) {
                for (&b, change) in island.iter().zip(&changes) {
                    rates[b] = [change[0] / (dt * self.bodies[b].mass), change[1] / dt];
                }
            }
        }
        rates
    }

    /// Classical RK4 on `(x, R, v, L)`; the explicit part (`constant`) is
    /// held over the step.
    fn step_rk4(&mut self, dt: f64, constant: &Forces) -> Vec<Vec<usize>> {
        #[derive(Clone, Copy)]
        struct State {
            x: Vector3<f64>,
            q: UnitQuaternion<f64>,
            v: Vector3<f64>,
            l: Vector3<f64>,
        }
        let start: Vec<State> = self
            .bodies
            .iter()
            .map(|b| State {
                x: b.pose.translation.vector,
                q: b.pose.rotation,
                v: b.velocity,
                l: b.angular_momentum(),
            })
            .collect();
        let set = |bodies: &mut [RigidBody], states: &[State]| {
            for (b, s) in bodies.iter_mut().zip(states) {
                if b.is_dynamic() {
                    b.pose = Isometry3::from_parts(Translation3::from(s.x), s.q);
                    b.velocity = s.v;
                    b.angular_velocity = b.world_inverse_inertia() * s.l;
                }
            }
        };
        // Derivatives: (ẋ, ω, v̇, L̇) per body.
        type Rate = [Vector3<f64>; 4];
        let mut stages: Vec<Vec<Rate>> = Vec::with_capacity(4);
        // Where stages 2–4 are evaluated: at h/2, h/2 and h from the start.
        let offsets = [0.5, 0.5, 1.0, 0.0];
        let mut current = start.clone();
        for (stage, offset) in offsets.into_iter().enumerate() {
            set(&mut self.bodies, &current);
            let accelerations = self.rates(constant, dt, stage > 0);
            let rate: Vec<Rate> = self
                .bodies
                .iter()
                .zip(&accelerations)
                .map(|(b, a)| [b.velocity, b.angular_velocity, a[0], a[1]])
                .collect();
            if stage < 3 {
                let h = offset * dt;
                current = start
                    .iter()
                    .zip(&rate)
                    .map(|(s, r)| State {
                        x: s.x + r[0] * h,
                        q: UnitQuaternion::from_scaled_axis(r[1] * h) * s.q,
                        v: s.v + r[2] * h,
                        l: s.l + r[3] * h,
                    })
                    .collect();
            }
            stages.push(rate);
        }
        let end: Vec<State> = start
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let combine = |k: usize| {
                    (stages[0][i][k]
                        + stages[1][i][k] * 2.0
                        + stages[2][i][k] * 2.0
                        + stages[3][i][k])
                        * (dt / 6.0)
                };
                State {
                    x: s.x + combine(0),
                    q: UnitQuaternion::from_scaled_axis(combine(1)) * s.q,
                    v: s.v + combine(2),
                    l: s.l + combine(3),
                }
            })
            .collect();
        set(&mut self.bodies, &end);
        self.islands()
    }
}
