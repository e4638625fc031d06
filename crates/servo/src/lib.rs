//! The haptic servo: [`ServoTick`] is one tick, from device sample through
//! rendering to a safety-limited wrench, a telemetry record and the tool
//! state for the physics thread; [`ServoThread`] runs it at a fixed rate on
//! a real-time thread with overrun accounting, stage timers and wake-up
//! latency and tick-time histograms.

mod schedule;
mod thread;
mod tick;

pub use schedule::ThreadSchedule;
pub use thread::{
    LatencyHistogram, ServoConfig, ServoHandle, ServoStats, ServoThread, StageTimer, StageTimers,
};
pub use tick::{
    PhysicsSnapshot, ServoTick, TickFaults, TickRecord, ToolState, VerdictCounts, WorkspaceMapping,
    SAFETY_OFF, SAFETY_RAMPING, SAFETY_RUNNING, SAFETY_SHUTTING_DOWN, SAFETY_TRIPPED,
    SAFETY_WAITING, STATE_NOT_RENDERED,
};
