//! Deformable surfaces against each other and themselves: cloths dropped on
//! each other, a cloth folded onto itself, a jelly in a cloth hammock,
//! momentum through a collision of two deformables, and the refitted trees'
//! candidate pairs against a brute-force search.

use haptic_deformable::body::solid_masses;
use haptic_deformable::collision::deformable::{grow, sample_box, triangle_box, SurfaceCollision};
use haptic_deformable::paradigms::{CorotationalFem, ForceIntegration, Paradigm};
use haptic_deformable::scenes::{cloth, fig3_rigid_world, ground, ClothSpec};
use haptic_deformable::topology::tet_box;
use haptic_deformable::{
    Anchor, AnchorTarget, CoupledWorld, DeformableBody, DeformableMaterial, SolverParameters,
};
use haptic_physics::{World, WorldParameters};
use nalgebra::{Isometry3, Point3, Translation3, UnitQuaternion, Vector3};
use std::collections::{BTreeSet, HashSet};

fn at(x: f64, y: f64, z: f64) -> Isometry3<f64> {
    Isometry3::from_parts(Translation3::new(x, y, z), UnitQuaternion::identity())
}

fn empty_world(gravity: Vector3<f64>) -> World {
    World::new(
        vec![],
        vec![],
        WorldParameters {
            gravity,
            ..WorldParameters::default()
        },
    )
    .unwrap()
}

/// A 21 × 21 cloth of `side` metres at `pose`.
fn small_cloth(
    name: &str,
    side: f64,
    pose: &Isometry3<f64>,
    self_collision: bool,
) -> DeformableBody {
    cloth_of(name, 21, side, pose, self_collision)
}

/// A `nodes × nodes` cloth of `side` metres at `pose`.
fn cloth_of(
    name: &str,
    nodes: usize,
    side: f64,
    pose: &Isometry3<f64>,
    self_collision: bool,
) -> DeformableBody {
    let defaults = ClothSpec::default();
    let spec = ClothSpec {
        nodes,
        side,
        material: DeformableMaterial {
            self_collision,
            ..defaults.material
        },
        ..defaults
    };
    cloth(name, &spec, pose).unwrap().0
}

/// A jelly cube of `side` metres, `cells`³ cells, co-rotational FEM.
fn jelly(
    name: &str,
    side: f64,
    cells: usize,
    density: f64,
    pose: &Isometry3<f64>,
) -> DeformableBody {
    let mesh = tet_box([cells; 3], [side; 3], pose);
    let masses = solid_masses(&mesh.positions, &mesh.tets, density);
    let fem = CorotationalFem::new(
        name,
        &mesh.positions,
        &mesh.tets,
        2e4,
        0.4,
        ForceIntegration::LinearlyImplicit {
            max_iterations: 400,
            tolerance: 1e-12,
        },
    )
    .unwrap();
    DeformableBody::new(
        name,
        mesh.positions.clone(),
        masses,
        mesh.surface.clone(),
        vec![],
        DeformableMaterial {
            thickness: 0.002,
            ..DeformableMaterial::default()
        },
        Paradigm::CorotationalFem(fem),
    )
    .unwrap()
}

/// How far the nodes of `nodes` are on the wrong side of `surface`, where
/// they must stay above it (`side` +1) or below it (−1) along its
/// upward-facing triangles: for every triangle of `surface` within 45° of
/// horizontal, and every node whose projection along the triangle's
/// normal falls inside it within `window` of its plane, the node's signed
/// distance from the plane against `side`. The deepest, 0 if none.
fn deepest_crossing(
    nodes: &DeformableBody,
    surface: &DeformableBody,
    side: f64,
    window: f64,
) -> f64 {
    let x = &surface.state.positions;
    let mut deepest = 0.0f64;
    for t in &surface.model.surface {
        let [a, b, c] = t.map(|i| x[i as usize]);
        let mut n = (b - a).cross(&(c - a));
        let area = n.norm();
        if area <= 0.0 {
            continue;
        }
        n /= area;
        if n.z < 0.0 {
            n = -n;
        }
        if n.z < 0.7 {
            continue;
        }
        for p in &nodes.state.positions {
            let d = n.dot(&(p - a));
            if d.abs() > window {
                continue;
            }
            // Barycentric coordinates of the projection.
            let q = p - d * n;
            let w_a = (b - q).cross(&(c - q)).dot(&n) / area;
            let w_b = (c - q).cross(&(a - q)).dot(&n) / area;
            let w_c = 1.0 - w_a - w_b;
            if w_a < 0.0 || w_b < 0.0 || w_c < 0.0 {
                continue;
            }
            deepest = deepest.max(-side * d);
        }
    }
    deepest
}

