//! The joints' rows against closed forms and finite differences, and the
//! fixtures (two bodies and every kind of joint between them) the
//! post-stabilisation's tests share.

use super::side::six;
use super::*;
use crate::body::{Motion, RigidBodyModel, RigidBodyState};
use crate::forces::{ConstraintRow, Forces};
use haptic_core::displaced;
use haptic_testkit::jacobian_check::{
    central_differences, compare, pose_central_differences, Tolerance,
};
use nalgebra::Matrix3;
use nalgebra::{DMatrix, DVector, Isometry3, Translation3};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

pub(crate) fn body(pose: Isometry3<f64>) -> RigidBody {
    RigidBody {
        model: RigidBodyModel {
            name: "box".into(),
            motion: Motion::Dynamic,
            mass: 1.5,
            body_inertia: Matrix3::from_diagonal(&Vector3::new(0.02, 0.03, 0.04)),
            geometry: None,
            static_friction: 0.0,
            dynamic_friction: 0.0,
        },
        state: RigidBodyState::at_rest(pose),
    }
}

pub(crate) fn vector(rng: &mut Pcg64, scale: f64) -> Vector3<f64> {
    Vector3::new(rng.gen(), rng.gen(), rng.gen()).map(|v: f64| scale * (2.0 * v - 1.0))
}

pub(crate) fn pose(rng: &mut Pcg64) -> Isometry3<f64> {
    Isometry3::from_parts(
        Translation3::from(vector(rng, 1.0)),
        UnitQuaternion::from_scaled_axis(vector(rng, 3.0)),
    )
}

/// Two bodies at random poses and every kind of joint between them and
/// to the world, built there (the target rotation holds body 1's).
pub(crate) fn assembly(rng: &mut Pcg64) -> (Vec<RigidBody>, Vec<Joint>) {
    let bodies = vec![body(pose(rng)), body(pose(rng))];
    let (p, n) = (Point3::from(vector(rng, 1.0)), vector(rng, 1.0));
    let joints = vec![
        Joint::ball("ball", 0, Some(1), &bodies, p).unwrap(),
        Joint::ball("ball to world", 1, None, &bodies, p).unwrap(),
        Joint::hinge("hinge", 0, Some(1), &bodies, p, n).unwrap(),
        Joint::hinge("hinge to world", 1, None, &bodies, p, n).unwrap(),
        Joint::prismatic("slider", 0, Some(1), &bodies, Some(n)).unwrap(),
        Joint::prismatic("centre slider", 1, Some(0), &bodies, None).unwrap(),
        Joint::prismatic("slider to world", 0, None, &bodies, Some(n)).unwrap(),
        Joint::target_rotation("cabin", 1, &bodies, bodies[1].state.pose.rotation).unwrap(),
    ];
    (bodies, joints)
}

/// Moves both bodies off the assembled configuration and gives them
/// velocities, so that every term of the rows is exercised.
pub(crate) fn scramble(rng: &mut Pcg64, bodies: &mut [RigidBody]) {
    for body in bodies {
        body.state.pose = displaced(&body.state.pose, &six(&vector(rng, 0.3), &vector(rng, 0.5)));
        body.state.velocity = vector(rng, 1.0);
        body.state.angular_velocity = vector(rng, 2.0);
    }
}

pub(crate) fn rows(joint: &Joint, bodies: &[RigidBody]) -> Vec<ConstraintRow> {
    let mut out = Vec::new();
    joint.rows(bodies, &mut out);
    assert_eq!(out.len(), joint.row_count(), "{}", joint.name);
    out
}

/// The bodies' poses, for [`pose_central_differences`].
fn poses(bodies: &[RigidBody]) -> Vec<Isometry3<f64>> {
    bodies.iter().map(|b| b.state.pose).collect()
}

/// `bodies` moved to `poses`.
fn at_poses(bodies: &[RigidBody], poses: &[Isometry3<f64>]) -> Vec<RigidBody> {
    let mut moved = bodies.to_vec();
    for (body, pose) in moved.iter_mut().zip(poses) {
        body.state.pose = *pose;
    }
    moved
}

/// `bodies` with `(v_0, ω_0, v_1, ω_1)` increased by `increment`.
fn kicked(bodies: &[RigidBody], increment: &DVector<f64>) -> Vec<RigidBody> {
    let mut moved = bodies.to_vec();
    for (j, body) in moved.iter_mut().enumerate() {
        body.state.velocity += increment.fixed_rows::<3>(6 * j);
        body.state.angular_velocity += increment.fixed_rows::<3>(6 * j + 3);
    }
    moved
}

/// `Ċ = J_a u_a + J_b u_b` (eq 57), `u = (v, ω)`.
pub(crate) fn constraint_rate(row: &ConstraintRow, bodies: &[RigidBody]) -> f64 {
    let u = |body: &RigidBody| six(&body.state.velocity, &body.state.angular_velocity);
    row.jacobian_a.dot(&u(&bodies[row.a]))
        + row.b.map_or(0.0, |b| row.jacobian_b.dot(&u(&bodies[b])))
}

