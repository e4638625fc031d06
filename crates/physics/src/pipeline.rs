//! The stages a substep runs over the world's bodies, and the buffers and
//! caches they reuse from step to step: the broad and narrow phases with
//! the contacts' stiffnesses, the forces of the contact model and the
//! joints, and the islands the integrators solve one by one. Every buffer
//! grows to the largest step's needs and is kept: after warm-up a step
//! allocates nothing, joints' solves included (see [`crate::solver`]).

use crate::body::RigidBody;
use crate::broad_phase::{BroadPhase, BROAD_PHASE_MARGIN};
use crate::forces::GradientBlock;
use crate::forces::{ConstraintRow, Forces};
use crate::friction_anchors::{AnchorKey, FrictionAnchors, FrictionStats};
use crate::island::Islands;
use crate::joints::Joint;
use crate::narrow_phase::{ContactDetector, PairContact};
use crate::parameters::{ContactModel, WorldParameters};
use crate::penalty::{
    add_contact_forces, add_point_force, contact_force, ContactParameters, PointForce,
};
use crate::solver::SolverScratch;
use crate::stiffness::contact_stiffnesses;
use foldhash::{HashMap, HashSet};
use haptic_mesh::Aabb;

/// The friction springs' part in a force evaluation: the anchors, the
/// step they act over and the contacts stopped in it.
pub struct Friction<'a> {
    pub anchors: &'a mut FrictionAnchors,
    pub dt: f64,
    pub stopping: &'a HashSet<AnchorKey>,
}

/// The step's buffers and caches: nothing in them is the world's state,
/// nothing an undone substep restores.
#[derive(Default)]
pub struct Pipeline {
    pub broad_phase: BroadPhase,
    /// The broad phase's pairs.
    pub pairs: Vec<(usize, usize)>,
    pub detector: ContactDetector,
    /// The narrow phase's contacts at the last detection.
    pub contacts: Vec<PairContact>,
    /// Each contact's penalty stiffness, and each pair's contact weight.
    pub stiffnesses: Vec<f64>,
    pub pair_weights: HashMap<(usize, usize), f64>,
    /// What is held over a substep (see `World::substep`).
    pub explicit: Forces,
    /// `explicit` plus what is evaluated at each state.
    pub forces: Forces,
    /// The joints' constraint rows.
    pub rows: Vec<ConstraintRow>,
    pub islands: Islands,
    /// Island by body, while gathering each island's gradients.
    pub island_of: Vec<Option<usize>>,
    /// Each island's gradient blocks (indices into `forces.gradients`),
    /// island after island, and where each island's start.
    pub island_gradients: Vec<usize>,
    pub island_gradient_starts: Vec<usize>,
    pub island_gradient_cursor: Vec<usize>,
    /// The rows of the island being solved; post-stabilisation's rows.
    pub island_rows: Vec<ConstraintRow>,
    pub solver: SolverScratch,
    /// The substep planning's world bounds and near travels.
    pub bounds: Vec<Option<Aabb>>,
    pub near_travel: Vec<Option<f64>>,
    /// The contacts stopped in the substep being taken again, and those
    /// found reversed after it.
    pub stopping: HashSet<AnchorKey>,
    pub reversed: HashSet<AnchorKey>,
}

impl Pipeline {
    pub fn new(detection_margin: f64) -> Pipeline {
        Pipeline {
            detector: ContactDetector::new(detection_margin),
            ..Pipeline::default()
        }
    }

    /// The broad and narrow phases at the current poses, and the contacts'
    /// stiffnesses.
    pub fn detect(&mut self, bodies: &[RigidBody], contact: &ContactParameters) {
        self.broad_phase
            .overlapping_pairs(bodies, BROAD_PHASE_MARGIN, &mut self.pairs);
        self.detector
            .detect(bodies, &self.pairs, &mut self.contacts);
        contact_stiffnesses(
            &self.contacts,
            contact,
            &mut self.pair_weights,
            &mut self.stiffnesses,
        );
    }

    /// Fills `forces` with `explicit` (wrenches and gradients) plus, for the
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
        friction: Option<Friction>,
    ) -> FrictionStats {
        self.forces.copy_from(&self.explicit);
        let mut stats = FrictionStats::default();
        if parameters.contact_model == ContactModel::ImplicitPenalty {
            let Pipeline {
                contacts,
                stiffnesses,
                forces,
                ..
            } = self;
            let c = &parameters.contact;
            match friction {
                Some(Friction {
                    anchors,
                    dt,
                    stopping,
                }) => {
                    // Each contact's friction joins its penalty and damping.
                    let add = |i: usize, friction: &PointForce| {
                        let contact = &contacts[i];
                        let damping = c.damping * contact.weight as f64;
                        let mut total =
                            contact_force(contact, bodies, stiffnesses[i], damping, c.damping_mode);
                        total += friction;
                        add_point_force(contact, bodies, &total, forces);
                    };
                    stats = anchors.add_friction(
                        contacts,
                        stiffnesses,
                        bodies,
                        c.friction_stiffness,
                        dt,
                        stopping,
                        add,
                    );
                }
                None => add_contact_forces(
                    contacts,
                    stiffnesses,
                    bodies,
                    c.damping,
                    c.damping_mode,
                    forces,
                ),
            }
        }
        self.rows.clear();
        for joint in joints {
            joint.add_control_forces(bodies, &mut self.forces);
            joint.rows(bodies, &mut self.rows);
        }
        stats
    }

    /// Gathers the islands of the current contacts and joints.
    pub fn find_islands(&mut self, bodies: &[RigidBody]) {
        let islands = &mut self.islands;
        islands.reset(bodies.len());
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
        islands.gather(dynamic);
    }

    /// For each island, the indices in `forces.gradients` of the blocks
    /// between its bodies, into `island_gradients`.
    pub fn find_island_gradients(&mut self, bodies: usize) {
        self.island_of.clear();
        self.island_of.resize(bodies, None);
        for (k, island) in self.islands.iter().enumerate() {
            for &b in island {
                self.island_of[b] = Some(k);
            }
        }
        let island_of = &self.island_of;
        let in_island = |g: &GradientBlock| island_of[g.on].filter(|&k| island_of[g.by] == Some(k));
        // Counted per island, then placed in order.
        let starts = &mut self.island_gradient_starts;
        starts.clear();
        starts.resize(self.islands.len() + 1, 0);
        for k in self.forces.gradients.iter().filter_map(in_island) {
            starts[k + 1] += 1;
        }
        for k in 0..self.islands.len() {
            starts[k + 1] += starts[k];
        }
        self.island_gradients.clear();
        self.island_gradients.resize(starts[self.islands.len()], 0);
        self.island_gradient_cursor.clone_from(starts);
        for (index, g) in self.forces.gradients.iter().enumerate() {
            if let Some(k) = in_island(g) {
                self.island_gradients[self.island_gradient_cursor[k]] = index;
                self.island_gradient_cursor[k] += 1;
            }
        }
    }
}

/// The constraint rows of `island`, those with a body in it on either side
/// (the other side may be static or the world), into `out`.
pub fn island_rows(rows: &[ConstraintRow], island: &[usize], out: &mut Vec<ConstraintRow>) {
    let member = |b: usize| island.binary_search(&b).is_ok();
    out.clear();
    out.extend(
        rows.iter()
            .filter(|r| member(r.a) || r.b.is_some_and(member))
            .copied(),
    );
}
