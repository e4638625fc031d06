//! The world: its bodies and joints, the state their contacts carry from
//! step to step, and [`World::step`], which runs a step's stages in order.

use crate::body::RigidBody;
use crate::forces::Forces;
use crate::friction_anchors::{AnchorKey, FrictionAnchors, FrictionStats};
use crate::integrators::{euler, rk4};
use crate::joints::{Joint, JointError};
use crate::narrow_phase::{DetectionStats, PairContact};
use crate::parameters::{ContactModel, Integrator, WorldParameters};
use crate::penalty::add_point_force;
use crate::pid::{PidContacts, PidPairs};
use crate::pipeline::{Friction, Pipeline};
use crate::post_stabilisation::post_stabilise;
use crate::report::StepReport;
use crate::substeps::{farthest_move, near_travel, SubstepPlan};
use crate::ParameterError;
use foldhash::HashSet;
use haptic_core::Vector6;
use nalgebra::{Isometry3, Vector3};
use std::time::Instant;

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

/// Bodies, joints and the state their contacts carry between steps.
pub struct World {
    bodies: Vec<RigidBody>,
    joints: Vec<Joint>,
    parameters: WorldParameters,
    anchors: FrictionAnchors,
    pid: PidContacts,
    pipeline: Pipeline,
    /// Bodies quarantined so far.
    quarantined: u64,
}

