//! The rigid world against closed forms: a block on an incline sticks below
//! `tan⁻¹ μ` and slides above it with `a = g (sin θ − μ_d cos θ)`; a block
//! dropped on a floor comes to rest at its weight's penetration; a
//! non-finite body is quarantined, not propagated; a resting pile's step
//! allocates nothing.

use haptic_alloc_counter::{allocations_during, CountingAllocator};
use haptic_mesh::shapes::box_mesh;
use haptic_physics::substeps::MAX_SUBSTEPS;
use haptic_physics::{
    ContactParameters, GeometryResolution, Integrator, Motion, RigidBody, World, WorldParameters,
};
use haptic_testkit::simulation::slope;
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

const G: f64 = 9.81;
const HALF: [f64; 3] = [0.05, 0.04, 0.025];

fn resolution() -> GeometryResolution {
    GeometryResolution {
        shell_points: 1500,
        tree_levels: 4,
        field_resolution: 40,
    }
}

fn floor() -> RigidBody {
    let mut floor = RigidBody::from_mesh(
        "floor",
        &box_mesh(Vector3::new(0.5, 0.5, 0.05)),
        1000.0,
        &Isometry3::translation(0.0, 0.0, -0.05),
        &resolution(),
    )
    .unwrap();
    floor.model.motion = Motion::Static;
    floor
}

/// A 10 × 8 × 5 cm wooden block (0.4 kg) resting on the floor, turned by a
/// yaw so that nothing is aligned with the grid.
fn block(mu: f64) -> RigidBody {
    let pose = Isometry3::from_parts(
        Translation3::new(0.02, -0.03, HALF[2] - 1e-4),
        UnitQuaternion::from_euler_angles(0.0, 0.0, 0.37),
    );
    let mut block = RigidBody::from_mesh(
        "block",
        &box_mesh(Vector3::from(HALF)),
        1000.0,
        &pose,
        &resolution(),
    )
    .unwrap();
    block.model.static_friction = mu;
    block.model.dynamic_friction = mu;
    block
}

fn parameters(gravity: Vector3<f64>) -> WorldParameters {
    WorldParameters {
        gravity,
        integrator: Integrator::SemiImplicit,
        contact: ContactParameters {
            stiffness: 2e3,
            damping: 4.0,
            friction_stiffness: 200.0,
            ..ContactParameters::default()
        },
        ..WorldParameters::default()
    }
}

/// The floor has the block's μ, so the pair's (their geometric mean) is μ.
fn world_on_incline(angle_deg: f64, mu: f64) -> World {
    let theta = angle_deg.to_radians();
    // Tilting gravity about y is tilting the floor: downhill is +x.
    let gravity = Vector3::new(G * theta.sin(), 0.0, -G * theta.cos());
    let mut floor = floor();
    floor.model.static_friction = mu;
    floor.model.dynamic_friction = mu;
    World::new(vec![floor, block(mu)], Vec::new(), parameters(gravity)).unwrap()
}

/// Downhill position of the block after `seconds` at step `h`, sampled
/// every step.
fn slide(world: &mut World, seconds: f64, h: f64) -> Vec<f64> {
    let steps = (seconds / h).round() as usize;
    (0..steps)
        .map(|_| {
            let report = world.step(h, &[]);
            assert_eq!(report.quarantined, 0);
            world.bodies()[1].state.pose.translation.x
        })
        .collect()
}

#[test]
fn a_block_sticks_below_the_friction_angle() {
    let mu: f64 = 0.5;
    // tan⁻¹ 0.5 = 26.6°.
    for angle in [10.0, 20.0, 24.0] {
        let mut world = world_on_incline(angle, mu);
        let x = slide(&mut world, 1.0, 1e-3);
        let creep = x[x.len() - 1] - x[x.len() / 2];
        eprintln!("{angle}°: creep {creep:e} m over the last 0.5 s");
        assert!(
            creep.abs() < 1e-4,
            "{angle}°: the block crept {creep:e} m in the last 0.5 s"
        );
    }
}

