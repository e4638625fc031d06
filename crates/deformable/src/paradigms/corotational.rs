//! Co-rotational linear FEM on tetrahedra: each element's linear stiffness
//! `K⁰` acts in the frame of its rotation `R`, found by polar decomposition
//! of its deformation gradient, so that rigid rotations store no energy
//! (Müller & Gross, "Interactive virtual materials", 2004).

use super::block_matrix::BlockMatrix;
use super::mass_spring::integration_check;
use super::rotation::extract_rotation;
use super::{
    integrate_forces, respond_implicitly, ElasticForces, ForceIntegration, ForceScratch, StepInput,
};
use crate::error::DeformableError;
use crate::topology::tet_volume;
use nalgebra::{Matrix3, Point3, UnitQuaternion, Vector3};

/// Lamé parameters `(λ, μ)` of Young's modulus `young` and Poisson's ratio
/// `poisson`.
pub fn lame(young: f64, poisson: f64) -> (f64, f64) {
    let mu = young / (2.0 * (1.0 + poisson));
    let lambda = young * poisson / ((1.0 + poisson) * (1.0 - 2.0 * poisson));
    (lambda, mu)
}

/// Refuses a Young's modulus that is not finite and positive, and a
/// Poisson's ratio outside `(−1, 0.5)`, naming the field.
pub(crate) fn check_elasticity(
    body: &str,
    young: f64,
    poisson: f64,
) -> Result<(), DeformableError> {
    let parameter = |field, value, expected| DeformableError::Parameter {
        body: body.to_string(),
        field,
        value,
        expected,
    };
    if !(young.is_finite() && young > 0.0) {
        return Err(parameter("young_modulus", young, "finite and > 0"));
    }
    if !(poisson > -1.0 && poisson < 0.5) {
        return Err(parameter("poisson_ratio", poisson, "in (−1, 0.5)"));
    }
    Ok(())
}

/// One tetrahedron: its nodes and rest shape. Its linear-elastic
/// stiffness (the energy's Hessian) is
/// `K⁰_ab = V [μ (g_a·g_b) I + μ g_b g_aᵀ + λ g_a g_bᵀ]`, `g_a = ∇N_a`;
/// applied to rest-frame displacements `u_b` it is the linear stress of
/// their gradient `H = Σ_b u_b g_bᵀ` on each node's gradient,
/// `Σ_b K⁰_ab u_b = V σ(H) g_a`, `σ(H) = μ (H + Hᵀ) + λ tr(H) I`, which is
/// how it is applied here rather than block by block.
#[derive(Clone, Debug)]
struct Element {
    nodes: [u32; 4],
    /// `D_m⁻¹`, `D_m = [X₁ − X₀, X₂ − X₀, X₃ − X₀]`.
    inverse_rest_shape: Matrix3<f64>,
    /// `g_a = ∇N_a` at rest; `g₀ = −(g₁ + g₂ + g₃)`.
    gradients: [Vector3<f64>; 4],
    /// Rest volume `V`.
    volume: f64,
}

/// A co-rotational FEM body.
#[derive(Clone, Debug)]
pub struct CorotationalFem {
    elements: Vec<Element>,
    /// Pa.
    pub young: f64,
    pub poisson: f64,
    /// The Lamé parameters `(λ, μ)` of `young` and `poisson` (Pa).
    lame: (f64, f64),
    /// Rayleigh damping: `f_d = −α M v + β K v`; `α` in 1/s.
    pub mass_damping: f64,
    /// `β` in s.
    pub stiffness_damping: f64,
    pub integration: ForceIntegration,
    rotations: Vec<UnitQuaternion<f64>>,
    scratch: ForceScratch,
    /// The implicit step's matrix, assembled once per step.
    matrix: BlockMatrix,
    /// Where each element's blocks `(a, b)` (at `4 a + b`) go in `matrix`.
    slots: Vec<[u32; 16]>,
    /// Whether `matrix` holds the current step's.
    assembled: bool,
    /// `(c_M, c_K)` of the assembled matrix, and the masses it holds.
    assembled_scales: (f64, f64),
    assembled_masses: Vec<f64>,
}

