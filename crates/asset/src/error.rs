use std::path::{Path, PathBuf};

/// Why a prepared file could not be written or read. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum AssetError {
    #[error("{}: {source}", .file.display())]
    Io {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The file does not start with the magic bytes `HAPTGEO\0`.
    #[error("{}: not a prepared-geometry file (bad magic bytes)", .file.display())]
    NotAPreparedFile { file: PathBuf },

    #[error(
        "{}: format version {found} is not supported (this build reads version {supported}); prepare the mesh again",
        .file.display()
    )]
    UnsupportedVersion {
        file: PathBuf,
        found: u32,
        supported: u32,
    },

    /// The file is shorter than its header says.
    #[error("{}: truncated: {actual} bytes, expected {expected}", .file.display())]
    Truncated {
        file: PathBuf,
        expected: u64,
        actual: u64,
    },

    #[error("{}: checksum mismatch: the file is damaged", .file.display())]
    ChecksumMismatch { file: PathBuf },

    /// The checksum holds but the contents disagree with each other.
    #[error("{}: corrupt: {reason}", .file.display())]
    Corrupt { file: PathBuf, reason: String },

    /// [`write_prepared`](crate::write_prepared) was given parts that do not
    /// belong together; nothing was written.
    #[error("{}: cannot write: {reason}", .file.display())]
    InvalidGeometry { file: PathBuf, reason: String },
}

impl AssetError {
    /// The file the error is about.
    pub fn file(&self) -> &Path {
        match self {
            AssetError::Io { file, .. }
            | AssetError::NotAPreparedFile { file }
            | AssetError::UnsupportedVersion { file, .. }
            | AssetError::Truncated { file, .. }
            | AssetError::ChecksumMismatch { file }
            | AssetError::Corrupt { file, .. }
            | AssetError::InvalidGeometry { file, .. } => file,
        }
    }

    pub(crate) fn io(file: &Path) -> impl FnOnce(std::io::Error) -> Self + '_ {
        move |source| AssetError::Io {
            file: file.to_owned(),
            source,
        }
    }

    pub(crate) fn corrupt(file: &Path, reason: impl Into<String>) -> Self {
        AssetError::Corrupt {
            file: file.to_owned(),
            reason: reason.into(),
        }
    }
}
