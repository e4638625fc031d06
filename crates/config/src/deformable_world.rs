//! Building `[[deformables]]` into bodies and the coupled world
//! ([`Scene::deformable_world`]): meshes read or generated, masses,
//! paradigms, anchors selected. Errors name the file, line and field.

use crate::deformable::{
    DeformableConfig, DeformableShape, DeformableSolver, IntegrationName, ParadigmConfig,
};
use crate::{ConfigError, Scene};
use haptic_deformable::body::{sheet_masses, solid_masses};
use haptic_deformable::paradigms::Spring;
use haptic_deformable::topology::{self, Edge};
use haptic_deformable::{
    Anchor, AnchorTarget, CorotationalFem, CoupledWorld, DeformableBody, ForceIntegration,
    MassSpring, Paradigm, ShapeMatching, Xpbd,
};
use haptic_mesh::{load_mesh, LoadOptions};
use haptic_physics::World;
use haptic_sdf::{DenseField, DenseOptions, NoProgress};
use haptic_tetmesh::{check_closed, read_tet_mesh, stuff_isosurface, StuffingOptions};
use nalgebra::{Isometry3, Point3, Vector3};
use std::collections::BTreeSet;

/// A deformable's nodes and elements, placed.
struct Built {
    positions: Vec<Point3<f64>>,
    surface: Vec<[u32; 3]>,
    tets: Vec<[u32; 4]>,
    /// Held by inextensibility rows.
    inextensible: Vec<Edge>,
    /// A mass–spring body's springs, an XPBD body's distance constraints.
    springs: Vec<Edge>,
    masses: Vec<f64>,
}

/// Every edge of `tets` once.
fn tet_edges(tets: &[[u32; 4]], positions: &[Point3<f64>]) -> Vec<Edge> {
    let mut pairs = BTreeSet::new();
    for t in tets {
        for (a, b) in [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)] {
            let (a, b) = (t[a].min(t[b]), t[a].max(t[b]));
            pairs.insert((a, b));
        }
    }
    pairs
        .into_iter()
        .map(|(a, b)| Edge {
            a,
            b,
            rest_length: (positions[b as usize] - positions[a as usize]).norm(),
        })
        .collect()
}

/// A solid from `positions` (shape frame) and `tets`, placed at `pose`.
fn solid(
    positions: &[Point3<f64>],
    tets: Vec<[u32; 4]>,
    pose: &Isometry3<f64>,
    density: f64,
) -> Built {
    let positions: Vec<Point3<f64>> = positions.iter().map(|p| pose * p).collect();
    let surface = topology::boundary(&tets, &positions);
    let springs = tet_edges(&tets, &positions);
    let masses = solid_masses(&positions, &tets, density);
    Built {
        positions,
        surface,
        tets,
        inextensible: Vec::new(),
        springs,
        masses,
    }
}

fn integration(name: IntegrationName, iterations: usize, tolerance: f64) -> ForceIntegration {
    match name {
        IntegrationName::Implicit => ForceIntegration::LinearlyImplicit {
            max_iterations: iterations,
            tolerance,
        },
        IntegrationName::SymplecticEuler => ForceIntegration::SymplecticEuler,
    }
}

impl Scene {
    /// `[[deformables]]`, in file order.
    pub fn deformables(&self) -> &[DeformableConfig] {
        &self.file.deformables
    }

    /// `[deformable_solver]`.
    pub fn deformable_solver(&self) -> &DeformableSolver {
        &self.file.deformable_solver
    }

