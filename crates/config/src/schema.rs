//! The configuration's tables but `[physics]`, `[[joints]]`,
//! `[materials]` and `[rendering]` (`haptic-schema`'s), their defaults and
//! their conversions into the geometry and device types.

use haptic_devices::{EmulatorMode, HandParams, Motion, OnDisconnect, RotationParams, ServoRate};
use haptic_mesh::shapes::corner_mesh;
use haptic_mesh::shapes::{block_with_hole, box_mesh, cylinder, icosphere, torus};
use haptic_mesh::{LengthUnit, TriangleMesh};
use haptic_physics::MassProperties as SolidMass;
use haptic_pointshell::shapes::floor_shell;
use haptic_pointshell::PointShell;
use haptic_render::MassProperties;
use haptic_render::RenderParameters;
/// What an object contributes to contact, in the protocol's vocabulary.
pub use haptic_schema::ObjectRole;
use nalgebra::{Isometry3, Matrix3, Translation3, UnitQuaternion, Vector3};
use serde::Deserialize;
use std::net::SocketAddr;
use std::path::PathBuf;

/// One scene object.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObjectConfig {
    /// Shown in logs and errors; unique in the scene.
    pub name: String,
    /// The geometry is exactly one of `mesh`, `prepared` and `shape`.
    /// A mesh file (OBJ, STL, PLY, OFF), or `builtin:torus|sphere|box` as
    /// `hapticd prep` accepts.
    #[serde(default)]
    pub mesh: Option<String>,
    /// The unit the `mesh` file's coordinates are written in: `m`, `cm`,
    /// `mm` or `in` (CAD exports are mostly millimetres), as `hapticd prep
    /// --unit` takes. Default metres.
    #[serde(default, deserialize_with = "length_unit")]
    pub mesh_unit: LengthUnit,
    /// A factor applied to the `mesh` file's coordinates on top of
    /// `mesh_unit`, as `hapticd prep --scale`. Default 1.
    #[serde(default = "default_mesh_scale")]
    pub mesh_scale: f64,
    /// A prepared-geometry file (`.hgeo`, from `hapticd prep`).
    #[serde(default)]
    pub prepared: Option<PathBuf>,
    /// A generated shape with its dimensions.
    #[serde(default)]
    pub shape: Option<Shape>,
    /// Position of the object's frame in the world (m); for the tool
    /// object, where it starts. Default the origin.
    #[serde(default)]
    pub position_m: [f64; 3],
    /// Orientation as a rotation vector (axis × angle, rad). Default none.
    #[serde(default)]
    pub rotation_rad: [f64; 3],
    /// Which contact geometry the object contributes.
    pub role: ObjectRole,
    /// `true` for the tool the device drives. Default `false`:
    /// scenes are mostly static environment.
    #[serde(default)]
    pub tool: bool,
    /// The `[materials]` entry between this (static) object and the tool.
    /// Default `"default"`, which need not be written out.
    #[serde(default = "default_material")]
    pub(crate) material: String,
    /// `true` for an environment object that moves: the physics thread
    /// moves it as a rigid body of the `[physics]` world, under gravity,
    /// contact with the other objects, its joints and the contact wrench of
    /// the tool. Default `false`: a static body of that world, fixed.
    #[serde(default)]
    pub movable: bool,
    /// Density of the tool or a movable object (kg/m³), from which its
    /// mass, centre of mass and inertia follow by integrating over its
    /// closed mesh. Default 1,000 kg/m³ (water; most plastics are
    /// 900–1,400) for movable objects; the tool's mass properties come from
    /// its mesh only when this is given.
    #[serde(default)]
    pub(crate) density_kg_m3: Option<f64>,
    /// Mass of the tool or a movable object (kg), overriding its mesh's.
    /// Without it or a density, the tool has the rendering defaults' mass:
    /// 0.1 kg, a 5 cm plastic cube.
    #[serde(default)]
    pub(crate) mass_kg: Option<f64>,
    /// Principal moments of inertia of the tool or a movable object about
    /// its centre of mass, along its frame's axes (kg·m²), overriding its
    /// mesh's. Default the mesh's, scaled to `mass_kg`; for a tool without
    /// a density, a solid cube's of `mass_kg` and 5 cm sides.
    #[serde(default)]
    pub(crate) inertia_kg_m2: Option<[f64; 3]>,
    /// Viscous drag on a movable object's velocity, as in air or oil
    /// (N·s/m). Default none.
    #[serde(default)]
    pub(crate) linear_damping_n_s_per_m: Option<f64>,
    /// Viscous drag on a movable object's angular velocity (N·m·s/rad).
    /// Default none.
    #[serde(default)]
    pub(crate) angular_damping_n_m_s_per_rad: Option<f64>,
    /// Cells per axis of the distance field built from a mesh or shape.
    /// Default 64, the corner of Zhao, Li & Barbič (static friction LP) §5.4.
    #[serde(default = "default_field_resolution")]
    pub field_resolution: u32,
    /// Points sampled on a mesh or shape for its point shell. Default 2,000,
    /// Zhao et al. §5.4's cube.
    #[serde(default = "default_shell_points")]
    pub shell_points: usize,
    /// Levels of the nested point tree on the point shell. Default 6, as
    /// Zhao et al.'s trees.
    #[serde(default = "default_tree_levels")]
    pub tree_levels: usize,
}

