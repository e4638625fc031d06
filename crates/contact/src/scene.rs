//! The tool, the static environment and one cycle's contacts: each
//! (environment object, role) pair is queried through its nested point tree
//! (or, for a set of nodes the physics moves, point by point), with every
//! buffer sized when the scene is built.

use crate::penalty::{ForceDirection, PenaltyContact, Role};
use crate::stiffness_scaling::StiffnessScaling;
use haptic_pointshell::{
    Contact, LookupDeadline, NestedPointTree, PointShell, PointTreeTraversal, TraversalBudget,
};
use haptic_sdf::DistanceField;
use nalgebra::{Isometry3, Point3, Vector3};
use std::sync::Arc;
use std::time::Instant;

/// A distance field shared with the threads that loaded or display it.
pub type SharedField = Arc<dyn DistanceField + Send + Sync>;

/// A point shell with the nested point tree built on it.
#[derive(Clone, Debug)]
pub struct ShellTree {
    shell: PointShell,
    tree: NestedPointTree,
}

impl ShellTree {
    /// Pairs `shell` with `tree`, which must have been built on it.
    pub fn new(shell: PointShell, tree: NestedPointTree) -> Result<Self, SceneError> {
        if tree.shell_len() != shell.len() || shell.outward_normals.len() != shell.len() {
            return Err(SceneError::ShellTreeMismatch {
                points: shell.len(),
                normals: shell.outward_normals.len(),
                tree: tree.shell_len(),
            });
        }
        Ok(Self { shell, tree })
    }

    /// Builds a `levels`-level tree on `shell`.
    ///
    /// # Panics
    /// If `levels` is 0 (see [`NestedPointTree::new`]).
    pub fn build(shell: PointShell, levels: usize) -> Self {
        let tree = NestedPointTree::new(&shell, levels);
        Self { shell, tree }
    }

    pub fn shell(&self) -> &PointShell {
        &self.shell
    }

    pub fn tree(&self) -> &NestedPointTree {
        &self.tree
    }
}

/// The tool's contact geometry, in its own frame (origin = the
/// reference point of torques and of the coupling).
#[derive(Clone, Default)]
pub struct ToolGeometry {
    /// Needed for role A (environment objects with a field).
    pub shell: Option<Arc<ShellTree>>,
    /// Needed for role B (environment objects with a point shell).
    pub field: Option<SharedField>,
}

/// What an environment object contributes, which fixes its role.
#[derive(Clone)]
pub enum EnvironmentGeometry {
    /// A field queried by the tool's point shell (role A).
    Field(SharedField),
    /// A point shell queried in the tool's field (role B).
    Shell(Arc<ShellTree>),
    /// Up to `capacity` points with outward normals set while running
    /// ([`ContactScene::set_nodes`]), each queried in the tool's field
    /// (role B) with no tree: a deformable's surface nodes near the tool,
    /// refreshed by every physics step. A slot keeps its point from one
    /// refresh to the next while the node stays near, so that a contact's
    /// friction anchor stays with its node.
    Nodes { capacity: usize },
}

/// A static environment object. For both roles against one object, list it
/// twice, once with each geometry (Xu, Zhao & Barbič do so; the contact stiffness
/// then counts both).
#[derive(Clone)]
pub struct EnvironmentObject {
    /// Object frame → world.
    pub pose: Isometry3<f64>,
    pub geometry: EnvironmentGeometry,
    /// Coulomb `μ ≥ 0` between it and the tool.
    pub friction_coefficient: f64,
}

/// Penalty parameters (Zhao, Li & Barbič eq 1; Xu, Zhao & Barbič eq 77).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PenaltyParameters {
    /// `k_n` per finest-level shell point (N/m).
    pub stiffness: f64,
    pub scaling: StiffnessScaling,
    /// The force's direction in role A.
    pub direction: ForceDirection,
}