/// Sticking springs enter the semi-implicit system, so at the physics
/// thread's 5 ms step springs 10× stiffer than an explicit step allows
/// (their sum over the ~375 points under the block far above `m/h²` =
/// 16,000 N/m) still hold the block without creep or chatter.
#[test]
fn stiff_friction_springs_hold_at_five_millisecond_steps() {
    let theta = 20.0_f64.to_radians();
    let gravity = Vector3::new(G * theta.sin(), 0.0, -G * theta.cos());
    let mut floor = floor();
    floor.model.static_friction = 0.5;
    floor.model.dynamic_friction = 0.5;
    let mut parameters = parameters(gravity);
    parameters.contact.friction_stiffness = 2000.0;
    let mut world = World::new(vec![floor, block(0.5)], Vec::new(), parameters).unwrap();
    let x = slide(&mut world, 1.0, 5e-3);
    let creep = x[x.len() - 1] - x[x.len() / 2];
    let speed = world.bodies()[1].state.velocity.norm();
    eprintln!("20° at 5 ms: creep {creep:e} m over 0.5 s, speed {speed:e} m/s");
    assert!(creep.abs() < 1e-5, "crept {creep:e} m");
    assert!(speed < 1e-4, "still moving at {speed:e} m/s");
}

#[test]
fn a_block_slides_above_the_friction_angle_with_coulombs_acceleration() {
    let mu: f64 = 0.5;
    let h = 1e-3;
    for angle in [30.0_f64, 40.0] {
        let mut world = world_on_incline(angle, mu);
        let x = slide(&mut world, 0.6, h);
        // a from a quadratic fit over the last 0.4 s (past the break-away).
        let samples: Vec<(f64, f64)> = x
            .iter()
            .enumerate()
            .skip(200)
            .map(|(k, &x)| ((k + 1) as f64 * h, x))
            .collect();
        let acceleration = 2.0 * quadratic_coefficient(&samples);
        let theta = angle.to_radians();
        let expected = G * (theta.sin() - mu * theta.cos());
        eprintln!("{angle}°: a = {acceleration:.4} m/s², Coulomb {expected:.4} m/s²");
        assert!(
            (acceleration - expected).abs() < 0.02 * expected,
            "{angle}°: a = {acceleration:.4} m/s², Coulomb {expected:.4}"
        );
    }
}

/// The `t²` coefficient of the least-squares quadratic through `samples`.
fn quadratic_coefficient(samples: &[(f64, f64)]) -> f64 {
    let rows: Vec<[f64; 3]> = samples.iter().map(|&(t, _)| [1.0, t, t * t]).collect();
    let mut ata = nalgebra::Matrix3::<f64>::zeros();
    let mut atb = Vector3::<f64>::zeros();
    for (row, &(_, y)) in rows.iter().zip(samples) {
        let r = Vector3::from(*row);
        ata += r * r.transpose();
        atb += r * y;
    }
    (ata.try_inverse().unwrap() * atb)[2]
}

#[test]
fn a_dropped_block_comes_to_rest_with_its_weight_carried() {
    let mut block = block(0.5);
    block.state.pose.translation.z += 0.02;
    let mut floor = floor();
    floor.model.static_friction = 0.5;
    floor.model.dynamic_friction = 0.5;
    let mut world = World::new(
        vec![floor, block],
        Vec::new(),
        parameters(Vector3::new(0.0, 0.0, -G)),
    )
    .unwrap();
    let mut energy = Vec::new();
    for _ in 0..1500 {
        let report = world.step(1e-3, &[]);
        energy.push(report.kinetic_energy);
    }
    let block = &world.bodies()[1];
    assert!(
        block.state.velocity.norm() < 1e-3,
        "v = {}",
        block.state.velocity.norm()
    );
    assert!(energy[energy.len() - 1] < 1e-6);
    // Penetration at rest: the weight over the summed normal stiffness of
    // the points in contact, well under a millimetre.
    let depth = HALF[2] - block.state.pose.translation.z;
    assert!(depth > 0.0 && depth < 1e-3, "depth {depth:e}");
}

