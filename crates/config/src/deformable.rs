//! `[[deformables]]` and `[deformable_solver]`: deformable bodies coupled
//! two-way with the rigid world (`haptic-deformable`, Vezzano, Zerbato &
//! Fiorini), their shapes, paradigms, materials and anchors, and the
//! constraint solver's parameters.
//!
//! Sheets (`cloth`, `rope`, `surface_mesh`) have a density in kg/m², solids
//! (`tet_mesh`, `solid_from_mesh`, `box`) in kg/m³. Every range is checked
//! when the config loads; the bodies are built by
//! [`crate::Scene::deformable_world`], whose errors (a mesh that cannot be read or
//! filled, an anchor that selects no node) name the file, line and field too.

use crate::check::{fail, finite, Check, Invalid};
use crate::schema::ObjectConfig;
use haptic_deformable::topology;
use haptic_deformable::{
    DeformableMaterial, EqualitySolver, FrictionBound, SolverParameters, TangentBasis,
};
use haptic_tetmesh::read_tet_mesh;
use nalgebra::{Isometry3, Point3, Translation3, UnitQuaternion, Vector3};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The most nodes a generated shape (`cloth`, `rope`, `box`) may have.
pub const MAX_GENERATED_NODES: usize = 1_000_000;

/// One `[[deformables]]` entry.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeformableConfig {
    /// Shown in logs, errors and recordings; unique among the deformables
    /// and the objects.
    pub name: String,
    pub shape: DeformableShape,
    /// Where the shape's frame is placed (m). Default the origin.
    #[serde(default)]
    pub position_m: [f64; 3],
    /// The shape frame's orientation as a rotation vector (rad).
    #[serde(default)]
    pub rotation_rad: [f64; 3],
    /// kg/m² for a sheet (`cloth`, `rope`, `surface_mesh`), kg/m³ for a
    /// solid (`tet_mesh`, `solid_from_mesh`, `box`); lumped onto the nodes.
    pub density: f64,
    pub paradigm: ParadigmConfig,
    #[serde(default)]
    pub material: MaterialConfig,
    /// Nodes held in place, to the world or to an environment object.
    #[serde(default)]
    pub anchors: Vec<AnchorConfig>,
}

/// A deformable body's nodes and elements, in its own frame (placed by the
/// pose), lengths in metres.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum DeformableShape {
    /// A `nodes_x × nodes_y` grid over `width × depth` in the frame's xy
    /// plane, centred: rows and columns held inextensible, shear springs
    /// along the cells' diagonals (`topology::sheet`).
    Cloth {
        nodes_x: usize,
        nodes_y: usize,
        width: f64,
        depth: f64,
    },
    /// A strip two nodes wide along x, every edge inextensible
    /// (`topology::strip`).
    Rope {
        pairs: usize,
        length: f64,
        width: f64,
    },
    /// A strip two nodes wide whose centre line follows the polyline
    /// `path` (in the body's frame), its `pairs` rungs equally spaced along
    /// it, `width` along `across` (less its component along the path;
    /// default y) (`topology::strip_along`).
    RopeAlong {
        pairs: usize,
        width: f64,
        path: Vec<[f64; 3]>,
        #[serde(default = "default_across")]
        across: [f64; 3],
    },
    /// An OBJ, PLY, STL or OFF triangle mesh as a cloth, open or closed:
    /// every edge inextensible.
    SurfaceMesh { file: PathBuf },
    /// A Gmsh MSH 4.1 (`.msh`) or Medit (`.mesh`) tetrahedral mesh.
    TetMesh { file: PathBuf },
    /// A closed triangle mesh filled with tets by isosurface stuffing of
    /// its signed distance field, on a lattice of `spacing`.
    SolidFromMesh { file: PathBuf, spacing: f64 },
    /// A box of `cells` cubes per axis spanning `size`, centred, six tets a
    /// cube (`topology::tet_box`).
    Box { cells: [usize; 3], size: [f64; 3] },
    /// A solid cylinder along z of `radius` and `height`, its bottom face
    /// on the body's origin: `layers` (≥ 2) discs of `rings` (≥ 1) rings of
    /// nodes, three tets a prism (`topology::tet_cylinder`).
    Cylinder {
        rings: usize,
        layers: usize,
        radius: f64,
        height: f64,
    },
}

