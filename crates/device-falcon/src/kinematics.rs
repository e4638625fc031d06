//! The Falcon as a delta robot: encoder ticks to arm angles, inverse and
//! forward kinematics, and the Jacobian that turns a force at the grip into
//! torques at the three arms.
//!
//! The model is Stamper's three-leg parallel manipulator with only
//! translational freedom (R. E. Stamper, *A Three Degree of Freedom Parallel
//! Manipulator with Only Translational Degrees of Freedom*, PhD thesis,
//! University of Maryland, 1997), with the Falcon's dimensions and leg angles
//! as libnifalcon measured them (`FalconGeometry.h`). Everything here is in
//! libnifalcon's frame ("the Falcon frame"): x to the right and y up as seen
//! from the front of the device, z out of its face towards the user, origin
//! at the centre of the three leg bases. [`crate::frame`] converts to the
//! device frame the rest of the server uses.
//!
//! # The leg model
//!
//! Leg `i` sits at angle `φᵢ` about z. A point `p` in the Falcon frame is,
//! in the leg's own (u, v, w) frame,
//!
//! ```text
//! u = cos φ x + sin φ y − r,   v = −sin φ x + cos φ y − s,   w = z.      (1)
//! ```
//!
//! With `θ1` the arm (thigh) angle the motor drives, `θ2` the knee angle and
//! `θ3` the angle of the shin parallelogram, and `L = d + e + b sin θ3`:
//!
//! ```text
//! v = b cos θ3 − f                                                        (2)
//! u = a cos θ1 + L cos θ2 − c,   w = a sin θ1 + L sin θ2                  (3)
//! ```
//!
//! These are the relations libnifalcon's `FalconKinematicStamper::IK`
//! solves: (2) is its `θ3 = acos((v + f)/b)`, and eliminating `θ2` from (3)
//! gives its quadratic in `tan(θ1/2)`. We solve (3) for `θ1` as the
//! intersection of a circle of radius `a` about the arm's pivot with one of
//! radius `L` about `(u + c, w)` (the same root as libnifalcon's, checked in
//! `tests/kinematics_against_reference.rs`).
//!
//! # The Jacobian
//!
//! Differentiating `|(u + c, w) − a (cos θ1, sin θ1)|² = L²` implicitly
//! (with `dL/dv = −cot θ3` from (2)) gives each arm's angle rate per grip
//! velocity in the leg frame:
//!
//! ```text
//! ∂θ1/∂(u, v, w) = −(cos θ2 sin θ3, cos θ3, sin θ2 sin θ3) / (a sin θ3 sin(θ1 − θ2))   (4)
//! ```
//!
//! rotated into the Falcon frame by (1). libnifalcon's `jacobian` has the
//! same first two components; its third reads `sin² θ2` where (4) has
//! `sin θ2 sin θ3`. (4) agrees with central differences of the inverse
//! kinematics to 1e-7 relative (`jacobian_matches_finite_differences`);
//! the two differ wherever `sin θ2 ≠ sin θ3` (by a quarter at the
//! workspace centre, where `θ2 ≈ 132°` and `θ3 ≈ 91°`), so we use (4).
//!
//! By virtual work, arm torques `τ` render a grip force `F` when
//! `τ = J⁻ᵀ F` with `J = ∂θ1/∂p`; libnifalcon writes `−10 000 τ` (τ in N·m)
//! as the motor effort.

use nalgebra::{Matrix3, Point3, Vector3};
use std::f64::consts::PI;

/// Arm (thigh) length from the leg base to the knee (m): libnifalcon's `a`.
pub const A: f64 = 0.060;
/// Side of the shin parallelogram (m): `b`.
pub const B: f64 = 0.1025;
/// Shin connection to grip centre, u component (m): `c`.
pub const C: f64 = 0.01443;
/// Shin to grip connection joint (m): `d`.
pub const D: f64 = 0.01125;
/// Knee to shin connection joint (m): `e`, equal to `d`.
pub const E: f64 = D;
/// Shin connection to grip centre, v component (m): `f`.
pub const F: f64 = -0.025;
/// Frame origin to leg base, u component (m): `r`.
pub const R: f64 = 0.0400;
/// Frame origin to leg base, v component (m): `s`.
pub const S: f64 = -0.02309;
/// Each leg's tilt from the desk plane: 15°.
const LEG_OFFSET: f64 = PI / 12.0;
/// The legs' angles about z, from the top one clockwise as seen from the front.
pub const PHI: [f64; 3] = [
    PI / 2.0 + LEG_OFFSET,
    -PI / 6.0 + LEG_OFFSET,
    -5.0 * PI / 6.0 + LEG_OFFSET,
];