impl PenaltyParameters {
    /// `k_n` positive and finite, `N0` positive (or infinite).
    pub fn check(&self) -> Result<(), SceneError> {
        if !(self.stiffness > 0.0 && self.stiffness.is_finite()) {
            return Err(SceneError::InvalidStiffness(self.stiffness));
        }
        let n0 = self.scaling.reference_contacts;
        if n0.is_nan() || n0 <= 0.0 {
            return Err(SceneError::InvalidScaling(n0));
        }
        Ok(())
    }
}

/// `μ` of environment object `index` finite and ≥ 0.
pub fn check_friction_coefficient(index: usize, mu: f64) -> Result<(), SceneError> {
    if mu >= 0.0 && mu.is_finite() {
        Ok(())
    } else {
        Err(SceneError::InvalidFriction { index, value: mu })
    }
}

/// Why a scene cannot be built.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SceneError {
    #[error("environment object {index} has a distance field, but the tool has no point shell to test against it")]
    MissingMovingShell { index: usize },
    #[error("environment object {index} has a point shell, but the tool has no distance field to test it in")]
    MissingMovingField { index: usize },
    #[error("a point shell of {points} points and {normals} normals with a tree built for {tree} points")]
    ShellTreeMismatch {
        points: usize,
        normals: usize,
        tree: usize,
    },
    #[error("contact stiffness {0} N/m is not positive and finite")]
    InvalidStiffness(f64),
    #[error("stiffness scaling N0 = {0} is not positive")]
    InvalidScaling(f64),
    #[error("environment object {index} has friction coefficient {value}, not finite and ≥ 0")]
    InvalidFriction { index: usize, value: f64 },
}

/// What one [`ContactScene::evaluate`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CycleStats {
    /// Field lookups in the tree traversals (the gradient lookups of the
    /// contacts come on top).
    pub lookups: u32,
    /// Whether any traversal stopped at a coarser level.
    pub stopped_early: bool,
    /// Finest-level points whose contact state the stopped traversals did
    /// not resolve ([`TraversalStats::unresolved_points`](haptic_pointshell::TraversalStats)).
    pub unresolved_points: u32,
    /// `n` of eq 77: finest-level points the contacts stand for.
    pub represented_points: u32,
    /// `min(1, N0 / n)`.
    pub stiffness_factor: f64,
}

/// One (environment object, role) query with its traversal buffers.
struct Pair {
    environment: u32,
    role: Role,
    points: PairPoints,
    field: SharedField,
}

/// What a pair's points are and how they are queried.
enum PairPoints {
    /// A shell and its nested point tree, traversed.
    Tree {
        shell: Arc<ShellTree>,
        traversal: PointTreeTraversal,
    },
    /// Slots of points and outward normals in the object's frame, each
    /// looked up; an empty slot holds a non-finite point. `ids` names what
    /// each slot holds, and `depths` is scratch for [`ContactScene::set_nodes`].
    Nodes {
        points: Vec<Point3<f64>>,
        normals: Vec<Vector3<f64>>,
        ids: Vec<u32>,
        depths: Vec<f64>,
    },
}

impl PairPoints {
    fn len(&self) -> usize {
        match self {
            PairPoints::Tree { shell, .. } => shell.shell().len(),
            PairPoints::Nodes { points, .. } => points.len(),
        }
    }
}

/// An empty node slot.
const NO_NODE: Point3<f64> = Point3::new(f64::INFINITY, f64::INFINITY, f64::INFINITY);

/// The tool against the static environment: evaluates one cycle's
/// penalty contacts without allocating.
pub struct ContactScene {
    environment: Vec<EnvironmentObject>,
    parameters: PenaltyParameters,
    pairs: Vec<Pair>,
    found: Vec<Contact>,
    contacts: Vec<PenaltyContact>,
    pose: Isometry3<f64>,
    cost: CollisionCost,
}