impl DeformableShape {
    /// Whether the shape is a sheet (no tets, density per area).
    pub fn is_sheet(&self) -> bool {
        matches!(
            self,
            Self::Cloth { .. }
                | Self::Rope { .. }
                | Self::RopeAlong { .. }
                | Self::SurfaceMesh { .. }
        )
    }
}

/// How a force-based paradigm integrates (`haptic_deformable::ForceIntegration`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntegrationName {
    /// One linearised backward-Euler step solved by conjugate gradients:
    /// stable at any stiffness.
    #[default]
    Implicit,
    /// The paper's symplectic Euler (eq 38): conditionally stable.
    SymplecticEuler,
}

fn default_across() -> [f64; 3] {
    [0.0, 1.0, 0.0]
}

fn default_poisson() -> f64 {
    0.3
}

fn default_cg_iterations() -> usize {
    40
}

fn default_tolerance() -> f64 {
    1e-4
}

fn default_xpbd_iterations() -> usize {
    10
}

/// A body's paradigm and its parameters, by `kind`.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ParadigmConfig {
    /// Springs: a cloth's shear springs, a solid's tet edges (a rope's and a
    /// surface mesh's edges are all inextensible rows and have none).
    MassSpring {
        /// Each spring's stiffness (N/m). Default 1 N/m, the Fig. 3 cloth's,
        /// unless `young_modulus` is given.
        #[serde(default)]
        stiffness: Option<f64>,
        /// Instead of `stiffness`: `k = E L` per spring of rest length `L`
        /// (Pa).
        #[serde(default)]
        young_modulus: Option<f64>,
        /// With `stiffness`, each spring's damper (N·s/m); with
        /// `young_modulus`, the fraction of a node pair's critical damping.
        /// Default 0.
        #[serde(default)]
        damping: f64,
        #[serde(default)]
        integration: IntegrationName,
        /// Most conjugate-gradient iterations of an implicit step. Default 40.
        #[serde(default = "default_cg_iterations")]
        iterations: usize,
        /// Relative residual an implicit step is solved to. Default 10⁻⁴.
        #[serde(default = "default_tolerance")]
        tolerance: f64,
    },
    /// Co-rotational linear FEM over the tets of a solid.
    CorotationalFem {
        /// Pa.
        young_modulus: f64,
        /// In (−1, 0.5). Default 0.3.
        #[serde(default = "default_poisson")]
        poisson_ratio: f64,
        /// Rayleigh mass damping `α` (1/s). Default 0.
        #[serde(default)]
        damping: f64,
        /// Rayleigh stiffness damping `β` (s). Default 0.
        #[serde(default)]
        stiffness_damping: f64,
        #[serde(default)]
        integration: IntegrationName,
        #[serde(default = "default_cg_iterations")]
        iterations: usize,
        #[serde(default = "default_tolerance")]
        tolerance: f64,
    },
    /// XPBD: a solid's tets keep their volume and a cloth's shear edges
    /// their length, with compliances from `young_modulus` (Pa) and
    /// `poisson_ratio`.
    Xpbd {
        young_modulus: f64,
        #[serde(default = "default_poisson")]
        poisson_ratio: f64,
        /// Constraint iterations per step, and the substeps (of one sweep
        /// each) of its step solved with its contact planes. Default 10.
        #[serde(default = "default_xpbd_iterations")]
        iterations: usize,
        /// Eq 3's `γ` in [0, 1). Default 0.
        #[serde(default)]
        damping: f64,
    },
    /// Shape matching (Müller et al.) towards the rest shape.
    ShapeMatching {
        /// Eq 2's `k` in (0, 1].
        stiffness: f64,
        /// `β` of `β A + (1 − β) R` in [0, 1]. Default 0 (rigid goals).
        #[serde(default)]
        linear_blend: f64,
        /// Eq 2's `γ` in [0, 1). Default 0.
        #[serde(default)]
        damping: f64,
    },
}

