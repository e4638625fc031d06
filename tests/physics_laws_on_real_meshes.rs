//! The rigid world's laws on real meshes in general position, with the
//! contact in both roles at once (each body's shell in the other's field):
//! momentum through a frictional collision of two free bodies, and
//! Coulomb's law for a mug on an incline, sticking below `tan⁻¹ μ` and
//! sliding above it with `g (sin θ − μ cos θ)`, and for a mug sent sliding,
//! decelerating at `μ g` and then resting.

use haptic_acceptance::mesh_sized;
use haptic_mesh::shapes::box_mesh;
use haptic_testkit::simulation::slope;

use haptic_physics::{
    ContactParameters, GeometryResolution, Integrator, Motion, RigidBody, World, WorldParameters,
};
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};

const G: f64 = 9.81;

fn resolution() -> GeometryResolution {
    GeometryResolution {
        shell_points: 1500,
        tree_levels: 4,
        field_resolution: 48,
    }
}

fn body(name: &str, size: f64, pose: &Isometry3<f64>, mu: f64) -> RigidBody {
    let mut body = RigidBody::from_mesh(name, &mesh_sized(name, size), 800.0, pose, &resolution())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    body.model.static_friction = mu;
    body.model.dynamic_friction = mu;
    body
}

/// Total linear momentum and angular momentum about the origin.
fn momenta(world: &World) -> (Vector3<f64>, Vector3<f64>) {
    world
        .bodies()
        .iter()
        .fold((Vector3::zeros(), Vector3::zeros()), |(p, l), b| {
            let linear = b.state.velocity * b.model.mass;
            (
                p + linear,
                l + b.state.pose.translation.vector.cross(&linear) + b.angular_momentum(),
            )
        })
}

/// A tumbling bunny thrown at a spinning mug, no gravity, μ = 0.5: the
/// contact forces are equal and opposite and act at one point. Linear
/// momentum holds to round-off in every integrator; angular momentum about
/// the origin holds to round-off with symplectic Euler, which applies the
/// forces where they were evaluated, and to first order in `h` with the
/// semi-implicit step, which applies them at the step's end.
#[test]
fn a_frictional_collision_of_two_free_bodies_keeps_momentum() {
    for (integrator, h, angular_bound) in [
        (Integrator::SymplecticEuler, 2e-4, 1e-9),
        (Integrator::SemiImplicit, 1e-3, 1e-2),
    ] {
        let mut mug = body(
            "metaworld-mug.stl",
            0.08,
            &Isometry3::from_parts(
                Translation3::new(0.0, 0.0, 0.0),
                UnitQuaternion::from_euler_angles(0.3, -0.7, 1.1),
            ),
            0.5,
        );
        mug.state.angular_velocity = Vector3::new(0.0, 4.0, -1.0);
        let mut bunny = body(
            "pybullet-bunny.obj",
            0.05,
            &Isometry3::from_parts(
                Translation3::new(0.09, 0.013, -0.007),
                UnitQuaternion::from_euler_angles(-0.4, 0.9, 0.2),
            ),
            0.5,
        );
        let thrown = Vector3::new(-0.6, 0.05, 0.02);
        bunny.state.velocity = thrown;
        bunny.state.angular_velocity = Vector3::new(3.0, -2.0, 5.0);
        let parameters = WorldParameters {
            gravity: Vector3::zeros(),
            integrator,
            contact: ContactParameters {
                stiffness: 5e3,
                damping: 2.0,
                ..ContactParameters::default()
            },
            ..WorldParameters::default()
        };
        let mut world = World::new(vec![mug, bunny], Vec::new(), parameters).unwrap();
        let (p0, l0) = momenta(&world);
        let mut roles = [false; 2];
        for _ in 0..(0.3 / h) as usize {
            assert_eq!(world.step(h, &[]).quarantined, 0);
            for c in world.contacts() {
                roles[c.shell_body] = true;
            }
        }
        let (p1, l1) = momenta(&world);
        let dp = (p1 - p0).norm() / p0.norm();
        let dl = (l1 - l0).norm() / l0.norm();
        let turned = (world.bodies()[1].state.velocity - thrown).norm();
        eprintln!(
            "{integrator:?}: roles {roles:?}, the bunny's velocity changed by {turned:.3} m/s; \
             momentum changed by {dp:e}, angular momentum by {dl:e}"
        );
        assert_eq!(roles, [true, true], "both roles in contact");
        assert!(turned > 0.1, "the collision changed nothing");
        assert!(
            dp < 1e-9,
            "{integrator:?}: linear momentum changed by {dp:e}"
        );
        assert!(
            dl < angular_bound,
            "{integrator:?}: angular momentum changed by {dl:e}"
        );
    }
}

