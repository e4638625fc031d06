//! Mass–spring–damper bodies: Hookean springs along edges with dampers
//! along them (the paper's mass–spring cloth and jelly).

use super::{
    integrate_forces, respond_implicitly, ElasticForces, ForceIntegration, ForceScratch, StepInput,
};
use crate::error::DeformableError;
use crate::topology::Edge;
use nalgebra::{Matrix3, Point3, Vector3};

/// A spring between nodes `a` and `b`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spring {
    pub a: u32,
    pub b: u32,
    pub rest_length: f64,
    /// N/m.
    pub stiffness: f64,
    /// N·s/m, along the spring.
    pub damping: f64,
}

/// A mass–spring body's springs and how they are integrated.
#[derive(Clone, Debug)]
pub struct MassSpring {
    pub springs: Vec<Spring>,
    pub integration: ForceIntegration,
    /// Each spring's unit direction and length at the step's positions.
    directions: Vec<(Vector3<f64>, f64)>,
    scratch: ForceScratch,
    /// Each spring's block of the implicit step's matrix,
    /// `h² Kₛ + h d n nᵀ = α n nᵀ + β I`, as `(α, β)`, computed once per step
    /// and valid while `assembled`.
    system_terms: Vec<(f64, f64)>,
    assembled: bool,
}

impl MassSpring {
    pub fn new(springs: Vec<Spring>, integration: ForceIntegration) -> Self {
        Self {
            springs,
            integration,
            directions: Vec::new(),
            scratch: ForceScratch::default(),
            system_terms: Vec::new(),
            assembled: false,
        }
    }

    /// Springs along `edges` of a solid of Young's modulus `young` (Pa):
    /// each edge of rest length `L` gets `k = E L` (a cubic lattice of
    /// spacing `L` has the modulus `E` along its axes with this `k`), and a
    /// damper of `damping_ratio` times a node pair's critical damping
    /// `2 √(k m)` for a typical node mass `node_mass`.
    pub fn from_young_modulus(
        edges: &[Edge],
        young: f64,
        damping_ratio: f64,
        node_mass: f64,
        integration: ForceIntegration,
    ) -> Self {
        let springs = edges
            .iter()
            .map(|e| {
                let stiffness = young * e.rest_length;
                Spring {
                    a: e.a,
                    b: e.b,
                    rest_length: e.rest_length,
                    stiffness,
                    damping: damping_ratio * 2.0 * (stiffness * 0.5 * node_mass).sqrt(),
                }
            })
            .collect();
        Self::new(springs, integration)
    }

    pub(crate) fn free_velocities(&mut self, input: &StepInput, free: &mut [Vector3<f64>]) {
        let integration = self.integration;
        let mut scratch = std::mem::take(&mut self.scratch);
        integrate_forces(self, integration, &mut scratch, input, free);
        self.scratch = scratch;
    }

    pub(crate) fn solve_with_contacts(
        &mut self,
        input: &StepInput,
        impulses: &[Vector3<f64>],
        planes: &[super::ContactPlane],
        velocities: &mut [Vector3<f64>],
        supports: &mut [f64],
    ) -> bool {
        let integration = self.integration;
        let mut scratch = std::mem::take(&mut self.scratch);
        let solved = super::solve_implicitly_with_contacts(
            self,
            integration,
            &mut scratch,
            input,
            impulses,
            planes,
            velocities,
            supports,
        );
        self.scratch = scratch;
        solved
    }

    pub(crate) fn respond(
        &mut self,
        input: &StepInput,
        impulses: &[Vector3<f64>],
        response: &mut [Vector3<f64>],
    ) -> bool {
        let integration = self.integration;
        let mut scratch = std::mem::take(&mut self.scratch);
        let answered =
            respond_implicitly(self, integration, &mut scratch, input, impulses, response);
        self.scratch = scratch;
        answered
    }

    pub(crate) fn potential_energy(&self, positions: &[Point3<f64>]) -> f64 {
        self.springs
            .iter()
            .map(|s| {
                let stretch =
                    (positions[s.b as usize] - positions[s.a as usize]).norm() - s.rest_length;
                0.5 * s.stiffness * stretch * stretch
            })
            .sum()
    }

    pub(crate) fn check(&self, body: &str, nodes: usize) -> Result<(), DeformableError> {
        for (i, s) in self.springs.iter().enumerate() {
            if let Some(&index) = [s.a, s.b].iter().find(|&&n| n as usize >= nodes) {
                return Err(DeformableError::Index {
                    body: body.to_string(),
                    element: format!("spring {i}"),
                    index,
                    nodes,
                });
            }
            for (field, value) in [
                ("spring rest_length", s.rest_length),
                ("spring stiffness", s.stiffness),
                ("spring damping", s.damping),
            ] {
                if !(value.is_finite() && value >= 0.0) {
                    return Err(DeformableError::Parameter {
                        body: body.to_string(),
                        field,
                        value,
                        expected: "finite and ≥ 0",
                    });
                }
            }
        }
        integration_check(body, self.integration)
    }

