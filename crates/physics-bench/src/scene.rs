//! The piles both benchmarks drop: real meshes from the fetched test data,
//! each body's frame at its centre of mass, laid out on a grid of cells
//! above a static floor with seeded random orientations, so that every
//! engine and every step starts from the same configuration.

use haptic_mesh::shapes::box_mesh;
use haptic_mesh::{load_mesh, LoadOptions, TriangleMesh};
use haptic_physics::{
    centred, mass_properties, ContactParameters, DampingMode, GeometryResolution, Integrator,
    MassProperties, Motion, RigidBody, WorldParameters,
};
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::path::{Path, PathBuf};

/// kg/m³ of every body (a dense plastic).
pub const DENSITY: f64 = 1000.0;
/// Coulomb coefficient of every pair, static and dynamic, in both engines.
pub const FRICTION: f64 = 0.5;
/// m/s², along −z.
pub const GRAVITY: f64 = 9.81;
/// Half extents of the floor box (m); its top face is `z = 0`. Wide
/// enough that a mug rolling on its side for the whole run stays on it,
/// thick enough that its field is the top face's plane well below it.
pub const FLOOR_HALF_EXTENTS: [f64; 3] = [2.0, 2.0, 0.25];
/// Seed of the orientations and offsets.
const SEED: u64 = 2014;

/// A body shape: its mesh in the body frame (centre of mass at the origin)
/// and its mass properties.
pub struct Shape {
    pub name: &'static str,
    pub mesh: TriangleMesh,
    pub mass: MassProperties,
    /// Distance of the farthest vertex from the centre of mass (m).
    pub radius: f64,
}

impl Shape {
    /// Loads `file` from the mesh directory, scaled by `scale`, and centres it.
    fn load(name: &'static str, directory: &Path, file: &str, scale: f64) -> Result<Shape, String> {
        let path = directory.join(file);
        let loaded = load_mesh(
            &path,
            &LoadOptions {
                scale,
                ..LoadOptions::default()
            },
        )
        .map_err(|e| format!("{e} (run scripts/fetch-test-data)"))?;
        let mass = mass_properties(&loaded.mesh, DENSITY)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let mesh = centred(&loaded.mesh, &mass.centre_of_mass);
        let radius = mesh
            .vertices
            .iter()
            .map(|v| v.coords.norm())
            .fold(0.0, f64::max);
        Ok(Shape {
            name,
            mesh,
            mass,
            radius,
        })
    }
}

/// Which shapes a pile mixes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mix {
    /// metaworld's mug only (Xu et al.'s Fig. 11 drops bowls).
    Mugs,
    /// Mugs, cubes and tori in turn.
    MugsCubesTori,
}

/// A pile: shapes, which shape each dynamic body is, their initial poses
/// (centre-of-mass frames), and the floor.
pub struct Scene {
    pub shapes: Vec<Shape>,
    pub body_shapes: Vec<usize>,
    pub initial_poses: Vec<Isometry3<f64>>,
    /// The penetration bound of the stability test (m).
    pub penetration_bound: f64,
    /// What the bound is, for the output.
    pub penetration_bound_basis: String,
    /// The most a body's surface may move in one step (m).
    pub motion_bound: f64,
}

/// metaworld's mug wall, measured on the mesh: the side wall is 5.9 mm
/// thick (outer radius 27.0 mm, inner 21.1 mm).
pub const MUG_WALL: f64 = 5.9e-3;

/// The fetched meshes' directory: `$HAPTICD_TEST_DATA/meshes`, else
/// `$HOME/.cache/hapticd/test-data/meshes`.
pub fn mesh_directory() -> PathBuf {
    let root = std::env::var_os("HAPTICD_TEST_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/hapticd/test-data")
        });
    root.join("meshes")
}

impl Scene {
    /// `count` bodies of `mix`, on a grid of `columns × columns` cells per
    /// layer, the lowest layer's cells 1 cm above the floor.
    pub fn pile(mix: Mix, count: usize, columns: usize, directory: &Path) -> Result<Scene, String> {
        let mug = Shape::load("mug", directory, "metaworld-mug.stl", 1.0)?;
        let shapes = match mix {
            Mix::Mugs => vec![mug],
            Mix::MugsCubesTori => vec![
                mug,
                // pybullet's unit cube and 1.5 m torus, scaled to mug size.
                Shape::load("cube", directory, "pybullet-cube.obj", 0.06)?,
                Shape::load("torus", directory, "pybullet-torus.obj", 0.06)?,
            ],
        };
        let body_shapes: Vec<usize> = (0..count).map(|i| i % shapes.len()).collect();
        let radius = shapes.iter().map(|s| s.radius).fold(0.0, f64::max);
        let jitter = 0.1 * radius;
        let cell = 2.0 * (radius + jitter) + 0.005;
        let mut random = Pcg64::seed_from_u64(SEED);
        let initial_poses = (0..count)
            .map(|i| {
                let (layer, slot) = (i / (columns * columns), i % (columns * columns));
                let centre = |k: usize| (k as f64 - (columns as f64 - 1.0) / 2.0) * cell;
                let offset = Vector3::new(
                    random.gen_range(-jitter..jitter),
                    random.gen_range(-jitter..jitter),
                    0.0,
                );
                let position = Vector3::new(
                    centre(slot % columns),
                    centre(slot / columns),
                    0.01 + radius + jitter + layer as f64 * cell,
                ) + offset;
                let axis = Vector3::new(
                    random.gen_range(-1.0..1.0),
                    random.gen_range(-1.0..1.0),
                    random.gen_range(-1.0..1.0),
                );
                let angle = random.gen_range(0.0..std::f64::consts::PI);
                Isometry3::from_parts(
                    Translation3::from(position),
                    UnitQuaternion::from_scaled_axis(axis.normalize() * angle),
                )
            })
            .collect();
        Ok(Scene {
            shapes,
            body_shapes,
            initial_poses,
            penetration_bound: 0.5 * MUG_WALL,
            penetration_bound_basis: format!(
                "half the mug wall ({:.1} mm): deeper, a shell point is nearer the wall's far side and is pushed through",
                MUG_WALL * 1e3
            ),
            motion_bound: 0.5 * MUG_WALL,
        })
    }

