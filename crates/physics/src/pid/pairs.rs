//! Each pair's contact phase (Fig. 2) and integral (eq 2), and the impacts
//! that move pairs through the phases.

use super::parameters::PidParameters;
use super::points::{inverse_effective_mass, relative_velocity, PairPoint};
use super::PidContacts;
use crate::body::RigidBody;
use crate::narrow_phase::PairContact;
use nalgebra::{Point3, Vector3};

/// Contact phase of a pair of bodies (Fig. 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContactPhase {
    /// Not in contact; no state is kept.
    Separated,
    /// Came into contact approaching faster than the impact velocity, or,
    /// while resting, a third body's impact drove one of the two into the
    /// other: an impulse-velocity was applied this step, no forces.
    Colliding,
    /// In continuous contact: PID forces and friction, whatever the
    /// relative normal velocity.
    Resting,
    /// Still penetrating but every point moving apart after an impact: no
    /// forces until a point approaches again.
    Separating,
}

/// What the model keeps of a pair in contact.
#[derive(Clone, Copy, Debug)]
pub(super) struct PairState {
    /// `(lo, hi)`, `lo < hi`; normals point toward `lo`.
    pub(super) bodies: (usize, usize),
    pub(super) phase: ContactPhase,
    /// `I` of eq 2 (m·steps).
    pub(super) integral: f64,
    /// `max_y d(y, t)` of the last step (m), folded into `I` next step.
    pub(super) last_depth: f64,
    pub(super) seen: bool,
}

/// Each pair in contact's phase and integral: the state the PID model
/// carries from step to step.
#[derive(Clone, Debug, Default)]
pub struct PidPairs {
    /// Sorted by `bodies`.
    pub(super) states: Vec<PairState>,
}

impl PidPairs {
    /// The phase of the pair `(a, b)`.
    pub fn phase(&self, a: usize, b: usize) -> ContactPhase {
        self.state(a.min(b), a.max(b))
            .map_or(ContactPhase::Separated, |s| s.phase)
    }

    /// `I` of eq 2 for the pair `(a, b)` (m·steps), 0 when separated.
    pub fn integral(&self, a: usize, b: usize) -> f64 {
        self.state(a.min(b), a.max(b)).map_or(0.0, |s| s.integral)
    }

    pub(super) fn state(&self, lo: usize, hi: usize) -> Option<&PairState> {
        let i = self
            .states
            .binary_search_by_key(&(lo, hi), |s| s.bodies)
            .ok()?;
        Some(&self.states[i])
    }
}

impl PidContacts {
    /// Starts a step at the current poses and velocities: moves each pair
    /// in `contacts` through the phases of Fig. 2, forgets the pairs no
    /// longer in contact, folds the last step's deepest penetration into
    /// the integral (eq 2), and applies the impulse-velocities of the
    /// colliding pairs, then of the resting pairs a collision drove
    /// together (the third-body impacts of Fig. 2).
    pub fn apply_impacts(&mut self, bodies: &mut [RigidBody], contacts: &[PairContact]) {
        self.group(contacts);
        self.scratch.impulsed.clear();
        self.scratch.impulsed.resize(bodies.len(), false);
        for state in &mut self.pairs.states {
            state.seen = false;
        }
        let p = self.parameters;
        for k in 0..self.scratch.spans.len() {
            let (lo, hi) = self.scratch.spans[k].bodies;
            if !(bodies[lo].is_dynamic() || bodies[hi].is_dynamic()) {
                continue;
            }
            self.load_points(contacts, k);
            let depth = self
                .scratch
                .points
                .iter()
                .map(|q| q.depth)
                .fold(0.0, f64::max);
            let (approach, separating) = normal_speeds(bodies, lo, hi, &self.scratch.points);
            let i = match self
                .pairs
                .states
                .binary_search_by_key(&(lo, hi), |s| s.bodies)
            {
                Ok(i) => i,
                Err(i) => {
                    self.pairs.states.insert(
                        i,
                        PairState {
                            bodies: (lo, hi),
                            phase: ContactPhase::Separated,
                            integral: 0.0,
                            last_depth: 0.0,
                            seen: false,
                        },
                    );
                    i
                }
            };
            let state = &mut self.pairs.states[i];
            state.integral = p.forgetting * state.integral + state.last_depth;
            state.last_depth = depth;
            state.seen = true;
            let previous = state.phase;
            let phase = match previous {
                ContactPhase::Separated if approach > p.impact_velocity => {
                    if impact(
                        bodies,
                        lo,
                        hi,
                        &self.scratch.points,
                        &p,
                        &mut self.scratch.impulsed,
                    ) {
                        ContactPhase::Colliding
                    } else {
                        ContactPhase::Resting
                    }
                }
                ContactPhase::Resting => ContactPhase::Resting,
                _ if separating => ContactPhase::Separating,
                _ => ContactPhase::Resting,
            };
            self.pairs.states[i].phase = phase;
        }
        self.pairs.states.retain(|s| s.seen);

        // Third-body impacts: each resting pair at most once per step.
        let mut changed = true;
        while changed {
            changed = false;
            for k in 0..self.scratch.spans.len() {
                let (lo, hi) = self.scratch.spans[k].bodies;
                let Ok(i) = self
                    .pairs
                    .states
                    .binary_search_by_key(&(lo, hi), |s| s.bodies)
                else {
                    continue;
                };
                if self.pairs.states[i].phase != ContactPhase::Resting
                    || !(self.scratch.impulsed[lo] || self.scratch.impulsed[hi])
                {
                    continue;
                }
                self.load_points(contacts, k);
                let (approach, _) = normal_speeds(bodies, lo, hi, &self.scratch.points);
                if approach > p.impact_velocity
                    && impact(
                        bodies,
                        lo,
                        hi,
                        &self.scratch.points,
                        &p,
                        &mut self.scratch.impulsed,
                    )
                {
                    self.pairs.states[i].phase = ContactPhase::Colliding;
                    changed = true;
                }
            }
        }
    }
}

