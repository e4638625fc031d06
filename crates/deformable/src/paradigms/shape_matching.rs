//! Linear shape matching (Müller, Heidelberger, Teschner & Gross,
//! "Meshless deformations based on shape matching", 2005): the goal of
//! every node is its rest position moved by the best-fitting blend of a
//! rotation and a linear map of the whole body; eq 2 pulls the nodes
//! towards it.

use super::{rotation::extract_rotation, ContactPlane, StepInput};
use crate::error::DeformableError;
use nalgebra::{Matrix3, Point3, UnitQuaternion, Vector3};

/// A shape-matched body's rest shape and settings.
#[derive(Clone, Debug)]
pub struct ShapeMatching {
    /// Rest positions about the rest centre of mass, `qᵢ`.
    rest_offsets: Vec<Vector3<f64>>,
    /// `A_qq⁻¹ = (Σ mᵢ qᵢ qᵢᵀ)⁻¹`.
    inverse_rest_spread: Matrix3<f64>,
    /// Eq 2's `k` in (0, 1]: the fraction of the way to the goal taken per step.
    pub stiffness: f64,
    /// The linear part's weight `β` in `β A + (1 − β) R` (0: rigid goals).
    pub linear_blend: f64,
    /// Eq 2's `γ` in [0, 1).
    pub damping: f64,
    /// Substeps of the step solved with contact planes
    /// ([`Self::solve_with_contacts`]).
    pub contact_substeps: usize,
    rotation: UnitQuaternion<f64>,
    /// The contact solve's positions, velocities and predictions.
    current: Vec<Point3<f64>>,
    moving: Vec<Vector3<f64>>,
    predicted: Vec<Point3<f64>>,
    on_plane: Vec<bool>,
}

/// [`ShapeMatching::contact_substeps`] unless set: enough for a 10 cm,
/// 427-node jelly to stand on a dish in a 20 ms step
/// (crates/deformable/tests/fig2.rs).
pub const DEFAULT_CONTACT_SUBSTEPS: usize = 10;

impl ShapeMatching {
    pub fn new(
        body: &str,
        rest: &[Point3<f64>],
        masses: &[f64],
        stiffness: f64,
        linear_blend: f64,
        damping: f64,
    ) -> Result<Self, DeformableError> {
        let parameter = |field, value, expected| DeformableError::Parameter {
            body: body.to_string(),
            field,
            value,
            expected,
        };
        if !(stiffness > 0.0 && stiffness <= 1.0) {
            return Err(parameter("stiffness", stiffness, "in (0, 1]"));
        }
        if !(0.0..=1.0).contains(&linear_blend) {
            return Err(parameter("linear_blend", linear_blend, "in [0, 1]"));
        }
        if !(0.0..1.0).contains(&damping) {
            return Err(parameter("damping", damping, "in [0, 1)"));
        }
        let total: f64 = masses.iter().sum();
        let centre: Vector3<f64> = masses
            .iter()
            .zip(rest)
            .map(|(m, p)| *m * p.coords)
            .sum::<Vector3<f64>>()
            / total;
        let rest_offsets: Vec<Vector3<f64>> = rest.iter().map(|p| p.coords - centre).collect();
        let spread: Matrix3<f64> = masses
            .iter()
            .zip(&rest_offsets)
            .map(|(m, q)| *m * q * q.transpose())
            .sum();
        let inverse_rest_spread =
            spread
                .try_inverse()
                .ok_or_else(|| DeformableError::Degenerate {
                    body: body.to_string(),
                    element:
                        "rest shape (its nodes are coplanar: linear shape matching needs a volume)"
                            .to_string(),
                })?;
        Ok(Self {
            rest_offsets,
            inverse_rest_spread,
            stiffness,
            linear_blend,
            damping,
            contact_substeps: DEFAULT_CONTACT_SUBSTEPS,
            rotation: UnitQuaternion::identity(),
            current: Vec::new(),
            moving: Vec::new(),
            predicted: Vec::new(),
            on_plane: Vec::new(),
        })
    }