/// `material`: a deformable's surface and constraint strengths
/// (`DeformableMaterial`); a field left out keeps its default.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MaterialConfig {
    /// Coulomb `μ` (a pair multiplies its two coefficients). Default 0.5.
    pub friction: f64,
    /// Half the surface's thickness (m). Default 0.002.
    pub thickness: f64,
    /// Largest tension an inextensible edge carries (N). Default `inf`.
    pub stretch_limit: f64,
    /// Largest compression an inextensible edge carries (N). Default 0.
    pub compression_limit: f64,
    /// Bending rows' strength (N); 0 for none. Default 0.
    pub bending_limit: f64,
    /// Whether the surface meets its own triangles (a cloth folding on
    /// itself). Default `false`.
    pub self_collision: bool,
}

impl Default for MaterialConfig {
    fn default() -> Self {
        let m = DeformableMaterial::default();
        Self {
            friction: m.friction,
            thickness: m.thickness,
            stretch_limit: m.stretch_limit,
            compression_limit: m.compression_limit,
            bending_limit: m.bending_limit,
            self_collision: m.self_collision,
        }
    }
}

impl MaterialConfig {
    pub fn material(&self) -> DeformableMaterial {
        DeformableMaterial {
            friction: self.friction,
            thickness: self.thickness,
            stretch_limit: self.stretch_limit,
            compression_limit: self.compression_limit,
            bending_limit: self.bending_limit,
            self_collision: self.self_collision,
        }
    }
}

/// One entry of `anchors`: the node `node`, or every node within `radius`
/// of `near` (world frame, at the start), held where it starts, to the
/// world or, with `body`, to that environment object.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnchorConfig {
    #[serde(default)]
    pub node: Option<u32>,
    #[serde(default)]
    pub near: Option<[f64; 3]>,
    /// With `near` (m).
    #[serde(default)]
    pub radius: Option<f64>,
    /// An environment object; left out, the world.
    #[serde(default)]
    pub body: Option<String>,
}

/// What bounds a contact's friction impulse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrictionBoundName {
    /// Coulomb's disc of the contact's own normal impulse.
    Coulomb,
    /// The paper's eq 32: the contact point's share of weight.
    GravityPressure,
}

/// How a contact's friction directions are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TangentBasisName {
    /// Any pair normal to the contact: static friction holds.
    FromNormal,
    /// The paper's eqs 27–28, along the slip.
    FromSlip,
}

/// How the equality rows are solved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EqualitySolverName {
    /// With every other row, by PGS sweeps (the paper's).
    Pgs,
    /// Held exactly, the other rows swept against them: for ropes and
    /// mechanisms between bodies much heavier than a node.
    Direct,
}

/// `[deformable_solver]`: `SolverParameters`, defaults
/// `SolverParameters::default()`'s.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DeformableSolver {
    /// PGS sweeps per step (Algorithm 1). Default 10.
    pub iterations: usize,
    /// `β h` of eq 13, in [0, 1]. Default 0.2.
    pub baumgarte: f64,
    /// `β h` of the bending rows alone, in [0, 1]. Default 0.
    pub bending_baumgarte: f64,
    /// Fraction of last step's impulses each row starts from, [0, 1].
    /// Default 1.
    pub warm_start: f64,
    /// Default `coulomb`.
    pub friction_bound: FrictionBoundName,
    /// Default `from_normal`.
    pub tangent_basis: TangentBasisName,
    /// Position projection passes after each step; 0 for none. Default 30.
    pub projection_sweeps: usize,
    /// Solver passes between which implicit bodies answer the impulses.
    /// Default 4.
    pub elastic_passes: usize,
    /// Whether those passes hold resting contact nodes on their contact
    /// planes in the bodies' implicit solves. Default `true`.
    pub contact_planes: bool,
    /// Equal substeps per step. Default 1.
    pub substeps: usize,
    /// Extra contact distance beyond a sample's travel (m). Default 0.002.
    pub contact_margin: f64,
    /// Fastest push out of a penetration (m/s). Default 0.5.
    pub max_push_out_speed: f64,
    /// A node faster than this (m/s) marks a diverging step, which is
    /// quarantined. Default 100.
    pub max_speed: f64,
    /// Whether the rigid world's joints are rows of the solver. Default
    /// `true`.
    pub joint_rows: bool,
    /// How anchors, inextensible edges and joints are solved. Default
    /// `pgs`.
    pub equality_solver: EqualitySolverName,
    /// Whether deformable surfaces meet each other (and themselves where
    /// their material says `self_collision`). Default `true`.
    pub deformable_contacts: bool,
}

