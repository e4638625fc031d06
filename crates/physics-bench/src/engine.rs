//! What the benchmarks ask of a rigid-body engine: step the scene's dynamic
//! bodies, and report what a step did outside the timed region.

use nalgebra::Isometry3;

/// What an engine reports after a step, read outside the timed region.
pub struct Stepped {
    /// Contact points the step handled (ours: penetrating shell points;
    /// rapier: its solver contacts).
    pub contacts: usize,
    /// The ruler's penetration, when the engine measures it itself (ours:
    /// its own detection when its shells are the ruler's).
    pub ruler_penetration: Option<f64>,
    /// The engine's own deepest penetration, for the stability test (m);
    /// ours with shells coarser than the ruler's: the deeper of its own
    /// and the ruler's.
    pub own_penetration: f64,
    /// The farthest a surface point of a body that could touch another
    /// moved between two of the engine's contact detections, when the
    /// engine detects more often than once a step (m).
    pub motion_between_detections: Option<f64>,
    /// The engine's time per detection outside the detection (forces,
    /// solve, integration), when it measures it (s).
    pub dynamics_per_detection: Option<f64>,
    pub failed: bool,
}

/// A rigid-body engine stepping the scene's dynamic bodies.
pub trait Engine {
    /// Advances by `h` seconds (the timed part).
    fn step(&mut self, h: f64);
    /// What the last step did.
    fn observe(&mut self) -> Stepped;
    /// The dynamic bodies' centre-of-mass frames, in the scene's order.
    fn poses(&self) -> Vec<Isometry3<f64>>;
    /// J.
    fn kinetic_energy(&self) -> f64;
}