/// Edges of `body`'s surface crossing its own triangles that hold neither
/// end: where a surface has passed through itself.
fn self_crossings(body: &DeformableBody) -> usize {
    let x = &body.state.positions;
    let mut edges = BTreeSet::new();
    for t in &body.model.surface {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            edges.insert((a.min(b), a.max(b)));
        }
    }
    let mut crossings = 0;
    for t in &body.model.surface {
        let [a, b, c] = t.map(|i| x[i as usize]);
        let lo = a.inf(&b).inf(&c);
        let hi = a.sup(&b).sup(&c);
        let n = (b - a).cross(&(c - a));
        for &(i, j) in &edges {
            if t.contains(&i) || t.contains(&j) {
                continue;
            }
            let (p, q) = (x[i as usize], x[j as usize]);
            if (0..3).any(|k| p[k].max(q[k]) < lo[k] || p[k].min(q[k]) > hi[k]) {
                continue;
            }
            let (dp, dq) = (n.dot(&(p - a)), n.dot(&(q - a)));
            if dp * dq >= 0.0 {
                continue;
            }
            let y = p + (dp / (dp - dq)) * (q - p);
            let inside = [(a, b), (b, c), (c, a)]
                .iter()
                .all(|(u, v)| (v - u).cross(&(y - u)).dot(&n) >= 0.0);
            if inside {
                crossings += 1;
            }
        }
    }
    crossings
}

/// Two cloths dropped one above the other onto the Fig. 3 ball, the upper
/// turned 45°: no node of either is on the wrong side of the other's
/// surface by more than a half thickness, checked every step by projection
/// onto the other's triangles; without deformable contacts the upper cloth
/// falls through the lower.
#[test]
fn two_cloths_dropped_over_a_ball_do_not_interpenetrate() {
    let run = |contacts: bool| {
        let lower = small_cloth("lower", 0.8, &at(0.0, 0.0, 0.30), false);
        let upper_pose = Isometry3::from_parts(
            Translation3::new(0.02, -0.01, 0.36),
            UnitQuaternion::from_euler_angles(0.0, 0.0, std::f64::consts::FRAC_PI_4),
        );
        let upper = small_cloth("upper", 0.7, &upper_pose, false);
        let mut world = CoupledWorld::new(
            fig3_rigid_world(),
            vec![lower, upper],
            vec![],
            SolverParameters {
                elastic_passes: 1,
                deformable_contacts: contacts,
                ..SolverParameters::default()
            },
        )
        .unwrap();
        let thickness = world.bodies()[0].model.material.thickness;
        let (mut deepest, mut touching, mut surface_time) = (0.0f64, 0usize, 0.0);
        for _ in 0..60 {
            let report = world.step(0.02);
            assert_eq!(report.quarantined, 0);
            touching = touching.max(report.surface_contacts);
            surface_time += report.surface_detection_seconds;
            let [lower, upper] = [&world.bodies()[0], &world.bodies()[1]];
            deepest = deepest
                .max(deepest_crossing(upper, lower, 1.0, 0.05))
                .max(deepest_crossing(lower, upper, -1.0, 0.05));
        }
        let centre = world.bodies()[1].centre_of_mass();
        println!(
            "contacts {contacts}: deepest crossing {deepest:.4} m, peak surface contacts {touching}, upper centre z {:.3} m, surface detection {:.1} ms/step",
            centre.z,
            surface_time / 60.0 * 1e3
        );
        (deepest, touching, thickness, centre.z)
    };
    let (deepest, touching, thickness, upper_z) = run(true);
    assert!(touching > 100, "{touching}");
    // Draped on the lower cloth over the ball, not fallen off.
    assert!(upper_z > 0.0, "{upper_z}");
    assert!(deepest < thickness, "{deepest} m through");
    let (deepest, touching, _, _) = run(false);
    assert_eq!(touching, 0);
    assert!(deepest > 0.01, "without contacts: {deepest}");
}