impl Default for DeformableSolver {
    fn default() -> Self {
        let p = SolverParameters::default();
        Self {
            iterations: p.iterations,
            baumgarte: p.baumgarte,
            bending_baumgarte: p.bending_baumgarte,
            warm_start: p.warm_start,
            friction_bound: match p.friction_bound {
                FrictionBound::NormalImpulse => FrictionBoundName::Coulomb,
                FrictionBound::GravityPressure => FrictionBoundName::GravityPressure,
            },
            tangent_basis: match p.tangent_basis {
                TangentBasis::FromNormal => TangentBasisName::FromNormal,
                TangentBasis::FromSlip => TangentBasisName::FromSlip,
            },
            projection_sweeps: p.projection_sweeps,
            elastic_passes: p.elastic_passes,
            contact_planes: p.contact_planes,
            substeps: p.substeps,
            contact_margin: p.contact_margin,
            max_push_out_speed: p.max_push_out_speed,
            max_speed: p.max_speed,
            joint_rows: p.joint_rows,
            equality_solver: match p.equality_solver {
                EqualitySolver::Pgs => EqualitySolverName::Pgs,
                EqualitySolver::Direct => EqualitySolverName::Direct,
            },
            deformable_contacts: p.deformable_contacts,
        }
    }
}

impl DeformableSolver {
    pub fn parameters(&self) -> SolverParameters {
        SolverParameters {
            iterations: self.iterations,
            baumgarte: self.baumgarte,
            bending_baumgarte: self.bending_baumgarte,
            warm_start: self.warm_start,
            friction_bound: match self.friction_bound {
                FrictionBoundName::Coulomb => FrictionBound::NormalImpulse,
                FrictionBoundName::GravityPressure => FrictionBound::GravityPressure,
            },
            tangent_basis: match self.tangent_basis {
                TangentBasisName::FromNormal => TangentBasis::FromNormal,
                TangentBasisName::FromSlip => TangentBasis::FromSlip,
            },
            contact_margin: self.contact_margin,
            max_push_out_speed: self.max_push_out_speed,
            max_speed: self.max_speed,
            joint_rows: self.joint_rows,
            projection_sweeps: self.projection_sweeps,
            elastic_passes: self.elastic_passes,
            contact_planes: self.contact_planes,
            substeps: self.substeps,
            equality_solver: match self.equality_solver {
                EqualitySolverName::Pgs => EqualitySolver::Pgs,
                EqualitySolverName::Direct => EqualitySolver::Direct,
            },
            deformable_contacts: self.deformable_contacts,
        }
    }
}

impl DeformableConfig {
    pub fn pose(&self) -> Isometry3<f64> {
        Isometry3::from_parts(
            Translation3::from(Vector3::from(self.position_m)),
            UnitQuaternion::from_scaled_axis(Vector3::from(self.rotation_rad)),
        )
    }
}

fn positive(field: String, value: f64) -> Check {
    if value > 0.0 && value.is_finite() {
        Ok(())
    } else {
        fail(field, format!("must be positive and finite, not {value}"))
    }
}

fn non_negative(field: String, value: f64) -> Check {
    if value >= 0.0 && value.is_finite() {
        Ok(())
    } else {
        fail(field, format!("must be finite and ≥ 0, not {value}"))
    }
}

fn fraction(field: String, value: f64, closed: bool) -> Check {
    let ok = if closed {
        (0.0..=1.0).contains(&value)
    } else {
        (0.0..1.0).contains(&value)
    };
    if ok {
        Ok(())
    } else {
        let range = if closed { "[0, 1]" } else { "[0, 1)" };
        fail(field, format!("must be in {range}, not {value}"))
    }
}

fn at_least_one(field: String, value: usize) -> Check {
    if value >= 1 {
        Ok(())
    } else {
        fail(field, "must be at least 1")
    }
}

fn poisson(field: String, value: f64) -> Check {
    if value > -1.0 && value < 0.5 {
        Ok(())
    } else {
        fail(
            field,
            format!(
                "Poisson's ratio must be in (−1, 0.5) (0.5 is incompressible, which the elements cannot represent), not {value}"
            ),
        )
    }
}

