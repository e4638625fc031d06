//! The coupled world: deformable bodies and the rigid world, stepped
//! together.
//!
//! # How the two meet
//!
//! The paper staggers one iteration of a rigid PGS with one of its
//! deformable PGS (§3). Our rigid world is an implicit penalty method (Xu,
//! Zhao & Barbič), which has no iterations to stagger with, so a step here
//! is:
//!
//! 1. each deformable node takes its share of the external impulses on it
//!    ([`CoupledWorld::add_node_impulse`]) as a velocity change `p/m`, then
//!    each deformable's paradigm gives its nodes' free velocities (eqs 1–3)
//!    from there, so that its implicit solve and the rows see the push (a
//!    pinned node takes it too, and its pin holds it, as gravity);
//! 2. every rigid body enters the PGS as a participant with its inverse mass
//!    and world inverse inertia (eq 18) and its free velocity `v + h g`, `ω`;
//!    the rigid joints enter as bilateral rows, so that a jointed body
//!    answers the deformables as its joints let it;
//! 3. the PGS solves every row: internal ones, anchors, contacts and friction
//!    (Algorithm 1);
//! 4. nodes advance by symplectic Euler (eq 38), and over-long inextensible
//!    edges are projected back ([`crate::post_stabilisation`]);
//! 5. each rigid body's share of the coupling rows' impulses,
//!    `Σ λ (J_x, J_q)`, reaches the rigid world's implicit step as an
//!    external impulse, spread over the step, together with its own
//!    contacts, joints and gravity.
//!
//! Every coupling row's impulse on the deformable is the exact opposite of
//! its impulse on the rigid body (see [`crate::constraints::contact`]), and
//! the rigid step applies an external impulse exactly, so the coupling
//! conserves linear and angular momentum. What the PGS cannot see is the
//! rigid world's own penalty contacts within the step: a dish resting on the
//! ground answers a jelly's weight through its penalty springs one step
//! later, as the paper's staggering answers it one iteration later.

use crate::body::DeformableBody;
use crate::collision;
use crate::collision::deformable::SurfaceCollision;
use crate::constraints::anchor::{self, Anchor, AnchorTarget, RigidView};
use crate::constraints::contact::{self, ContactSettings, RigidContact, SurfaceContact};
use crate::constraints::{bending, inextensibility, joints, NodeTerm, Row, RowSource, Rows};
use crate::direct::DirectSolver;
use crate::paradigms::{
    ContactPlane, CorotationalFem, ForceIntegration, MassSpring, Paradigm, StepInput,
};
use crate::parameters::{EqualitySolver, SolverParameterError, SolverParameters, TangentBasis};
use crate::post_stabilisation;
use crate::solver::{self, Velocities};
use crate::warm_start::WarmStart;
use haptic_physics::{ConstraintRow, RigidBodyState, StepReport, World};
use nalgebra::{Matrix3, Point3, Vector3, Vector6};
use thiserror::Error;

