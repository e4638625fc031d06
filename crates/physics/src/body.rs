//! Rigid bodies: mass properties from closed meshes, the body frame at the
//! centre of mass, each body's model ([`RigidBodyModel`], what it is) apart
//! from its state ([`RigidBodyState`], where it is and how it moves: what
//! the integrators advance, Xu, Zhao & Barbič eq 1, with velocities in
//! place of momenta).
//!
//! The world holds its rigid bodies in one array, indexed by the contacts,
//! joints and islands; the crate's documentation says where a deformable
//! kind of body would sit beside them.

use haptic_contact::{SharedField, ShellTree};
use haptic_mesh::{Aabb, TriangleMesh};
use haptic_pointshell::{sample_point_shell, spacing_for_count};
use haptic_sdf::{DenseField, DenseOptions, NoProgress};
use nalgebra::{Isometry3, Matrix3, Point3, Translation3, UnitQuaternion, Vector3};
use parry3d_f64::glamx::DVec3;
use parry3d_f64::mass_properties::MassProperties as ParryMassProperties;
use std::sync::Arc;

/// Mass, centre of mass and inertia of a solid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MassProperties {
    /// kg.
    pub mass: f64,
    /// The centre of mass in the mesh file's frame (m).
    pub centre_of_mass: Point3<f64>,
    /// Inertia about the centre of mass, along the mesh file's axes (kg·m²).
    pub inertia: Matrix3<f64>,
    /// m³.
    pub volume: f64,
}

/// Why a mesh cannot give mass properties.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MassError {
    #[error(
        "the mesh is open ({boundary_edges} boundary edges): mass properties need a closed surface"
    )]
    Open { boundary_edges: usize },
    #[error(
        "the mesh encloses a volume of {volume:e} m³, not positive (empty, flat or inside out)"
    )]
    NonPositiveVolume { volume: f64 },
    #[error("density {0} kg/m³ is not positive and finite")]
    InvalidDensity(f64),
}

/// Mass properties of the solid `mesh` bounds at `density` (kg/m³), through
/// parry3d's signed-tetrahedron integration. The mesh must be closed
/// (every edge shared by exactly two triangles) and outward oriented.
pub fn mass_properties(mesh: &TriangleMesh, density: f64) -> Result<MassProperties, MassError> {
    if !(density > 0.0 && density.is_finite()) {
        return Err(MassError::InvalidDensity(density));
    }
    let boundary_edges = boundary_edge_count(mesh);
    if boundary_edges > 0 {
        return Err(MassError::Open { boundary_edges });
    }
    let vertices: Vec<DVec3> = mesh
        .vertices
        .iter()
        .map(|v| DVec3::new(v.x, v.y, v.z))
        .collect();
    let (volume, _) =
        parry3d_f64::mass_properties::details::trimesh_signed_volume_and_center_of_mass(
            &vertices,
            &mesh.triangles,
        );
    let scale = mesh.aabb().extents().norm().max(f64::MIN_POSITIVE);
    if volume.is_nan() || volume <= 1e-12 * scale.powi(3) {
        return Err(MassError::NonPositiveVolume { volume });
    }
    let parry = ParryMassProperties::from_trimesh(density, &vertices, &mesh.triangles);
    let com = parry.local_com;
    let i = parry.reconstruct_inertia_matrix();
    let inertia = Matrix3::from_fn(|r, c| i.col(c)[r]);
    Ok(MassProperties {
        mass: parry.mass(),
        centre_of_mass: Point3::new(com.x, com.y, com.z),
        inertia: (inertia + inertia.transpose()) * 0.5,
        volume,
    })
}

/// Edges not shared by exactly two triangles (0 for a closed manifold).
fn boundary_edge_count(mesh: &TriangleMesh) -> usize {
    let mut edges: std::collections::HashMap<(u32, u32), i32> = std::collections::HashMap::new();
    for t in &mesh.triangles {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            *edges.entry((a.min(b), a.max(b))).or_default() += 1;
        }
    }
    edges.values().filter(|&&count| count != 2).count()
}

/// A body's contact geometry in its body frame (origin at the centre of
/// mass): a point shell for its points in others' fields, a field for
/// others' points in it (Xu et al. §4.1: every body carries both).
#[derive(Clone)]
pub struct BodyGeometry {
    pub shell: Arc<ShellTree>,
    pub field: SharedField,
    /// Bounds of the shell and of the field's zero level set, body frame.
    pub bounds: Aabb,
}

