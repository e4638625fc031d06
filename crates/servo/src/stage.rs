//! The servo tick's stages, listed once: the tick times them, the thread
//! sums their timers, recordings add them up and summaries name them.
use std::ops::{Index, IndexMut};

/// One stage of [`ServoTick::run`](crate::ServoTick::run), in the order
/// the tick runs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// The device read.
    Read,
    /// The touched bodies' local models: taking a new one, placing the
    /// bodies, and (after the write) stepping them under the tool's push
    /// ([`LocalBodies`](crate::LocalBodies)).
    Bodies,
    /// Point-tree traversals and penalty contacts.
    Collision,
    /// The friction problem's terms: `f`, `H`, `M̄` and the friction contacts.
    Assembly,
    /// The friction solve (or the springs' 6×6 solve).
    Friction,
    /// Static damping, the pose update and the coupling wrench.
    Coupling,
    /// The write through the safety layer.
    Write,
}

impl Stage {
    /// Every stage, in tick order.
    pub const ALL: [Stage; 7] = [
        Stage::Read,
        Stage::Bodies,
        Stage::Collision,
        Stage::Assembly,
        Stage::Friction,
        Stage::Coupling,
        Stage::Write,
    ];

    /// A short lowercase name for summaries and logs.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Read => "read",
            Stage::Bodies => "bodies",
            Stage::Collision => "collision",
            Stage::Assembly => "assembly",
            Stage::Friction => "friction",
            Stage::Coupling => "coupling",
            Stage::Write => "write",
        }
    }
}

/// One value per [`Stage`], indexed by it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PerStage<T>([T; Stage::ALL.len()]);

impl<T> PerStage<T> {
    /// Each stage with its value, in tick order.
    pub fn iter(&self) -> impl Iterator<Item = (Stage, &T)> {
        Stage::ALL.into_iter().zip(&self.0)
    }
}

impl PerStage<u64> {
    /// The sum over every stage.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
}

impl<T> Index<Stage> for PerStage<T> {
    type Output = T;

    fn index(&self, stage: Stage) -> &T {
        &self.0[stage as usize]
    }
}

impl<T> IndexMut<Stage> for PerStage<T> {
    fn index_mut(&mut self, stage: Stage) -> &mut T {
        &mut self.0[stage as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_index_in_tick_order() {
        let mut times = PerStage::<u64>::default();
        for (n, stage) in Stage::ALL.into_iter().enumerate() {
            times[stage] = 10u64.pow(n as u32);
        }
        assert_eq!(times.total(), 1_111_111);
        let names: Vec<_> = times.iter().map(|(stage, _)| stage.name()).collect();
        assert_eq!(
            names,
            [
                "read",
                "bodies",
                "collision",
                "assembly",
                "friction",
                "coupling",
                "write"
            ]
        );
        assert_eq!(times[Stage::Coupling], 100_000);
    }
}
