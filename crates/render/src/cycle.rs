//! One servo cycle's rendering stage (Zhao, Li & Barbič, static friction LP,
//! §3–§4.2), top to bottom in [`RenderingCycle::step`].

use crate::anchors::ContactAnchors;
use crate::contact_friction::ContactFriction;
use crate::yamane::YamaneSprings;
use crate::{MassProperties, StaticCoupling};
use haptic_contact::{
    check_friction_coefficient, ContactScene, EnvironmentObject, ForceDirection, GradientModel,
    PenaltyContact, PenaltyParameters, Role, SceneError, StiffnessScaling, ToolGeometry,
    VirtualCoupling,
};
use haptic_core::{displaced, Vector6};
use haptic_friction::{
    reference_lp_solver, reference_pre_sliding_solver, FastPreSlidingSolver,
    FastStaticFrictionSolver, FrictionSolution, FrictionState, PreSlidingParameters,
    ReferenceNotBuilt, StaticFrictionProblem, StaticFrictionSolver,
};
use haptic_pointshell::TraversalBudget;
/// What the friction stage decided in one cycle, and how surely, in the
/// protocol's vocabulary.
pub use haptic_schema::FrictionVerdict;
use nalgebra::{Isometry3, Matrix3, Point3, Vector3};
use std::time::{Duration, Instant};

/// How friction enters the cycle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FrictionModel {
    /// Static Coulomb friction with bounded pre-sliding (the default; see
    /// [`haptic_friction::FastPreSlidingSolver`] and docs/rendering.md):
    /// each contact keeps a stick anchor, and the object is static while
    /// the equilibrium nearest the anchors slips them by at most
    /// `displacement` (load-weighted RMS). Otherwise it slides to that
    /// equilibrium, with friction at its Coulomb limit, and re-anchors.
    PreSliding {
        /// `ε`, the pre-sliding displacement (m).
        displacement: f64,
    },
    /// Zhao et al.'s rule as stated: static iff the LP of eqs 32–37 is
    /// feasible, otherwise the frictionless equilibrium (§4).
    StaticLp,
    /// Yamane & Nakamura's anchored friction springs (Zhao et al.'s ref \[6\],
    /// compared in §5.6), integrated implicitly in eqs 7–8; see
    /// the `yamane` module.
    YamaneSprings {
        /// Spring stiffness `k_f` per contact (N/m).
        stiffness: f64,
    },
}

pub use haptic_schema::rendering::SolverChoice;

/// Rendering parameters. The defaults suit objects of a few centimetres
/// rendered at 1 kHz; `μ` is per environment object
/// ([`EnvironmentObject::friction_coefficient`]).
#[derive(Clone, Copy, Debug)]
pub struct RenderParameters {
    /// `k_n` per shell point and the contact-count scaling `N0` (eq 1,
    /// Xu et al. eq 77). Default 200 N/m, `N0 = 40` (at most 8 kN/m in total).
    pub penalty: PenaltyParameters,
    /// `k_vc`, `k_vc,tor` (eqs 5–6). Default 1000 N/m, 1 N·m/rad.
    pub coupling: VirtualCoupling,
    /// `M̄` of eq 27. Default a 0.1 kg, 5 cm solid cube.
    pub mass: MassProperties,
    /// Contact gradient in `H`. Default [`GradientModel::Exact`].
    pub gradient: GradientModel,
    /// `ℓ`, sides of the friction pyramid (eq 13). Default 8 (§5.1).
    pub pyramid_sides: usize,
    /// Static damping `α ∈ [0, 1)` (§4.2). Default 0.6, the paper's value.
    pub static_damping: f64,
    /// Drop separating contacts from friction (§4.1). Default on. With
    /// [`FrictionModel::StaticLp`] the rule is §4.1's as printed; with
    /// [`FrictionModel::PreSliding`] a contact separates only if the
    /// frictionless step would carry it out of contact.
    pub anti_stickiness: bool,
    /// Default [`FrictionModel::PreSliding`] with 5 µm.
    pub friction: FrictionModel,
    /// Default [`SolverChoice::Fast`].
    pub solver: SolverChoice,
    /// Per-traversal budget of the collision stage. Default unlimited.
    pub budget: TraversalBudget,
    /// The cycle's compute budget. Default none: every cycle exact,
    /// however long it takes.
    pub time_budget: Option<CycleBudget>,
}