/// Why a coupled world cannot be built.
#[derive(Debug, Error, PartialEq)]
pub enum CoupledWorldError {
    #[error("anchor {anchor}: {problem}")]
    Anchor { anchor: usize, problem: String },
    #[error(transparent)]
    Parameter(#[from] SolverParameterError),
}

/// What a step did.
#[derive(Clone, Debug, Default)]
pub struct CoupledStepReport {
    /// Rows solved, and of them contact rows (normal and friction).
    pub rows: usize,
    pub contact_rows: usize,
    /// Surface samples in contact with rigid bodies.
    pub contacts: usize,
    /// The deepest penetration of a sample into a rigid body (m, ≥ 0).
    pub max_penetration: f64,
    /// Deformable bodies whose step was not finite or exceeded
    /// [`SolverParameters::max_speed`], and dynamic rigid bodies whose
    /// points reached that speed in the coupled step: put back where they
    /// were and stopped.
    pub quarantined: usize,
    /// The rigid world's step.
    pub rigid: StepReport,
    /// Seconds spent in detection, in building rows, in the solver.
    pub detection_seconds: f64,
    pub solver_seconds: f64,
    pub paradigm_seconds: f64,
    /// The impulse the world anchors' pins gave the deformables in their
    /// paradigms' solves (N·s, summed over the substeps): with the anchor
    /// rows' impulses, what the world anchors carry.
    pub pin_impulse: Vector3<f64>,
    pub projection_seconds: f64,
    /// The largest relative error of an over-long inextensible edge met by
    /// the position projection's last pass.
    pub max_edge_error: f64,
    /// Deformable surface samples in contact with deformable triangles
    /// ([`crate::collision::deformable`]), the deepest penetration among
    /// them (m, ≥ 0), and the seconds their detection took (within
    /// `detection_seconds`).
    pub surface_contacts: usize,
    pub max_surface_penetration: f64,
    pub surface_detection_seconds: f64,
}

/// The buffers of a step, kept so that a step allocates nothing once they
/// have grown.
#[derive(Debug, Default)]
struct Scratch {
    positions: Vec<Point3<f64>>,
    velocities: Vec<Vector3<f64>>,
    inverse_masses: Vec<f64>,
    rigid_views: Vec<RigidView>,
    rigid_linear: Vec<Vector3<f64>>,
    rigid_angular: Vec<Vector3<f64>>,
    contacts: Vec<RigidContact>,
    /// Per node of the body being detected, its gap to the rigid body.
    node_gaps: Vec<f64>,
    surface_contacts: Vec<SurfaceContact>,
    joint_rows: Vec<ConstraintRow>,
    rows: Rows,
    impulses: Vec<Vector6<f64>>,
    projection: post_stabilisation::ProjectionScratch,
    /// The rigid body each node is anchored to, if any.
    anchored_to: Vec<Option<u32>>,
    /// The velocity each world-anchored node is held at in its paradigm's
    /// solve.
    pinned: Vec<Option<Vector3<f64>>>,
    /// Node velocities each elastic pass starts from.
    base: Vec<Vector3<f64>>,
    node_impulses: Vec<Vector3<f64>>,
    response: Vec<Vector3<f64>>,
    /// Which rows are contacts held as planes in this elastic pass.
    plane_rows: Vec<bool>,
    /// The other rows' impulses on each node.
    row_impulses: Vec<Vector3<f64>>,
    planes: Vec<ContactPlane>,
    plane_row_of: Vec<usize>,
    supports: Vec<f64>,
    /// The rigid bodies' states before the rigid step.
    rigid_states: Vec<RigidBodyState>,
}

/// The buffers of [`CoupledWorld::patch_response`], one body's nodes long.
#[derive(Debug, Default)]
struct PatchScratch {
    /// Zero for the nodes anchored to the world.
    pinned: Vec<Option<Vector3<f64>>>,
    planes: Vec<ContactPlane>,
    supports: Vec<f64>,
    impulses: Vec<Vector3<f64>>,
    /// Velocities at `t + h` with no impulse, and with the probe's (then its
    /// velocity change).
    base: Vec<Vector3<f64>>,
    velocities: Vec<Vector3<f64>>,
}

/// Deformable bodies, anchors and the rigid world they share.
pub struct CoupledWorld {
    rigid: World,
    bodies: Vec<DeformableBody>,
    anchors: Vec<Anchor>,
    parameters: SolverParameters,
    node_offsets: Vec<u32>,
    scratch: Scratch,
    surfaces: SurfaceCollision,
    /// The last substep's impulses, to warm start the next.
    warm: WarmStart,
    convergence: Vec<f64>,
    quarantined: u64,
    direct: DirectSolver,
    /// External impulses on the nodes (N·s, all bodies' nodes in turn), for
    /// the next step to apply; whether any was added; those refused so far.
    node_impulses: Vec<Vector3<f64>>,
    node_impulses_pending: bool,
    refused_node_impulses: u64,
    patch: PatchScratch,
}

impl CoupledWorld {
    /// Checks the anchors against the bodies and the parameters.
    pub fn new(
        rigid: World,
        bodies: Vec<DeformableBody>,
        anchors: Vec<Anchor>,
        parameters: SolverParameters,
    ) -> Result<CoupledWorld, CoupledWorldError> {
        parameters.check()?;
        for (k, a) in anchors.iter().enumerate() {
            let problem = match bodies.get(a.body) {
                None => Some(format!("deformable body {} does not exist", a.body)),
                Some(b) if a.node as usize >= b.state.positions.len() => Some(format!(
                    "node {} is beyond `{}`'s {} nodes",
                    a.node,
                    b.model.name,
                    b.state.positions.len()
                )),
                _ => match a.target {
                    AnchorTarget::Rigid { body, .. } if body >= rigid.bodies().len() => {
                        Some(format!("rigid body {body} does not exist"))
                    }
                    AnchorTarget::World(p) if !p.coords.iter().all(|v| v.is_finite()) => {
                        Some("its world point is not finite".to_string())
                    }
                    _ => None,
                },
            };
            if let Some(problem) = problem {
                return Err(CoupledWorldError::Anchor { anchor: k, problem });
            }
        }
        let mut node_offsets = Vec::with_capacity(bodies.len());
        let mut total = 0u32;
        for b in &bodies {
            node_offsets.push(total);
            total += b.state.positions.len() as u32;
        }
        Ok(CoupledWorld {
            rigid,
            surfaces: SurfaceCollision::new(&bodies),
            bodies,
            anchors,
            parameters,
            node_offsets,
            scratch: Scratch::default(),
            warm: WarmStart::default(),
            convergence: Vec::new(),
            quarantined: 0,
            direct: DirectSolver::default(),
            node_impulses: vec![Vector3::zeros(); total as usize],
            node_impulses_pending: false,
            refused_node_impulses: 0,
            patch: PatchScratch::default(),
        })
    }

    pub fn rigid(&self) -> &World {
        &self.rigid
    }

    pub fn rigid_mut(&mut self) -> &mut World {
        &mut self.rigid
    }

    pub fn bodies(&self) -> &[DeformableBody] {
        &self.bodies
    }

    pub fn bodies_mut(&mut self) -> &mut [DeformableBody] {
        &mut self.bodies
    }

    pub fn anchors(&self) -> &[Anchor] {
        &self.anchors
    }

    pub fn parameters(&self) -> &SolverParameters {
        &self.parameters
    }

    /// The RMS impulse change of each iteration of the last step (Fig. 1).
    pub fn convergence(&self) -> &[f64] {
        &self.convergence
    }

    /// The rows of the last step, with their final impulses.
    pub fn rows(&self) -> &Rows {
        &self.scratch.rows
    }

    /// The deformables' surface samples near or touching rigid bodies that
    /// the last substep found (what [`CoupledStepReport::contacts`] counts),
    /// at the positions that substep started from.
    pub fn contacts(&self) -> &[RigidContact] {
        &self.scratch.contacts
    }

    /// Deformable bodies put back after a non-finite step, so far.
    pub fn quarantined(&self) -> u64 {
        self.quarantined
    }

    /// Total linear momentum of the deformables and the dynamic rigid bodies
    /// (N·s).
    pub fn momentum(&self) -> Vector3<f64> {
        let rigid: Vector3<f64> = self
            .rigid
            .bodies()
            .iter()
            .filter(|b| b.is_dynamic())
            .map(|b| b.model.mass * b.state.velocity)
            .sum();
        rigid
            + self
                .bodies
                .iter()
                .map(DeformableBody::momentum)
                .sum::<Vector3<f64>>()
    }

    /// Kinetic energy of everything that moves (J).
    pub fn kinetic_energy(&self) -> f64 {
        self.rigid.kinetic_energy()
            + self
                .bodies
                .iter()
                .map(DeformableBody::kinetic_energy)
                .sum::<f64>()
    }

