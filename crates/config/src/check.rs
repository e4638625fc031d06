//! What a failed check reports, and the checks every table uses.

/// A field with a bad value, and why.
pub struct Invalid {
    pub field: String,
    pub message: String,
}

pub(crate) type Check = Result<(), Invalid>;

pub(crate) fn fail(field: impl Into<String>, message: impl Into<String>) -> Check {
    Err(Invalid {
        field: field.into(),
        message: message.into(),
    })
}

pub(crate) fn finite(field: String, values: &[f64]) -> Check {
    if values.iter().all(|v| v.is_finite()) {
        Ok(())
    } else {
        fail(field, "must be finite")
    }
}
