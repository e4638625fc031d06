//! Run-time changes to the rendering parameters ([`RenderingPatch`]),
//! applied to a copy of the scene and validated as a config file is.

use crate::file::ConfigFile;
use crate::{ConfigError, Scene, ServoScene};
use haptic_schema::patch::{RenderingPatch, TunableParameters};
use haptic_schema::rendering::Material;
use std::collections::BTreeMap;
use std::path::PathBuf;

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