impl CorotationalFem {
    /// Elements of `tets` at their rest positions `rest`. Refuses an
    /// inverted or degenerate tetrahedron, naming it, and a Poisson's ratio
    /// outside `(−1, 0.5)`.
    pub fn new(
        body: &str,
        rest: &[Point3<f64>],
        tets: &[[u32; 4]],
        young: f64,
        poisson: f64,
        integration: ForceIntegration,
    ) -> Result<Self, DeformableError> {
        check_elasticity(body, young, poisson)?;
        let (lambda, mu) = lame(young, poisson);
        let mean_volume = tets
            .iter()
            .filter(|t| t.iter().all(|&i| (i as usize) < rest.len()))
            .map(|t| tet_volume(rest, t).abs())
            .sum::<f64>()
            / tets.len().max(1) as f64;
        let mut elements = Vec::with_capacity(tets.len());
        for (e, t) in tets.iter().enumerate() {
            if let Some(&index) = t.iter().find(|&&i| i as usize >= rest.len()) {
                return Err(DeformableError::Index {
                    body: body.to_string(),
                    element: format!("tetrahedron {e}"),
                    index,
                    nodes: rest.len(),
                });
            }
            let volume = tet_volume(rest, t);
            if !(volume > 1e-9 * mean_volume) {
                return Err(DeformableError::Degenerate {
                    body: body.to_string(),
                    element: format!(
                        "tetrahedron {e} (signed volume {volume:e} m³: {})",
                        if volume < 0.0 { "inverted" } else { "flat" }
                    ),
                });
            }
            let x = t.map(|i| rest[i as usize].coords);
            let shape = Matrix3::from_columns(&[x[1] - x[0], x[2] - x[0], x[3] - x[0]]);
            let inverse = shape
                .try_inverse()
                .ok_or_else(|| DeformableError::Degenerate {
                    body: body.to_string(),
                    element: format!("tetrahedron {e}"),
                })?;
            let mut g = [Vector3::zeros(); 4];
            for k in 0..3 {
                g[k + 1] = inverse.row(k).transpose();
            }
            g[0] = -(g[1] + g[2] + g[3]);
            elements.push(Element {
                nodes: *t,
                inverse_rest_shape: inverse,
                gradients: g,
                volume,
            });
        }
        let matrix = BlockMatrix::with_pattern(rest.len(), tets);
        let slots = tets
            .iter()
            .map(|t| {
                std::array::from_fn(|k| {
                    matrix
                        .slot(t[k / 4], t[k % 4])
                        .expect("the pattern holds every element's pairs")
                })
            })
            .collect();
        Ok(Self {
            matrix,
            slots,
            assembled: false,
            assembled_scales: (1.0, 1.0),
            assembled_masses: Vec::new(),
            rotations: vec![UnitQuaternion::identity(); elements.len()],
            elements,
            young,
            poisson,
            lame: (lambda, mu),
            mass_damping: 0.0,
            stiffness_damping: 0.0,
            integration,
            scratch: ForceScratch::default(),
        })
    }

    /// With Rayleigh damping `f_d = −α M v + β K v`.
    pub fn with_damping(mut self, mass_damping: f64, stiffness_damping: f64) -> Self {
        self.mass_damping = mass_damping;
        self.stiffness_damping = stiffness_damping;
        self
    }