    /// Adds `impulse` (N·s, world frame) on node `node` of deformable body
    /// `body`, for the next [`step`](Self::step) to apply, `1/substeps` of it
    /// in each substep as a velocity change before the free velocities, and
    /// then forget. An out-of-range body or node, or an impulse that is not
    /// finite (or would make the node's sum so), is ignored and counted.
    pub fn add_node_impulse(&mut self, body: usize, node: u32, impulse: Vector3<f64>) {
        let slot = self
            .bodies
            .get(body)
            .filter(|b| (node as usize) < b.state.positions.len())
            .map(|_| self.node_offsets[body] as usize + node as usize);
        match slot {
            Some(i)
                if (self.node_impulses[i] + impulse)
                    .iter()
                    .all(|v| v.is_finite()) =>
            {
                self.node_impulses[i] += impulse;
                self.node_impulses_pending = true;
            }
            _ => self.refused_node_impulses += 1,
        }
    }

    /// Node impulses [`add_node_impulse`](Self::add_node_impulse) refused so
    /// far.
    pub fn refused_node_impulses(&self) -> u64 {
        self.refused_node_impulses
    }

    /// The one-step compliance `W` (1/kg, symmetric) of the patch `nodes` of
    /// deformable body `body`, a condensed Delassus operator: an impulse `p`
    /// (N·s) spread evenly over the patch's `n` nodes (`p/n` each) changes
    /// the plain mean of their velocities by `W p` within one step of `h`,
    /// through the body's own model. `W = S̄ᵀ A_c⁻¹ S / n`, `S` the 3N×3
    /// selection of the patch's nodes (a node listed twice counts twice),
    /// `S̄ = S/n` its mean, and `A_c⁻¹` the body's one-step response at its
    /// current state: `A = M − hD − h²K` of a linearly implicit force-based
    /// body (its solve with contacts), shape matching's rigid share
    /// ([`Paradigm::respond`]) or `M⁻¹` (explicit, XPBD), with the nodes
    /// anchored to the world pinned at rest, and the nodes the last step found
    /// touching rigid bodies and the patch's nodes within the contact margin
    /// of one held on their contact planes (at zero
    /// normal velocity; with planes, a position-based body's solve with
    /// contacts). A force `F` held on the patch for one step moves its mean
    /// by `h² W F`: `(h² W)⁻¹` is the stiffness it meets there (N/m).
    ///
    /// Gravity is left out, and the body's paradigm is copied, so that the
    /// world steps on as if this had not been asked. `None` for an empty
    /// patch, a body or node out of range, a step that is not positive, or
    /// a result that is not finite.
    pub fn patch_response(&mut self, body: usize, nodes: &[u32], h: f64) -> Option<Matrix3<f64>> {
        let deformable = self.bodies.get(body)?;
        let count = deformable.state.positions.len();
        if nodes.is_empty() || !(h > 0.0 && h.is_finite()) {
            return None;
        }
        if nodes.iter().any(|&i| i as usize >= count) {
            return None;
        }
        let PatchScratch {
            pinned,
            planes,
            supports,
            impulses,
            base,
            velocities,
        } = &mut self.patch;
        pinned.clear();
        pinned.resize(count, None);
        for anchor in &self.anchors {
            if anchor.body == body && matches!(anchor.target, AnchorTarget::World(_)) {
                pinned[anchor.node as usize] = Some(Vector3::zeros());
            }
        }
        // The last substep's rows, with their final impulses, as the elastic
        // passes chose their planes (whether or not the step holds planes,
        // its rows hold these nodes).
        let offset = self.node_offsets[body] as usize;
        let rows = &self.scratch.rows;
        let gravity = self.rigid.parameters().gravity;
        planes.clear();
        for row in &rows.rows {
            // A node the step found touching holds whether or not its row
            // pushed in that step: a resting contact's impulse comes and
            // goes from step to step, its support does not.
            let Some(t) = resting_node(rows, row, &self.scratch.rigid_views, gravity, false) else {
                continue;
            };
            let node = (t.node as usize).wrapping_sub(offset);
            if node < count && pinned[node].is_none() {
                planes.push(ContactPlane {
                    node: node as u32,
                    normal: t.jacobian,
                    normal_velocity: 0.0,
                });
            }
        }
        // A patch node within the contact margin of a rigid body is held too,
        // touching or not in the last step: a node resting on a surface
        // leaves it and comes back from step to step, and a press meets the
        // surface whichever the step was.
        let reach = deformable.model.material.thickness + self.parameters.contact_margin;
        for &node in nodes {
            let i = node as usize;
            if pinned[i].is_some() || planes.iter().any(|p| p.node == node) {
                continue;
            }
            let x = deformable.state.positions[i];
            let nearest = self
                .rigid
                .bodies()
                .iter()
                .filter_map(|rigid| {
                    let geometry = rigid.model.geometry.as_ref()?;
                    let local = rigid.state.pose.inverse_transform_point(&x);
                    let (distance, gradient) = geometry.field.value_gradient(&local);
                    let length = gradient.norm();
                    (distance < reach && length > 1e-9)
                        .then(|| (distance, rigid.state.pose.rotation * (gradient / length)))
                })
                .min_by(|a, b| a.0.total_cmp(&b.0));
            if let Some((_, normal)) = nearest {
                planes.push(ContactPlane {
                    node,
                    normal,
                    normal_velocity: 0.0,
                });
            }
        }
        let masses = &deformable.model.masses;
        let input = StepInput {
            h,
            gravity: Vector3::zeros(),
            masses,
            positions: &deformable.state.positions,
            velocities: &deformable.state.velocities,
            pinned,
        };
        let mut paradigm = deformable.model.paradigm.clone();
        base.clear();
        base.resize(count, Vector3::zeros());
        velocities.clear();
        velocities.resize(count, Vector3::zeros());
        // Prepares the copy's step at `h` (its matrix, right-hand side and
        // rotations at the current state).
        paradigm.free_velocities(&input, base);
        impulses.clear();
        impulses.resize(count, Vector3::zeros());
        supports.clear();
        supports.resize(planes.len(), 0.0);
        // The solve with contacts is `A_c Δv = h (f + hKv) + p`: affine in
        // `p`, so a probe's answer less the unpushed answer is its response.
        let affine = (!planes.is_empty() || solves_implicitly(&paradigm))
            && paradigm.solve_with_contacts(&input, impulses, planes, base, supports);
        let n = nodes.len() as f64;
        let probe = PROBE_SPEED * nodes.iter().map(|&i| masses[i as usize]).sum::<f64>();
        let mut w = Matrix3::zeros();
        for axis in 0..3 {
            impulses.iter_mut().for_each(|p| *p = Vector3::zeros());
            for &i in nodes {
                impulses[i as usize][axis] += probe / n;
            }
            if affine {
                paradigm.solve_with_contacts(&input, impulses, planes, velocities, supports);
                for (v, v0) in velocities.iter_mut().zip(base.iter()) {
                    *v -= v0;
                }
            } else if !paradigm.respond(&input, impulses, velocities) {
                for i in 0..count {
                    velocities[i] = match pinned[i] {
                        Some(_) => Vector3::zeros(),
                        None => impulses[i] / masses[i],
                    };
                }
                for plane in planes.iter() {
                    let v = &mut velocities[plane.node as usize];
                    *v -= plane.normal.dot(v) * plane.normal;
                }
            }
            let mean = nodes
                .iter()
                .map(|&i| velocities[i as usize])
                .sum::<Vector3<f64>>()
                / n;
            w.set_column(axis, &(mean / probe));
        }
        let w = 0.5 * (w + w.transpose());
        w.iter().all(|v| v.is_finite()).then_some(w)
    }

