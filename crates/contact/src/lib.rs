//! Penalty contact between point shells and distance fields.