#[test]
fn a_body_that_becomes_non_finite_is_quarantined() {
    let mut world = World::new(
        vec![floor(), block(0.5)],
        Vec::new(),
        parameters(Vector3::new(0.0, 0.0, -G)),
    )
    .unwrap();
    let start = world.bodies()[1].state.pose;
    let impulse = [
        nalgebra::Vector6::zeros(),
        nalgebra::Vector6::repeat(f64::NAN),
    ];
    let report = world.step(1e-3, &impulse);
    assert_eq!(report.quarantined, 1);
    assert_eq!(world.quarantined(), 1);
    let block = &world.bodies()[1];
    assert!(block.is_finite());
    assert_eq!(block.state.pose, start);
    // And the world goes on.
    let report = world.step(1e-3, &[]);
    assert_eq!(report.quarantined, 0);
}

/// A 4 cm cube dropped flat from 3 cm at the physics thread's 5 ms steps
/// lands in one step 3.4 mm deep; it must come to rest where it fell, not
/// spin or walk away, and never hold more energy than its fall gave it.
#[test]
fn a_cube_dropped_at_five_millisecond_steps_rests_where_it_fell() {
    for mu in [0.5, 0.0] {
        let mut table = floor();
        table.model.static_friction = mu;
        table.model.dynamic_friction = mu;
        let mut cube = RigidBody::from_mesh(
            "cube",
            &box_mesh(Vector3::repeat(0.02)),
            1000.0,
            &Isometry3::translation(0.0, 0.0, 0.05),
            &resolution(),
        )
        .unwrap();
        cube.model.static_friction = mu;
        cube.model.dynamic_friction = mu;
        let parameters = WorldParameters {
            gravity: Vector3::new(0.0, 0.0, -G),
            ..WorldParameters::default()
        };
        // The fall, to where the cube lands in a step (3.4 mm deep).
        let fall = cube.model.mass * G * 0.035;
        let mut world = World::new(vec![table, cube], Vec::new(), parameters).unwrap();
        let mut most: f64 = 0.0;
        for _ in 0..400 {
            let report = world.step(5e-3, &[]);
            assert_eq!(report.quarantined, 0);
            most = most.max(report.kinetic_energy);
        }
        let cube = &world.bodies()[1];
        let drift = cube.state.pose.translation.vector.xy().norm();
        let turn = cube.state.pose.rotation.angle();
        eprintln!(
            "μ = {mu}: drift {drift:e} m, turned {turn:e} rad, speed {:e} m/s, most KE {most:e} J of {fall:e}",
            cube.state.velocity.norm()
        );
        assert!(
            most <= fall * 1.01,
            "kinetic energy {most} J > the fall's {fall} J"
        );
        assert!(turn < 0.01, "turned {turn} rad");
        if mu > 0.0 {
            assert!(drift < 1e-3, "walked {drift} m");
            assert!(cube.state.velocity.norm() < 1e-6);
        }
    }
}

/// A block sent sliding across the floor at 0.5 m/s decelerates at μ g
/// and stops after `v/(μ g)`, at 1 ms and at the physics thread's 5 ms
/// (its distance, `v²/(2 μ g)` less the step's `v h/2`, is semi-implicit
/// Euler's), and then rests.
#[test]
fn a_sliding_block_stops_with_the_friction_deceleration() {
    let (mu, v0) = (0.4, 0.5);
    for h in [1e-3, 5e-3] {
        let mut floor = floor();
        floor.model.static_friction = mu;
        floor.model.dynamic_friction = mu;
        let mut world = World::new(
            vec![floor, block(mu)],
            Vec::new(),
            // Whole steps of h, never split, for the closed form below.
            WorldParameters {
                max_travel: 0.0,
                ..parameters(Vector3::new(0.0, 0.0, -G))
            },
        )
        .unwrap();
        // Settle, then launch along x.
        for _ in 0..(0.3 / h) as usize {
            world.step(h, &[]);
        }
        let mut launched = world.bodies()[1].state;
        launched.velocity = Vector3::new(v0, 0.0, 0.0);
        world.set_state(1, launched);
        let start = world.bodies()[1].state.pose.translation.x;
        let mut stopped = None;
        let mut samples = Vec::new();
        for k in 1..=(0.5 / h) as usize {
            world.step(h, &[]);
            let v = world.bodies()[1].state.velocity.x;
            if (0.1..0.45).contains(&v) {
                samples.push((k as f64 * h, v));
            }
            if stopped.is_none() && v <= 1e-3 {
                stopped = Some(k as f64 * h);
            }
        }
        let distance = world.bodies()[1].state.pose.translation.x - start;
        let deceleration = -slope(&samples);
        let time = stopped.expect("the block stops");
        let (expected_time, expected_distance) = (v0 / (mu * G), v0 * v0 / (2.0 * mu * G));
        eprintln!(
            "h = {h}: deceleration {deceleration:.4} m/s² (μ g = {:.4}), stopped in {time:.4} s \
             ({expected_time:.4}) after {distance:.5} m ({expected_distance:.5} less {:.5})",
            mu * G,
            v0 * h / 2.0
        );
        assert!((deceleration - mu * G).abs() < 0.01 * mu * G);
        // The last slip is taken up by the anchors' springs, in a step
        // more (at 5 ms, from 9.3 mm/s to 1.6 mm/s, then at rest).
        assert!((time - expected_time).abs() < 0.02 * expected_time + 2.0 * h);
        let discrete = expected_distance - v0 * h / 2.0;
        assert!((distance - discrete).abs() < 0.02 * expected_distance);
        let rest = world.bodies()[1].state.velocity.norm();
        eprintln!("h = {h}: {rest:e} m/s at the end");
        assert!(rest < 1e-4, "still moving at {rest:e} m/s");
    }
}

