//! The tool against the deformables (docs/rendering.md, "Deformables at
//! the servo rate").
//!
//! The servo renders each deformable as a set of surface nodes looked up in
//! the tool's field (role B), an environment entry of
//! [`EnvironmentGeometry::Nodes`](haptic_contact::EnvironmentGeometry):
//! after every step the physics thread chooses the points of the body's
//! surface nearest the tool — its surface samples, nodes and triangle
//! centroids, as its contacts with rigid bodies use — at most
//! [`PATCH_NODES`](crate::scene::PATCH_NODES),
//! within [`PATCH_MARGIN_M`] of the tool's surface (plus twice the tool's
//! travel over the last step), each keeping its slot while it stays
//! chosen, and publishes them ([`NodePatch`]). What reaches a point reaches
//! its nodes by its weights. With local models on it
//! publishes the patch's motion model too, a body that only translates:
//!
//! ```text
//! m = Σ m_i,   K = (h² W)⁻¹,   D = 2 √m K^½,   f₀ = −F_applied,
//! ```
//!
//! with `W` the deformable's one-step response at the patch
//! ([`CoupledWorld::patch_response`]: the patch's mean velocity change per
//! unit impulse spread over it, through the body's implicit solve with its
//! supports held), so that a force held for a step of `h` moves the patch
//! as far in the servo as the next step will move it; `D` damps it
//! critically; and `f₀` the force the tool put on the patch over the last
//! step, which the published nodes already answer: the servo's patch moves
//! by what the tool's force has changed since.
//!
//! The tool's impulse on the patch since the last step, `(J, T)` (the
//! servo's running contact impulse on the entry, torque about the world
//! origin), is handed to the nodes the tool's field holds at the tool's
//! latest pose, weighted by their penetration `w_i` (the penalty force's
//! share, the nodes' stiffness being equal), with the turn that gives the
//! torque about their weighted centre `c`:
//!
//! ```text
//! p_i = w_i (J + ω × r_i),   r_i = x_i − c,   ω = I_w⁺ (T − c × J),
//! I_w = Σ w_i (|r_i|² 1 − r_i r_iᵀ),
//! ```
//!
//! which sums to `J` and to the torque `T − c × J` about `c` exactly (where
//! `I_w` is singular, the torque about its null directions is left out):
//! the deformable receives the impulse and the angular impulse the servo
//! booked. With no node inside the tool any more, the patch's nodes share
//! `J` equally.

use haptic_contact::SharedField;
use haptic_deformable::CoupledWorld;
use haptic_servo::{LocalBodyModel, NodePatch, NO_ENTRY};
use nalgebra::{Isometry3, Matrix3, Matrix6, Point3, SymmetricEigen, Vector3, Vector6};

/// How far from the tool's surface a node is taken into its patch (m),
/// before the tool's travel is added.
pub const PATCH_MARGIN_M: f64 = 0.005;

/// The smallest weight share of [`I_w`](self)'s eigenvalues a torque is
/// handed through; below it the turn about that direction is left out.
const SINGULAR_SHARE: f64 = 1e-9;

/// One deformable's patch.
struct Patch {
    /// Its entry in the rendering cycle's environment.
    entry: usize,
    /// The body's surface sample (`DeformableModel::samples`: its nodes
    /// and the centroids of its triangles) each slot holds.
    slots: Vec<Option<u32>>,
    /// Whether the surface is open (a cloth): its points face the tool from
    /// either side.
    two_sided: bool,
    /// The tool's force on the body over the last step (N).
    applied: Vector3<f64>,
    /// The tool's impulse on the body so far (N·s).
    received: Vector3<f64>,
    /// The published points and normals, and the motion model.
    points: Vec<Point3<f64>>,
    normals: Vec<Vector3<f64>>,
    model: Option<LocalBodyModel>,
}

/// The tool's patches on every deformable (see the module's doc).
pub(crate) struct ToolPatches {
    field: SharedField,
    patches: Vec<Patch>,
    /// The tool at the last step, and how far it moved in that step (m).
    tool_pose: Option<Isometry3<f64>>,
    travel: f64,
    /// The last step's length (s).
    step: f64,
    normals: Vec<Vector3<f64>>,
    candidates: Vec<(f64, u32)>,
    weights: Vec<(u32, f64)>,
    impulses: Vec<(u32, Vector3<f64>)>,
}

impl ToolPatches {
    /// Patches of `capacity` slots on each of `bodies`, rendered as the
    /// cycle's `entries` (one per body) in the tool's `field`.
    pub(crate) fn new(
        field: SharedField,
        entries: &[usize],
        capacity: usize,
        bodies: &[haptic_deformable::DeformableBody],
    ) -> Self {
        let patches = bodies
            .iter()
            .zip(entries)
            .map(|(body, &entry)| Patch {
                entry,
                two_sided: !body.model.surface_is_closed(),
                slots: vec![None; capacity],
                applied: Vector3::zeros(),
                received: Vector3::zeros(),
                points: Vec::with_capacity(capacity),
                normals: Vec::with_capacity(capacity),
                model: None,
            })
            .collect();
        Self {
            field,
            patches,
            tool_pose: None,
            travel: 0.0,
            step: 0.0,
            normals: Vec::new(),
            candidates: Vec::new(),
            weights: Vec::new(),
            impulses: Vec::new(),
        }
    }

