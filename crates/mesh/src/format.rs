//! The mesh file formats loading reads.

use std::fmt;

/// A mesh file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MeshFormat {
    Obj,
    Stl,
    Ply,
    Off,
}

impl MeshFormat {
    /// The format a file extension (without the dot) names, case-insensitively.
    pub fn from_extension(extension: &str) -> Option<Self> {
        match extension.to_ascii_lowercase().as_str() {
            "obj" => Some(MeshFormat::Obj),
            "stl" => Some(MeshFormat::Stl),
            "ply" => Some(MeshFormat::Ply),
            "off" => Some(MeshFormat::Off),
            _ => None,
        }
    }
}

impl fmt::Display for MeshFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MeshFormat::Obj => "OBJ",
            MeshFormat::Stl => "STL",
            MeshFormat::Ply => "PLY",
            MeshFormat::Off => "OFF",
        })
    }
}
