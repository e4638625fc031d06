//! What the MCAP writers share: their errors as I/O errors.

use mcap::McapError;
use std::io;

/// `error` as an I/O error: the I/O error itself, or the MCAP error
/// wrapped.
pub(crate) fn mcap_error(error: McapError) -> io::Error {
    match error {
        McapError::Io(error) => error,
        other => io::Error::other(other),
    }
}
