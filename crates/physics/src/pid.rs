//! Drumwright's PID penalty model of resting contact ("A Fast and Stable
//! Penalty Method for Rigid Body Simulation"): impulse-velocities when two
//! bodies collide, then, for as long as they stay in contact, proportional,
//! derivative and forgetting integral forces on the points of the bottom of
//! their volume of penetration, normalised by the number of points (eqs
//! 1–3), with sliding Coulomb friction (§III-B).
//!
//! With point shells and signed distance fields, the points of the volume
//! of penetration of a pair are its [`PairContact`]s in both roles: the
//! shell points of each body inside the other's field. For a contact of
//! shell body `S` in field body `A` at `P`:
//!
//! ```text
//! n = a / |a|                      contact normal: the field's gradient, out of A toward S
//!                                  (Appendix I-B: the alternate geometry's facet normal)
//! d = −φ_A(P)                      penetration depth
//! s = n · (v_S(P) − v_A(P))        relative normal velocity, > 0 when separating
//! bottom:  m · a < 0               m the shell's outward normal (§III-A)
//! ```
//!
//! §III-A defines the bottom of the volume of penetration as the part of
//! its surface whose normal has a non-positive inner product with the
//! contact normal; the paper finds it with a Graham-scan-like pass over
//! the points projected on the contact plane, because its contact points
//! are mesh vertices without normals. Shell points carry their outward
//! normal, so the definition is applied to each point directly, with its
//! own contact normal; walls parallel to the normal are left out, as the
//! scan leaves out points that fall on its polygon rather than outside.
//! Both bodies' points count: each body's surface inside the other, facing
//! it. A body resting on a face keeps its whole face in support, and the
//! pair's force does not depend on how much of its flanks penetrate.

use crate::body::RigidBody;
use crate::contact::PairContact;
use crate::forces::Forces;
use crate::ParameterError;
use haptic_core::{skew, Vector6};
use nalgebra::{Matrix3, Point3, Vector3};
use std::ops::Range;

/// Which of a pair's penetrating points carry the restoring forces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PidPoints {
    /// Every point on the bottom of the volume of penetration (§III-A),
    /// the deepest point alone when none is (a shell deeper than the
    /// field's medial surface, where the gradient turns).
    #[default]
    BottomOfVolume,
    /// The deepest point alone: the traditional penalty method the paper
    /// compares against (§I, Fig. 1; §IV).
    Deepest,
}

/// Parameters of the PID penalty model. §III-C scales the gains by the
/// pair's mass `m_a + m_b`; here they are per kilogram of its reduced mass
/// `m_a m_b / (m_a + m_b)`, the same against a static body (`m`), and
/// between two moving bodies the one that gives a contact the natural
/// frequency `√k_p` and damping ratio `k_v / (2√k_p)` whatever their mass
/// ratio, so the explicit step stays stable for every pair.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PidParameters {
    /// `k_p` of eqs 1, 3 per kg (s⁻²). 4000 s⁻²: a body resting on a face
    /// sinks `g / (k_p + k_i/(1−λ))` = 2.2 mm.
    pub kp: f64,
    /// `k_i` of eq 3 per kg (s⁻² per summed step of depth). 80 s⁻², the
    /// paper's ratio `k_i/k_p` = 1/50 (§III-C).
    pub ki: f64,
    /// `k_v` of eqs 1, 3 per kg (s⁻¹). 80 s⁻¹. One point alone (a box
    /// corner: about a quarter of the mass effective) sees `4k_p` and
    /// `4k_v`; symplectic Euler keeps it stable while
    /// `4k_v h < 2 − 2k_p h²`, which at the physics thread's 5 ms step
    /// bounds `k_v` by 90 s⁻¹. The paper's overdamped ratio
    /// `k_v/k_p` = 0.5 s is out of reach of an explicit step at that rate.
    pub kd: f64,
    /// `λ` of eq 2, per step, in `[0, 1)`. 0.85, the middle of the paper's
    /// empirical range 0.8–0.9: the integral holds about 7 steps of depth.
    pub forgetting: f64,
    /// Newton's coefficient of restitution of impacts, in `[0, 1]`. 0.2.
    pub restitution: f64,
    /// Relative normal speed (m/s) above which a pair coming into contact
    /// collides (gets an impulse) rather than rests (Fig. 2's threshold).
    /// 0.05 m/s: just above one 5 ms step of free fall (0.049 m/s), so a
    /// body set down at rest starts in resting contact.
    pub impact_velocity: f64,
    /// Coulomb coefficient `μ` of sliding friction and of impacts. 0.5.
    pub friction: f64,
    pub points: PidPoints,
}

