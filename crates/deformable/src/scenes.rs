//! The paper's scenes and the law checks' fixtures, built in code so that
//! tests, benchmarks and configuration share one definition.

use crate::body::{
    sheet_masses, solid_masses, DeformableBody, DeformableError, DeformableMaterial,
};
use crate::constraints::anchor::{Anchor, AnchorTarget};
use crate::paradigms::{
    CorotationalFem, ForceIntegration, MassSpring, Paradigm, ShapeMatching, Spring, Xpbd,
};
use crate::parameters::SolverParameters;
use crate::topology::{self, Sheet};
use crate::world::CoupledWorld;
use haptic_mesh::shapes::{box_mesh, cylinder, icosphere};
use haptic_mesh::TriangleMesh;
use haptic_physics::joints::Joint;
use haptic_physics::{
    centred, mass_properties, GeometryResolution, Motion, RigidBody, World, WorldParameters,
};
use nalgebra::{Isometry3, Point3, Translation3, UnitQuaternion, Vector3};
use thiserror::Error;

/// A cloth's make-up.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClothSpec {
    /// Nodes along each side.
    pub nodes: usize,
    /// Side length (m).
    pub side: f64,
    /// kg/m².
    pub areal_density: f64,
    /// Shear springs' stiffness (N/m); the structural edges are
    /// inextensibility rows.
    pub shear_stiffness: f64,
    pub material: DeformableMaterial,
}

impl Default for ClothSpec {
    /// The Fig. 3 cloth: 51×51 nodes over 1 m, 0.2 kg/m², bending rows.
    fn default() -> Self {
        Self {
            nodes: 51,
            side: 1.0,
            areal_density: 0.2,
            shear_stiffness: 1.0,
            material: DeformableMaterial {
                friction: 0.4,
                thickness: 0.004,
                bending_limit: 0.02,
                ..DeformableMaterial::default()
            },
        }
    }
}

/// A square mass–spring cloth at `pose` (its plane the pose's xy plane):
/// structural edges held by inextensibility rows, shear springs, bending
/// rows over interior edges.
pub fn cloth(
    name: &str,
    spec: &ClothSpec,
    pose: &Isometry3<f64>,
) -> Result<(DeformableBody, Sheet), DeformableError> {
    let sheet = topology::sheet(spec.nodes, spec.nodes, spec.side, spec.side, pose);
    let masses = sheet_masses(&sheet.positions, &sheet.triangles, spec.areal_density);
    let springs = sheet
        .shear
        .iter()
        .map(|e| Spring {
            a: e.a,
            b: e.b,
            rest_length: e.rest_length,
            stiffness: spec.shear_stiffness,
            damping: 0.0,
        })
        .collect();
    let body = DeformableBody::new(
        name,
        sheet.positions.clone(),
        masses,
        sheet.triangles.clone(),
        sheet.structural.clone(),
        spec.material,
        Paradigm::MassSpring(MassSpring::new(
            springs,
            ForceIntegration::LinearlyImplicit {
                max_iterations: 10,
                tolerance: 1e-3,
            },
        )),
    )?;
    Ok((body, sheet))
}

/// A fixed rigid ball of `radius` centred at the origin, with friction
/// `friction`, meshed as an icosphere of `subdivisions`.
pub fn fixed_ball(radius: f64, subdivisions: u32, friction: f64) -> RigidBody {
    let mesh = icosphere(radius, subdivisions);
    let mut ball = RigidBody::from_mesh(
        "ball",
        &mesh,
        1000.0,
        &Isometry3::identity(),
        &GeometryResolution {
            field_resolution: 64,
            ..GeometryResolution::default()
        },
    )
    .expect("an icosphere is closed");
    ball.model.motion = Motion::Static;
    ball.model.static_friction = friction;
    ball.model.dynamic_friction = friction;
    ball
}

/// The Fig. 3 rigid world: the fixed 0.25 m ball, gravity along −z.
pub fn fig3_rigid_world() -> World {
    World::new(
        vec![fixed_ball(0.25, 4, 0.4)],
        vec![],
        WorldParameters {
            gravity: Vector3::new(0.0, 0.0, -9.81),
            ..WorldParameters::default()
        },
    )
    .expect("the ball is valid")
}