fn default_material() -> String {
    DEFAULT_MATERIAL.to_owned()
}

fn default_mesh_scale() -> f64 {
    1.0
}

/// A [`LengthUnit`] from its symbol or name.
fn length_unit<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<LengthUnit, D::Error> {
    let text = String::deserialize(deserializer)?;
    text.parse().map_err(serde::de::Error::custom)
}

fn default_field_resolution() -> u32 {
    64
}

fn default_shell_points() -> usize {
    2000
}

fn default_tree_levels() -> usize {
    6
}

/// The material an object uses when it names none; `[materials.default]`
/// overrides it.
pub(crate) const DEFAULT_MATERIAL: &str = "default";

/// Generated geometry, in metres, centred at the object's frame unless
/// stated.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Shape {
    /// An axis-aligned box.
    Box { half_extents_m: [f64; 3] },
    /// An icosphere of 4 subdivisions (5,120 triangles).
    Sphere { radius_m: f64 },
    /// A torus about z (96 × 48 segments).
    Torus {
        major_radius_m: f64,
        minor_radius_m: f64,
    },
    /// A cylinder along z.
    Cylinder {
        radius_m: f64,
        length_m: f64,
        segments: u32,
    },
    /// The L prism of `haptic_mesh::shapes::corner_mesh`: floor top at
    /// `z = 0`, wall face at `x = 0`, inner edge on the y axis.
    Corner {
        reach_m: f64,
        height_m: f64,
        thickness_m: f64,
        depth_m: f64,
    },
    /// A box with a cylindrical hole along z through its centre.
    BlockWithHole {
        half_extents_m: [f64; 3],
        hole_radius_m: f64,
        segments: u32,
    },
    /// A square grid of points in `z = 0`, normals `+z`: a floor's point
    /// shell only.
    FloorGrid {
        points_per_side: usize,
        spacing_m: f64,
    },
}

impl Shape {
    /// The shape's mesh; `None` for a [`Shape::FloorGrid`], which is points.
    pub fn mesh(&self) -> Option<TriangleMesh> {
        Some(match *self {
            Self::Box { half_extents_m } => box_mesh(half_extents_m.into()),
            Self::Sphere { radius_m } => icosphere(radius_m, 4),
            Self::Torus {
                major_radius_m,
                minor_radius_m,
            } => torus(major_radius_m, minor_radius_m, 96, 48),
            Self::Cylinder {
                radius_m,
                length_m,
                segments,
            } => cylinder(radius_m, length_m, segments),
            Self::Corner {
                reach_m,
                height_m,
                thickness_m,
                depth_m,
            } => corner_mesh(reach_m, height_m, thickness_m, depth_m),
            Self::BlockWithHole {
                half_extents_m,
                hole_radius_m,
                segments,
            } => block_with_hole(half_extents_m.into(), hole_radius_m, segments),
            Self::FloorGrid { .. } => return None,
        })
    }

    /// A [`Shape::FloorGrid`]'s points.
    pub fn point_grid(&self) -> Option<PointShell> {
        match *self {
            Self::FloorGrid {
                points_per_side,
                spacing_m,
            } => Some(floor_shell(points_per_side, spacing_m)),
            _ => None,
        }
    }
}