/// A cycle's compute budget, counted from the start of its collision stage
/// (docs/rendering.md, "The time budget").
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CycleBudget {
    pub total: Duration,
    /// The part of `total` the collision stage may use, in (0, 1]: its
    /// traversals stop at the coarsest level that would not end in time
    /// ([`ContactScene::evaluate_before`]). The friction solve must end by
    /// `total` ([`StaticFrictionProblem::deadline`]).
    pub collision_share: f64,
}

/// The most consecutive cycles that hold a static contact through a cut
/// they could not decide: a host stall passes in far fewer, while a scene
/// that overruns its budget every cycle decides in the band after them
/// rather than stick beyond `μ`.
pub const MAX_HELD_CYCLES: u32 = 8;

/// What a cycle's budget cut.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BudgetCut {
    /// Shell points whose contact state the collision stage left
    /// unresolved, stood for by coarser tree nodes.
    pub unresolved_points: u32,
    /// The friction solver stopped at its deadline and answered from an
    /// equilibrium short of its optimum.
    pub friction_out_of_time: bool,
}

impl BudgetCut {
    pub fn collision(&self) -> bool {
        self.unresolved_points > 0
    }

    pub fn any(&self) -> bool {
        self.collision() || self.friction_out_of_time
    }
}

impl Default for RenderParameters {
    /// `[rendering]`'s and `[materials]`'s defaults ([`haptic_schema::rendering`]).
    fn default() -> Self {
        use haptic_schema::rendering as defaults;
        let (mass, side) = (0.1, 0.05);
        Self {
            penalty: PenaltyParameters {
                stiffness: defaults::DEFAULT_CONTACT_STIFFNESS_N_PER_M,
                scaling: StiffnessScaling {
                    reference_contacts: defaults::DEFAULT_STIFFNESS_SCALING_CONTACTS,
                },
                direction: ForceDirection::default(),
            },
            coupling: VirtualCoupling {
                translational_stiffness: defaults::DEFAULT_COUPLING_STIFFNESS_N_PER_M,
                rotational_stiffness: defaults::DEFAULT_COUPLING_TORSIONAL_STIFFNESS_N_M_PER_RAD,
            },
            mass: MassProperties {
                mass,
                body_inertia: Matrix3::identity() * (mass * side * side / 6.0),
            },
            gradient: GradientModel::Exact,
            pyramid_sides: defaults::DEFAULT_PYRAMID_SIDES,
            static_damping: defaults::DEFAULT_STATIC_DAMPING,
            anti_stickiness: true,
            friction: FrictionModel::PreSliding {
                displacement: PreSlidingParameters::default().displacement,
            },
            solver: SolverChoice::Fast,
            budget: TraversalBudget::default(),
            time_budget: None,
        }
    }
}

/// Why a [`RenderingCycle`] or a [`RenderingUpdate`] could not be built,
/// or an update not applied.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RenderError {
    #[error(transparent)]
    Scene(#[from] SceneError),
    #[error(transparent)]
    ReferenceNotBuilt(#[from] ReferenceNotBuilt),
    #[error("an update for {update:?} cannot retune a cycle of {cycle:?}")]
    LayoutMismatch {
        update: CycleLayout,
        cycle: CycleLayout,
    },
    #[error("{given} friction coefficients for {objects} environment objects")]
    FrictionCoefficients { given: usize, objects: usize },
}

/// The sizes a cycle fixes when it is built, which a [`RenderingUpdate`]
/// must be built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CycleLayout {
    /// [`ContactScene::max_contacts`].
    pub max_contacts: usize,
    pub environment_objects: usize,
}

/// The friction solver with the problem and solution buffers it is sized
/// for: what changes with the friction model, the solver or `ℓ`.
struct FrictionStage {
    problem: StaticFrictionProblem,
    solution: FrictionSolution,
    solver: Box<dyn StaticFrictionSolver + Send>,
}

