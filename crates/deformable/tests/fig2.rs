//! The four jellies of Fig. 2 under the bar on the dish.

use haptic_deformable::scenes::{fig2_jellies, Fig2Spec};
use haptic_deformable::topology::{tet_cylinder, tet_volume};
use haptic_deformable::CoupledWorld;
use haptic_physics::{ContactModel, World, WorldParameters};
use nalgebra::{Isometry3, Vector3};

/// Run for 2 s at 20 ms steps with the scene's solver
/// ([`Fig2Spec::solver_parameters`]: two substeps, two elastic passes, the
/// second holding every jelly's nodes resting on the dish on their contact
/// planes in its own solve), every jelly of the four paradigms carries its
/// share of the 0.52 kg bar standing: none sinks into the dish, none loses
/// more than 10 % of its volume (−4.3 % to −5.3 %), and the bar comes to
/// rest on them, lower than it started by less than 2 cm (about 1.2 cm).
/// The jellies' impulse on the bar carries its weight (0.0510085 N·s a
/// substep against 0.051012), and on the dish, free on the ground, their
/// own and the bar's (0.356100 against 0.355694), each the exact opposite
/// of the rigid body's on them; the dish sinks 2.3 times deeper into the
/// ground than it does alone (the load is 2.2 times its weight).
#[test]
fn the_fig_2_jellies_hold_up_the_bar() {
    hold_up_the_bar(ContactModel::ImplicitPenalty);
}

/// The same with Drumwright's PID penalty contact between the dish and the
/// ground: the rigid world's other contact model, beside the jellies. Its
/// gains are per kilogram, so the dish sinks by its weight and the jellies'
/// push over its own stiffness: 4.761 mm against 2.157 mm alone, and
/// 4.760 mm in closed form; the jellies carry the bar within 0.3 % and the dish
/// carries them within 0.8 %.
#[test]
fn the_fig_2_jellies_hold_up_the_bar_on_a_dish_in_pid_contact_with_the_ground() {
    hold_up_the_bar(ContactModel::PidPenalty);
}