/// The jelly of the resting laws: a 6 cm co-rotational FEM cube (4³ cells
/// of six tets, 1,000 kg/m³, E = 10 kPa, ν = 0.45, stiffness damping
/// 0.01 s, 1 mm thick) centred 6 cm above a fixed slab (μ = 0.5) whose top
/// is `z = 0`, in a world stepped in `substeps`; and its tets, to measure
/// its volume.
pub fn jelly_on_the_ground(substeps: usize) -> (CoupledWorld, Vec<[u32; 4]>) {
    let mesh = topology::tet_box(
        [4, 4, 4],
        [0.06; 3],
        &Isometry3::translation(0.0, 0.0, 0.06),
    );
    let masses = solid_masses(&mesh.positions, &mesh.tets, 1000.0);
    let fem = CorotationalFem::new(
        "jelly",
        &mesh.positions,
        &mesh.tets,
        1e4,
        0.45,
        ForceIntegration::default(),
    )
    .expect("the generated cube's tets are positive")
    .with_damping(0.0, 0.01);
    let body = DeformableBody::new(
        "jelly",
        mesh.positions.clone(),
        masses,
        mesh.surface.clone(),
        vec![],
        DeformableMaterial {
            thickness: 0.001,
            ..DeformableMaterial::default()
        },
        Paradigm::CorotationalFem(fem),
    )
    .expect("the generated cube is a valid body");
    let rigid = World::new(
        vec![ground(0.0, 0.3, 0.5)],
        vec![],
        WorldParameters::default(),
    )
    .expect("a fixed slab is a valid world");
    let world = CoupledWorld::new(
        rigid,
        vec![body],
        vec![],
        SolverParameters {
            substeps,
            ..SolverParameters::default()
        },
    )
    .expect("the jelly has no anchors");
    (world, mesh.tets)
}

/// A fixed slab whose top face is the plane `z = height`, `reach` metres
/// each way from the vertical through the origin, 0.1 m thick, with
/// friction `friction`.
pub fn ground(height: f64, reach: f64, friction: f64) -> RigidBody {
    let thickness = 0.1;
    let mesh = box_mesh(Vector3::new(reach, reach, 0.5 * thickness));
    let pose = Isometry3::from_parts(
        Translation3::new(0.0, 0.0, height - 0.5 * thickness),
        UnitQuaternion::identity(),
    );
    let mut slab = RigidBody::from_mesh(
        "ground",
        &mesh,
        1000.0,
        &pose,
        &GeometryResolution {
            field_resolution: 96,
            ..GeometryResolution::default()
        },
    )
    .expect("a box is closed");
    slab.model.motion = Motion::Static;
    slab.model.static_friction = friction;
    slab.model.dynamic_friction = friction;
    slab
}

/// The Fig. 4 machine: a rope over a wheel on a hinge, a rigid body
/// hanging from each end.
pub struct Atwood {
    pub world: CoupledWorld,
    /// Indices of the wheel and of the two hanging bodies in the rigid world.
    pub wheel: usize,
    pub hanging: [usize; 2],
    /// The rope's contact radius on the wheel (m): its rim plus the rope's
    /// half thickness.
    pub contact_radius: f64,
    /// The wheel's moment of inertia about its axle (kg·m²).
    pub wheel_inertia: f64,
    /// The rope's length along its centre line (m).
    pub rope_length: f64,
    /// The rope's two nodes at each end, anchored to the hanging bodies.
    pub rope_ends: [[usize; 2]; 2],
}

/// What the Fig. 4 machine is made of.
#[derive(Clone, Debug)]
pub struct AtwoodSpec {
    pub wheel_radius: f64,
    pub wheel_mass: f64,
    /// Rung pairs of the rope strip (the paper: 25, i.e. 50 nodes).
    pub rope_pairs: usize,
    pub rope_mass: f64,
    /// Length of each straight hanging part of the rope (m).
    pub hanging_length: f64,
    /// Coulomb coefficient of the rope and of the wheel.
    pub friction: f64,
    /// The hanging bodies' meshes, masses and orientations.
    pub bodies: [(TriangleMesh, f64, UnitQuaternion<f64>); 2],
}

