//! Post-stabilisation of the joints, beyond the paper (Cline & Pai,
//! "Post-stabilization for rigid body simulation with contact and
//! constraints", 2003): after each substep, the bodies of every island that
//! holds joints are moved back onto them, each keeping its spin, and an
//! island nothing outside torques gets its angular momentum back.

use crate::body::RigidBody;
use crate::forces::ConstraintRow;
use crate::joints::Joint;
use crate::solver::{constraint_correction, SolverScratch};
use nalgebra::{Matrix3, Vector3};

/// Post-stabilisation corrects an island's poses at most this many times
/// a substep, stopping once every `|C|` is below
/// [`POST_STABILISED_RESIDUAL`]: each correction squares the residual, and
/// Baumgarte leaves some 1e-6 m to correct.
pub const POST_STABILISATION_PASSES: usize = 3;

/// The constraint residual (m, or for the rotation rows of eqs 53 and 66
/// dimensionless) post-stabilisation stops at.
pub const POST_STABILISED_RESIDUAL: f64 = 1e-13;

/// Moves each of `islands` holding joints back onto them
/// ([`constraint_correction`]) at the current poses, each body keeping
/// its spin `J ω`. An island whose correction cannot be solved keeps its
/// poses: Baumgarte still holds it. Moving the bodies at their velocities
/// changes their angular momentum by `Σ m δx × v`; where every joint of
/// the island is between its own bodies, so that nothing outside it
/// torques it, [`remove_angular_momentum`] gives that change back.
/// `rows` and `scratch` are buffers.
pub fn post_stabilise<'i>(
    bodies: &mut [RigidBody],
    joints: &[Joint],
    islands: impl Iterator<Item = &'i [usize]>,
    rows: &mut Vec<ConstraintRow>,
    scratch: &mut SolverScratch,
) {
    if joints.is_empty() {
        return;
    }
    for island in islands {
        let member = |b: usize| island.binary_search(&b).is_ok();
        let touching = |j: &&Joint| member(j.a) || j.b.is_some_and(member);
        if !joints.iter().any(|j| touching(&j)) {
            continue;
        }
        let internal = joints
            .iter()
            .filter(touching)
            .all(|j| member(j.a) && j.b.is_some_and(member));
        let momentum_before = angular_momentum(bodies, island);
        let mut moved = false;
        for _ in 0..POST_STABILISATION_PASSES {
            rows.clear();
            for joint in joints.iter().filter(touching) {
                joint.rows(bodies, rows);
            }
            let residual = rows.iter().map(|r| r.value.abs()).fold(0.0, f64::max);
            if rows.is_empty() || residual < POST_STABILISED_RESIDUAL {
                break;
            }
            let Ok(correction) = constraint_correction(bodies, island, rows, scratch) else {
                break;
            };
            for (&b, [dx, dtheta]) in island.iter().zip(correction) {
                let body = &mut bodies[b];
                let spin = body.angular_momentum();
                body.displace(dx, dtheta);
                body.state.angular_velocity = body.world_inverse_inertia() * spin;
            }
            moved = true;
        }
        if moved && internal {
            let excess = angular_momentum(bodies, island) - momentum_before;
            remove_angular_momentum(bodies, island, &excess);
        }
    }
}

/// The angular momentum of `island`'s bodies about the origin,
/// `Σ x_i × m_i v_i + J_i ω_i` (N·m·s).
pub fn angular_momentum(bodies: &[RigidBody], island: &[usize]) -> Vector3<f64> {
    island
        .iter()
        .map(|&b| {
            let body = &bodies[b];
            body.state
                .pose
                .translation
                .vector
                .cross(&(body.model.mass * body.state.velocity))
                + body.angular_momentum()
        })
        .sum()
}

