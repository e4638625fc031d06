//! The prepared-geometry file.
