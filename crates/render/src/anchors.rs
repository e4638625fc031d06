//! Stick anchors of contacts, keyed by (environment object, shell point):
//! where a contact stuck, as a point `w` fixed in the world and a point `b`
//! fixed in the tool, both where the contact point was then.
//! The slip of the object's material point at the contact since then is
//! `x + R b − w`. Shared by Yamane's springs and the pre-sliding model.

use haptic_contact::{EnvironmentGeometry, EnvironmentObject, PenaltyContact};
use nalgebra::{Isometry3, Vector3};

/// One shell point's anchor.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Anchor {
    /// `w`, world frame (m).
    pub(crate) world: Vector3<f64>,
    /// `b`, simulation-object frame (m).
    pub(crate) body: Vector3<f64>,
    /// The cycle that last saw this contact.
    seen: u64,
}

/// The anchors of every possible contact, sized at construction.
#[derive(Clone, Debug)]
pub(crate) struct ContactAnchors {
    /// First anchor of each environment object's (role's) shell points.
    base: Vec<usize>,
    anchors: Vec<Anchor>,
    cycle: u64,
}

impl ContactAnchors {
    /// Room for every shell point of every (environment object, role) pair;
    /// `moving_shell_points` is the tool's shell size (role A).
    pub(crate) fn new(environment: &[EnvironmentObject], moving_shell_points: usize) -> Self {
        let mut base = Vec::with_capacity(environment.len());
        let mut total = 0;
        for object in environment {
            base.push(total);
            total += match &object.geometry {
                EnvironmentGeometry::Field(_) => moving_shell_points,
                EnvironmentGeometry::Shell(shell) => shell.shell().len(),
                EnvironmentGeometry::Nodes { capacity } => *capacity,
            };
        }
        Self {
            base,
            anchors: vec![Anchor::default(); total],
            cycle: 1,
        }
    }

    /// Starts a cycle: anchors not fetched in it are released.
    pub(crate) fn next_cycle(&mut self) {
        self.cycle += 1;
    }

    /// Releases every anchor: each contact sticks afresh where it is next.
    pub(crate) fn release_all(&mut self) {
        self.cycle += 1;
    }

    /// `contact`'s anchor for the tool at `pose` in a cycle whose contacts
    /// stand for coarser tree levels than the full evaluation's (a budget
    /// cut): the anchor of the last full cycle, or one at the contact
    /// point now. It neither places nor keeps anything, and such a cycle
    /// calls no [`next_cycle`](Self::next_cycle), so the next full cycle
    /// finds the anchors of the last as if the cut cycle had not been.
    pub(crate) fn peek(&self, contact: &PenaltyContact, pose: &Isometry3<f64>) -> Anchor {
        let anchor = self.anchors[self.base[contact.environment as usize] + contact.point as usize];
        if anchor.seen == self.cycle {
            anchor
        } else {
            Anchor {
                world: pose.translation.vector + contact.handle,
                body: pose.rotation.inverse_transform_vector(&contact.handle),
                seen: anchor.seen,
            }
        }
    }

    /// `contact`'s anchor for the tool at `pose`, placed at the
    /// contact point if the contact was missing in the previous cycle.
    pub(crate) fn anchor(
        &mut self,
        contact: &PenaltyContact,
        pose: &Isometry3<f64>,
    ) -> &mut Anchor {
        let anchor =
            &mut self.anchors[self.base[contact.environment as usize] + contact.point as usize];
        if anchor.seen + 1 != self.cycle {
            anchor.world = pose.translation.vector + contact.handle;
            anchor.body = pose.rotation.inverse_transform_vector(&contact.handle);
        }
        anchor.seen = self.cycle;
        anchor
    }
}
