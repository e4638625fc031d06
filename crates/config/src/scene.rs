//! The validated scene: what a config file describes once every check has
//! passed, and the command-line overrides that go through the same checks.

use crate::schema::{
    BodyProperties, ConfigFile, DeviceConfig, DeviceKind, Friction, Gradient, Material,
    ObjectConfig, Rendering, ServerSettings, Solver, Telemetry, Threads,
};
use crate::validate::{self, Invalid};
use crate::ConfigError;
use haptic_contact::{GradientModel, PenaltyParameters, StiffnessScaling, VirtualCoupling};
use haptic_devices::ServoRate;
use haptic_render::{FrictionModel, MassProperties, RenderParameters, SolverChoice};
use std::ops::Deref;
use std::path::{Path, PathBuf};

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

    /// The environment (every object but the tool), in file order.
    pub fn environment(&self) -> impl Iterator<Item = &ObjectConfig> {
        self.file.objects.iter().filter(|o| !o.tool)
    }

    /// The movable objects with their index in [`objects`](Self::objects)
    /// and their rigid body properties, in file order.
    pub fn movable_objects(&self) -> impl Iterator<Item = (usize, &ObjectConfig, BodyProperties)> {
        self.file
            .objects
            .iter()
            .enumerate()
            .filter(|(_, o)| o.movable)
            .map(|(i, o)| {
                let MassProperties { mass, body_inertia } = o.mass_properties();
                let properties = BodyProperties {
                    mass,
                    body_inertia,
                    linear_damping: o.linear_damping_n_s_per_m.unwrap_or(2.0),
                    angular_damping: o.angular_damping_n_m_s_per_rad.unwrap_or(1e-3),
                };
                (i, o, properties)
            })
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

    /// The rendering parameters: `[rendering]`, the environment's contact
    /// stiffness and the tool's mass properties.
    pub fn render_parameters(&self) -> RenderParameters {
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
            },
            coupling: VirtualCoupling {
                translational_stiffness: r.coupling_stiffness_n_per_m,
                rotational_stiffness: r.coupling_torsional_stiffness_n_m_per_rad,
            },
            mass: self.tool().mass_properties(),
            gradient: match r.gradient {
                Gradient::Exact => GradientModel::Exact,
                Gradient::NormalDirection => GradientModel::NormalDirection,
            },
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
            solver: match r.solver {
                Solver::Fast => SolverChoice::Fast,
                Solver::Reference => SolverChoice::Reference,
            },
            budget: defaults.budget,
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
            Solver::Fast => Ok(ServoScene(scene)),
            Solver::Reference => Err(ConfigError {
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