/// The detector's kept points near the surface give exactly the contacts
/// of a full tree traversal at every pose (same points, same order, same
/// values) while traversing far less: a block sinking into the floor by
/// 50 µm and turning 0.5 mrad a step, then jumping 5 mm a step.
#[test]
fn kept_points_give_exactly_the_full_traversals_contacts() {
    use haptic_physics::broad_phase::overlapping_pairs;
    use haptic_physics::narrow_phase::ContactDetector;
    let mut bodies = vec![block(0.5), floor()];
    let start = bodies[0].state.pose;
    let mut kept = ContactDetector::new(1e-3);
    let mut full = ContactDetector::new(0.0);
    let (mut pairs, mut a, mut b) = (Vec::new(), Vec::new(), Vec::new());
    // (traversals, roles) while drifting and while jumping.
    let mut phases = [(0, 0); 2];
    let mut contacts = 0;
    for k in 0..60 {
        let t = k as f64;
        let drift = if k < 40 { 5e-5 * t } else { 5e-3 * (t - 39.0) };
        bodies[0].state.pose = Isometry3::from_parts(
            Translation3::new(0.3 * drift, 0.0, -drift.min(1.5e-3)),
            UnitQuaternion::from_euler_angles(5e-4 * t, -3e-4 * t, 0.0),
        ) * start;
        overlapping_pairs(&bodies, 1e-4, &mut pairs);
        kept.detect(&bodies, &pairs, &mut a);
        full.detect(&bodies, &pairs, &mut b);
        assert_eq!(a, b, "step {k}");
        assert_eq!(full.stats().traversals, full.stats().roles);
        let phase = &mut phases[usize::from(k >= 40)];
        phase.0 += kept.stats().traversals;
        phase.1 += kept.stats().roles;
        contacts += a.len();
    }
    assert!(
        contacts > 10_000,
        "the block touched the floor ({contacts})"
    );
    let [(drifting, drift_roles), (jumping, jump_roles)] = phases;
    assert!(
        drifting * 5 < drift_roles,
        "{drifting} traversals for {drift_roles} roles while drifting"
    );
    assert_eq!(jumping, jump_roles, "every jump is traversed");
}

