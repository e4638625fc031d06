//! Why a run, a replay or a simulation failed.

use crate::device::OpenError;
use crate::lifecycle::{ThreadName, ThreadPanicked};
use crate::scene::SceneBuildError;

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Scene(#[from] SceneBuildError),
    #[error(transparent)]
    Device(#[from] OpenError),
    /// A thread panicked; the others were stopped, the servo's output was
    /// zeroed and the recording finished.
    #[error(transparent)]
    ThreadPanicked(#[from] ThreadPanicked),
    /// A thread ended by itself, without a panic, before it was asked to
    /// stop; the others were stopped as for a panic.
    #[error("the {0} thread ended before it was asked to stop")]
    ThreadEnded(ThreadName),
    #[error(transparent)]
    Server(#[from] haptic_server::StartError),
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
}

/// Maps an I/O error to [`RunError::Io`] saying what was being done.
pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> RunError {
    let what = what.into();
    move |source| RunError::Io { what, source }
}