    /// The tool's linear impulse on each deformable so far (N·s).
    pub(crate) fn received(&self) -> impl Iterator<Item = Vector3<f64>> + '_ {
        self.patches.iter().map(|p| p.received)
    }

    /// Hands each patch's share of the tool's impulses since the last step
    /// (`now − before`, per cycle entry) to its nodes for the step of `dt`
    /// about to be taken with the tool at `tool_pose`.
    pub(crate) fn push(
        &mut self,
        world: &mut CoupledWorld,
        now: &[Vector6<f64>],
        before: &[Vector6<f64>],
        tool_pose: &Isometry3<f64>,
        dt: f64,
    ) {
        self.travel = self.tool_pose.map_or(0.0, |p| {
            (p.translation.vector - tool_pose.translation.vector).norm()
        });
        self.tool_pose = Some(*tool_pose);
        self.step = dt;
        for (d, patch) in self.patches.iter_mut().enumerate() {
            let (Some(now), Some(before)) = (now.get(patch.entry), before.get(patch.entry)) else {
                continue;
            };
            let impulse = now - before;
            let linear: Vector3<f64> = impulse.fixed_rows::<3>(0).into();
            let torque: Vector3<f64> = impulse.fixed_rows::<3>(3).into();
            patch.applied = if dt > 0.0 {
                linear / dt
            } else {
                Vector3::zeros()
            };
            if linear == Vector3::zeros() && torque == Vector3::zeros() {
                continue;
            }
            let body = &world.bodies()[d];
            let positions = &body.state.positions;
            let samples = &body.model.samples;
            let at = |k: u32| samples[k as usize].position(positions);
            // Each chosen point's share: its depth in the tool, or equal.
            self.weights.clear();
            let local = tool_pose.inverse();
            for &k in patch.slots.iter().flatten() {
                let depth = -self.field.value(&(local * at(k)));
                if depth > 0.0 {
                    self.weights.push((k, depth));
                }
            }
            if self.weights.is_empty() {
                self.weights
                    .extend(patch.slots.iter().flatten().map(|&k| (k, 1.0)));
            }
            if self.weights.is_empty() {
                continue;
            }
            // Every weight is positive.
            let total: f64 = self.weights.iter().map(|(_, w)| w).sum();
            for (_, w) in &mut self.weights {
                *w /= total;
            }
            let centre: Vector3<f64> = self.weights.iter().map(|&(k, w)| w * at(k).coords).sum();
            let mut spread = Matrix3::zeros();
            for &(k, w) in &self.weights {
                let r = at(k).coords - centre;
                spread += w * (Matrix3::identity() * r.norm_squared() - r * r.transpose());
            }
            // `I_w⁺`: its eigenvalues below SINGULAR_SHARE of their sum
            // (its trace) left out.
            let inverse = spread
                .pseudo_inverse(SINGULAR_SHARE * spread.trace())
                .unwrap_or_else(|_| Matrix3::zeros());
            let turn = inverse * (torque - centre.cross(&linear));
            // A point's impulse reaches its nodes by its weights: the same
            // impulse, and the same torque about any point.
            self.impulses.clear();
            for &(k, w) in &self.weights {
                let r = at(k).coords - centre;
                let impulse = w * (linear + turn.cross(&r));
                let sample = &samples[k as usize];
                for (&node, &share) in sample.nodes.iter().zip(&sample.weights) {
                    if share != 0.0 {
                        self.impulses.push((node, impulse * share));
                    }
                }
            }
            for &(n, impulse) in &self.impulses {
                world.add_node_impulse(d, n, impulse);
            }
            patch.received += linear;
        }
    }

    /// After the step: chooses each body's nodes near the tool and, with
    /// `local_models`, the patch's motion model, numbered as body
    /// `rigid_bodies + d` of the world.
    pub(crate) fn select(
        &mut self,
        world: &mut CoupledWorld,
        rigid_bodies: usize,
        local_models: bool,
    ) {
        let Some(tool_pose) = self.tool_pose else {
            return;
        };
        let local = tool_pose.inverse();
        let margin = PATCH_MARGIN_M + 2.0 * self.travel;
        for (d, patch) in self.patches.iter_mut().enumerate() {
            let body = &world.bodies()[d];
            let positions = &body.state.positions;
            self.candidates.clear();
            for (k, sample) in body.model.samples.iter().enumerate() {
                let distance = self.field.value(&(local * sample.position(positions)));
                if distance < margin {
                    self.candidates.push((distance, k as u32));
                }
            }
            let capacity = patch.slots.len();
            if self.candidates.len() > capacity {
                self.candidates
                    .select_nth_unstable_by(capacity - 1, |a, b| a.0.total_cmp(&b.0));
                self.candidates.truncate(capacity);
            }
            // A node chosen again keeps its slot; new ones fill the free.
            for slot in &mut patch.slots {
                if slot.is_some_and(|n| !self.candidates.iter().any(|&(_, c)| c == n)) {
                    *slot = None;
                }
            }
            for &(_, node) in &self.candidates {
                if patch.slots.contains(&Some(node)) {
                    continue;
                }
                if let Some(free) = patch.slots.iter_mut().find(|s| s.is_none()) {
                    *free = Some(node);
                }
            }
            body.vertex_normals(&mut self.normals);
            patch.points.clear();
            patch.normals.clear();
            for slot in &patch.slots {
                match slot {
                    Some(k) => {
                        let sample = &body.model.samples[*k as usize];
                        let mut normal: Vector3<f64> = (0..3)
                            .map(|j| self.normals[sample.nodes[j] as usize] * sample.weights[j])
                            .sum();
                        let point = sample.position(positions);
                        if patch.two_sided
                            && normal.dot(&(tool_pose.translation.vector - point.coords)) < 0.0
                        {
                            normal = -normal;
                        }
                        patch.points.push(point);
                        patch
                            .normals
                            .push(normal.try_normalize(0.0).unwrap_or_default());
                    }
                    None => {
                        patch.points.push(Point3::new(f64::NAN, f64::NAN, f64::NAN));
                        patch.normals.push(Vector3::zeros());
                    }
                }
            }
            patch.model = None;
            if local_models && !self.candidates.is_empty() && self.step > 0.0 {
                let mut nodes: Vec<u32> = patch
                    .slots
                    .iter()
                    .flatten()
                    .flat_map(|&k| {
                        let sample = &world.bodies()[d].model.samples[k as usize];
                        (0..3)
                            .filter(|&j| sample.weights[j] != 0.0)
                            .map(move |j| sample.nodes[j])
                    })
                    .collect();
                nodes.sort_unstable();
                nodes.dedup();
                patch.model = patch_model(world, d, &nodes, self.step, patch, rigid_bodies);
            }
        }
    }

    /// Writes every patch's nodes into `patches` and the motion models into
    /// `models`.
    pub(crate) fn publish(&self, patches: &mut Vec<NodePatch>, models: &mut Vec<LocalBodyModel>) {
        patches.resize_with(self.patches.len(), NodePatch::default);
        for (out, patch) in patches.iter_mut().zip(&self.patches) {
            out.entry = u16::try_from(patch.entry).unwrap_or(NO_ENTRY);
            out.points.clone_from(&patch.points);
            out.normals.clone_from(&patch.normals);
            out.ids.clear();
            out.ids
                .extend(patch.slots.iter().map(|s| s.unwrap_or(u32::MAX)));
        }
        models.extend(self.patches.iter().filter_map(|p| p.model));
    }
}

