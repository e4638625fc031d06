//! Scripted scenes for measuring the rendering stage: manipulandum paths run
//! through a [`haptic_render::RenderingCycle`] and recorded as a [`Trace`],
//! the built-in scenes of Zhao, Li & Barbič §4.1, §4.2, §5.3 and §5.4, and the
//! breakaway experiment of [`breakaway`]. Used by `hapticd scenario` and the
//! tests; the servo never runs them.

pub mod breakaway;
mod scenario;

pub use scenario::{
    box_lift, cube_corner, cube_corner_from_meshes, peg_in_hole, run, run_with_stalls, slide, Path,
    Scenario, SceneSetup, Stalls, Trace, TraceRow,
};
