//! The world: its bodies and joints, the state their contacts carry from
//! step to step, and [`World::step`], which runs a step's stages in order.

use crate::body::{RigidBody, RigidBodyState};
use crate::friction_anchors::{FrictionAnchors, FrictionStats};
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
use haptic_core::{Matrix6, Vector6};
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

/// The world: its model (the bodies' models, the joints, the parameters),
/// its state (the bodies' states and what their contacts carry from step
/// to step: friction anchors, the PID pairs) and the pipeline's buffers and
/// caches, which are neither.
pub struct World {
    /// Each body's model and state. A deformable kind of body would be a
    /// second array beside this one (see [`crate::body`]).
    bodies: Vec<RigidBody>,
    joints: Vec<Joint>,
    parameters: WorldParameters,
    /// The friction springs' anchors (they keep their own undo).
    anchors: FrictionAnchors,
    /// The PID model's pairs, with its buffers.
    pid: PidContacts,
    pipeline: Pipeline,
    /// The state a substep started from, for undoing it.
    backup: SubstepBackup,
    /// Bodies quarantined so far.
    quarantined: u64,
    /// The last step's external impulses spread over it, per body (N, N·m).
    external_wrenches: Vec<Vector6>,
}

/// What acts on one body near its current state, the other bodies held
/// where they are: the wrench and its gradients that the last substep's
/// semi-implicit step (Xu, Zhao & Barbič eqs 15–18) took for it, the
/// external impulses left out, carried to the end of the step along the
/// gradients. Contact forces, contact damping, friction springs and gravity
/// are in it; joints, which the augmented system holds (eq 62), are not.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyLinearisation {
    /// `(F, τ)` at the body's state (N, N·m; torque about its centre of
    /// mass).
    pub wrench: Vector6,
    /// `∂(F, τ)/∂(x, θ)`, with the pose perturbed as `x + δx`,
    /// `exp([δθ]×) R`.
    pub position_gradient: Matrix6,
    /// `∂(F, τ)/∂(v, ω)`.
    pub velocity_gradient: Matrix6,
}

/// What undoing a substep restores, copied into buffers sized once: the
/// bodies' states and the PID pairs. (The friction anchors swap their own.)
#[derive(Default)]
struct SubstepBackup {
    bodies: Vec<RigidBodyState>,
    pid: PidPairs,
}

impl SubstepBackup {
    fn save(&mut self, bodies: &[RigidBody], pid: &PidContacts) {
        self.bodies.clear();
        self.bodies.extend(bodies.iter().map(|b| b.state));
        self.pid.clone_from(pid.pairs());
    }

    fn restore(
        &self,
        bodies: &mut [RigidBody],
        anchors: &mut FrictionAnchors,
        pid: &mut PidContacts,
    ) {
        for (body, state) in bodies.iter_mut().zip(&self.bodies) {
            body.state = *state;
        }
        anchors.undo();
        pid.restore_pairs(&self.pid);
    }
}

