//! Point shells and nested point trees (Barbič & James).
