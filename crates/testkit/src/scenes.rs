//! Contact scenes for the contact and rendering tests: shells and fields of
//! spheres, tori and boxes, random poses, and the finite-difference check of
//! a scene's stiffness.

use crate::fields::{HalfSpaceField, SphereField};
use crate::jacobian_check::pose_jacobian;
use haptic_contact::{
    total_stiffness, total_wrench, ContactScene, EnvironmentGeometry, EnvironmentObject,
    ForceDirection, GradientModel, PenaltyParameters, SharedField, ShellTree, StiffnessScaling,
    ToolGeometry,
};
use haptic_core::Matrix6;
use haptic_mesh::shapes::{box_mesh, icosphere, torus};
use haptic_mesh::Aabb;
use haptic_pointshell::{sample_point_shell, spacing_for_count, PointShell, TraversalBudget};
use haptic_sdf::DistanceField;
use nalgebra::{Isometry3, Point3, Translation3, UnitQuaternion, Vector3};
use rand::Rng;
use rand_pcg::Pcg64;
use std::sync::Arc;

/// A solid torus about the z axis: tube centre radius `major`, tube radius
/// `minor`. Exact distance, smooth away from the tube's core circle and the axis.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TorusField {
    pub major: f64,
    pub minor: f64,
}

impl DistanceField for TorusField {
    fn value(&self, p: &Point3<f64>) -> f64 {
        self.value_gradient(p).0
    }

    fn value_gradient(&self, p: &Point3<f64>) -> (f64, Vector3<f64>) {
        let rho = p.x.hypot(p.y);
        let (qr, qz) = (rho - self.major, p.z);
        let q = qr.hypot(qz);
        let gradient = Vector3::new(qr * p.x / rho, qr * p.y / rho, qz) / q;
        (q - self.minor, gradient)
    }

    fn bounds(&self) -> Aabb {
        let e = 2.0 * (self.major + self.minor);
        Aabb {
            min: Point3::new(-e, -e, -e),
            max: Point3::new(e, e, e),
        }
    }

    fn lipschitz_bound(&self) -> f64 {
        1.0
    }
}

pub fn random_rotation(rng: &mut Pcg64) -> UnitQuaternion<f64> {
    let axis = Vector3::new(rng.gen(), rng.gen(), rng.gen()) * 2.0 - Vector3::repeat(1.0);
    UnitQuaternion::from_scaled_axis(axis * std::f64::consts::PI)
}

/// An isometry taking the frame's +z axis to `z` and its origin to `origin`.
pub fn frame_with_z(z: &Vector3<f64>, origin: &Vector3<f64>, spin: f64) -> Isometry3<f64> {
    let align = UnitQuaternion::rotation_between(&Vector3::z(), z).unwrap_or_else(|| {
        UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI)
    });
    let rotation = align * UnitQuaternion::from_axis_angle(&Vector3::z_axis(), spin);
    Isometry3::from_parts(Translation3::from(*origin), rotation)
}

/// Points on a sphere (Fibonacci spiral) with exactly radial normals.
pub fn radial_sphere_shell(radius: f64, count: usize) -> PointShell {
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    let mut shell = PointShell::default();
    for i in 0..count {
        let z = 1.0 - 2.0 * (i as f64 + 0.5) / count as f64;
        let s = (1.0 - z * z).sqrt();
        let phi = golden * i as f64;
        let u = Vector3::new(s * phi.cos(), s * phi.sin(), z);
        shell.points.push(Point3::from(u * radius));
        shell.outward_normals.push(u);
    }
    shell
}

/// A square grid of `side × side` points spaced `spacing` parallel to the
/// xy plane, normals +z, centred on `center`.
pub fn flat_patch_shell(side: usize, spacing: f64, center: &Vector3<f64>) -> PointShell {
    let mut shell = PointShell::default();
    let half = 0.5 * (side as f64 - 1.0) * spacing;
    for i in 0..side {
        for j in 0..side {
            shell.points.push(Point3::from(
                Vector3::new(i as f64 * spacing - half, j as f64 * spacing - half, 0.0) + center,
            ));
            shell.outward_normals.push(Vector3::z());
        }
    }
    shell
}

pub fn mesh_shell(mesh: &haptic_mesh::TriangleMesh, count: usize, levels: usize) -> Arc<ShellTree> {
    Arc::new(ShellTree::build(
        sample_point_shell(mesh, spacing_for_count(mesh, count), 7),
        levels,
    ))
}

pub const MAJOR: f64 = 0.05;
pub const MINOR: f64 = 0.02;

/// The moving torus of [`mixed_scene`]: its shell (role A) and field (role B).
pub fn moving_torus() -> ToolGeometry {
    let field: SharedField = Arc::new(TorusField {
        major: MAJOR,
        minor: MINOR,
    });
    ToolGeometry {
        shell: Some(mesh_shell(&torus(MAJOR, MINOR, 96, 48), 4000, 7)),
        field: Some(field),
    }
}

/// A point on the moving torus surface (body frame) and its outward normal:
/// angle `around` along the ring, `tube` around the tube.
pub fn torus_anchor(around: f64, tube: f64) -> (Point3<f64>, Vector3<f64>) {
    let radial = Vector3::new(around.cos(), around.sin(), 0.0);
    let normal = radial * tube.cos() + Vector3::z() * tube.sin();
    (Point3::from(radial * MAJOR + normal * MINOR), normal)
}