/// The fastest approach `max(−s)` over the points and whether every point
/// separates (`s > 0`).
fn normal_speeds(bodies: &[RigidBody], lo: usize, hi: usize, points: &[PairPoint]) -> (f64, bool) {
    points
        .iter()
        .fold((f64::NEG_INFINITY, true), |(approach, separating), q| {
            let s = q
                .normal
                .dot(&relative_velocity(bodies, lo, hi, &q.position));
            (approach.max(-s), separating && s > 0.0)
        })
}

/// The impulse-velocity of a collision (§III: "applied at the centroid of
/// the contact surface", frictional as in Guendelman et al. 2003): at the
/// weighted centroid `P` of the points, along their mean normal `n`, with
/// `u` the relative velocity there and `K` the inverse effective mass,
/// the sticking impulse `j = K⁻¹(−e u_n n − u)` if it lies in the friction
/// cone `|j_t| ≤ μ j_n`, else the sliding one `j = j_n (n − μ t̂)`,
/// `j_n = −(1+e) u_n / (nᵀ K (n − μ t̂))`, `t̂` the slip direction.
/// Returns whether the pair approached at `P` and took an impulse; marks
/// the dynamic bodies that did in `impulsed`.
fn impact(
    bodies: &mut [RigidBody],
    lo: usize,
    hi: usize,
    points: &[PairPoint],
    parameters: &PidParameters,
    impulsed: &mut [bool],
) -> bool {
    let weight: f64 = points.iter().map(|q| q.weight).sum();
    let centroid = Point3::from(
        points
            .iter()
            .map(|q| q.position.coords * q.weight)
            .sum::<Vector3<f64>>()
            / weight,
    );
    let Some(n) = points
        .iter()
        .map(|q| q.normal * q.weight)
        .sum::<Vector3<f64>>()
        .try_normalize(f64::EPSILON)
    else {
        return false;
    };
    let u = relative_velocity(bodies, lo, hi, &centroid);
    let un = n.dot(&u);
    if un >= 0.0 {
        return false;
    }
    let k = inverse_effective_mass(bodies, lo, hi, &centroid);
    let Some(k_inverse) = k.cholesky().map(|c| c.inverse()) else {
        return false;
    };
    let (e, mu) = (parameters.restitution, parameters.friction);
    let sticking = k_inverse * (-e * un * n - u);
    let jn = sticking.dot(&n);
    let jt = sticking - n * jn;
    let j = if jt.norm() <= mu * jn {
        sticking
    } else {
        let slip = u - n * un;
        let t = slip
            .try_normalize(f64::EPSILON)
            .unwrap_or_else(|| -jt.normalize());
        let direction = n - t * mu;
        let denominator = n.dot(&(k * direction));
        if denominator > 0.0 {
            direction * (-(1.0 + e) * un / denominator)
        } else {
            n * (-(1.0 + e) * un / n.dot(&(k * n)))
        }
    };
    for (b, impulse) in [(lo, j), (hi, -j)] {
        let body = &mut bodies[b];
        if body.is_dynamic() {
            let r = centroid - body.state.pose.translation.vector;
            body.state.velocity += impulse * body.inverse_mass();
            body.state.angular_velocity += body.world_inverse_inertia() * r.coords.cross(&impulse);
            impulsed[b] = true;
        }
    }
    true
}