impl FrictionStage {
    /// Sized for `capacity` contacts.
    fn new(parameters: &RenderParameters, capacity: usize) -> Result<Self, RenderError> {
        let sides = parameters.pyramid_sides;
        let solver: Box<dyn StaticFrictionSolver + Send> =
            match (parameters.friction, parameters.solver) {
                (FrictionModel::PreSliding { displacement }, choice) => {
                    let params = PreSlidingParameters {
                        displacement,
                        ..PreSlidingParameters::default()
                    };
                    match choice {
                        SolverChoice::Fast => {
                            Box::new(FastPreSlidingSolver::new(capacity, sides, params))
                        }
                        SolverChoice::Reference => reference_pre_sliding_solver(params)?,
                    }
                }
                (_, SolverChoice::Fast) => Box::new(FastStaticFrictionSolver::new(capacity, sides)),
                (_, SolverChoice::Reference) => reference_lp_solver()?,
            };
        Ok(Self {
            problem: StaticFrictionProblem::with_capacity(capacity, sides),
            solution: FrictionSolution::with_capacity(capacity),
            solver,
        })
    }
}

/// New rendering parameters for a running [`RenderingCycle`], built off the
/// servo thread so that [`RenderingCycle::apply`] only moves and copies.
/// It holds a friction stage freshly built for the parameters, which `apply`
/// swaps in when the friction model (with its own parameters), the solver
/// or `ℓ` changes, and otherwise leaves behind.
pub struct RenderingUpdate {
    layout: CycleLayout,
    parameters: RenderParameters,
    /// `μ` per environment object.
    friction_coefficients: Vec<f64>,
    friction: FrictionStage,
}

impl RenderingUpdate {
    /// `parameters`, and `friction_coefficients` (`μ`, one per environment
    /// object), for a cycle of `layout`. Checks what
    /// [`RenderingCycle::new`] checks.
    pub fn new(
        layout: CycleLayout,
        parameters: RenderParameters,
        friction_coefficients: Vec<f64>,
    ) -> Result<Self, RenderError> {
        parameters.penalty.check()?;
        if friction_coefficients.len() != layout.environment_objects {
            return Err(RenderError::FrictionCoefficients {
                given: friction_coefficients.len(),
                objects: layout.environment_objects,
            });
        }
        for (index, &mu) in friction_coefficients.iter().enumerate() {
            check_friction_coefficient(index, mu)?;
        }
        Ok(Self {
            friction: FrictionStage::new(&parameters, layout.max_contacts)?,
            layout,
            parameters,
            friction_coefficients,
        })
    }

    pub fn parameters(&self) -> &RenderParameters {
        &self.parameters
    }
}

/// Wall-clock time of each stage of one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageTimings {
    /// Point-tree traversals and penalty contacts.
    pub collision: Duration,
    /// `f`, `H`, `M̄`, the friction contacts and §4.1 (or the springs).
    pub assembly: Duration,
    /// The LP (or the springs' 6×6 solve).
    pub friction: Duration,
    /// Static damping, the pose update and the device wrench.
    pub coupling: Duration,
}

impl StageTimings {
    pub fn total(&self) -> Duration {
        self.collision + self.assembly + self.friction + self.coupling
    }
}

/// The verdict of a solution: its state, and whether the solver decided
/// it within its band.
fn verdict_of(solution: &FrictionSolution) -> FrictionVerdict {
    match (solution.state, solution.decided_in_band) {
        (FrictionState::Free, _) => FrictionVerdict::Free,
        (FrictionState::Static, false) => FrictionVerdict::Static,
        (FrictionState::Static, true) => FrictionVerdict::StaticInBand,
        (FrictionState::Sliding, false) => FrictionVerdict::Sliding,
        (FrictionState::Sliding, true) => FrictionVerdict::SlidingInBand,
    }
}