/// `∂C/∂(q_0, q_1)` of `rows`, one row each.
fn analytic(rows: &[ConstraintRow]) -> DMatrix<f64> {
    DMatrix::from_fn(rows.len(), 12, |i, k| {
        let (row, body) = (&rows[i], k / 6);
        if body == row.a {
            row.jacobian_a[k % 6]
        } else if Some(body) == row.b {
            row.jacobian_b[k % 6]
        } else {
            0.0
        }
    })
}

#[test]
fn constraints_vanish_at_construction_and_under_the_free_motions() {
    let mut rng = Pcg64::seed_from_u64(3);
    for _ in 0..20 {
        let (mut bodies, joints) = assembly(&mut rng);
        for joint in &joints {
            for row in rows(joint, &bodies) {
                assert!(row.value.abs() < 1e-12, "{}: C = {}", joint.name, row.value);
            }
        }
        // A hinge turns freely about its axis, a ball about any axis
        // through its anchor, a slider along its axis.
        let turned = |bodies: &[RigidBody], p: &Point3<f64>, axis: &Vector3<f64>| {
            let turn = Isometry3::rotation_wrt_point(UnitQuaternion::from_scaled_axis(*axis), *p);
            let mut moved = bodies.to_vec();
            moved[1].state.pose = turn * moved[1].state.pose;
            moved
        };
        let max_value = |joint: &Joint, bodies: &[RigidBody]| {
            rows(joint, bodies)
                .iter()
                .map(|r| r.value.abs())
                .fold(0.0, f64::max)
        };
        let (ball, hinge, slider) = (&joints[0], &joints[2], &joints[4]);
        let JointKind::Hinge {
            anchor_a, axis_a, ..
        } = &hinge.kind
        else {
            unreachable!()
        };
        let p = bodies[0].state.pose * anchor_a;
        let n = bodies[0].state.pose.rotation * axis_a.as_ref();
        let about_axis = turned(&bodies, &p, &(1.3 * n));
        assert!(max_value(hinge, &about_axis) < 1e-12);
        let across = turned(&bodies, &p, &(0.1 * n.cross(&Vector3::x())));
        assert!(max_value(hinge, &across) > 1e-3);
        assert!(max_value(ball, &turned(&bodies, &p, &vector(&mut rng, 2.0))) < 1e-12);

        let JointKind::Prismatic { axis_a, .. } = &slider.kind else {
            unreachable!()
        };
        let along = bodies[0].state.pose.rotation * axis_a.as_ref();
        assert!(slider.slide(&bodies).unwrap().abs() < 1e-12);
        bodies[1].state.pose.translation.vector += 0.37 * along;
        assert!(max_value(slider, &bodies) < 1e-12);
        assert!((slider.slide(&bodies).unwrap() - 0.37).abs() < 1e-12);
        bodies[1].state.pose.translation.vector += 0.01 * along.cross(&Vector3::y());
        assert!(max_value(slider, &bodies) > 1e-4);
    }
}

#[test]
fn jacobians_match_finite_differences_of_the_constraints() {
    let mut rng = Pcg64::seed_from_u64(11);
    let h = 1e-6;
    let mut worst = 0.0f64;
    for _ in 0..20 {
        let (mut bodies, joints) = assembly(&mut rng);
        scramble(&mut rng, &mut bodies);
        for joint in &joints {
            let fd = pose_central_differences(&poses(&bodies), h, h, |moved| {
                let values = rows(joint, &at_poses(&bodies, moved));
                Some(DVector::from_iterator(
                    values.len(),
                    values.iter().map(|r| r.value),
                ))
            })
            .unwrap();
            let comparison = compare(
                &analytic(&rows(joint, &bodies)),
                &fd,
                (1, 1),
                Tolerance::Absolute(1e-7),
            );
            comparison.assert_passes(&joint.name);
            worst = worst.max(comparison.worst().error);
        }
    }
    eprintln!("worst |∂C/∂q − finite difference| = {worst:.1e}");
}

/// `C` along `x(t) = x + t v`, `R(t) = exp(t ω) R`: zero linear and
/// angular accelerations.
fn values_at(joint: &Joint, bodies: &[RigidBody], t: f64) -> Vec<f64> {
    let mut moved = bodies.to_vec();
    for body in &mut moved {
        body.advance_pose(t);
    }
    rows(joint, &moved).iter().map(|r| r.value).collect()
}