/// Builds the machine: the wheel's axle along y through `(0, 0, 1)`, the
/// rope over its top and down both sides, each end's two nodes anchored to
/// the top of a hanging body.
pub fn atwood(spec: &AtwoodSpec, parameters: SolverParameters) -> Result<Atwood, String> {
    let width = 0.02;
    let thickness = 0.003;
    let wheel_mesh = cylinder(spec.wheel_radius, 2.0 * width, 64);
    let wheel_volume = mass_properties(&wheel_mesh, 1.0)
        .map_err(|e| e.to_string())?
        .mass;
    let axle = Point3::new(0.0, 0.0, 1.0);
    // The cylinder's axis is its z: turn it onto the world's y.
    let turn = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::FRAC_PI_2);
    let mut wheel = RigidBody::from_mesh(
        "wheel",
        &wheel_mesh,
        spec.wheel_mass / wheel_volume,
        &Isometry3::from_parts(Translation3::from(axle.coords), turn),
        &GeometryResolution {
            field_resolution: 64,
            ..GeometryResolution::default()
        },
    )
    .map_err(|e| e.to_string())?;
    wheel.model.static_friction = spec.friction;
    wheel.model.dynamic_friction = spec.friction;
    let wheel_inertia = wheel.model.body_inertia[(2, 2)];

    // The rope's centre line: up the left side, over the top in 64
    // segments, down the right.
    let r = spec.wheel_radius + thickness;
    let mut path = vec![Point3::new(-r, 0.0, axle.z - spec.hanging_length)];
    path.extend((0..=64).map(|k| {
        let angle = std::f64::consts::PI * (1.0 - k as f64 / 64.0);
        Point3::new(r * angle.cos(), 0.0, axle.z + r * angle.sin())
    }));
    path.push(Point3::new(r, 0.0, axle.z - spec.hanging_length));
    let pairs = spec.rope_pairs;
    let strip =
        topology::strip_along(&path, pairs, width, &Vector3::y()).map_err(|e| e.to_string())?;
    let positions = strip.positions;
    let length: f64 = path.windows(2).map(|p| (p[1] - p[0]).norm()).sum();
    let edges = strip.structural;
    let masses = vec![spec.rope_mass / positions.len() as f64; positions.len()];
    let rope = DeformableBody::new(
        "rope",
        positions.clone(),
        masses,
        strip.triangles.clone(),
        edges,
        DeformableMaterial {
            friction: spec.friction,
            thickness,
            bending_limit: 0.0,
            ..DeformableMaterial::default()
        },
        Paradigm::MassSpring(MassSpring::new(vec![], ForceIntegration::SymplecticEuler)),
    )
    .map_err(|e| e.to_string())?;

    let mut bodies = vec![wheel];
    let mut anchors = Vec::new();
    for (side, (mesh, mass, orientation)) in spec.bodies.iter().enumerate() {
        let properties = mass_properties(mesh, 1.0).map_err(|e| e.to_string())?;
        let centred = centred(mesh, &properties.centre_of_mass);
        let reach = centred
            .vertices
            .iter()
            .map(|v| (orientation * v).z)
            .fold(f64::NEG_INFINITY, f64::max);
        let end = if side == 0 { 0 } else { pairs - 1 };
        let top = nalgebra::center(&positions[end], &positions[pairs + end]);
        let centre = top - Vector3::new(0.0, 0.0, reach);
        let file_pose = Isometry3::from_parts(Translation3::from(centre.coords), *orientation)
            * Translation3::from(-properties.centre_of_mass.coords);
        let body = RigidBody::from_mesh(
            if side == 0 { "left" } else { "right" },
            mesh,
            mass / properties.mass,
            &file_pose,
            &GeometryResolution::default(),
        )
        .map_err(|e| e.to_string())?;
        for node in [end, pairs + end] {
            anchors.push(Anchor {
                body: 0,
                node: node as u32,
                target: AnchorTarget::Rigid {
                    body: side + 1,
                    point: body.state.pose.inverse_transform_point(&positions[node]),
                },
            });
        }
        bodies.push(body);
    }
    let hinge =
        Joint::hinge("axle", 0, None, &bodies, axle, Vector3::y()).map_err(|e| e.to_string())?;
    let rigid =
        World::new(bodies, vec![hinge], WorldParameters::default()).map_err(|e| e.to_string())?;
    let world =
        CoupledWorld::new(rigid, vec![rope], anchors, parameters).map_err(|e| e.to_string())?;
    Ok(Atwood {
        world,
        wheel: 0,
        hanging: [1, 2],
        contact_radius: r,
        wheel_inertia,
        rope_length: length,
        rope_ends: [[0, pairs], [pairs - 1, 2 * pairs - 1]],
    })
}
/// The Fig. 2 scene's make-up: four jelly cylinders standing in a row along
/// x on a rigid dish (free on a fixed ground, or itself fixed), one per paradigm (mass–spring, co-rotational
/// FEM, XPBD, shape matching, in that order), a free rigid bar laid across
/// their tops. The paper gives its counts (1,720 nodes, 1,701 tetrahedra
/// over the four jellies) but not its sizes; the defaults are the jelly of
/// the deformable benchmark (r = 5 cm, h = 10 cm, 1000 kg/m³, E = 10 kPa,
/// ν = 0.45) at 427 nodes and 1,728 tetrahedra each, and a 0.5 kg
/// chocolate bar. The iteration counts (5 XPBD sweeps, at most 10
/// conjugate-gradient iterations) are the fewest at which every jelly
/// stands within 6 % of its volume under the bar (crates/deformable/tests/fig2.rs;
/// 3 XPBD sweeps let the XPBD jelly lose a quarter of it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fig2Spec {
    /// Each jelly's radius and height (m).
    pub jelly_radius: f64,
    pub jelly_height: f64,
    /// Node rings per layer and layers along the axis (see
    /// [`topology::tet_cylinder`]).
    pub jelly_rings: usize,
    pub jelly_layers: usize,
    /// kg/m³.
    pub jelly_density: f64,
    /// Pa.
    pub young_modulus: f64,
    pub poisson_ratio: f64,
    /// Distance between neighbouring jellies' axes (m).
    pub spacing: f64,
    /// Gap between the dish and the jellies' bottoms, and between their
    /// tops and the bar, at the start (m).
    pub gap: f64,
    /// The bar's length (along the row), width and thickness (m).
    pub bar_size: [f64; 3],
    /// kg/m³.
    pub bar_density: f64,
    /// The dish's length, width and thickness (m); its top is `z = 0`.
    pub dish_size: [f64; 3],
    /// Whether the dish is free (1000 kg/m³), resting on a fixed ground
    /// under it, so that the jellies move it; otherwise it is fixed.
    pub dish_on_ground: bool,
    /// Coulomb friction of the jellies, the bar and the dish.
    pub friction: f64,
    /// The mass–spring jelly's dampers, as a fraction of critical.
    pub mass_spring_damping_ratio: f64,
    /// The co-rotational jelly's stiffness damping `β` (s).
    pub fem_stiffness_damping: f64,
    /// The XPBD jelly's solver iterations (and its substeps when solved
    /// with its contact planes).
    pub xpbd_iterations: usize,
    /// Most conjugate-gradient iterations of the force-based jellies'
    /// implicit solves.
    pub implicit_iterations: usize,
    /// The shape-matching jelly's stiffness, linear blend and damping.
    pub shape_matching: [f64; 3],
}