/// What one cycle did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CycleReport {
    /// The friction stage's decision with its certainty;
    /// [`state`](FrictionVerdict::state) says free, sliding or static.
    pub verdict: FrictionVerdict,
    /// The tool's pose came out non-finite and was reset to the
    /// manipulandum; this cycle renders zero.
    pub quarantined: bool,
    /// Penalty contacts this cycle.
    pub contacts: usize,
    /// Contacts §4.1 removed from the LP.
    pub separating_dropped: usize,
    pub solver_iterations: u32,
    /// The pre-sliding model's load-weighted RMS slip of the contacts from
    /// their stick anchors after this cycle's equilibrium (before static
    /// damping; m). Zero for the other models.
    pub slip: f64,
    /// `Δq₀ = −H⁻¹f` (eqs 7–8 without friction; zero when `H` is singular).
    pub frictionless_displacement: Vector6,
    /// The displacement applied, after static damping (m, rad).
    pub displacement: Vector6,
    /// The wrench to render: the coupling on the manipulandum,
    /// `−(F_vc, τ_vc)` at the updated pose (N, N·m).
    pub coupling_wrench: Vector6,
    /// The tool after the update.
    pub tool_pose: Isometry3<f64>,
    pub timings: StageTimings,
    pub budget_cut: BudgetCut,
}

/// The rendering stage: a contact scene, the static coupling and a friction
/// model, with every buffer sized at construction.
pub struct RenderingCycle {
    parameters: RenderParameters,
    scene: ContactScene,
    statics: StaticCoupling,
    friction: FrictionStage,
    /// For each contact of `friction.problem`, its index in the scene's.
    sources: Vec<usize>,
    /// Per scene contact, what friction did there in the last step.
    contact_friction: Vec<ContactFriction>,
    springs: YamaneSprings,
    /// The pre-sliding model's stick anchors.
    anchors: ContactAnchors,
    pose: Isometry3<f64>,
    /// The last cycle's friction state.
    last_state: FrictionState,
    /// Consecutive cycles that held a static contact through a cut.
    held_cycles: u32,
    /// Per environment object, its motion (new pose ∘ old pose⁻¹) since
    /// the last step, which static damping leaves undamped.
    moved: Vec<Isometry3<f64>>,
    /// Per environment object, the last step's contacts on it.
    contacts_on: Vec<u32>,
}

impl RenderingCycle {
    /// Builds the contact scene from `parameters.penalty` and places the
    /// tool at `pose`.
    pub fn new(
        moving: ToolGeometry,
        environment: Vec<EnvironmentObject>,
        parameters: RenderParameters,
        pose: Isometry3<f64>,
    ) -> Result<Self, RenderError> {
        let shell_points = moving.shell.as_ref().map_or(0, |s| s.shell().len());
        let springs = YamaneSprings::new(&environment, shell_points);
        let anchors = ContactAnchors::new(&environment, shell_points);
        let objects = environment.len();
        let scene = ContactScene::new(moving, environment, parameters.penalty)?;
        let capacity = scene.max_contacts();
        Ok(Self {
            friction: FrictionStage::new(&parameters, capacity)?,
            sources: Vec::with_capacity(capacity),
            contact_friction: Vec::with_capacity(capacity),
            statics: static_coupling(&parameters),
            parameters,
            scene,
            springs,
            anchors,
            pose,
            last_state: FrictionState::Free,
            held_cycles: 0,
            moved: vec![Isometry3::identity(); objects],
            contacts_on: vec![0; objects],
        })
    }

    pub fn parameters(&self) -> &RenderParameters {
        &self.parameters
    }

    /// The sizes a [`RenderingUpdate`] for this cycle is built for.
    pub fn layout(&self) -> CycleLayout {
        CycleLayout {
            max_contacts: self.scene.max_contacts(),
            environment_objects: self.scene.environment().len(),
        }
    }

