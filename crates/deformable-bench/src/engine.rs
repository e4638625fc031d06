//! What the benchmarks ask of a deformable-body engine: build a scene's
//! bodies from its nodes and elements, step them, and hand back the nodes'
//! positions in the scene's order for the rulers.

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
    fn stages(&self) -> Option<crate::run::Stages> {
        None
    }
}
