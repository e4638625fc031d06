//! The servo's coupling per tick, on an MCAP recording's
//! [`COUPLING_TOPIC`]: the passivity observer's energies and the
//! controller's damping, and the bodies the local models moved, so that a
//! replay shows what was felt and why. A CSV recording has no room for it.

use serde::{Deserialize, Serialize};

/// The topic of the coupling messages.
pub const COUPLING_TOPIC: &str = "/servo/coupling";
/// Their schema's name.
pub const COUPLING_SCHEMA_NAME: &str = "hapticd.Coupling";
/// JSON Schema of a coupling message.
pub const COUPLING_SCHEMA: &str = include_str!("coupling.schema.json");

/// A body moved by its local model, after the tick.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoupledBody {
    pub body: u32,
    pub position_m: [f64; 3],
    pub orientation_wijk: [f64; 4],
    /// `(v, ω)`, world frame.
    pub velocity: [f64; 6],
}

/// One tick's coupling, as `coupling.schema.json` describes it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedCoupling {
    pub tick: u64,
    pub energy_j: f64,
    pub rotational_energy_j: f64,
    pub damping_n_s_per_m: f64,
    pub rotational_damping_n_m_s_per_rad: f64,
    /// All the bodies moved; `bodies` may hold fewer.
    pub local_bodies: u32,
    pub bodies: Vec<CoupledBody>,
}
