//! Semi-implicit backward Euler (Xu, Zhao & Barbič eqs 5, 15–18) and
//! symplectic Euler: each island's momentum change over the step is solved
//! at once (with the contact gradients, or with `G = I`), then applied and
//! the poses advanced.

use crate::body::RigidBody;
use crate::pipeline::{island_rows, Pipeline};
use crate::solver::{rotation_velocity_map, solve_island, IslandProblem};
use nalgebra::{Matrix3, Vector3};

/// Solves each island's momentum change from the pipeline's forces and
/// rows and applies it over `dt` (`implicit`: with the forces' gradients,
/// else symplectic Euler); an island whose solve fails keeps its bodies
/// where they were, at rest. Leaves the islands in `pipeline.islands` and
/// returns how many bodies were so quarantined.
pub fn advance(
    bodies: &mut [RigidBody],
    pipeline: &mut Pipeline,
    baumgarte_alpha: f64,
    dt: f64,
    implicit: bool,
) -> usize {
    pipeline.find_islands(bodies);
    if implicit {
        pipeline.find_island_gradients(bodies.len());
    }
    let mut quarantined = 0;
    for k in 0..pipeline.islands.len() {
        let island = pipeline.islands.get(k);
        island_rows(&pipeline.rows, island, &mut pipeline.island_rows);
        let problem = IslandProblem {
            bodies: island,
            gradients: if implicit {
                let starts = &pipeline.island_gradient_starts;
                &pipeline.island_gradients[starts[k]..starts[k + 1]]
            } else {
                &[]
            },
            rows: &pipeline.island_rows,
            implicit,
            baumgarte_alpha,
            stepped: true,
        };
        match solve_island(bodies, &pipeline.forces, &problem, dt, &mut pipeline.solver) {
            Ok(changes) => {
                for (&b, change) in island.iter().zip(changes) {
                    apply_momentum_change(&mut bodies[b], change, dt, implicit);
                }
            }
            Err(_) => {
                for &b in island {
                    bodies[b].state.velocity = Vector3::zeros();
                    bodies[b].state.angular_velocity = Vector3::zeros();
                }
                quarantined += island.len();
            }
        }
    }
    quarantined
}

/// Applies the momentum change `(ΔP, ΔL)` and advances the pose:
/// `v ← v + ΔP/m`, `L ← L + ΔL`, `x ← x + h v`, `R ← exp(Δθ) R` with
/// `Δθ = h V (ω + J⁻¹ ΔL)` as linearised, then `ω = J⁻¹ L` at the new `R`
/// (angular momentum kept across the rotation).
pub fn apply_momentum_change(
    body: &mut RigidBody,
    change: &[Vector3<f64>; 2],
    h: f64,
    implicit: bool,
) {
    let map = if implicit {
        rotation_velocity_map(body, h)
    } else {
        Matrix3::identity()
    };
    let momentum = body.angular_momentum() + change[1];
    let omega = body.state.angular_velocity + body.world_inverse_inertia() * change[1];
    body.state.velocity += change[0] / body.model.mass;
    body.state.angular_velocity = map * omega;
    body.advance_pose(h);
    body.state.angular_velocity = body.world_inverse_inertia() * momentum;
}