    /// Retunes the cycle from the next [`step`](Self::step) on: the
    /// update's parameters and `μ` replace the cycle's, and when the
    /// friction model (or its `ε` or `k_f`), the solver or `ℓ` changes, the
    /// update's friction stage is swapped in and every stick anchor and
    /// Yamane spring is released, so contacts stick afresh where they are
    /// next, as in a cycle just built. Otherwise anchors, springs and the
    /// solver's warm start carry on: a contact whose new cone no longer
    /// holds it slides in the next step. The cycle's old friction stage
    /// goes into `update`, to be dropped off the servo thread. Never
    /// allocates or frees.
    pub fn apply(&mut self, update: &mut RenderingUpdate) -> Result<(), RenderError> {
        if update.layout != self.layout() {
            return Err(RenderError::LayoutMismatch {
                update: update.layout,
                cycle: self.layout(),
            });
        }
        let (old, new) = (&self.parameters, &update.parameters);
        if old.friction != new.friction
            || old.solver != new.solver
            || old.pyramid_sides != new.pyramid_sides
        {
            std::mem::swap(&mut self.friction, &mut update.friction);
            self.anchors.release_all();
            self.springs.release_all();
        }
        self.parameters = update.parameters;
        self.statics = static_coupling(&self.parameters);
        self.scene.set_parameters(self.parameters.penalty);
        for (index, &mu) in update.friction_coefficients.iter().enumerate() {
            self.scene.set_friction_coefficient(index, mu);
        }
        Ok(())
    }

    /// Replaces the cycle's compute budget from the next
    /// [`step`](Self::step) on; `None` renders every cycle exactly.
    pub fn set_time_budget(&mut self, budget: Option<CycleBudget>) {
        self.parameters.time_budget = budget;
    }

    /// Per contact of [`scene`](Self::scene), in its order, the friction
    /// of the last step.
    pub fn contact_friction(&self) -> &[ContactFriction] {
        &self.contact_friction
    }

    /// The tool's pose.
    pub fn tool_pose(&self) -> &Isometry3<f64> {
        &self.pose
    }

    /// The scene, holding the contacts of the last cycle.
    pub fn scene(&self) -> &ContactScene {
        &self.scene
    }

    /// Moves environment object `index` to `pose` (object frame → world)
    /// from the next [`step`](Self::step) on. Stick anchors already placed
    /// on it move with it.
    ///
    /// # Panics
    /// If `index` is out of range.
    pub fn set_environment_pose(&mut self, index: usize, pose: Isometry3<f64>) {
        self.scene.set_environment_pose(index, pose);
    }

    /// Moves environment object `index` to `pose` as
    /// [`set_environment_pose`](Self::set_environment_pose) does, as a
    /// motion that carries the tool where it touched the object: the next
    /// [`step`](Self::step) starts with the tool moved along (the bodies
    /// the servo moves every tick; a pose that jumps, as a physics step's
    /// does, is set, not moved).
    ///
    /// # Panics
    /// If `index` is out of range.
    pub fn move_environment_pose(&mut self, index: usize, pose: Isometry3<f64>) {
        let before = self.scene.environment()[index].pose;
        self.moved[index] = pose * before.inverse() * self.moved[index];
        self.scene.set_environment_pose(index, pose);
    }

    /// Sets the points of environment object `index`, a node set
    /// ([`EnvironmentGeometry::Nodes`](haptic_contact::EnvironmentGeometry)),
    /// from the next [`step`](Self::step) on (see
    /// [`ContactScene::set_nodes`]): the mean move of the nodes kept, or
    /// `None` when it is not a node set.
    pub fn set_environment_nodes(
        &mut self,
        index: usize,
        points: &[Point3<f64>],
        normals: &[Vector3<f64>],
        ids: &[u32],
    ) -> Option<Vector3<f64>> {
        self.scene.set_nodes(index, points, normals, ids)
    }

    /// The displacement (in [`displaced`]'s terms) that carries the tool
    /// with what it touched in the last step: each environment object's
    /// motion since then applied to the tool's pose, weighted by the
    /// contacts on it; zero without contacts or motion.
    fn carried_displacement(&self) -> Vector6 {
        let total: u32 = self.contacts_on.iter().sum();
        let mut carried = Vector6::zeros();
        if total == 0 {
            return carried;
        }
        let x = self.pose.translation.vector;
        for (motion, &n) in self.moved.iter().zip(&self.contacts_on) {
            if n == 0 || *motion == Isometry3::identity() {
                continue;
            }
            let moved = motion.transform_point(&x.into()).coords - x;
            let turned = motion.rotation.scaled_axis();
            let weight = f64::from(n) / f64::from(total);
            for k in 0..3 {
                carried[k] += weight * moved[k];
                carried[k + 3] += weight * turned[k];
            }
        }
        carried
    }