    /// `∂f_a/∂x_b` of spring `s` (the block `Kₛ` with `∂f_a/∂x_a = −Kₛ`):
    /// `k [n nᵀ + max(0, 1 − L/l)(I − n nᵀ)]`, the transverse term clamped so
    /// that a compressed spring never makes `K` indefinite.
    fn block(&self, s: usize) -> Matrix3<f64> {
        let spring = &self.springs[s];
        let (n, length) = self.directions[s];
        let along = n * n.transpose();
        let transverse = transverse_share(spring, length);
        spring.stiffness * (along + transverse * (Matrix3::identity() - along))
    }
}

/// `max(0, 1 − L/l)` of `spring` at length `l`: the share of its stiffness
/// across its direction ([`MassSpring::block`]).
fn transverse_share(spring: &Spring, length: f64) -> f64 {
    (1.0 - spring.rest_length / length).max(0.0)
}

/// Checks the CG settings of a linearly implicit integration.
pub(crate) fn integration_check(
    body: &str,
    integration: ForceIntegration,
) -> Result<(), DeformableError> {
    if let ForceIntegration::LinearlyImplicit {
        max_iterations,
        tolerance,
    } = integration
    {
        if max_iterations == 0 || !(tolerance > 0.0 && tolerance < 1.0) {
            return Err(DeformableError::Parameter {
                body: body.to_string(),
                field: "implicit tolerance or iterations",
                value: tolerance,
                expected: "at least one iteration and a tolerance in (0, 1)",
            });
        }
    }
    Ok(())
}

impl ElasticForces for MassSpring {
    fn prepare(&mut self, positions: &[Point3<f64>]) {
        self.assembled = false;
        self.directions.clear();
        self.directions.extend(self.springs.iter().map(|s| {
            let d = positions[s.b as usize] - positions[s.a as usize];
            let length = d.norm();
            if length > 0.0 {
                (d / length, length)
            } else {
                (Vector3::zeros(), s.rest_length)
            }
        }));
    }

    fn add_forces(&self, input: &StepInput, forces: &mut [Vector3<f64>]) {
        for (spring, (n, length)) in self.springs.iter().zip(&self.directions) {
            let (a, b) = (spring.a as usize, spring.b as usize);
            let closing = (input.velocities[b] - input.velocities[a]).dot(n);
            let f =
                (spring.stiffness * (length - spring.rest_length) + spring.damping * closing) * n;
            forces[a] += f;
            forces[b] -= f;
        }
    }

    fn add_stiffness_product(&self, s: f64, y: &[Vector3<f64>], out: &mut [Vector3<f64>]) {
        for (k, spring) in self.springs.iter().enumerate() {
            let (a, b) = (spring.a as usize, spring.b as usize);
            let f = s * (self.block(k) * (y[b] - y[a]));
            out[a] += f;
            out[b] -= f;
        }
    }

    fn add_damping_product(
        &self,
        _input: &StepInput,
        s: f64,
        y: &[Vector3<f64>],
        out: &mut [Vector3<f64>],
    ) {
        for (spring, (n, _)) in self.springs.iter().zip(&self.directions) {
            let (a, b) = (spring.a as usize, spring.b as usize);
            let f = (s * spring.damping * n.dot(&(y[b] - y[a]))) * n;
            out[a] += f;
            out[b] -= f;
        }
    }

    /// Each spring's part of `A = M + Σ_springs (h d n nᵀ + h² Kₛ)` (on
    /// the pairs `(a, a)`, `(b, b)`, and `−` on `(a, b)`, `(b, a)`) as the
    /// two numbers of `α n nᵀ + β I`: with `Kₛ = k [(1 − t) n nᵀ + t I]`,
    /// `α = h² k (1 − t) + h d` and `β = h² k t`. Every product of the
    /// step is then one pass over the springs, matrix-free.
    fn assemble_system(&mut self, input: &StepInput) {
        let h = input.h;
        self.system_terms.clear();
        self.system_terms
            .extend(
                self.springs
                    .iter()
                    .zip(&self.directions)
                    .map(|(spring, &(_, length))| {
                        let transverse = transverse_share(spring, length);
                        (
                            h * h * spring.stiffness * (1.0 - transverse) + h * spring.damping,
                            h * h * spring.stiffness * transverse,
                        )
                    }),
            );
        self.assembled = true;
    }

    /// `out += Σ_springs ∓ (α n nᵀ + β I)(y_b − y_a)` with this step's
    /// terms, one pass; the two products in turn before they are computed.
    fn add_implicit_product(
        &self,
        input: &StepInput,
        y: &[Vector3<f64>],
        out: &mut [Vector3<f64>],
    ) {
        if !self.assembled {
            super::damping_then_stiffness(self, input, y, out);
            return;
        }
        for ((spring, (n, _)), &(along, across)) in self
            .springs
            .iter()
            .zip(&self.directions)
            .zip(&self.system_terms)
        {
            let (a, b) = (spring.a as usize, spring.b as usize);
            let v = y[b] - y[a];
            let f = along * n.dot(&v) * n + across * v;
            out[a] -= f;
            out[b] += f;
        }
    }

    fn add_implicit_diagonal(&self, input: &StepInput, diagonal: &mut [f64]) {
        let h = input.h;
        for spring in &self.springs {
            let d = h * spring.damping + h * h * spring.stiffness;
            diagonal[spring.a as usize] += d;
            diagonal[spring.b as usize] += d;
        }
    }
}
