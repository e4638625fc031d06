//! What the benchmarks ask of a deformable-body engine: build a scene's
//! bodies from its nodes and elements, step them, and hand back the nodes'
//! positions in the scene's order for the rulers.

use haptic_deformable::CoupledStepReport;
use nalgebra::Point3;

/// How big a simulated body is: its nodes and, by kind, its elements and
/// constraints (the names are the engine's own).
#[derive(Clone, Debug, PartialEq)]
pub struct BodySize {
    pub nodes: usize,
    pub elements: Vec<(&'static str, usize)>,
    /// The most scalar constraint rows a step solved, for engines that
    /// count them.
    pub peak_constraints: Option<usize>,
}

impl std::fmt::Display for BodySize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} nodes", self.nodes)?;
        for (name, count) in &self.elements {
            write!(f, ", {count} {name}")?;
        }
        if let Some(rows) = self.peak_constraints {
            write!(f, ", at most {rows} constraint rows in a step")?;
        }
        Ok(())
    }
}

/// A deformable-body engine stepping one scene.
pub trait Engine {
    /// Advances by `h` seconds (the timed part).
    fn step(&mut self, h: f64);
    /// Writes the nodes' positions, in the scene's node order, into `out`.
    fn positions(&self, out: &mut Vec<Point3<f64>>);
    /// Whether the engine gave up on the body (a non-finite state, a
    /// quarantine).
    fn failed(&self) -> bool;
    /// The simulated body's size.
    fn size(&self) -> BodySize;
    /// Each stage's median step time so far, for engines that time them.
    fn stages(&self) -> Option<Stages> {
        None
    }
}

/// A step's time by stage (s): the paradigms' free velocities, detection,
/// the solver (rows, PGS iterations and elastic passes), the position
/// projection, and the rest (the rigid world's implicit step, integration,
/// bookkeeping).
#[derive(Clone, Copy, Debug, Default)]
pub struct Stages {
    pub paradigms: f64,
    pub detection: f64,
    pub solver: f64,
    pub projection: f64,
    pub rest: f64,
    /// Rows of the step's largest substep.
    pub rows: f64,
}

impl Stages {
    /// The stages of a step that took `took` seconds and reported `report`.
    pub fn of(report: &CoupledStepReport, took: f64) -> Stages {
        let measured = report.paradigm_seconds
            + report.detection_seconds
            + report.solver_seconds
            + report.projection_seconds;
        Stages {
            paradigms: report.paradigm_seconds,
            detection: report.detection_seconds,
            solver: report.solver_seconds,
            projection: report.projection_seconds,
            rest: took - measured,
            rows: report.rows as f64,
        }
    }
}

impl std::fmt::Display for Stages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "paradigms {:.2} ms, detection {:.2} ms, solver {:.2} ms, projection {:.2} ms, \
             rigid step and the rest {:.2} ms; {} rows",
            1e3 * self.paradigms,
            1e3 * self.detection,
            1e3 * self.solver,
            1e3 * self.projection,
            1e3 * self.rest,
            self.rows
        )
    }
}
