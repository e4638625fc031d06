//! A configuration's scene, built into the rendering cycle the servo runs:
//! each object's geometry is loaded or generated, its distance field and
//! point shell built as its role asks, and the objects placed.

use crate::device::AnyDevice;
use crate::physics::MovableBody;
use haptic_asset::load_prepared;
use haptic_config::{ObjectConfig, ServoScene, Shape};
use haptic_contact::{
    EnvironmentGeometry, EnvironmentObject, SceneError, SharedField, ShellTree, ToolGeometry,
};
use haptic_devices::SafetyLayer;
use haptic_handoff::{LatestReader, LatestWriter, MailboxSender, TickProducer};
use haptic_mesh::shapes::builtin;
use haptic_mesh::{load_mesh, LoadOptions, TriangleMesh};
use haptic_pointshell::{sample_point_shell, spacing_for_count, PointShell};
use haptic_render::{CycleLayout, RenderError, RenderingCycle, RenderingUpdate};
use haptic_sdf::{DenseField, DenseOptions, NoProgress};
use haptic_servo::{
    ParameterUpdate, PhysicsSnapshot, SceneFrame, ServoChannels, ServoTick, TickRecord, ToolState,
    WorkspaceMapping,
};
use nalgebra::{Isometry3, Vector3};
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
    #[error(transparent)]
    Contact(#[from] SceneError),
    #[error(transparent)]
    Render(#[from] haptic_render::RenderError),
}

/// One object's contact geometry, as its role asks for.
struct ObjectGeometry {
    field: Option<SharedField>,
    shell: Option<Arc<ShellTree>>,
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
        let loaded = load_mesh(&base.join(mesh), &LoadOptions::default()).map_err(|source| {
            SceneBuildError::Mesh {
                object: name(),
                source,
            }
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

fn load_geometry(
    object: &ObjectConfig,
    base: &Path,
    needs_field: bool,
    needs_shell: bool,
) -> Result<ObjectGeometry, SceneBuildError> {
    let mut geometry = ObjectGeometry {
        field: None,
        shell: None,
    };
    match source(object, base)? {
        Source::Mesh(mesh) => {
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
        }
        Source::Points(points) => {
            if needs_field {
                return Err(SceneBuildError::Geometry {
                    object: object.name.clone(),
                    message: "a floor grid is points only: it has no distance field".into(),
                });
            }
            geometry.shell = Some(Arc::new(ShellTree::build(points, object.tree_levels)));
        }
        Source::Prepared(file) => {
            let prepared = load_prepared(&file).map_err(|source| SceneBuildError::Prepared {
                object: object.name.clone(),
                file: file.clone(),
                source,
            })?;
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

/// One environment object of the rendering cycle: which configured object
/// it stands for. An object of role `both` appears twice, once per
/// geometry (Xu, Zhao & Barbič, implicit penalty contact, §4.1).
#[derive(Clone, Debug, PartialEq)]
pub struct EnvironmentEntry {
    /// The object's `name` in the config.
    pub name: String,
    /// Its index in the config's `[[objects]]`.
    pub object: usize,
    /// Its pose when the scene was built (object frame → world).
    pub pose: Isometry3<f64>,
}

/// A scene with its geometry built: the rendering cycle, the device
/// mapping, and what each environment entry of the cycle is.
pub struct BuiltScene {
    pub cycle: RenderingCycle,
    pub mapping: WorkspaceMapping,
    /// In the cycle's environment order.
    pub environment: Vec<EnvironmentEntry>,
    /// The tool's name.
    pub tool: String,
    /// The device button that declutches the tool, if any.
    pub clutch_button: Option<u32>,
    /// Wall time the build took.
    pub build_time: Duration,
}

impl BuiltScene {
    /// Builds `config`'s scene.
    pub fn build(config: &haptic_config::Scene) -> Result<BuiltScene, SceneBuildError> {
        let started = Instant::now();
        let base = config.base();
        let tool_config = config.tool();
        let tool = load_geometry(
            tool_config,
            base,
            tool_config.role.has_field(),
            tool_config.role.has_shell(),
        )?;
        let moving = ToolGeometry {
            shell: tool.shell,
            field: tool.field,
        };

        let mut parts = Vec::new();
        let mut entries = Vec::new();
        for (index, object) in config.objects().iter().enumerate() {
            if object.tool {
                continue;
            }
            let geometry = load_geometry(
                object,
                base,
                object.role.has_field(),
                object.role.has_shell(),
            )?;
            let pose = object.pose();
            let geometries = geometry
                .field
                .map(EnvironmentGeometry::Field)
                .into_iter()
                .chain(geometry.shell.map(EnvironmentGeometry::Shell));
            for geometry in geometries {
                parts.push((pose, geometry));
                entries.push(EnvironmentEntry {
                    name: object.name.clone(),
                    object: index,
                    pose,
                });
            }
        }

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
            config.render_parameters(),
            tool_config.pose(),
        )?;
        let mapping = WorkspaceMapping::new(
            config.device().workspace_pose(),
            config.device().workspace_scale,
        );
        Ok(BuiltScene {
            cycle,
            mapping,
            environment: entries,
            tool: tool_config.name.clone(),
            clutch_button: config.device().clutch_button,
            build_time: started.elapsed(),
        })
    }

    /// The movable objects of `config` (which this scene was built from),
    /// at rest where the config places them, with their environment
    /// entries.
    pub fn movable_bodies(&self, config: &haptic_config::Scene) -> Vec<MovableBody> {
        config
            .movable_objects()
            .map(|(index, object, properties)| MovableBody {
                name: object.name.clone(),
                entries: self
                    .environment
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| e.object == index)
                    .map(|(i, _)| i)
                    .collect(),
                mass: properties.mass,
                body_inertia: properties.body_inertia,
                linear_damping: properties.linear_damping,
                angular_damping: properties.angular_damping,
                pose: object.pose(),
                velocity: Vector3::zeros(),
                angular_velocity: Vector3::zeros(),
                impulse: Vector3::zeros(),
            })
            .collect()
    }

    /// The environment's poses as built, in the cycle's order.
    pub fn environment_poses(&self) -> Vec<Isometry3<f64>> {
        self.environment.iter().map(|e| e.pose).collect()
    }

    /// The servo tick rendering this scene on `device`, wired to its
    /// hand-off channels, and the control side of its parameter updates
    /// and scene frames.
    pub fn into_servo_tick(
        self,
        device: SafetyLayer<AnyDevice>,
        physics: LatestReader<PhysicsSnapshot>,
        tool: LatestWriter<ToolState>,
        telemetry: TickProducer<TickRecord>,
    ) -> (ServoTick<AnyDevice>, SceneControl) {
        let (channels, control) =
            ServoChannels::with_control(&self.cycle, physics, tool, telemetry);
        let tick = ServoTick::new(device, self.mapping, self.cycle, channels);
        let tick = match self.clutch_button {
            Some(button) => tick.with_clutch(button),
            None => tick,
        };
        let scene_control = SceneControl {
            updates: control.updates,
            scene_frames: control.scene_frames,
            layout: control.layout,
            environment: self.environment,
        };
        (tick, scene_control)
    }
}

/// `μ` of each environment object of the cycle, in the cycle's order
/// (`entries`), from `config`.
fn friction_coefficients(config: &haptic_config::Scene, entries: &[EnvironmentEntry]) -> Vec<f64> {
    entries
        .iter()
        .filter_map(|entry| config.objects().get(entry.object))
        .map(|object| config.friction_coefficient(object))
        .collect()
}

/// The control side of a running scene's servo: rendering parameter
/// updates to it, and its scene frames.
pub struct SceneControl {
    /// Sends [`ParameterUpdate`]s (one at a time) and collects them back,
    /// with the tick they were applied at, once the servo took them.
    pub updates: MailboxSender<ParameterUpdate>,
    /// Each tick's contacts and environment poses.
    pub scene_frames: LatestReader<SceneFrame>,
    layout: CycleLayout,
    /// What each environment object of the cycle stands for.
    environment: Vec<EnvironmentEntry>,
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
            scene.render_parameters(),
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
        let (mut tick, mut control) = scene.into_servo_tick(device, physics, tool, producer);
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
        assert_eq!(control.scene_frames.read().tick, 0);
    }
}
