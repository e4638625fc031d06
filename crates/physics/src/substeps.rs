//! Substep planning: a penalty method cannot resolve an impact that carries
//! a body through a large part of its thickness between two detections, so
//! a step is split into substeps no body near another travels too far in
//! (see [`World::step`](crate::World::step)).

use crate::body::{RigidBody, RigidBodyState};
use crate::report::StepReport;
use haptic_mesh::Aabb;

/// The most substeps one step is split into.
pub const MAX_SUBSTEPS: usize = 32;

/// A substep in which a body near another moved more than this many times
/// [`WorldParameters::max_travel`](crate::WorldParameters::max_travel) is
/// undone and split (see [`World::step`](crate::World::step)).
pub const REJECTED_TRAVEL: f64 = 1.5;

/// For each dynamic body that may touch another within `dt` (its bounds,
/// grown by how far its points travel in `dt` at its current velocity,
/// overlap another body's), that travel (m), into `out` (`bounds` a
/// buffer).
pub fn near_travel(
    bodies: &[RigidBody],
    dt: f64,
    bounds: &mut Vec<Option<Aabb>>,
    out: &mut Vec<Option<f64>>,
) {
    bounds.clear();
    bounds.extend(bodies.iter().map(RigidBody::world_bounds));
    out.clear();
    out.extend((0..bodies.len()).map(|i| {
        let b = &bodies[i];
        let geometry = b.model.geometry.as_ref().filter(|_| b.is_dynamic())?;
        let travel =
            (b.state.velocity.norm() + b.state.angular_velocity.norm() * geometry.reach()) * dt;
        let swept = bounds[i]?.dilated(travel);
        let near = bounds
            .iter()
            .enumerate()
            .any(|(j, other)| j != i && other.is_some_and(|o| swept.overlaps(&o)));
        near.then_some(travel)
    }));
}

/// The farthest any surface point of the bodies `near_travel` found near
/// another moved from their states `before` (m).
pub fn farthest_move(
    bodies: &[RigidBody],
    before: &[RigidBodyState],
    near_travel: &[Option<f64>],
) -> f64 {
    bodies
        .iter()
        .zip(before)
        .zip(near_travel)
        .filter(|(_, near)| near.is_some())
        .filter_map(|((body, before), _)| {
            let reach = body.model.geometry.as_ref()?.reach();
            let (pose, from) = (&body.state.pose, &before.pose);
            Some(
                (pose.translation.vector - from.translation.vector).norm()
                    + pose.rotation.angle_to(&from.rotation) * reach,
            )
        })
        .fold(0.0, f64::max)
}

/// Where a step's substeps stand: the time left, the parts it is to be
/// split into at least, and the report of the substeps taken.
pub struct SubstepPlan {
    pub remaining: f64,
    max_travel: f64,
    /// Parts the rest of the step is split into at least, after an undone substep.
    at_least: usize,
    pub total: StepReport,
}

impl SubstepPlan {
    pub fn new(dt: f64, max_travel: f64) -> SubstepPlan {
        SubstepPlan {
            remaining: dt,
            max_travel,
            at_least: 1,
            total: StepReport::default(),
        }
    }

    /// Whether time is left.
    pub fn unfinished(&self) -> bool {
        self.remaining > 0.0
    }

    /// The parts the time left is split into, given the farthest travel
    /// over it of a body near another, and the next substep's length.
    pub fn next(&self, travel: f64) -> (usize, f64) {
        let left = MAX_SUBSTEPS - self.total.substeps;
        let parts = if self.max_travel > 0.0 && travel.is_finite() {
            ((travel / self.max_travel).ceil() as usize)
                .max(self.at_least)
                .clamp(1, left)
        } else {
            1
        };
        let h = if parts == 1 {
            self.remaining
        } else {
            self.remaining / parts as f64
        };
        (parts, h)
    }

    /// Whether a substep taken as one of `parts` in which a body moved
    /// `moved` (m) is to be undone; if so, the rest is split finer.
    pub fn rejects(&mut self, parts: usize, moved: f64) -> bool {
        let left = MAX_SUBSTEPS - self.total.substeps;
        let rejected =
            self.max_travel > 0.0 && moved > REJECTED_TRAVEL * self.max_travel && parts < left;
        if rejected {
            self.at_least = (parts * (moved / self.max_travel).ceil() as usize).min(left);
            self.total.undone += 1;
        }
        rejected
    }

    /// Takes a substep of `h`, one of `parts`, into the total: contacts
    /// and penetration the largest, counts summed.
    pub fn accept(&mut self, parts: usize, h: f64, report: StepReport, moved: f64) {
        let total = &self.total;
        self.total = StepReport {
            contacts: total.contacts.max(report.contacts),
            max_penetration: total.max_penetration.max(report.max_penetration),
            quarantined: total.quarantined + report.quarantined,
            lookups: total.lookups + report.lookups,
            traversals: total.traversals + report.traversals,
            max_near_motion: total.max_near_motion.max(moved),
            substeps: total.substeps + 1,
            undone: total.undone,
            stopped: total.stopped + report.stopped,
            retaken: total.retaken + report.retaken,
            detection_seconds: total.detection_seconds + report.detection_seconds,
            dynamics_seconds: total.dynamics_seconds + report.dynamics_seconds,
            ..report
        };
        self.at_least = self.at_least.saturating_sub(1).max(1);
        self.remaining = if parts == 1 { 0.0 } else { self.remaining - h };
    }
}
