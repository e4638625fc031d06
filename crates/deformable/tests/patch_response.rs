//! The one-step compliance of a patch of nodes
//! ([`CoupledWorld::patch_response`]): `M⁻¹` where the paradigm answers
//! nothing, the closed form of a linearly implicit spring, and a jelly
//! stiffer resting on the ground than floating free.

use haptic_deformable::constraints::RowSource;
use haptic_deformable::paradigms::{ForceIntegration, MassSpring, Paradigm, Spring};
use haptic_deformable::scenes::jelly_on_the_ground;
use haptic_deformable::{
    Anchor, AnchorTarget, CoupledWorld, DeformableBody, DeformableMaterial, SolverParameters,
};
use haptic_physics::{World, WorldParameters};
use nalgebra::{Matrix3, Point3, SymmetricEigen, Vector3};

fn weightless(bodies: Vec<DeformableBody>, anchors: Vec<Anchor>) -> CoupledWorld {
    let rigid = World::new(
        vec![],
        vec![],
        WorldParameters {
            gravity: Vector3::zeros(),
            ..WorldParameters::default()
        },
    )
    .unwrap();
    CoupledWorld::new(rigid, bodies, anchors, SolverParameters::default()).unwrap()
}

/// Two nodes `length` apart along x, of `masses`, joined by one undamped
/// spring of `stiffness` at its rest length.
fn pair(masses: [f64; 2], stiffness: f64, integration: ForceIntegration) -> DeformableBody {
    let length = 0.02;
    DeformableBody::new(
        "pair",
        vec![Point3::origin(), Point3::new(length, 0.0, 0.0)],
        masses.to_vec(),
        vec![],
        vec![],
        DeformableMaterial::default(),
        Paradigm::MassSpring(MassSpring::new(
            vec![Spring {
                a: 0,
                b: 1,
                rest_length: length,
                stiffness,
                damping: 0.0,
            }],
            integration,
        )),
    )
    .unwrap()
}

fn assert_near(w: &Matrix3<f64>, expected: &Matrix3<f64>, relative: f64) {
    let error = (w - expected).norm() / expected.norm();
    assert!(error <= relative, "{w} against {expected}: {error:e}");
}

/// An explicit body answers an impulse by `M⁻¹ p` on the nodes it falls on:
/// `I/m` for one node, the mean of `1/(n mᵢ)` over a patch, nothing from a
/// pinned node.
#[test]
fn an_explicit_patch_answers_by_its_masses_alone() {
    let (m0, m1) = (0.01, 0.03);
    let mut world = weightless(
        vec![pair([m0, m1], 100.0, ForceIntegration::SymplecticEuler)],
        vec![],
    );
    let h = 0.001;
    let single = world.patch_response(0, &[0], h).unwrap();
    let both = world.patch_response(0, &[0, 1], h).unwrap();
    println!("explicit: W(node 0) = {single}, W(both) = {both}");
    assert_near(&single, &(Matrix3::identity() / m0), 1e-14);
    assert_near(
        &both,
        &(Matrix3::identity() * (1.0 / m0 + 1.0 / m1) / 4.0),
        1e-14,
    );
    let anchors = vec![Anchor {
        body: 0,
        node: 1,
        target: AnchorTarget::World(Point3::new(0.02, 0.0, 0.0)),
    }];
    let mut pinned = weightless(
        vec![pair([m0, m1], 100.0, ForceIntegration::SymplecticEuler)],
        anchors,
    );
    let held = pinned.patch_response(0, &[0, 1], h).unwrap();
    println!("explicit, node 1 pinned: W(both) = {held}");
    assert_near(&held, &(Matrix3::identity() / (4.0 * m0)), 1e-14);
}

#[test]
fn a_patch_that_is_not_there_has_no_response() {
    let mut world = weightless(
        vec![pair([0.01, 0.01], 100.0, ForceIntegration::default())],
        vec![],
    );
    assert!(world.patch_response(0, &[], 0.01).is_none());
    assert!(world.patch_response(1, &[0], 0.01).is_none());
    assert!(world.patch_response(0, &[0, 2], 0.01).is_none());
    assert!(world.patch_response(0, &[0], 0.0).is_none());
    assert!(world.patch_response(0, &[0], f64::NAN).is_none());
    assert!(world.patch_response(0, &[0], 0.01).is_some());
}

