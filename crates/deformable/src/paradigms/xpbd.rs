//! Extended position-based dynamics (Macklin, Müller & Chentanez, "XPBD",
//! 2016): edge-length and tetrahedron-volume constraints with compliance,
//! so that stiffness depends neither on the step nor on the iteration
//! count. Goals from the predicted positions of eq 1 become velocities by
//! eq 3.

use super::corotational::{check_elasticity, lame};
use super::{ContactPlane, StepInput};
use crate::error::DeformableError;
use crate::topology::tet_volume;
use crate::topology::Edge;
use nalgebra::{Point3, Vector3};

/// An XPBD body's constraints and settings.
#[derive(Clone, Debug)]
pub struct Xpbd {
    pub edges: Vec<Edge>,
    /// Edge compliance (m/N): `1/k` with `k = E L` per edge.
    edge_compliance: Vec<f64>,
    pub tets: Vec<[u32; 4]>,
    rest_volumes: Vec<f64>,
    /// Volume compliance (m³/(N·m)… i.e. `V⁰/K`, `K` the bulk modulus).
    volume_compliance: Vec<f64>,
    pub iterations: usize,
    /// Eq 3's `γ`: 0 takes the goal's velocity, 1 ignores it.
    pub damping: f64,
    predicted: Vec<Point3<f64>>,
    inverse_masses: Vec<f64>,
    edge_lambda: Vec<f64>,
    volume_lambda: Vec<f64>,
    /// The contact solve's positions and velocities within the step.
    current: Vec<Point3<f64>>,
    moving: Vec<Vector3<f64>>,
    on_plane: Vec<bool>,
}