/// A body's pose, velocity and angular velocity, as a substep found them.
type BodyState = (Isometry3<f64>, Vector3<f64>, Vector3<f64>);

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
            anchors: FrictionAnchors::default(),
            pipeline: Pipeline::new(parameters.contact.detection_margin),
            parameters,
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
        &self.pipeline.contacts
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
    /// [`REJECTED_TRAVEL`](crate::substeps::REJECTED_TRAVEL) times `max_travel` (an impact changed its
    /// velocity within the substep) is undone and taken again in as many
    /// parts as the travel asks. At most
    /// [`MAX_SUBSTEPS`](crate::substeps::MAX_SUBSTEPS) are taken in
    /// all. The report's contacts and penetration are the taken substeps'
    /// largest, its counts their sums.
    pub fn step(&mut self, dt: f64, external_impulses: &[Vector6]) -> StepReport {
        let mut plan = SubstepPlan::new(dt, self.parameters.max_travel);
        while plan.unfinished() {
            let near_travel = near_travel(&self.bodies, plan.remaining);
            let travel = near_travel.iter().flatten().copied().fold(0.0, f64::max);
            let (parts, h) = plan.next(travel);
            let before: Vec<BodyState> = self
                .bodies
                .iter()
                .map(|b| (b.pose, b.velocity, b.angular_velocity))
                .collect();
            let poses: Vec<Isometry3<f64>> = before.iter().map(|b| b.0).collect();
            let pid = self.pid.pairs().clone();
            let report =
                self.substep_stopping_slips(h, dt, external_impulses, &before, &poses, &pid);
            let moved = farthest_move(&self.bodies, &poses, &near_travel);
            if plan.rejects(parts, moved) {
                self.restore(&before, &pid);
                continue;
            }
            self.quarantined += report.quarantined as u64;
            plan.accept(parts, h, report, moved);
        }
        self.pipeline.factorizations.prune();
        plan.total
    }

    /// A substep of `h` from `before` (poses and velocities, `poses` the
    /// former alone; `pid` the PID state then), taken again with the
    /// stopped contacts sticking if its explicit sliding forces reversed
    /// some slips ([`FrictionAnchors::reversed`]). A retaken substep starts
    /// from the same poses: its contacts are the first pass's, unless RK4's
    /// stages detected anew.
    fn substep_stopping_slips(
        &mut self,
        h: f64,
        dt: f64,
        external_impulses: &[Vector6],
        before: &[BodyState],
        poses: &[Isometry3<f64>],
        pid: &PidPairs,
    ) -> StepReport {
        let mut stopping = HashSet::default();
        let mut first_pass: Option<StepReport> = None;
        loop {
            let detect = first_pass.is_none() || self.parameters.integrator == Integrator::Rk4;
            let report = self.substep(h, dt, external_impulses, poses, &stopping, detect);
            let reversed = if first_pass.is_none()
                && self.parameters.contact_model == ContactModel::ImplicitPenalty
            {
                self.anchors
                    .reversed(&self.pipeline.contacts, &self.bodies, h)
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
            self.restore(before, pid);
            stopping = reversed;
            first_pass = Some(report);
        }
    }

    /// Puts the bodies' poses and velocities and the contacts' state back
    /// to what they were before a substep.
    fn restore(&mut self, before: &[BodyState], pid: &PidPairs) {
        for (body, &(pose, velocity, angular_velocity)) in self.bodies.iter_mut().zip(before) {
            body.pose = pose;
            body.velocity = velocity;
            body.angular_velocity = angular_velocity;
        }
        self.anchors.undo();
        self.pid.restore_pairs(pid);
    }

    /// One step of `h`, the external impulses spread over `dt`, from the
    /// poses `before`, the contacts in `stopping` sticking where they are;
    /// without `detect`, on the last detection's contacts. Its stages in
    /// order: contact detection, the forces held over the substep, the
    /// integrator, post-stabilisation of the joints, quarantine.
    fn substep(
        &mut self,
        h: f64,
        dt: f64,
        external_impulses: &[Vector6],
        before: &[Isometry3<f64>],
        stopping: &HashSet<AnchorKey>,
        detect: bool,
    ) -> StepReport {
        let World {
            bodies,
            joints,
            parameters,
            anchors,
            pid,
            pipeline,
            ..
        } = self;
        let started = Instant::now();
        let detection = if detect {
            pipeline.detect(bodies, &parameters.contact);
            pipeline.detector.stats()
        } else {
            DetectionStats::default()
        };
        let detected = Instant::now();
        let mut report = StepReport {
            contacts: pipeline.contacts.len(),
            lookups: detection.lookups,
            traversals: detection.traversals,
            max_penetration: pipeline
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
        explicit.reset(bodies.len());
        let rk4 = parameters.integrator == Integrator::Rk4;
        let mut friction = FrictionStats::default();
        match parameters.contact_model {
            ContactModel::ImplicitPenalty if rk4 => {
                let contacts = &pipeline.contacts;
                friction = anchors.add_friction(
                    contacts,
                    &pipeline.stiffnesses,
                    bodies,
                    parameters.contact.friction_stiffness,
                    h,
                    stopping,
                    |i, f| add_point_force(&contacts[i], bodies, f, &mut explicit),
                );
            }
            ContactModel::ImplicitPenalty => {}
            ContactModel::PidPenalty => {
                pid.apply_impacts(bodies, &pipeline.contacts);
                pid.add_forces(bodies, &pipeline.contacts, h, &mut explicit);
            }
        }
        for (i, body) in bodies.iter().enumerate() {
            if body.is_dynamic() {
                let g = parameters.gravity * body.mass;
                let mut w = Vector6::new(g.x, g.y, g.z, 0.0, 0.0, 0.0);
                if let Some(impulse) = external_impulses.get(i) {
                    w += impulse / dt;
                }
                explicit.add_wrench(i, &w);
            }
        }

        let islands = match parameters.integrator {
            Integrator::SemiImplicit | Integrator::SymplecticEuler => {
                let implicit = parameters.integrator == Integrator::SemiImplicit;
                let step_friction = Friction {
                    anchors,
                    dt: h,
                    stopping,
                };
                friction = pipeline.evaluate_forces(
                    bodies,
                    joints,
                    parameters,
                    &explicit,
                    Some(step_friction),
                );
                let (islands, quarantined) =
                    euler::advance(bodies, pipeline, parameters.baumgarte_alpha, h, implicit);
                report.quarantined += quarantined;
                islands
            }
            Integrator::Rk4 => rk4::step(bodies, joints, parameters, pipeline, &explicit, h),
        };
        if parameters.joint_post_stabilisation {
            post_stabilise(bodies, joints, &islands);
        }
        report.sticking = friction.sticking;
        report.sliding = friction.sliding;
        report.islands = islands.len();
        report.largest_island = islands.iter().map(Vec::len).max().unwrap_or(0);

        for (body, previous) in bodies.iter_mut().zip(before) {
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
}