/// Turns `island`'s bodies together by the `Δω` about their centre of mass
/// `c` that takes `excess` (N·m·s) from their angular momentum:
/// `I_c Δω = −excess` with `I_c` the island's inertia about `c`, then
/// `v_i += Δω × (x_i − c)` and `ω_i += Δω`. A rigid motion of the whole
/// island, it keeps the linear momentum and every joint between its bodies.
pub fn remove_angular_momentum(bodies: &mut [RigidBody], island: &[usize], excess: &Vector3<f64>) {
    let mass: f64 = island.iter().map(|&b| bodies[b].model.mass).sum();
    let centre = island
        .iter()
        .map(|&b| bodies[b].model.mass * bodies[b].state.pose.translation.vector)
        .sum::<Vector3<f64>>()
        / mass;
    let inertia: Matrix3<f64> = island
        .iter()
        .map(|&b| {
            let body = &bodies[b];
            let r = body.state.pose.translation.vector - centre;
            body.world_inertia()
                + body.model.mass * (Matrix3::identity() * r.norm_squared() - r * r.transpose())
        })
        .sum();
    let Some(turn) = inertia.try_inverse().map(|inverse| -(inverse * excess)) else {
        return;
    };
    for &b in island {
        let body = &mut bodies[b];
        body.state.velocity += turn.cross(&(body.state.pose.translation.vector - centre));
        body.state.angular_velocity += turn;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::joints::tests::{assembly, constraint_rate, rows, vector};
    use haptic_core::{displaced, Vector6};
    use rand::SeedableRng;
    use rand_pcg::Pcg64;

    fn largest_value(joint: &Joint, bodies: &[RigidBody]) -> f64 {
        rows(joint, bodies)
            .iter()
            .map(|r| r.value.abs())
            .fold(0.0, f64::max)
    }

    #[test]
    fn post_stabilisation_converges_quadratically_and_keeps_the_centre_of_mass() {
        let mut rng = Pcg64::seed_from_u64(11);
        let island = [0, 1];
        for _ in 0..10 {
            let (assembled, joints) = assembly(&mut rng);
            for joint in &joints {
                let mut bodies = assembled.clone();
                for body in &mut bodies {
                    body.state.pose = displaced(
                        &body.state.pose,
                        &Vector6::from_iterator(
                            vector(&mut rng, 1e-3)
                                .iter()
                                .chain(&vector(&mut rng, 1e-3))
                                .copied(),
                        ),
                    );
                }
                let centre = |b: &[RigidBody]| {
                    b.iter()
                        .map(|body| body.model.mass * body.state.pose.translation.vector)
                        .sum::<Vector3<f64>>()
                };
                let start_centre = centre(&bodies);
                let mut residuals = vec![largest_value(joint, &bodies)];
                let mut scratch = SolverScratch::default();
                for _ in 0..POST_STABILISATION_PASSES {
                    let correction = constraint_correction(
                        &bodies,
                        &island,
                        &rows(joint, &bodies),
                        &mut scratch,
                    )
                    .unwrap();
                    for (body, [dx, dtheta]) in bodies.iter_mut().zip(correction) {
                        body.displace(dx, dtheta);
                    }
                    residuals.push(largest_value(joint, &bodies));
                }
                let (r0, r1) = (residuals[0], residuals[1]);
                assert!(r0 > 1e-5, "{}: not displaced ({r0:e})", joint.name);
                assert!(r1 < 10.0 * r0 * r0, "{}: {residuals:?}", joint.name);
                assert!(
                    residuals.last().is_some_and(|&r| r < 1e-14),
                    "{}: {residuals:?}",
                    joint.name
                );
                if joint.b.is_some() {
                    // Internal rows' linear parts are equal and opposite.
                    assert!(
                        (centre(&bodies) - start_centre).norm() < 1e-15,
                        "{}: the centre of mass moved",
                        joint.name
                    );
                }
            }
        }
    }

    #[test]
    fn removing_angular_momentum_keeps_momentum_and_the_joints() {
        let mut rng = Pcg64::seed_from_u64(12);
        let island = [0, 1];
        let (mut bodies, joints) = assembly(&mut rng);
        // A rigid turn of both bodies moves them together: only the joints
        // between them stay satisfied.
        let internal: Vec<&Joint> = joints.iter().filter(|j| j.b.is_some()).collect();
        for body in &mut bodies {
            body.state.velocity = vector(&mut rng, 1.0);
            body.state.angular_velocity = vector(&mut rng, 2.0);
        }
        let momentum = |b: &[RigidBody]| {
            b.iter()
                .map(|body| body.model.mass * body.state.velocity)
                .sum::<Vector3<f64>>()
        };
        let rates = |b: &[RigidBody]| -> Vec<f64> {
            internal
                .iter()
                .flat_map(|j| rows(j, b))
                .map(|r| constraint_rate(&r, b))
                .collect()
        };
        let (linear, angular, before) = (
            momentum(&bodies),
            angular_momentum(&bodies, &island),
            rates(&bodies),
        );
        let excess = vector(&mut rng, 0.1);
        remove_angular_momentum(&mut bodies, &island, &excess);
        let change = angular_momentum(&bodies, &island) - angular;
        assert!(
            (change + excess).norm() < 1e-14,
            "{change} against −{excess}"
        );
        assert!((momentum(&bodies) - linear).norm() < 1e-14);
        for (after, before) in rates(&bodies).iter().zip(&before) {
            assert!((after - before).abs() < 1e-12, "Ċ {before} → {after}");
        }
    }
}
