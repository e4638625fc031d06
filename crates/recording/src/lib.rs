//! The tick recording (docs/protocol.md, "Recordings"; docs/daemon.md,
//! "Recordings and replay"): what the servo did each tick — the handle
//! read, the wrenches written and rendered, the tool, contacts, the
//! friction state and verdict — in one format with two encodings, CSV
//! (complete line by line) and MCAP (JSON messages and the poses as
//! transforms, for Foxglove and friends). Its `format` module holds what
//! both share: the columns, their order and the schema version
//! ([`FORMAT_VERSION`]).
//!
//! The `simulation` module holds the MCAP encoding of `hapticd simulate`'s
//! recordings: its steps and each deformable body's node positions. The
//! `scene` module writes the scene into either kind of MCAP recording as
//! Foxglove's scene updates and frame transforms, for its 3D panel.
//!
//! The `coupling` module holds what MCAP tick recordings carry beside
//! each tick: the passivity observer's energies and the bodies the local
//! models moved.
//!
//! It depends on no device, servo or engine crate, so that any of them
//! may read or write recordings.

mod coupling;
mod csv;
mod file;
mod format;
mod mcap_file;
mod mcap_io;
mod scene;
mod simulation;

pub use coupling::{
    CoupledBody, RecordedCoupling, COUPLING_SCHEMA, COUPLING_SCHEMA_NAME, COUPLING_TOPIC,
};
pub use csv::{read_csv, CsvWriter};
pub use file::{load_coupling, load_recording, TickFile};
pub use format::{RecordedTick, TickFileError, COLUMNS, FORMAT_NAME, FORMAT_VERSION, NOT_RENDERED};
pub use mcap_file::TICK_SCHEMA;
pub use scene::{
    object_frame, BodyKind, BodyMesh, ContactArrow, ContactKind, DeformableSurface, SceneSnapshot,
    CONTACTS_ENTITY, CONTACT_ARROW_LENGTH_M, FRAME_TRANSFORMS_SCHEMA, FRAME_TRANSFORMS_SCHEMA_NAME,
    MAX_CONTACT_ARROWS, SCENE_CONTACTS_TOPIC, SCENE_DEFORMABLES_TOPIC, SCENE_MESHES_TOPIC,
    SCENE_TRANSFORMS_TOPIC, SCENE_UPDATE_SCHEMA, SCENE_UPDATE_SCHEMA_NAME, WORLD_FRAME,
};
pub use simulation::{
    load_simulation, SimulatedBody, SimulatedStep, SimulationRecording, SimulationWriter,
    DEFORMABLE_NODES_SCHEMA, DEFORMABLE_NODES_SCHEMA_NAME, DEFORMABLE_TOPIC_PREFIX,
    SIMULATION_FORMAT_NAME, SIMULATION_FORMAT_VERSION, SIMULATION_STEP_SCHEMA,
    SIMULATION_STEP_SCHEMA_NAME, SIMULATION_TOPIC,
};