/// A jelly striking a cloth in zero gravity: the two deformables' total
/// linear momentum is kept to 1e-6 of itself through the impact, and the
/// cloth is pushed.
#[test]
fn two_deformables_colliding_in_zero_gravity_keep_their_momentum() {
    let sheet_pose = Isometry3::from_parts(
        Translation3::new(0.0, 0.0, 0.0),
        UnitQuaternion::from_euler_angles(0.1, std::f64::consts::FRAC_PI_2, 0.2),
    );
    let spec = ClothSpec {
        nodes: 15,
        side: 0.2,
        areal_density: 2.0,
        ..ClothSpec::default()
    };
    let (sheet, _) = cloth("cloth", &spec, &sheet_pose).unwrap();
    let mut cube = jelly("jelly", 0.05, 3, 1000.0, &at(0.06, 0.01, -0.005));
    for v in &mut cube.state.velocities {
        *v = Vector3::new(-1.5, 0.1, 0.05);
    }
    let mut world = CoupledWorld::new(
        empty_world(Vector3::zeros()),
        vec![sheet, cube],
        vec![],
        SolverParameters::default(),
    )
    .unwrap();
    let before = world.momentum();
    let mut touched = 0;
    for _ in 0..40 {
        let report = world.step(0.005);
        assert_eq!(report.quarantined, 0);
        touched += report.surface_contacts;
    }
    let after = world.momentum();
    let cloth_momentum = world.bodies()[0].momentum();
    let drift = (after - before).norm() / before.norm();
    println!(
        "momentum before {before:?}, after {after:?}, relative drift {drift:e}, cloth {cloth_momentum:?}"
    );
    assert!(touched > 0, "the jelly never touched the cloth");
    assert!(
        cloth_momentum.norm() > 0.1 * before.norm(),
        "the cloth was not pushed: {cloth_momentum:?}"
    );
    assert!(drift < 1e-6, "{drift:e}");
}

/// A cloth lying on the ground with one half flung up and over folds onto
/// its other half: with self-collision no edge of it ever crosses one of
/// its own triangles and the flung half ends on top; without, it passes
/// through itself.
#[test]
fn a_cloth_folded_onto_itself_does_not_pass_through_itself() {
    let run = |self_collision: bool| {
        let mut sheet = small_cloth("towel", 0.6, &at(0.0, 0.0, 0.0045), self_collision);
        // The half x > 0 turns about the line x = 0 towards −x.
        for (x, v) in sheet
            .state
            .positions
            .iter()
            .zip(&mut sheet.state.velocities)
        {
            if x.x > 0.0 {
                *v = 12.0 * Vector3::new(0.0, 0.0, x.x);
            }
        }
        let rigid = World::new(
            vec![ground(0.0, 1.0, 0.8)],
            vec![],
            WorldParameters {
                gravity: Vector3::new(0.0, 0.0, -9.81),
                ..WorldParameters::default()
            },
        )
        .unwrap();
        let mut world = CoupledWorld::new(
            rigid,
            vec![sheet],
            vec![],
            SolverParameters {
                elastic_passes: 1,
                ..SolverParameters::default()
            },
        )
        .unwrap();
        let (mut crossings, mut touching) = (0, 0);
        for step in 0..100 {
            let report = world.step(0.01);
            assert_eq!(report.quarantined, 0);
            touching = touching.max(report.surface_contacts);
            if step % 3 == 2 {
                crossings = crossings.max(self_crossings(&world.bodies()[0]));
            }
        }
        let body = &world.bodies()[0];
        // The node that started at the flung edge's middle.
        let tip = body.state.positions[(10 * 21 + 20) as usize];
        println!(
            "self-collision {self_collision}: {crossings} crossings, peak surface contacts {touching}, tip at {tip:?}"
        );
        (crossings, touching, tip)
    };
    let (crossings, touching, tip) = run(true);
    assert!(touching > 50, "{touching}");
    assert!(tip.x < 0.0 && tip.z > 0.005, "not folded over: {tip:?}");
    assert_eq!(crossings, 0);
    let (crossings, _, _) = run(false);
    assert!(
        crossings > 0,
        "without self-collision the fold should cross"
    );
}