impl Default for Fig2Spec {
    fn default() -> Self {
        Self {
            jelly_radius: 0.05,
            jelly_height: 0.1,
            jelly_rings: 4,
            jelly_layers: 7,
            jelly_density: 1000.0,
            young_modulus: 1.0e4,
            poisson_ratio: 0.45,
            spacing: 0.13,
            gap: 0.002,
            bar_size: [0.5, 0.04, 0.02],
            bar_density: 1300.0,
            dish_size: [0.6, 0.25, 0.02],
            dish_on_ground: true,
            friction: 0.5,
            mass_spring_damping_ratio: 0.1,
            fem_stiffness_damping: 0.01,
            xpbd_iterations: 5,
            implicit_iterations: 10,
            shape_matching: [0.5, 0.3, 0.1],
        }
    }
}

/// Why the Fig. 2 scene cannot be built.
#[derive(Debug, Error, PartialEq)]
pub enum Fig2Error {
    #[error("fig. 2 scene: {field} = {value} is out of range ({expected})")]
    Parameter {
        field: &'static str,
        value: f64,
        expected: &'static str,
    },
    #[error(transparent)]
    Body(#[from] DeformableError),
    #[error("fig. 2 scene: rigid world: {0}")]
    Rigid(String),
}

/// The Fig. 2 scene, built: its rigid world (the dish, then the bar) and
/// the four jellies.
pub struct Fig2Scene {
    pub rigid: World,
    pub jellies: Vec<DeformableBody>,
    /// The bar's and the dish's indices among the rigid world's bodies,
    /// and the ground's where the dish rests on one.
    pub bar: usize,
    pub dish: usize,
    pub ground: Option<usize>,
}

impl Fig2Spec {
    /// The solver the scene is run with (crates/deformable/tests/fig2.rs,
    /// config/fig2-jellies.toml, the benchmark): two substeps of each step,
    /// two elastic passes (the second holds every jelly's resting nodes on
    /// their contact planes in its own solve: the implicit paradigms' and,
    /// in their substeps, XPBD's and shape matching's), 4 iterations and 10
    /// projection passes. In one substep the nodes under the jellies sink
    /// through the 2 cm dish.
    pub fn solver_parameters() -> SolverParameters {
        SolverParameters {
            substeps: 2,
            elastic_passes: 2,
            iterations: 4,
            projection_sweeps: 10,
            ..SolverParameters::default()
        }
    }