    /// Advances the world by `h` seconds in
    /// [`SolverParameters::substeps`] equal substeps (see the module's
    /// documentation). The report's counts and largest values are the
    /// substeps' largest, its times their sums, its rigid step the last's.
    pub fn step(&mut self, h: f64) -> CoupledStepReport {
        self.step_with_impulses(h, &[])
    }

    /// [`step`](Self::step) with `external` impulses on the rigid bodies
    /// (N·s and N·m·s about each body's centre of mass, world frame, in the
    /// rigid world's order; missing ones are zero), spread evenly over the
    /// substeps and handed to the rigid world's implicit steps with the
    /// coupling impulses: what a body is pushed with from outside the
    /// world, such as a haptic tool's contacts or viscous drag.
    pub fn step_with_impulses(&mut self, h: f64, external: &[Vector6<f64>]) -> CoupledStepReport {
        let parts = self.parameters.substeps.max(1);
        let mut total = CoupledStepReport::default();
        for _ in 0..parts {
            let r = self.substep(h / parts as f64, external, 1.0 / parts as f64);
            total.rows = total.rows.max(r.rows);
            total.contact_rows = total.contact_rows.max(r.contact_rows);
            total.contacts = total.contacts.max(r.contacts);
            total.max_penetration = total.max_penetration.max(r.max_penetration);
            total.max_edge_error = total.max_edge_error.max(r.max_edge_error);
            total.surface_contacts = total.surface_contacts.max(r.surface_contacts);
            total.max_surface_penetration =
                total.max_surface_penetration.max(r.max_surface_penetration);
            total.surface_detection_seconds += r.surface_detection_seconds;
            total.quarantined += r.quarantined;
            total.pin_impulse += r.pin_impulse;
            total.detection_seconds += r.detection_seconds;
            total.solver_seconds += r.solver_seconds;
            total.paradigm_seconds += r.paradigm_seconds;
            total.projection_seconds += r.projection_seconds;
            total.rigid = r.rigid;
        }
        if self.node_impulses_pending {
            self.node_impulses
                .iter_mut()
                .for_each(|p| *p = Vector3::zeros());
            self.node_impulses_pending = false;
        }
        total
    }

