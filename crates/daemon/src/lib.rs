//! The haptic rendering server, `hapticd run`: a configuration's scene
//! built into the rendering cycle, the device opened behind its safety
//! layer, and three threads that share state only through lock-free
//! hand-off:
//!
//! - the **servo** (`haptic-servo`), 1 kHz at `SCHED_FIFO`: device sample →
//!   rendering cycle → safety-limited wrench, one tick record per tick;
//! - the **physics** thread ([`physics`]): moves the movable objects under
//!   the tool's contact wrenches and publishes their poses to the servo;
//! - the **telemetry** thread ([`telemetry`]): drains tick records into a
//!   recording, a UDP stream and the live status line.
//!
//! [`run::run`] starts them and stops them in order on a signal, at the end
//! of a recorded trajectory, or after a set duration; [`replay`] runs a
//! recorded trajectory through a scene deterministically, without threads.

pub mod device;
pub mod lifecycle;
mod pacer;
pub mod physics;
pub mod recording;
pub mod replay;
pub mod run;
pub mod scene;
pub mod signals;
pub mod status;
pub mod summary;
pub mod telemetry;

pub use lifecycle::{ThreadName, ThreadPanicked};
pub use run::{run, RunError, RunOptions};
pub use signals::{Shutdown, ShutdownRequest};
pub use summary::{EndReason, RunSummary};