/// What the collision stage costs on this machine and scene, learnt from
/// its own evaluations: nanoseconds per tree lookup, the contacts' gradient
/// lookups and penalty terms folded in (their share of the lookups changes
/// little from one cycle to the next). A running mean that follows a dearer
/// evaluation quickly and a cheaper one slowly, so that a cold cache is met
/// with an earlier stop, and that takes no single evaluation above four
/// times the mean at its word: a stall of the whole machine in the middle
/// of one says nothing about the next.
#[derive(Clone, Copy, Debug)]
struct CollisionCost {
    ns_per_lookup: f64,
}

impl CollisionCost {
    /// Before any evaluation: a cold random lookup in a large dense field
    /// and its contact.
    const INITIAL_NS_PER_LOOKUP: f64 = 300.0;
    const RISE: f64 = 1.0 / 4.0;
    const DECAY: f64 = 1.0 / 64.0;
    /// The most one evaluation may count for, in running means.
    const OUTLIER: f64 = 4.0;

    fn learn(&mut self, elapsed_ns: f64, lookups: u32) {
        if lookups == 0 || !elapsed_ns.is_finite() {
            return;
        }
        let measured = (elapsed_ns / f64::from(lookups)).min(Self::OUTLIER * self.ns_per_lookup);
        let rate = if measured > self.ns_per_lookup {
            Self::RISE
        } else {
            Self::DECAY
        };
        self.ns_per_lookup += (measured - self.ns_per_lookup) * rate;
    }
}

impl ContactScene {
    /// Checks that every environment object has its counterpart on `moving`
    /// and sizes every buffer for the worst case (all points in contact).
    pub fn new(
        moving: ToolGeometry,
        environment: Vec<EnvironmentObject>,
        parameters: PenaltyParameters,
    ) -> Result<Self, SceneError> {
        parameters.check()?;
        let mut pairs = Vec::with_capacity(environment.len());
        for (index, object) in environment.iter().enumerate() {
            check_friction_coefficient(index, object.friction_coefficient)?;
            let tool_field = || {
                moving
                    .field
                    .clone()
                    .ok_or(SceneError::MissingMovingField { index })
            };
            let tree = |shell: &Arc<ShellTree>| PairPoints::Tree {
                traversal: PointTreeTraversal::new(shell.tree()),
                shell: shell.clone(),
            };
            let (role, points, field) = match &object.geometry {
                EnvironmentGeometry::Field(field) => {
                    let shell = moving
                        .shell
                        .as_ref()
                        .ok_or(SceneError::MissingMovingShell { index })?;
                    (Role::MovingShell, tree(shell), field.clone())
                }
                EnvironmentGeometry::Shell(shell) => {
                    (Role::MovingField, tree(shell), tool_field()?)
                }
                EnvironmentGeometry::Nodes { capacity } => (
                    Role::MovingField,
                    PairPoints::Nodes {
                        points: vec![NO_NODE; *capacity],
                        normals: vec![Vector3::zeros(); *capacity],
                        ids: vec![u32::MAX; *capacity],
                        depths: vec![0.0; *capacity],
                    },
                    tool_field()?,
                ),
            };
            pairs.push(Pair {
                environment: index as u32,
                role,
                points,
                field,
            });
        }
        let widest = pairs.iter().map(|p| p.points.len()).max();
        let mut scene = Self {
            environment,
            parameters,
            pairs,
            found: Vec::with_capacity(widest.unwrap_or(0)),
            contacts: Vec::new(),
            pose: Isometry3::identity(),
            cost: CollisionCost {
                ns_per_lookup: CollisionCost::INITIAL_NS_PER_LOOKUP,
            },
        };
        scene.contacts.reserve_exact(scene.max_contacts());
        Ok(scene)
    }

    /// Finds the contacts of the tool at `pose` (object frame →
    /// world) with every environment object and sets their stiffness (eq 1,
    /// eq 77). `budget` applies to each traversal. Never allocates.
    pub fn evaluate(&mut self, pose: &Isometry3<f64>, budget: TraversalBudget) -> CycleStats {
        self.evaluate_with(pose, budget)
    }