    /// The deformable bodies of `[[deformables]]` with their anchors, coupled
    /// with `rigid`, the physics world of the [environment](Self::environment)
    /// objects (one body each, in their order, at their starting poses).
    /// Errors name the deformable's field.
    pub fn deformable_world(&self, rigid: World) -> Result<CoupledWorld, ConfigError> {
        let mut bodies = Vec::with_capacity(self.deformables().len());
        let mut anchors = Vec::new();
        for (i, d) in self.deformables().iter().enumerate() {
            let body = self.deformable_body(i, d)?;
            for (j, anchor) in d.anchors.iter().enumerate() {
                let field = |f: &str| format!("deformables[{i}].anchors[{j}].{f}");
                let target_body = match &anchor.body {
                    None => None,
                    Some(name) => {
                        let index = self
                            .environment()
                            .position(|o| o.name == *name)
                            .filter(|&k| k < rigid.bodies().len())
                            .ok_or_else(|| {
                                self.invalid(field("body"), format!("no object named \"{name}\""))
                            })?;
                        Some(index)
                    }
                };
                let positions = &body.state.positions;
                let nodes: Vec<u32> = match (anchor.node, anchor.near, anchor.radius) {
                    (Some(node), _, _) => {
                        if node as usize >= positions.len() {
                            return Err(self.invalid(
                                field("node"),
                                format!(
                                    "node {node} is beyond `{}`'s {} nodes",
                                    d.name,
                                    positions.len()
                                ),
                            ));
                        }
                        vec![node]
                    }
                    (None, Some(near), Some(radius)) => {
                        let centre = Point3::from(near);
                        let nodes: Vec<u32> = (0..positions.len() as u32)
                            .filter(|&n| (positions[n as usize] - centre).norm() <= radius)
                            .collect();
                        if nodes.is_empty() {
                            return Err(self.invalid(
                                field("near"),
                                format!(
                                    "no node of `{}` lies within {radius} m of {near:?}",
                                    d.name
                                ),
                            ));
                        }
                        nodes
                    }
                    _ => return Err(self.invalid(field("node"), "give `node` or `near`")),
                };
                for node in nodes {
                    let at = positions[node as usize];
                    let target = match target_body {
                        None => AnchorTarget::World(at),
                        Some(b) => AnchorTarget::Rigid {
                            body: b,
                            point: rigid.bodies()[b].state.pose.inverse_transform_point(&at),
                        },
                    };
                    anchors.push(Anchor {
                        body: i,
                        node,
                        target,
                    });
                }
            }
            bodies.push(body);
        }
        CoupledWorld::new(
            rigid,
            bodies,
            anchors,
            self.deformable_solver().parameters(),
        )
        .map_err(|e| self.invalid("deformable_solver", e.to_string()))
    }

