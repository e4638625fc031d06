//! Our world on a pile, and the ruler both engines' penetration is
//! measured with: every body's point shell in every other body's distance
//! field, at the poses an engine reached.

use crate::run::{Engine, Stepped};
use crate::scene::Scene;
use haptic_physics::contact::{overlapping_pairs, ContactDetector};
use haptic_physics::{PairContact, RigidBody, StepReport, World, WorldParameters};
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
    /// A world of `bodies` (built once by [`Scene::bodies`] and cloned: the
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
    world.bodies()[..dynamic].iter().map(|b| b.pose).collect()
}

/// Deepest penetration of a set of poses by our contact detection.
pub struct Ruler {
    bodies: Vec<RigidBody>,
    detector: ContactDetector,
    pairs: Vec<(usize, usize)>,
    contacts: Vec<PairContact>,
}

impl Ruler {
    /// Measures with `bodies` (the scene's, floor last).
    pub fn new(bodies: Vec<RigidBody>) -> Ruler {
        Ruler {
            bodies,
            detector: ContactDetector::default(),
            pairs: Vec::new(),
            contacts: Vec::new(),
        }
    }

    /// The farthest a surface point moved from `before` to `after` over the
    /// dynamic bodies that could touch another in between: whose bounds at
    /// `before`, grown by that body's motion, overlap another's (m).
    pub fn near_motion(
        &mut self,
        scene: &Scene,
        before: &[Isometry3<f64>],
        after: &[Isometry3<f64>],
    ) -> f64 {
        for (body, pose) in self.bodies.iter_mut().zip(before) {
            body.pose = *pose;
        }
        let bounds: Vec<_> = self.bodies.iter().map(RigidBody::world_bounds).collect();
        (0..before.len())
            .map(|i| {
                let motion = scene.surface_motion(i, &before[i], &after[i]);
                let swept = bounds[i].map(|b| b.dilated(motion));
                let near = bounds.iter().enumerate().any(|(j, other)| {
                    j != i && matches!((swept, other), (Some(s), Some(o)) if s.overlaps(o))
                });
                if near {
                    motion
                } else {
                    0.0
                }
            })
            .fold(0.0, f64::max)
    }

    /// `−min d` over every shell point inside another body's field (m), 0
    /// without contact, with the dynamic bodies at `poses`.
    pub fn penetration(&mut self, poses: &[Isometry3<f64>]) -> f64 {
        for (body, pose) in self.bodies.iter_mut().zip(poses) {
            body.pose = *pose;
        }
        overlapping_pairs(&self.bodies, 1e-4, &mut self.pairs);
        self.detector
            .detect(&self.bodies, &self.pairs, &mut self.contacts);
        self.contacts
            .iter()
            .map(|c| -c.distance)
            .fold(0.0, f64::max)
    }
}
