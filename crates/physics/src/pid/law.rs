//! The PID forces of a pair in resting contact (eqs 1–3) and their sliding
//! friction (§III-B).

use super::pairs::ContactPhase;
use super::parameters::PidPoints;
use super::points::{inverse_effective_mass, relative_velocity, PairPoint};
use super::PidContacts;
use crate::body::RigidBody;
use crate::forces::Forces;
use crate::narrow_phase::PairContact;
use haptic_core::Vector6;
use nalgebra::{Point3, Vector3};

impl PidContacts {
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
        for k in 0..self.scratch.spans.len() {
            let (lo, hi) = self.scratch.spans[k].bodies;
            let inverse_mass = bodies[lo].inverse_mass() + bodies[hi].inverse_mass();
            let (phase, integral) = self
                .pairs
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
                .scratch
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
            let any_bottom = self.scratch.points.iter().any(|q| q.bottom);
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
                .scratch
                .points
                .iter()
                .enumerate()
                .filter(|&(j, q)| selected(j, q) && error(q) > 0.0)
                .map(|(_, q)| q.weight)
                .sum();
            if r == 0.0 {
                continue;
            }
            for (j, q) in self.scratch.points.iter().enumerate() {
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
            let torque = (p - bodies[b].state.pose.translation.vector)
                .coords
                .cross(&f);
            forces.add_wrench(
                b,
                &Vector6::new(f.x, f.y, f.z, torque.x, torque.y, torque.z),
            );
        }
    }
}
