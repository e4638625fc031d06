//! A whole configuration file as written: every table, before
//! validation.

use crate::deformable::{DeformableConfig, DeformableSolver};
use crate::physics::{JointConfig, Physics};
use crate::schema::{
    Coupling, DeviceConfig, ObjectConfig, ServerSettings, Telemetry, Threads, DEFAULT_MATERIAL,
};
use haptic_schema::rendering::{Material, Rendering};
use serde::Deserialize;
use std::collections::BTreeMap;

/// A whole configuration file as written, before validation.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConfigFile {
    /// The scene: exactly one tool (`tool = true`) and environment objects.
    pub objects: Vec<ObjectConfig>,
    /// Materials by name; objects name theirs in `material`.
    #[serde(default)]
    pub materials: BTreeMap<String, Material>,
    #[serde(default)]
    pub rendering: Rendering,
    #[serde(default)]
    pub device: DeviceConfig,
    #[serde(default)]
    pub threads: Threads,
    #[serde(default)]
    pub telemetry: Telemetry,
    #[serde(default)]
    pub server: ServerSettings,
    #[serde(default)]
    pub physics: Physics,
    #[serde(default)]
    pub coupling: Coupling,
    /// Joints between the bodies of the physics world.
    #[serde(default)]
    pub joints: Vec<JointConfig>,
    /// Deformable bodies coupled with the rigid world.
    #[serde(default)]
    pub deformables: Vec<DeformableConfig>,
    #[serde(default)]
    pub deformable_solver: DeformableSolver,
}

impl ConfigFile {
    /// `object`'s material: its `[materials]` entry, or the default material.
    pub(crate) fn material(&self, object: &ObjectConfig) -> Option<Material> {
        self.materials
            .get(&object.material)
            .copied()
            .or_else(|| (object.material == DEFAULT_MATERIAL).then(Material::default))
    }
}
