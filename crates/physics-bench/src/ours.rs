//! Our world on a pile, as an [`Engine`] of the benchmarks.

use crate::engine::{Engine, Stepped};
use crate::ruler::Ruler;
use haptic_physics::{RigidBody, StepReport, World, WorldParameters};
use nalgebra::Isometry3;

/// Our world, the floor its last body.
pub struct Ours {
    world: World,
    dynamic: usize,
    report: StepReport,
    /// The ruler's finer shells, when ours are coarser: they measure our
    /// penetration after each step (untimed), for the stability test too.
    ruler: Option<Ruler>,
    /// Sums over the steps so far.
    pub totals: Totals,
}

/// What the steps so far did, summed.
#[derive(Clone, Copy, Debug, Default)]
pub struct Totals {
    pub steps: usize,
    pub substeps: usize,
    pub undone: usize,
    pub retaken: usize,
    pub lookups: usize,
    pub traversals: usize,
    pub contacts: usize,
    /// s.
    pub detection: f64,
    /// s.
    pub dynamics: f64,
}

impl Ours {
    /// A world of `bodies` (built once by [`crate::scene::Scene::bodies`] and cloned: the
    /// contact geometry is shared), the first `dynamic` of them dynamic;
    /// `ruler`, if its shells are not ours, measures our penetration.
    pub fn from_bodies(
        bodies: Vec<RigidBody>,
        dynamic: usize,
        parameters: WorldParameters,
        ruler: Option<Ruler>,
    ) -> Ours {
        let world = World::new(bodies, Vec::new(), parameters)
            .expect("the scene's bodies and parameters are valid");
        Ours {
            world,
            dynamic,
            report: StepReport::default(),
            ruler,
            totals: Totals::default(),
        }
    }
}

impl Engine for Ours {
    fn step(&mut self, h: f64) {
        self.report = self.world.step(h, &[]);
        let (t, r) = (&mut self.totals, &self.report);
        t.steps += 1;
        t.substeps += r.substeps;
        t.undone += r.undone;
        t.retaken += r.retaken;
        t.lookups += r.lookups;
        t.traversals += r.traversals;
        t.contacts += r.contacts;
        t.detection += r.detection_seconds;
        t.dynamics += r.dynamics_seconds;
    }

    fn observe(&mut self) -> Stepped {
        let ruler_penetration = match &mut self.ruler {
            Some(ruler) => ruler.penetration(&dynamic_poses(&self.world, self.dynamic)),
            None => self.report.max_penetration,
        };
        let report = &self.report;
        Stepped {
            contacts: report.contacts,
            ruler_penetration: Some(ruler_penetration),
            own_penetration: report.max_penetration.max(ruler_penetration),
            motion_between_detections: Some(report.max_near_motion),
            dynamics_per_detection: Some(report.dynamics_seconds / report.substeps.max(1) as f64),
            failed: report.quarantined > 0,
        }
    }

    fn poses(&self) -> Vec<Isometry3<f64>> {
        dynamic_poses(&self.world, self.dynamic)
    }

    fn kinetic_energy(&self) -> f64 {
        self.world.kinetic_energy()
    }
}

/// The poses of `world`'s first `dynamic` bodies.
fn dynamic_poses(world: &World, dynamic: usize) -> Vec<Isometry3<f64>> {
    world.bodies()[..dynamic]
        .iter()
        .map(|b| b.state.pose)
        .collect()
}