    /// One substep of `h` seconds, with `share` of the `external` impulses.
    fn substep(&mut self, h: f64, external: &[Vector6<f64>], share: f64) -> CoupledStepReport {
        let gravity = self.rigid.parameters().gravity;
        let parameters = self.parameters;
        let mut report = CoupledStepReport::default();
        let started = std::time::Instant::now();
        let s = &mut self.scratch;

        // 1. This substep's share of the external node impulses as velocity
        //    changes, then free velocities (eqs 1–3), all bodies' nodes in
        //    one array. A node anchored to the world is held in its
        //    paradigm's solve at the velocity that closes its anchor's error
        //    at the Baumgarte rate.
        if self.node_impulses_pending {
            for (body, &offset) in self.bodies.iter_mut().zip(&self.node_offsets) {
                let pushes = &self.node_impulses[offset as usize..];
                for ((v, m), p) in body
                    .state
                    .velocities
                    .iter_mut()
                    .zip(&body.model.masses)
                    .zip(pushes)
                {
                    *v += (share / m) * p;
                }
            }
        }
        let total: usize = self.bodies.iter().map(|b| b.state.positions.len()).sum();
        s.pinned.clear();
        s.pinned.resize(total, None);
        for anchor in &self.anchors {
            if let AnchorTarget::World(point) = anchor.target {
                let x = self.bodies[anchor.body].state.positions[anchor.node as usize];
                s.pinned[self.node_offsets[anchor.body] as usize + anchor.node as usize] =
                    Some(-(parameters.baumgarte / h) * (x - point));
            }
        }
        s.positions.clear();
        s.velocities.clear();
        s.inverse_masses.clear();
        for body in &mut self.bodies {
            let start = s.velocities.len();
            s.velocities
                .resize(start + body.state.positions.len(), Vector3::zeros());
            body.model.paradigm.free_velocities(
                &StepInput {
                    h,
                    gravity,
                    masses: &body.model.masses,
                    positions: &body.state.positions,
                    velocities: &body.state.velocities,
                    pinned: &s.pinned[start..start + body.state.positions.len()],
                },
                &mut s.velocities[start..],
            );
            s.positions.extend_from_slice(&body.state.positions);
            s.inverse_masses
                .extend(body.model.masses.iter().map(|m| 1.0 / m));
        }
        // A pinned node is fixed for the rows: infinite mass.
        for (inverse, pin) in s.inverse_masses.iter_mut().zip(&s.pinned) {
            if pin.is_some() {
                *inverse = 0.0;
            }
        }
        report.paradigm_seconds = started.elapsed().as_secs_f64();

        // 2. Rigid participants (eq 18) at their free velocities.
        s.rigid_views.clear();
        s.rigid_linear.clear();
        s.rigid_angular.clear();
        for body in self.rigid.bodies() {
            let dynamic = body.is_dynamic();
            s.rigid_views.push(RigidView {
                centre: Point3::from(body.state.pose.translation.vector),
                inverse_mass: body.inverse_mass(),
                inverse_inertia: if dynamic {
                    body.world_inverse_inertia()
                } else {
                    Matrix3::zeros()
                },
            });
            s.rigid_linear.push(if dynamic {
                body.state.velocity + h * gravity
            } else {
                body.state.velocity
            });
            s.rigid_angular.push(body.state.angular_velocity);
        }

        // 3. Detection and rows.
        let detection = std::time::Instant::now();
        s.anchored_to.clear();
        s.anchored_to.resize(s.positions.len(), None);
        for anchor in &self.anchors {
            if let AnchorTarget::Rigid { body, .. } = anchor.target {
                s.anchored_to[self.node_offsets[anchor.body] as usize + anchor.node as usize] =
                    Some(body as u32);
            }
        }
        s.contacts.clear();
        for (b, body) in self.bodies.iter().enumerate() {
            let offset = self.node_offsets[b] as usize;
            let nodes = offset..offset + body.state.positions.len();
            let fastest = s.velocities[nodes.clone()]
                .iter()
                .map(|v| v.norm())
                .fold(0.0, f64::max);
            for (r, rigid) in self.rigid.bodies().iter().enumerate() {
                let rigid_speed = rigid.state.velocity.norm()
                    + rigid.state.angular_velocity.norm()
                        * rigid.model.geometry.as_ref().map_or(0.0, |g| g.reach());
                let margin = parameters.contact_margin + h * rigid_speed;
                let bounds = collision::rigid::bounds(
                    &body.state.positions,
                    margin + h * fastest + body.model.material.thickness,
                );
                collision::rigid::detect(
                    b as u32,
                    body,
                    &bounds,
                    r as u32,
                    rigid,
                    margin,
                    h,
                    &s.velocities[nodes.clone()],
                    &s.anchored_to[offset..offset + body.state.positions.len()],
                    &mut s.node_gaps,
                    &mut s.contacts,
                );
            }
        }
        // Deformable surfaces against each other and themselves.
        let surfaces = std::time::Instant::now();
        s.surface_contacts.clear();
        if parameters.deformable_contacts {
            self.surfaces.detect(
                &self.bodies,
                &self.node_offsets,
                &s.velocities,
                h,
                parameters.contact_margin,
                &mut s.surface_contacts,
            );
        }
        report.surface_detection_seconds = surfaces.elapsed().as_secs_f64();
        report.detection_seconds = detection.elapsed().as_secs_f64();
        let solving = std::time::Instant::now();
        s.rows.clear();
        let bias_rate = parameters.baumgarte / h;
        for (b, body) in self.bodies.iter().enumerate() {
            let offset = self.node_offsets[b];
            let material = &body.model.material;
            inextensibility::add_rows(
                &mut s.rows,
                b as u32,
                offset,
                &body.model.inextensible,
                &body.state.positions,
                &s.anchored_to,
                &s.inverse_masses,
                bias_rate,
                -material.stretch_limit * h,
                material.compression_limit * h,
            );
            bending::add_rows(
                &mut s.rows,
                b as u32,
                offset,
                &body.model.hinges,
                &body.state.positions,
                &s.inverse_masses,
                parameters.bending_baumgarte / h,
                material.bending_limit * h,
            );
        }
        let rigid_bodies = self.rigid.bodies();
        // World anchors are pins (above); only anchors to rigid bodies make rows.
        anchor::add_rows(
            &mut s.rows,
            &self.anchors,
            &self.node_offsets,
            &s.positions,
            &s.rigid_views,
            |body, point| rigid_bodies[body].state.pose * point,
            &s.inverse_masses,
            bias_rate,
        );
        if parameters.joint_rows && !self.rigid.joints().is_empty() {
            s.joint_rows.clear();
            for joint in self.rigid.joints() {
                joint.rows(rigid_bodies, &mut s.joint_rows);
            }
            joints::add_rows(&mut s.rows, &s.joint_rows, &s.rigid_views);
        }
        let settings = ContactSettings {
            h,
            baumgarte: parameters.baumgarte,
            friction_bound: parameters.friction_bound,
            tangent_basis: parameters.tangent_basis,
            gravity,
        };
        let first_contact_row = s.rows.len();
        for c in &s.contacts {
            let body = &self.bodies[c.body as usize];
            let sample = &body.model.samples[c.sample as usize];
            let rigid = &rigid_bodies[c.rigid as usize];
            // Eq 32's contact mass: the sample's share of its body plus the
            // rigid body's share of its contacts (static bodies add none).
            let contact_mass = sample
                .nodes
                .iter()
                .zip(sample.weights)
                .map(|(n, w)| w * body.model.masses[*n as usize])
                .sum::<f64>()
                + if rigid.is_dynamic() {
                    rigid.model.mass / s.contacts.len() as f64
                } else {
                    0.0
                };
            let mut contact = *c;
            contact.gap = contact
                .gap
                .max(-parameters.max_push_out_speed * h / parameters.baumgarte.max(1e-12));
            report.max_penetration = report.max_penetration.max(-c.gap);
            contact::add_rows(
                &mut s.rows,
                &contact,
                sample,
                self.node_offsets[c.body as usize],
                &s.rigid_views[c.rigid as usize],
                contact_mass,
                &s.velocities,
                (
                    s.rigid_linear[c.rigid as usize],
                    s.rigid_angular[c.rigid as usize],
                ),
                &s.inverse_masses,
                &settings,
            );
        }
        for c in &s.surface_contacts {
            let mut contact = *c;
            contact.gap = contact
                .gap
                .max(-parameters.max_push_out_speed * h / parameters.baumgarte.max(1e-12));
            report.max_surface_penetration = report.max_surface_penetration.max(-c.gap);
            let (a, b) = (
                &self.bodies[c.body as usize],
                &self.bodies[c.other as usize],
            );
            contact::add_surface_rows(
                &mut s.rows,
                &contact,
                &a.model.samples[c.sample as usize],
                self.node_offsets[c.body as usize],
                &b.model.surface[c.face as usize],
                self.node_offsets[c.other as usize],
                collision::deformable::contact_mass(&self.bodies, c),
                &s.velocities,
                &s.inverse_masses,
                &settings,
            );
        }
        report.surface_contacts = s.surface_contacts.len();
        report.contacts = s.contacts.len();
        report.rows = s.rows.len();
        report.contact_rows = s.rows.len() - first_contact_row;

        // 4. Warm starting (§4.6), then Algorithm 1.
        let warm_friction = parameters.tangent_basis == TangentBasis::FromNormal;
        if parameters.warm_start > 0.0 {
            self.warm
                .start(&mut s.rows, parameters.warm_start, warm_friction);
        }
        s.base.clear();
        s.base.extend_from_slice(&s.velocities);
        let mut velocities = Velocities {
            nodes: &mut s.velocities,
            node_inverse_masses: &s.inverse_masses,
            rigid_linear: &mut s.rigid_linear,
            rigid_angular: &mut s.rigid_angular,
        };
        solver::apply_start(&s.rows, &mut velocities);
        self.convergence.clear();
        let nodes = s.inverse_masses.len() as u32;
        let direct = parameters.equality_solver == EqualitySolver::Direct
            && self.direct.prepare(&mut s.rows, nodes, &s.inverse_masses);
        for _ in 0..parameters.iterations {
            self.convergence.push(sweep(
                &mut s.rows,
                &mut velocities,
                direct.then_some(&mut self.direct),
            ));
        }
        // Elastic passes: the solver moves a node by `M⁻¹ p`, but an
        // implicitly integrated body answers an impulse by `A⁻¹ p`, sharing
        // it with the nodes its stiffness reaches. Each pass replaces the
        // former by the latter for the impulses of the last pass and solves
        // the rows again from there (their impulses kept), so that a jelly
        // struck on its underside is stopped as a whole within the step.
        let gravity_free = gravity;
        for _ in 1..parameters.elastic_passes {
            let mut answered = false;
            s.node_impulses.clear();
            s.node_impulses
                .extend(s.velocities.iter().zip(&s.base).zip(&s.inverse_masses).map(
                    |((w, u), inverse)| {
                        if *inverse > 0.0 {
                            (w - u) / *inverse
                        } else {
                            Vector3::zeros()
                        }
                    },
                ));
            s.response.clear();
            s.response.resize(s.velocities.len(), Vector3::zeros());
            // The contacts each body rests on through a node: held on their
            // planes in its implicit solve, the other rows' impulses added.
            s.plane_rows.clear();
            s.plane_rows.resize(s.rows.rows.len(), false);
            s.row_impulses.clear();
            s.row_impulses.resize(s.velocities.len(), Vector3::zeros());
            for (k, row) in s.rows.rows.iter().enumerate() {
                let terms = &s.rows.node_terms[row.nodes.0 as usize..row.nodes.1 as usize];
                // A plane is held at its rigid side's velocity, as if that
                // side could not move: a free body lying on the deformable
                // (not holding it up) stays with the rows, where its mass
                // meets the nodes'; held on planes, a bar on four jellies
                // took every jelly's support at once and rocked off them
                // in 10 ms substeps.
                let rests = parameters.contact_planes
                    && resting_node(&s.rows, row, &s.rigid_views, gravity, true)
                        .is_some_and(|t| s.pinned[t.node as usize].is_none());
                if rests {
                    s.plane_rows[k] = true;
                } else {
                    for t in terms {
                        s.row_impulses[t.node as usize] += row.impulse * t.jacobian;
                    }
                }
            }
            for (b, body) in self.bodies.iter_mut().enumerate() {
                let offset = self.node_offsets[b] as usize;
                let nodes = offset..offset + body.state.positions.len();
                let input = StepInput {
                    h,
                    gravity: gravity_free,
                    masses: &body.model.masses,
                    positions: &body.state.positions,
                    velocities: &body.state.velocities,
                    pinned: &s.pinned[nodes.clone()],
                };
                s.planes.clear();
                s.plane_row_of.clear();
                for (k, row) in s.rows.rows.iter().enumerate() {
                    if !s.plane_rows[k] {
                        continue;
                    }
                    let t = s.rows.node_terms[row.nodes.0 as usize];
                    if !nodes.contains(&(t.node as usize)) {
                        continue;
                    }
                    // n · v_node = target − J_rigid · (v, ω) of the rigid side,
                    // the target no more than closing: pushing a penetration
                    // out through the body's stiffness would launch it whole
                    // (the position projection takes penetrations back).
                    let rigid: f64 = s.rows.rigid_terms
                        [row.rigids.0 as usize..row.rigids.1 as usize]
                        .iter()
                        .map(|r| {
                            r.linear.dot(&s.rigid_linear[r.body as usize])
                                + r.angular.dot(&s.rigid_angular[r.body as usize])
                        })
                        .sum();
                    s.planes.push(ContactPlane {
                        node: t.node - offset as u32,
                        normal: t.jacobian,
                        normal_velocity: row.target.min(0.0) - rigid,
                    });
                    s.plane_row_of.push(k);
                }
                // An active set: a plane that would have to pull its node is
                // let go and the body solved again, so that every support
                // the rows record pushes.
                // A solve that still pulls after the last round falls back
                // to passing every impulse through the body's response.
                let mut solved = false;
                for round in 0..=PLANE_RELEASE_ROUNDS {
                    s.supports.clear();
                    s.supports.resize(s.planes.len(), 0.0);
                    let answered = !s.planes.is_empty()
                        && body.model.paradigm.solve_with_contacts(
                            &input,
                            &s.row_impulses[nodes.clone()],
                            &s.planes,
                            &mut s.response[nodes.clone()],
                            &mut s.supports,
                        );
                    if !answered || round == PLANE_RELEASE_ROUNDS {
                        solved = answered && s.supports.iter().all(|&f| f >= 0.0);
                        break;
                    }
                    if s.supports.iter().all(|&f| f >= 0.0) {
                        solved = true;
                        break;
                    }
                    let mut keep = 0;
                    for k in 0..s.planes.len() {
                        if s.supports[k] >= 0.0 {
                            s.planes[keep] = s.planes[k];
                            s.plane_row_of[keep] = s.plane_row_of[k];
                            keep += 1;
                        } else {
                            // Released: its row keeps acting through the rows.
                            let row = s.rows.rows[s.plane_row_of[k]];
                            let t = s.rows.node_terms[row.nodes.0 as usize];
                            s.row_impulses[t.node as usize] += row.impulse * t.jacobian;
                        }
                    }
                    s.planes.truncate(keep);
                    s.plane_row_of.truncate(keep);
                }
                if solved {
                    answered = true;
                    // Each contact row takes its plane's support; its rigid
                    // side gets the change.
                    for (&k, support) in s.plane_row_of.iter().zip(&s.supports) {
                        let row = s.rows.rows[k];
                        let impulse = support.max(0.0);
                        let change = impulse - row.impulse;
                        for r in &s.rows.rigid_terms[row.rigids.0 as usize..row.rigids.1 as usize] {
                            s.rigid_linear[r.body as usize] += change * r.linear_response;
                            s.rigid_angular[r.body as usize] += change * r.angular_response;
                        }
                        s.rows.rows[k].impulse = impulse;
                    }
                    for i in nodes {
                        s.base[i] = s.response[i];
                        s.velocities[i] = s.response[i];
                    }
                } else if body.model.paradigm.respond(
                    &input,
                    &s.node_impulses[nodes.clone()],
                    &mut s.response[nodes.clone()],
                ) {
                    answered = true;
                    for i in nodes {
                        s.base[i] += s.response[i];
                        s.velocities[i] = s.base[i];
                    }
                } else {
                    s.base[nodes.clone()].copy_from_slice(&s.velocities[nodes]);
                }
            }
            if !answered {
                break;
            }
            let mut velocities = Velocities {
                nodes: &mut s.velocities,
                node_inverse_masses: &s.inverse_masses,
                rigid_linear: &mut s.rigid_linear,
                rigid_angular: &mut s.rigid_angular,
            };
            for _ in 0..parameters.iterations {
                self.convergence.push(sweep(
                    &mut s.rows,
                    &mut velocities,
                    direct.then_some(&mut self.direct),
                ));
            }
        }
        self.warm.remember(&s.rows);
        report.solver_seconds = solving.elapsed().as_secs_f64();

        // 5. Symplectic Euler for the nodes (eq 38), quarantining any body
        //    whose step is not finite.
        for (b, body) in self.bodies.iter_mut().enumerate() {
            let offset = self.node_offsets[b] as usize;
            let n = body.state.positions.len();
            let velocities = &s.velocities[offset..offset + n];
            // Non-finite, or faster than anything the scene can mean: a
            // diverging step (an explicit paradigm past its limit).
            let finite = velocities
                .iter()
                .all(|v| v.iter().all(|c| c.is_finite()) && v.norm() <= parameters.max_speed);
            if finite {
                if s.pinned[offset..offset + n].iter().any(Option::is_some) {
                    // Internal forces and internal rows add up to nothing:
                    // whatever the body gained beyond gravity and the
                    // coupling rows' impulses, its pins gave.
                    let gained = body
                        .model
                        .masses
                        .iter()
                        .zip(velocities)
                        .zip(&body.state.velocities)
                        .map(|((m, end), start)| *m * (end - start - h * gravity))
                        .sum::<Vector3<f64>>();
                    let coupled: Vector3<f64> = s
                        .rows
                        .rows
                        .iter()
                        .filter(|row| {
                            row.rigids.0 < row.rigids.1
                                || matches!(row.source, RowSource::SurfaceContact { .. })
                        })
                        .flat_map(|row| {
                            s.rows.node_terms[row.nodes.0 as usize..row.nodes.1 as usize]
                                .iter()
                                .filter(|t| (offset..offset + n).contains(&(t.node as usize)))
                                .map(move |t| row.impulse * t.jacobian)
                        })
                        .sum();
                    report.pin_impulse += gained - coupled;
                }
                body.state.velocities.copy_from_slice(velocities);
                for (x, v) in body.state.positions.iter_mut().zip(velocities) {
                    *x += h * v;
                }
            } else {
                body.state
                    .positions
                    .copy_from_slice(&s.positions[offset..offset + n]);
                body.state
                    .velocities
                    .iter_mut()
                    .for_each(|v| *v = Vector3::zeros());
                report.quarantined += 1;
            }
        }
        self.quarantined += report.quarantined as u64;
        let projection = std::time::Instant::now();
        let (rigid_linear, rigid_angular, rigid_views) =
            (&s.rigid_linear, &s.rigid_angular, &s.rigid_views);
        report.max_edge_error = post_stabilisation::project(
            &mut self.bodies,
            &self.node_offsets,
            &self.anchors,
            &s.contacts,
            |r, point| rigid_bodies[r].state.pose * point,
            |r, point| {
                point
                    + h * (rigid_linear[r]
                        + rigid_angular[r].cross(&(point - rigid_views[r].centre)))
            },
            &s.surface_contacts,
            &s.positions,
            parameters.projection_sweeps,
            &mut s.projection,
        );
        report.projection_seconds = projection.elapsed().as_secs_f64();
        // The projection moves nodes by position alone: a body it takes
        // further than the speed limit allows in a step (or to a non-finite
        // place) is diverging, and is put back and stopped as above.
        let farthest = parameters.max_speed * h;
        for (b, body) in self.bodies.iter_mut().enumerate() {
            let offset = self.node_offsets[b] as usize;
            let n = body.state.positions.len();
            let start = &s.positions[offset..offset + n];
            let diverged = body
                .state
                .positions
                .iter()
                .zip(start)
                .any(|(x, x0)| !((x - x0).norm() <= farthest));
            if diverged {
                body.state.positions.copy_from_slice(start);
                body.state
                    .velocities
                    .iter_mut()
                    .for_each(|v| *v = Vector3::zeros());
                report.quarantined += 1;
                self.quarantined += 1;
            }
        }

        // 6. The coupling rows' impulses on the rigid bodies, into the rigid
        //    world's implicit step.
        s.impulses.clear();
        s.impulses.resize(rigid_bodies.len(), Vector6::zeros());
        for row in &s.rows.rows {
            if row.nodes.0 == row.nodes.1 {
                continue;
            }
            for t in &s.rows.rigid_terms[row.rigids.0 as usize..row.rigids.1 as usize] {
                let impulse = &mut s.impulses[t.body as usize];
                let linear = row.impulse * t.linear;
                let angular = row.impulse * t.angular;
                for k in 0..3 {
                    impulse[k] += linear[k];
                    impulse[k + 3] += angular[k];
                }
            }
        }
        for (impulse, pushed) in s.impulses.iter_mut().zip(external) {
            *impulse += pushed * share;
        }
        for impulse in &mut s.impulses {
            if !impulse.iter().all(|v| v.is_finite()) {
                *impulse = Vector6::zeros();
                report.quarantined += 1;
                self.quarantined += 1;
            }
        }
        s.rigid_states.clear();
        s.rigid_states
            .extend(self.rigid.bodies().iter().map(|b| b.state));
        report.rigid = self.rigid.step(h, &s.impulses);
        // A coupled step that launches a rigid body (a stack of light nodes
        // squeezed by a heavy body at too long a step, say) is diverging as
        // surely as a deformable one: the body is put back and counted.
        for (i, before) in s.rigid_states.iter().enumerate() {
            let body = &self.rigid.bodies()[i];
            let reach = body.model.geometry.as_ref().map_or(0.0, |g| g.reach());
            let fastest = body.state.velocity.norm() + body.state.angular_velocity.norm() * reach;
            if body.is_dynamic() && !(fastest <= parameters.max_speed) {
                self.rigid
                    .set_state(i, RigidBodyState::at_rest(before.pose));
                report.quarantined += 1;
                self.quarantined += 1;
            }
        }
        report
    }
}

/// The node term of `row` if it is a non-penetration row of one node
/// against rigid bodies, pushing (a positive impulse) where `pushing` is
/// asked, and no dynamic body among them lies on the node (its normal on
/// the node along `gravity`): a node resting on the rigid world, held on
/// its contact plane in the body's implicit solve.
fn resting_node(
    rows: &Rows,
    row: &Row,
    rigid_views: &[RigidView],
    gravity: Vector3<f64>,
    pushing: bool,
) -> Option<NodeTerm> {
    let terms = &rows.node_terms[row.nodes.0 as usize..row.nodes.1 as usize];
    if !(matches!(row.source, RowSource::Contact { axis: 0, .. })
        && terms.len() == 1
        && (row.impulse > 0.0 || !pushing))
    {
        return None;
    }
    let lies_on = terms[0].jacobian.dot(&gravity) >= 0.0
        && rows.rigid_terms[row.rigids.0 as usize..row.rigids.1 as usize]
            .iter()
            .any(|r| rigid_views[r.body as usize].inverse_mass > 0.0);
    (!lies_on).then_some(terms[0])
}

/// Whether `paradigm` integrates its forces linearly implicitly: its solve
/// with contacts answers with any planes, none included, at its own
/// tolerance.
fn solves_implicitly(paradigm: &Paradigm) -> bool {
    let implicit = |i: &ForceIntegration| matches!(i, ForceIntegration::LinearlyImplicit { .. });
    match paradigm {
        Paradigm::MassSpring(MassSpring { integration, .. })
        | Paradigm::CorotationalFem(CorotationalFem { integration, .. }) => implicit(integration),
        Paradigm::Xpbd(_) | Paradigm::ShapeMatching(_) => false,
    }
}

/// The speed (m/s) the probe impulses of [`CoupledWorld::patch_response`]
/// give their patch: large against a resting body's one-step velocities, so
/// that the solves' tolerance costs the difference little, and small
/// enough for a position-based solve with contacts to answer near linearly.
const PROBE_SPEED: f64 = 1.0;

/// Rounds of an elastic pass's active set of contact planes: each lets go
/// of the planes that pulled and solves again.
const PLANE_RELEASE_ROUNDS: usize = 4;

/// One iteration: with `direct`, the equality rows solved exactly, then a
/// sweep of the others answered by them; else a PGS sweep of every row.
/// The RMS impulse change of both.
fn sweep(rows: &mut Rows, velocities: &mut Velocities, direct: Option<&mut DirectSolver>) -> f64 {
    match direct {
        Some(direct) => {
            let equality = direct.solve(rows, velocities);
            let others = solver::iterate(rows, velocities, Some(&*direct));
            (equality * equality + others * others).sqrt()
        }
        None => solver::iterate(rows, velocities, None),
    }
}