/// The density of a movable object that gives none (kg/m³): water's; most
/// plastics are 900–1,400 kg/m³.
pub const DEFAULT_DENSITY_KG_M3: f64 = 1000.0;

impl ObjectConfig {
    /// The density its mass properties are computed at (kg/m³):
    /// `density_kg_m3`, or [`DEFAULT_DENSITY_KG_M3`].
    pub fn density(&self) -> f64 {
        self.density_kg_m3.unwrap_or(DEFAULT_DENSITY_KG_M3)
    }

    /// Whether its mass properties come from its mesh: a movable object's
    /// always, the tool's when it gives `density_kg_m3`.
    pub fn mass_from_mesh(&self) -> bool {
        self.movable || self.density_kg_m3.is_some()
    }

    /// Mass, and inertia about the centre of mass along the object's axes.
    /// `solid` is its closed mesh's at [`density`](Self::density), when its
    /// [mass comes from its mesh](Self::mass_from_mesh); else the rendering
    /// defaults stand in (a 0.1 kg, 5 cm cube). `mass_kg` and
    /// `inertia_kg_m2` override either; `mass_kg` alone scales the inertia
    /// to itself (the same shape at another density).
    pub fn mass_properties(&self, solid: Option<&SolidMass>) -> MassProperties {
        let (mass, inertia) = match solid.filter(|_| self.mass_from_mesh()) {
            Some(solid) => (solid.mass, solid.inertia),
            None => {
                let defaults = RenderParameters::default().mass;
                (defaults.mass, defaults.body_inertia)
            }
        };
        let scaled = self.mass_kg.unwrap_or(mass);
        let body_inertia = match self.inertia_kg_m2 {
            Some(i) => Matrix3::from_diagonal(&Vector3::from(i)),
            None => inertia * (scaled / mass),
        };
        MassProperties {
            mass: scaled,
            body_inertia,
        }
    }

    /// A movable object's viscous drag: linear (N·s/m) and angular
    /// (N·m·s/rad), zero unless given.
    pub fn drag(&self) -> (f64, f64) {
        (
            self.linear_damping_n_s_per_m.unwrap_or(0.0),
            self.angular_damping_n_m_s_per_rad.unwrap_or(0.0),
        )
    }

    /// The name of its `[materials]` entry.
    pub fn material_name(&self) -> &str {
        &self.material
    }

    /// Object frame → world.
    pub fn pose(&self) -> Isometry3<f64> {
        Isometry3::from_parts(
            Translation3::from(Vector3::from(self.position_m)),
            UnitQuaternion::from_scaled_axis(Vector3::from(self.rotation_rad)),
        )
    }
}

/// The input device and how its workspace maps into the scene.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DeviceConfig {
    /// Default `simulated`: runs without hardware.
    pub kind: DeviceKind,
    /// Device profile of `kind = "hid"`: a file stem in `profiles_dir`.
    /// Left out, the daemon uses the one connected device that matches a
    /// profile, and refuses to guess between several.
    pub profile: Option<String>,
    /// Directory of device profiles. Default `../device-profiles`, where
    /// the repository keeps them next to `config/`.
    pub profiles_dir: PathBuf,
    /// Scripted motion of `kind = "simulated"`, inline; or `motion_file`.
    pub motion: Option<Motion>,
    /// Scripted motion of `kind = "simulated"`, as a file.
    pub motion_file: Option<PathBuf>,
    /// Recorded trajectory of `kind = "emulator"` (`hapticd record`).
    pub trajectory_file: Option<PathBuf>,
    /// How `kind = "emulator"` moves the handle along the recording.
    pub emulator: EmulatorSettings,
    /// Scene position of the device workspace's origin (m). Default the
    /// scene origin.
    pub(crate) workspace_offset_m: [f64; 3],
    /// Rotation of the device frame into the scene (rotation vector, rad).
    /// Default none.
    pub(crate) workspace_rotation_rad: [f64; 3],
    /// Scene metres per device metre (dimensionless, > 0). Default 1: the
    /// hand moves the tool as far as itself.
    pub workspace_scale: f64,
    /// Button (bit index, 0–31) that declutches the tool while held.
    /// Default none.
    pub clutch_button: Option<u32>,
    /// What a device lost mid-run does, whatever its kind: `"wait"` (zero
    /// force, reconnect, a soft start when back) or `"stop"` (zero force,
    /// the shutdown ramp, and the run ends as `device lost`). Default
    /// `"wait"`.
    pub on_disconnect: OnDisconnect,
    /// `kind = "forcedim"`: the Force Dimension SDK and device.
    pub forcedim: ForceDimensionConfig,
    /// The Novint Falcon of `kind = "falcon"` (docs/devices.md).
    pub falcon: FalconConfig,
    /// `kind = "openhaptics"`: libHD and the device it opens.
    pub openhaptics: OpenHapticsConfig,
    /// `kind = "haply"`: the Inverse Service and the devices it serves.
    pub haply: HaplyConfig,
}