/// A jelly dropped into a cloth hammock anchored at its four corners is
/// held: it comes to rest above the anchors' level less the sag, with no
/// node of it through the cloth; without deformable contacts it falls
/// through.
#[test]
fn a_jelly_dropped_into_a_cloth_hammock_is_held() {
    let run = |contacts: bool| {
        let n = 11u32;
        let hammock = cloth_of("hammock", n as usize, 0.4, &at(0.0, 0.0, 0.0), false);
        // Its two ends: the nodes of the first and last columns.
        let ends: Vec<u32> = (0..n).flat_map(|row| [row * n, row * n + n - 1]).collect();
        let anchors = ends
            .iter()
            .map(|&node| Anchor {
                body: 0,
                node,
                target: AnchorTarget::World(hammock.state.positions[node as usize]),
            })
            .collect();
        let cube = jelly("jelly", 0.08, 3, 300.0, &at(0.0, 0.0, 0.06));
        let mut world = CoupledWorld::new(
            empty_world(Vector3::new(0.0, 0.0, -9.81)),
            vec![hammock, cube],
            anchors,
            SolverParameters {
                deformable_contacts: contacts,
                iterations: 20,
                substeps: 4,
                ..SolverParameters::default()
            },
        )
        .unwrap();
        let (mut deepest, mut lowest) = (0.0f64, f64::INFINITY);
        for _ in 0..100 {
            let report = world.step(0.02);
            assert_eq!(report.quarantined, 0);
            let [hammock, cube] = [&world.bodies()[0], &world.bodies()[1]];
            deepest = deepest.max(deepest_crossing(cube, hammock, 1.0, 0.05));
            lowest = lowest.min(cube.centre_of_mass().z);
        }
        let centre = world.bodies()[1].centre_of_mass();
        println!(
            "contacts {contacts}: jelly centre lowest {lowest:.3} m, at the end {centre:?}, deepest crossing {deepest:.4} m"
        );
        (lowest, centre, deepest)
    };
    let (lowest, centre, deepest) = run(true);
    // Caught within the hammock's sag, and still over it after 2 s.
    assert!(lowest > -0.15, "{lowest}");
    assert!(
        centre.x.abs() < 0.2 && centre.y.abs() < 0.2 && centre.z > -0.15,
        "{centre:?}"
    );
    assert!(deepest < 0.004, "{deepest}");
    let (lowest, _, _) = run(false);
    assert!(
        lowest < -0.5,
        "without contacts the jelly should fall through: {lowest}"
    );
}

/// A smooth pseudo-random displacement field.
fn wobble(p: &Point3<f64>, phase: f64) -> Vector3<f64> {
    Vector3::new(
        (7.0 * p.y + 3.0 * phase).sin(),
        (5.0 * p.x - 2.0 * phase).cos(),
        (6.0 * p.x + 4.0 * p.y + phase).sin(),
    )
}