impl Xpbd {
    /// Edges and tetrahedra (either may be empty) of a material of Young's
    /// modulus `young` and Poisson's ratio `poisson` at rest positions `rest`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        body: &str,
        rest: &[Point3<f64>],
        edges: Vec<Edge>,
        tets: Vec<[u32; 4]>,
        young: f64,
        poisson: f64,
        iterations: usize,
        damping: f64,
    ) -> Result<Self, DeformableError> {
        let parameter = |field, value, expected| DeformableError::Parameter {
            body: body.to_string(),
            field,
            value,
            expected,
        };
        check_elasticity(body, young, poisson)?;
        if iterations == 0 {
            return Err(parameter("iterations", 0.0, "at least 1"));
        }
        if !(0.0..1.0).contains(&damping) {
            return Err(parameter("damping", damping, "in [0, 1)"));
        }
        for (e, t) in tets.iter().enumerate() {
            if let Some(&index) = t.iter().find(|&&i| i as usize >= rest.len()) {
                return Err(DeformableError::Index {
                    body: body.to_string(),
                    element: format!("tetrahedron {e}"),
                    index,
                    nodes: rest.len(),
                });
            }
            if !(tet_volume(rest, t) > 0.0) {
                return Err(DeformableError::Degenerate {
                    body: body.to_string(),
                    element: format!("tetrahedron {e} (inverted or flat)"),
                });
            }
        }
        let (lambda, mu) = lame(young, poisson);
        let bulk = lambda + 2.0 * mu / 3.0;
        let rest_volumes: Vec<f64> = tets.iter().map(|t| tet_volume(rest, t)).collect();
        Ok(Self {
            edge_compliance: edges
                .iter()
                .map(|e| 1.0 / (young * e.rest_length))
                .collect(),
            volume_compliance: rest_volumes.iter().map(|v| 1.0 / (bulk * v)).collect(),
            edge_lambda: vec![0.0; edges.len()],
            volume_lambda: vec![0.0; tets.len()],
            rest_volumes,
            edges,
            tets,
            iterations,
            damping,
            predicted: Vec::new(),
            inverse_masses: Vec::new(),
            current: Vec::new(),
            moving: Vec::new(),
            on_plane: Vec::new(),
        })
    }

    /// Eq 1's prediction, projected onto the constraints by `iterations`
    /// Gauss–Seidel sweeps with XPBD's multipliers, turned into velocities
    /// by eq 3: `v = γ (v + h g) + (1 − γ)(p − x)/h`.
    pub(crate) fn free_velocities(&mut self, input: &StepInput, free: &mut [Vector3<f64>]) {
        let h = input.h;
        self.predicted.clear();
        self.predicted.extend(
            input
                .positions
                .iter()
                .zip(input.velocities)
                .map(|(x, v)| x + h * (v + h * input.gravity)),
        );
        self.edge_lambda.iter_mut().for_each(|l| *l = 0.0);
        self.volume_lambda.iter_mut().for_each(|l| *l = 0.0);
        // Pinned nodes go where their velocity takes them and no further.
        for (p, (pin, x)) in self
            .predicted
            .iter_mut()
            .zip(input.pinned.iter().zip(input.positions))
        {
            if let Some(target) = pin {
                *p = x + h * target;
            }
        }
        // Inverse masses once a step, not once a constraint and sweep.
        self.set_inverse_masses(input);
        let mut p = std::mem::take(&mut self.predicted);
        for _ in 0..self.iterations {
            self.sweep(&mut p, h);
        }
        self.predicted = p;
        let p = &self.predicted;
        let gamma = self.damping;
        for i in 0..free.len() {
            let goal_velocity = (p[i] - input.positions[i]) / h;
            free[i] =
                gamma * (input.velocities[i] + h * input.gravity) + (1.0 - gamma) * goal_velocity;
        }
        input.hold_pinned(free);
    }

    /// The inverse masses of `input`'s nodes, pinned ones 0.
    fn set_inverse_masses(&mut self, input: &StepInput) {
        self.inverse_masses.clear();
        self.inverse_masses
            .extend(input.masses.iter().enumerate().map(|(i, m)| {
                if input.pinned.get(i).is_some_and(Option::is_some) {
                    0.0
                } else {
                    1.0 / m
                }
            }));
    }

    /// One Gauss–Seidel sweep of XPBD's projection over the edges and then
    /// the tetrahedra, for a step of `h`, moving `p` and the multipliers.
    fn sweep(&mut self, p: &mut [Point3<f64>], h: f64) {
        let inverse_masses = &self.inverse_masses;
        let w = |i: u32| inverse_masses[i as usize];
        let per_step = 1.0 / (h * h);
        for ((edge, compliance), lambda) in self
            .edges
            .iter()
            .zip(&self.edge_compliance)
            .zip(&mut self.edge_lambda)
        {
            let (a, b) = (edge.a as usize, edge.b as usize);
            let d = p[b] - p[a];
            let length = d.norm();
            if length <= 0.0 {
                continue;
            }
            let n = d * (1.0 / length);
            let alpha = compliance * per_step;
            let c = length - edge.rest_length;
            let (wa, wb) = (w(edge.a), w(edge.b));
            let delta = (-c - alpha * *lambda) / (wa + wb + alpha);
            *lambda += delta;
            p[a] -= wa * delta * n;
            p[b] += wb * delta * n;
        }
        for (((t, compliance), lambda), rest) in self
            .tets
            .iter()
            .zip(&self.volume_compliance)
            .zip(&mut self.volume_lambda)
            .zip(&self.rest_volumes)
        {
            let x = t.map(|i| p[i as usize]);
            let (e1, e2, e3) = (x[1] - x[0], x[2] - x[0], x[3] - x[0]);
            // ∂V/∂x_j; the first is minus the others' sum.
            const SIXTH: f64 = 1.0 / 6.0;
            let g1 = e2.cross(&e3) * SIXTH;
            let g2 = e3.cross(&e1) * SIXTH;
            let g3 = e1.cross(&e2) * SIXTH;
            let gradients = [-(g1 + g2 + g3), g1, g2, g3];
            let ws = t.map(w);
            let weight: f64 = (0..4).map(|j| ws[j] * gradients[j].norm_squared()).sum();
            let alpha = compliance * per_step;
            if weight + alpha <= 0.0 {
                continue;
            }
            // V = e1 · (e2 × e3) / 6 (topology::tet_volume).
            let c = e1.dot(&g1) - rest;
            let delta = (-c - alpha * *lambda) / (weight + alpha);
            *lambda += delta;
            for j in 0..4 {
                p[t[j] as usize] += ws[j] * delta * gradients[j];
            }
        }
    }

    /// The step again with the node impulses `impulses` and the nodes of
    /// `planes` kept from crossing their contact planes, in `iterations`
    /// substeps of one sweep each (Macklin et al.'s "small steps", 2019):
    /// each substep adds gravity and its share of the impulses, predicts,
    /// sweeps the constraints, and then moves every node that would cross
    /// its plane (its travel along the normal below the plane's normal
    /// velocity times the substep) back onto it; the move times the node's
    /// mass over the substep is the plane's support. The contacts thus
    /// carry the body's inside within the step, as the implicit paradigms'
    /// planes do, which a single step's few sweeps cannot. Writes the
    /// velocities at `t + h` (the last substep's, eq 3's `γ` blending in
    /// `v + h g` with the impulses and supports) and each plane's support.
    /// The constraints move no momentum, so the body's changes by exactly
    /// gravity, the impulses and the supports (pins aside).
    pub(crate) fn solve_with_contacts(
        &mut self,
        input: &StepInput,
        impulses: &[Vector3<f64>],
        planes: &[ContactPlane],
        velocities: &mut [Vector3<f64>],
        supports: &mut [f64],
    ) -> bool {
        let n = input.positions.len();
        let substeps = self.iterations.max(1);
        let hs = input.h / substeps as f64;
        self.set_inverse_masses(input);
        self.current.clear();
        self.current.extend_from_slice(input.positions);
        self.moving.clear();
        self.moving.extend_from_slice(input.velocities);
        supports.iter_mut().for_each(|f| *f = 0.0);
        let mut p = std::mem::take(&mut self.predicted);
        p.clear();
        p.resize(n, Point3::origin());
        for _ in 0..substeps {
            for i in 0..n {
                match input.pinned.get(i).copied().flatten() {
                    Some(target) => self.moving[i] = target,
                    None => {
                        self.moving[i] +=
                            hs * input.gravity + impulses[i] / (input.masses[i] * substeps as f64)
                    }
                }
                p[i] = self.current[i] + hs * self.moving[i];
            }
            self.edge_lambda.iter_mut().for_each(|l| *l = 0.0);
            self.volume_lambda.iter_mut().for_each(|l| *l = 0.0);
            self.sweep(&mut p, hs);
            super::hold_on_planes(input, planes, hs, &self.current, &mut p, supports);
            for i in 0..n {
                self.moving[i] = (p[i] - self.current[i]) / hs;
                self.current[i] = p[i];
            }
        }
        self.predicted = p;
        let gamma = self.damping;
        for i in 0..n {
            let travel = (self.current[i] - input.positions[i]) / input.h;
            velocities[i] = (1.0 - gamma) * travel
                + gamma
                    * (input.velocities[i]
                        + input.h * input.gravity
                        + impulses[i] / input.masses[i]);
        }
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

    /// `½ C²/α` summed over the constraints.
    pub(crate) fn potential_energy(&self, positions: &[Point3<f64>]) -> f64 {
        let edges: f64 = self
            .edges
            .iter()
            .zip(&self.edge_compliance)
            .map(|(e, alpha)| {
                let c = (positions[e.b as usize] - positions[e.a as usize]).norm() - e.rest_length;
                0.5 * c * c / alpha
            })
            .sum();
        let volumes: f64 = self
            .tets
            .iter()
            .zip(self.rest_volumes.iter().zip(&self.volume_compliance))
            .map(|(t, (v0, alpha))| {
                let c = tet_volume(positions, t) - v0;
                0.5 * c * c / alpha
            })
            .sum();
        edges + volumes
    }

    pub(crate) fn check(&self, body: &str, nodes: usize) -> Result<(), DeformableError> {
        for (e, edge) in self.edges.iter().enumerate() {
            if let Some(&index) = [edge.a, edge.b].iter().find(|&&i| i as usize >= nodes) {
                return Err(DeformableError::Index {
                    body: body.to_string(),
                    element: format!("edge {e}"),
                    index,
                    nodes,
                });
            }
        }
        for (e, t) in self.tets.iter().enumerate() {
            if let Some(&index) = t.iter().find(|&&i| i as usize >= nodes) {
                return Err(DeformableError::Index {
                    body: body.to_string(),
                    element: format!("tetrahedron {e}"),
                    index,
                    nodes,
                });
            }
        }
        Ok(())
    }
}