    pub fn len(&self) -> usize {
        self.body_shapes.len()
    }

    pub fn mass(&self, body: usize) -> f64 {
        self.shapes[self.body_shapes[body]].mass.mass
    }

    /// Gravitational potential energy of the dynamic bodies at `poses`
    /// relative to their centres of mass on the floor's top face (J).
    pub fn potential_energy(&self, poses: &[Isometry3<f64>]) -> f64 {
        poses
            .iter()
            .enumerate()
            .map(|(i, p)| self.mass(i) * GRAVITY * p.translation.vector.z)
            .sum()
    }

    /// The largest distance any surface point of dynamic body `body` moved
    /// from `before` to `after`: `|Δx| + θ r`, `θ` the rotation's angle and
    /// `r` the body's farthest vertex from its centre of mass.
    pub fn surface_motion(
        &self,
        body: usize,
        before: &Isometry3<f64>,
        after: &Isometry3<f64>,
    ) -> f64 {
        let radius = self.shapes[self.body_shapes[body]].radius;
        (after.translation.vector - before.translation.vector).norm()
            + after.rotation.angle_to(&before.rotation) * radius
    }

    /// Our world's bodies: the dynamic bodies (one contact geometry per
    /// shape, shared), then the static floor.
    pub fn bodies(&self, geometry: &Geometry) -> Vec<RigidBody> {
        let prototypes: Vec<RigidBody> = self
            .shapes
            .iter()
            .map(|s| {
                let mut body = RigidBody::from_mesh(
                    s.name,
                    &s.mesh,
                    DENSITY,
                    &Isometry3::identity(),
                    &geometry.body,
                )
                .expect("mass properties were checked at load");
                body.model.static_friction = FRICTION;
                body.model.dynamic_friction = FRICTION;
                body
            })
            .collect();
        let mut bodies: Vec<RigidBody> = self
            .body_shapes
            .iter()
            .zip(&self.initial_poses)
            .enumerate()
            .map(|(i, (&s, pose))| {
                let mut body = prototypes[s].clone();
                body.model.name = format!("{}-{i}", self.shapes[s].name);
                body.state.pose = *pose;
                body
            })
            .collect();
        let h = FLOOR_HALF_EXTENTS;
        let mut floor = RigidBody::from_mesh(
            "floor",
            &box_mesh(Vector3::new(h[0], h[1], h[2])),
            DENSITY,
            &Isometry3::translation(0.0, 0.0, -h[2]),
            &geometry.floor,
        )
        .expect("a box is closed");
        floor.model.motion = Motion::Static;
        floor.model.static_friction = FRICTION;
        floor.model.dynamic_friction = FRICTION;
        bodies.push(floor);
        bodies
    }
}

/// How finely the bodies and the floor are sampled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Geometry {
    pub body: GeometryResolution,
    pub floor: GeometryResolution,
}

impl Default for Geometry {
    fn default() -> Self {
        Self {
            body: GeometryResolution {
                shell_points: 1000,
                tree_levels: 4,
                field_resolution: 48,
            },
            floor: GeometryResolution {
                shell_points: 60_000,
                tree_levels: 6,
                field_resolution: 96,
            },
        }
    }
}

/// The contact parameters of both benchmarks, before the command line's
/// overrides: Xu, Zhao & Barbič's full damping (normal and tangential; with
/// damping along the normal only, a point whose shell normal is far from
/// the field's gradient pushes sideways and the pile gains energy), and a
/// stiffness and damping at which the deepest impact of the 50-body pile,
/// a cube's corner landing on a mug, stays at 1.34 mm with 20 µs steps
/// (1.55 mm at 2·10⁴ N/m and 20 N·s/m) and resting contacts sink a few µm.
fn contact_parameters() -> ContactParameters {
    ContactParameters {
        stiffness: 1.0e5,
        damping: 100.0,
        damping_mode: DampingMode::Full,
        friction_stiffness: 2.0e3,
        ..ContactParameters::default()
    }
}

/// Our world's parameters in both benchmarks, semi-implicit, before the
/// command line's overrides: steps split where a body near another would
/// move more than 1.9 mm, so that an undone substep's 1.5 × that stays
/// within the stability test's 2.95 mm between detections.
pub fn world_parameters() -> WorldParameters {
    WorldParameters {
        gravity: Vector3::new(0.0, 0.0, -GRAVITY),
        integrator: Integrator::SemiImplicit,
        contact: contact_parameters(),
        max_travel: 1.9e-3,
        ..WorldParameters::default()
    }
}
