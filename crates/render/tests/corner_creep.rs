//! Zhao, Li & Barbič §5.4 and §5.6 (Fig 16): a cube in a 90° corner under a
//! tangential load inside the friction cone stays exactly put with the LP,
//! creeps with Yamane's springs, and slides once the load leaves the cone.
//! With bounded pre-sliding it stays static, moves only while the load
//! first reaches each extreme (within the pre-sliding displacement), and not
//! at all when a load it has held comes again.

use haptic_contact::ForceDirection;
use haptic_mesh::shapes::CUBE_HALF;
use haptic_render::{FrictionModel, RenderParameters};
use haptic_scenarios::{cube_corner, run, Trace};
use nalgebra::Isometry3;
use nalgebra::Vector3;
use std::time::Duration;

/// Largest translation (m) and rotation (rad) from `settled` over segments 2–4.
fn creep(trace: &Trace, settled: &Isometry3<f64>) -> (f64, f64) {
    (2..=4)
        .flat_map(|s| trace.segment(s))
        .map(|r| {
            let d = settled.inverse() * r.simulation;
            (d.translation.vector.norm(), d.rotation.angle())
        })
        .fold((0.0, 0.0), |(a, b), (x, y)| {
            (f64::max(a, x), f64::max(b, y))
        })
}

fn settled(trace: &Trace) -> Isometry3<f64> {
    trace.segment(1).last().unwrap().simulation
}

#[test]
fn static_friction_holds_the_cube_and_yamane_creeps() {
    let ours = run(&cube_corner(0.5).with_friction(FrictionModel::StaticLp)).unwrap();
    let home = settled(&ours);
    let (translation, rotation) = creep(&ours, &home);
    let in_cone: Vec<_> = (2..=4).flat_map(|s| ours.segment(s)).collect();
    let contacts = in_cone.iter().map(|r| r.contacts).max().unwrap();
    let peak_force = in_cone
        .iter()
        .map(|r| r.coupling_force.y.abs())
        .fold(0.0, f64::max);
    let not_static: Vec<_> = in_cone
        .iter()
        .filter(|r| r.state != haptic_friction::FrictionState::Static)
        .map(|r| (r.cycle, r.state, r.contacts, r.coupling_force))
        .collect();
    println!(
        "cycles in the cone not static: {} {:?}",
        not_static.len(),
        not_static.first()
    );
    let cycles: Vec<Duration> = ours.rows.iter().map(|r| r.timings.total()).collect();
    let mean = cycles.iter().sum::<Duration>() / cycles.len() as u32;
    let mut sorted = cycles.clone();
    sorted.sort();
    println!(
        "LP: {} cycles in the cone, up to {contacts} contacts, tangential load up to {peak_force:.3} N: creep {translation:.2e} m, {rotation:.2e} rad; cycle mean {:.1} µs, p99 {:.1} µs, max {:.1} µs",
        in_cone.len(),
        mean.as_secs_f64() * 1e6,
        sorted[sorted.len() * 99 / 100].as_secs_f64() * 1e6,
        sorted.last().unwrap().as_secs_f64() * 1e6,
    );
    let stage = |f: fn(&haptic_render::StageTimings) -> Duration| {
        ours.rows
            .iter()
            .map(|r| f(&r.timings))
            .sum::<Duration>()
            .as_secs_f64()
            * 1e6
            / ours.rows.len() as f64
    };
    println!(
        "LP stage means: collision {:.1} µs, assembly {:.1} µs, friction {:.1} µs, coupling {:.1} µs",
        stage(|t| t.collision),
        stage(|t| t.assembly),
        stage(|t| t.friction),
        stage(|t| t.coupling)
    );
    assert!(not_static.is_empty());
    assert!(translation < 1e-9 && rotation < 1e-9);

    // Out of the cone: it slides towards the manipulandum.
    let slid = settled(&ours).inverse() * ours.rows.last().unwrap().simulation;
    let slid = slid.translation.vector.norm();
    println!(
        "LP: 6 N tangential load (cone ≈ 1.2 N): slid {:.2} mm",
        slid * 1e3
    );
    assert!(slid > 2e-3);

    let yamane =
        run(&cube_corner(0.5).with_friction(FrictionModel::YamaneSprings { stiffness: 100.0 }))
            .unwrap();
    let (y_translation, y_rotation) = creep(&yamane, &settled(&yamane));
    println!(
        "Yamane (k_f = 100 N/m per contact): creep {y_translation:.2e} m, {y_rotation:.2e} rad"
    );
    assert!(y_translation > 100.0 * translation.max(1e-9));
}

/// Along the corner field's gradient (the default) and along the cube's
/// shell normals (eq 1).
#[test]
fn pre_sliding_holds_the_cube_without_creep() {
    for direction in [ForceDirection::FieldGradient, ForceDirection::ShellNormal] {
        holds_without_creep(direction);
    }
}

