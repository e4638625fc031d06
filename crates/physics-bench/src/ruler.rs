//! The ruler both engines' penetration is measured with: every body's
//! point shell in every other body's distance field, at the poses an engine
//! reached.

use crate::scene::{Geometry, Scene};
use haptic_physics::broad_phase::overlapping_pairs;
use haptic_physics::narrow_phase::ContactDetector;
use haptic_physics::{PairContact, RigidBody};
use nalgebra::Isometry3;

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
            body.state.pose = *pose;
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
            body.state.pose = *pose;
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

/// The bodies penetration is measured with: the scene's at the default
/// geometry (1,000 shell points a body), whatever geometry our world runs.
pub struct Rulers {
    bodies: Vec<RigidBody>,
    /// Our world's shells are not the ruler's, so it needs its own ruler.
    separate: bool,
}

impl Rulers {
    /// For our world's `bodies`, built at `geometry`.
    pub fn of(scene: &Scene, geometry: &Geometry, bodies: &[RigidBody]) -> Rulers {
        let separate = *geometry != Geometry::default();
        Rulers {
            bodies: if separate {
                scene.bodies(&Geometry::default())
            } else {
                bodies.to_vec()
            },
            separate,
        }
    }

    /// A ruler for the engines' poses.
    pub fn ruler(&self) -> Ruler {
        Ruler::new(self.bodies.clone())
    }

    /// Our world's own ruler, if its shells are not the ruler's.
    pub fn ours(&self) -> Option<Ruler> {
        self.separate.then(|| self.ruler())
    }
}
