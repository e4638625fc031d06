//! The stages a substep runs over the world's bodies, and the buffers and
//! caches they reuse from step to step: the broad and narrow phases with
//! the contacts' stiffnesses, the forces of the contact model and the
//! joints, and the islands the integrators solve one by one.

use crate::body::RigidBody;
use crate::broad_phase::{overlapping_pairs, BROAD_PHASE_MARGIN};
use crate::forces::{ConstraintRow, Forces};
use crate::friction_anchors::{AnchorKey, FrictionAnchors, FrictionStats};
use crate::island::Islands;
use crate::joints::Joint;
use crate::narrow_phase::{ContactDetector, PairContact};
use crate::parameters::{ContactModel, WorldParameters};
use crate::penalty::{add_point_force, contact_force, ContactParameters, PointForce};
use crate::solver::Factorizations;
use crate::stiffness::contact_stiffnesses;
use foldhash::HashSet;

/// The friction springs' part in a force evaluation: the anchors, the
/// step they act over and the contacts stopped in it.
pub struct Friction<'a> {
    pub anchors: &'a mut FrictionAnchors,
    pub dt: f64,
    pub stopping: &'a HashSet<AnchorKey>,
}

/// The step's buffers and caches: nothing in them is the world's state,
/// nothing an undone substep restores.
pub struct Pipeline {
    pub detector: ContactDetector,
    /// The broad phase's pairs.
    pub pairs: Vec<(usize, usize)>,
    /// The narrow phase's contacts at the last detection.
    pub contacts: Vec<PairContact>,
    /// Each contact's penalty stiffness.
    pub stiffnesses: Vec<f64>,
    pub forces: Forces,
    /// The joints' constraint rows.
    pub rows: Vec<ConstraintRow>,
    pub factorizations: Factorizations,
}

impl Pipeline {
    pub fn new(detection_margin: f64) -> Pipeline {
        Pipeline {
            detector: ContactDetector::new(detection_margin),
            pairs: Vec::new(),
            contacts: Vec::new(),
            stiffnesses: Vec::new(),
            forces: Forces::default(),
            rows: Vec::new(),
            factorizations: Factorizations::default(),
        }
    }

    /// The broad and narrow phases at the current poses, and the contacts'
    /// stiffnesses.
    pub fn detect(&mut self, bodies: &[RigidBody], contact: &ContactParameters) {
        overlapping_pairs(bodies, BROAD_PHASE_MARGIN, &mut self.pairs);
        self.detector
            .detect(bodies, &self.pairs, &mut self.contacts);
        contact_stiffnesses(&self.contacts, contact, &mut self.stiffnesses);
    }

    /// Fills `forces` with `constant` (wrenches and gradients) plus, for the
    /// implicit penalty model, the penalty and damping forces with their
    /// gradients at the current state (contacts from the last `detect`),
    /// the joints' controllers and the constraint rows. With `friction`,
    /// each contact's friction force over its step joins its penalty and
    /// damping, and the anchors move (see [`FrictionAnchors::add_friction`]).
    pub fn evaluate_forces(
        &mut self,
        bodies: &[RigidBody],
        joints: &[Joint],
        parameters: &WorldParameters,
        constant: &Forces,
        friction: Option<Friction>,
    ) -> FrictionStats {
        self.forces.copy_from(constant);
        let mut stats = FrictionStats::default();
        if parameters.contact_model == ContactModel::ImplicitPenalty {
            let Pipeline {
                contacts,
                stiffnesses,
                forces,
                ..
            } = self;
            let c = &parameters.contact;
            let mut add = |i: usize, friction: Option<&PointForce>| {
                let contact = &contacts[i];
                let damping = c.damping * contact.weight as f64;
                let mut total =
                    contact_force(contact, bodies, stiffnesses[i], damping, c.damping_mode);
                if let Some(friction) = friction {
                    total += friction;
                }
                add_point_force(contact, bodies, &total, forces);
            };
            match friction {
                Some(Friction {
                    anchors,
                    dt,
                    stopping,
                }) => {
                    stats = anchors.add_friction(
                        contacts,
                        stiffnesses,
                        bodies,
                        c.friction_stiffness,
                        dt,
                        stopping,
                        |i, f| add(i, Some(f)),
                    );
                }
                None => (0..contacts.len()).for_each(|i| add(i, None)),
            }
        }
        self.rows.clear();
        for joint in joints {
            joint.add_control_forces(bodies, &mut self.forces);
            joint.rows(bodies, &mut self.rows);
        }
        stats
    }

    /// The islands of the current contacts and joints.
    pub fn islands(&self, bodies: &[RigidBody]) -> Vec<Vec<usize>> {
        let mut islands = Islands::new(bodies.len());
        let dynamic = |i: usize| bodies[i].is_dynamic();
        for c in &self.contacts {
            if dynamic(c.shell_body) && dynamic(c.field_body) {
                islands.join(c.shell_body, c.field_body);
            }
        }
        for row in &self.rows {
            if let Some(b) = row.b {
                if dynamic(row.a) && dynamic(b) {
                    islands.join(row.a, b);
                }
            }
        }
        islands.components(dynamic)
    }

    /// The constraint rows of `island`: those with a body in it on either
    /// side (the other side may be static or the world).
    pub fn island_rows(&self, island: &[usize]) -> Vec<ConstraintRow> {
        let member = |b: usize| island.binary_search(&b).is_ok();
        self.rows
            .iter()
            .filter(|r| member(r.a) || r.b.is_some_and(member))
            .copied()
            .collect()
    }

    /// For each of `islands`, the indices in `forces.gradients` of the
    /// blocks between its bodies.
    pub fn island_gradients(&self, bodies: usize, islands: &[Vec<usize>]) -> Vec<Vec<usize>> {
        let mut island_of = vec![None; bodies];
        for (k, island) in islands.iter().enumerate() {
            for &b in island {
                island_of[b] = Some(k);
            }
        }
        let mut gradients = vec![Vec::new(); islands.len()];
        for (index, g) in self.forces.gradients.iter().enumerate() {
            if let Some(k) = island_of[g.on].filter(|&k| island_of[g.by] == Some(k)) {
                gradients[k].push(index);
            }
        }
        gradients
    }
}