    /// Eq 2 on the predicted positions `p = x + h (v + h g)`:
    /// `vᵢ' = v + h g + k (gᵢ − pᵢ)/h`, `gᵢ = (β A + (1 − β) R) qᵢ + c`, with
    /// `A` scaled to unit determinant so that the linear part keeps the
    /// volume. Eq 2's `(1 − γ)` damps only the velocities' spread about
    /// their mass-weighted mean, so that damping neither slows a fall nor
    /// changes the body's momentum (the goals already keep it:
    /// `Σ mᵢ (gᵢ − pᵢ) = 0`).
    pub(crate) fn free_velocities(&mut self, input: &StepInput, free: &mut [Vector3<f64>]) {
        let h = input.h;
        let total: f64 = input.masses.iter().sum();
        let predict =
            |i: usize| input.positions[i].coords + h * (input.velocities[i] + h * input.gravity);
        let centre: Vector3<f64> = (0..free.len())
            .map(|i| input.masses[i] * predict(i))
            .sum::<Vector3<f64>>()
            / total;
        let mut apq = Matrix3::zeros();
        for i in 0..free.len() {
            apq += input.masses[i] * (predict(i) - centre) * self.rest_offsets[i].transpose();
        }
        let transform = self.goal_transform(&apq);
        for i in 0..free.len() {
            let p = predict(i);
            let goal = transform * self.rest_offsets[i] + centre;
            free[i] = input.velocities[i] + h * input.gravity + self.stiffness * (goal - p) / h;
        }
        let mean: Vector3<f64> = (0..free.len())
            .map(|i| input.masses[i] * free[i])
            .sum::<Vector3<f64>>()
            / total;
        for v in free.iter_mut() {
            *v = mean + (1.0 - self.damping) * (*v - mean);
        }
        input.hold_pinned(free);
    }

    /// The goals' map `β A + (1 − β) R` of the moment matrix
    /// `A_pq = Σ mᵢ (pᵢ − c) qᵢᵀ`, `A = A_pq A_qq⁻¹` scaled to unit
    /// determinant (`R` where it is not positive), `R` its rotation
    /// (warm-started from the last).
    fn goal_transform(&mut self, apq: &Matrix3<f64>) -> Matrix3<f64> {
        self.rotation = extract_rotation(apq, self.rotation, 20);
        let rotation = *self.rotation.to_rotation_matrix().matrix();
        let mut linear = apq * self.inverse_rest_spread;
        let det = linear.determinant();
        linear = if det > 0.0 {
            linear / det.cbrt()
        } else {
            rotation
        };
        self.linear_blend * linear + (1.0 - self.linear_blend) * rotation
    }