#[test]
fn velocity_products_match_the_second_derivative_along_free_motion() {
    let mut rng = Pcg64::seed_from_u64(17);
    let h = 1e-4;
    let (mut worst_rate, mut worst_product) = (0.0f64, 0.0f64);
    for _ in 0..20 {
        let (mut bodies, joints) = assembly(&mut rng);
        scramble(&mut rng, &mut bodies);
        for joint in &joints {
            let base = rows(joint, &bodies);
            // Ċ is the derivative of C along the motion.
            let fd = central_differences(&[h], |t| {
                Some(DVector::from_vec(values_at(joint, &bodies, t[0])))
            })
            .unwrap();
            let rate = DMatrix::from_iterator(
                base.len(),
                1,
                base.iter().map(|row| constraint_rate(row, &bodies)),
            );
            let comparison = compare(&rate, &fd, (1, 1), Tolerance::Absolute(1e-6));
            comparison.assert_passes(&format!("{}: Ċ", joint.name));
            worst_rate = worst_rate.max(comparison.worst().error);
            // C̈ by the second central difference.
            let (plus, minus) = (values_at(joint, &bodies, h), values_at(joint, &bodies, -h));
            for (i, row) in base.iter().enumerate() {
                let second = (plus[i] - 2.0 * row.value + minus[i]) / (h * h);
                let product_error = (second - row.velocity_product).abs();
                assert!(
                    product_error < 1e-5,
                    "{} row {i}: C̈ off by {product_error:e}",
                    joint.name
                );
                worst_product = worst_product.max(product_error);
            }
        }
    }
    eprintln!("worst Ċ error {worst_rate:.1e}, worst C̈ error {worst_product:.1e}");
}

#[test]
fn hinge_and_slider_leave_seven_degrees_of_freedom() {
    let mut rng = Pcg64::seed_from_u64(5);
    for _ in 0..10 {
        let (bodies, joints) = assembly(&mut rng);
        for (joint, rank) in joints.iter().zip([3, 3, 5, 5, 5, 5, 5, 3]) {
            let rows = rows(joint, &bodies);
            let jacobian = DMatrix::from_fn(rows.len(), 12, |i, k| {
                if k < 6 {
                    rows[i].jacobian_a[k]
                } else {
                    rows[i].jacobian_b[k - 6]
                }
            });
            assert_eq!(jacobian.rank(1e-9), rank, "{}", joint.name);
        }
    }
}

#[test]
fn controller_gradients_match_finite_differences_of_the_wrenches() {
    let mut rng = Pcg64::seed_from_u64(23);
    let h = 1e-6;
    let pd = PdController {
        stiffness: 350.0,
        damping: 12.0,
        target: 0.2,
    };
    let wrenches = |joint: &Joint, bodies: &[RigidBody]| {
        let mut forces = Forces::default();
        forces.reset(bodies.len());
        joint.add_control_forces(bodies, &mut forces);
        forces
    };
    let mut worst = 0.0f64;
    for _ in 0..20 {
        let (mut bodies, joints) = assembly(&mut rng);
        scramble(&mut rng, &mut bodies);
        for joint in joints.into_iter().filter(|j| j.slide(&bodies).is_some()) {
            let joint = joint.with_controller(pd).unwrap();
            let forces = wrenches(&joint, &bodies);
            // Action and reaction: no net force.
            if let Some(b) = joint.b {
                assert!(
                    (forces.wrench[joint.a] + forces.wrench[b])
                        .fixed_rows::<3>(0)
                        .norm()
                        < 1e-12
                );
            }
            let mixed = Tolerance::Mixed(1e-6);
            for on in 0..2 {
                let wrench_on = |moved: &[RigidBody]| {
                    Some(DVector::from_column_slice(
                        wrenches(&joint, moved).wrench[on].as_slice(),
                    ))
                };
                let fd_position = pose_central_differences(&poses(&bodies), h, h, |moved| {
                    wrench_on(&at_poses(&bodies, moved))
                })
                .unwrap();
                let fd_velocity =
                    central_differences(&[h; 12], |du| wrench_on(&kicked(&bodies, du))).unwrap();
                let (mut position, mut velocity) = (DMatrix::zeros(6, 12), DMatrix::zeros(6, 12));
                for g in forces.gradients.iter().filter(|g| g.on == on) {
                    let mut block = position.fixed_view_mut::<6, 6>(0, 6 * g.by);
                    block += g.position;
                    let mut block = velocity.fixed_view_mut::<6, 6>(0, 6 * g.by);
                    block += g.velocity;
                }
                for (what, analytic, fd) in [
                    ("position", position, fd_position),
                    ("velocity", velocity, fd_velocity),
                ] {
                    let comparison = compare(&analytic, &fd, (6, 1), mixed);
                    comparison.assert_passes(&format!("{} on {on}, {what}", joint.name));
                    worst = worst.max(comparison.worst().error);
                }
            }
        }
    }
    eprintln!("worst relative PD gradient error {worst:.1e}");
}