impl Default for DeviceConfig {
    fn default() -> Self {
        Self {
            kind: DeviceKind::Simulated,
            profile: None,
            profiles_dir: PathBuf::from("../device-profiles"),
            motion: None,
            motion_file: None,
            trajectory_file: None,
            emulator: EmulatorSettings::default(),
            workspace_offset_m: [0.0; 3],
            workspace_rotation_rad: [0.0; 3],
            workspace_scale: 1.0,
            clutch_button: None,
            on_disconnect: OnDisconnect::Wait,
            forcedim: ForceDimensionConfig::default(),
            falcon: FalconConfig::default(),
            openhaptics: OpenHapticsConfig::default(),
            haply: HaplyConfig::default(),
        }
    }
}

/// `[device.haply]`: a Haply Inverse3, and the VerseGrip on it, through
/// the Haply Inverse Service's WebSocket simulation channel
/// (docs/devices.md, "Haply Inverse3"). The device frame maps into the
/// scene through the `[device]` workspace keys.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HaplyConfig {
    /// The service's simulation channel. Default `ws://127.0.0.1:10001`,
    /// where the service listens on the same machine.
    pub url: String,
    /// Which Inverse3: its `device_id` or its serial port, as `hapticd
    /// devices` lists them. Default none: the first the service lists.
    pub inverse3: Option<String>,
    /// Read a VerseGrip's orientation and buttons. Default `true` (with
    /// none connected the handle reads 3 DoF).
    pub use_verse_grip: bool,
    /// Which VerseGrip, wired or wireless: its `device_id` or port.
    /// Default none: the first listed, if any.
    pub verse_grip: Option<String>,
    /// Where the device frame's origin sits in the service's frame (m: x
    /// right, y away from the user, z up, from the mounting plate).
    /// Default `[0, 0, 0]`.
    pub centre_m: [f64; 3],
    /// Largest force (N). Default 3: conservative for a desk-top arm.
    pub max_force_n: f64,
    /// Commands sent, and state updates received, per second. Default
    /// 1000, the servo's rate.
    pub exchange_rate_hz: f64,
    /// A sample older than this is stale: zero force until fresh ones
    /// come (ms). Default 20.
    pub stale_after_ms: f64,
    /// No reply for this long and the connection is taken as lost (ms).
    /// Default 500.
    pub lost_after_ms: f64,
    /// Connecting, and the first message, each within this (ms). Default
    /// 1000.
    pub connect_timeout_ms: f64,
    /// Between two attempts to reconnect (ms). Default 500.
    pub reconnect_interval_ms: f64,
}

impl Default for HaplyConfig {
    fn default() -> Self {
        Self {
            url: "ws://127.0.0.1:10001".to_owned(),
            inverse3: None,
            use_verse_grip: true,
            verse_grip: None,
            centre_m: [0.0; 3],
            max_force_n: 3.0,
            exchange_rate_hz: 1000.0,
            stale_after_ms: 20.0,
            lost_after_ms: 500.0,
            connect_timeout_ms: 1000.0,
            reconnect_interval_ms: 500.0,
        }
    }
}