    /// The step again with the node impulses `impulses` and the nodes of
    /// `planes` kept from crossing their contact planes, in
    /// [`Self::contact_substeps`] substeps: each adds gravity and its share
    /// of the impulses, predicts, moves every node that would cross its
    /// plane back onto it, pulls the nodes towards their goals (eq 2) by
    /// `k_s = 1 − (1 − k)^{1/n}`, so that `n` substeps take the step's
    /// fraction `k` of the way, puts the nodes back on their planes, and
    /// damps the velocities' spread by `1 − (1 − γ)^{1/n}`. A plane's
    /// support is its moves times the node's mass over the substep: the
    /// goals then carry it to the whole body within the step, which one
    /// step's goals, computed before the contacts act, cannot. Writes the
    /// last substep's velocities and each plane's support; goals and
    /// damping move no momentum, so the body's changes by exactly gravity,
    /// the impulses and the supports (pins aside).
    pub(crate) fn solve_with_contacts(
        &mut self,
        input: &StepInput,
        impulses: &[Vector3<f64>],
        planes: &[ContactPlane],
        velocities: &mut [Vector3<f64>],
        supports: &mut [f64],
    ) -> bool {
        let n = input.positions.len();
        let substeps = self.contact_substeps.max(1);
        let hs = input.h / substeps as f64;
        let share = 1.0 / substeps as f64;
        let stiffness = 1.0 - (1.0 - self.stiffness).powf(share);
        let keep = (1.0 - self.damping).powf(share);
        let total: f64 = input.masses.iter().sum();
        let pinned = |i: usize| input.pinned.get(i).copied().flatten();
        self.current.clear();
        self.current.extend_from_slice(input.positions);
        self.moving.clear();
        self.moving.extend_from_slice(input.velocities);
        self.predicted.clear();
        self.predicted.resize(n, Point3::origin());
        supports.iter_mut().for_each(|f| *f = 0.0);
        let (mut current, mut moving, mut p) = (
            std::mem::take(&mut self.current),
            std::mem::take(&mut self.moving),
            std::mem::take(&mut self.predicted),
        );
        for _ in 0..substeps {
            for i in 0..n {
                match pinned(i) {
                    Some(target) => moving[i] = target,
                    None => moving[i] += hs * input.gravity + share * impulses[i] / input.masses[i],
                }
                p[i] = current[i] + hs * moving[i];
            }
            super::hold_on_planes(input, planes, hs, &current, &mut p, supports);
            let centre: Vector3<f64> = (0..n)
                .map(|i| input.masses[i] * p[i].coords)
                .sum::<Vector3<f64>>()
                / total;
            let mut apq = Matrix3::zeros();
            for i in 0..n {
                apq += input.masses[i] * (p[i].coords - centre) * self.rest_offsets[i].transpose();
            }
            let transform = self.goal_transform(&apq);
            for i in 0..n {
                if pinned(i).is_none() {
                    let goal = transform * self.rest_offsets[i] + centre;
                    let pull = stiffness * (goal - p[i].coords);
                    p[i] += pull;
                }
            }
            super::hold_on_planes(input, planes, hs, &current, &mut p, supports);
            for i in 0..n {
                moving[i] = (p[i] - current[i]) / hs;
                current[i] = p[i];
            }
            let mean: Vector3<f64> = (0..n)
                .map(|i| input.masses[i] * moving[i])
                .sum::<Vector3<f64>>()
                / total;
            for v in moving.iter_mut() {
                *v = mean + keep * (*v - mean);
            }
        }
        for i in 0..n {
            velocities[i] = (current[i] - input.positions[i]) / input.h;
        }
        (self.current, self.moving, self.predicted) = (current, moving, p);
        input.hold_pinned(velocities);
        super::balance_supports(
            input,
            impulses,
            planes,
            velocities,
            supports,
            &mut self.on_plane,
        );
        true
    }

    /// The velocity change impulses `p` on the nodes bring about by the
    /// next goals: the fraction `k` of them that the goals follow moves the
    /// body rigidly (`P/M + ω × rᵢ`, `ω = I⁻¹ Σ rᵢ × pᵢ`), the rest moves
    /// each node alone (`pᵢ/mᵢ`). Both carry the impulses' momentum.
    pub(crate) fn respond(
        &self,
        input: &StepInput,
        impulses: &[Vector3<f64>],
        response: &mut [Vector3<f64>],
    ) -> bool {
        let total: f64 = input.masses.iter().sum();
        let centre: Vector3<f64> = input
            .masses
            .iter()
            .zip(input.positions)
            .map(|(m, x)| *m * x.coords)
            .sum::<Vector3<f64>>()
            / total;
        let mut linear = Vector3::zeros();
        let mut angular = Vector3::zeros();
        let mut inertia = Matrix3::zeros();
        for i in 0..impulses.len() {
            let r = input.positions[i].coords - centre;
            linear += impulses[i];
            angular += r.cross(&impulses[i]);
            inertia +=
                input.masses[i] * (r.norm_squared() * Matrix3::identity() - r * r.transpose());
        }
        let spin = inertia
            .try_inverse()
            .map_or(Vector3::zeros(), |inverse| inverse * angular);
        let k = self.stiffness;
        for i in 0..impulses.len() {
            let r = input.positions[i].coords - centre;
            let rigid = linear / total + spin.cross(&r);
            response[i] = k * rigid + (1.0 - k) * impulses[i] / input.masses[i];
        }
        true
    }

    pub(crate) fn check(&self, body: &str, nodes: usize) -> Result<(), DeformableError> {
        if self.contact_substeps == 0 {
            return Err(DeformableError::Parameter {
                body: body.to_string(),
                field: "contact_substeps",
                value: 0.0,
                expected: "at least 1",
            });
        }
        if self.rest_offsets.len() != nodes {
            return Err(DeformableError::Parameter {
                body: body.to_string(),
                field: "shape matching nodes",
                value: self.rest_offsets.len() as f64,
                expected: "one per node",
            });
        }
        Ok(())
    }
}