/// How finely a body's contact geometry is sampled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GeometryResolution {
    /// Points in the point shell (about).
    pub shell_points: usize,
    /// Levels of its nested point tree.
    pub tree_levels: usize,
    /// Nodes of the dense field along the longest side.
    pub field_resolution: u32,
}

impl Default for GeometryResolution {
    fn default() -> Self {
        Self {
            shell_points: 1000,
            tree_levels: 4,
            field_resolution: 48,
        }
    }
}

impl BodyGeometry {
    /// The farthest any shell point or mesh vertex lies from the body
    /// frame's origin, at most (m): the farthest corner of `bounds`.
    pub fn reach(&self) -> f64 {
        self.bounds.farthest_from_origin()
    }

    /// The point shell and dense field of `mesh`, which is already in the
    /// body frame.
    pub fn of_mesh(mesh: &TriangleMesh, resolution: &GeometryResolution) -> Self {
        let shell = sample_point_shell(mesh, spacing_for_count(mesh, resolution.shell_points), 7);
        let bounds = Aabb::from_points(&shell.points).merge(&mesh.aabb());
        let field = DenseField::build(
            mesh,
            &DenseOptions {
                resolution: resolution.field_resolution,
                ..DenseOptions::default()
            },
            &NoProgress,
        );
        Self {
            shell: Arc::new(ShellTree::build(shell, resolution.tree_levels)),
            field: Arc::new(field),
            bounds,
        }
    }
}

/// A mesh moved into its body frame: the centre of mass at the origin, the
/// axes those of the file.
pub fn centred(mesh: &TriangleMesh, centre_of_mass: &Point3<f64>) -> TriangleMesh {
    TriangleMesh::new(
        mesh.vertices
            .iter()
            .map(|v| v - centre_of_mass.coords)
            .collect(),
        mesh.triangles.clone(),
    )
}

/// Whether the integrators move a body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Motion {
    /// Moved by forces, contacts and joints.
    Dynamic,
    /// Fixed in the world (the environment): infinite mass.
    Static,
}

/// What a rigid body is: its name, whether it moves, its mass properties,
/// contact geometry and friction. Nothing in it changes as the world steps.
#[derive(Clone)]
pub struct RigidBodyModel {
    pub name: String,
    pub motion: Motion,
    /// kg.
    pub mass: f64,
    /// Inertia about the centre of mass along the body axes (kg·m²).
    pub body_inertia: Matrix3<f64>,
    pub geometry: Option<BodyGeometry>,
    /// Coulomb coefficients against other bodies (a pair uses the geometric
    /// mean of its two bodies', see
    /// [`pair_friction`](crate::friction_anchors::pair_friction)).
    pub static_friction: f64,
    pub dynamic_friction: f64,
}

/// Where a rigid body is and how it moves: what the integrators advance,
/// an undone substep restores and a snapshot publishes (Xu, Zhao & Barbič
/// eq 1, with velocities in place of momenta).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RigidBodyState {
    /// Body frame → world.
    pub pose: Isometry3<f64>,
    /// Centre-of-mass velocity, world frame (m/s).
    pub velocity: Vector3<f64>,
    /// World frame (rad/s).
    pub angular_velocity: Vector3<f64>,
}

impl RigidBodyState {
    /// At `pose`, at rest.
    pub fn at_rest(pose: Isometry3<f64>) -> RigidBodyState {
        RigidBodyState {
            pose,
            velocity: Vector3::zeros(),
            angular_velocity: Vector3::zeros(),
        }
    }
}

/// One rigid body, its frame's origin at the centre of mass: its model and
/// its state.
#[derive(Clone)]
pub struct RigidBody {
    pub model: RigidBodyModel,
    pub state: RigidBodyState,
}

impl RigidBody {
    /// A dynamic body of the solid `mesh` bounds at `density`, whose file
    /// frame sits at `mesh_pose` in the world: its body frame is at the
    /// centre of mass, so it turns about that and not about the file's
    /// origin. Friction coefficients start at 0.
    pub fn from_mesh(
        name: &str,
        mesh: &TriangleMesh,
        density: f64,
        mesh_pose: &Isometry3<f64>,
        resolution: &GeometryResolution,
    ) -> Result<Self, MassError> {
        let properties = mass_properties(mesh, density)?;
        let body_mesh = centred(mesh, &properties.centre_of_mass);
        Ok(Self {
            model: RigidBodyModel {
                name: name.to_string(),
                motion: Motion::Dynamic,
                mass: properties.mass,
                body_inertia: properties.inertia,
                geometry: Some(BodyGeometry::of_mesh(&body_mesh, resolution)),
                static_friction: 0.0,
                dynamic_friction: 0.0,
            },
            state: RigidBodyState::at_rest(
                mesh_pose * Translation3::from(properties.centre_of_mass.coords),
            ),
        })
    }

