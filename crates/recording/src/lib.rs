//! The tick recording (docs/protocol.md, "Recordings"; docs/daemon.md,
//! "Recordings and replay"): what the servo did each tick — the handle
//! read, the wrenches written and rendered, the tool, contacts, the
//! friction state and verdict — in one format with two encodings, CSV
//! (complete line by line) and MCAP (JSON messages and the poses as
//! transforms, for Foxglove and friends). Its `format` module holds what
//! both share: the columns, their order and the schema version
//! ([`FORMAT_VERSION`]).
//!
//! It depends on no device, servo or engine crate, so that any of them
//! may read or write recordings.

mod csv;
mod file;
mod format;
mod mcap_file;

pub use csv::{read_csv, CsvWriter};
pub use file::{load_recording, TickFile};
pub use format::{RecordedTick, TickFileError, COLUMNS, FORMAT_NAME, FORMAT_VERSION, NOT_RENDERED};
pub use mcap_file::TICK_SCHEMA;
