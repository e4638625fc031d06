//! Classical fourth-order Runge–Kutta on `(x, R, v, L)`: forces, contacts
//! included (detected anew at each stage), evaluated at each stage; the
//! explicit part (gravity, external wrenches, friction anchors or PID
//! forces) is held over the step.

use crate::body::RigidBody;
use crate::forces::Forces;
use crate::joints::Joint;
use crate::parameters::WorldParameters;
use crate::pipeline::Pipeline;
use crate::solver::{solve_island, IslandProblem};
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};

/// Advances the bodies by `dt`; `constant` is the explicit part held over
/// the step. Returns the islands at the end of the step.
pub fn step(
    bodies: &mut [RigidBody],
    joints: &[Joint],
    parameters: &WorldParameters,
    pipeline: &mut Pipeline,
    constant: &Forces,
    dt: f64,
) -> Vec<Vec<usize>> {
    #[derive(Clone, Copy)]
    struct State {
        x: Vector3<f64>,
        q: UnitQuaternion<f64>,
        v: Vector3<f64>,
        l: Vector3<f64>,
    }
    let start: Vec<State> = bodies
        .iter()
        .map(|b| State {
            x: b.pose.translation.vector,
            q: b.pose.rotation,
            v: b.velocity,
            l: b.angular_momentum(),
        })
        .collect();
    let set = |bodies: &mut [RigidBody], states: &[State]| {
        for (b, s) in bodies.iter_mut().zip(states) {
            if b.is_dynamic() {
                b.pose = Isometry3::from_parts(Translation3::from(s.x), s.q);
                b.velocity = s.v;
                b.angular_velocity = b.world_inverse_inertia() * s.l;
            }
        }
    };
    // Derivatives: (ẋ, ω, v̇, L̇) per body.
    type Rate = [Vector3<f64>; 4];
    let mut stages: Vec<Vec<Rate>> = Vec::with_capacity(4);
    // Where stages 2–4 are evaluated: at h/2, h/2 and h from the start.
    let offsets = [0.5, 0.5, 1.0, 0.0];
    let mut current = start.clone();
    for (stage, offset) in offsets.into_iter().enumerate() {
        set(bodies, &current);
        if stage > 0 {
            pipeline.detect(bodies, &parameters.contact);
        }
        pipeline.evaluate_forces(bodies, joints, parameters, constant, None);
        let accelerations = accelerations(bodies, pipeline, parameters.baumgarte_alpha, dt);
        let rate: Vec<Rate> = bodies
            .iter()
            .zip(&accelerations)
            .map(|(b, a)| [b.velocity, b.angular_velocity, a[0], a[1]])
            .collect();
        if stage < 3 {
            let h = offset * dt;
            current = start
                .iter()
                .zip(&rate)
                .map(|(s, r)| State {
                    x: s.x + r[0] * h,
                    q: UnitQuaternion::from_scaled_axis(r[1] * h) * s.q,
                    v: s.v + r[2] * h,
                    l: s.l + r[3] * h,
                })
                .collect();
        }
        stages.push(rate);
    }
    let end: Vec<State> = start
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let combine = |k: usize| {
                (stages[0][i][k] + stages[1][i][k] * 2.0 + stages[2][i][k] * 2.0 + stages[3][i][k])
                    * (dt / 6.0)
            };
            State {
                x: s.x + combine(0),
                q: UnitQuaternion::from_scaled_axis(combine(1)) * s.q,
                v: s.v + combine(2),
                l: s.l + combine(3),
            }
        })
        .collect();
    set(bodies, &end);
    pipeline.islands(bodies)
}

/// The explicit accelerations `(v̇, L̇)` of every dynamic body from the
/// pipeline's forces and rows, joints' constraint forces included.
fn accelerations(
    bodies: &[RigidBody],
    pipeline: &mut Pipeline,
    baumgarte_alpha: f64,
    dt: f64,
) -> Vec<[Vector3<f64>; 2]> {
    let mut rates = vec![[Vector3::zeros(); 2]; bodies.len()];
    for island in pipeline.islands(bodies) {
        let rows = pipeline.island_rows(&island);
        let problem = IslandProblem {
            bodies: &island,
            gradients: &[],
            rows: &rows,
            implicit: false,
            baumgarte_alpha,
            stepped: false,
        };
        if let Ok(changes) = solve_island(
            bodies,
            &pipeline.forces,
            &problem,
            dt,
            &mut pipeline.factorizations,
        ) {
            for (&b, change) in island.iter().zip(&changes) {
                rates[b] = [change[0] / (dt * bodies[b].mass), change[1] / dt];
            }
        }
    }
    rates
}
