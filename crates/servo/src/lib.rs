//! The haptic servo: [`ServoTick`] is one tick, from device sample through
//! rendering to a safety-limited wrench and a telemetry record;
//! [`ServoThread`] runs it at a fixed rate on a real-time thread with
//! overrun accounting, stage timers and a wake-up latency histogram.

mod thread;
mod tick;

pub use thread::{
    LatencyHistogram, ServoConfig, ServoHandle, ServoStats, ServoThread, StageTimer, StageTimers,
    BUCKETS, BUCKET_NS,
};
pub use tick::{
    PhysicsSnapshot, ServoTick, TickFaults, TickRecord, WorkspaceMapping, STATE_FREE,
    STATE_NOT_RENDERED, STATE_SLIDING, STATE_STATIC,
};