/// `[device.openhaptics]`: a 3D Systems Touch, Touch X or Phantom through
/// the OpenHaptics HD API (docs/devices.md, "OpenHaptics"). The device
/// frame maps into the scene through the `[device]` workspace keys.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OpenHapticsConfig {
    /// libHD (`libHD.so`) or a directory holding it, relative to the
    /// config's directory; tried before `$OH_SDK_BASE`, `$OPENHAPTICS` and
    /// the system's directories. Default none.
    pub library: Option<PathBuf>,
    /// The device's configuration name in the Touch setup tool. Default
    /// "Default Device": the HD API's default device.
    pub device_name: String,
    /// Largest force (N). Default the HD API's `HD_NOMINAL_MAX_FORCE`.
    pub max_force_n: Option<f64>,
}

impl Default for OpenHapticsConfig {
    fn default() -> Self {
        Self {
            library: None,
            device_name: "Default Device".to_owned(),
            max_force_n: None,
        }
    }
}

/// `[device.forcedim]`: a Force Dimension device (omega, sigma, delta,
/// lambda, Novint Falcon) through the vendor's SDK (docs/devices.md,
/// "Force Dimension"). The device frame maps into the scene through the
/// `[device]` workspace keys like any device's.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ForceDimensionConfig {
    /// The SDK library (`libdrd.so`/`libdhd.so`) or a directory holding it,
    /// relative to the config's directory; tried before `$FORCEDIM_SDK`
    /// and the system's directories. Default none.
    pub library: Option<PathBuf>,
    /// Which connected device, 0 for the first the SDK lists (0–127).
    pub device_index: u32,
    /// The SDK's compensation of the arm's weight. Default `true`.
    pub gravity_compensation: bool,
    /// Initialise (calibrate) the device with `drdAutoInit` when it needs
    /// it; needs libdrd. Default `true`.
    pub auto_init: bool,
    /// The device's watchdog (ms): forces off when no force command comes
    /// for this long; 0 turns it off; at most 31.875 (255 × 125 µs).
    /// Default 10 ms: ten 1 kHz ticks, as long as the safety layer waits
    /// for a stale sample.
    pub watchdog_ms: f64,
    /// The velocity above which the device brakes, in the SDK's
    /// device-dependent units. Default none: the device's setting stays.
    pub velocity_threshold: Option<u32>,
    /// Largest force (N). Default the SDK's limit, else the model's
    /// nominal continuous force.
    pub max_force_n: Option<f64>,
    /// Largest torque of an actuated wrist (N·m). Default as `max_force_n`.
    pub max_torque_n_m: Option<f64>,
}

impl Default for ForceDimensionConfig {
    fn default() -> Self {
        Self {
            library: None,
            device_index: 0,
            gravity_compensation: true,
            auto_init: true,
            watchdog_ms: 10.0,
            velocity_threshold: None,
            max_force_n: None,
            max_torque_n_m: None,
        }
    }
}

/// `[device.falcon]`: a Novint Falcon driven through its open protocol.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FalconConfig {
    /// Novint's firmware image, which the user supplies (relative to the
    /// config's directory). Required for `kind = "falcon"`.
    pub firmware: Option<PathBuf>,
    /// Which connected Falcon, in USB enumeration order (`hapticd devices`
    /// lists them). Default 0, the first.
    pub index: usize,
    /// Home the encoders before reporting positions: the LED is red and no
    /// force is written until the grip has been moved through its range.
    /// Default `true`: positions are meaningless until homed.
    pub homing_on_start: bool,
    /// Upward force (N, ≥ 0, at most the Falcon's 8.9 N) added to every
    /// rendered force to carry the grip's weight. Default 0: off.
    pub gravity_compensation_n: f64,
    /// Where the device frame's origin sits in libnifalcon's frame (m: x
    /// right, y up, z towards the user from the leg bases). Default
    /// `[0, 0, 0.11]`, the workspace centre libnifalcon's examples use.
    pub centre_m: [f64; 3],
}

impl Default for FalconConfig {
    fn default() -> Self {
        Self {
            firmware: None,
            index: 0,
            homing_on_start: true,
            gravity_compensation_n: 0.0,
            centre_m: [0.0, 0.0, 0.11],
        }
    }
}

impl DeviceConfig {
    /// Device frame → scene, before scaling.
    pub fn workspace_pose(&self) -> Isometry3<f64> {
        Isometry3::from_parts(
            Translation3::from(Vector3::from(self.workspace_offset_m)),
            UnitQuaternion::from_scaled_axis(Vector3::from(self.workspace_rotation_rad)),
        )
    }
}