/// A static floor and the mug (its frame at its centre of mass) standing
/// on its base 0.2 mm above it, yawed, both with friction `mu`.
fn mug_on_floor(mu: f64) -> Vec<RigidBody> {
    let mut floor = RigidBody::from_mesh(
        "floor",
        &box_mesh(Vector3::new(0.5, 0.5, 0.05)),
        1000.0,
        &Isometry3::translation(0.0, 0.0, -0.05),
        &resolution(),
    )
    .unwrap();
    floor.model.motion = Motion::Static;
    floor.model.static_friction = mu;
    floor.model.dynamic_friction = mu;
    let mesh = mesh_sized("metaworld-mug.stl", 0.08);
    let bottom = mesh
        .vertices
        .iter()
        .map(|v| v.z)
        .fold(f64::INFINITY, f64::min);
    let mug = body(
        "metaworld-mug.stl",
        0.08,
        &Isometry3::from_parts(
            Translation3::new(0.0, 0.0, -bottom - 2e-4),
            UnitQuaternion::from_euler_angles(0.0, 0.0, 0.61),
        ),
        mu,
    );
    vec![floor, mug]
}

/// The mug-on-floor contact: soft enough for the mug's 1,500 points.
fn mug_contact() -> ContactParameters {
    ContactParameters {
        stiffness: 2e3,
        damping: 4.0,
        friction_stiffness: 200.0,
        ..ContactParameters::default()
    }
}

/// The mug of [`mug_on_floor`] sent sliding at 0.4 m/s along a direction
/// off its axes, at the physics thread's 5 ms steps: it decelerates at
/// μ g and, stopped, rests (an explicit sliding force held over the last
/// step would send it back and forth).
#[test]
fn a_sliding_mug_stops_at_the_friction_deceleration_and_rests() {
    let (mu, v0, h) = (0.4, 0.4, 5e-3);
    let parameters = WorldParameters {
        gravity: Vector3::new(0.0, 0.0, -G),
        contact: mug_contact(),
        ..WorldParameters::default()
    };
    let mut world = World::new(mug_on_floor(mu), Vec::new(), parameters).unwrap();
    for _ in 0..60 {
        world.step(h, &[]);
    }
    let direction = Vector3::new(0.3_f64.cos(), 0.3_f64.sin(), 0.0);
    let mut launched = world.bodies()[1].state;
    launched.velocity = direction * v0;
    world.set_state(1, launched);
    let mut samples = Vec::new();
    for k in 1..=100 {
        assert_eq!(world.step(h, &[]).quarantined, 0);
        let speed = world.bodies()[1].state.velocity.dot(&direction);
        if (0.1..0.35).contains(&speed) {
            samples.push((k as f64 * h, speed));
        }
    }
    let roles: Vec<usize> = world.contacts().iter().map(|c| c.shell_body).collect();
    assert!(
        roles.contains(&0) && roles.contains(&1),
        "both roles in contact"
    );
    let deceleration = -slope(&samples);
    let rest = world.bodies()[1].state.velocity.norm();
    eprintln!(
        "deceleration {deceleration:.4} m/s² (μ g = {:.4}) over {} steps; {rest:e} m/s 0.4 s after the stop",
        mu * G,
        samples.len()
    );
    assert!(
        (deceleration - mu * G).abs() < 0.02 * mu * G,
        "{deceleration}"
    );
    assert!(rest < 1e-4, "still moving at {rest:e} m/s");
}

/// The mug (its frame at its centre of mass) standing on its base on a
/// floor, yawed, with gravity tilted by θ: below tan⁻¹ 0.4 = 21.8° it
/// stays, above it slides at Coulomb's acceleration.
#[test]
fn a_mug_on_an_incline_obeys_coulomb() {
    let mu = 0.4;
    for (angle, slides) in [(15.0_f64, false), (30.0, true)] {
        let theta = angle.to_radians();
        let parameters = WorldParameters {
            gravity: Vector3::new(G * theta.sin(), 0.0, -G * theta.cos()),
            contact: mug_contact(),
            ..WorldParameters::default()
        };
        let mut world = World::new(mug_on_floor(mu), Vec::new(), parameters).unwrap();
        let h = 1e-3;
        let x: Vec<f64> = (0..600)
            .map(|_| {
                assert_eq!(world.step(h, &[]).quarantined, 0);
                world.bodies()[1].state.pose.translation.x
            })
            .collect();
        let roles: Vec<usize> = world.contacts().iter().map(|c| c.shell_body).collect();
        assert!(
            roles.contains(&0) && roles.contains(&1),
            "both roles in contact"
        );
        if slides {
            // a from the velocity's slope over the last 0.3 s.
            let v = |k: usize| (x[k] - x[k - 1]) / h;
            let acceleration = (v(599) - v(300)) / (299.0 * h);
            let expected = G * (theta.sin() - mu * theta.cos());
            eprintln!("{angle}°: a = {acceleration:.4} m/s², Coulomb {expected:.4}");
            assert!(
                (acceleration - expected).abs() < 0.02 * expected,
                "{angle}°: a = {acceleration} m/s², Coulomb {expected}"
            );
        } else {
            let creep = x[599] - x[299];
            eprintln!("{angle}°: crept {creep:e} m in the last 0.3 s");
            assert!(creep.abs() < 1e-5, "{angle}°: crept {creep} m");
        }
    }
}