    pub fn is_dynamic(&self) -> bool {
        self.model.motion == Motion::Dynamic
    }

    /// World-frame inertia `R I Rᵀ`.
    pub fn world_inertia(&self) -> Matrix3<f64> {
        let r = self.state.pose.rotation.to_rotation_matrix();
        r.matrix() * self.model.body_inertia * r.matrix().transpose()
    }

    /// `(R I Rᵀ)⁻¹`; zero for a static body.
    pub fn world_inverse_inertia(&self) -> Matrix3<f64> {
        if !self.is_dynamic() {
            return Matrix3::zeros();
        }
        let r = self.state.pose.rotation.to_rotation_matrix();
        let inverse = self
            .model
            .body_inertia
            .try_inverse()
            .unwrap_or_else(Matrix3::zeros);
        r.matrix() * inverse * r.matrix().transpose()
    }

    /// `1/m`; zero for a static body.
    pub fn inverse_mass(&self) -> f64 {
        if self.is_dynamic() {
            1.0 / self.model.mass
        } else {
            0.0
        }
    }

    /// Angular momentum about the centre of mass, world frame (N·m·s).
    pub fn angular_momentum(&self) -> Vector3<f64> {
        self.world_inertia() * self.state.angular_velocity
    }

    /// Kinetic energy (J).
    pub fn kinetic_energy(&self) -> f64 {
        0.5 * self.model.mass * self.state.velocity.norm_squared()
            + 0.5 * self.state.angular_velocity.dot(&self.angular_momentum())
    }

    /// Velocity of the body point at world position `p` (m/s).
    pub fn point_velocity(&self, p: &Point3<f64>) -> Vector3<f64> {
        self.state.velocity
            + self
                .state
                .angular_velocity
                .cross(&(p - self.state.pose.translation.vector).coords)
    }

    /// Advances the pose by `dt` at the current velocities:
    /// `x ← x + dt v`, `R ← exp(dt ω) R`.
    pub fn advance_pose(&mut self, dt: f64) {
        self.displace(
            &(dt * self.state.velocity),
            &(dt * self.state.angular_velocity),
        );
    }

    /// Moves the pose by `x ← x + δx`, `R ← exp([δθ]×) R` (the perturbation
    /// the joints' and contacts' gradients are taken under).
    pub fn displace(&mut self, dx: &Vector3<f64>, dtheta: &Vector3<f64>) {
        let translation = self.state.pose.translation.vector + dx;
        let rotation = UnitQuaternion::from_scaled_axis(*dtheta) * self.state.pose.rotation;
        self.state.pose = Isometry3::from_parts(Translation3::from(translation), rotation);
    }

    /// The world-frame bounds of its geometry, if any.
    pub fn world_bounds(&self) -> Option<Aabb> {
        let geometry = self.model.geometry.as_ref()?;
        let b = &geometry.bounds;
        let corners: [Point3<f64>; 8] = std::array::from_fn(|k| {
            self.state.pose
                * Point3::new(
                    if k & 1 == 0 { b.min.x } else { b.max.x },
                    if k & 2 == 0 { b.min.y } else { b.max.y },
                    if k & 4 == 0 { b.min.z } else { b.max.z },
                )
        });
        Some(Aabb::from_points(&corners))
    }