/// The recorded-trajectory emulator's handle (docs/devices.md).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EmulatorSettings {
    /// Default `hand`: the recording is a hand holding a handle with mass
    /// through a spring-damper, so rendered forces push the handle back
    /// and reach the recording; `kinematic` replays positions exactly and
    /// outputs no force.
    pub(crate) mode: EmulatorModeConfig,
    /// Handle mass (kg). Default 0.2 kg, a desk-top device's handle.
    pub(crate) handle_mass_kg: f64,
    /// Hand stiffness (N/m). Default 300 N/m, a relaxed grip.
    pub(crate) hand_stiffness_n_per_m: f64,
    /// Hand damping (N·s/m). Default 15 N·s/m, near critical for the
    /// default mass and stiffness (2√(k m) = 15.5).
    pub(crate) hand_damping_n_s_per_m: f64,
    /// The handle's own damping to ground (N·s/m). Default 1 N·s/m.
    pub(crate) handle_damping_n_s_per_m: f64,
    /// How the handle turns in `mode = "hand"`. Default `hand`: it has an
    /// inertia, is held by a rotational spring-damper hand driven by the
    /// recorded orientation, and rendered torques turn it (the emulator
    /// outputs 6 DoF). `kinematic`: the orientation follows the recording
    /// and rendered torques are not written (3 DoF out).
    pub(crate) rotation: EmulatorModeConfig,
    /// Handle inertia about every axis (kg·m²). Default 1e-4 kg·m²: the
    /// default 0.2 kg handle as a 10 cm grip of 1.5 cm radius (1.8e-4
    /// across it, 2.3e-5 about its axis).
    pub(crate) handle_inertia_kg_m2: f64,
    /// Hand rotational stiffness (N·m/rad). Default 1 N·m/rad, a relaxed
    /// wrist; it equals the default coupling torsional stiffness, so a
    /// handle twisting a blocked tool turns half as far as the hand.
    pub(crate) hand_rotational_stiffness_n_m_per_rad: f64,
    /// Hand rotational damping (N·m·s/rad). Default 0.02 N·m·s/rad,
    /// critical for the default inertia and stiffness (2√(k I)).
    pub(crate) hand_rotational_damping_n_m_s_per_rad: f64,
    /// The handle's own rotational damping to ground (N·m·s/rad). Default
    /// 0.001 N·m·s/rad.
    pub(crate) handle_rotational_damping_n_m_s_per_rad: f64,
}

impl Default for EmulatorSettings {
    fn default() -> Self {
        Self {
            mode: EmulatorModeConfig::Hand,
            handle_mass_kg: 0.2,
            hand_stiffness_n_per_m: 300.0,
            hand_damping_n_s_per_m: 15.0,
            handle_damping_n_s_per_m: 1.0,
            rotation: EmulatorModeConfig::Hand,
            handle_inertia_kg_m2: 1e-4,
            hand_rotational_stiffness_n_m_per_rad: 1.0,
            hand_rotational_damping_n_m_s_per_rad: 0.02,
            handle_rotational_damping_n_m_s_per_rad: 0.001,
        }
    }
}

impl EmulatorSettings {
    /// The emulator's mode; in hand mode the orientation has rotational
    /// dynamics unless `rotation = "kinematic"`.
    pub fn mode(&self) -> EmulatorMode {
        match self.mode {
            EmulatorModeConfig::Kinematic => EmulatorMode::Kinematic,
            EmulatorModeConfig::Hand => EmulatorMode::Hand(HandParams {
                mass: self.handle_mass_kg,
                k_hand: self.hand_stiffness_n_per_m,
                c_hand: self.hand_damping_n_s_per_m,
                damping: self.handle_damping_n_s_per_m,
                rotation: (self.rotation == EmulatorModeConfig::Hand).then_some(RotationParams {
                    inertia: self.handle_inertia_kg_m2,
                    k_hand: self.hand_rotational_stiffness_n_m_per_rad,
                    c_hand: self.hand_rotational_damping_n_m_s_per_rad,
                    damping: self.handle_rotational_damping_n_m_s_per_rad,
                }),
            }),
        }
    }
}

/// [`EmulatorMode`] in a config, and whether a hand-mode handle turns
/// (`rotation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum EmulatorModeConfig {
    Kinematic,
    Hand,
}