    /// As [`evaluate`](Self::evaluate), finishing by `deadline` at the
    /// cost the scene has learnt from its own evaluations: each traversal
    /// stops at the coarsest level whose lookups would not end in time
    /// ([`TraversalBudget::deadline`]; its cheap first levels always run).
    /// Replaces any deadline in `budget`.
    pub fn evaluate_before(
        &mut self,
        pose: &Isometry3<f64>,
        mut budget: TraversalBudget,
        deadline: Instant,
    ) -> CycleStats {
        let start = Instant::now();
        budget.deadline = Some(LookupDeadline {
            at: deadline,
            per_lookup_ns: self.cost.ns_per_lookup,
        });
        let stats = self.evaluate_with(pose, budget);
        let elapsed = start.elapsed().as_nanos() as f64;
        self.cost.learn(elapsed, stats.lookups);
        stats
    }

    fn evaluate_with(&mut self, pose: &Isometry3<f64>, budget: TraversalBudget) -> CycleStats {
        self.pose = *pose;
        self.contacts.clear();
        let mut stats = CycleStats::default();
        for pair in &mut self.pairs {
            let environment = &self.environment[pair.environment as usize];
            let env_pose = &environment.pose;
            let field_from_shell = match pair.role {
                Role::MovingShell => env_pose.inv_mul(pose),
                Role::MovingField => pose.inv_mul(env_pose),
            };
            let field = pair.field.as_ref();
            let (points, normals) = match &mut pair.points {
                PairPoints::Tree { shell, traversal } => {
                    let traversal = traversal.traverse(
                        shell.tree(),
                        shell.shell(),
                        field,
                        &field_from_shell,
                        budget,
                        &mut self.found,
                    );
                    stats.lookups += traversal.lookups;
                    stats.stopped_early |= traversal.stopped_early;
                    stats.unresolved_points += traversal.unresolved_points;
                    let shell = shell.shell();
                    (&shell.points[..], &shell.outward_normals[..])
                }
                PairPoints::Nodes {
                    points, normals, ..
                } => {
                    // A few points, each looked up: no tree, no budget.
                    self.found.clear();
                    for (k, p) in points.iter().enumerate() {
                        if !p.x.is_finite() {
                            continue;
                        }
                        stats.lookups += 1;
                        let distance = field.value(&(field_from_shell * p));
                        if distance < 0.0 {
                            self.found.push(Contact {
                                point: k as u32,
                                distance,
                                weight: 1,
                            });
                        }
                    }
                    (&points[..], &normals[..])
                }
            };
            let direction = self.parameters.direction;
            let field_rotation = env_pose.rotation.to_rotation_matrix();
            self.contacts.extend(self.found.iter().map(|c| {
                let (p, n) = (&points[c.point as usize], &normals[c.point as usize]);
                match pair.role {
                    Role::MovingShell => PenaltyContact::moving_shell(
                        pair.environment,
                        c.point,
                        c.weight,
                        p,
                        n,
                        pose,
                        field,
                        &field_rotation,
                        &field_from_shell,
                        direction,
                    ),
                    Role::MovingField => PenaltyContact::moving_field(
                        pair.environment,
                        c.point,
                        c.weight,
                        p,
                        n,
                        env_pose,
                        field,
                        pose,
                        &field_from_shell,
                    ),
                }
            }));
        }
        stats.represented_points = self.contacts.iter().map(|c| c.weight).sum();
        stats.stiffness_factor = self
            .parameters
            .scaling
            .factor(f64::from(stats.represented_points));
        let k = self.parameters.stiffness * stats.stiffness_factor;
        for contact in &mut self.contacts {
            contact.stiffness = k * f64::from(contact.weight);
        }
        stats
    }

