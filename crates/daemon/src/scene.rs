//! A configuration's scene, built into the rendering cycle the servo runs
//! and the rigid world the physics thread steps: each object's geometry is
//! loaded or generated, its distance field and point shell built as its
//! role asks (and both for a body of the physics world), and the objects
//! placed, the tool's and each movable object's frame at its centre of
//! mass.

use crate::device::AnyDevice;
use crate::physics::{BodyLink, PhysicsWorld};
use haptic_asset::load_prepared;
use haptic_config::{ConfigError, ObjectConfig, Scene, ServoScene, Shape};
use haptic_contact::{
    EnvironmentGeometry, EnvironmentObject, SceneError, SharedField, ShellTree, ToolGeometry,
};
use haptic_devices::SafetyLayer;
use haptic_handoff::{LatestReader, LatestWriter, MailboxSender, TickProducer};
use haptic_mesh::shapes::builtin;
use haptic_mesh::{load_mesh, Aabb, LoadOptions, TriangleMesh};
use haptic_physics::body::centred;
use haptic_physics::{
    mass_properties, BodyGeometry, MassProperties as SolidMass, Motion, RigidBody, RigidBodyModel,
    RigidBodyState, World, WorldError,
};
use haptic_pointshell::{sample_point_shell, spacing_for_count, PointShell};
use haptic_render::{CycleLayout, MassProperties, RenderError, RenderingCycle, RenderingUpdate};
use haptic_sdf::{DenseField, DenseOptions, NoProgress};
use haptic_servo::{
    ParameterUpdate, PassivitySettings, PhysicsSnapshot, SceneFrame, ServoChannels, ServoTick,
    TickRecord, ToolState, WorkspaceMapping,
};
use nalgebra::{Isometry3, Matrix3, Point3, Translation3, Vector3};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Seed of the point-shell sampling, so that a scene builds the same shell
/// every time.
const SHELL_SEED: u64 = 0;

/// Margin of a distance field around its mesh, as a fraction of the mesh's
/// longest side (`hapticd prep`'s default).
const FIELD_PADDING: f64 = 0.1;

