//! Run-time changes to the rendering parameters: a partial of the config
//! file's `[materials]` and `[rendering]`, with the file's field names,
//! applied to a copy of the scene and validated as a config file is.

use crate::schema::{ConfigFile, Material, Rendering};
use crate::{ConfigError, Scene, ServoScene};
use haptic_schema::rendering::{Friction, GradientModel, SolverChoice};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use utoipa::ToSchema;

/// The rendering parameters a run may change, in force: every material the
/// scene has (`[materials]`, and `default` when an object uses it without a
/// table) and `[rendering]`, with the config file's names and units.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct TunableParameters {
    pub materials: BTreeMap<String, Material>,
    pub rendering: Rendering,
}

/// Some of the [`TunableParameters`]: each field left out keeps its value.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RenderingPatch {
    /// By material name; only materials the scene has.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub materials: BTreeMap<String, MaterialPatch>,
    #[serde(default)]
    pub rendering: RenderingFieldsPatch,
}

/// Some fields of a `[materials.NAME]` table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MaterialPatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub friction_coefficient: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contact_stiffness_n_per_m: Option<f64>,
}

/// Declares the patch of `[rendering]`, one optional field per field of
/// [`Rendering`], and how it applies.
macro_rules! rendering_fields_patch {
    ($($(#[$attribute:meta])* $field:ident: $ty:ty),* $(,)?) => {
        /// Some fields of `[rendering]`.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize, Serialize, ToSchema)]
        #[serde(deny_unknown_fields)]
        pub struct RenderingFieldsPatch {
            $(
                #[serde(default, skip_serializing_if = "Option::is_none")]
                $(#[$attribute])*
                pub $field: Option<$ty>,
            )*
        }

        impl RenderingFieldsPatch {
            fn apply(&self, rendering: &mut Rendering) {
                $(
                    if let Some(value) = self.$field {
                        rendering.$field = value;
                    }
                )*
            }
        }
    };
}

rendering_fields_patch! {
    coupling_stiffness_n_per_m: f64,
    coupling_torsional_stiffness_n_m_per_rad: f64,
    static_damping: f64,
    // The range validation accepts (MAX_PYRAMID_SIDES), in the schema too:
    // a schema-valid integer must fit the field.
    #[schema(minimum = 3, maximum = 32)]
    pyramid_sides: usize,
    stiffness_scaling_contacts: f64,
    anti_stickiness: bool,
    gradient: GradientModel,
    friction: Friction,
    pre_sliding_displacement_m: f64,
    friction_spring_stiffness_n_per_m: f64,
    solver: SolverChoice,
}

impl Scene {
    /// The rendering parameters in force.
    pub fn tunable(&self) -> TunableParameters {
        TunableParameters {
            materials: self.file.materials_in_use(),
            rendering: self.file.rendering,
        }
    }

    /// This scene with `patch` applied, validated as a config file is;
    /// errors name the field as the file would (`rendering.static_damping`,
    /// `materials.wood.friction_coefficient`, `materials.NAME` for a
    /// material the scene does not have) and, as their file,
    /// [`patch_source`](Self::patch_source). `self` is left unchanged.
    pub fn patched(&self, patch: &RenderingPatch) -> Result<Scene, ConfigError> {
        let mut file = self.file.clone();
        file.apply(patch).map_err(|field| ConfigError {
            file: self.patch_source(),
            at: None,
            message: "the scene has no such material".into(),
            field: Some(field),
        })?;
        let mut patched =
            Scene::validate(file, &self.name, &self.base, None).map_err(|error| ConfigError {
                file: self.patch_source(),
                ..error
            })?;
        patched.text.clone_from(&self.text);
        Ok(patched)
    }

    /// What errors in a parameter patch name as their file:
    /// `<parameter patch of FILE>`.
    pub fn patch_source(&self) -> PathBuf {
        format!("<parameter patch of {}>", self.name.display()).into()
    }
}

impl ServoScene {
    /// [`Scene::patched`], unless the patched scene's solver cannot run in
    /// the servo (as [`ServoScene::new`]).
    pub fn patched(&self, patch: &RenderingPatch) -> Result<ServoScene, ConfigError> {
        ServoScene::new(Scene::patched(self, patch)?).map_err(|error| ConfigError {
            file: self.patch_source(),
            ..error
        })
    }
}

impl ConfigFile {
    /// Every material an object uses or `[materials]` declares, by name.
    fn materials_in_use(&self) -> BTreeMap<String, Material> {
        let mut materials = self.materials.clone();
        for object in &self.objects {
            if let Some(material) = self.material(object) {
                materials.entry(object.material.clone()).or_insert(material);
            }
        }
        materials
    }

    /// Applies `patch`; a material the file has not is refused with its
    /// field, `materials.NAME`.
    fn apply(&mut self, patch: &RenderingPatch) -> Result<(), String> {
        let mut materials = self.materials_in_use();
        for (name, change) in &patch.materials {
            let material = materials
                .get_mut(name)
                .ok_or_else(|| format!("materials.{name}"))?;
            if let Some(mu) = change.friction_coefficient {
                material.friction_coefficient = mu;
            }
            if let Some(k) = change.contact_stiffness_n_per_m {
                material.contact_stiffness_n_per_m = k;
            }
        }
        self.materials = materials;
        patch.rendering.apply(&mut self.rendering);
        Ok(())
    }
}
