//! Classical fourth-order Runge–Kutta on `(x, R, v, L)`: forces, contacts
//! included (detected anew at each stage), evaluated at each stage; the
//! explicit part (gravity, external wrenches, friction anchors or PID
//! forces) is held over the step.

use crate::body::RigidBody;
use crate::joints::Joint;
use crate::parameters::WorldParameters;
use crate::pipeline::{island_rows, Pipeline};
use crate::solver::{solve_island, IslandProblem};
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};

/// Advances the bodies by `dt`; `pipeline.explicit` is the explicit part
/// held over the step. Leaves the islands at the end of the step in
/// `pipeline.islands`. (Its stages' buffers are not kept from step to
/// step, as the Euler integrators' are.)
pub fn step(
    bodies: &mut [RigidBody],
    joints: &[Joint],
    parameters: &WorldParameters,
    pipeline: &mut Pipeline,
    dt: f64,
) {
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
            x: b.state.pose.translation.vector,
            q: b.state.pose.rotation,
            v: b.state.velocity,
            l: b.angular_momentum(),
        })
        .collect();
    let set = |bodies: &mut [RigidBody], states: &[State]| {
        for (b, s) in bodies.iter_mut().zip(states) {
            if b.is_dynamic() {
                b.state.pose = Isometry3::from_parts(Translation3::from(s.x), s.q);
                b.state.velocity = s.v;
                b.state.angular_velocity = b.world_inverse_inertia() * s.l;
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
        pipeline.evaluate_forces(bodies, joints, parameters, None);
        let accelerations = accelerations(bodies, pipeline, parameters.baumgarte_alpha, dt);
        let rate: Vec<Rate> = bodies
            .iter()
            .zip(&accelerations)
            .map(|(b, a)| [b.state.velocity, b.state.angular_velocity, a[0], a[1]])
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
    pipeline.find_islands(bodies);
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
    pipeline.find_islands(bodies);
    for k in 0..pipeline.islands.len() {
        let island = pipeline.islands.get(k);
        island_rows(&pipeline.rows, island, &mut pipeline.island_rows);
        let problem = IslandProblem {
            bodies: island,
            gradients: &[],
            rows: &pipeline.island_rows,
            implicit: false,
            baumgarte_alpha,
            stepped: false,
        };
        if let Ok(changes) =
            solve_island(bodies, &pipeline.forces, &problem, dt, &mut pipeline.solver)
        {
            for (&b, change) in island.iter().zip(changes) {
                rates[b] = [change[0] / (dt * bodies[b].model.mass), change[1] / dt];
            }
        }
    }
    rates
}