    /// One servo cycle for the device at `manipulandum`. Never allocates
    /// with the fast solver.
    pub fn step(&mut self, manipulandum: &Isometry3<f64>) -> CycleReport {
        let p = self.parameters;

        // What the tool touched carries it as it moved since the last step,
        // so that the contacts keep their penetration: a body given way
        // under the tool is met where it went, not felt as a contact
        // released by its own travel (the paper's environment stands still,
        // where this does nothing).
        let carried = self.carried_displacement();
        if carried != Vector6::zeros() {
            self.pose = displaced(&self.pose, &carried);
        }
        self.moved.fill(Isometry3::identity());

        // Collision: penalty contacts at the current tool pose (eq 1).
        let start = Instant::now();
        let collision = match p.time_budget {
            Some(budget) => self.scene.evaluate_before(
                &self.pose,
                p.budget,
                start + budget.total.mul_f64(budget.collision_share),
            ),
            None => self.scene.evaluate(&self.pose, p.budget),
        };
        let contacts = self.scene.contacts().len();
        self.contacts_on.fill(0);
        for contact in self.scene.contacts() {
            self.contacts_on[contact.environment as usize] += 1;
        }
        // Coarse contacts stand for a cut's unresolved points: they read the
        // stick anchors and place none.
        let coarse = collision.unresolved_points > 0;
        let collided = Instant::now();

        // Assembly: f, H, M̄ and the friction contacts (eqs 2–9, 27).
        self.statics
            .assemble(&self.scene, manipulandum, &mut self.friction.problem);
        self.sources.clear();
        self.sources.extend(0..contacts);
        self.contact_friction.clear();
        let coupling_force = self.statics.coupling.wrench(manipulandum, &self.pose);
        let coupling_force = coupling_force.fixed_rows::<3>(0).into_owned();
        let mut separating_dropped = 0;
        let frictionless;
        match p.friction {
            FrictionModel::PreSliding { .. } => {
                if !coarse {
                    self.anchors.next_cycle();
                }
                for (contact, friction) in self
                    .scene
                    .contacts()
                    .iter()
                    .zip(&mut self.friction.problem.contacts)
                {
                    let object = &self.scene.environment()[contact.environment as usize].pose;
                    let anchor = if coarse {
                        self.anchors.peek(contact, &self.pose, object)
                    } else {
                        self.anchors.anchor(contact, &self.pose, object)
                    };
                    let moved = self.pose.translation.vector + self.pose.rotation * anchor.body;
                    // The pyramid about the surface's normal, its size μ
                    // times the penalty force's push against the surface.
                    let n = surface_normal(contact);
                    friction.normal_force *= n.dot(&contact.normal).max(0.0);
                    friction.normal = n;
                    let offset = moved - anchor.world;
                    friction.slip = offset - n * n.dot(&offset);
                }
                frictionless = self.friction.problem.frictionless_displacement();
                if let (true, Some(dq)) = (p.anti_stickiness, frictionless) {
                    let mut penetration = self.scene.contacts().iter().map(|c| -c.distance);
                    separating_dropped = drop_separating(
                        &mut self.friction.problem,
                        &mut self.sources,
                        &dq,
                        &coupling_force,
                        || penetration.next().unwrap_or(0.0),
                    );
                }
            }
            FrictionModel::StaticLp => {
                frictionless = self.friction.problem.frictionless_displacement();
                if let (true, Some(dq)) = (p.anti_stickiness, frictionless) {
                    separating_dropped = drop_separating(
                        &mut self.friction.problem,
                        &mut self.sources,
                        &dq,
                        &coupling_force,
                        || 0.0,
                    );
                }
            }
            FrictionModel::YamaneSprings { stiffness } => {
                self.springs.add_to(
                    &self.scene,
                    stiffness,
                    &mut self.friction.problem,
                    &mut self.contact_friction,
                    coarse,
                );
                frictionless = self.friction.problem.frictionless_displacement();
            }
        }
        let frictionless = frictionless.unwrap_or_else(Vector6::zeros);
        self.friction.problem.deadline = p.time_budget.map(|budget| start + budget.total);
        let assembled = Instant::now();

        // Friction. The LP (§4): static iff eqs 32–37 are feasible, otherwise
        // the frictionless equilibrium Δq₀. Pre-sliding: the equilibrium
        // nearest the anchors either way; sliding re-anchors. The springs
        // are already in f and H.
        let solved = match p.friction {
            FrictionModel::YamaneSprings { .. } => Ok(()),
            _ => self
                .friction
                .solver
                .solve(&self.friction.problem, &mut self.friction.solution),
        };
        let solved_ok = solved.is_ok();
        let (mut verdict, mut dq, iterations) = match (p.friction, solved) {
            (FrictionModel::YamaneSprings { .. }, _) => {
                let verdict = if contacts == 0 {
                    FrictionVerdict::Free
                } else if self.springs.sliding() > 0 {
                    FrictionVerdict::Sliding
                } else {
                    FrictionVerdict::Static
                };
                (verdict, frictionless, 0)
            }
            (_, Err(_)) if contacts == 0 => (FrictionVerdict::Free, frictionless, 0),
            (_, Err(_)) => (FrictionVerdict::SolverFailed, frictionless, 0),
            (FrictionModel::StaticLp, Ok(()))
                if self.friction.solution.state != FrictionState::Static =>
            {
                (
                    verdict_of(&self.friction.solution),
                    frictionless,
                    self.friction.solution.iterations,
                )
            }
            (_, Ok(())) => (
                verdict_of(&self.friction.solution),
                self.friction.solution.displacement,
                self.friction.solution.iterations,
            ),
        };
        // A cycle cut short of its decision does not break a static
        // contact: the tool holds its pose and anchors, and the next
        // cycle's warm solve decides (docs/rendering.md, "The time budget").
        // Cut short are a solve out of time, and a solve of the coarse
        // contacts of a cut collision, whose slide, even certified, is
        // that of another contact set.
        let uncertain = solved_ok
            && match verdict {
                FrictionVerdict::SlidingInBand => self.friction.solution.out_of_time || coarse,
                FrictionVerdict::Sliding => coarse,
                _ => false,
            };
        if uncertain
            && self.last_state == FrictionState::Static
            && self.held_cycles < MAX_HELD_CYCLES
        {
            verdict = FrictionVerdict::StaticInBand;
            dq = Vector6::zeros();
            self.held_cycles += 1;
        } else {
            self.held_cycles = 0;
        }
        self.last_state = verdict.state();
        // Sliding re-anchors every contact; so does a cycle in which
        // friction holds the object in place: its contacts stick where they
        // are, and slip accumulates only over an uninterrupted run of cycles
        // that needed it.
        if matches!(p.friction, FrictionModel::PreSliding { .. })
            && (verdict.state() != FrictionState::Static
                || (solved_ok && self.friction.solution.held_in_place))
        {
            self.anchors.release_all();
        }
        if !matches!(p.friction, FrictionModel::YamaneSprings { .. }) {
            self.record_contact_friction(verdict, solved_ok);
        }
        let solved = Instant::now();

        // Static damping (§4.2) in cycles with contacts, then the update
        // and the wrench for the device.
        if contacts > 0 {
            dq *= 1.0 - p.static_damping;
        }
        self.pose = displaced(&self.pose, &dq);
        let quarantined = !is_finite(&self.pose);
        if quarantined {
            self.pose = *manipulandum;
            self.anchors.release_all();
        }
        let coupling_wrench = -self.statics.coupling.wrench(manipulandum, &self.pose);
        let finished = Instant::now();

        CycleReport {
            verdict,
            quarantined,
            contacts,
            separating_dropped,
            solver_iterations: iterations,
            slip: match p.friction {
                FrictionModel::PreSliding { .. } if solved_ok => self.friction.solution.slip,
                _ => 0.0,
            },
            frictionless_displacement: frictionless,
            displacement: dq,
            coupling_wrench,
            tool_pose: self.pose,
            budget_cut: BudgetCut {
                unresolved_points: collision.unresolved_points,
                friction_out_of_time: solved_ok
                    && !matches!(p.friction, FrictionModel::YamaneSprings { .. })
                    && self.friction.solution.out_of_time,
            },
            timings: StageTimings {
                collision: collided - start,
                assembly: assembled - collided,
                friction: solved - assembled,
                coupling: finished - solved,
            },
        }
    }
}

