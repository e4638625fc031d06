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
//!
//! [`parameters`] holds the gains, [`pairs`] each pair's phase and integral
//! (the state a step carries to the next) with the impacts that move a
//! pair through the phases, [`law`] the PID forces of a resting pair, and
//! [`points`] the buffers both read a pair's contacts through.

mod law;
mod pairs;
mod parameters;
mod points;

pub use pairs::{ContactPhase, PidPairs};
pub use parameters::{PidParameters, PidPoints};
use points::PidScratch;

/// The PID model between steps: its parameters, each pair's phase and
/// integral ([`PidPairs`], the state) and buffers reused from step to step.
/// Each step, call [`PidContacts::apply_impacts`] then
/// [`PidContacts::add_forces`] once, with the same contacts.
#[derive(Debug)]
pub struct PidContacts {
    parameters: PidParameters,
    pairs: PidPairs,
    scratch: PidScratch,
}

impl PidContacts {
    /// No pair in contact. `parameters` should have passed
    /// [`PidParameters::check`].
    pub fn new(parameters: PidParameters) -> Self {
        Self {
            parameters,
            pairs: PidPairs::default(),
            scratch: PidScratch::default(),
        }
    }

    /// Each pair's phase and integral after the last step.
    pub fn pairs(&self) -> &PidPairs {
        &self.pairs
    }

    /// Puts back the pairs' state `saved` (from [`pairs`](Self::pairs)),
    /// reusing this one's buffer.
    pub fn restore_pairs(&mut self, saved: &PidPairs) {
        self.pairs.states.clone_from(&saved.states);
    }

    /// The phase of the pair `(a, b)` after the last step.
    pub fn phase(&self, a: usize, b: usize) -> ContactPhase {
        self.pairs.phase(a, b)
    }

    /// `I` of eq 2 for the pair `(a, b)` (m·steps), 0 when separated.
    pub fn integral(&self, a: usize, b: usize) -> f64 {
        self.pairs.integral(a, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::{Motion, RigidBody, RigidBodyModel, RigidBodyState};
    use crate::forces::Forces;
    use crate::narrow_phase::PairContact;
    use haptic_core::Vector6;
    use nalgebra::{Isometry3, Matrix3, Point3, Vector3};

    const MASS: f64 = 10.0;
    const HALF: f64 = 0.5;
    const DT: f64 = 1e-3;

    /// A 1 m, 10 kg cube centred at height `z`, or a static ground at the origin.
    fn body(motion: Motion, z: f64) -> RigidBody {
        RigidBody {
            model: RigidBodyModel {
                name: format!("{motion:?}"),
                motion,
                mass: MASS,
                body_inertia: Matrix3::identity() * (MASS * (2.0 * HALF).powi(2) / 6.0),
                geometry: None,
                static_friction: 0.5,
                dynamic_friction: 0.5,
            },
            state: RigidBodyState {
                pose: Isometry3::translation(0.0, 0.0, z),
                velocity: Vector3::zeros(),
                angular_velocity: Vector3::zeros(),
            },
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
        let centre = bodies[shell].state.pose.translation.vector;
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
        bodies[1].state.velocity = Vector3::new(0.3, 0.0, 1.0);
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
            bodies[1].state.velocity = Vector3::new(speed, 0.0, 0.0);
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
            bodies[1].state.velocity = velocity;
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
                    (bodies[1].state.velocity - Vector3::new(1.0, 0.0, p.restitution)).norm()
                        < 1e-12
                );
                assert!(bodies[1].state.angular_velocity.norm() < 1e-12);
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
        bodies[1].state.velocity = Vector3::new(0.0, 0.0, -1.0);
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
        bodies[1].state.velocity = Vector3::new(0.0, 0.0, -0.5 * p.impact_velocity);
        wrench(&mut pid, &mut bodies, &contacts);
        assert_eq!(pid.phase(0, 1), ContactPhase::Resting);
        assert_eq!(bodies[1].state.velocity.z, -0.5 * p.impact_velocity);
        // A separating pair that approaches again rests.
        bodies[1].state.velocity = Vector3::new(0.0, 0.0, -1.0);
        let mut pid = PidContacts::new(p);
        wrench(&mut pid, &mut bodies, &contacts);
        wrench(&mut pid, &mut bodies, &contacts);
        assert_eq!(pid.phase(0, 1), ContactPhase::Separating);
        bodies[1].state.velocity.z = -0.01;
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
        bodies[2].state.velocity = Vector3::new(0.0, 0.0, -2.0);
        let mut contacts = bottom_corners(&bodies, 2, 1, [d; 4]);
        contacts.extend(ground);
        wrench(&mut pid, &mut bodies, &contacts);
        assert_eq!(pid.phase(1, 2), ContactPhase::Colliding);
        assert_eq!(pid.phase(0, 1), ContactPhase::Colliding);
        assert!(
            bodies[1].state.velocity.norm() < 1e-12,
            "{:?}",
            bodies[1].state.velocity
        );
        assert!((bodies[2].state.velocity - Vector3::new(0.0, 0.0, -1.0)).norm() < 1e-12);
    }
}
