//! The validated scene: what a config file describes once every check has
//! passed, and the command-line overrides that go through the same checks.

use crate::check::Invalid;
use crate::file::ConfigFile;
use crate::physics::{JointConfig, Physics};
use crate::schema::{
    Coupling, DeviceConfig, DeviceKind, ObjectConfig, ServerSettings, Telemetry, Threads,
};
use crate::validate;
use crate::ConfigError;
use haptic_contact::{PenaltyParameters, StiffnessScaling, VirtualCoupling};
use haptic_devices::{EmulatorMode, ServoRate};
use haptic_physics::joints::Joint;
use haptic_physics::RigidBody;
use haptic_render::{CycleBudget, FrictionModel, MassProperties, RenderParameters};
use haptic_schema::rendering::{ForceDirection, Friction, Material, Rendering, SolverChoice};
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// A validated scene description: the objects, materials, rendering,
/// device, threads and telemetry of one config file (see the crate docs),
/// every value in range and every referenced file present. Built only by
/// validation ([`Scene::load`], [`Scene::embedded_default`]), and read-only.
#[derive(Clone, Debug)]
pub struct Scene {
    pub(crate) file: ConfigFile,
    /// What errors name.
    pub(crate) name: PathBuf,
    /// The directory relative paths start from.
    pub(crate) base: PathBuf,
    /// The file's text, where errors found after validation are located.
    pub(crate) text: Option<Arc<str>>,
    /// Index of the tool in `file.objects`.
    tool: usize,
    servo_rate: ServoRate,
}

/// Values given outside the file (the command line's), applied before
/// validation, so that a file may leave out what they supply.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overrides {
    /// Plays this recorded trajectory (absolute, or relative to the
    /// config's directory) on the emulator: sets `device.kind = "emulator"`
    /// and `device.trajectory_file`.
    pub trajectory: Option<PathBuf>,
    /// `device.kind`, after `trajectory`.
    pub device: Option<DeviceKind>,
    /// `device.profile`: the HID device profile's name.
    pub profile: Option<String>,
    /// `threads.servo.cpu`.
    pub servo_cpu: Option<usize>,
    /// `threads.servo.priority`: 1–99, or 0 for normal scheduling.
    pub servo_priority: Option<u8>,
    /// `server.listen`.
    pub listen: Option<String>,
    /// `server.unix_socket` (absolute, or relative to the config's
    /// directory).
    pub unix_socket: Option<PathBuf>,
    /// `server.enabled = false`.
    pub no_server: bool,
}

impl Overrides {
    pub(crate) fn apply(&self, file: &mut ConfigFile) {
        if let Some(trajectory) = &self.trajectory {
            file.device.kind = DeviceKind::Emulator;
            file.device.trajectory_file = Some(trajectory.clone());
        }
        if let Some(kind) = self.device {
            file.device.kind = kind;
        }
        if let Some(profile) = &self.profile {
            file.device.profile = Some(profile.clone());
        }
        let servo = &mut file.threads.servo;
        servo.cpu = self.servo_cpu.or(servo.cpu);
        if let Some(priority) = self.servo_priority {
            servo.priority = (priority > 0).then_some(priority);
        }
        let server = &mut file.server;
        server.listen = self.listen.clone().unwrap_or(server.listen.clone());
        server.unix_socket = self.unix_socket.clone().or(server.unix_socket.take());
        server.enabled &= !self.no_server;
    }
}

impl Scene {
    /// Validates `file` (named `name` in errors, its relative paths from
    /// `base`); an error's line is looked up in `text` when given.
    pub(crate) fn validate(
        file: ConfigFile,
        name: &Path,
        base: &Path,
        text: Option<&str>,
    ) -> Result<Scene, ConfigError> {
        match validate::validate(&file, base) {
            Ok(valid) => Ok(Scene {
                file,
                name: name.to_owned(),
                base: base.to_owned(),
                text: text.map(Arc::from),
                tool: valid.tool,
                servo_rate: valid.servo_rate,
            }),
            Err(Invalid { field, message }) => Err(ConfigError {
                file: name.to_owned(),
                at: text.and_then(|text| crate::locate(text, &field)),
                field: Some(field),
                message,
            }),
        }
    }

    /// What errors about this scene name: its file.
    pub fn name(&self) -> &Path {
        &self.name
    }

    /// An error in field `field` (a path such as `objects[2].mesh`) found
    /// after validation, where the scene is built: it names the file, and
    /// the field's line when the scene was read from a file.
    pub fn invalid(&self, field: impl Into<String>, message: impl Into<String>) -> ConfigError {
        let field = field.into();
        ConfigError {
            file: self.name.clone(),
            at: self
                .text
                .as_deref()
                .and_then(|text| crate::locate(text, &field)),
            field: Some(field),
            message: message.into(),
        }
    }

