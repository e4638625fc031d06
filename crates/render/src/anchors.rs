//! Stick anchors of contacts, keyed by (environment object, shell point):
//! where a contact stuck, as a point `w` fixed in the object touched and a
//! point `b` fixed in the tool, both where the contact point was then.
//! The slip of the object's material point at the contact since then is
//! `x + R b − w`, `w` where the object has carried it since: an object
//! that moves (a body the servo moves at its own rate, a pose a physics
//! step sets) takes its anchors with it, so that a tool stuck on it is
//! carried, not dragged across it. Shared by Yamane's springs and the
//! pre-sliding model.

use haptic_contact::{EnvironmentGeometry, EnvironmentObject, PenaltyContact};
use nalgebra::{Isometry3, Point3, Vector3};

/// One shell point's anchor, as the cycle reads it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Anchor {
    /// `w`, world frame (m), where the object is now.
    pub(crate) world: Vector3<f64>,
    /// `b`, simulation-object frame (m).
    pub(crate) body: Vector3<f64>,
}

impl Anchor {
    /// An anchor at `contact`'s point for the tool at `pose`.
    fn at(contact: &PenaltyContact, pose: &Isometry3<f64>) -> Anchor {
        Anchor {
            world: pose.translation.vector + contact.handle,
            body: pose.rotation.inverse_transform_vector(&contact.handle),
        }
    }
}

/// One shell point's anchor as kept.
#[derive(Clone, Copy, Debug, Default)]
struct Kept {
    /// `w` in the frame of the object touched (m).
    surface: Vector3<f64>,
    /// `b`, simulation-object frame (m).
    body: Vector3<f64>,
    /// The cycle that last saw this contact.
    seen: u64,
}

impl Kept {
    /// The anchor with the object touched at `object`.
    fn read(&self, object: &Isometry3<f64>) -> Anchor {
        Anchor {
            world: object.transform_point(&Point3::from(self.surface)).coords,
            body: self.body,
        }
    }

    /// Keeps `anchor`, the object touched at `object`.
    fn store(&mut self, anchor: &Anchor, object: &Isometry3<f64>) {
        self.surface = object
            .inverse_transform_point(&Point3::from(anchor.world))
            .coords;
        self.body = anchor.body;
    }
}

/// The anchors of every possible contact, sized at construction.
#[derive(Clone, Debug)]
pub(crate) struct ContactAnchors {
    /// First anchor of each environment object's (role's) shell points.
    base: Vec<usize>,
    anchors: Vec<Kept>,
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
            anchors: vec![Kept::default(); total],
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

    fn slot(&self, contact: &PenaltyContact) -> usize {
        self.base[contact.environment as usize] + contact.point as usize
    }

    /// `contact`'s anchor for the tool at `pose`, the object it touches at
    /// `object`, in a cycle whose contacts stand for coarser tree levels
    /// than the full evaluation's (a budget cut): the anchor of the last
    /// full cycle, or one at the contact point now. It neither places nor
    /// keeps anything, and such a cycle calls no
    /// [`next_cycle`](Self::next_cycle), so the next full cycle finds the
    /// anchors of the last as if the cut cycle had not been.
    pub(crate) fn peek(
        &self,
        contact: &PenaltyContact,
        pose: &Isometry3<f64>,
        object: &Isometry3<f64>,
    ) -> Anchor {
        let kept = &self.anchors[self.slot(contact)];
        if kept.seen == self.cycle {
            kept.read(object)
        } else {
            Anchor::at(contact, pose)
        }
    }

    /// `contact`'s anchor for the tool at `pose`, the object it touches at
    /// `object`, placed at the contact point if the contact was missing in
    /// the previous cycle.
    pub(crate) fn anchor(
        &mut self,
        contact: &PenaltyContact,
        pose: &Isometry3<f64>,
        object: &Isometry3<f64>,
    ) -> Anchor {
        let slot = self.slot(contact);
        let cycle = self.cycle;
        let kept = &mut self.anchors[slot];
        if kept.seen + 1 != cycle {
            kept.store(&Anchor::at(contact, pose), object);
        }
        kept.seen = cycle;
        kept.read(object)
    }

    /// Keeps `anchor`, moved, as `contact`'s (the object it touches at
    /// `object`): a spring that slid drags its anchor along.
    pub(crate) fn keep(
        &mut self,
        contact: &PenaltyContact,
        object: &Isometry3<f64>,
        anchor: &Anchor,
    ) {
        let slot = self.slot(contact);
        self.anchors[slot].store(anchor, object);
    }
}
