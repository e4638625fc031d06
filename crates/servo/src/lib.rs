//! The haptic servo: [`ServoTick`] is one tick, from device sample through
//! rendering to a safety-limited wrench, a telemetry record and the tool
//! state for the physics thread, taking rendering parameter updates at its
//! start and publishing a scene frame for the visualizer; [`ServoThread`]
//! runs it at a fixed rate on a real-time thread with overrun accounting,
//! stage timers and wake-up latency and tick-time histograms.

mod local_models;
mod passivity;
mod schedule;
mod stage;
mod thread;
mod tick;

pub use local_models::{LocalBodies, LocalBodyModel, LOCAL_MODEL_HISTORY, NO_ENTRY};
pub use passivity::{PassivityController, PassivityRecord, PassivitySettings};
pub use schedule::ThreadSchedule;
pub use stage::{PerStage, Stage};
pub use thread::{
    LatencyHistogram, ServoConfig, ServoHandle, ServoStats, ServoThread, StageTimer, StageTimers,
};
pub use tick::{
    BudgetCuts, ContactPoint, LocalBodyState, NodePatch, ParameterUpdate, PhysicsSnapshot,
    SceneFrame, ServoChannels, ServoControl, ServoTick, TickFaults, TickRecord, ToolState,
    VerdictCounts, WorkspaceMapping, RECORDED_LOCAL_BODIES, SCENE_FRAME_CONTACTS,
};
