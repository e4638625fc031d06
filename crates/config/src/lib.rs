//! The haptic rendering server's configuration: one TOML file per scene.
//!
//! Top-level tables: `[[objects]]` (the scene), `[materials.NAME]`,
//! `[rendering]`, `[device]`, `[threads]`, `[telemetry]`, `[server]`,
//! `[physics]` (the rigid world of the physics thread), `[[joints]]`,
//! `[[deformables]]` (deformable bodies coupled with that world) and
//! `[deformable_solver]`.
//! Every table refuses unknown fields and every enum unknown values; units
//! are in the field names (`_m`, `_rad`, `_n_per_m`, `_hz`, …) or, for
//! dimensionless numbers, in the docs. Every table but `[[objects]]` may be
//! left out or empty and takes the defaults documented on each field.
//! Errors found only once the scene's geometry is built (an open mesh
//! where mass properties need a closed one) are [`Scene::invalid`]'s, and
//! name the file, line and field alike.
//!
//! [`Scene::load`] parses a file, applies the command line's [`Overrides`]
//! and validates the result into a [`Scene`], read-only; a [`ConfigError`]
//! names the file, the line and column, and the field. A [`ServoScene`] is a
//! scene the real-time servo may run; [`Scene::patched`] applies a
//! [`RenderingPatch`] at run time through the same validation. Relative paths in a config are
//! relative to the directory of the config file.

mod check;
mod deformable;
mod deformable_world;
mod file;
mod locate;
mod patch;
mod physics;
mod scene;
mod schema;
mod validate;

pub use deformable::{
    AnchorConfig, DeformableConfig, DeformableShape, DeformableSolver, FrictionBoundName,
    IntegrationName, MaterialConfig, ParadigmConfig, TangentBasisName, MAX_GENERATED_NODES,
};
pub use haptic_schema::patch::{
    MaterialPatch, RenderingFieldsPatch, RenderingPatch, TunableParameters,
};
pub use haptic_schema::rendering::{Material, Rendering};
pub use locate::Location;
pub use physics::{Controller, JointConfig, JointKindName, Physics, Pid};
pub use scene::{Overrides, Scene, ServoScene};
pub use schema::{
    Coupling, DeviceConfig, DeviceKind, EmulatorSettings, FalconConfig, ForceDimensionConfig,
    HaplyConfig, ObjectConfig, ObjectRole, OpenHapticsConfig, ServerSettings, Shape, Telemetry,
    Thread, Threads, DEFAULT_DENSITY_KG_M3,
};

use file::ConfigFile;
use locate::FieldSpans;

use std::path::{Path, PathBuf};

/// A config that failed to load.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}{}{}{message}", file.display(), location(*at), field_prefix(field))]
pub struct ConfigError {
    pub file: PathBuf,
    /// Where in the file, when known.
    pub at: Option<Location>,
    /// The field's path, e.g. `objects[1].shape.radius_m`, when known.
    pub field: Option<String>,
    pub message: String,
}

fn location(at: Option<Location>) -> String {
    at.map_or(": ".to_owned(), |l| format!(":{}:{}: ", l.line, l.column))
}

fn field_prefix(field: &Option<String>) -> String {
    field
        .as_ref()
        .map_or(String::new(), |f| format!("field `{f}`: "))
}

impl Scene {
    /// Reads, parses and validates the config at `path`, with `overrides`
    /// applied before validation. Errors in fields written in the file name
    /// their line.
    pub fn load(path: impl AsRef<Path>, overrides: &Overrides) -> Result<Scene, ConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: path.to_owned(),
            at: None,
            field: None,
            message: format!("cannot read: {e}"),
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        Scene::parse(&text, path, base, overrides)
    }

    /// Parses and validates `text`, with `overrides` applied in between;
    /// `file` names it in errors and `base` is the directory its relative
    /// paths start from.
    pub(crate) fn parse(
        text: &str,
        file: &Path,
        base: &Path,
        overrides: &Overrides,
    ) -> Result<Scene, ConfigError> {
        let mut config: ConfigFile = toml::from_str(text).map_err(|e| {
            let spans = FieldSpans::of(text);
            let offset = e.span().map(|s| s.start);
            let mut field = offset.and_then(|o| spans.path_at(o)).map(str::to_owned);
            let message = e.message().trim_end().to_owned();
            // A missing field's span is its table: name the field itself.
            if let Some(missing) = message
                .strip_prefix("missing field `")
                .and_then(|m| m.split('`').next())
            {
                field = Some(match field {
                    Some(table) if !table.is_empty() => format!("{table}.{missing}"),
                    _ => missing.to_owned(),
                });
            }
            ConfigError {
                file: file.to_owned(),
                at: offset.map(|o| Location::of(text, o)),
                field: field.filter(|f| !f.is_empty()),
                message,
            }
        })?;
        overrides.apply(&mut config);
        Scene::validate(config, file, base, Some(text))
    }

    /// The embedded default scene (`config/default.toml`) with `overrides`:
    /// a cube's point shell pressed into a corner's field by a simulated
    /// device playing a repeating press, slide and lift. It references no
    /// other file; its relative paths (the device profiles of
    /// `--device hid`) resolve as `config/default.toml`'s would from the
    /// current directory, the repository's root.
    pub fn embedded_default(overrides: &Overrides) -> Result<Scene, ConfigError> {
        Scene::parse(
            EMBEDDED_DEFAULT,
            Path::new(EMBEDDED_DEFAULT_NAME),
            Path::new("config"),
            overrides,
        )
    }
}

/// Where field `path` of `text` is written, or its nearest written ancestor.
fn locate(text: &str, path: &str) -> Option<Location> {
    FieldSpans::of(text)
        .start_of(path)
        .map(|offset| Location::of(text, offset))
}

/// What errors in the embedded default scene are attributed to.
const EMBEDDED_DEFAULT_NAME: &str = "<embedded default scene>";

/// The text of `config/default.toml`.
const EMBEDDED_DEFAULT: &str = include_str!("../../../config/default.toml");

#[cfg(test)]
mod tests;