/// Slots on the encoder wheel; the quadrature encoder counts four ticks a slot.
const WHEEL_SLOTS: f64 = 320.0;
/// Diameter of the motor shaft the cable winds on (m).
const SHAFT_DIAMETER: f64 = 0.01425;
/// Diameter of the arm's capstan sector (m).
const ARM_DIAMETER: f64 = 0.110;
/// Arm angle at encoder 0 (degrees).
const THETA_AT_ZERO_DEG: f64 = 35.0;

/// Arm angle per encoder tick (rad): one tick turns the shaft by `1/(4·320)`
/// of a turn, moving the cable `π D_shaft / 1280`, which turns the arm's
/// sector of diameter `D_arm` by that arc (libnifalcon's `getTheta`).
pub const RAD_PER_TICK: f64 = SHAFT_DIAMETER / (4.0 * WHEEL_SLOTS * ARM_DIAMETER) * 2.0 * PI;

/// Motor effort per arm torque (1/(N·m)), with libnifalcon's sign: the
/// firmware's positive effort turns the arm towards smaller `θ1`.
pub const EFFORT_PER_NM: f64 = -10_000.0;

/// Where libnifalcon's examples take the centre of the workspace (m, Falcon
/// frame): on the axis, 11 cm out from the leg bases.
pub const WORKSPACE_CENTRE: [f64; 3] = [0.0, 0.0, 0.11];

/// The arm angle `θ1` (rad) at encoder value `ticks`.
pub fn theta_from_encoder(ticks: i16) -> f64 {
    THETA_AT_ZERO_DEG.to_radians() + f64::from(ticks) * RAD_PER_TICK
}

/// The three joint angles of one leg (rad).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LegAngles {
    /// The arm angle, driven by the motor.
    pub theta1: f64,
    /// The knee angle.
    pub theta2: f64,
    /// The shin parallelogram's angle.
    pub theta3: f64,
}

/// `p` in leg `leg`'s (u, v, w) frame, eq. (1).
fn leg_frame(p: &Point3<f64>, leg: usize) -> Vector3<f64> {
    let (sin, cos) = PHI[leg].sin_cos();
    Vector3::new(cos * p.x + sin * p.y - R, -sin * p.x + cos * p.y - S, p.z)
}

/// Each leg's joint angles with the grip at `p` (Falcon frame, m); NaN
/// where `p` is out of the leg's reach.
pub fn inverse(p: &Point3<f64>) -> [LegAngles; 3] {
    [0, 1, 2].map(|leg| {
        let q = leg_frame(p, leg);
        // (2)
        let theta3 = ((q.y + F) / B).acos();
        let l = D + E + B * theta3.sin();
        // (3): the knee is where the circle of radius `a` about the pivot
        // meets the circle of radius `L` about (u + c, w).
        let (x, w) = (q.x + C, q.z);
        let rho = x.hypot(w);
        let alpha = w.atan2(x);
        let theta1 = alpha - ((rho * rho + A * A - l * l) / (2.0 * A * rho)).acos();
        let (sin1, cos1) = theta1.sin_cos();
        let theta2 = (w - A * sin1).atan2(x - A * cos1);
        LegAngles {
            theta1,
            theta2,
            theta3,
        }
    })
}

/// The arm angles `θ1` with the grip at `p`.
pub fn arm_angles(p: &Point3<f64>) -> Vector3<f64> {
    let legs = inverse(p);
    Vector3::new(legs[0].theta1, legs[1].theta1, legs[2].theta1)
}

/// `J = ∂θ1/∂p` (row `i` for arm `i`) at the joint angles `legs`, eq. (4).
pub fn jacobian(legs: &[LegAngles; 3]) -> Matrix3<f64> {
    let mut j = Matrix3::zeros();
    for (i, leg) in legs.iter().enumerate() {
        let (s2, c2) = leg.theta2.sin_cos();
        let (s3, c3) = leg.theta3.sin_cos();
        let den = -A * s3 * (leg.theta1 - leg.theta2).sin();
        let (du, dv, dw) = (c2 * s3 / den, c3 / den, s2 * s3 / den);
        let (sin, cos) = PHI[i].sin_cos();
        j[(i, 0)] = du * cos - dv * sin;
        j[(i, 1)] = du * sin + dv * cos;
        j[(i, 2)] = dw;
    }
    j
}

