//! The paper's scenes and the law checks' fixtures, built in code so that
//! tests, benchmarks and configuration share one definition.

use crate::body::{sheet_masses, DeformableBody, DeformableError, DeformableMaterial};
use crate::constraints::anchor::{Anchor, AnchorTarget};
use crate::paradigms::{ForceIntegration, MassSpring, Paradigm, Spring};
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