/// The motion model of deformable `d`'s patch `nodes` after a step of `h`
/// (see the module's doc); `None` when its response is not finite and
/// positive definite.
fn patch_model(
    world: &mut CoupledWorld,
    d: usize,
    nodes: &[u32],
    h: f64,
    patch: &Patch,
    rigid_bodies: usize,
) -> Option<LocalBodyModel> {
    let response = world.patch_response(d, nodes, h)?;
    let stiffness = (response * (h * h)).try_inverse()?;
    let eigen = SymmetricEigen::new((stiffness + stiffness.transpose()) * 0.5);
    if !eigen.eigenvalues.iter().all(|&k| k.is_finite() && k > 0.0) {
        return None;
    }
    let body = &world.bodies()[d];
    let mass: f64 = nodes.iter().map(|&n| body.model.masses[n as usize]).sum();
    let root = eigen.eigenvectors
        * Matrix3::from_diagonal(&eigen.eigenvalues.map(f64::sqrt))
        * eigen.eigenvectors.transpose();
    let mut position_gradient = Matrix6::zeros();
    position_gradient
        .fixed_view_mut::<3, 3>(0, 0)
        .copy_from(&-eigen.recompose());
    let mut velocity_gradient = Matrix6::zeros();
    velocity_gradient
        .fixed_view_mut::<3, 3>(0, 0)
        .copy_from(&(root * (-2.0 * mass.sqrt())));
    let applied = -patch.applied;
    Some(LocalBodyModel {
        body: (rigid_bodies + d) as u32,
        entries: [u16::try_from(patch.entry).ok()?, NO_ENTRY],
        pose: Isometry3::identity(),
        velocity: Vector6::zeros(),
        mass,
        inertia: Matrix3::identity(),
        wrench: Vector6::new(applied.x, applied.y, applied.z, 0.0, 0.0, 0.0),
        position_gradient,
        velocity_gradient,
        free_motion: LocalBodyModel::TRANSLATES,
    })
}