/// Which device drives the tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceKind {
    /// A scripted motion (`motion` or `motion_file`).
    Simulated,
    /// A recorded trajectory played back (`trajectory_file`).
    Emulator,
    /// A HID device through its profile (`profile`).
    Hid,
    /// A Force Dimension device through the vendor's SDK (`[device.forcedim]`).
    #[serde(rename = "forcedim")]
    ForceDimension,
    /// A Novint Falcon through its open protocol (`[device.falcon]`).
    Falcon,
    /// A Touch, Touch X or Phantom through the OpenHaptics HD API
    /// (`[device.openhaptics]`).
    #[serde(rename = "openhaptics")]
    OpenHaptics,
    /// A Haply Inverse3 (and VerseGrip) through the Inverse Service
    /// (`[device.haply]`).
    Haply,
}

/// `[coupling]`: how the servo renders what the physics thread moves
/// between the physics thread's steps (docs/rendering.md, "Local models").
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Coupling {
    /// Each physics step publishes, for every dynamic body the tool can
    /// touch that its joints do not hold still, a local model (its state,
    /// mass, inertia, its contacts' wrench with their gradients and the
    /// motions its joints allow), which the servo
    /// advances every tick under the tool's push, so the body gives way at
    /// the servo rate and its inertia is felt. Default `true`; `false`
    /// renders each body at the last published pose.
    pub local_models: bool,
    /// Time constant over which the difference between the servo's local
    /// model and a new physics step fades, so that it does not step the
    /// force (ms). Default 10.
    pub blend_ms: f64,
    /// The passivity controller (Hannaford & Ryu): when the energy the
    /// scene has taken in from the device would go negative, damping
    /// takes the deficit back (docs/rendering.md, "Passivity"). Default
    /// `true`; the observer books the energy either way.
    pub passivity: bool,
    /// The largest damping the controller adds on the force port
    /// (N·s/m). Default 50, well inside an explicit damper's bound `2m/T`
    /// for a 0.2 kg handle at 1 kHz (400 N·s/m).
    pub passivity_max_damping_n_s_per_m: f64,
    /// The largest damping it adds on the torque port (N·m·s/rad).
    /// Default 0.05 (the bound `2I/T` is 0.2 for 1e-4 kg·m² at 1 kHz).
    pub passivity_max_rotational_damping_n_m_s_per_rad: f64,
    /// The device's own viscous damping (N·s/m), where known: a coupling
    /// stiffness at or above Colgate & Schenkel's `2b/T` (scaled to the
    /// handle by `device.workspace_scale²`) is warned of. Unset: the
    /// emulator's handle damping in hand mode, otherwise unknown.
    pub device_damping_n_s_per_m: Option<f64>,
    /// The same for its rotation (N·m·s/rad), against the torsional
    /// coupling stiffness.
    pub device_rotational_damping_n_m_s_per_rad: Option<f64>,
}

impl Default for Coupling {
    fn default() -> Self {
        Self {
            local_models: true,
            blend_ms: 10.0,
            passivity: true,
            passivity_max_damping_n_s_per_m: 50.0,
            passivity_max_rotational_damping_n_m_s_per_rad: 0.05,
            device_damping_n_s_per_m: None,
            device_rotational_damping_n_m_s_per_rad: None,
        }
    }
}

/// The daemon's threads. Each table may give any of its fields; the rest
/// keep that thread's defaults.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(from = "ThreadsFile")]
pub struct Threads {
    /// The servo loop: device I/O and one rendering cycle per tick.
    /// Default 1 kHz, the rate haptics needs (and Zhao et al.'s), at
    /// `SCHED_FIFO` priority 80, above ordinary real-time work.
    pub servo: Thread,
    /// The physics thread, moving the scene's movable objects. Default
    /// 200 Hz at normal priority: it exchanges state with the servo through
    /// lock-free hand-off and never holds it up.
    pub physics: Thread,
    /// Telemetry publishing. Default 100 Hz, normal priority: plots need no
    /// more and must never preempt the servo.
    pub telemetry: Thread,
    /// Hold `/dev/cpu_dma_latency` at 0 µs while running, so that idle
    /// CPUs never enter sleep states too deep to wake from within the
    /// servo's period (what `cyclictest -m` does too). Default on; costs
    /// idle power. Needs write access to the device (root by default).
    pub keep_cpus_awake: bool,
}

