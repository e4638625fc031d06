//! Where `hapticd prep` and `hapticd inspect` read a mesh from: a mesh
//! file, or a built-in shape as if it were one.

use anyhow::{bail, Context};
use haptic_mesh::shapes::{builtin, BUILTIN_NAMES};
use haptic_mesh::{
    load_mesh_from_bytes, LengthUnit, LoadOptions, LoadedMesh, MeshError, MeshFormat, TriangleMesh,
};
use std::path::Path;

/// A mesh's bytes and how to read them.
pub struct Source {
    /// The path as given, or `builtin:NAME`.
    pub name: String,
    pub bytes: Vec<u8>,
    pub format: MeshFormat,
    pub unit: LengthUnit,
}

impl Source {
    /// The mesh, in metres times `scale`.
    pub fn load(&self, scale: f64) -> anyhow::Result<LoadedMesh> {
        let options = LoadOptions {
            unit: self.unit,
            scale,
            weld_tolerance: None,
        };
        Ok(load_mesh_from_bytes(
            &self.bytes,
            self.format,
            &self.name,
            &options,
        )?)
    }

    pub fn read(spec: &str, unit: Option<LengthUnit>) -> anyhow::Result<Self> {
        if let Some(shape) = spec.strip_prefix("builtin:") {
            if unit.is_some_and(|u| u != LengthUnit::Metre) {
                bail!("{spec}: built-in shapes are in metres; --unit applies to mesh files");
            }
            let Some(mesh) = builtin(shape) else {
                bail!(
                    "{spec}: no such built-in shape (expected {})",
                    BUILTIN_NAMES.join(", ")
                );
            };
            // As OFF text, so that a built-in shape is cached and loaded like a file.
            return Ok(Self {
                name: spec.to_owned(),
                bytes: to_off(&mesh).into_bytes(),
                format: MeshFormat::Off,
                unit: LengthUnit::Metre,
            });
        }
        let path = Path::new(spec);
        let extension = path
            .extension()
            .map(|e| e.to_string_lossy().into_owned())
            .unwrap_or_default();
        let format = MeshFormat::from_extension(&extension).ok_or_else(|| {
            MeshError::UnsupportedExtension {
                file: spec.to_owned(),
                extension,
            }
        })?;
        let bytes = std::fs::read(path).with_context(|| format!("{spec}: cannot read"))?;
        Ok(Self {
            name: spec.to_owned(),
            bytes,
            format,
            unit: unit.unwrap_or_default(),
        })
    }
}

/// `mesh` as an OFF file; positions print exactly.
fn to_off(mesh: &TriangleMesh) -> String {
    let vertices = mesh
        .vertices
        .iter()
        .map(|v| format!("{} {} {}\n", v.x, v.y, v.z));
    let faces = mesh
        .triangles
        .iter()
        .map(|[a, b, c]| format!("3 {a} {b} {c}\n"));
    let header = format!("OFF\n{} {} 0\n", mesh.vertices.len(), mesh.triangles.len());
    std::iter::once(header)
        .chain(vertices)
        .chain(faces)
        .collect()
}