/// After each of several deformations, the trees refitted to the swept
/// boxes give exactly the pairs a search over every sample and triangle
/// finds: between two bodies, and within a folded cloth less the triangles
/// within two rings of each sample.
#[test]
fn refitted_trees_give_the_brute_force_candidate_pairs() {
    let a = small_cloth("a", 0.5, &at(0.0, 0.0, 0.0), true);
    let b = small_cloth("b", 0.4, &at(0.05, 0.02, 0.03), false);
    let mut bodies = vec![a, b];
    let offsets = [0u32, bodies[0].state.positions.len() as u32];
    let mut collision = SurfaceCollision::new(&bodies);
    let (h, margin) = (0.01, 0.01);
    let mut total_pairs = 0;
    for round in 0..4 {
        let phase = round as f64;
        for body in &mut bodies {
            for (x, v) in body
                .state
                .positions
                .iter_mut()
                .zip(&mut body.state.velocities)
            {
                // Fold the sheet up over itself more each round.
                let bend = 0.3 * phase * x.x;
                *x += 0.02 * wobble(x, phase) + Vector3::new(0.0, 0.0, bend * bend);
                *v = 0.5 * wobble(x, phase + 0.5);
            }
        }
        let velocities: Vec<Vector3<f64>> = bodies
            .iter()
            .flat_map(|b| b.state.velocities.iter().copied())
            .collect();
        collision.refit(&bodies, &offsets, &velocities, h, margin);
        for (i, j) in [(0, 1), (1, 0), (0, 0)] {
            let mut found = Vec::new();
            collision.candidates(i, j, &bodies, &mut found);
            let found: HashSet<(u32, u32)> = found.into_iter().collect();
            let (si, tj) = (&bodies[i], &bodies[j]);
            let mut neighbours = vec![BTreeSet::new(); si.state.positions.len()];
            for t in &si.model.surface {
                for k in 0..3 {
                    for l in 0..3 {
                        neighbours[t[k] as usize].insert(t[l]);
                    }
                }
            }
            let mut expected = HashSet::new();
            for (s, sample) in si.model.samples.iter().enumerate() {
                let sb = sample_box(
                    sample,
                    &si.state.positions,
                    &si.state.velocities,
                    h,
                    grow(si, margin),
                );
                for (t, triangle) in tj.model.surface.iter().enumerate() {
                    if i == j
                        && (0..3).any(|k| {
                            sample.weights[k] != 0.0
                                && triangle
                                    .iter()
                                    .any(|v| neighbours[sample.nodes[k] as usize].contains(v))
                        })
                    {
                        continue;
                    }
                    let tb = triangle_box(
                        triangle,
                        &tj.state.positions,
                        &tj.state.velocities,
                        h,
                        grow(tj, margin),
                    );
                    if sb.overlaps(&tb) {
                        expected.insert((s as u32, t as u32));
                    }
                }
            }
            assert_eq!(found.len(), expected.len(), "round {round}, bodies {i}→{j}");
            assert_eq!(found, expected, "round {round}, bodies {i}→{j}");
            total_pairs += expected.len();
        }
    }
    println!("{total_pairs} pairs");
    assert!(total_pairs > 1000, "{total_pairs}");
}

/// Bodies whose boxes over the step meet no other body's are neither
/// refitted nor paired: two cloths 2 m apart make no contact, and brought
/// within 3 mm of each other they make exactly the contacts of a detection
/// that never saw them apart (nothing stale is left by the skipped refits).
#[test]
fn bodies_apart_are_skipped_and_met_alike_when_they_come_together() {
    let a = small_cloth("a", 0.5, &at(0.0, 0.0, 0.0), false);
    let b = small_cloth("b", 0.4, &at(2.0, 0.0, 0.0), false);
    let mut bodies = vec![a, b];
    let offsets = [0u32, bodies[0].state.positions.len() as u32];
    let n = bodies.iter().map(|b| b.state.positions.len()).sum();
    let velocities = vec![Vector3::new(0.0, 0.0, -0.1); n];
    let (h, margin) = (0.01, 0.002);
    let mut skipping = SurfaceCollision::new(&bodies);
    let mut apart = Vec::new();
    for _ in 0..3 {
        skipping.detect(&bodies, &offsets, &velocities, h, margin, &mut apart);
    }
    assert!(apart.is_empty(), "{} contacts 2 m apart", apart.len());
    for x in &mut bodies[1].state.positions {
        *x += Vector3::new(-2.0, 0.01, 0.003);
    }
    let mut together = Vec::new();
    skipping.detect(&bodies, &offsets, &velocities, h, margin, &mut together);
    let mut fresh = SurfaceCollision::new(&bodies);
    let mut expected = Vec::new();
    fresh.detect(&bodies, &offsets, &velocities, h, margin, &mut expected);
    assert!(expected.len() > 100, "{} contacts", expected.len());
    // The trees differ in shape (built apart and together): the same
    // contacts, perhaps in another order.
    for list in [&mut together, &mut expected] {
        list.sort_by_key(|c| (c.body, c.sample, c.other, c.face));
    }
    assert_eq!(together, expected);
}