impl World {
    /// Checks the bodies, joints and parameters.
    pub fn new(
        bodies: Vec<RigidBody>,
        joints: Vec<Joint>,
        parameters: WorldParameters,
    ) -> Result<World, WorldError> {
        for body in &bodies {
            let problem = if body.is_dynamic()
                && !(body.model.mass > 0.0 && body.model.mass.is_finite())
            {
                Some(format!(
                    "mass {} kg is not positive and finite",
                    body.model.mass
                ))
            } else if body.is_dynamic()
                && (body.model.body_inertia.try_inverse().is_none()
                    || body.model.body_inertia.iter().any(|v| !v.is_finite()))
            {
                Some("inertia is not invertible and finite".to_string())
            } else if !body.is_finite() {
                Some("pose or velocity is not finite".to_string())
            } else if !(body.model.static_friction >= 0.0 && body.model.dynamic_friction >= 0.0) {
                Some("friction coefficients must be ≥ 0".to_string())
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(WorldError::Body {
                    name: body.model.name.clone(),
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
            backup: SubstepBackup::default(),
            parameters,
            quarantined: 0,
            external_wrenches: Vec::new(),
        })
    }

    pub fn bodies(&self) -> &[RigidBody] {
        &self.bodies
    }

    /// Puts body `i` in `state` (a launch, a kick); what its contacts
    /// carry is kept.
    pub fn set_state(&mut self, i: usize, state: RigidBodyState) {
        self.bodies[i].state = state;
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
    /// [`BodyLinearisation`] of dynamic body `i` after the last step;
    /// `None` for a static body, before the first step, with RK4 (whose
    /// stages leave no one linearisation) or where it is not finite.
    pub fn linearisation(&self, i: usize) -> Option<BodyLinearisation> {
        let body = self.bodies.get(i)?;
        let start = self.backup.bodies.get(i)?;
        if !body.is_dynamic() || self.parameters.integrator == Integrator::Rk4 {
            return None;
        }
        let forces = &self.pipeline.forces;
        let mut linearisation = BodyLinearisation {
            wrench: *forces.wrench.get(i)? - self.external_wrenches.get(i)?,
            position_gradient: Matrix6::zeros(),
            velocity_gradient: Matrix6::zeros(),
        };
        if let Some(block) = forces.gradients.iter().find(|g| g.on == i && g.by == i) {
            linearisation.position_gradient = block.position;
            linearisation.velocity_gradient = block.velocity;
        }
        // From the substep's start, where the forces were evaluated, to the
        // step's end.
        let state = &body.state;
        let turn = (state.pose.rotation * start.pose.rotation.inverse()).scaled_axis();
        let moved = state.pose.translation.vector - start.pose.translation.vector;
        let position = Vector6::new(moved.x, moved.y, moved.z, turn.x, turn.y, turn.z);
        let (dv, dw) = (
            state.velocity - start.velocity,
            state.angular_velocity - start.angular_velocity,
        );
        let velocity = Vector6::new(dv.x, dv.y, dv.z, dw.x, dw.y, dw.z);
        linearisation.wrench +=
            linearisation.position_gradient * position + linearisation.velocity_gradient * velocity;
        let finite = linearisation.wrench.iter().all(|v| v.is_finite())
            && linearisation
                .position_gradient
                .iter()
                .all(|v| v.is_finite())
            && linearisation
                .velocity_gradient
                .iter()
                .all(|v| v.is_finite());
        finite.then_some(linearisation)
    }

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
        self.external_wrenches.clear();
        self.external_wrenches
            .extend((0..self.bodies.len()).map(|i| {
                external_impulses
                    .get(i)
                    .map_or(Vector6::zeros(), |j| j / dt)
            }));
        let mut plan = SubstepPlan::new(dt, self.parameters.max_travel);
        while plan.unfinished() {
            let pipeline = &mut self.pipeline;
            near_travel(
                &self.bodies,
                plan.remaining,
                &mut pipeline.bounds,
                &mut pipeline.near_travel,
            );
            let travel = pipeline
                .near_travel
                .iter()
                .flatten()
                .copied()
                .fold(0.0, f64::max);
            let (parts, h) = plan.next(travel);
            self.backup.save(&self.bodies, &self.pid);
            let report = self.substep_stopping_slips(h, dt, external_impulses);
            let moved = farthest_move(
                &self.bodies,
                &self.backup.bodies,
                &self.pipeline.near_travel,
            );
            if plan.rejects(parts, moved) {
                self.backup
                    .restore(&mut self.bodies, &mut self.anchors, &mut self.pid);
                continue;
            }
            self.quarantined += report.quarantined as u64;
            plan.accept(parts, h, report, moved);
        }
        self.pipeline.solver.prune();
        plan.total
    }

    /// A substep of `h` from the state in the backup, taken again with the
    /// stopped contacts sticking if its explicit sliding forces reversed
    /// some slips ([`FrictionAnchors::reversed`]). A retaken substep starts
    /// from the same poses: its contacts are the first pass's, unless RK4's
    /// stages detected anew.
    fn substep_stopping_slips(
        &mut self,
        h: f64,
        dt: f64,
        external_impulses: &[Vector6],
    ) -> StepReport {
        self.pipeline.stopping.clear();
        let mut first_pass: Option<StepReport> = None;
        loop {
            let detect = first_pass.is_none() || self.parameters.integrator == Integrator::Rk4;
            let report = self.substep(h, dt, external_impulses, detect);
            let pipeline = &mut self.pipeline;
            pipeline.reversed.clear();
            if first_pass.is_none()
                && self.parameters.contact_model == ContactModel::ImplicitPenalty
            {
                self.anchors
                    .reversed(&pipeline.contacts, &self.bodies, h, &mut pipeline.reversed);
            }
            if pipeline.reversed.is_empty() {
                return match first_pass {
                    None => report,
                    Some(first) => StepReport {
                        stopped: pipeline.stopping.len(),
                        retaken: 1,
                        lookups: first.lookups + report.lookups,
                        traversals: first.traversals + report.traversals,
                        detection_seconds: first.detection_seconds + report.detection_seconds,
                        dynamics_seconds: first.dynamics_seconds + report.dynamics_seconds,
                        ..report
                    },
                };
            }
            self.backup
                .restore(&mut self.bodies, &mut self.anchors, &mut self.pid);
            std::mem::swap(&mut self.pipeline.stopping, &mut self.pipeline.reversed);
            first_pass = Some(report);
        }
    }

    /// One step of `h`, the external impulses spread over `dt`, from the
    /// state in the backup, the contacts in `pipeline.stopping` sticking
    /// where they are; without `detect`, on the last detection's contacts. Its stages in
    /// order: contact detection, the forces held over the substep, the
    /// integrator, post-stabilisation of the joints, quarantine.
    fn substep(
        &mut self,
        h: f64,
        dt: f64,
        external_impulses: &[Vector6],
        detect: bool,
    ) -> StepReport {
        let World {
            bodies,
            joints,
            parameters,
            anchors,
            pid,
            pipeline,
            backup,
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
        let explicit = &mut pipeline.explicit;
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
                    &pipeline.stopping,
                    |i, f| add_point_force(&contacts[i], bodies, f, explicit),
                );
            }
            ContactModel::ImplicitPenalty => {}
            ContactModel::PidPenalty => {
                pid.apply_impacts(bodies, &pipeline.contacts);
                pid.add_forces(bodies, &pipeline.contacts, h, explicit);
            }
        }
        for (i, body) in bodies.iter().enumerate() {
            if body.is_dynamic() {
                let g = parameters.gravity * body.model.mass;
                let mut w = Vector6::new(g.x, g.y, g.z, 0.0, 0.0, 0.0);
                if let Some(impulse) = external_impulses.get(i) {
                    w += impulse / dt;
                }
                explicit.add_wrench(i, &w);
            }
        }

        match parameters.integrator {
            Integrator::SemiImplicit | Integrator::SymplecticEuler => {
                let implicit = parameters.integrator == Integrator::SemiImplicit;
                let stopping = std::mem::take(&mut pipeline.stopping);
                let step_friction = Friction {
                    anchors,
                    dt: h,
                    stopping: &stopping,
                };
                friction =
                    pipeline.evaluate_forces(bodies, joints, parameters, Some(step_friction));
                pipeline.stopping = stopping;
                report.quarantined +=
                    euler::advance(bodies, pipeline, parameters.baumgarte_alpha, h, implicit);
            }
            Integrator::Rk4 => rk4::step(bodies, joints, parameters, pipeline, h),
        }
        if parameters.joint_post_stabilisation {
            post_stabilise(
                bodies,
                joints,
                pipeline.islands.iter(),
                &mut pipeline.island_rows,
                &mut pipeline.solver,
            );
        }
        report.sticking = friction.sticking;
        report.sliding = friction.sliding;
        report.islands = pipeline.islands.len();
        report.largest_island = pipeline.islands.largest();

        for (body, before) in bodies.iter_mut().zip(&backup.bodies) {
            if body.is_dynamic() && !body.is_finite() {
                body.state = RigidBodyState::at_rest(before.pose);
                report.quarantined += 1;
            }
        }
        report.kinetic_energy = self.kinetic_energy();
        report.detection_seconds = (detected - started).as_secs_f64();
        report.dynamics_seconds = detected.elapsed().as_secs_f64();
        report
    }
}