#[test]
fn controller_pair_is_collinear_on_the_slide_line() {
    let mut rng = Pcg64::seed_from_u64(29);
    let (mut bodies, joints) = assembly(&mut rng);
    let slider = joints[4]
        .clone()
        .with_controller(PdController {
            stiffness: 100.0,
            damping: 0.0,
            target: 0.5,
        })
        .unwrap();
    let JointKind::Prismatic { axis_a, .. } = &slider.kind else {
        unreachable!()
    };
    let along = bodies[0].state.pose.rotation * axis_a.as_ref();
    bodies[1].state.pose.translation.vector += 0.2 * along;
    let mut forces = Forces::default();
    forces.reset(2);
    slider.add_control_forces(&bodies, &mut forces);
    // F = k_p (s − L) a = 100 (0.2 − 0.5) a on a: pulls a towards b's
    // far side, and the pair's moment about the origin cancels.
    let force_a = forces.wrench[0].fixed_rows::<3>(0).into_owned();
    assert!((force_a - (-30.0) * along).norm() < 1e-10);
    let moment = |i: usize| {
        let w = forces.wrench[i];
        let f = w.fixed_rows::<3>(0).into_owned();
        bodies[i].state.pose.translation.vector.cross(&f) + w.fixed_rows::<3>(3)
    };
    assert!((moment(0) + moment(1)).norm() < 1e-10);
}

#[test]
fn baumgarte_decay_is_critically_damped() {
    // A body whose centre is ball-jointed to the world, displaced by C₀:
    // J = (I, 0), so eq 56 with β = α²/4 gives ẍ = −(C̈₀ + α Ċ + β C) and
    // C(t) = C₀ (1 + α t/2) e^{−α t/2}.
    let (alpha, beta) = (8.0, 16.0);
    let mut bodies = vec![body(Isometry3::identity())];
    let joint = Joint::ball("pin", 0, None, &bodies, Point3::origin()).unwrap();
    let c0 = Vector3::new(0.01, -0.02, 0.005);
    bodies[0].state.pose.translation.vector = c0;
    let dt = 1e-5;
    let mut worst = 0.0f64;
    for step in 1..=100_000 {
        let acceleration =
            Vector3::from_iterator(rows(&joint, &bodies).iter().map(|r| {
                -(r.velocity_product + alpha * constraint_rate(r, &bodies) + beta * r.value)
            }));
        bodies[0].state.velocity += dt * acceleration;
        bodies[0].advance_pose(dt);
        let t = step as f64 * dt;
        let exact = c0 * (1.0 + 0.5 * alpha * t) * (-0.5 * alpha * t).exp();
        let c = bodies[0].state.pose.translation.vector;
        worst = worst.max((c - exact).norm() / c0.norm());
        assert!(c.dot(&c0) > 0.0, "overshoot at t = {t}");
    }
    eprintln!("worst relative deviation from the critically damped decay {worst:.1e}");
    assert!(worst < 1e-4);
}

#[test]
fn bad_joints_are_rejected_by_name() {
    let bodies = vec![body(Isometry3::identity()), body(Isometry3::identity())];
    let p = Point3::origin();
    let error = Joint::ball("elbow", 0, Some(2), &bodies, p).unwrap_err();
    assert_eq!(
        error.to_string(),
        "joint `elbow`: body index 2 is out of range (2 bodies)"
    );
    let error = Joint::hinge("knee", 1, Some(1), &bodies, p, Vector3::x()).unwrap_err();
    assert_eq!(error.to_string(), "joint `knee` joins body 1 to itself");
    let error = Joint::hinge("wrist", 0, Some(1), &bodies, p, Vector3::zeros()).unwrap_err();
    assert_eq!(
        error,
        JointError::ZeroAxis {
            joint: "wrist".into()
        }
    );
    let error = Joint::prismatic("boom", 0, Some(1), &bodies, None).unwrap_err();
    assert_eq!(
        error,
        JointError::CoincidentCentres {
            joint: "boom".into()
        }
    );
    let ball = Joint::ball("hip", 0, None, &bodies, p).unwrap();
    let pd = PdController {
        stiffness: 1.0,
        damping: 1.0,
        target: 0.0,
    };
    assert_eq!(
        ball.with_controller(pd).unwrap_err(),
        JointError::ControllerNotPrismatic {
            joint: "hip".into()
        }
    );
    let slider = Joint::prismatic("arm", 0, Some(1), &bodies, Some(Vector3::z())).unwrap();
    let negative = PdController {
        stiffness: -1.0,
        ..pd
    };
    assert!(matches!(
        slider.clone().with_controller(negative),
        Err(JointError::InvalidController { .. })
    ));
    let mut broken = slider.clone();
    broken.b = Some(7);
    assert!(matches!(
        broken.check(2),
        Err(JointError::BodyOutOfRange { body: 7, .. })
    ));
}