    /// The directory the scene's relative paths start from.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// Every object, in file order.
    pub fn objects(&self) -> &[ObjectConfig] {
        &self.file.objects
    }

    /// The tool.
    pub fn tool(&self) -> &ObjectConfig {
        &self.file.objects[self.tool]
    }

    /// The tool's index in [`objects`](Self::objects).
    pub fn tool_index(&self) -> usize {
        self.tool
    }

    /// The environment (every object but the tool), in file order.
    pub fn environment(&self) -> impl Iterator<Item = &ObjectConfig> {
        self.file.objects.iter().filter(|o| !o.tool)
    }

    /// Whether any object is movable: only then does the physics world
    /// run.
    pub fn has_movable(&self) -> bool {
        self.file.objects.iter().any(|o| o.movable)
    }

    /// `[physics]`.
    pub fn physics(&self) -> &Physics {
        &self.file.physics
    }

    /// `[coupling]`.
    pub fn coupling(&self) -> &Coupling {
        &self.file.coupling
    }

    /// `[[joints]]`, in file order.
    pub fn joints(&self) -> &[JointConfig] {
        &self.file.joints
    }

    /// The joints between `bodies`, the physics world's bodies at the
    /// start: one per [environment](Self::environment) object, in its
    /// order. Errors name the joint's field.
    pub fn world_joints(&self, bodies: &[RigidBody]) -> Result<Vec<Joint>, ConfigError> {
        let index = |name: &str| self.environment().position(|o| o.name == name);
        self.joints()
            .iter()
            .enumerate()
            .map(|(i, joint)| {
                let invalid = |field: &str, message: String| {
                    self.invalid(format!("joints[{i}].{field}"), message)
                };
                let a = index(&joint.body_a).ok_or_else(|| {
                    invalid("body_a", format!("no object named \"{}\"", joint.body_a))
                })?;
                let b =
                    match &joint.body_b {
                        Some(name) => Some(index(name).ok_or_else(|| {
                            invalid("body_b", format!("no object named \"{name}\""))
                        })?),
                        None => None,
                    };
                joint
                    .joint(a, b, bodies)
                    .map_err(|e| invalid(joint.field_of(&e), e.to_string()))
            })
            .collect()
    }

    /// `object`'s material: its `[materials]` entry, or the default material.
    pub(crate) fn material(&self, object: &ObjectConfig) -> Option<Material> {
        self.file.material(object)
    }

    /// `μ` between the tool and `object`.
    pub fn friction_coefficient(&self, object: &ObjectConfig) -> f64 {
        self.material(object)
            .unwrap_or_default()
            .friction_coefficient
    }

    /// `[rendering]` as validated.
    pub(crate) fn rendering(&self) -> &Rendering {
        &self.file.rendering
    }

    pub fn device(&self) -> &DeviceConfig {
        &self.file.device
    }

    pub fn threads(&self) -> &Threads {
        &self.file.threads
    }

    /// `threads.servo.rate_hz`.
    pub fn servo_rate(&self) -> ServoRate {
        self.servo_rate
    }

    pub fn telemetry(&self) -> &Telemetry {
        &self.file.telemetry
    }

    /// `[server]`; its `unix_socket` is relative to [`base`](Self::base).
    pub fn server(&self) -> &ServerSettings {
        &self.file.server
    }