/// A moving torus (point shell and analytic field) at `pose`, touching four
/// environment objects at once, each by about `depth`: a half-space and a
/// ball field (role A), a ball point shell and a slab point shell (role B),
/// at places and turns drawn from `rng`, role A's forces along `direction`.
pub fn mixed_scene(
    pose: &Isometry3<f64>,
    depth: f64,
    scaling: StiffnessScaling,
    direction: ForceDirection,
    rng: &mut Pcg64,
) -> ContactScene {
    let mut anchor = |around: f64, tube: f64| {
        let (s, n) = torus_anchor(
            around + rng.gen_range(-0.3..0.3),
            tube + rng.gen_range(-0.3..0.3),
        );
        (pose * s, pose.rotation * n)
    };
    let sites = [
        anchor(0.3, 0.0),
        anchor(2.2, 1.2),
        anchor(4.0, -1.0),
        anchor(5.3, 0.2),
    ];
    let mut environment = Vec::new();
    // Role A: a half-space whose boundary cuts the outer side of the tube.
    let (s, n) = sites[0];
    environment.push(EnvironmentObject {
        pose: frame_with_z(&-n, &(s.coords - n * depth), rng.gen_range(0.0..6.0)),
        geometry: EnvironmentGeometry::Field(Arc::new(HalfSpaceField {
            normal: Vector3::z(),
            offset: 0.0,
        })),
        friction_coefficient: 0.3,
    });
    // Role A: a ball on top of the tube.
    let (s, n) = sites[1];
    let radius = 0.03;
    environment.push(EnvironmentObject {
        pose: Isometry3::from_parts(
            Translation3::from(s.coords + n * (radius - depth)),
            random_rotation(rng),
        ),
        geometry: EnvironmentGeometry::Field(Arc::new(SphereField {
            center: Point3::origin(),
            radius,
        })),
        friction_coefficient: 0.5,
    });
    // Role B: a ball's point shell under the tube.
    let (s, n) = sites[2];
    environment.push(EnvironmentObject {
        pose: Isometry3::from_parts(
            Translation3::from(s.coords + n * (0.025 - depth)),
            random_rotation(rng),
        ),
        geometry: EnvironmentGeometry::Shell(mesh_shell(&icosphere(0.025, 4), 3000, 6)),
        friction_coefficient: 0.7,
    });
    // Role B: a slab's point shell against the outer side of the tube.
    let (s, n) = sites[3];
    let half = Vector3::new(0.03, 0.03, 0.005);
    environment.push(EnvironmentObject {
        pose: frame_with_z(
            &-n,
            &(s.coords + n * (half.z - depth)),
            rng.gen_range(0.0..6.0),
        ),
        geometry: EnvironmentGeometry::Shell(mesh_shell(&box_mesh(half), 3000, 6)),
        friction_coefficient: 0.2,
    });
    ContactScene::new(
        moving_torus(),
        environment,
        PenaltyParameters {
            stiffness: 2000.0,
            scaling,
            direction,
        },
    )
    .unwrap()
}

/// The four 3×3 blocks `∂F/∂x, ∂F/∂θ, ∂τ/∂x, ∂τ/∂θ`.
/// The contacts' identities, to keep a stencil on one contact set.
fn contact_keys(scene: &ContactScene) -> Vec<(u32, u32)> {
    let mut keys: Vec<_> = scene
        .contacts()
        .iter()
        .map(|c| (c.environment, c.point))
        .collect();
    keys.sort_unstable();
    keys
}

/// Central differences of the summed contact wrench at `pose` (steps `h_x` m
/// along x and `h_theta` rad about each axis), or `None` when `signature` of
/// the scene changes inside the stencil: the analytic gradient holds for a
/// fixed contact set, and `signature` says what must stay fixed (which
/// contacts, and perhaps which voxel each lies in). The scene is left
/// evaluated at `pose`.
pub fn finite_difference_stiffness<S: PartialEq>(
    scene: &mut ContactScene,
    pose: &Isometry3<f64>,
    h_x: f64,
    h_theta: f64,
    signature: impl Fn(&ContactScene) -> S,
) -> Option<Matrix6> {
    let budget = TraversalBudget::default();
    scene.evaluate(pose, budget);
    let reference = signature(scene);
    let fd = pose_jacobian(pose, h_x, h_theta, |at| {
        scene.evaluate(at, budget);
        (signature(scene) == reference).then(|| total_wrench(scene.contacts()))
    });
    scene.evaluate(pose, budget);
    fd
}

/// The analytic stiffness at `pose` and central differences of the summed
/// contact wrench (steps `h_x` m, `h_theta` rad), or `None` if the contact
/// set changes inside the stencil.
pub fn finite_difference_check(
    scene: &mut ContactScene,
    pose: &Isometry3<f64>,
    model: GradientModel,
    h_x: f64,
    h_theta: f64,
) -> Option<(Matrix6, Matrix6)> {
    let fd = finite_difference_stiffness(scene, pose, h_x, h_theta, contact_keys)?;
    Some((total_stiffness(scene.contacts(), model), fd))
}

/// A random pose near the origin.
pub fn random_pose(rng: &mut Pcg64) -> Isometry3<f64> {
    let t = Vector3::new(rng.gen(), rng.gen(), rng.gen()) * 0.2 - Vector3::repeat(0.1);
    Isometry3::from_parts(Translation3::from(t), random_rotation(rng))
}
