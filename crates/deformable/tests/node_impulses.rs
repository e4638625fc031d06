//! External impulses on deformable nodes: applied once, exactly, by the
//! next step.

use haptic_deformable::body::solid_masses;
use haptic_deformable::paradigms::{CorotationalFem, ForceIntegration, MassSpring, Paradigm};
use haptic_deformable::topology::{self, tet_box};
use haptic_deformable::{
    Anchor, AnchorTarget, CoupledWorld, DeformableBody, DeformableMaterial, SolverParameters,
};
use haptic_physics::{World, WorldParameters};
use nalgebra::{Isometry3, Vector3};

/// A 5 cm jelly cube of 4×4×4 cells, 1000 kg/m³, at the origin: an explicit
/// mass–spring one (E = 1 kPa) or a linearly implicit co-rotational FEM one
/// (E = 10 kPa, ν = 0.45) solved to 1e-13.
fn jelly(implicit: bool) -> DeformableBody {
    let mesh = tet_box([4, 4, 4], [0.05; 3], &Isometry3::identity());
    let masses = solid_masses(&mesh.positions, &mesh.tets, 1000.0);
    let paradigm = if implicit {
        Paradigm::CorotationalFem(
            CorotationalFem::new(
                "fem",
                &mesh.positions,
                &mesh.tets,
                1e4,
                0.45,
                ForceIntegration::LinearlyImplicit {
                    max_iterations: 400,
                    tolerance: 1e-13,
                },
            )
            .unwrap(),
        )
    } else {
        let edges = topology::edges(&mesh.surface, &mesh.positions);
        let node_mass = masses.iter().sum::<f64>() / masses.len() as f64;
        Paradigm::MassSpring(MassSpring::from_young_modulus(
            &edges,
            1e3,
            0.1,
            node_mass,
            ForceIntegration::SymplecticEuler,
        ))
    };
    DeformableBody::new(
        paradigm.name(),
        mesh.positions.clone(),
        masses,
        mesh.surface.clone(),
        vec![],
        DeformableMaterial::default(),
        paradigm,
    )
    .unwrap()
}

fn weightless(body: DeformableBody, anchors: Vec<Anchor>, substeps: usize) -> CoupledWorld {
    let rigid = World::new(
        vec![],
        vec![],
        WorldParameters {
            gravity: Vector3::zeros(),
            ..WorldParameters::default()
        },
    )
    .unwrap();
    CoupledWorld::new(
        rigid,
        vec![body],
        anchors,
        SolverParameters {
            substeps,
            ..SolverParameters::default()
        },
    )
    .unwrap()
}

/// The impulses of one push: on a corner (twice), an edge's middle, the
/// centre and the top face's centre.
const PUSHES: [(u32, [f64; 3]); 5] = [
    (0, [1e-3, -2e-4, 5e-4]),
    (2, [4e-4, 3e-4, -2e-4]),
    (62, [-3e-4, 7e-4, 0.0]),
    (112, [0.0, 0.0, -8e-4]),
    (0, [2e-4, 1e-4, -1e-4]),
];

fn total_push() -> Vector3<f64> {
    PUSHES.iter().map(|(_, p)| Vector3::from(*p)).sum()
}

/// In zero gravity with nothing to touch, a body's momentum gains exactly
/// the impulses added before a step, in one substep or several, explicit or
/// implicit; the step after adds nothing.
#[test]
fn a_body_gains_exactly_the_impulses_added_and_only_once() {
    for implicit in [false, true] {
        for substeps in [1, 3] {
            let mut world = weightless(jelly(implicit), vec![], substeps);
            for _ in 0..3 {
                world.step(0.001);
            }
            let before = world.momentum();
            for (node, p) in PUSHES {
                world.add_node_impulse(0, node, Vector3::from(p));
            }
            world.step(0.001);
            let gained = world.momentum() - before;
            let error = (gained - total_push()).norm() / total_push().norm();
            let after = world.momentum();
            world.step(0.001);
            let again = (world.momentum() - after).norm() / total_push().norm();
            println!(
                "implicit {implicit}, {substeps} substeps: gained {gained:?} of {:?}, \
                 relative error {error:e}; the next step {again:e}",
                total_push()
            );
            assert!(error < 1e-12, "{error:e}");
            assert!(again < 1e-12, "{again:e}");
            assert_eq!(world.refused_node_impulses(), 0);
            // The pushed nodes moved apart from the rest.
            let v = &world.bodies()[0].state.velocities;
            assert!((v[112] - v[62]).norm() > 1e-3, "{:?} {:?}", v[112], v[62]);
        }
    }
}

/// An impulse on a body or node that does not exist, or that is not finite,
/// is ignored and counted: the world steps exactly as one not pushed.
#[test]
fn a_refused_impulse_changes_nothing_and_is_counted() {
    let mut pushed = weightless(jelly(true), vec![], 2);
    let mut quiet = weightless(jelly(true), vec![], 2);
    for world in [&mut pushed, &mut quiet] {
        world.add_node_impulse(0, 112, Vector3::new(0.0, 0.0, 1e-3));
        world.step(0.001);
    }
    pushed.add_node_impulse(1, 0, Vector3::new(1e-3, 0.0, 0.0));
    pushed.add_node_impulse(0, 125, Vector3::new(1e-3, 0.0, 0.0));
    pushed.add_node_impulse(0, 3, Vector3::new(f64::NAN, 0.0, 0.0));
    pushed.add_node_impulse(0, 3, Vector3::new(0.0, f64::INFINITY, 0.0));
    pushed.add_node_impulse(0, 4, Vector3::new(f64::MAX, 0.0, 0.0));
    pushed.add_node_impulse(0, 4, Vector3::new(f64::MAX, 0.0, 0.0));
    assert_eq!(pushed.refused_node_impulses(), 5);
    // The first of the two largest was taken: take it back.
    pushed.add_node_impulse(0, 4, Vector3::new(-f64::MAX, 0.0, 0.0));
    for world in [&mut pushed, &mut quiet] {
        for _ in 0..5 {
            world.step(0.001);
        }
    }
    println!(
        "refused {}, momentum {:?} against {:?}",
        pushed.refused_node_impulses(),
        pushed.momentum(),
        quiet.momentum()
    );
    assert_eq!(pushed.refused_node_impulses(), 5);
    assert_eq!(pushed.bodies()[0].state, quiet.bodies()[0].state);
}

/// A node pinned by a world anchor takes its impulse too, and its pin holds
/// it: the body stays at rest and the pin's impulse is the push's opposite.
#[test]
fn a_pinned_node_passes_its_impulse_to_its_pin() {
    let body = jelly(true);
    let corner = body.state.positions[0];
    let anchors = vec![Anchor {
        body: 0,
        node: 0,
        target: AnchorTarget::World(corner),
    }];
    let mut world = weightless(body, anchors, 2);
    let push = Vector3::new(2e-3, -1e-3, 5e-4);
    world.add_node_impulse(0, 0, push);
    let report = world.step(0.001);
    let fastest = world.bodies()[0]
        .state
        .velocities
        .iter()
        .map(|v| v.norm())
        .fold(0.0, f64::max);
    println!(
        "pin impulse {:?} against the push {push:?}, fastest node {fastest:e} m/s",
        report.pin_impulse
    );
    assert!((report.pin_impulse + push).norm() < 1e-12 * push.norm());
    assert!(fastest < 1e-12, "{fastest:e}");
}