/// One linearly implicit spring at rest along x: along it the node meets
/// `[A⁻¹]₀₀` of `A = [[m + h²k, −h²k], [−h²k, m + h²k]]`; across it, which a
/// spring at its rest length does not resist, `1/m`.
#[test]
fn a_linearly_implicit_spring_answers_in_closed_form() {
    let (m, k, h) = (0.01, 100.0, 0.01);
    let mut world = weightless(
        vec![pair(
            [m, m],
            k,
            ForceIntegration::LinearlyImplicit {
                max_iterations: 100,
                tolerance: 1e-13,
            },
        )],
        vec![],
    );
    let w = world.patch_response(0, &[0], h).unwrap();
    let c = h * h * k;
    let along = (m + c) / (m * (m + 2.0 * c));
    println!(
        "spring: W = {w}; [A⁻¹]₀₀ = {along} 1/kg, 1/m = {} 1/kg",
        1.0 / m
    );
    assert_near(
        &w,
        &Matrix3::from_diagonal(&Vector3::new(along, 1.0 / m, 1.0 / m)),
        1e-6,
    );
    // Both nodes: the spring cannot resist their common motion.
    let both = world.patch_response(0, &[0, 1], h).unwrap();
    println!("spring: W(both) = {both}");
    assert_near(&both, &(Matrix3::identity() / (2.0 * m)), 1e-6);
}

/// The 3×3 nodes inside the top face of the 4×4×4-cell jelly (equal masses).
fn top_patch() -> Vec<u32> {
    (1..=3u32)
        .flat_map(|j| (1..=3u32).map(move |i| i + 5 * (j + 5 * 4)))
        .collect()
}

fn positive_definite(w: &Matrix3<f64>) -> bool {
    SymmetricEigen::new(*w).eigenvalues.iter().all(|&e| e > 0.0)
}

/// The jelly of jelly-drop.toml, settled on the ground at 20 ms steps, and
/// the same jelly floating free in zero gravity: at the centre of its top
/// face, an impulse moves the patch less when the ground holds the jelly's
/// bottom; both compliances are symmetric positive definite; floating free,
/// the patch moves no less than the whole jelly's mass would let it and no
/// more than its own would.
#[test]
fn a_resting_jelly_answers_stiffer_than_a_floating_one() {
    let (mut resting, _) = jelly_on_the_ground(1);
    let jelly = resting.bodies()[0].clone();
    let h = 0.02;
    for _ in 0..100 {
        resting.step(h);
    }
    let planes = resting
        .rows()
        .rows
        .iter()
        .filter(|r| {
            matches!(r.source, RowSource::Contact { axis: 0, .. })
                && r.impulse > 0.0
                && r.nodes.1 - r.nodes.0 == 1
        })
        .count();
    let mut floating = weightless(vec![jelly], vec![]);
    let patch = top_patch();
    let masses = &floating.bodies()[0].model.masses;
    let body_mass = floating.bodies()[0].mass();
    let patch_mass: f64 = patch.iter().map(|&i| masses[i as usize]).sum();
    let n = patch.len() as f64;
    let by_masses = patch.iter().map(|&i| 1.0 / masses[i as usize]).sum::<f64>() / (n * n);
    assert!((by_masses * patch_mass - 1.0).abs() < 1e-12);
    println!(
        "jelly {body_mass:.4} kg, patch of {} nodes {patch_mass:.5} kg: \
         1/m_body {:.3}, 1/m_patch {:.3} 1/kg; {planes} nodes rest on the ground",
        patch.len(),
        1.0 / body_mass,
        1.0 / patch_mass
    );
    assert!(planes > 0);
    for step in [0.001, h] {
        let on_ground = resting.patch_response(0, &patch, step).unwrap();
        let free = floating.patch_response(0, &patch, step).unwrap();
        for (name, w) in [("resting", &on_ground), ("floating", &free)] {
            println!(
                "h {step}: {name}: W = {w}   W_zz {:.4} 1/kg, stiffness (h² W_zz)⁻¹ {:.1} N/m, \
                 eigenvalues {:?}",
                w[(2, 2)],
                1.0 / (step * step * w[(2, 2)]),
                SymmetricEigen::new(*w).eigenvalues.as_slice()
            );
            assert!(positive_definite(w), "{name}: {w}");
            assert_eq!(*w, w.transpose());
        }
        assert!(
            on_ground[(2, 2)] < free[(2, 2)],
            "h {step}: {on_ground} against {free}"
        );
        assert!(free[(2, 2)] >= 1.0 / body_mass, "{free}");
        assert!(free[(2, 2)] <= 1.0 / patch_mass, "{free}");
    }
}

/// Asking for a patch's compliance leaves the world stepping exactly as it
/// would have.
#[test]
fn asking_changes_nothing() {
    let (mut asked, _) = jelly_on_the_ground(1);
    let (mut quiet, _) = jelly_on_the_ground(1);
    for world in [&mut asked, &mut quiet] {
        for _ in 0..30 {
            world.step(0.02);
        }
    }
    for h in [0.001, 0.02] {
        assert!(asked.patch_response(0, &top_patch(), h).is_some());
        assert!(asked.patch_response(0, &[0, 1, 2], h).is_some());
    }
    for world in [&mut asked, &mut quiet] {
        for _ in 0..20 {
            world.step(0.02);
        }
    }
    assert_eq!(asked.bodies()[0].state, quiet.bodies()[0].state);
}