    /// The contacts of the last [`evaluate`](Self::evaluate).
    pub fn contacts(&self) -> &[PenaltyContact] {
        &self.contacts
    }

    /// The pose of the last [`evaluate`](Self::evaluate).
    pub fn pose(&self) -> &Isometry3<f64> {
        &self.pose
    }

    pub fn environment(&self) -> &[EnvironmentObject] {
        &self.environment
    }

    /// Moves environment object `index` to `pose` (object frame → world)
    /// from the next [`evaluate`](Self::evaluate) on.
    ///
    /// # Panics
    /// If `index` is out of range.
    pub fn set_environment_pose(&mut self, index: usize, pose: Isometry3<f64>) {
        self.environment[index].pose = pose;
    }

    pub fn parameters(&self) -> &PenaltyParameters {
        &self.parameters
    }

    /// Replaces `k_n` and `N0` from the next [`evaluate`](Self::evaluate)
    /// on; `parameters` must pass [`PenaltyParameters::check`].
    pub fn set_parameters(&mut self, parameters: PenaltyParameters) {
        self.parameters = parameters;
    }

    /// Sets environment object `index`'s `μ`, which must pass
    /// [`check_friction_coefficient`].
    ///
    /// # Panics
    /// If `index` is out of range.
    pub fn set_friction_coefficient(&mut self, index: usize, mu: f64) {
        self.environment[index].friction_coefficient = mu;
    }

    /// The most contacts one cycle can report: every shell point of every pair.
    pub fn max_contacts(&self) -> usize {
        self.pairs.iter().map(|p| p.points.len()).sum()
    }

    /// Sets the points of environment object `index`, an
    /// [`EnvironmentGeometry::Nodes`] object, from the next
    /// [`evaluate`](Self::evaluate) on: slot `k` takes `points[k]` (object
    /// frame; a non-finite point empties it), `normals[k]` (unit, outward)
    /// and `ids[k]`, what it stands for. Slots beyond the slices are
    /// emptied, and points beyond the capacity ignored. Never allocates.
    ///
    /// Returns how far the points moved where the tool touched them: the
    /// mean move of the slots holding the same id before and after,
    /// weighted by their penetration in the last evaluation (equally when
    /// none was in contact); zero when no slot kept its point. `None`,
    /// changing nothing, when `index` is not a node set.
    pub fn set_nodes(
        &mut self,
        index: usize,
        points: &[Point3<f64>],
        normals: &[Vector3<f64>],
        ids: &[u32],
    ) -> Option<Vector3<f64>> {
        let pair = self
            .pairs
            .iter_mut()
            .find(|p| p.environment as usize == index)?;
        let PairPoints::Nodes {
            points: slots,
            normals: slot_normals,
            ids: slot_ids,
            depths,
        } = &mut pair.points
        else {
            return None;
        };
        depths.fill(0.0);
        let mut touched = false;
        for c in self
            .contacts
            .iter()
            .filter(|c| c.environment as usize == index)
        {
            if let Some(depth) = depths.get_mut(c.point as usize) {
                *depth -= c.distance.min(0.0);
                touched |= *depth > 0.0;
            }
        }
        let (mut moved, mut kept) = (Vector3::zeros(), 0.0);
        for k in 0..slots.len() {
            match (points.get(k), normals.get(k), ids.get(k)) {
                (Some(p), Some(n), Some(&id)) if p.coords.iter().all(|v| v.is_finite()) => {
                    if slots[k].x.is_finite() && slot_ids[k] == id {
                        let weight = if touched { depths[k] } else { 1.0 };
                        moved += (p - slots[k]) * weight;
                        kept += weight;
                    }
                    slots[k] = *p;
                    slot_normals[k] = *n;
                    slot_ids[k] = id;
                }
                _ => {
                    slots[k] = NO_NODE;
                    slot_ids[k] = u32::MAX;
                }
            }
        }
        Some(if kept > 0.0 { moved / kept } else { moved })
    }
}