/// Checks `[[deformables]]` and `[deformable_solver]` against the
/// `objects`; files are found from `base`, and a tet mesh file is read and
/// validated.
pub(crate) fn check(
    deformables: &[DeformableConfig],
    solver: &DeformableSolver,
    objects: &[ObjectConfig],
    base: &Path,
) -> Check {
    solver.parameters().check().map_err(|e| Invalid {
        field: format!("deformable_solver.{}", e.field),
        message: format!("must be {}, not {}", e.expected, e.value),
    })?;
    for (i, d) in deformables.iter().enumerate() {
        let field = |f: &str| format!("deformables[{i}].{f}");
        if deformables[..i].iter().any(|o| o.name == d.name) {
            fail(field("name"), format!("`{}` names two deformables", d.name))?;
        }
        if objects.iter().any(|o| o.name == d.name) {
            fail(
                field("name"),
                format!("`{}` already names an object", d.name),
            )?;
        }
        finite(field("position_m"), &d.position_m)?;
        finite(field("rotation_rad"), &d.rotation_rad)?;
        positive(field("density"), d.density)?;
        shape(&d.shape, base, &field)?;
        paradigm(&d.paradigm, &d.shape, &field)?;
        let m = &d.material;
        for (name, value) in [
            ("friction", m.friction),
            ("thickness", m.thickness),
            ("compression_limit", m.compression_limit),
            ("bending_limit", m.bending_limit),
        ] {
            non_negative(field(&format!("material.{name}")), value)?;
        }
        if m.stretch_limit.is_nan() || m.stretch_limit < 0.0 {
            fail(
                field("material.stretch_limit"),
                format!("must be ≥ 0 (or inf), not {}", m.stretch_limit),
            )?;
        }
        for (j, anchor) in d.anchors.iter().enumerate() {
            let field = |f: &str| field(&format!("anchors[{j}].{f}"));
            match (anchor.node, anchor.near, anchor.radius) {
                (Some(_), None, None) => {}
                (None, Some(near), Some(radius)) => {
                    finite(field("near"), &near)?;
                    positive(field("radius"), radius)?;
                }
                (None, Some(_), None) => fail(field("radius"), "`near` needs a `radius`")?,
                (Some(_), None, Some(_)) => {
                    fail(field("radius"), "`radius` goes with `near`, not `node`")?
                }
                _ => fail(field("node"), "give exactly one of `node` and `near`")?,
            }
            if let Some(body) = &anchor.body {
                match objects.iter().find(|o| o.name == *body) {
                    None => fail(field("body"), format!("no object named \"{body}\""))?,
                    Some(o) if o.tool => fail(
                        field("body"),
                        format!("`{body}` is the tool, which the device moves: anchors hold to environment objects"),
                    )?,
                    Some(_) => {}
                }
            }
        }
    }
    Ok(())
}

fn file_exists(field: String, base: &Path, file: &Path) -> Check {
    let path = base.join(file);
    if path.is_file() {
        Ok(())
    } else {
        fail(field, format!("no such file: {}", path.display()))
    }
}

