//! A deformable body: its model (rest shape, lumped masses, surface,
//! elements, paradigm, material) and its state (node positions and
//! velocities), kept apart as the rigid bodies' are.

pub use crate::error::DeformableError;
use crate::paradigms::Paradigm;
use crate::topology::{self, Edge, Hinge, SurfaceSample};
use nalgebra::{Point3, Vector3};

/// What a body's surface and constraints are made of.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeformableMaterial {
    /// Coulomb coefficient against anything (a pair multiplies its two
    /// bodies' coefficients, as the paper and Bullet do, §4.4).
    pub friction: f64,
    /// Half the thickness of the surface (m): contacts keep its samples this
    /// far from other surfaces.
    pub thickness: f64,
    /// Largest tension an inextensibility row may carry (N); `∞` for none
    /// (§4.2's `λ⁻`).
    pub stretch_limit: f64,
    /// Largest compression an inextensibility row may carry (N); 0 lets
    /// edges shorten freely, as cloth does (§4.2's `λ⁺`).
    pub compression_limit: f64,
    /// Largest generalised force a bending row may carry (N); 0 for no
    /// bending rows (§4.5: `λ⁻ = −λ⁺` sets the strength).
    pub bending_limit: f64,
    /// Whether the surface's samples meet its own triangles (a cloth that
    /// folds on itself); see [`crate::collision::deformable`]. Contacts
    /// between different bodies need no flag.
    pub self_collision: bool,
}

impl Default for DeformableMaterial {
    fn default() -> Self {
        Self {
            friction: 0.5,
            thickness: 0.002,
            stretch_limit: f64::INFINITY,
            compression_limit: 0.0,
            bending_limit: 0.0,
            self_collision: false,
        }
    }
}

/// What a deformable body is. Nothing in it changes as the world steps,
/// apart from its paradigm's scratch (rotations, multipliers).
#[derive(Clone, Debug)]
pub struct DeformableModel {
    pub name: String,
    /// Lumped node masses (kg), all positive.
    pub masses: Vec<f64>,
    /// Rest positions (m, world frame at construction).
    pub rest: Vec<Point3<f64>>,
    /// The explicit triangle surface the paper assumes (§3).
    pub surface: Vec<[u32; 3]>,
    /// Points of the surface tested for contact.
    pub samples: Vec<SurfaceSample>,
    /// Edges held at their rest length by inextensibility rows (§4.2).
    pub inextensible: Vec<Edge>,
    /// Hinges held near their rest shape by bending rows (§4.5), with eq 33's
    /// `C⁰_bend` of each.
    pub hinges: Vec<(Hinge, f64)>,
    pub material: DeformableMaterial,
    pub paradigm: Paradigm,
}

impl DeformableModel {
    /// Whether every edge of the surface is shared by exactly two of its
    /// triangles: a closed surface bounds a solid, an open one is a sheet.
    pub fn surface_is_closed(&self) -> bool {
        let mut edges: Vec<(u32, u32)> = self
            .surface
            .iter()
            .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
            .map(|(a, b)| (a.min(b), a.max(b)))
            .collect();
        edges.sort_unstable();
        !edges.is_empty()
            && edges
                .chunk_by(|a, b| a == b)
                .all(|shared| shared.len() == 2)
    }
}

/// Where a deformable body is and how it moves.
#[derive(Clone, Debug, PartialEq)]
pub struct DeformableState {
    pub positions: Vec<Point3<f64>>,
    pub velocities: Vec<Vector3<f64>>,
}

/// A deformable body: its model and its state.
#[derive(Clone, Debug)]
pub struct DeformableBody {
    pub model: DeformableModel,
    pub state: DeformableState,
}

impl DeformableBody {
    /// A body at rest at `positions` with lumped `masses`, its `surface`
    /// triangles, the edges kept inextensible and its paradigm. Bending rows
    /// are made for every interior edge of the surface when
    /// `material.bending_limit > 0`. Checks every index, mass and length.
    pub fn new(
        name: &str,
        positions: Vec<Point3<f64>>,
        masses: Vec<f64>,
        surface: Vec<[u32; 3]>,
        inextensible: Vec<Edge>,
        material: DeformableMaterial,
        paradigm: Paradigm,
    ) -> Result<DeformableBody, DeformableError> {
        let body = name.to_string();
        let nodes = positions.len();
        if let Some((node, &mass)) = masses
            .iter()
            .enumerate()
            .find(|(_, m)| !(m.is_finite() && **m > 0.0))
        {
            return Err(DeformableError::Mass { body, node, mass });
        }
        if masses.len() != nodes {
            return Err(DeformableError::Parameter {
                body,
                field: "masses",
                value: masses.len() as f64,
                expected: "one per node",
            });
        }
        if let Some(node) = positions
            .iter()
            .position(|p| !p.coords.iter().all(|v| v.is_finite()))
        {
            return Err(DeformableError::Position { body, node });
        }
        let check = |element: String, indices: &[u32]| -> Result<(), DeformableError> {
            match indices.iter().find(|&&i| i as usize >= nodes) {
                Some(&index) => Err(DeformableError::Index {
                    body: name.to_string(),
                    element,
                    index,
                    nodes,
                }),
                None => Ok(()),
            }
        };
        for (f, t) in surface.iter().enumerate() {
            check(format!("surface triangle {f}"), t)?;
            let [a, b, c] = t.map(|i| positions[i as usize]);
            if (b - a).cross(&(c - a)).norm() <= 0.0 {
                return Err(DeformableError::Degenerate {
                    body,
                    element: format!("surface triangle {f}"),
                });
            }
        }
        for (e, edge) in inextensible.iter().enumerate() {
            check(format!("inextensible edge {e}"), &[edge.a, edge.b])?;
            if !(edge.rest_length > 0.0) {
                return Err(DeformableError::Degenerate {
                    body,
                    element: format!("inextensible edge {e}"),
                });
            }
        }
        paradigm.check(name, nodes)?;
        for (field, value) in [
            ("friction", material.friction),
            ("thickness", material.thickness),
            ("stretch_limit", material.stretch_limit),
            ("compression_limit", material.compression_limit),
            ("bending_limit", material.bending_limit),
        ] {
            if !(value >= 0.0)
                || (field == "friction" || field == "thickness") && !value.is_finite()
            {
                return Err(DeformableError::Parameter {
                    body,
                    field,
                    value,
                    expected: "≥ 0",
                });
            }
        }
        let hinges = if material.bending_limit > 0.0 {
            topology::hinges(&surface)
                .into_iter()
                .map(|h| (h, crate::constraints::bending::value(&h, &positions)))
                .collect()
        } else {
            Vec::new()
        };
        let samples = topology::surface_samples(&surface);
        Ok(DeformableBody {
            state: DeformableState {
                velocities: vec![Vector3::zeros(); nodes],
                positions: positions.clone(),
            },
            model: DeformableModel {
                name: body,
                masses,
                rest: positions,
                surface,
                samples,
                inextensible,
                hinges,
                material,
                paradigm,
            },
        })
    }

