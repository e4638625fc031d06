//! The haptic rendering server, `hapticd run`: a configuration's scene
//! built into the rendering cycle, the device opened behind its safety
//! layer, and three threads that share state only through lock-free
//! hand-off:
//!
//! - the **servo** (`haptic-servo`), 1 kHz at `SCHED_FIFO`: device sample →
//!   rendering cycle → safety-limited wrench, one tick record per tick;
//! - the **physics** thread: steps the scene's rigid world (`haptic-physics`:
//!   gravity, contact between the objects, joints), coupled with its
//!   deformable bodies if it has any (`haptic-deformable`), with the tool's
//!   contact impulses, publishes the movable objects' poses to the servo
//!   and the deformables' surfaces to the state stream;
//! - the **telemetry** thread: drains tick records into a
//!   recording, a UDP stream, the live status line, and the control API's
//!   stream and live status.
//!
//! Beside them the control API's server (`haptic-server`) runs on a thread
//! of its own from start to exit; the daemon implements its `Control`.
//! [`run()`] starts them and stops them in order on a signal, at the end
//! of a recorded trajectory, or after a set duration, and restarts the
//! three on a scene loaded through the control API; [`replay`] runs a
//! recorded trajectory through a scene deterministically, without threads,
//! and [`simulate`] steps a scene's physics world alone. [`listing`] is
//! what every device backend finds, for `hapticd devices` and the control
//! API alike.

mod control;
mod device;
mod error;
mod lifecycle;
pub mod listing;
mod pacer;
mod patches;
mod physics;
mod publish;
mod realtime;
mod recording;
mod replay;
mod run;
mod scene;
mod scene_run;
mod signals;
mod simulate;
mod status;
mod summary;
mod telemetry;

pub use device::OpenError;
pub use error::RunError;
pub use lifecycle::{ThreadName, ThreadPanicked};
pub use physics::{MovableBody, PhysicsReport};
pub use replay::{replay, replay_with, PhysicsStall, ReplayOptions, ReplayReport};
pub use run::{run, RunOptions};
pub use scene::{SceneBuildError, SceneControl};
pub use signals::Shutdown;
pub use simulate::{
    is_mcap_path, simulate, DeformableSummary, SimulationReport, SIMULATION_HEADER,
};
pub use summary::{EndReason, RunSummary};
pub use telemetry::PassivitySummary;
