//! The haptic rendering server's configuration: one TOML file per scene.
//!
//! Top-level tables: `[[objects]]` (the scene), `[materials.NAME]`,
//! `[rendering]`, `[device]`, `[threads]` and `[telemetry]`.
//! Every table refuses unknown fields and every enum unknown values; units
//! are in the field names (`_m`, `_rad`, `_n_per_m`, `_hz`, …) or, for
//! dimensionless numbers, in the docs. Every table but `[[objects]]` may be
//! left out or empty and takes the defaults documented on each field.
//!
//! [`Config::load`] parses and then validates a file; a [`ConfigError`]
//! names the file, the line and column, and the field. Relative paths in a
//! config are relative to the directory of the config file.

mod locate;
mod schema;
mod validate;

pub use locate::{FieldSpans, Location};
pub use schema::*;

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

impl Config {
    /// Reads, parses and validates the config at `path`.
    pub fn load(path: impl AsRef<Path>) -> Result<Config, ConfigError> {
        Config::load_with(path, |_| {})
    }

    /// Reads and parses the config at `path`, applies `overrides` (the
    /// command line's, say), then validates the result: a file may leave
    /// out what the overrides supply, such as the trajectory of an
    /// emulator. Errors in fields written in the file name their line.
    pub fn load_with(
        path: impl AsRef<Path>,
        overrides: impl FnOnce(&mut Config),
    ) -> Result<Config, ConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: path.to_owned(),
            at: None,
            field: None,
            message: format!("cannot read: {e}"),
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        Config::parse_with(&text, path, base, overrides)
    }

    /// Parses and validates `text`; `file` names it in errors and `base` is
    /// the directory its relative paths start from.
    pub fn parse(text: &str, file: &Path, base: &Path) -> Result<Config, ConfigError> {
        Config::parse_with(text, file, base, |_| {})
    }

    /// [`Config::parse`], applying `overrides` between parsing and
    /// validation (see [`Config::load_with`]).
    pub fn parse_with(
        text: &str,
        file: &Path,
        base: &Path,
        overrides: impl FnOnce(&mut Config),
    ) -> Result<Config, ConfigError> {
        let error = |offset: Option<usize>, field: Option<String>, message: String| ConfigError {
            file: file.to_owned(),
            at: offset.map(|o| Location::of(text, o)),
            field,
            message,
        };
        let mut config: Config = toml::from_str(text).map_err(|e| {
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
            error(offset, field.filter(|f| !f.is_empty()), message)
        })?;
        overrides(&mut config);
        if let Err(invalid) = validate::validate(&config, base) {
            let offset = FieldSpans::of(text).start_of(&invalid.field);
            return Err(error(offset, Some(invalid.field), invalid.message));
        }
        Ok(config)
    }
}

impl Config {
    /// The embedded default scene (`config/default.toml`): a cube's point
    /// shell pressed into a corner's field by a simulated device playing a
    /// repeating press, slide and lift. It references no other file.
    pub fn embedded_default() -> Config {
        Config::parse(
            EMBEDDED_DEFAULT,
            Path::new(EMBEDDED_DEFAULT_NAME),
            Path::new("."),
        )
        .expect("the embedded default scene is valid (tested)")
    }

    /// Validates a config changed after loading (e.g. by command-line
    /// overrides); errors name `file` and the field, without a line.
    pub fn revalidate(&self, file: &Path, base: &Path) -> Result<(), ConfigError> {
        validate::validate(self, base).map_err(|invalid| ConfigError {
            file: file.to_owned(),
            at: None,
            field: Some(invalid.field),
            message: invalid.message,
        })
    }
}

/// What errors in the embedded default scene are attributed to.
pub const EMBEDDED_DEFAULT_NAME: &str = "<embedded default scene>";

/// The text of `config/default.toml`.
pub const EMBEDDED_DEFAULT: &str = include_str!("../../../config/default.toml");

#[cfg(test)]
mod tests;