    /// Total mass (kg).
    pub fn mass(&self) -> f64 {
        self.model.masses.iter().sum()
    }

    /// Linear momentum (N·s).
    pub fn momentum(&self) -> Vector3<f64> {
        self.model
            .masses
            .iter()
            .zip(&self.state.velocities)
            .map(|(m, v)| *m * v)
            .sum()
    }

    /// Kinetic energy (J).
    pub fn kinetic_energy(&self) -> f64 {
        self.model
            .masses
            .iter()
            .zip(&self.state.velocities)
            .map(|(m, v)| 0.5 * m * v.norm_squared())
            .sum()
    }

    /// Centre of mass (m).
    pub fn centre_of_mass(&self) -> Point3<f64> {
        let weighted: Vector3<f64> = self
            .model
            .masses
            .iter()
            .zip(&self.state.positions)
            .map(|(m, p)| *m * p.coords)
            .sum();
        Point3::from(weighted / self.mass())
    }

    /// Refills `out` with each node's unit normal at its current position:
    /// the area-weighted mean of the normals `(b − a) × (c − a)` of the
    /// surface triangles `[a, b, c]` about it, outward for a closed surface
    /// whose triangles face out (as [`topology::boundary`] turns them), on
    /// the side the winding gives for an open sheet; zero for a node on no
    /// triangle (or whose triangles' normals cancel).
    pub fn vertex_normals(&self, out: &mut Vec<Vector3<f64>>) {
        out.clear();
        out.resize(self.state.positions.len(), Vector3::zeros());
        for t in &self.model.surface {
            let [a, b, c] = t.map(|i| self.state.positions[i as usize]);
            // Twice the triangle's area along its normal.
            let weighted = (b - a).cross(&(c - a));
            for &i in t {
                out[i as usize] += weighted;
            }
        }
        for n in out.iter_mut() {
            *n = n.try_normalize(0.0).unwrap_or_else(Vector3::zeros);
        }
    }

    /// The largest relative stretch `(|x_b − x_a| − L)/L` over `edges`
    /// (negative when all are shorter than at rest).
    pub fn max_strain(&self, edges: &[Edge]) -> f64 {
        edges
            .iter()
            .map(|e| {
                let length = (self.state.positions[e.b as usize]
                    - self.state.positions[e.a as usize])
                    .norm();
                (length - e.rest_length) / e.rest_length
            })
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// Whether every position and velocity is finite.
    pub fn is_finite(&self) -> bool {
        self.state
            .positions
            .iter()
            .all(|p| p.coords.iter().all(|v| v.is_finite()))
            && self
                .state
                .velocities
                .iter()
                .all(|v| v.iter().all(|c| c.is_finite()))
    }
}

/// Lumped masses of a sheet of `areal_density` (kg/m²): each triangle's mass
/// split equally over its three nodes.
pub fn sheet_masses(
    positions: &[Point3<f64>],
    triangles: &[[u32; 3]],
    areal_density: f64,
) -> Vec<f64> {
    let mut masses = vec![0.0; positions.len()];
    for t in triangles {
        let [a, b, c] = t.map(|i| positions[i as usize]);
        let share = areal_density * 0.5 * (b - a).cross(&(c - a)).norm() / 3.0;
        for &i in t {
            masses[i as usize] += share;
        }
    }
    masses
}

/// Lumped masses of a solid of `density` (kg/m³) meshed by `tets`: each
/// tetrahedron's mass split equally over its four nodes.
pub fn solid_masses(positions: &[Point3<f64>], tets: &[[u32; 4]], density: f64) -> Vec<f64> {
    let mut masses = vec![0.0; positions.len()];
    for t in tets {
        let share = density * topology::tet_volume(positions, t).abs() / 4.0;
        for &i in t {
            masses[i as usize] += share;
        }
    }
    masses
}