impl RenderingCycle {
    /// Fills [`contact_friction`](Self::contact_friction) from the friction
    /// solution: `β_u T_u + β_v T_v` per contact in the problem (eq 30),
    /// zero for the rest and where the LP slides.
    fn record_contact_friction(&mut self, verdict: FrictionVerdict, solved: bool) {
        let free = ContactFriction {
            force: Vector3::zeros(),
            stuck: false,
        };
        self.contact_friction
            .resize(self.scene.contacts().len(), free);
        let stuck = verdict.state() == FrictionState::Static;
        let pyramid = stuck || matches!(self.parameters.friction, FrictionModel::PreSliding { .. });
        if !(solved && pyramid) {
            return;
        }
        let FrictionStage {
            problem, solution, ..
        } = &self.friction;
        for ((contact, &source), beta) in problem
            .contacts
            .iter()
            .zip(&self.sources)
            .zip(&solution.beta)
        {
            let (u, v) = contact.tangents();
            self.contact_friction[source] = ContactFriction {
                force: u * beta[0] + v * beta[1],
                stuck,
            };
        }
    }
}

/// The normal of the surface a contact slides on, about which the
/// pre-sliding model takes its friction pyramid and slip, sized by the
/// penalty force's component along it. Role B: the environment shell's
/// normal `N`. Role A: the environment field's gradient `∂d/∂x` (the
/// penalty force's own direction by default), where Zhao et al. rotate the
/// moving shell's own normal (`N = −R n`, which the penalty force keeps with
/// `ForceDirection::ShellNormal`): along a tool's edge the shell's points
/// carry their side faces' normals, and a cone about such a normal lets the
/// tool walk along a floor it leans on. `N` where the gradient vanishes (a
/// field's medial axis).
fn surface_normal(contact: &PenaltyContact) -> Vector3<f64> {
    match contact.role {
        Role::MovingShell => contact
            .distance_gradient
            .try_normalize(0.5)
            .unwrap_or(contact.normal),
        Role::MovingField => contact.normal,
    }
}