/// A block ten times heavier, at 1.5 m/s, strikes one at rest
/// with the physics thread's 5 ms steps and no gravity: the struck block
/// leaves faster than anything moved when the substeps were planned, so
/// substeps are undone and split, and (the 32-substep cap not reached) no
/// point of either moves more than 1.5 `max_travel` between two
/// detections; the collision keeps linear momentum.
#[test]
fn a_fast_collision_is_split_so_no_body_outruns_its_detections() {
    let mut a = block(0.3);
    let mut b = block(0.3);
    a.state.pose = Isometry3::from_parts(
        Translation3::new(-0.12, 0.0, 0.0),
        UnitQuaternion::from_euler_angles(0.2, 0.1, 0.0),
    );
    b.state.pose = Isometry3::from_parts(
        Translation3::new(0.12, 0.01, 0.0),
        UnitQuaternion::from_euler_angles(-0.1, 0.3, 0.5),
    );
    a.model.mass *= 10.0;
    a.model.body_inertia *= 10.0;
    a.state.velocity = Vector3::new(1.5, 0.0, 0.0);

    // Stiff contact: the struck block gains its speed within a substep.
    let mut stiff = parameters(Vector3::zeros());
    stiff.contact.stiffness = 1e5;
    let mut world = World::new(vec![a, b], Vec::new(), stiff).unwrap();
    let max_travel = world.parameters().max_travel;
    let momentum = |w: &World| -> Vector3<f64> {
        w.bodies()
            .iter()
            .map(|b| b.state.velocity * b.model.mass)
            .sum()
    };
    let start = momentum(&world);
    let (mut touched, mut split, mut undone) = (false, 0, 0);
    for _ in 0..40 {
        let report = world.step(0.005, &[]);
        touched |= report.contacts > 0;
        split = split.max(report.substeps);
        assert!(report.substeps < MAX_SUBSTEPS);
        undone += report.undone;
        assert!(
            report.max_near_motion <= 1.5 * max_travel,
            "moved {} m between detections",
            report.max_near_motion
        );
        assert_eq!(report.quarantined, 0);
    }
    assert!(touched, "the blocks met");
    assert!(split >= 10, "steps split into {split} substeps");
    assert!(undone > 0, "no substep was undone");
    assert!(
        world.bodies()[1].state.velocity.x > 1.5,
        "the struck block left at {} m/s",
        world.bodies()[1].state.velocity.x
    );
    let drift = (momentum(&world) - start).norm() / start.norm();
    assert!(drift < 1e-9, "momentum drifted {drift} of itself");
    println!("largest split {split} substeps, {undone} undone");
}

/// Twelve 4 cm cubes stacked 2 × 2 in three layers, each 0.1 mm into its
/// neighbours, come to rest on the floor as one island; once at rest, a
/// step allocates nothing: every buffer was sized by the steps before.
/// (An island of more than `DENSE_ISLAND_BODIES` is factored by faer's
/// sparse LU, whose numeric factorization allocates its supernodes'
/// contribution blocks each time.)
#[test]
fn a_resting_pile_steps_without_allocating() {
    let coarse = GeometryResolution {
        shell_points: 300,
        tree_levels: 3,
        field_resolution: 16,
    };
    let half = 0.02;
    let mut cube = RigidBody::from_mesh(
        "cube",
        &box_mesh(Vector3::repeat(half)),
        1000.0,
        &Isometry3::identity(),
        &coarse,
    )
    .unwrap();
    cube.model.static_friction = 0.5;
    cube.model.dynamic_friction = 0.5;
    let mut bodies = vec![floor()];
    bodies[0].model.static_friction = 0.5;
    bodies[0].model.dynamic_friction = 0.5;
    for k in 0..12 {
        let (column, row, layer) = (k % 2, (k / 2) % 2, k / 4);
        let mut body = cube.clone();
        let spacing = 2.0 * half - 1e-4;
        body.state.pose = Isometry3::translation(
            column as f64 * spacing,
            row as f64 * spacing,
            half + layer as f64 * spacing - 1e-4,
        );
        bodies.push(body);
    }
    let parameters = WorldParameters {
        gravity: Vector3::new(0.0, 0.0, -G),
        ..WorldParameters::default()
    };
    let mut world = World::new(bodies, Vec::new(), parameters).unwrap();
    let dt = 5e-3;
    for _ in 0..400 {
        world.step(dt, &[]);
    }
    let mut reports = Vec::with_capacity(100);
    let allocations = allocations_during(|| {
        for _ in 0..100 {
            reports.push(world.step(dt, &[]));
        }
    });
    let last = reports.last().unwrap();
    eprintln!(
        "resting pile: {} contacts, largest island {} bodies, kinetic energy {:.1e} J, \
         {allocations} allocations in 100 steps",
        last.contacts, last.largest_island, last.kinetic_energy
    );
    assert!(
        reports
            .iter()
            .all(|r| r.largest_island == 12 && r.quarantined == 0),
        "the pile is one island of 12"
    );
    assert!(
        last.kinetic_energy < 1e-6,
        "at rest: {:e} J",
        last.kinetic_energy
    );
    assert_eq!(allocations, 0);
}