fn hold_up_the_bar(contact_model: ContactModel) {
    let spec = Fig2Spec::default();
    let scene = fig2_jellies(&spec).unwrap();
    let (bar, scene_dish, scene_ground) = (scene.bar, scene.dish, scene.ground);
    let fresh_dish = scene.rigid.bodies()[scene_dish].clone();
    let rigid = World::new(
        scene.rigid.bodies().to_vec(),
        vec![],
        WorldParameters {
            contact_model,
            ..*scene.rigid.parameters()
        },
    )
    .unwrap();
    let mut world =
        CoupledWorld::new(rigid, scene.jellies, vec![], Fig2Spec::solver_parameters()).unwrap();
    let tets = tet_cylinder(
        spec.jelly_rings,
        spec.jelly_layers,
        spec.jelly_radius,
        spec.jelly_height,
        &Isometry3::identity(),
    )
    .tets;
    let volume = |w: &CoupledWorld, k: usize| -> f64 {
        tets.iter()
            .map(|t| tet_volume(&w.bodies()[k].state.positions, t))
            .sum()
    };
    let start: Vec<f64> = (0..4).map(|k| volume(&world, k)).collect();
    let bar_start = world.rigid().bodies()[bar].state.pose.translation.vector.z;
    for step in 0..100 {
        world.step(0.02);
        if step % 10 == 9 {
            let line: Vec<String> = (0..4)
                .map(|k| {
                    let lowest = world.bodies()[k]
                        .state
                        .positions
                        .iter()
                        .map(|p| p.z)
                        .fold(f64::INFINITY, f64::min);
                    format!(
                        "{}: dV {:+.3} low {:+.4}",
                        world.bodies()[k].model.name,
                        volume(&world, k) / start[k] - 1.0,
                        lowest
                    )
                })
                .collect();
            let z = world.rigid().bodies()[bar].state.pose.translation.vector.z;
            println!(
                "t {:.2}: bar z {z:.4}; {}",
                0.02 * (step + 1) as f64,
                line.join("; ")
            );
        }
    }
    assert_eq!(world.quarantined(), 0);
    // The dish's top face, where it rests on the ground.
    let dish_top = world.rigid().bodies()[scene_dish]
        .state
        .pose
        .translation
        .vector
        .z
        + 0.5 * spec.dish_size[2];
    for (k, (body, v0)) in world.bodies().iter().zip(&start).enumerate() {
        let change = volume(&world, k) / v0 - 1.0;
        let lowest = body
            .state
            .positions
            .iter()
            .map(|p| p.z)
            .fold(f64::INFINITY, f64::min);
        assert!(
            change.abs() < 0.1,
            "{}: volume changed by {change}",
            body.model.name
        );
        assert!(
            lowest - dish_top > -0.002,
            "{}: sank {} m into the dish",
            body.model.name,
            dish_top - lowest
        );
    }
    let bar_rigid = &world.rigid().bodies()[bar];
    let drop = bar_start - bar_rigid.state.pose.translation.vector.z;
    assert!(drop > 0.0 && drop < 0.02, "the bar sank {drop} m");
    assert!(
        bar_rigid.state.velocity.norm() < 0.05,
        "{}",
        bar_rigid.state.velocity
    );
    // Two-way, measured over the last substep: the jellies' impulse on the
    // resting bar carries its weight, and the bar's on the jellies is its
    // exact opposite.
    let rows = world.rows();
    let (mut on_bar, mut on_jellies) = (Vector3::zeros(), Vector3::zeros());
    for row in &rows.rows {
        let terms = &rows.rigid_terms[row.rigids.0 as usize..row.rigids.1 as usize];
        if !terms.iter().any(|t| t.body as usize == bar) {
            continue;
        }
        for t in terms {
            on_bar += row.impulse * t.linear;
        }
        for t in &rows.node_terms[row.nodes.0 as usize..row.nodes.1 as usize] {
            on_jellies += row.impulse * t.jacobian;
        }
    }
    let substeps = world.parameters().substeps as f64;
    let weight = bar_rigid.model.mass * 9.81 * 0.02 / substeps;
    println!("jellies on the bar {on_bar:?} N·s, bar on the jellies {on_jellies:?}, weight·h {weight:.6}");
    assert!(
        (on_bar.z - weight).abs() < 0.05 * weight,
        "the jellies carry {} of the bar's {weight}",
        on_bar.z
    );
    assert!((on_bar + on_jellies).norm() < 1e-12 * weight.max(on_bar.norm()) + 1e-15);

    // The dish, free on the ground, carries the jellies and the bar, and
    // sinks deeper into the ground's penalty contact than it does alone.
    let dish = scene_dish;
    let (mut on_dish, mut from_dish) = (Vector3::zeros(), Vector3::zeros());
    for row in &rows.rows {
        let terms = &rows.rigid_terms[row.rigids.0 as usize..row.rigids.1 as usize];
        if !terms.iter().any(|t| t.body as usize == dish) {
            continue;
        }
        for t in terms {
            on_dish += row.impulse * t.linear;
        }
        for t in &rows.node_terms[row.nodes.0 as usize..row.nodes.1 as usize] {
            from_dish += row.impulse * t.jacobian;
        }
    }
    let jellies: f64 = world
        .bodies()
        .iter()
        .map(|b| b.model.masses.iter().sum::<f64>())
        .sum();
    let load = (jellies + bar_rigid.model.mass) * 9.81 * 0.02 / substeps;
    println!("jellies on the dish {on_dish:?} N·s against (jellies + bar)·g·h {load:.6}");
    assert!(
        (-on_dish.z - load).abs() < 0.05 * load,
        "the dish carries {} of {load}",
        -on_dish.z
    );
    assert!((on_dish + from_dish).norm() < 1e-12 * load + 1e-15);
    let ground = scene_ground.expect("the dish rests on the ground");
    let bodies = world.rigid().bodies();
    let mut alone = World::new(
        vec![fresh_dish, bodies[ground].clone()],
        vec![],
        *world.rigid().parameters(),
    )
    .unwrap();
    for _ in 0..400 {
        alone.step(0.005, &[]);
    }
    let (loaded, unloaded) = (
        world.rigid().bodies()[dish].state.pose.translation.vector.z,
        alone.bodies()[0].state.pose.translation.vector.z,
    );
    let rest = -0.5 * spec.dish_size[2];
    println!(
        "the dish sinks {:.3} mm under the jellies, {:.3} mm alone",
        1e3 * (rest - loaded),
        1e3 * (rest - unloaded)
    );
    let dish_speed = world.rigid().bodies()[dish].state.velocity.norm();
    assert!(dish_speed < 0.01, "the dish moves at {dish_speed} m/s");
    assert!(
        rest - loaded > 1.5 * (rest - unloaded),
        "loaded {loaded}, alone {unloaded}"
    );
    if contact_model == ContactModel::PidPenalty {
        // Drumwright's gains are per kg, and at rest the integral of eq 2
        // holds `d/(1 − λ)`: the dish sinks by its weight and the jellies'
        // push over `m (k_p + k_i/(1 − λ))`.
        let pid = world.rigid().parameters().pid;
        let mass = world.rigid().bodies()[dish].model.mass;
        let push = -on_dish.z / (0.02 / substeps);
        let expected = (mass * 9.81 + push) / (mass * (pid.kp + pid.ki / (1.0 - pid.forgetting)));
        println!(
            "PID: sinks {:.4} mm, closed form {:.4} mm",
            1e3 * (rest - loaded),
            1e3 * expected
        );
        assert!(
            ((rest - loaded) - expected).abs() < 0.02 * expected,
            "sank {} against {expected}",
            rest - loaded
        );
    }
}