/// The coupling, mass and gradient of `parameters`.
fn static_coupling(parameters: &RenderParameters) -> StaticCoupling {
    StaticCoupling {
        coupling: parameters.coupling,
        mass: parameters.mass,
        gradient: parameters.gradient,
    }
}

fn is_finite(pose: &Isometry3<f64>) -> bool {
    pose.translation.vector.iter().all(|v| v.is_finite())
        && pose.rotation.coords.iter().all(|v| v.is_finite())
}

/// A contact separates when its predicted frictionless displacement
/// `δ = Δx + Δθ × r` moves along the coupling force `F_vc` and out along its
/// outward normal `N` by more than `margin` of it. Such contacts leave the
/// friction problem, and their entries leave `sources` (each problem
/// contact's index in the scene's contacts) with them; their normal forces
/// stay in `f` and `H`. Returns how many were dropped.
///
/// - §4.1 as printed (the LP): `margin = 0`, any outward motion;
/// - the pre-sliding model: `margin` its penetration `−d`, so that only a
///   contact the step carries out of contact separates. A step that merely
///   tilts or shifts the tool within its contacts (a peg in a tight hole)
///   leaves friction everywhere.
fn drop_separating(
    problem: &mut StaticFrictionProblem,
    sources: &mut Vec<usize>,
    frictionless: &Vector6,
    coupling_force: &Vector3<f64>,
    mut margin: impl FnMut() -> f64,
) -> usize {
    let dx = frictionless.fixed_rows::<3>(0).into_owned();
    let dtheta = frictionless.fixed_rows::<3>(3).into_owned();
    let before = problem.contacts.len();
    let mut kept = 0;
    for i in 0..before {
        let c = problem.contacts[i];
        let margin = margin();
        let moved = dx + dtheta.cross(&c.handle);
        if !(moved.dot(&c.normal) > margin && moved.dot(coupling_force) > 0.0) {
            problem.contacts[kept] = c;
            sources[kept] = sources[i];
            kept += 1;
        }
    }
    problem.contacts.truncate(kept);
    sources.truncate(kept);
    before - kept
}
