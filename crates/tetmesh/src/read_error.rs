//! Errors of the file readers: every one names the file, and the line (text
//! files) or byte offset (binary data) and element where it can.

use crate::boundary::BoundaryError;
use crate::validate::TetMeshError;
use crate::TetMesh;
use std::fmt;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Where in a file something was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// 1-based line of a text file.
    Line(usize),
    /// 0-based byte offset in binary data.
    Byte(usize),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Line(line) => write!(f, "line {line}"),
            Location::Byte(offset) => write!(f, "byte {offset}"),
        }
    }
}

/// A file and, where known, a place in it: `file`, or `file: line 12`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    pub path: PathBuf,
    pub at: Option<Location>,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at {
            Some(at) => write!(f, "{}: {at}", self.path.display()),
            None => write!(f, "{}", self.path.display()),
        }
    }
}

/// Why a volume-mesh file could not be read.
#[derive(Debug, Error)]
pub enum ReadError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Malformed or truncated content, or a construct this reader refuses.
    #[error("{place}: {message}")]
    Syntax { place: Place, message: String },
    /// An element the mesh validation refused, by its number in the file
    /// (MSH: its element tag; Medit: its 1-based position).
    #[error("{place}: element {element}: {source}")]
    InvalidElement {
        place: Place,
        element: u64,
        #[source]
        source: TetMeshError,
    },
    /// A mesh-wide validation failure (no tets, a non-finite position).
    #[error("{}: {source}", path.display())]
    Invalid {
        path: PathBuf,
        #[source]
        source: TetMeshError,
    },
    /// The boundary is not a closed manifold; nodes are numbered as in the
    /// file (MSH node tags, Medit 1-based vertex numbers).
    #[error("{}: {source}", path.display())]
    Boundary {
        path: PathBuf,
        #[source]
        source: BoundaryError,
    },
}

impl ReadError {
    pub(crate) fn syntax(path: &Path, at: Option<Location>, message: impl Into<String>) -> Self {
        ReadError::Syntax {
            place: Place {
                path: path.to_owned(),
                at,
            },
            message: message.into(),
        }
    }
}

/// A mesh read from a file, with what validation reported.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedTetMesh {
    pub mesh: TetMesh,
    pub report: crate::ValidationReport,
}

/// A parsed mesh before validation, with each node's and element's number
/// in the file and each element's line (text files).
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedTetMesh {
    pub mesh: TetMesh,
    /// The file's number of each node (MSH node tag, Medit 1-based index).
    pub node_numbers: Vec<u64>,
    /// The file's number of each tet (MSH element tag, Medit 1-based index).
    pub element_numbers: Vec<u64>,
    /// Where each tet is in the file.
    pub element_locations: Vec<Location>,
}

impl ParsedTetMesh {
    /// Validates the mesh and checks that its boundary is a closed
    /// manifold; errors name the file's element and node numbers.
    pub fn checked(self, path: &Path) -> Result<LoadedTetMesh, ReadError> {
        let report = match self.mesh.validate() {
            Ok(report) => report,
            Err(source) => {
                return Err(match source.tet() {
                    Some(tet) => ReadError::InvalidElement {
                        place: Place {
                            path: path.to_owned(),
                            at: self.element_locations.get(tet).copied(),
                        },
                        element: self.element_numbers.get(tet).copied().unwrap_or(tet as u64),
                        source,
                    },
                    None => ReadError::Invalid {
                        path: path.to_owned(),
                        source,
                    },
                })
            }
        };
        if let Err(source) = self.mesh.check_boundary() {
            let number = |n: u32| {
                self.node_numbers
                    .get(n as usize)
                    .and_then(|&t| u32::try_from(t).ok())
                    .unwrap_or(n)
            };
            return Err(ReadError::Boundary {
                path: path.to_owned(),
                source: source.map_nodes(number),
            });
        }
        Ok(LoadedTetMesh {
            mesh: self.mesh,
            report,
        })
    }
}
