//! The paper's scenes and the law checks' fixtures, built in code so that
//! tests, benchmarks and configuration share one definition.

use crate::body::{sheet_masses, DeformableBody, DeformableError, DeformableMaterial};
use crate::paradigms::{ForceIntegration, MassSpring, Paradigm, Spring};
use crate::topology::{self, Sheet};
use haptic_mesh::shapes::{box_mesh, icosphere};
use haptic_physics::{GeometryResolution, Motion, RigidBody, World, WorldParameters};
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};

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