impl Default for Threads {
    fn default() -> Self {
        Self {
            servo: Thread {
                rate_hz: ServoRate::DEFAULT.hz(),
                priority: Some(80),
                cpu: None,
            },
            physics: Thread {
                rate_hz: 200.0,
                priority: None,
                cpu: None,
            },
            telemetry: Thread {
                rate_hz: 100.0,
                priority: None,
                cpu: None,
            },
            keep_cpus_awake: true,
        }
    }
}

/// One thread's schedule, defaults applied.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Thread {
    /// Loop rate (Hz, 1 Hz to 100 kHz).
    pub rate_hz: f64,
    /// `SCHED_FIFO` priority 1–99; `None` for normal scheduling.
    pub priority: Option<u8>,
    /// CPU to pin the thread to; `None` to let the kernel choose.
    pub cpu: Option<usize>,
}

/// `[threads]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ThreadsFile {
    #[serde(default)]
    servo: ThreadFile,
    #[serde(default)]
    physics: ThreadFile,
    #[serde(default)]
    telemetry: ThreadFile,
    keep_cpus_awake: Option<bool>,
}

/// One `[threads.NAME]` table as written; a field left out keeps the
/// thread's default.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThreadFile {
    /// Loop rate (Hz).
    rate_hz: Option<f64>,
    /// `SCHED_FIFO` priority 1–99, or 0 for normal scheduling.
    priority: Option<u8>,
    /// CPU to pin the thread to.
    cpu: Option<usize>,
}

impl ThreadFile {
    fn over(self, default: Thread) -> Thread {
        Thread {
            rate_hz: self.rate_hz.unwrap_or(default.rate_hz),
            priority: match self.priority {
                None => default.priority,
                Some(0) => None,
                Some(p) => Some(p),
            },
            cpu: self.cpu.or(default.cpu),
        }
    }
}

impl From<ThreadsFile> for Threads {
    fn from(file: ThreadsFile) -> Self {
        let d = Threads::default();
        Threads {
            servo: file.servo.over(d.servo),
            physics: file.physics.over(d.physics),
            telemetry: file.telemetry.over(d.telemetry),
            keep_cpus_awake: file.keep_cpus_awake.unwrap_or(d.keep_cpus_awake),
        }
    }
}

/// Where telemetry goes.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Telemetry {
    /// Default on: it costs the servo nothing (a lock-free ring).
    pub enabled: bool,
    /// UDP address the samples are sent to. Default `127.0.0.1:7701`,
    /// this machine; another host's address works too, but the stream is
    /// plain, unauthenticated UDP.
    pub address: SocketAddr,
}

impl Default for Telemetry {
    fn default() -> Self {
        Self {
            enabled: true,
            address: SocketAddr::from(([127, 0, 0, 1], 7701)),
        }
    }
}

/// The control API and state stream server (docs/protocol.md).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerSettings {
    /// Serve at all. Default on.
    pub enabled: bool,
    /// TCP address; port 0 picks a free one; empty: the Unix socket only.
    /// Default `127.0.0.1:7878`.
    pub listen: String,
    /// A Unix socket to serve on too, created with mode 0600 (relative to
    /// the config's directory).
    pub unix_socket: Option<PathBuf>,
    /// The bearer token every request must carry; required when `listen`
    /// is not a loopback address.
    pub token: Option<String>,
    /// Concurrent stream clients. Default 32.
    pub max_clients: usize,
    /// Largest request body (bytes). Default 65536.
    pub max_request_bytes: usize,
    /// Requests per second per peer address, in bursts of as many.
    /// Default 100.
    pub requests_per_second: u32,
}

impl Default for ServerSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            listen: "127.0.0.1:7878".into(),
            unix_socket: None,
            token: None,
            max_clients: 32,
            max_request_bytes: 65536,
            requests_per_second: 100,
        }
    }
}

impl ServerSettings {
    /// `listen` parsed, or `None` when empty; validation has checked it.
    pub fn listen_address(&self) -> Option<SocketAddr> {
        self.listen.parse().ok()
    }
}