    pub fn element_count(&self) -> usize {
        self.elements.len()
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

    /// `½ uᵀ K⁰ u` per element, `u = Rᵀ x − X` (with the rotations of the
    /// last step): `V (μ ε:ε + ½ λ tr(ε)²)`, `ε` the symmetric part of the
    /// rest-frame displacement gradient.
    pub(crate) fn potential_energy(&self, positions: &[Point3<f64>]) -> f64 {
        let (lambda, mu) = self.lame;
        let mut energy = 0.0;
        for (element, q) in self.elements.iter().zip(&self.rotations) {
            let gradient =
                displacement_gradient(element, q.to_rotation_matrix().matrix(), positions);
            let strain = 0.5 * (gradient + gradient.transpose());
            let trace = strain.trace();
            energy += element.volume * (mu * strain.norm_squared() + 0.5 * lambda * trace * trace);
        }
        energy
    }

    /// `σ(H) = μ (H + Hᵀ) + λ tr(H) I`.
    fn stress(&self, gradient: &Matrix3<f64>) -> Matrix3<f64> {
        let (lambda, mu) = self.lame;
        mu * (gradient + gradient.transpose())
            + Matrix3::from_diagonal_element(lambda * gradient.trace())
    }

    pub(crate) fn check(&self, body: &str, nodes: usize) -> Result<(), DeformableError> {
        for (e, element) in self.elements.iter().enumerate() {
            if let Some(&index) = element.nodes.iter().find(|&&i| i as usize >= nodes) {
                return Err(DeformableError::Index {
                    body: body.to_string(),
                    element: format!("tetrahedron {e}"),
                    index,
                    nodes,
                });
            }
        }
        for (field, value) in [
            ("mass_damping", self.mass_damping),
            ("stiffness_damping", self.stiffness_damping),
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
        integration_check(body, self.integration)
    }

    /// `out += s R K⁰ Rᵀ y` over the elements: from the assembled matrix
    /// `A = c_M M + c_K Σ R K⁰ Rᵀ` when the step has one, element by
    /// element otherwise.
    fn add_rotated_stiffness(&self, s: f64, y: &[Vector3<f64>], out: &mut [Vector3<f64>]) {
        if self.assembled {
            let (mass_scale, stiffness_scale) = self.assembled_scales;
            self.matrix.add_scaled_product(
                s / stiffness_scale,
                |i| mass_scale * self.assembled_masses[i],
                y,
                out,
            );
            return;
        }
        for (element, q) in self.elements.iter().zip(&self.rotations) {
            let r = *q.to_rotation_matrix().matrix();
            // Σ_b (Rᵀ y_b) g_bᵀ, then R V σ of it on each g_a.
            let mut world = Matrix3::zeros();
            for b in 0..4 {
                world += y[element.nodes[b] as usize] * element.gradients[b].transpose();
            }
            let rotated = (s * element.volume) * r * self.stress(&(r.transpose() * world));
            for a in 0..4 {
                out[element.nodes[a] as usize] += rotated * element.gradients[a];
            }
        }
    }
}

/// `H = Rᵀ F − I` of `element` at `positions`, `F = D_s D_m⁻¹` its
/// deformation gradient and `r` its rotation `R`: the gradient of its
/// rest-frame displacements `Rᵀ x − X`.
fn displacement_gradient(
    element: &Element,
    r: &Matrix3<f64>,
    positions: &[Point3<f64>],
) -> Matrix3<f64> {
    let x = element.nodes.map(|i| positions[i as usize].coords);
    let deformed = Matrix3::from_columns(&[x[1] - x[0], x[2] - x[0], x[3] - x[0]]);
    r.transpose() * (deformed * element.inverse_rest_shape) - Matrix3::identity()
}

impl ElasticForces for CorotationalFem {
    fn prepare(&mut self, positions: &[Point3<f64>]) {
        self.assembled = false;
        for (element, q) in self.elements.iter().zip(self.rotations.iter_mut()) {
            let x = element.nodes.map(|i| positions[i as usize].coords);
            let deformed = Matrix3::from_columns(&[x[1] - x[0], x[2] - x[0], x[3] - x[0]]);
            let gradient = deformed * element.inverse_rest_shape;
            *q = extract_rotation(&gradient, *q, 20);
        }
    }

    /// `f_e = −R K⁰ (Rᵀ x − X)` plus Rayleigh damping: node `a` of an
    /// element takes `−V R σ(Rᵀ F − I) g_a`.
    fn add_forces(&self, input: &StepInput, forces: &mut [Vector3<f64>]) {
        for (element, q) in self.elements.iter().zip(&self.rotations) {
            let r = *q.to_rotation_matrix().matrix();
            let gradient = displacement_gradient(element, &r, input.positions);
            let rotated = element.volume * r * self.stress(&gradient);
            for a in 0..4 {
                forces[element.nodes[a] as usize] -= rotated * element.gradients[a];
            }
        }
        if self.mass_damping > 0.0 {
            for (i, f) in forces.iter_mut().enumerate() {
                *f -= self.mass_damping * input.masses[i] * input.velocities[i];
            }
        }
        if self.stiffness_damping > 0.0 {
            self.add_rotated_stiffness(-self.stiffness_damping, input.velocities, forces);
        }
    }

    fn add_stiffness_product(&self, s: f64, y: &[Vector3<f64>], out: &mut [Vector3<f64>]) {
        self.add_rotated_stiffness(-s, y, out);
    }

    fn add_damping_product(
        &self,
        input: &StepInput,
        s: f64,
        y: &[Vector3<f64>],
        out: &mut [Vector3<f64>],
    ) {
        if self.mass_damping > 0.0 {
            for (i, o) in out.iter_mut().enumerate() {
                *o -= s * self.mass_damping * input.masses[i] * y[i];
            }
        }
        if self.stiffness_damping > 0.0 {
            self.add_rotated_stiffness(-s * self.stiffness_damping, y, out);
        }
    }

    /// `A = (1 + hα) M + (hβ + h²) Σ_e R K⁰ Rᵀ`, each element's rotated
    /// blocks computed once for the step rather than in every product.
    fn assemble_system(&mut self, input: &StepInput) {
        let h = input.h;
        let scale = h * self.stiffness_damping + h * h;
        self.matrix.clear();
        let (lambda, mu) = self.lame;
        for ((element, q), slots) in self.elements.iter().zip(&self.rotations).zip(&self.slots) {
            // R K⁰_ab Rᵀ = V [μ (g_a·g_b) I + μ c_b c_aᵀ + λ c_a c_bᵀ], c = R g.
            let r = q.to_rotation_matrix();
            let c = element.gradients.map(|g| r * g);
            let v = scale * element.volume;
            for a in 0..4 {
                for b in a..4 {
                    let block = Matrix3::from_diagonal_element(
                        v * mu * element.gradients[a].dot(&element.gradients[b]),
                    ) + (v * mu) * c[b] * c[a].transpose()
                        + (v * lambda) * c[a] * c[b].transpose();
                    self.matrix.add(slots[4 * a + b], &block);
                    if a != b {
                        self.matrix.add(slots[4 * b + a], &block.transpose());
                    }
                }
            }
        }
        let mass_scale = 1.0 + h * self.mass_damping;
        for (i, m) in input.masses.iter().enumerate() {
            self.matrix.add_to_diagonal(i, mass_scale * m);
        }
        self.assembled_scales = (mass_scale, scale);
        self.assembled_masses.clear();
        self.assembled_masses.extend_from_slice(input.masses);
        self.assembled = true;
    }

    fn system_matrix(&self) -> Option<&BlockMatrix> {
        self.assembled.then_some(&self.matrix)
    }

    fn add_implicit_diagonal(&self, input: &StepInput, diagonal: &mut [f64]) {
        let h = input.h;
        for (i, d) in diagonal.iter_mut().enumerate() {
            *d += h * self.mass_damping * input.masses[i];
        }
        let scale = h * self.stiffness_damping + h * h;
        // tr(K⁰_aa) / 3 = V (4μ + λ) |g_a|² / 3.
        let (lambda, mu) = self.lame;
        for element in &self.elements {
            for a in 0..4 {
                diagonal[element.nodes[a] as usize] += scale
                    * element.volume
                    * (4.0 * mu + lambda)
                    * element.gradients[a].norm_squared()
                    / 3.0;
            }
        }
    }
}
