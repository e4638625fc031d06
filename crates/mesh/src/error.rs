use std::fmt;

/// Why a mesh could not be loaded. Every variant names the file: its path as
/// displayed, or the name given to [`load_mesh_from_bytes`](crate::load_mesh_from_bytes).
/// Line numbers count from 1; vertex and face numbers count from 0 in file order.
#[derive(Debug, thiserror::Error)]
pub enum MeshError {
    #[error("{file}: cannot read: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },

    #[error(
        "{file}: unsupported mesh file extension {extension:?} (expected obj, stl, ply or off)"
    )]
    UnsupportedExtension { file: String, extension: String },

    #[error("{file}{}: {message}", LineSuffix(.line))]
    Parse {
        file: String,
        line: Option<usize>,
        message: String,
    },

    /// Nothing to render: the file has no faces, or every triangle was degenerate.
    #[error("{file}: no triangles: {reason}")]
    EmptyMesh { file: String, reason: String },

    /// A coordinate is NaN or infinite, in the file or after unit scaling. For
    /// STL, `vertex` is `3 × facet + corner`.
    #[error("{file}{}: vertex {vertex} has a non-finite coordinate", LineSuffix(.line))]
    NonFiniteCoordinate {
        file: String,
        line: Option<usize>,
        vertex: usize,
    },

    /// A face refers to a vertex that does not exist. `index` is as written in
    /// the file (1-based or negative-relative for OBJ, 0-based otherwise).
    #[error(
        "{file}{}: face {face} refers to vertex {index}, but the file has {vertex_count} vertices",
        LineSuffix(.line)
    )]
    IndexOutOfRange {
        file: String,
        line: Option<usize>,
        face: usize,
        index: i64,
        vertex_count: usize,
    },

    #[error("{file}: {vertex_count} vertices exceed the 32-bit index limit")]
    TooManyVertices { file: String, vertex_count: usize },

    #[error("{file}: invalid load options: {message}")]
    InvalidOptions { file: String, message: String },
}

impl MeshError {
    /// The file the error is about.
    pub fn file(&self) -> &str {
        match self {
            MeshError::Io { file, .. }
            | MeshError::UnsupportedExtension { file, .. }
            | MeshError::Parse { file, .. }
            | MeshError::EmptyMesh { file, .. }
            | MeshError::NonFiniteCoordinate { file, .. }
            | MeshError::IndexOutOfRange { file, .. }
            | MeshError::TooManyVertices { file, .. }
            | MeshError::InvalidOptions { file, .. } => file,
        }
    }

    /// The line the error is on, for text formats when known.
    pub fn line(&self) -> Option<usize> {
        match self {
            MeshError::Parse { line, .. }
            | MeshError::NonFiniteCoordinate { line, .. }
            | MeshError::IndexOutOfRange { line, .. } => *line,
            _ => None,
        }
    }

    pub(crate) fn parse(file: &str, line: Option<usize>, message: impl Into<String>) -> Self {
        MeshError::Parse {
            file: file.to_owned(),
            line,
            message: message.into(),
        }
    }

    pub(crate) fn empty(file: &str, reason: impl Into<String>) -> Self {
        MeshError::EmptyMesh {
            file: file.to_owned(),
            reason: reason.into(),
        }
    }
}

/// `:LINE` after the file name when the line is known.
struct LineSuffix<'a>(&'a Option<usize>);

impl fmt::Display for LineSuffix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(line) => write!(f, ":{line}"),
            None => Ok(()),
        }
    }
}