impl Default for PidParameters {
    fn default() -> Self {
        Self {
            kp: 4000.0,
            ki: 80.0,
            kd: 80.0,
            forgetting: 0.85,
            restitution: 0.2,
            impact_velocity: 0.05,
            friction: 0.5,
            points: PidPoints::BottomOfVolume,
        }
    }
}

impl PidParameters {
    /// Checks every value is finite and in range.
    pub fn check(&self) -> Result<(), ParameterError> {
        const NON_NEGATIVE: &str = "finite and ≥ 0";
        let non_negative = |v: f64| v.is_finite() && v >= 0.0;
        type Field = (&'static str, f64, fn(f64) -> bool, &'static str);
        let fields: [Field; 7] = [
            ("kp", self.kp, non_negative, NON_NEGATIVE),
            ("ki", self.ki, non_negative, NON_NEGATIVE),
            ("kd", self.kd, non_negative, NON_NEGATIVE),
            (
                "forgetting",
                self.forgetting,
                |v| (0.0..1.0).contains(&v),
                "in [0, 1)",
            ),
            (
                "restitution",
                self.restitution,
                |v| (0.0..=1.0).contains(&v),
                "in [0, 1]",
            ),
            (
                "impact_velocity",
                self.impact_velocity,
                non_negative,
                NON_NEGATIVE,
            ),
            ("friction", self.friction, non_negative, NON_NEGATIVE),
        ];
        match fields
            .into_iter()
            .find(|&(_, value, valid, _)| !valid(value))
        {
            Some((field, value, _, requirement)) => Err(ParameterError {
                field,
                value,
                requirement,
            }),
            None => Ok(()),
        }
    }
}

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
struct PairState {
    /// `(lo, hi)`, `lo < hi`; normals point toward `lo`.
    bodies: (usize, usize),
    phase: ContactPhase,
    /// `I` of eq 2 (m·steps).
    integral: f64,
    /// `max_y d(y, t)` of the last step (m), folded into `I` next step.
    last_depth: f64,
    seen: bool,
}

/// One pair's contacts: `order[range]` indexes them in the contact list.
#[derive(Clone, Debug)]
struct Span {
    bodies: (usize, usize),
    range: Range<usize>,
}

/// A contact as the pair `(lo, hi)` sees it.
#[derive(Clone, Copy, Debug)]
struct PairPoint {
    position: Point3<f64>,
    /// Unit contact normal, toward `lo`.
    normal: Vector3<f64>,
    /// `d ≥ 0` (m).
    depth: f64,
    weight: f64,
    /// On the bottom of the volume of penetration (§III-A).
    bottom: bool,
}