    /// Checks each field's range, naming the first one out of it.
    pub fn check(&self) -> Result<(), Fig2Error> {
        let positive = |v: f64| v.is_finite() && v > 0.0;
        let fields = [
            (
                "jelly_radius",
                self.jelly_radius,
                positive(self.jelly_radius),
                "finite and > 0 (m)",
            ),
            (
                "jelly_height",
                self.jelly_height,
                positive(self.jelly_height),
                "finite and > 0 (m)",
            ),
            (
                "jelly_rings",
                self.jelly_rings as f64,
                self.jelly_rings >= 1,
                "at least 1",
            ),
            (
                "jelly_layers",
                self.jelly_layers as f64,
                self.jelly_layers >= 2,
                "at least 2",
            ),
            (
                "jelly_density",
                self.jelly_density,
                positive(self.jelly_density),
                "finite and > 0 (kg/m³)",
            ),
            (
                "spacing",
                self.spacing,
                self.spacing.is_finite() && self.spacing > 2.0 * self.jelly_radius,
                "finite and more than a jelly's diameter (m)",
            ),
            (
                "gap",
                self.gap,
                self.gap.is_finite() && self.gap >= 0.0,
                "finite and ≥ 0 (m)",
            ),
            (
                "bar_size",
                self.bar_size.iter().copied().fold(f64::INFINITY, f64::min),
                self.bar_size.iter().all(|&v| positive(v)),
                "each finite and > 0 (m)",
            ),
            (
                "bar_density",
                self.bar_density,
                positive(self.bar_density),
                "finite and > 0 (kg/m³)",
            ),
            (
                "dish_size",
                self.dish_size.iter().copied().fold(f64::INFINITY, f64::min),
                self.dish_size.iter().all(|&v| positive(v)),
                "each finite and > 0 (m)",
            ),
            (
                "friction",
                self.friction,
                self.friction.is_finite() && self.friction >= 0.0,
                "finite and ≥ 0",
            ),
            (
                "mass_spring_damping_ratio",
                self.mass_spring_damping_ratio,
                self.mass_spring_damping_ratio.is_finite() && self.mass_spring_damping_ratio >= 0.0,
                "finite and ≥ 0",
            ),
            (
                "xpbd_iterations",
                self.xpbd_iterations as f64,
                self.xpbd_iterations >= 1,
                "at least 1",
            ),
            (
                "implicit_iterations",
                self.implicit_iterations as f64,
                self.implicit_iterations >= 1,
                "at least 1",
            ),
        ];
        match fields.into_iter().find(|(_, _, ok, _)| !ok) {
            Some((field, value, _, expected)) => Err(Fig2Error::Parameter {
                field,
                value,
                expected,
            }),
            None => Ok(()),
        }
    }
}

/// Builds the Fig. 2 scene of `spec` (see [`Fig2Spec`]), gravity along −z:
/// the force-based jellies linearly implicit, the FEM jelly with stiffness
/// damping, every jelly's boundary its surface. Young's modulus, Poisson's
/// ratio and the shape-matching parameters are checked by the paradigms,
/// which name the jelly.
pub fn fig2_jellies(spec: &Fig2Spec) -> Result<Fig2Scene, Fig2Error> {
    spec.check()?;
    let implicit = match ForceIntegration::default() {
        ForceIntegration::LinearlyImplicit { tolerance, .. } => {
            ForceIntegration::LinearlyImplicit {
                max_iterations: spec.implicit_iterations,
                tolerance,
            }
        }
        explicit => explicit,
    };
    let material = DeformableMaterial {
        friction: spec.friction,
        thickness: 0.001,
        ..DeformableMaterial::default()
    };
    let names = ["mass_spring", "corotational_fem", "xpbd", "shape_matching"];
    let mut jellies = Vec::with_capacity(names.len());
    for (k, name) in names.into_iter().enumerate() {
        let pose = Isometry3::translation(
            (k as f64 - 1.5) * spec.spacing,
            0.0,
            spec.gap + material.thickness,
        );
        let mesh = topology::tet_cylinder(
            spec.jelly_rings,
            spec.jelly_layers,
            spec.jelly_radius,
            spec.jelly_height,
            &pose,
        );
        let masses = solid_masses(&mesh.positions, &mesh.tets, spec.jelly_density);
        let edges = || {
            let faces: Vec<[u32; 3]> = mesh
                .tets
                .iter()
                .flat_map(|t| {
                    [
                        [t[0], t[1], t[2]],
                        [t[0], t[1], t[3]],
                        [t[0], t[2], t[3]],
                        [t[1], t[2], t[3]],
                    ]
                })
                .collect();
            topology::edges(&faces, &mesh.positions)
        };
        let paradigm = match k {
            0 => Paradigm::MassSpring(MassSpring::from_young_modulus(
                &edges(),
                spec.young_modulus,
                spec.mass_spring_damping_ratio,
                masses.iter().sum::<f64>() / masses.len() as f64,
                implicit,
            )),
            1 => Paradigm::CorotationalFem(
                CorotationalFem::new(
                    name,
                    &mesh.positions,
                    &mesh.tets,
                    spec.young_modulus,
                    spec.poisson_ratio,
                    implicit,
                )?
                .with_damping(0.0, spec.fem_stiffness_damping),
            ),
            2 => Paradigm::Xpbd(Xpbd::new(
                name,
                &mesh.positions,
                edges(),
                mesh.tets.clone(),
                spec.young_modulus,
                spec.poisson_ratio,
                spec.xpbd_iterations,
                0.0,
            )?),
            _ => {
                let [stiffness, blend, damping] = spec.shape_matching;
                Paradigm::ShapeMatching(ShapeMatching::new(
                    name,
                    &mesh.positions,
                    &masses,
                    stiffness,
                    blend,
                    damping,
                )?)
            }
        };
        jellies.push(DeformableBody::new(
            name,
            mesh.positions.clone(),
            masses,
            mesh.surface.clone(),
            vec![],
            material,
            paradigm,
        )?);
    }
    let [dl, dw, dt] = spec.dish_size;
    let rigid_error = |e: &dyn std::fmt::Display| Fig2Error::Rigid(e.to_string());
    let mut dish = RigidBody::from_mesh(
        "dish",
        &box_mesh(Vector3::new(0.5 * dl, 0.5 * dw, 0.5 * dt)),
        1000.0,
        &Isometry3::translation(0.0, 0.0, -0.5 * dt),
        &GeometryResolution {
            field_resolution: 96,
            ..GeometryResolution::default()
        },
    )
    .map_err(|e| rigid_error(&e))?;
    if !spec.dish_on_ground {
        dish.model.motion = Motion::Static;
    }
    let [bl, bw, bt] = spec.bar_size;
    let jelly_top = spec.gap + material.thickness + spec.jelly_height;
    let mut bar = RigidBody::from_mesh(
        "bar",
        &box_mesh(Vector3::new(0.5 * bl, 0.5 * bw, 0.5 * bt)),
        spec.bar_density,
        &Isometry3::translation(
            0.0,
            0.0,
            jelly_top + spec.gap + material.thickness + 0.5 * bt,
        ),
        &GeometryResolution {
            field_resolution: 96,
            ..GeometryResolution::default()
        },
    )
    .map_err(|e| rigid_error(&e))?;
    for body in [&mut dish, &mut bar] {
        body.model.static_friction = spec.friction;
        body.model.dynamic_friction = spec.friction;
    }
    let mut bodies = vec![dish, bar];
    if spec.dish_on_ground {
        bodies.push(ground(-dt, dl.max(dw), spec.friction));
    }
    let rigid = World::new(
        bodies,
        vec![],
        WorldParameters {
            gravity: Vector3::new(0.0, 0.0, -9.81),
            ..WorldParameters::default()
        },
    )
    .map_err(|e| rigid_error(&e))?;
    Ok(Fig2Scene {
        rigid,
        jellies,
        dish: 0,
        bar: 1,
        ground: spec.dish_on_ground.then_some(2),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fig_2_scene_has_four_jellies_of_the_papers_size_and_refuses_a_bad_field() {
        let scene = fig2_jellies(&Fig2Spec::default()).unwrap();
        let names: Vec<&str> = scene
            .jellies
            .iter()
            .map(|j| j.model.paradigm.name())
            .collect();
        assert_eq!(
            names,
            ["mass_spring", "corotational_fem", "xpbd", "shape_matching"]
        );
        // The paper's four jellies hold 1,720 nodes.
        let nodes: usize = scene.jellies.iter().map(|j| j.state.positions.len()).sum();
        assert_eq!(nodes, 4 * 427);
        assert!(scene.rigid.bodies()[scene.bar].is_dynamic());
        assert!(scene.rigid.bodies()[scene.dish].is_dynamic());
        assert!(!scene.rigid.bodies()[scene.ground.unwrap()].is_dynamic());
        let fixed = fig2_jellies(&Fig2Spec {
            dish_on_ground: false,
            ..Fig2Spec::default()
        })
        .unwrap();
        assert!(!fixed.rigid.bodies()[fixed.dish].is_dynamic());
        assert_eq!(fixed.ground, None);
        let bar_mass = scene.rigid.bodies()[scene.bar].model.mass;
        assert!(
            (bar_mass - 0.5 * 0.04 * 0.02 * 1300.0).abs() < 1e-9,
            "{bar_mass}"
        );
        let error = fig2_jellies(&Fig2Spec {
            spacing: 0.08,
            ..Fig2Spec::default()
        })
        .err()
        .unwrap();
        assert!(error.to_string().contains("spacing = 0.08"), "{error}");
        let error = fig2_jellies(&Fig2Spec {
            poisson_ratio: 0.5,
            ..Fig2Spec::default()
        })
        .err()
        .unwrap();
        assert!(error.to_string().contains("poisson_ratio"), "{error}");
    }
}