fn holds_without_creep(direction: ForceDirection) {
    let mut scenario = cube_corner(0.5);
    scenario.parameters.penalty.direction = direction;
    let trace = run(&scenario).unwrap();
    let home = settled(&trace);
    let (translation, rotation) = creep(&trace, &home);
    let in_cone: Vec<_> = (2..=4).flat_map(|s| trace.segment(s)).collect();
    let static_cycles = in_cone
        .iter()
        .filter(|r| r.state == haptic_friction::FrictionState::Static)
        .count();
    // The last ramp brings back loads the cube has already held.
    let start = trace.segment(4).next().unwrap().simulation;
    let (again, again_rotation) = trace
        .segment(4)
        .map(|r| {
            let d = start.inverse() * r.simulation;
            (d.translation.vector.norm(), d.rotation.angle())
        })
        .fold((0.0, 0.0), |(a, b), (x, y)| {
            (f64::max(a, x), f64::max(b, y))
        });
    let slip = in_cone.iter().map(|r| r.slip).fold(0.0, f64::max);
    let friction: Vec<Duration> = trace.rows.iter().map(|r| r.timings.friction).collect();
    let mean = friction.iter().sum::<Duration>() / friction.len() as u32;
    println!(
        "pre-sliding, {direction:?}: {static_cycles} of {} cycles in the cone static; from the settled pose          up to {translation:.2e} m, {rotation:.2e} rad; RMS slip up to {slip:.2e} m; over the          last ramp {again:.2e} m, {again_rotation:.2e} rad; friction stage mean {:.1} µs",
        in_cone.len(),
        mean.as_secs_f64() * 1e6
    );
    assert_eq!(static_cycles, in_cone.len());
    assert!(slip <= 5e-6);
    assert!(translation < 1e-5 && rotation < 1e-3);
    // Under a nanometre, at the centre and, turned, at the cube's faces.
    assert!(again < 1e-9 && again_rotation * CUBE_HALF < 1e-9);

    let slid = settled(&trace).inverse() * trace.rows.last().unwrap().simulation;
    let slid = slid.translation.vector.norm();
    println!(
        "pre-sliding: 6 N tangential load: slid {:.2} mm",
        slid * 1e3
    );
    assert!(slid > 2e-3);
}

/// What friction holds along `direction` at a contact of normal `normal`
/// per unit `μ‖F_n‖`: the support of eq 13's ℓ-gon (vertices at `2πm/ℓ` of
/// the contact's tangent frame, radius `1/cos(π/ℓ)`).
fn pyramid_capacity(normal: Vector3<f64>, direction: Vector3<f64>, sides: usize) -> f64 {
    let (u, v) = haptic_friction::FrictionContact {
        handle: Vector3::zeros(),
        normal,
        normal_force: 1.0,
        friction_coefficient: 1.0,
        slip: Vector3::zeros(),
    }
    .tangents();
    let angle = direction.dot(&v).atan2(direction.dot(&u));
    let step = std::f64::consts::TAU / sides as f64;
    let off = (angle / step - (angle / step).round()).abs() * step;
    off.cos() / (std::f64::consts::PI / sides as f64).cos()
}

/// Pushed along the corner's edge (segment 5, up to 6 N along y), the cube
/// slides when friction on both faces reaches its limit along the edge:
/// `F_y = μ (c_floor F_z + c_wall F_x)`, the coupling's press on each face
/// balancing its normal forces and `c` each face's pyramid capacity along
/// y. The load along the edge also tilts the cube on its soft contacts (the
/// centre moves along y by the tilt times its height), which slips the
/// other face: the cube creeps on its way to the limit, then slides at it.
#[test]
fn pre_sliding_breaks_away_along_the_edge_as_a_rigid_cube() {
    let mu = 0.5;
    let trace = run(&cube_corner(mu)).unwrap();
    let sides = RenderParameters::default().pyramid_sides;
    let c_floor = pyramid_capacity(Vector3::z(), Vector3::y(), sides);
    let c_wall = pyramid_capacity(Vector3::x(), Vector3::y(), sides);
    let peak = trace
        .segment(5)
        .chain(trace.segment(6))
        .max_by(|a, b| {
            a.coupling_force
                .y
                .abs()
                .total_cmp(&b.coupling_force.y.abs())
        })
        .unwrap();
    let f = peak.coupling_force;
    let predicted = mu * (c_floor * f.z.abs() + c_wall * f.x.abs());
    let settled = trace
        .segment(4)
        .last()
        .unwrap()
        .simulation
        .translation
        .vector;
    let slid = (trace.rows.last().unwrap().simulation.translation.vector - settled)
        .y
        .abs();
    println!(
        "edge push: peak F_y {:.4} N at F_x {:.4}, F_z {:.4} N; rigid prediction {predicted:.4} N \
         (pyramid capacities along y: floor {c_floor:.4}, wall {c_wall:.4}); ratio {:.4}; slid {:.2} mm",
        f.y.abs(),
        f.x.abs(),
        f.z.abs(),
        f.y.abs() / predicted,
        slid * 1e3
    );
    assert!((f.y.abs() / predicted - 1.0).abs() < 0.10);
    assert!(slid > 2e-3);
}