/// Newton iterations allowed to [`forward`].
pub const MAX_NEWTON_ITERATIONS: usize = 12;
/// [`forward`] stops once every arm angle is within this of its target (rad):
/// a thousandth of an encoder tick.
pub const ANGLE_TOLERANCE: f64 = 1e-3 * RAD_PER_TICK;

/// The result of [`forward`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Solution {
    /// The grip's position (Falcon frame, m).
    pub position: Point3<f64>,
    /// The legs' joint angles there.
    pub legs: [LegAngles; 3],
    /// Newton iterations taken.
    pub iterations: usize,
}

/// The grip position whose arm angles are `theta`, by Newton's method on
/// [`arm_angles`] with the Jacobian (4), starting from `guess` (the last
/// position, so that one or two iterations suffice at 1 kHz). A step that
/// leaves the reachable set or does not reduce the error is halved. `None`
/// when the angles are out of reach or the iteration does not converge.
pub fn forward(theta: &Vector3<f64>, guess: &Point3<f64>) -> Option<Solution> {
    let mut p = *guess;
    let mut legs = inverse(&p);
    let mut error = residual(theta, &legs);
    if !error.iter().all(|e| e.is_finite()) {
        p = Point3::from(WORKSPACE_CENTRE);
        legs = inverse(&p);
        error = residual(theta, &legs);
    }
    for iteration in 0..=MAX_NEWTON_ITERATIONS {
        if error.amax() <= ANGLE_TOLERANCE {
            return Some(Solution {
                position: p,
                legs,
                iterations: iteration,
            });
        }
        if iteration == MAX_NEWTON_ITERATIONS {
            break;
        }
        let step = jacobian(&legs).lu().solve(&error)?;
        let mut scale = 1.0;
        loop {
            let candidate = p + step * scale;
            let candidate_legs = inverse(&candidate);
            let candidate_error = residual(theta, &candidate_legs);
            if candidate_error.iter().all(|e| e.is_finite())
                && candidate_error.amax() < error.amax()
            {
                (p, legs, error) = (candidate, candidate_legs, candidate_error);
                break;
            }
            scale *= 0.5;
            if scale < 1e-3 {
                return None;
            }
        }
    }
    None
}

fn residual(theta: &Vector3<f64>, legs: &[LegAngles; 3]) -> Vector3<f64> {
    Vector3::new(
        theta[0] - legs[0].theta1,
        theta[1] - legs[1].theta1,
        theta[2] - legs[2].theta1,
    )
}

/// The arm torques (N·m) that render force `force` (N, Falcon frame) at the
/// grip with the legs at `legs`: `τ = J⁻ᵀ F` (virtual work). `None` at a
/// singular configuration.
pub fn arm_torques(legs: &[LegAngles; 3], force: &Vector3<f64>) -> Option<Vector3<f64>> {
    jacobian(legs).transpose().lu().solve(force)
}

/// Largest motor effort the firmware takes: its packets carry efforts as
/// 16-bit two's complement.
pub const MAX_EFFORT: f64 = i16::MAX as f64;

/// Motor efforts for arm torques `torques`: scaled by [`EFFORT_PER_NM`];
/// when one would exceed [`MAX_EFFORT`], all three are scaled down
/// together, so the force keeps its direction (libnifalcon scales its torques
/// the same way, against its own limit).
pub fn efforts(torques: &Vector3<f64>) -> [i16; 3] {
    let raw = torques * EFFORT_PER_NM;
    let largest = raw.amax();
    let raw = if largest > MAX_EFFORT {
        raw * (MAX_EFFORT / largest)
    } else {
        raw
    };
    // In range by construction; `as` saturates a NaN to 0.
    [
        raw[0].round() as i16,
        raw[1].round() as i16,
        raw[2].round() as i16,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_centre_is_symmetric() {
        let legs = inverse(&Point3::from(WORKSPACE_CENTRE));
        for leg in &legs[1..] {
            assert!((leg.theta1 - legs[0].theta1).abs() < 1e-12);
        }
    }

    #[test]
    fn efforts_keep_the_direction_when_saturated() {
        let e = efforts(&Vector3::new(-10.0, 5.0, 0.0));
        assert_eq!(e, [i16::MAX, -16384, 0]);
        assert_eq!(efforts(&Vector3::new(f64::NAN, 0.0, 0.0))[1], 0);
    }
}
