//! A pair's contacts as the PID model reads them: grouped by pair, each
//! seen from the pair's lower body, and the buffers that hold them.

use super::PidContacts;
use crate::body::RigidBody;
use crate::narrow_phase::PairContact;
use haptic_core::skew;
use nalgebra::{Matrix3, Point3, Vector3};
use std::ops::Range;

/// One pair's contacts: `order[range]` indexes them in the contact list.
#[derive(Clone, Debug)]
pub(super) struct Span {
    pub(super) bodies: (usize, usize),
    pub(super) range: Range<usize>,
}

/// A contact as the pair `(lo, hi)` sees it.
#[derive(Clone, Copy, Debug)]
pub(super) struct PairPoint {
    pub(super) position: Point3<f64>,
    /// Unit contact normal, toward `lo`.
    pub(super) normal: Vector3<f64>,
    /// `d ≥ 0` (m).
    pub(super) depth: f64,
    pub(super) weight: f64,
    /// On the bottom of the volume of penetration (§III-A).
    pub(super) bottom: bool,
}

impl PairPoint {
    /// `None` where the field's gradient vanishes: no direction to push.
    pub(super) fn new(contact: &PairContact, lo: usize) -> Option<PairPoint> {
        let gradient = contact.distance_gradient.try_normalize(f64::EPSILON)?;
        Some(PairPoint {
            position: contact.position,
            normal: if contact.shell_body == lo {
                gradient
            } else {
                -gradient
            },
            depth: -contact.distance,
            weight: contact.weight as f64,
            bottom: contact.normal.dot(&gradient) < 0.0,
        })
    }
}

/// Buffers the PID model reuses from step to step: nothing in them is
/// state a step carries to the next.
#[derive(Debug, Default)]
pub(super) struct PidScratch {
    pub(super) order: Vec<usize>,
    pub(super) spans: Vec<Span>,
    pub(super) points: Vec<PairPoint>,
    /// Bodies that received an impulse this step.
    pub(super) impulsed: Vec<bool>,
}

impl PidContacts {
    /// Sorts the contacts by pair into `order` and `spans`; within a pair
    /// they keep their order (the deepest point's ties go to the first).
    pub(super) fn group(&mut self, contacts: &[PairContact]) {
        self.scratch.order.clear();
        self.scratch.order.extend(0..contacts.len());
        self.scratch
            .order
            .sort_unstable_by_key(|&i| (pair_of(&contacts[i]), i));
        self.scratch.spans.clear();
        let mut start = 0;
        for end in 1..=self.scratch.order.len() {
            let pair = pair_of(&contacts[self.scratch.order[start]]);
            if end == self.scratch.order.len()
                || pair_of(&contacts[self.scratch.order[end]]) != pair
            {
                self.scratch.spans.push(Span {
                    bodies: pair,
                    range: start..end,
                });
                start = end;
            }
        }
    }

    /// The contacts of span `k` as its pair sees them, into `points`.
    pub(super) fn load_points(&mut self, contacts: &[PairContact], k: usize) {
        let span = &self.scratch.spans[k];
        let lo = span.bodies.0;
        self.scratch.points.clear();
        self.scratch.points.extend(
            self.scratch.order[span.range.clone()]
                .iter()
                .filter_map(|&i| PairPoint::new(&contacts[i], lo)),
        );
    }
}

/// `(lo, hi)` of a contact's bodies.
fn pair_of(contact: &PairContact) -> (usize, usize) {
    let (a, b) = (contact.shell_body, contact.field_body);
    (a.min(b), a.max(b))
}

/// `u = v_lo(P) − v_hi(P)`: normal components > 0 separate.
pub(super) fn relative_velocity(
    bodies: &[RigidBody],
    lo: usize,
    hi: usize,
    p: &Point3<f64>,
) -> Vector3<f64> {
    bodies[lo].point_velocity(p) - bodies[hi].point_velocity(p)
}

/// `K = Σ (I/m − [r]× I_w⁻¹ [r]×)` over the pair's dynamic bodies: the
/// change of `u` at `P` per unit impulse on `lo` (and its opposite on `hi`).
pub(super) fn inverse_effective_mass(
    bodies: &[RigidBody],
    lo: usize,
    hi: usize,
    p: &Point3<f64>,
) -> Matrix3<f64> {
    [lo, hi]
        .iter()
        .map(|&b| {
            let body = &bodies[b];
            let r = skew(&(p - body.state.pose.translation.vector).coords);
            Matrix3::identity() * body.inverse_mass() - r * body.world_inverse_inertia() * r
        })
        .sum()
}
