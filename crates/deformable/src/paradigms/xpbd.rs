//! Extended position-based dynamics (Macklin, Müller & Chentanez, "XPBD",
//! 2016): edge-length and tetrahedron-volume constraints with compliance,
//! so that stiffness depends neither on the step nor on the iteration
//! count. Goals from the predicted positions of eq 1 become velocities by
//! eq 3.

use super::corotational::{check_elasticity, lame};
use super::StepInput;
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
        self.inverse_masses.clear();
        self.inverse_masses
            .extend(input.masses.iter().enumerate().map(|(i, m)| {
                if input.pinned.get(i).is_some_and(Option::is_some) {
                    0.0
                } else {
                    1.0 / m
                }
            }));
        let inverse_masses = &self.inverse_masses;
        let w = |i: u32| inverse_masses[i as usize];
        let p = &mut self.predicted;
        for _ in 0..self.iterations {
            for (k, edge) in self.edges.iter().enumerate() {
                let (a, b) = (edge.a as usize, edge.b as usize);
                let d = p[b] - p[a];
                let length = d.norm();
                if length <= 0.0 {
                    continue;
                }
                let n = d / length;
                let alpha = self.edge_compliance[k] / (h * h);
                let c = length - edge.rest_length;
                let delta = (-c - alpha * self.edge_lambda[k]) / (w(edge.a) + w(edge.b) + alpha);
                self.edge_lambda[k] += delta;
                p[a] -= w(edge.a) * delta * n;
                p[b] += w(edge.b) * delta * n;
            }
            for (k, t) in self.tets.iter().enumerate() {
                let x = t.map(|i| p[i as usize]);
                let gradients = [
                    (x[3] - x[1]).cross(&(x[2] - x[1])) / 6.0,
                    (x[2] - x[0]).cross(&(x[3] - x[0])) / 6.0,
                    (x[3] - x[0]).cross(&(x[1] - x[0])) / 6.0,
                    (x[1] - x[0]).cross(&(x[2] - x[0])) / 6.0,
                ];
                let weight: f64 = (0..4).map(|j| w(t[j]) * gradients[j].norm_squared()).sum();
                let alpha = self.volume_compliance[k] / (h * h);
                if weight + alpha <= 0.0 {
                    continue;
                }
                let c = tet_volume(p, t) - self.rest_volumes[k];
                let delta = (-c - alpha * self.volume_lambda[k]) / (weight + alpha);
                self.volume_lambda[k] += delta;
                for j in 0..4 {
                    p[t[j] as usize] += w(t[j]) * delta * gradients[j];
                }
            }
        }
        let gamma = self.damping;
        for i in 0..free.len() {
            let goal_velocity = (p[i] - input.positions[i]) / h;
            free[i] =
                gamma * (input.velocities[i] + h * input.gravity) + (1.0 - gamma) * goal_velocity;
        }
        input.hold_pinned(free);
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
