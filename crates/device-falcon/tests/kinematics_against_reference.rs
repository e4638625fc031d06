//! The kinematics against values computed independently from libnifalcon's
//! published formulas (`tests/data/falcon_reference.py`, which writes them
//! out literally and solves the forward kinematics by Newton's method on a
//! finite-difference Jacobian), and against themselves: forward ∘ inverse
//! is the identity, the Jacobian matches finite differences, the centre is
//! where the three arms agree.

use haptic_device_falcon::kinematics::{
    arm_angles, arm_torques, forward, inverse, jacobian, theta_from_encoder, RAD_PER_TICK,
    WORKSPACE_CENTRE,
};
use nalgebra::{Matrix3, Point3, Vector3};

/// `(encoder, θ1 in degrees)` from the reference script.
const THETA: [(i16, f64); 6] = [
    (0, 35.0),
    (1000, 71.4346590909091),
    (-1000, -1.4346590909091006),
    (2500, 126.08664772727275),
    (-32768, -1158.8909090909092),
    (32767, 1228.8544744318183),
];

type Legs = [(f64, f64, f64); 3];

/// `(position, (θ1, θ2, θ3) of each leg)` from the reference script.
const INVERSE: [([f64; 3], Legs); 4] = [
    (
        [0.0, 0.0, 0.11],
        [
            (0.2825332013359838, 2.299125797423933, 1.5894315516983826),
            (0.2825332013359838, 2.299125797423933, 1.5894315516983826),
            (0.2825332013359838, 2.299125797423933, 1.5894315516983826),
        ],
    ),
    (
        [0.02, -0.01, 0.12],
        [
            (0.6207786510013044, 2.3797761655954095, 1.7536707771321518),
            (0.200581898647337, 2.0949514328839194, 1.6332063687907892),
            (0.5296846801482921, 2.3259614950904077, 1.3813410607239998),
        ],
    ),
    (
        [-0.03, 0.025, 0.09],
        [
            (-0.38653561293265437, 1.9829067160265936, 1.368469480472897),
            (0.599927404255569, 2.6717791610013393, 1.4291172125144125),
            (0.11443888678091274, 2.347052009811131, 1.980194488310905),
        ],
    ),
    (
        [0.01, 0.03, 0.15],
        [
            (0.647242898912935, 1.9627401625350205, 1.7605558374483685),
            (0.8836036464010081, 2.1081344030220457, 1.2772731665421868),
            (1.1424808505050894, 2.260927491013742, 1.7280498387493834),
        ],
    ),
];

/// `(encoders, position)` from the reference script.
const FORWARD: [([i16; 3], [f64; 3]); 4] = [
    (
        [0, 0, 0],
        [
            6.277783748236097e-23,
            -2.6226766109780332e-18,
            0.13460242844423567,
        ],
    ),
    (
        [-500, -500, -500],
        [
            8.163767318775131e-23,
            -1.6327503493928753e-22,
            0.11075449910458131,
        ],
    ),
    (
        [-200, -700, -400],
        [
            0.012098727156624483,
            -0.00953903959649919,
            0.11267866044340578,
        ],
    ),
    (
        [-900, -300, -100],
        [
            -0.00044201451112521,
            0.024687670808421144,
            0.1107523315620241,
        ],
    ),
];

#[test]
fn encoder_ticks_give_libnifalcons_angles() {
    for (ticks, degrees) in THETA {
        let got = theta_from_encoder(ticks).to_degrees();
        assert!(
            (got - degrees).abs() < 1e-9 * degrees.abs().max(1.0),
            "{ticks}: {got} vs {degrees}"
        );
    }
    // 0.0364° a tick: 1280 ticks a motor turn, geared by 110/14.25.
    assert!((RAD_PER_TICK.to_degrees() - 0.036434659).abs() < 1e-9);
}

#[test]
fn inverse_kinematics_match_libnifalcons_formulas() {
    for (p, legs) in INVERSE {
        let got = inverse(&Point3::from(p));
        for (leg, &(t1, t2, t3)) in got.iter().zip(&legs) {
            for (a, b) in [(leg.theta1, t1), (leg.theta2, t2), (leg.theta3, t3)] {
                assert!((a - b).abs() < 1e-12, "{p:?}: {a} vs {b}");
            }
        }
    }
}

#[test]
fn forward_kinematics_match_the_reference_solution() {
    for (encoders, p) in FORWARD {
        let theta = Vector3::from(encoders.map(theta_from_encoder));
        let got = forward(&theta, &Point3::from(WORKSPACE_CENTRE)).unwrap();
        // Newton stops within a thousandth of a tick: well under a micrometre.
        assert!(
            (got.position - Point3::from(p)).norm() < 1e-7,
            "{encoders:?}: {:?}",
            got.position
        );
        assert!(got.iterations <= 6, "{}", got.iterations);
    }
}