impl PairPoint {
    /// `None` where the field's gradient vanishes: no direction to push.
    fn new(contact: &PairContact, lo: usize) -> Option<PairPoint> {
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

/// The PID model's state across steps: each pair's phase and integral, and
/// buffers reused from step to step. Each step, call
/// [`PidContacts::apply_impacts`] then [`PidContacts::add_forces`] once,
/// with the same contacts.
#[derive(Clone, Debug)]
pub struct PidContacts {
    parameters: PidParameters,
    /// Sorted by `bodies`.
    pairs: Vec<PairState>,
    order: Vec<usize>,
    spans: Vec<Span>,
    points: Vec<PairPoint>,
    /// Bodies that received an impulse this step.
    impulsed: Vec<bool>,
}

impl PidContacts {
    /// No pair in contact. `parameters` should have passed
    /// [`PidParameters::check`].
    pub fn new(parameters: PidParameters) -> Self {
        Self {
            parameters,
            pairs: Vec::new(),
            order: Vec::new(),
            spans: Vec::new(),
            points: Vec::new(),
            impulsed: Vec::new(),
        }
    }

    /// The phase of the pair `(a, b)` after the last step.
    pub fn phase(&self, a: usize, b: usize) -> ContactPhase {
        self.state(a.min(b), a.max(b))
            .map_or(ContactPhase::Separated, |s| s.phase)
    }

    /// `I` of eq 2 for the pair `(a, b)` (m·steps), 0 when separated.
    pub fn integral(&self, a: usize, b: usize) -> f64 {
        self.state(a.min(b), a.max(b)).map_or(0.0, |s| s.integral)
    }

    fn state(&self, lo: usize, hi: usize) -> Option<&PairState> {
        let i = self
            .pairs
            .binary_search_by_key(&(lo, hi), |s| s.bodies)
            .ok()?;
        Some(&self.pairs[i])
    }

    /// Starts a step at the current poses and velocities: moves each pair
    /// in `contacts` through the phases of Fig. 2, forgets the pairs no
    /// longer in contact, folds the last step's deepest penetration into
    /// the integral (eq 2), and applies the impulse-velocities of the
    /// colliding pairs, then of the resting pairs a collision drove
    /// together (the third-body impacts of Fig. 2).
    pub fn apply_impacts(&mut self, bodies: &mut [RigidBody], contacts: &[PairContact]) {
        self.group(contacts);
        self.impulsed.clear();
        self.impulsed.resize(bodies.len(), false);
        for state in &mut self.pairs {
            state.seen = false;
        }
        let p = self.parameters;
        for k in 0..self.spans.len() {
            let (lo, hi) = self.spans[k].bodies;
            if !(bodies[lo].is_dynamic() || bodies[hi].is_dynamic()) {
                continue;
            }
            self.load_points(contacts, k);
            let depth = self.points.iter().map(|q| q.depth).fold(0.0, f64::max);
            let (approach, separating) = normal_speeds(bodies, lo, hi, &self.points);
            let i = match self.pairs.binary_search_by_key(&(lo, hi), |s| s.bodies) {
                Ok(i) => i,
                Err(i) => {
                    self.pairs.insert(
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
            let state = &mut self.pairs[i];
            state.integral = p.forgetting * state.integral + state.last_depth;
            state.last_depth = depth;
            state.seen = true;
            let previous = state.phase;
            let phase = match previous {
                ContactPhase::Separated if approach > p.impact_velocity => {
                    if impact(bodies, lo, hi, &self.points, &p, &mut self.impulsed) {
                        ContactPhase::Colliding
                    } else {
                        ContactPhase::Resting
                    }
                }
                ContactPhase::Resting => ContactPhase::Resting,
                _ if separating => ContactPhase::Separating,
                _ => ContactPhase::Resting,
            };
            self.pairs[i].phase = phase;
        }
        self.pairs.retain(|s| s.seen);

        // Third-body impacts: each resting pair at most once per step.
        let mut changed = true;
        while changed {
            changed = false;
            for k in 0..self.spans.len() {
                let (lo, hi) = self.spans[k].bodies;
                let Ok(i) = self.pairs.binary_search_by_key(&(lo, hi), |s| s.bodies) else {
                    continue;
                };
                if self.pairs[i].phase != ContactPhase::Resting
                    || !(self.impulsed[lo] || self.impulsed[hi])
                {
                    continue;
                }
                self.load_points(contacts, k);
                let (approach, _) = normal_speeds(bodies, lo, hi, &self.points);
                if approach > p.impact_velocity
                    && impact(bodies, lo, hi, &self.points, &p, &mut self.impulsed)
                {
                    self.pairs[i].phase = ContactPhase::Colliding;
                    changed = true;
                }
            }
        }
    }

    /// Adds the PID forces of eq 3 and their sliding friction to `forces`
    /// (no gradients) for every pair in resting contact; `dt` (s, > 0) is
    /// the step the forces will be held over. A pair
    /// [`PidContacts::apply_impacts`] has not seen rests with no integral.
    ///
    /// Per point `ρ` of the pair's selection, with the pair's gains
    /// `K = k m_red`:
    ///
    /// ```text
    /// e(ρ) = K_p d(ρ) − K_v s(ρ) + K_i I
    /// f(ρ) = w(ρ) e(ρ) / r,   r = Σ w over the points with e > 0     (eq 3)
    /// ```
    ///
    /// `w` the contact's weight (shell points it stands for), pushing the
    /// pair apart along `n` at `P`. Friction at each such point opposes the
    /// tangential relative velocity `u_t` with `μ f(ρ)`, but never more than
    /// its share `w/r` of the force that stops `u_t` within the step, `|u_t|
    /// / (dt t̂ᵀ W t̂)` with `W` the pair's inverse effective mass at `P`: an
    /// explicit Coulomb force would otherwise reverse a slow slip every step.
    pub fn add_forces(
        &mut self,
        bodies: &[RigidBody],
        contacts: &[PairContact],
        dt: f64,
        forces: &mut Forces,
    ) {
        debug_assert!(dt > 0.0, "the step must be positive, not {dt}");
        self.group(contacts);
        let p = self.parameters;
        for k in 0..self.spans.len() {
            let (lo, hi) = self.spans[k].bodies;
            let inverse_mass = bodies[lo].inverse_mass() + bodies[hi].inverse_mass();
            let (phase, integral) = self
                .state(lo, hi)
                .map_or((ContactPhase::Resting, 0.0), |s| (s.phase, s.integral));
            if phase != ContactPhase::Resting || inverse_mass == 0.0 {
                continue;
            }
            let reduced_mass = 1.0 / inverse_mass;
            let (kp, ki, kd) = (
                p.kp * reduced_mass,
                p.ki * reduced_mass,
                p.kd * reduced_mass,
            );
            self.load_points(contacts, k);
            let deepest = self
                .points
                .iter()
                .enumerate()
                .fold(None, |best: Option<(usize, f64)>, (j, q)| match best {
                    Some((_, depth)) if depth >= q.depth => best,
                    _ => Some((j, q.depth)),
                })
                .map(|(j, _)| j);
            let Some(deepest) = deepest else {
                continue;
            };
            let any_bottom = self.points.iter().any(|q| q.bottom);
            let selected = |j: usize, q: &PairPoint| match p.points {
                PidPoints::BottomOfVolume if any_bottom => q.bottom,
                _ => j == deepest,
            };
            let error = |q: &PairPoint| {
                let s = q
                    .normal
                    .dot(&relative_velocity(bodies, lo, hi, &q.position));
                kp * q.depth - kd * s + ki * integral
            };
            let r: f64 = self
                .points
                .iter()
                .enumerate()
                .filter(|&(j, q)| selected(j, q) && error(q) > 0.0)
                .map(|(_, q)| q.weight)
                .sum();
            if r == 0.0 {
                continue;
            }
            for (j, q) in self.points.iter().enumerate() {
                let e = error(q);
                if !selected(j, q) || e <= 0.0 {
                    continue;
                }
                let share = q.weight / r;
                let normal_force = share * e;
                let u = relative_velocity(bodies, lo, hi, &q.position);
                let slip = u - q.normal * q.normal.dot(&u);
                let mut force = q.normal * normal_force;
                if let Some(direction) = slip.try_normalize(f64::EPSILON) {
                    let mobility = direction
                        .dot(&(inverse_effective_mass(bodies, lo, hi, &q.position) * direction));
                    let stopping = share * slip.norm() / (dt * mobility);
                    force -= direction * (p.friction * normal_force).min(stopping);
                }
                add_pair_force(bodies, lo, hi, &q.position, &force, forces);
            }
        }
    }

    /// Sorts the contacts by pair into `order` and `spans`; within a pair
    /// they keep their order (the deepest point's ties go to the first).
    fn group(&mut self, contacts: &[PairContact]) {
        self.order.clear();
        self.order.extend(0..contacts.len());
        self.order
            .sort_unstable_by_key(|&i| (pair_of(&contacts[i]), i));
        self.spans.clear();
        let mut start = 0;
        for end in 1..=self.order.len() {
            let pair = pair_of(&contacts[self.order[start]]);
            if end == self.order.len() || pair_of(&contacts[self.order[end]]) != pair {
                self.spans.push(Span {
                    bodies: pair,
                    range: start..end,
                });
                start = end;
            }
        }
    }

    /// The contacts of span `k` as its pair sees them, into `points`.
    fn load_points(&mut self, contacts: &[PairContact], k: usize) {
        let span = &self.spans[k];
        let lo = span.bodies.0;
        self.points.clear();
        self.points.extend(
            self.order[span.range.clone()]
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
fn relative_velocity(bodies: &[RigidBody], lo: usize, hi: usize, p: &Point3<f64>) -> Vector3<f64> {
    bodies[lo].point_velocity(p) - bodies[hi].point_velocity(p)
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

/// `K = Σ (I/m − [r]× I_w⁻¹ [r]×)` over the pair's dynamic bodies: the
/// change of `u` at `P` per unit impulse on `lo` (and its opposite on `hi`).
fn inverse_effective_mass(
    bodies: &[RigidBody],
    lo: usize,
    hi: usize,
    p: &Point3<f64>,
) -> Matrix3<f64> {
    [lo, hi]
        .iter()
        .map(|&b| {
            let body = &bodies[b];
            let r = skew(&(p - body.pose.translation.vector).coords);
            Matrix3::identity() * body.inverse_mass() - r * body.world_inverse_inertia() * r
        })
        .sum()
}

/// Adds `force` at `p` to `lo` and its opposite to `hi`, static bodies left out.
fn add_pair_force(
    bodies: &[RigidBody],
    lo: usize,
    hi: usize,
    p: &Point3<f64>,
    force: &Vector3<f64>,
    forces: &mut Forces,
) {
    for (b, f) in [(lo, *force), (hi, -force)] {
        if bodies[b].is_dynamic() {
            let torque = (p - bodies[b].pose.translation.vector).coords.cross(&f);
            forces.add_wrench(
                b,
                &Vector6::new(f.x, f.y, f.z, torque.x, torque.y, torque.z),
            );
        }
    }
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
            let r = centroid - body.pose.translation.vector;
            body.velocity += impulse * body.inverse_mass();
            body.angular_velocity += body.world_inverse_inertia() * r.coords.cross(&impulse);
            impulsed[b] = true;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::Motion;
    use nalgebra::Isometry3;

    const MASS: f64 = 10.0;
    const HALF: f64 = 0.5;
    const DT: f64 = 1e-3;

    /// A 1 m, 10 kg cube centred at height `z`, or a static ground at the origin.
    fn body(motion: Motion, z: f64) -> RigidBody {
        RigidBody {
            name: format!("{motion:?}"),
            motion,
            mass: MASS,
            body_inertia: Matrix3::identity() * (MASS * (2.0 * HALF).powi(2) / 6.0),
            pose: Isometry3::translation(0.0, 0.0, z),
            velocity: Vector3::zeros(),
            angular_velocity: Vector3::zeros(),
            geometry: None,
            static_friction: 0.5,
            dynamic_friction: 0.5,
        }
    }

    /// The four bottom corners of cube `shell` in a field below it whose
    /// gradient is `+z`, `depths[k]` deep.
    fn bottom_corners(
        bodies: &[RigidBody],
        shell: usize,
        field: usize,
        depths: [f64; 4],
    ) -> Vec<PairContact> {
        let centre = bodies[shell].pose.translation.vector;
        [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]
            .iter()
            .zip(depths)
            .enumerate()
            .map(|(k, (&(x, y), depth))| {
                let corner = Point3::new(x * HALF, y * HALF, -HALF);
                PairContact {
                    shell_body: shell,
                    field_body: field,
                    point: k as u32,
                    weight: 1,
                    position: corner + centre,
                    normal: corner.coords.normalize(),
                    distance: -depth,
                    distance_gradient: Vector3::z(),
                }
            })
            .collect()
    }

    /// A cube resting on the ground `depth` into it.
    fn resting_cube(depth: f64) -> Vec<RigidBody> {
        vec![
            body(Motion::Static, 0.0),
            body(Motion::Dynamic, HALF - depth),
        ]
    }

    fn wrench(pid: &mut PidContacts, bodies: &mut [RigidBody], contacts: &[PairContact]) -> Forces {
        pid.apply_impacts(bodies, contacts);
        let mut forces = Forces::default();
        forces.reset(bodies.len());
        pid.add_forces(bodies, contacts, DT, &mut forces);
        forces
    }

    #[test]
    fn check_names_the_field_out_of_range() {
        assert_eq!(PidParameters::default().check(), Ok(()));
        let d = PidParameters::default();
        let cases = [
            ("kp", PidParameters { kp: -1.0, ..d }),
            ("ki", PidParameters { ki: f64::NAN, ..d }),
            (
                "kd",
                PidParameters {
                    kd: f64::INFINITY,
                    ..d
                },
            ),
            (
                "forgetting",
                PidParameters {
                    forgetting: 1.0,
                    ..d
                },
            ),
            (
                "restitution",
                PidParameters {
                    restitution: 1.5,
                    ..d
                },
            ),
            (
                "impact_velocity",
                PidParameters {
                    impact_velocity: -0.1,
                    ..d
                },
            ),
            (
                "friction",
                PidParameters {
                    friction: f64::NAN,
                    ..d
                },
            ),
        ];
        for (field, parameters) in cases {
            let error = parameters.check().unwrap_err();
            assert_eq!(error.field, field);
            assert!(error.to_string().contains(field), "{error}");
        }
    }

    #[test]
    fn resting_force_follows_eqs_2_and_3() {
        let d = 2e-3;
        let p = PidParameters::default();
        let mut bodies = resting_cube(d);
        let mut contacts = bottom_corners(&bodies, 1, 0, [d; 4]);
        // A wall point, parallel to the normal: not on the bottom.
        contacts.push(PairContact {
            point: 9,
            position: Point3::new(HALF, 0.0, -d / 2.0),
            normal: Vector3::x(),
            distance: -d / 2.0,
            ..contacts[0]
        });
        let mut pid = PidContacts::new(p);
        for step in 1..=5 {
            let forces = wrench(&mut pid, &mut bodies, &contacts);
            // I = Σ_{i<t} λ^{t−1−i} d.
            let integral = d * (1.0 - p.forgetting.powi(step - 1)) / (1.0 - p.forgetting);
            assert!((pid.integral(0, 1) - integral).abs() < 1e-15);
            let expected = MASS * (p.kp * d + p.ki * integral);
            let w = forces.wrench[1];
            assert!(
                (w[2] - expected).abs() < 1e-9 * expected,
                "{} vs {expected}",
                w[2]
            );
            assert!(w.fixed_rows::<2>(0).norm() < 1e-12 && w.fixed_rows::<3>(3).norm() < 1e-9);
            assert_eq!(
                forces.wrench[0],
                Vector6::zeros(),
                "the static ground takes no force"
            );
            assert_eq!(pid.phase(1, 0), ContactPhase::Resting);
        }
    }

    #[test]
    fn weights_count_as_shell_points() {
        let d = 2e-3;
        let mut bodies = resting_cube(d);
        let mut contacts = bottom_corners(&bodies, 1, 0, [d; 4]);
        contacts[2].weight = 3;
        let mut pid = PidContacts::new(PidParameters::default());
        let w = wrench(&mut pid, &mut bodies, &contacts).wrench[1];
        // Same total, its centre of pressure at the weighted mean of the corners.
        let force = MASS * PidParameters::default().kp * d;
        assert!((w[2] - force).abs() < 1e-9 * force);
        let centre = Vector3::new(HALF, HALF, -HALF) * (2.0 / 6.0);
        let torque = centre.cross(&Vector3::new(0.0, 0.0, force));
        assert!((w.fixed_rows::<3>(3) - torque).norm() < 1e-9 * force);
    }

    #[test]
    fn deepest_point_takes_the_whole_force() {
        let d = 2e-3;
        let depths = [d, d, d, 2.0 * d];
        for (points, force, lever) in [
            (
                PidPoints::Deepest,
                2.0 * d,
                Vector3::new(-HALF, HALF, -HALF),
            ),
            (
                PidPoints::BottomOfVolume,
                1.25 * d,
                // The depth-weighted mean of the corners.
                Vector3::new(-HALF / 5.0, HALF / 5.0, -HALF),
            ),
        ] {
            let p = PidParameters {
                points,
                ..PidParameters::default()
            };
            let mut bodies = resting_cube(d);
            let contacts = bottom_corners(&bodies, 1, 0, depths);
            let w = wrench(&mut PidContacts::new(p), &mut bodies, &contacts).wrench[1];
            let f = Vector3::new(0.0, 0.0, MASS * p.kp * force);
            assert!((w.fixed_rows::<3>(0) - f).norm() < 1e-9 * f.z, "{points:?}");
            assert!(
                (w.fixed_rows::<3>(3) - lever.cross(&f)).norm() < 1e-9 * f.z,
                "{points:?}"
            );
        }
    }

    #[test]
    fn forces_only_push() {
        // Separating fast enough that k_p d − k_v s < 0 at every point.
        let d = 2e-3;
        let mut bodies = resting_cube(d);
        let contacts = bottom_corners(&bodies, 1, 0, [d; 4]);
        let mut pid = PidContacts::new(PidParameters::default());
        wrench(&mut pid, &mut bodies, &contacts);
        bodies[1].velocity = Vector3::new(0.3, 0.0, 1.0);
        let forces = wrench(&mut pid, &mut bodies, &contacts);
        assert_eq!(pid.phase(0, 1), ContactPhase::Resting);
        assert_eq!(forces.wrench[1], Vector6::zeros());
    }

    #[test]
    fn sliding_friction_is_mu_times_the_normal_force_and_never_reverses_the_slip() {
        let d = 2e-3;
        let p = PidParameters::default();
        for speed in [1.0, 1e-4] {
            let mut bodies = resting_cube(d);
            let contacts = bottom_corners(&bodies, 1, 0, [d; 4]);
            let mut pid = PidContacts::new(p);
            bodies[1].velocity = Vector3::new(speed, 0.0, 0.0);
            let w = wrench(&mut pid, &mut bodies, &contacts).wrench[1];
            if speed == 1.0 {
                assert!((w[0] + p.friction * w[2]).abs() < 1e-9 * w[2], "{w:?}");
            } else {
                // Capped: the slip slows but keeps its direction.
                let after = speed + DT * w[0] / MASS;
                assert!(after >= 0.0 && after < speed, "{after}");
            }
        }
    }

    #[test]
    fn impact_reverses_the_normal_velocity_by_the_restitution() {
        let p = PidParameters::default();
        for (friction, velocity) in [
            (0.0, Vector3::new(1.0, 0.0, -1.0)),
            (10.0, Vector3::new(1.0, 0.0, -1.0)),
        ] {
            let p = PidParameters { friction, ..p };
            let mut bodies = resting_cube(1e-4);
            let contacts = bottom_corners(&bodies, 1, 0, [1e-4; 4]);
            bodies[1].velocity = velocity;
            let mut pid = PidContacts::new(p);
            let forces = wrench(&mut pid, &mut bodies, &contacts);
            assert_eq!(pid.phase(0, 1), ContactPhase::Colliding);
            assert_eq!(
                forces.wrench[1],
                Vector6::zeros(),
                "no forces with the impulse"
            );
            let centroid = Point3::new(0.0, 0.0, -1e-4);
            let u = bodies[1].point_velocity(&centroid);
            if friction == 0.0 {
                // Frictionless: the tangential velocity is kept, no spin.
                assert!(
                    (bodies[1].velocity - Vector3::new(1.0, 0.0, p.restitution)).norm() < 1e-12
                );
                assert!(bodies[1].angular_velocity.norm() < 1e-12);
            } else {
                // Inside the friction cone: the centroid sticks.
                assert!(
                    (u - Vector3::new(0.0, 0.0, p.restitution)).norm() < 1e-12,
                    "{u:?}"
                );
            }
        }
    }

    #[test]
    fn phases_follow_fig_2() {
        let p = PidParameters::default();
        let mut bodies = resting_cube(1e-4);
        let contacts = bottom_corners(&bodies, 1, 0, [1e-4; 4]);
        let mut pid = PidContacts::new(p);
        bodies[1].velocity = Vector3::new(0.0, 0.0, -1.0);
        wrench(&mut pid, &mut bodies, &contacts);
        assert_eq!(pid.phase(0, 1), ContactPhase::Colliding);
        // Still penetrating, every point moving apart: no forces.
        let forces = wrench(&mut pid, &mut bodies, &contacts);
        assert_eq!(pid.phase(0, 1), ContactPhase::Separating);
        assert_eq!(forces.wrench[1], Vector6::zeros());
        // Out of contact: the pair is forgotten.
        wrench(&mut pid, &mut bodies, &[]);
        assert_eq!(pid.phase(0, 1), ContactPhase::Separated);
        assert_eq!(pid.integral(0, 1), 0.0);
        // Back in contact below the impact velocity: resting, no impulse.
        bodies[1].velocity = Vector3::new(0.0, 0.0, -0.5 * p.impact_velocity);
        wrench(&mut pid, &mut bodies, &contacts);
        assert_eq!(pid.phase(0, 1), ContactPhase::Resting);
        assert_eq!(bodies[1].velocity.z, -0.5 * p.impact_velocity);
        // A separating pair that approaches again rests.
        bodies[1].velocity = Vector3::new(0.0, 0.0, -1.0);
        let mut pid = PidContacts::new(p);
        wrench(&mut pid, &mut bodies, &contacts);
        wrench(&mut pid, &mut bodies, &contacts);
        assert_eq!(pid.phase(0, 1), ContactPhase::Separating);
        bodies[1].velocity.z = -0.01;
        wrench(&mut pid, &mut bodies, &contacts);
        assert_eq!(pid.phase(0, 1), ContactPhase::Resting);
    }

    #[test]
    fn an_impact_propagates_into_a_resting_pair() {
        // A cube resting on the ground is hit from above by an equal cube
        // at 2 m/s; with e = 0 the pair's impulse leaves both at −1 m/s, and
        // the ground's third-body impulse stops the lower one.
        let p = PidParameters {
            restitution: 0.0,
            ..PidParameters::default()
        };
        let d = 1e-4;
        let mut bodies = resting_cube(d);
        bodies.push(body(Motion::Dynamic, 3.0 * HALF - 2.0 * d));
        let ground = bottom_corners(&bodies, 1, 0, [d; 4]);
        let mut pid = PidContacts::new(p);
        wrench(&mut pid, &mut bodies, &ground);
        assert_eq!(pid.phase(0, 1), ContactPhase::Resting);
        bodies[2].velocity = Vector3::new(0.0, 0.0, -2.0);
        let mut contacts = bottom_corners(&bodies, 2, 1, [d; 4]);
        contacts.extend(ground);
        wrench(&mut pid, &mut bodies, &contacts);
        assert_eq!(pid.phase(1, 2), ContactPhase::Colliding);
        assert_eq!(pid.phase(0, 1), ContactPhase::Colliding);
        assert!(
            bodies[1].velocity.norm() < 1e-12,
            "{:?}",
            bodies[1].velocity
        );
        assert!((bodies[2].velocity - Vector3::new(0.0, 0.0, -1.0)).norm() < 1e-12);
    }
}
