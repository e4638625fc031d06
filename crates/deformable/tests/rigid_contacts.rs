//! A cloth's contacts with rigid bodies. Its face samples (its triangles'
//! centroids) meet a rigid body only where its surface bulges between the
//! face's nodes: on flat ground the nodes hold the cloth alone, while a
//! ball smaller than the mesh's spacing, under a face and clear of its
//! nodes, is met at the face. And a flat cloth lying on the ground rests
//! on its skin, its half thickness above it.

use haptic_deformable::collision::rigid::{bounds, detect};
use haptic_deformable::scenes::{cloth, fixed_ball, ground, ClothSpec};
use haptic_deformable::{CoupledWorld, DeformableBody, SolverParameters};
use haptic_physics::{RigidBody, World, WorldParameters};
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};

const MARGIN: f64 = 0.002;
const H: f64 = 0.01;

/// An 11 × 11 cloth of 0.5 m (5 cm between nodes), flat at height `z`.
fn flat_cloth(z: f64) -> DeformableBody {
    let spec = ClothSpec {
        nodes: 11,
        side: 0.5,
        ..ClothSpec::default()
    };
    let pose = Isometry3::from_parts(Translation3::new(0.0, 0.0, z), UnitQuaternion::identity());
    cloth("cloth", &spec, &pose).unwrap().0
}

/// (node samples, face samples) of `body` that make a contact with `rigid`.
fn contacts(body: &DeformableBody, rigid: &RigidBody) -> (usize, usize) {
    let nodes = body.state.positions.len();
    let (mut gaps, mut out) = (Vec::new(), Vec::new());
    detect(
        0,
        body,
        &bounds(
            &body.state.positions,
            MARGIN + body.model.material.thickness,
        ),
        0,
        rigid,
        MARGIN,
        H,
        &vec![Vector3::zeros(); nodes],
        &vec![None; nodes],
        &mut gaps,
        &mut out,
    );
    let at_nodes = out
        .iter()
        .filter(|c| {
            let w = body.model.samples[c.sample as usize].weights;
            w[1] == 0.0 && w[2] == 0.0
        })
        .count();
    (at_nodes, out.len() - at_nodes)
}

#[test]
fn on_flat_ground_only_the_nodes_make_contacts() {
    let body = flat_cloth(0.0);
    let thickness = body.model.material.thickness;
    // Every node 1 mm above the ground's skin.
    let floor = ground(-thickness - 0.001, 1.0, 0.5);
    let (nodes, faces) = contacts(&body, &floor);
    assert_eq!(nodes, 121, "every node rests on the ground");
    assert_eq!(faces, 0, "no face sample is deeper than its nodes");
}

#[test]
fn a_ball_between_the_nodes_is_met_at_the_face_above_it() {
    let body = flat_cloth(0.0);
    let thickness = body.model.material.thickness;
    // The face whose centroid is nearest the cloth's centre, and a 1 cm
    // ball whose skin touches it from below.
    let face = body
        .model
        .samples
        .iter()
        .filter(|s| s.weights[1] != 0.0)
        .min_by(|a, b| {
            let centre = |s: &&haptic_deformable::topology::SurfaceSample| {
                s.position(&body.state.positions).coords.xy().norm()
            };
            centre(a).total_cmp(&centre(b))
        })
        .unwrap();
    let centroid = face.position(&body.state.positions);
    let radius = 0.01;
    let mut ball = fixed_ball(radius, 3, 0.5);
    ball.state.pose.translation.vector =
        centroid.coords - Vector3::new(0.0, 0.0, radius + thickness + 0.001);
    let (nodes, faces) = contacts(&body, &ball);
    assert_eq!(nodes, 0, "the ball is clear of every node");
    assert_eq!(faces, 1, "the face over the ball meets it");

    // The same ball under a node is met there, and by no face around it:
    // the faces' centroids lie above the ball's flank, clear of its skin.
    let node = body.state.positions[60];
    ball.state.pose.translation.vector =
        node.coords - Vector3::new(0.0, 0.0, radius + thickness + 0.001);
    let (nodes, faces) = contacts(&body, &ball);
    assert_eq!((nodes, faces), (1, 0));
}

#[test]
fn a_flat_cloth_rests_on_the_ground_at_its_half_thickness() {
    let body = flat_cloth(0.0);
    let thickness = body.model.material.thickness;
    // Its nodes 1 mm above the skin: farther from the ground than the
    // contact margin, nearer than the thickness and the margin.
    let floor = ground(-thickness - 0.001, 1.0, 0.5);
    let rigid = World::new(
        vec![floor],
        vec![],
        WorldParameters {
            gravity: Vector3::new(0.0, 0.0, -9.81),
            ..WorldParameters::default()
        },
    )
    .unwrap();
    let mut world =
        CoupledWorld::new(rigid, vec![body], vec![], SolverParameters::default()).unwrap();
    let mut lowest = f64::INFINITY;
    for _ in 0..100 {
        world.step(H);
        let z = world.bodies()[0]
            .state
            .positions
            .iter()
            .map(|p| p.z)
            .fold(f64::INFINITY, f64::min);
        lowest = lowest.min(z);
    }
    // The skin is at z = -0.001: the cloth settles onto it, not into it.
    let sunk = -0.001 - lowest;
    println!(
        "lowest node {lowest:.5} m, {:.3} mm into the skin",
        1e3 * sunk
    );
    assert!(sunk < 0.1e-3, "sank {sunk} m into the skin");
}
