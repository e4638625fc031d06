//! The Fig. 4 rope over a hinged wheel is an Atwood machine: real meshes in
//! general orientations hang from its ends, 300 times heavier than a node
//! of the rope, which only the exact equality solve carries
//! ([`EqualitySolver::Direct`]).

use haptic_deformable::scenes::{atwood, Atwood, AtwoodSpec};
use haptic_deformable::{EqualitySolver, SolverParameters};
use nalgebra::UnitQuaternion;

const G: f64 = 9.81;
/// The step: at 10 ms the rope creeps over the gripping wheel by 5 %.
const STEP: f64 = 0.005;
const DURATION: f64 = 0.3;

fn spec(friction: f64) -> AtwoodSpec {
    AtwoodSpec {
        wheel_radius: 0.1,
        wheel_mass: 0.5,
        rope_pairs: 25,
        rope_mass: 0.05,
        hanging_length: 0.4,
        friction,
        bodies: [
            (
                haptic_acceptance::mesh_sized("pybullet-bunny.obj", 0.08),
                0.3,
                UnitQuaternion::from_euler_angles(0.4, -0.2, 1.3),
            ),
            (
                haptic_acceptance::mesh_sized("pybullet-torus.obj", 0.08),
                0.2,
                UnitQuaternion::from_euler_angles(-0.7, 0.5, 0.2),
            ),
        ],
    }
}

/// What a run measured.
struct Run {
    /// The heavier end's acceleration, fitted to its speed (`v = a t`).
    acceleration: f64,
    /// Its speed at the end, and the closed form's.
    speed: f64,
    closed_form_speed: f64,
    /// The wheel's rim speed at the rope (positive turning its top towards
    /// the heavier side).
    rim: f64,
    /// How far the lighter body rose (m).
    rise: f64,
}

/// The heavier end's downward speed: the mean of its two rope nodes.
fn end_speed(machine: &Atwood) -> f64 {
    let rope = &machine.world.bodies()[0];
    -0.5 * (rope.state.velocities[machine.rope_ends[0][0]].z
        + rope.state.velocities[machine.rope_ends[0][1]].z)
}

/// Runs the machine; `wheel_inertia` says whether the rope turns the wheel
/// (friction) or slides over it (none) in the closed form.
fn run(friction: f64) -> Run {
    let spec = spec(friction);
    let mut machine = atwood(
        &spec,
        SolverParameters {
            equality_solver: EqualitySolver::Direct,
            ..SolverParameters::default()
        },
    )
    .unwrap();
    let lighter = machine.hanging[1];
    let z_lighter = machine.world.rigid().bodies()[lighter]
        .state
        .pose
        .translation
        .z;
    let (mut num, mut den) = (0.0, 0.0);
    let steps = (DURATION / STEP).round() as usize;
    for step in 1..=steps {
        let report = machine.world.step(STEP);
        assert_eq!(report.quarantined, 0);
        let t = step as f64 * STEP;
        num += end_speed(&machine) * t;
        den += t * t;
    }
    let rigid = machine.world.rigid().bodies();
    // The wheel's axle is the world's y: a top moving towards −x (the
    // heavier side) is a negative spin.
    let rim = -rigid[machine.wheel].state.angular_velocity.y * machine.contact_radius;
    // The closed form with the rope's own weight: the hanging parts differ
    // by 2s, so s̈ = (Δm + 2λs) g / M, s = Δm/(2λ) (cosh kt − 1),
    // k² = 2λg/M, λ the rope's mass per length.
    let (m1, m2) = (spec.bodies[0].1, spec.bodies[1].1);
    let turning = if friction > 0.0 {
        machine.wheel_inertia / machine.contact_radius.powi(2)
    } else {
        0.0
    };
    let total = m1 + m2 + spec.rope_mass + turning;
    let per_length = spec.rope_mass / machine.rope_length;
    let k = (2.0 * per_length * G / total).sqrt();
    let closed_form_speed = (m1 - m2) / (2.0 * per_length) * k * (k * DURATION).sinh();
    let run = Run {
        acceleration: num / den,
        speed: end_speed(&machine),
        closed_form_speed,
        rim,
        rise: rigid[lighter].state.pose.translation.z - z_lighter,
    };
    println!(
        "μ = {friction}: a = {:.4} m/s² against (m₁ − m₂) g / M = {:.4}; speed at {DURATION} s {:.4} m/s, closed form with the rope's weight {:.4}; rim {:.4} m/s; lighter body rose {:.4} m",
        run.acceleration,
        (m1 - m2) * G / total,
        run.speed,
        run.closed_form_speed,
        run.rim,
        run.rise,
    );
    assert!(
        (run.acceleration - (m1 - m2) * G / total).abs() < 0.05 * (m1 - m2) * G / total,
        "a = {}, expected {}",
        run.acceleration,
        (m1 - m2) * G / total
    );
    assert!(
        (run.speed - closed_form_speed).abs() < 0.05 * closed_form_speed,
        "speed {} against the closed form's {closed_form_speed}",
        run.speed
    );
    assert!(
        run.rise > 0.0,
        "the heavier body did not drag the lighter one up"
    );
    run
}

/// With friction enough that the rope does not slip (the capstan allows a
/// tension ratio of e^{μπ} ≈ 12; the machine needs 1.2), the heavier end
/// falls at `(m₁ − m₂) g / (m₁ + m₂ + m_rope + I/r²)` within 5 %, dragging
/// the lighter one up, and the wheel turns with the rope: its top towards
/// the heavier side, its rim at the rope's speed.
#[test]
fn a_rope_that_grips_the_wheel_makes_an_atwood_machine() {
    let run = run(0.8);
    assert!(
        (run.rim - run.speed).abs() < 0.05 * run.speed,
        "rim {} m/s against the rope's {}",
        run.rim,
        run.speed
    );
}

/// Without friction the rope slides over a wheel that stays still, and the
/// heavier end falls as if the wheel had no inertia.
#[test]
fn a_frictionless_rope_slides_over_a_still_wheel() {
    let run = run(0.0);
    assert!(
        run.rim.abs() < 0.01 * run.speed,
        "the wheel turned: rim {} m/s against the rope's {}",
        run.rim,
        run.speed
    );
}