fn shape(shape: &DeformableShape, base: &Path, field: &dyn Fn(&str) -> String) -> Check {
    let field = |f: &str| field(&format!("shape.{f}"));
    let too_many = |f: &str, nodes: usize| {
        if nodes > MAX_GENERATED_NODES {
            fail(
                field(f),
                format!("{nodes} nodes is more than the {MAX_GENERATED_NODES} allowed"),
            )
        } else {
            Ok(())
        }
    };
    match shape {
        DeformableShape::Cloth {
            nodes_x,
            nodes_y,
            width,
            depth,
        } => {
            for (name, n) in [("nodes_x", *nodes_x), ("nodes_y", *nodes_y)] {
                if n < 2 {
                    fail(field(name), format!("must be at least 2, not {n}"))?;
                }
            }
            too_many("nodes_x", nodes_x.saturating_mul(*nodes_y))?;
            positive(field("width"), *width)?;
            positive(field("depth"), *depth)
        }
        DeformableShape::Rope {
            pairs,
            length,
            width,
        } => {
            if *pairs < 2 {
                fail(field("pairs"), format!("must be at least 2, not {pairs}"))?;
            }
            too_many("pairs", pairs.saturating_mul(2))?;
            positive(field("length"), *length)?;
            positive(field("width"), *width)
        }
        DeformableShape::RopeAlong {
            pairs,
            width,
            path,
            across,
        } => {
            too_many("pairs", pairs.saturating_mul(2))?;
            positive(field("width"), *width)?;
            let points: Vec<Point3<f64>> = path.iter().map(|p| Point3::from(*p)).collect();
            topology::strip_along(&points, *pairs, *width, &Vector3::from(*across))
                .map(drop)
                .map_err(|e| Invalid {
                    field: field("path"),
                    message: e.to_string(),
                })
        }
        DeformableShape::SurfaceMesh { file } => file_exists(field("file"), base, file),
        DeformableShape::TetMesh { file } => {
            file_exists(field("file"), base, file)?;
            read_tet_mesh(&base.join(file))
                .map(drop)
                .map_err(|e| Invalid {
                    field: field("file"),
                    message: e.to_string(),
                })
        }
        DeformableShape::SolidFromMesh { file, spacing } => {
            file_exists(field("file"), base, file)?;
            positive(field("spacing"), *spacing)
        }
        DeformableShape::Box { cells, size } => {
            if let Some(n) = cells.iter().find(|&&n| n == 0) {
                fail(field("cells"), format!("must each be at least 1, not {n}"))?;
            }
            too_many(
                "cells",
                cells
                    .iter()
                    .fold(1usize, |n, c| n.saturating_mul(c.saturating_add(1))),
            )?;
            size.iter().try_for_each(|&s| positive(field("size"), s))
        }
        DeformableShape::Cylinder {
            rings,
            layers,
            radius,
            height,
        } => {
            if *rings < 1 {
                fail(field("rings"), "must be at least 1")?;
            }
            if *layers < 2 {
                fail(field("layers"), format!("must be at least 2, not {layers}"))?;
            }
            too_many(
                "rings",
                (3 * rings.saturating_mul(rings.saturating_add(1)) + 1).saturating_mul(*layers),
            )?;
            positive(field("radius"), *radius)?;
            positive(field("height"), *height)
        }
    }
}

fn paradigm(
    paradigm: &ParadigmConfig,
    shape: &DeformableShape,
    field: &dyn Fn(&str) -> String,
) -> Check {
    let field = |f: &str| field(&format!("paradigm.{f}"));
    match *paradigm {
        ParadigmConfig::MassSpring {
            stiffness,
            young_modulus,
            damping,
            integration: _,
            iterations,
            tolerance,
        } => {
            match (stiffness, young_modulus) {
                (Some(_), Some(_)) => fail(
                    field("young_modulus"),
                    "give `stiffness` or `young_modulus`, not both",
                )?,
                (Some(k), None) => positive(field("stiffness"), k)?,
                (None, Some(e)) => positive(field("young_modulus"), e)?,
                (None, None) => {}
            }
            non_negative(field("damping"), damping)?;
            at_least_one(field("iterations"), iterations)?;
            positive(field("tolerance"), tolerance)
        }
        ParadigmConfig::CorotationalFem {
            young_modulus,
            poisson_ratio,
            damping,
            stiffness_damping,
            integration: _,
            iterations,
            tolerance,
        } => {
            if shape.is_sheet() {
                fail(
                    field("kind"),
                    "co-rotational FEM needs tets: a `tet_mesh`, `solid_from_mesh` or `box` shape",
                )?;
            }
            positive(field("young_modulus"), young_modulus)?;
            poisson(field("poisson_ratio"), poisson_ratio)?;
            non_negative(field("damping"), damping)?;
            non_negative(field("stiffness_damping"), stiffness_damping)?;
            at_least_one(field("iterations"), iterations)?;
            positive(field("tolerance"), tolerance)
        }
        ParadigmConfig::Xpbd {
            young_modulus,
            poisson_ratio,
            iterations,
            damping,
        } => {
            positive(field("young_modulus"), young_modulus)?;
            poisson(field("poisson_ratio"), poisson_ratio)?;
            at_least_one(field("iterations"), iterations)?;
            fraction(field("damping"), damping, false)
        }
        ParadigmConfig::ShapeMatching {
            stiffness,
            linear_blend,
            damping,
        } => {
            if !(stiffness > 0.0 && stiffness <= 1.0) {
                fail(
                    field("stiffness"),
                    format!("must be in (0, 1], not {stiffness}"),
                )?;
            }
            fraction(field("linear_blend"), linear_blend, true)?;
            fraction(field("damping"), damping, false)
        }
    }
}