/// Why a scene could not be built.
#[derive(Debug, thiserror::Error)]
pub enum SceneBuildError {
    #[error("object `{object}`: {source}")]
    Mesh {
        object: String,
        source: haptic_mesh::MeshError,
    },
    #[error("object `{object}`: {file}: {source}")]
    Prepared {
        object: String,
        file: PathBuf,
        source: haptic_asset::AssetError,
    },
    #[error("object `{object}`: {message}")]
    Geometry { object: String, message: String },
    /// A value the config's validation could not check without the
    /// geometry (an open mesh where mass properties need a closed one, a
    /// joint's axis): names the file, line and field.
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Contact(#[from] SceneError),
    #[error(transparent)]
    Render(#[from] haptic_render::RenderError),
    #[error("the physics world: {0}")]
    World(#[from] WorldError),
}

/// One object's contact geometry, as its role asks for, and the triangles
/// to draw it with, all in its body frame.
struct ObjectGeometry {
    field: Option<SharedField>,
    shell: Option<Arc<ShellTree>>,
    display: TriangleMesh,
    /// Its closed mesh's mass properties at its density (centre of mass
    /// in the file's frame), for the tool and movable objects.
    solid: Option<SolidMass>,
    /// The body frame's origin in the file's frame: the centre of mass of
    /// `solid`, else the file's origin.
    centre: Vector3<f64>,
    /// Bounds of the shell and the field's surface, body frame.
    bounds: Aabb,
}

impl ObjectGeometry {
    /// The object's body frame → world, `object` placing its file frame.
    fn pose(&self, object: &ObjectConfig) -> Isometry3<f64> {
        object.pose() * Translation3::from(self.centre)
    }
}

/// Where an object's triangles come from, once resolved.
enum Source {
    Mesh(TriangleMesh),
    Points(PointShell),
    Prepared(PathBuf),
}

fn source(object: &ObjectConfig, base: &Path) -> Result<Source, SceneBuildError> {
    let name = || object.name.clone();
    if let Some(mesh) = &object.mesh {
        if let Some(builtin_name) = mesh.strip_prefix("builtin:") {
            return builtin(builtin_name).map(Source::Mesh).ok_or_else(|| {
                SceneBuildError::Geometry {
                    object: name(),
                    message: format!("no built-in mesh `{builtin_name}`"),
                }
            });
        }
        let options = LoadOptions {
            unit: object.mesh_unit,
            scale: object.mesh_scale,
            ..LoadOptions::default()
        };
        let loaded =
            load_mesh(&base.join(mesh), &options).map_err(|source| SceneBuildError::Mesh {
                object: name(),
                source,
            })?;
        return Ok(Source::Mesh(loaded.mesh));
    }
    if let Some(prepared) = &object.prepared {
        return Ok(Source::Prepared(base.join(prepared)));
    }
    match &object.shape {
        Some(shape @ Shape::FloorGrid { .. }) => Ok(Source::Points(
            shape.point_grid().expect("a floor grid has points"),
        )),
        Some(shape) => Ok(Source::Mesh(
            shape.mesh().expect("a solid shape has a mesh"),
        )),
        None => Err(SceneBuildError::Geometry {
            object: name(),
            message: "no geometry: give `mesh`, `prepared` or `shape`".into(),
        }),
    }
}

/// The mass properties of object `index`'s closed `mesh`, for the tool and
/// movable objects: an error naming the object's geometry field when its
/// mass must come from the mesh and cannot; `None` for a tool without a
/// density whose mesh is open (its frame then stays at the file's origin).
fn solid(
    config: &Scene,
    index: usize,
    mesh: &TriangleMesh,
) -> Result<Option<SolidMass>, ConfigError> {
    let object = &config.objects()[index];
    if !(object.tool || object.movable) {
        return Ok(None);
    }
    match mass_properties(mesh, object.density()) {
        Ok(solid) => Ok(Some(solid)),
        Err(_) if !object.mass_from_mesh() => Ok(None),
        Err(error) => {
            let (field, what) = match &object.mesh {
                Some(file) => ("mesh", config.base().join(file).display().to_string()),
                None => ("shape", "its shape".to_owned()),
            };
            Err(config.invalid(
                format!("objects[{index}].{field}"),
                format!("object `{}`: {what}: {error}", object.name),
            ))
        }
    }
}

/// Object `index`'s geometry in its body frame: a distance field if
/// `needs_field`, a point shell if `needs_shell`.
fn load_geometry(
    config: &Scene,
    index: usize,
    needs_field: bool,
    needs_shell: bool,
) -> Result<ObjectGeometry, SceneBuildError> {
    let object = &config.objects()[index];
    let mut geometry = ObjectGeometry {
        field: None,
        shell: None,
        display: TriangleMesh::new(Vec::new(), Vec::new()),
        solid: None,
        centre: Vector3::zeros(),
        bounds: Aabb::empty(),
    };
    match source(object, config.base())? {
        Source::Mesh(mesh) => {
            geometry.solid = solid(config, index, &mesh)?;
            let mesh = match &geometry.solid {
                Some(solid) => {
                    geometry.centre = solid.centre_of_mass.coords;
                    centred(&mesh, &solid.centre_of_mass)
                }
                None => mesh,
            };
            if needs_field {
                let field = DenseField::build(
                    &mesh,
                    &DenseOptions {
                        resolution: object.field_resolution,
                        padding_fraction: FIELD_PADDING,
                    },
                    &NoProgress,
                );
                geometry.field = Some(Arc::new(field));
            }
            if needs_shell {
                let spacing = spacing_for_count(&mesh, object.shell_points);
                let shell = sample_point_shell(&mesh, spacing, SHELL_SEED);
                geometry.shell = Some(Arc::new(ShellTree::build(shell, object.tree_levels)));
            }
            geometry.bounds = mesh.aabb();
            geometry.display = mesh;
        }
        Source::Points(points) => {
            if needs_field {
                return Err(SceneBuildError::Geometry {
                    object: object.name.clone(),
                    message: "a floor grid is points only: it has no distance field".into(),
                });
            }
            geometry.display = footprint(&points);
            geometry.bounds = Aabb::from_points(&points.points);
            geometry.shell = Some(Arc::new(ShellTree::build(points, object.tree_levels)));
        }
        Source::Prepared(file) => {
            let prepared = load_prepared(&file).map_err(|source| SceneBuildError::Prepared {
                object: object.name.clone(),
                file: file.clone(),
                source,
            })?;
            geometry.bounds =
                Aabb::from_points(&prepared.shell.points).merge(&prepared.header.mesh_bounds);
            if needs_field {
                geometry.field = Some(Arc::new(prepared.field));
            }
            if needs_shell {
                let tree = ShellTree::new(prepared.shell, prepared.tree)?;
                geometry.shell = Some(Arc::new(tree));
            }
        }
    }
    Ok(geometry)
}

/// Environment object `object`'s body of the physics world, where the
/// config places it, with `geometry` built in both roles: dynamic with its
/// mass properties if movable, else static. Its Coulomb μ against other
/// bodies is its material's (a pair takes the geometric mean of its two).
fn rigid_body(
    config: &Scene,
    object: &ObjectConfig,
    geometry: &ObjectGeometry,
) -> Result<RigidBody, SceneBuildError> {
    let (Some(shell), Some(field)) = (&geometry.shell, &geometry.field) else {
        return Err(SceneBuildError::Geometry {
            object: object.name.clone(),
            message: "a body of the physics world needs a point shell and a field".into(),
        });
    };
    let (motion, MassProperties { mass, body_inertia }) = if object.movable {
        (
            Motion::Dynamic,
            object.mass_properties(geometry.solid.as_ref()),
        )
    } else {
        let none = MassProperties {
            mass: 0.0,
            body_inertia: Matrix3::zeros(),
        };
        (Motion::Static, none)
    };
    let mu = config.friction_coefficient(object);
    Ok(RigidBody {
        model: RigidBodyModel {
            name: object.name.clone(),
            motion,
            mass,
            body_inertia,
            geometry: Some(BodyGeometry {
                shell: Arc::clone(shell),
                field: Arc::clone(field),
                bounds: geometry.bounds,
            }),
            static_friction: mu,
            dynamic_friction: mu,
        },
        state: RigidBodyState::at_rest(geometry.pose(object)),
    })
}

/// The physics world of `config`'s `bodies` (one per environment object,
/// in its order) and joints, linked to the cycle's environment by `links`;
/// with `config`'s deformables coupled to it when it has any.
fn physics_world(
    config: &Scene,
    bodies: Vec<RigidBody>,
    links: Vec<BodyLink>,
    environment_poses: Vec<Isometry3<f64>>,
) -> Result<PhysicsWorld, SceneBuildError> {
    let joints = config.world_joints(&bodies)?;
    let world = World::new(bodies, joints, config.physics().world_parameters())?;
    if config.deformables().is_empty() {
        return Ok(PhysicsWorld::new(world, links, environment_poses)
            .with_local_models(config.coupling().local_models));
    }
    let coupled = config.deformable_world(world)?;
    Ok(PhysicsWorld::coupled(coupled, links, environment_poses)
        .with_local_models(config.coupling().local_models))
}

/// `config`'s physics world alone, for `hapticd simulate`: every
/// environment object a body, none linked to a rendering cycle; and the
/// triangles to draw each body with, in the world's order and body frames
/// (none for a prepared file). A scene without movable objects has a world
/// without bodies.
pub fn build_world(config: &Scene) -> Result<(PhysicsWorld, Vec<TriangleMesh>), SceneBuildError> {
    if !config.has_movable() {
        return Ok((PhysicsWorld::default(), Vec::new()));
    }
    let (bodies, meshes) = environment_bodies(config)?;
    let links = config
        .environment()
        .map(|object| BodyLink {
            entries: Vec::new(),
            drag: object.drag(),
        })
        .collect();
    Ok((physics_world(config, bodies, links, Vec::new())?, meshes))
}

/// `config`'s rigid world for a scene with deformables: every environment
/// object a body (movable ones dynamic, the others static, even when none
/// moves), with the joints, in the order of
/// [`Scene::environment`](haptic_config::Scene::environment), and the
/// triangles to draw each body with, as [`build_world`]'s.
pub fn build_rigid_world(config: &Scene) -> Result<(World, Vec<TriangleMesh>), SceneBuildError> {
    let (bodies, meshes) = environment_bodies(config)?;
    let joints = config.world_joints(&bodies)?;
    let world = World::new(bodies, joints, config.physics().world_parameters())?;
    Ok((world, meshes))
}

/// One body per environment object, in its order, and its display
/// triangles in its body frame.
fn environment_bodies(
    config: &Scene,
) -> Result<(Vec<RigidBody>, Vec<TriangleMesh>), SceneBuildError> {
    let mut bodies = Vec::new();
    let mut meshes = Vec::new();
    for (index, object) in config.objects().iter().enumerate() {
        if object.tool {
            continue;
        }
        let geometry = load_geometry(config, index, true, true)?;
        bodies.push(rigid_body(config, object, &geometry)?);
        meshes.push(geometry.display);
    }
    Ok((bodies, meshes))
}

/// The rectangle a planar point set (a floor grid) covers, in its plane
/// `z = mean z`, facing +z: what a point-only object is drawn with.
fn footprint(points: &PointShell) -> TriangleMesh {
    let positions = &points.points;
    if positions.is_empty() {
        return TriangleMesh::new(Vec::new(), Vec::new());
    }
    let (mut low, mut high) = (positions[0], positions[0]);
    for p in positions {
        low = low.inf(p);
        high = high.sup(p);
    }
    let z = positions.iter().map(|p| p.z).sum::<f64>() / positions.len() as f64;
    TriangleMesh::new(
        vec![
            Point3::new(low.x, low.y, z),
            Point3::new(high.x, low.y, z),
            Point3::new(high.x, high.y, z),
            Point3::new(low.x, high.y, z),
        ],
        vec![[0, 1, 2], [0, 2, 3]],
    )
}

/// One environment object of the rendering cycle: which configured object
/// it stands for. An object of role `both` appears twice, once per
/// geometry (Xu, Zhao & Barbič, implicit penalty contact, §4.1).
#[derive(Clone, Debug, PartialEq)]
pub struct EnvironmentEntry {
    /// The object's or deformable's `name` in the config.
    pub name: String,
    /// What it renders.
    pub source: EntrySource,
    /// Its pose when the scene was built (body frame → world).
    pub pose: Isometry3<f64>,
}

/// What an environment entry of the cycle renders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntrySource {
    /// The object of this index in the config's `[[objects]]`.
    Object(usize),
    /// The surface nodes near the tool of the deformable of this index in
    /// the config's `[[deformables]]`.
    Deformable(usize),
}

/// Slots of a deformable's node set in the rendering cycle: the most
/// surface nodes near the tool the servo looks up each tick.
pub const PATCH_NODES: usize = 128;

/// A scene with its geometry built: the rendering cycle, the device
/// mapping, what each environment entry of the cycle is, and the physics
/// world.
pub struct BuiltScene {
    pub cycle: RenderingCycle,
    pub mapping: WorkspaceMapping,
    /// In the cycle's environment order.
    pub environment: Vec<EnvironmentEntry>,
    /// The tool's name.
    pub tool: String,
    /// The tool's mass properties, which rendering updates keep.
    pub tool_mass: MassProperties,
    /// The device button that declutches the tool, if any.
    pub clutch_button: Option<u32>,
    /// The servo period and the blend time (s) of the bodies' local models
    /// (`[coupling]`), if on.
    pub local_models: Option<(f64, f64)>,
    /// The passivity controller's settings (`[coupling]`).
    pub passivity: PassivitySettings,
    /// The triangles to draw each configured object with, in the config's
    /// order and its body frame: its mesh or shape; a floor grid as the
    /// rectangle it covers; nothing for a prepared file (which holds no
    /// mesh).
    pub display_meshes: Vec<TriangleMesh>,
    /// The world the physics thread steps: without bodies unless the
    /// scene has movable objects or deformables.
    pub physics: PhysicsWorld,
    /// Wall time the build took.
    pub build_time: Duration,
}

impl BuiltScene {
    /// Builds `config`'s scene. The tool's frame is its centre of mass
    /// when its mesh is closed, and the device's workspace moves with it,
    /// so that the handle at rest still holds the tool where the config
    /// places it and turns it about its centre of mass.
    pub fn build(config: &Scene) -> Result<BuiltScene, SceneBuildError> {
        let started = Instant::now();
        for warning in config.warnings() {
            tracing::warn!("{warning}");
        }
        let physics = config.has_movable() || !config.deformables().is_empty();
        let tool_config = config.tool();
        // The deformables' nodes are looked up in the tool's field.
        let tool = load_geometry(
            config,
            config.tool_index(),
            tool_config.role.has_field() || !config.deformables().is_empty(),
            tool_config.role.has_shell(),
        )?;
        let tool_pose = tool.pose(tool_config);
        let tool_mass = tool_config.mass_properties(tool.solid.as_ref());
        let workspace =
            Translation3::from(tool_pose.rotation * tool.centre) * config.device().workspace_pose();
        let moving = ToolGeometry {
            shell: tool.shell,
            field: tool.field,
        };
        let mut tool_display = Some(tool.display);

        let mut parts = Vec::new();
        let mut entries = Vec::new();
        let mut bodies = Vec::new();
        let mut links = Vec::new();
        let mut display_meshes = Vec::with_capacity(config.objects().len());
        for (index, object) in config.objects().iter().enumerate() {
            if object.tool {
                display_meshes.extend(tool_display.take());
                continue;
            }
            // A body of the physics world carries both geometries, whatever
            // the object's role in rendering.
            let geometry = load_geometry(
                config,
                index,
                object.role.has_field() || physics,
                object.role.has_shell() || physics,
            )?;
            let pose = geometry.pose(object);
            if physics {
                bodies.push(rigid_body(config, object, &geometry)?);
            }
            let first = entries.len();
            let geometries = geometry
                .field
                .filter(|_| object.role.has_field())
                .map(EnvironmentGeometry::Field)
                .into_iter()
                .chain(
                    geometry
                        .shell
                        .filter(|_| object.role.has_shell())
                        .map(EnvironmentGeometry::Shell),
                );
            for geometry in geometries {
                parts.push((pose, geometry));
                entries.push(EnvironmentEntry {
                    name: object.name.clone(),
                    source: EntrySource::Object(index),
                    pose,
                });
            }
            links.push(BodyLink {
                entries: (first..entries.len()).collect(),
                drag: object.drag(),
            });
            display_meshes.push(geometry.display);
        }
        // Each deformable's nodes near the tool, in the tool's field, after
        // the objects; their points are world-frame.
        let patch_entries: Vec<usize> = (0..config.deformables().len())
            .map(|d| entries.len() + d)
            .collect();
        for (d, deformable) in config.deformables().iter().enumerate() {
            parts.push((
                Isometry3::identity(),
                EnvironmentGeometry::Nodes {
                    capacity: PATCH_NODES,
                },
            ));
            entries.push(EnvironmentEntry {
                name: deformable.name.clone(),
                source: EntrySource::Deformable(d),
                pose: Isometry3::identity(),
            });
        }
        let environment_poses = entries.iter().map(|e| e.pose).collect();
        let physics = if physics {
            physics_world(config, bodies, links, environment_poses)?.with_tool_patches(
                moving.field.clone(),
                patch_entries,
                PATCH_NODES,
            )
        } else {
            PhysicsWorld::default()
        };

        let environment = parts
            .into_iter()
            .zip(friction_coefficients(config, &entries))
            .map(
                |((pose, geometry), friction_coefficient)| EnvironmentObject {
                    pose,
                    geometry,
                    friction_coefficient,
                },
            )
            .collect();
        let cycle = RenderingCycle::new(
            moving,
            environment,
            config.render_parameters(tool_mass),
            tool_pose,
        )?;
        let mapping = WorkspaceMapping::new(workspace, config.device().workspace_scale);
        Ok(BuiltScene {
            cycle,
            mapping,
            environment: entries,
            tool: tool_config.name.clone(),
            tool_mass,
            clutch_button: config.device().clutch_button,
            passivity: PassivitySettings {
                enabled: config.coupling().passivity,
                max_damping: config.coupling().passivity_max_damping_n_s_per_m,
                max_rotational_damping: config
                    .coupling()
                    .passivity_max_rotational_damping_n_m_s_per_rad,
            },
            local_models: config.coupling().local_models.then(|| {
                (
                    config.servo_rate().period().as_secs_f64(),
                    config.coupling().blend_ms * 1e-3,
                )
            }),
            display_meshes,
            physics,
            build_time: started.elapsed(),
        })
    }

    /// The environment's poses as built, in the cycle's order.
    pub fn environment_poses(&self) -> Vec<Isometry3<f64>> {
        self.environment.iter().map(|e| e.pose).collect()
    }

    /// The servo tick rendering this scene on `device`, wired to its
    /// hand-off channels; the control side of its parameter updates; and
    /// the reader of its scene frames. The physics world stays behind:
    /// take it first.
    pub fn into_servo_tick(
        self,
        device: SafetyLayer<AnyDevice>,
        physics: LatestReader<PhysicsSnapshot>,
        tool: LatestWriter<ToolState>,
        telemetry: TickProducer<TickRecord>,
    ) -> (ServoTick<AnyDevice>, SceneControl, LatestReader<SceneFrame>) {
        let (channels, control) =
            ServoChannels::with_control(&self.cycle, physics, tool, telemetry);
        let tick = ServoTick::new(device, self.mapping, self.cycle, channels)
            .with_passivity(self.passivity);
        let tick = match self.local_models {
            Some((period, blend)) => tick.with_local_models(period, blend),
            None => tick,
        };
        let tick = match self.clutch_button {
            Some(button) => tick.with_clutch(button),
            None => tick,
        };
        let scene_control = SceneControl {
            updates: control.updates,
            layout: control.layout,
            environment: self.environment,
            tool_mass: self.tool_mass,
        };
        (tick, scene_control, control.scene_frames)
    }
}

/// `μ` of each environment object of the cycle, in the cycle's order
/// (`entries`), from `config`.
/// A deformable's `μ` with the tool is the product of the two, as its
/// pairs with rigid bodies are.
fn friction_coefficients(config: &Scene, entries: &[EnvironmentEntry]) -> Vec<f64> {
    entries
        .iter()
        .map(|entry| match entry.source {
            EntrySource::Object(index) => config.friction_coefficient(&config.objects()[index]),
            EntrySource::Deformable(index) => {
                config.friction_coefficient(config.tool())
                    * config.deformables()[index].material.friction
            }
        })
        .collect()
}

/// The control side of a running scene's servo: rendering parameter
/// updates to it, and its scene frames.
pub struct SceneControl {
    /// Sends [`ParameterUpdate`]s (one at a time) and collects them back,
    /// with the tick they were applied at, once the servo took them.
    pub updates: MailboxSender<ParameterUpdate>,
    layout: CycleLayout,
    /// What each environment object of the cycle stands for.
    environment: Vec<EnvironmentEntry>,
    /// The tool's mass properties as built.
    tool_mass: MassProperties,
}

impl SceneControl {
    /// The update bringing `scene`'s rendering parameters and materials
    /// into force as `generation`; `scene` is the running scene, patched
    /// ([`ServoScene::patched`]). Builds the friction solver it may need:
    /// call it off the servo thread.
    pub fn rendering_update(
        &self,
        scene: &ServoScene,
        generation: u64,
    ) -> Result<ParameterUpdate, RenderError> {
        let rendering = RenderingUpdate::new(
            self.layout,
            scene.render_parameters(self.tool_mass),
            friction_coefficients(scene, &self.environment),
        )?;
        Ok(ParameterUpdate::new(generation, rendering))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{open, Pacing};
    use haptic_config::{Overrides, RenderingPatch, Scene};
    use haptic_devices::AtEnd;
    use haptic_handoff::{Latest, TickStream};

    #[test]
    fn a_patched_scene_becomes_an_update_the_servo_applies() {
        let config =
            ServoScene::new(Scene::embedded_default(&Overrides::default()).unwrap()).unwrap();
        let scene = BuiltScene::build(&config).unwrap();
        let period = config.servo_rate().period();
        let device = open(&config, Pacing::Stepped { period }, AtEnd::Hold).unwrap();
        let (tool, _tool_reader) = Latest::new(&ToolState::new(scene.environment.len())).split();
        let (_physics, physics) =
            Latest::new(&PhysicsSnapshot::new(scene.environment_poses())).split();
        let (producer, _records) = TickStream::new(16).split();
        let (mut tick, mut control, mut scene_frames) =
            scene.into_servo_tick(device, physics, tool, producer);
        let patch: RenderingPatch = serde_json::from_str(
            r#"{"materials": {"wood": {"friction_coefficient": 0.9}},
                "rendering": {"friction": "static_lp", "pyramid_sides": 6}}"#,
        )
        .unwrap();
        let patched = config.patched(&patch).unwrap();
        let update = control.rendering_update(&patched, 1).unwrap();
        assert!(control.updates.send(Box::new(update)).is_ok());
        let record = tick.run(Duration::ZERO, Duration::ZERO);
        assert_eq!(record.generation, 1);
        let back = control.updates.collect().unwrap();
        assert_eq!(back.applied, Some(Ok(0)));
        let cycle = tick.cycle();
        assert_eq!(cycle.parameters().pyramid_sides, 6);
        assert_eq!(
            cycle.parameters().friction,
            haptic_render::FrictionModel::StaticLp
        );
        assert_eq!(cycle.scene().environment()[0].friction_coefficient, 0.9);
        assert_eq!(scene_frames.read().tick, 0);
    }

    /// A 10 mm cube centred on its frame, in an OBJ file written in mm.
    const CUBE_MM: &str = "v -5 -5 -5\nv 5 -5 -5\nv 5 5 -5\nv -5 5 -5\n\
        v -5 -5 5\nv 5 -5 5\nv 5 5 5\nv -5 5 5\n\
        f 1 3 2\nf 1 4 3\nf 5 6 7\nf 5 7 8\nf 1 2 6\nf 1 6 5\n\
        f 2 3 7\nf 2 7 6\nf 3 4 8\nf 3 8 7\nf 4 1 5\nf 4 5 8\n";

    /// `mesh_unit` and `mesh_scale` reach the body's triangles and mass.
    #[test]
    fn a_mesh_in_millimetres_scaled_by_two_is_a_20_mm_body() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("cube-mm.obj"), CUBE_MM).unwrap();
        let config = r#"
[[objects]]
name = "probe"
shape = { kind = "sphere", radius_m = 0.01 }
role = "point_shell"
tool = true
position_m = [0.0, 0.0, 1.0]

[[objects]]
name = "cube"
mesh = "cube-mm.obj"
mesh_unit = "mm"
mesh_scale = 2.0
role = "field"
movable = true
density_kg_m3 = 1000.0

[device]
motion = { segments = [{ type = "hold", duration_s = 1.0 }] }
"#;
        let path = dir.path().join("scene.toml");
        std::fs::write(&path, config).unwrap();
        let scene = Scene::load(&path, &Overrides::default()).unwrap_or_else(|e| panic!("{e}"));
        let (world, meshes) = build_world(&scene).unwrap();
        let extents = meshes[0].aabb().extents();
        assert!(
            (extents - Vector3::repeat(0.02)).abs().max() < 1e-12,
            "{extents:?}"
        );
        // (20 mm)³ of water.
        let mass = world.bodies()[0].model.mass;
        assert!((mass - 8e-3).abs() < 1e-9, "{mass} kg");
    }
}