    /// Whether this body's and `other`'s bounds, each a box in its own
    /// frame grown by `margin`, overlap: the separating axis test of two
    /// oriented boxes (their 3 + 3 face normals and 9 edge cross products).
    /// Every shell point and the field's zero level set lie in a body's
    /// bounds, so bodies whose boxes are apart by more than a detection
    /// margin have no contact within it.
    pub fn bounds_overlap(&self, other: &RigidBody, margin: f64) -> bool {
        let (Some(ga), Some(gb)) = (&self.model.geometry, &other.model.geometry) else {
            return false;
        };
        let grown = Vector3::repeat(margin);
        let (ea, eb) = (
            ga.bounds.extents() / 2.0 + grown,
            gb.bounds.extents() / 2.0 + grown,
        );
        let ra = self.state.pose.rotation.to_rotation_matrix().into_inner();
        let rb = other.state.pose.rotation.to_rotation_matrix().into_inner();
        // B's axes and centre in A's box frame.
        let r = ra.transpose() * rb;
        let t = ra.transpose()
            * ((other.state.pose * gb.bounds.center()) - (self.state.pose * ga.bounds.center()));
        // Near-parallel edges make the cross products vanish: pad |r|.
        let abs_r = r.abs().add_scalar(1e-12);
        for i in 0..3 {
            if t[i].abs() > ea[i] + abs_r.row(i).transpose().dot(&eb) {
                return false;
            }
        }
        for j in 0..3 {
            if t.dot(&r.column(j)).abs() > ea.dot(&abs_r.column(j)) + eb[j] {
                return false;
            }
        }
        for i in 0..3 {
            let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
            for j in 0..3 {
                let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
                let reach_a = ea[i1] * abs_r[(i2, j)] + ea[i2] * abs_r[(i1, j)];
                let reach_b = eb[j1] * abs_r[(i, j2)] + eb[j2] * abs_r[(i, j1)];
                if (t[i2] * r[(i1, j)] - t[i1] * r[(i2, j)]).abs() > reach_a + reach_b {
                    return false;
                }
            }
        }
        true
    }

    /// Whether every state quantity is finite.
    pub fn is_finite(&self) -> bool {
        self.state.velocity.iter().all(|v| v.is_finite())
            && self.state.angular_velocity.iter().all(|v| v.is_finite())
            && self
                .state
                .pose
                .translation
                .vector
                .iter()
                .all(|v| v.is_finite())
            && self
                .state
                .pose
                .rotation
                .coords
                .iter()
                .all(|v| v.is_finite())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use haptic_mesh::shapes::box_mesh;
    use parry3d_f64::glamx::{DPose3, DQuat, DVec3};
    use parry3d_f64::query::intersection_test;
    use parry3d_f64::shape::Cuboid;
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    fn coarse() -> GeometryResolution {
        GeometryResolution {
            shell_points: 100,
            tree_levels: 2,
            field_resolution: 8,
        }
    }

    /// The oriented-box test against parry's cuboid intersection, on boxes
    /// of random sizes at random poses near each other (both overlapping
    /// and apart, with and without a margin).
    #[test]
    fn oriented_bounds_overlap_as_parrys_cuboids_do() {
        let mut rng = Pcg64::seed_from_u64(3);
        let random_box = |rng: &mut Pcg64| {
            let half = Vector3::new(
                rng.gen_range(0.01..0.06),
                rng.gen_range(0.01..0.06),
                rng.gen_range(0.01..0.06),
            );
            let axis = Vector3::new(rng.gen(), rng.gen(), rng.gen()) - Vector3::repeat(0.5);
            let pose = Isometry3::from_parts(
                Translation3::new(
                    rng.gen_range(-0.08..0.08),
                    rng.gen_range(-0.08..0.08),
                    rng.gen_range(-0.08..0.08),
                ),
                UnitQuaternion::from_scaled_axis(axis * 6.0),
            );
            RigidBody::from_mesh("box", &box_mesh(half), 1000.0, &pose, &coarse()).unwrap()
        };
        let parry = |body: &RigidBody, margin: f64| {
            let b = body.model.geometry.as_ref().unwrap().bounds;
            let half = b.extents() / 2.0 + Vector3::repeat(margin);
            let centre = body.state.pose * b.center();
            let q = body.state.pose.rotation;
            (
                DPose3::from_parts(
                    DVec3::new(centre.x, centre.y, centre.z),
                    DQuat::from_xyzw(q.i, q.j, q.k, q.w),
                ),
                Cuboid::new(DVec3::new(half.x, half.y, half.z)),
            )
        };
        let (mut overlapping, mut apart) = (0, 0);
        for _ in 0..2000 {
            let (a, b) = (random_box(&mut rng), random_box(&mut rng));
            // Each box grown by the margin, as bounds_overlap grows both.
            let margin = if rng.gen_bool(0.5) { 0.0 } else { 0.005 };
            let (pa, ca) = parry(&a, margin);
            let (pb, cb) = parry(&b, margin);
            let reference = intersection_test(&pa, &ca, &pb, &cb).unwrap().intersecting;
            assert_eq!(
                a.bounds_overlap(&b, margin),
                reference,
                "{:?} {:?}",
                a.state.pose,
                b.state.pose
            );
            if reference {
                overlapping += 1;
            } else {
                apart += 1;
            }
        }
        assert!(overlapping > 300 && apart > 300, "{overlapping} / {apart}");
    }
}