    /// Builds deformable `i`.
    fn deformable_body(
        &self,
        i: usize,
        d: &DeformableConfig,
    ) -> Result<DeformableBody, ConfigError> {
        let field = |f: &str| format!("deformables[{i}].{f}");
        let pose = d.pose();
        let file_error = |e: String| self.invalid(field("shape.file"), e);
        let built = match &d.shape {
            DeformableShape::Cloth {
                nodes_x,
                nodes_y,
                width,
                depth,
            } => {
                let sheet = topology::sheet(*nodes_x, *nodes_y, *width, *depth, &pose);
                let masses = sheet_masses(&sheet.positions, &sheet.triangles, d.density);
                Built {
                    positions: sheet.positions,
                    surface: sheet.triangles,
                    tets: Vec::new(),
                    inextensible: sheet.structural,
                    springs: sheet.shear,
                    masses,
                }
            }
            DeformableShape::Rope {
                pairs,
                length,
                width,
            } => {
                let strip = topology::strip(*pairs, *length, *width, &pose);
                let masses = sheet_masses(&strip.positions, &strip.triangles, d.density);
                Built {
                    positions: strip.positions,
                    surface: strip.triangles,
                    tets: Vec::new(),
                    inextensible: strip.structural,
                    springs: Vec::new(),
                    masses,
                }
            }
            DeformableShape::RopeAlong {
                pairs,
                width,
                path,
                across,
            } => {
                let points: Vec<Point3<f64>> =
                    path.iter().map(|p| pose * Point3::from(*p)).collect();
                let strip = topology::strip_along(
                    &points,
                    *pairs,
                    *width,
                    &(pose * Vector3::from(*across)),
                )
                .map_err(|e| self.invalid(field("shape.path"), e.to_string()))?;
                let masses = sheet_masses(&strip.positions, &strip.triangles, d.density);
                Built {
                    positions: strip.positions,
                    surface: strip.triangles,
                    tets: Vec::new(),
                    inextensible: strip.structural,
                    springs: Vec::new(),
                    masses,
                }
            }
            DeformableShape::SurfaceMesh { file } => {
                let mesh = load_mesh(&self.base.join(file), &LoadOptions::default())
                    .map_err(|e| file_error(e.to_string()))?
                    .mesh;
                let positions: Vec<Point3<f64>> = mesh.vertices.iter().map(|p| pose * p).collect();
                let inextensible = topology::edges(&mesh.triangles, &positions);
                let masses = sheet_masses(&positions, &mesh.triangles, d.density);
                Built {
                    positions,
                    surface: mesh.triangles,
                    tets: Vec::new(),
                    inextensible,
                    springs: Vec::new(),
                    masses,
                }
            }
            DeformableShape::TetMesh { file } => {
                let mesh = read_tet_mesh(&self.base.join(file))
                    .map_err(|e| file_error(e.to_string()))?
                    .mesh;
                solid(&mesh.positions, mesh.tets, &pose, d.density)
            }
            DeformableShape::SolidFromMesh { file, spacing } => {
                let path = self.base.join(file);
                let mesh = load_mesh(&path, &LoadOptions::default())
                    .map_err(|e| file_error(e.to_string()))?
                    .mesh;
                check_closed(&mesh).map_err(|e| {
                    file_error(format!(
                        "{}: {e}; a solid is filled from a closed surface",
                        path.display()
                    ))
                })?;
                let field_resolution = stuffing_field_resolution(&mesh, *spacing);
                let sdf = DenseField::build(
                    &mesh,
                    &DenseOptions {
                        resolution: field_resolution,
                        padding_fraction: 0.1,
                    },
                    &NoProgress,
                );
                let stuffed =
                    stuff_isosurface(&sdf, &StuffingOptions::new(*spacing)).map_err(|e| {
                        self.invalid(field("shape.spacing"), format!("{}: {e}", path.display()))
                    })?;
                solid(&stuffed.mesh.positions, stuffed.mesh.tets, &pose, d.density)
            }
            DeformableShape::Box { cells, size } => {
                let b = topology::tet_box(*cells, *size, &Isometry3::identity());
                solid(&b.positions, b.tets, &pose, d.density)
            }
            DeformableShape::Cylinder {
                rings,
                layers,
                radius,
                height,
            } => {
                let c = topology::tet_cylinder(
                    *rings,
                    *layers,
                    *radius,
                    *height,
                    &Isometry3::identity(),
                );
                solid(&c.positions, c.tets, &pose, d.density)
            }
        };
        let paradigm_error =
            |e: haptic_deformable::DeformableError| self.invalid(field("paradigm"), e.to_string());
        let paradigm = match d.paradigm {
            ParadigmConfig::MassSpring {
                stiffness,
                young_modulus,
                damping,
                integration: name,
                iterations,
                tolerance,
            } => {
                let integration = integration(name, iterations, tolerance);
                Paradigm::MassSpring(match young_modulus {
                    Some(young) => {
                        let mean_mass =
                            built.masses.iter().sum::<f64>() / built.masses.len().max(1) as f64;
                        MassSpring::from_young_modulus(
                            &built.springs,
                            young,
                            damping,
                            mean_mass,
                            integration,
                        )
                    }
                    None => MassSpring::new(
                        built
                            .springs
                            .iter()
                            .map(|e| Spring {
                                a: e.a,
                                b: e.b,
                                rest_length: e.rest_length,
                                stiffness: stiffness.unwrap_or(1.0),
                                damping,
                            })
                            .collect(),
                        integration,
                    ),
                })
            }
            ParadigmConfig::CorotationalFem {
                young_modulus,
                poisson_ratio,
                damping,
                stiffness_damping,
                integration: name,
                iterations,
                tolerance,
            } => Paradigm::CorotationalFem(
                CorotationalFem::new(
                    &d.name,
                    &built.positions,
                    &built.tets,
                    young_modulus,
                    poisson_ratio,
                    integration(name, iterations, tolerance),
                )
                .map_err(paradigm_error)?
                .with_damping(damping, stiffness_damping),
            ),
            ParadigmConfig::Xpbd {
                young_modulus,
                poisson_ratio,
                iterations,
                damping,
            } => {
                // A solid's tets keep their volume and its edges their
                // length (with volumes alone it shears flat under its own
                // weight); a sheet's distance constraints are its springs.
                let edges = built.springs.clone();
                Paradigm::Xpbd(
                    Xpbd::new(
                        &d.name,
                        &built.positions,
                        edges,
                        built.tets.clone(),
                        young_modulus,
                        poisson_ratio,
                        iterations,
                        damping,
                    )
                    .map_err(paradigm_error)?,
                )
            }
            ParadigmConfig::ShapeMatching {
                stiffness,
                linear_blend,
                damping,
            } => Paradigm::ShapeMatching(
                ShapeMatching::new(
                    &d.name,
                    &built.positions,
                    &built.masses,
                    stiffness,
                    linear_blend,
                    damping,
                )
                .map_err(paradigm_error)?,
            ),
        };
        DeformableBody::new(
            &d.name,
            built.positions,
            built.masses,
            built.surface,
            built.inextensible,
            d.material.material(),
            paradigm,
        )
        .map_err(|e| self.invalid(field("shape"), e.to_string()))
    }
}

/// Nodes along the longest side of the distance field a closed mesh is
/// stuffed through: four per lattice spacing, 16–256.
fn stuffing_field_resolution(mesh: &haptic_mesh::TriangleMesh, spacing: f64) -> u32 {
    let longest = mesh.aabb().extents().max();
    (4.0 * longest / spacing).ceil().clamp(16.0, 256.0) as u32
}

#[cfg(test)]
mod tests;