/// Points on a 9×9×9 grid over a 6 cm cube about the centre.
fn grid() -> impl Iterator<Item = Point3<f64>> {
    let steps = (0..9).map(|i| -0.03 + 0.0075 * i as f64);
    steps.clone().flat_map(move |x| {
        let steps = steps.clone();
        steps.clone().flat_map(move |y| {
            steps
                .clone()
                .map(move |z| Point3::new(x, y, z) + Vector3::from(WORKSPACE_CENTRE))
        })
    })
}

#[test]
fn forward_after_inverse_is_the_identity() {
    let mut worst: f64 = 0.0;
    for p in grid() {
        let theta = arm_angles(&p);
        assert!(theta.iter().all(|t| t.is_finite()), "{p:?} out of reach");
        // Warm start 5 mm away, as after a fast 1 ms move.
        let guess = p + Vector3::new(0.005, -0.003, 0.004);
        let solution = forward(&theta, &guess).unwrap();
        worst = worst.max((solution.position - p).norm());
        assert!(solution.iterations <= 5, "{p:?}: {}", solution.iterations);
    }
    assert!(worst < 1e-7, "{worst}");
}

fn central_difference(
    f: impl Fn(&Vector3<f64>) -> Vector3<f64>,
    at: &Vector3<f64>,
    h: f64,
) -> Matrix3<f64> {
    let mut m = Matrix3::zeros();
    for j in 0..3 {
        let mut e = Vector3::zeros();
        e[j] = h;
        m.set_column(j, &((f(&(at + e)) - f(&(at - e))) / (2.0 * h)));
    }
    m
}

#[test]
fn jacobian_matches_finite_differences() {
    for p in grid() {
        let analytic = jacobian(&inverse(&p));
        let numeric = central_difference(|q| arm_angles(&Point3::from(*q)), &p.coords, 1e-6);
        let error = (analytic - numeric).norm() / numeric.norm();
        assert!(error < 1e-7, "{p:?}: relative error {error}");
    }
}

#[test]
fn jacobian_inverse_matches_finite_differences_of_forward_kinematics() {
    for p in grid().step_by(7) {
        let theta = arm_angles(&p);
        let numeric = central_difference(|t| forward(t, &p).unwrap().position.coords, &theta, 1e-6);
        let analytic = jacobian(&inverse(&p)).try_inverse().unwrap();
        let error = (analytic - numeric).norm() / numeric.norm();
        assert!(error < 1e-6, "{p:?}: relative error {error}");
    }
}

#[test]
fn the_workspace_centre_is_where_the_arms_agree() {
    let centre = Point3::from(WORKSPACE_CENTRE);
    let theta = arm_angles(&centre);
    assert!((theta[0] - theta[1]).abs() < 1e-12 && (theta[1] - theta[2]).abs() < 1e-12);
    // 16.19°, about −516 ticks from the 35° of encoder 0.
    let ticks = (theta[0] - theta_from_encoder(0)) / RAD_PER_TICK;
    assert!((ticks + 516.3).abs() < 0.1, "{ticks}");
    let solution = forward(&theta, &(centre + Vector3::new(0.01, 0.01, -0.01))).unwrap();
    assert!((solution.position - centre).norm() < 1e-7);
    // Equal arm angles put the grip on the axis, here 2.5 cm further out.
    let out = forward(&Vector3::repeat(theta_from_encoder(0)), &centre).unwrap();
    assert!(out.position.x.abs() < 1e-9 && out.position.y.abs() < 1e-9);
}

#[test]
fn torques_do_the_work_of_the_force() {
    // Virtual work: τ · dθ = F · dp for any small motion.
    let p = Point3::new(0.012, -0.008, 0.118);
    let legs = inverse(&p);
    let force = Vector3::new(1.5, -2.0, 3.0);
    let torques = arm_torques(&legs, &force).unwrap();
    let dp = Vector3::new(1e-7, 2e-7, -1.5e-7);
    let dtheta = arm_angles(&(p + dp)) - arm_angles(&p);
    assert!((torques.dot(&dtheta) - force.dot(&dp)).abs() < 1e-9 * force.norm() * dp.norm() * 1e3);
}

#[test]
fn out_of_reach_is_nan_and_no_solution() {
    assert!(arm_angles(&Point3::new(0.0, 0.0, 0.5))
        .iter()
        .all(|t| t.is_nan()));
    assert!(forward(
        &Vector3::repeat(theta_from_encoder(30_000)),
        &Point3::from(WORKSPACE_CENTRE)
    )
    .is_none());
}
