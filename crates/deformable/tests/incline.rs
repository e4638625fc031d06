//! A jelly on an incline: Coulomb's law through the deformable–rigid
//! friction rows, on slopes falling in two directions.

use haptic_deformable::body::solid_masses;
use haptic_deformable::constraints::RowSource;
use haptic_deformable::paradigms::{CorotationalFem, ForceIntegration, Paradigm};
use haptic_deformable::scenes::ground;
use haptic_deformable::topology::tet_box;
use haptic_deformable::{CoupledWorld, DeformableBody, DeformableMaterial, SolverParameters};
use haptic_physics::{World, WorldParameters};
use nalgebra::{Isometry3, Translation3, Unit, UnitQuaternion, Vector3};

/// A 5 cm co-rotational FEM jelly cube (E = 100 kPa, ν = 0.45, μ = 0.5
/// against a slab of μ = 0.5) resting on a slab tilted by `degrees` about
/// `axis` (horizontal), run for `duration` at 10 ms steps with the default
/// solver: the downhill
/// speed of its centre of mass at `duration/2` and at the end, and its
/// downhill travel over the second half. Checks at every step that the
/// body's momentum changes by its weight and its contact rows' impulses.
fn slide(degrees: f64, axis: Vector3<f64>, duration: f64) -> (f64, f64, f64) {
    let tilt = Isometry3::from_parts(
        Translation3::identity(),
        UnitQuaternion::from_axis_angle(&Unit::new_normalize(axis), degrees.to_radians()),
    );
    let mut slab = ground(0.0, 0.5, 0.5);
    slab.state.pose = tilt * slab.state.pose;
    let thickness = 0.001;
    let pose = tilt * Translation3::new(0.0, 0.0, 0.025 + thickness);
    let mesh = tet_box([3, 3, 3], [0.05; 3], &pose);
    let masses = solid_masses(&mesh.positions, &mesh.tets, 1000.0);
    let fem = CorotationalFem::new(
        "jelly",
        &mesh.positions,
        &mesh.tets,
        1e5,
        0.45,
        ForceIntegration::default(),
    )
    .unwrap();
    let body = DeformableBody::new(
        "jelly",
        mesh.positions.clone(),
        masses,
        mesh.surface.clone(),
        vec![],
        DeformableMaterial {
            friction: 0.5,
            thickness,
            ..DeformableMaterial::default()
        },
        Paradigm::CorotationalFem(fem),
    )
    .unwrap();
    let rigid = World::new(vec![slab], vec![], WorldParameters::default()).unwrap();
    let mut world =
        CoupledWorld::new(rigid, vec![body], vec![], SolverParameters::default()).unwrap();
    // Steepest descent on the tilted plane: gravity less its normal part.
    let normal = tilt * Vector3::z();
    let g = Vector3::new(0.0, 0.0, -1.0);
    let downhill = (g - g.dot(&normal) * normal).normalize();
    let h = 0.01;
    let steps = (duration / h).round() as usize;
    let (mut halfway, mut middle) = (0.0, world.bodies()[0].centre_of_mass());
    let weight = world.bodies()[0].mass() * 9.81 * h;
    for step in 1..=steps {
        let before = world.bodies()[0].momentum();
        world.step(h);
        // The body takes exactly the impulses its contact rows record:
        // its momentum changes by its weight and their sum.
        let rows = world.rows();
        let pushed: Vector3<f64> = rows
            .rows
            .iter()
            .filter(|row| matches!(row.source, RowSource::Contact { .. }))
            .flat_map(|row| {
                rows.node_terms[row.nodes.0 as usize..row.nodes.1 as usize]
                    .iter()
                    .map(move |t| row.impulse * t.jacobian)
            })
            .sum();
        let change = world.bodies()[0].momentum() - before - weight * g;
        assert!(
            (change - pushed).norm() < 1e-9 * weight,
            "step {step}: the body gained {change:?} beyond its weight, its contact rows {pushed:?}"
        );
        if step == steps / 2 {
            halfway = world.bodies()[0].momentum().dot(&downhill) / world.bodies()[0].mass();
            middle = world.bodies()[0].centre_of_mass();
        }
    }
    let body = &world.bodies()[0];
    let end = body.momentum().dot(&downhill) / body.mass();
    (
        halfway,
        end,
        (body.centre_of_mass() - middle).dot(&downhill),
    )
}

const AXES: [[f64; 3]; 2] = [[1.0, 0.0, 0.0], [0.6, -0.8, 0.0]];

/// Below `tan⁻¹ μ` (26.6°) the jelly stays put: after settling it creeps
/// less than a millimetre in half a second.
#[test]
fn a_jelly_sticks_on_an_incline_below_the_friction_angle() {
    for axis in AXES {
        let (_, speed, travel) = slide(20.0, Vector3::from(axis), 1.0);
        println!("20° about {axis:?}: travel over the last 0.5 s {travel:e} m, final speed {speed:e} m/s");
        assert!(
            travel.abs() < 1e-3 && speed.abs() < 2e-3,
            "travel {travel}, speed {speed}"
        );
    }
}

/// Above it the jelly slides at `g (sin θ − μ cos θ)` within 5 % (0.8 %
/// slow down both slopes), at the same default settings: the nodes resting
/// on the slab held on their contact planes in its implicit solve.
#[test]
fn a_jelly_slides_down_an_incline_above_the_friction_angle_at_the_coulomb_rate() {
    let degrees: f64 = 35.0;
    let duration = 0.6;
    for axis in AXES {
        let (halfway, end, _) = slide(degrees, Vector3::from(axis), duration);
        let theta = degrees.to_radians();
        let expected = 9.81 * (theta.sin() - 0.5 * theta.cos());
        let measured = (end - halfway) / (duration / 2.0);
        println!("35° about {axis:?}: a = {measured:.4} m/s², expected {expected:.4}");
        assert!(
            (measured - expected).abs() < 0.05 * expected,
            "a = {measured}, expected {expected}"
        );
    }
}