    /// Settings that validate but work against each other, each naming the
    /// file and its fields: `hapticd check-config` prints them and the
    /// daemon logs them when it builds the scene.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        let r = &self.file.rendering;
        if r.friction == Friction::StaticLp && r.force_direction == ForceDirection::FieldGradient {
            warnings.push(format!(
                "{}: field `rendering.friction`: `static_lp` is posed along the tool's shell normals; \
                 along the field's gradient (`rendering.force_direction = \"field_gradient\"`, the default) \
                 a contact inside its friction cone can slide (39 µm in the CGAL cube's seat in the CGAL corner): \
                 set `force_direction = \"shell_normal\"` (docs/rendering.md, \"Which direction with the LP\")",
                self.name.display()
            ));
        }
        warnings.extend(self.colgate_warnings());
        warnings
    }

    /// Colgate & Schenkel's bound for a sampled spring on a device of
    /// viscous damping `b` at period `T`: passive only for `K < 2b/T`. The
    /// handle feels the coupling stiffness times `workspace_scale²` (the
    /// handle's motion is scaled into the scene, the force back out).
    fn colgate_warnings(&self) -> Vec<String> {
        let (c, d, r) = (&self.file.coupling, &self.file.device, &self.file.rendering);
        let period = self.servo_rate.period().as_secs_f64();
        let emulated = match (d.kind, d.emulator.mode()) {
            (DeviceKind::Emulator, EmulatorMode::Hand(hand)) => Some(hand),
            _ => None,
        };
        let ports = [
            (
                "coupling.device_damping_n_s_per_m",
                "emulator handle_damping_n_s_per_m",
                c.device_damping_n_s_per_m,
                emulated.as_ref().map(|hand| hand.damping),
                "rendering.coupling_stiffness_n_per_m",
                r.coupling_stiffness_n_per_m * d.workspace_scale.powi(2),
                "N/m",
            ),
            (
                "coupling.device_rotational_damping_n_m_s_per_rad",
                "emulator handle_rotational_damping_n_m_s_per_rad",
                c.device_rotational_damping_n_m_s_per_rad,
                emulated
                    .as_ref()
                    .and_then(|hand| hand.rotation.as_ref())
                    .map(|turn| turn.damping),
                "rendering.coupling_torsional_stiffness_n_m_per_rad",
                r.coupling_torsional_stiffness_n_m_per_rad,
                "N·m/rad",
            ),
        ];
        let mut warnings = Vec::new();
        for (field, emulator_field, given, emulator, stiffness_field, stiffness, unit) in ports {
            let Some((damping, source)) = given
                .map(|b| (b, field))
                .or(emulator.map(|b| (b, emulator_field)))
            else {
                continue;
            };
            let bound = 2.0 * damping / period;
            if stiffness >= bound {
                warnings.push(format!(
                    "{}: field `{stiffness_field}`: {stiffness} {unit} at the handle is not passive on a device \
                     damped by {damping} ({source}) at a {:.3} ms period: Colgate & Schenkel's bound \
                     2b/T is {bound} {unit}; the passivity controller (`coupling.passivity`) will add \
                     damping where the exchange gives energy out (docs/rendering.md, \"Passivity\")",
                    self.name.display(),
                    period * 1e3,
                ));
            }
        }
        warnings
    }

    /// The rendering parameters: `[rendering]`, the environment's contact
    /// stiffness and `tool_mass`, the tool's mass properties
    /// ([`ObjectConfig::mass_properties`]).
    pub fn render_parameters(&self, tool_mass: MassProperties) -> RenderParameters {
        let defaults = RenderParameters::default();
        let r = &self.file.rendering;
        let stiffness = self
            .environment()
            .find_map(|o| self.material(o))
            .unwrap_or_default()
            .contact_stiffness_n_per_m;
        RenderParameters {
            penalty: PenaltyParameters {
                stiffness,
                scaling: StiffnessScaling {
                    reference_contacts: r.stiffness_scaling_contacts,
                },
                direction: r.force_direction,
            },
            coupling: VirtualCoupling {
                translational_stiffness: r.coupling_stiffness_n_per_m,
                rotational_stiffness: r.coupling_torsional_stiffness_n_m_per_rad,
            },
            mass: tool_mass,
            gradient: r.gradient,
            pyramid_sides: r.pyramid_sides,
            static_damping: r.static_damping,
            anti_stickiness: r.anti_stickiness,
            friction: match r.friction {
                Friction::PreSliding => FrictionModel::PreSliding {
                    displacement: r.pre_sliding_displacement_m,
                },
                Friction::StaticLp => FrictionModel::StaticLp,
                Friction::YamaneSprings => FrictionModel::YamaneSprings {
                    stiffness: r.friction_spring_stiffness_n_per_m,
                },
            },
            solver: r.solver,
            budget: defaults.budget,
            time_budget: Some(CycleBudget {
                total: Duration::from_secs_f64(r.cycle_budget_us * 1e-6),
                collision_share: r.collision_budget_share,
            }),
        }
    }
}

/// A [`Scene`] the real-time servo may run: its friction solver is an
/// allocation-free one (`rendering.solver = "fast"`). Reads as the scene.
#[derive(Clone, Debug)]
pub struct ServoScene(Scene);

impl ServoScene {
    /// `scene`, unless its solver cannot run in the servo.
    pub fn new(scene: Scene) -> Result<ServoScene, ConfigError> {
        match scene.rendering().solver {
            SolverChoice::Fast => Ok(ServoScene(scene)),
            SolverChoice::Reference => Err(ConfigError {
                file: scene.name.clone(),
                at: None,
                field: Some("rendering.solver".into()),
                message: "`reference` allocates in every tick and cannot run in the servo; use it with `hapticd replay` or `hapticd scenario`".into(),
            }),
        }
    }
}

impl Deref for ServoScene {
    type Target = Scene;

    fn deref(&self) -> &Scene {
        &self.0
    }
}
