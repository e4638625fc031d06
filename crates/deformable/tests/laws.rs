//! Physical laws the deformable world keeps: free fall, momentum across the
//! coupling, statics of anchors, co-rotation, and the solver's convergence.

use haptic_deformable::body::{sheet_masses, solid_masses};
use haptic_deformable::paradigms::{
    ContactPlane, CorotationalFem, ForceIntegration, MassSpring, Paradigm, ShapeMatching,
    StepInput, Xpbd,
};
use haptic_deformable::scenes::{cloth, fig3_rigid_world, ClothSpec};
use haptic_deformable::topology::{self, tet_box};
use haptic_deformable::{
    Anchor, AnchorTarget, CoupledWorld, DeformableBody, DeformableMaterial, SolverParameters,
};
use haptic_physics::{GeometryResolution, RigidBody, World, WorldParameters};
use nalgebra::{Isometry3, Point3, Translation3, UnitQuaternion, Vector3};

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

fn at(x: f64, y: f64, z: f64) -> Isometry3<f64> {
    Isometry3::from_parts(Translation3::new(x, y, z), UnitQuaternion::identity())
}

/// A jelly cube of each paradigm, 5 cm, 4×4×4 cells, 1000 kg/m³.
fn jellies(pose: &Isometry3<f64>) -> Vec<DeformableBody> {
    let mesh = tet_box([4, 4, 4], [0.05; 3], pose);
    let masses = solid_masses(&mesh.positions, &mesh.tets, 1000.0);
    let edges = topology::edges(
        &mesh
            .tets
            .iter()
            .flat_map(|t| {
                [
                    [t[0], t[1], t[2]],
                    [t[0], t[1], t[3]],
                    [t[0], t[2], t[3]],
                    [t[1], t[2], t[3]],
                ]
            })
            .collect::<Vec<_>>(),
        &mesh.positions,
    );
    let implicit = ForceIntegration::default();
    let node_mass = masses.iter().sum::<f64>() / masses.len() as f64;
    let paradigms = vec![
        Paradigm::MassSpring(MassSpring::from_young_modulus(
            &edges, 1e4, 0.1, node_mass, implicit,
        )),
        Paradigm::CorotationalFem(
            CorotationalFem::new("fem", &mesh.positions, &mesh.tets, 1e4, 0.45, implicit).unwrap(),
        ),
        Paradigm::Xpbd(
            Xpbd::new(
                "xpbd",
                &mesh.positions,
                edges.clone(),
                mesh.tets.clone(),
                1e4,
                0.45,
                10,
                0.0,
            )
            .unwrap(),
        ),
        Paradigm::ShapeMatching(
            ShapeMatching::new("shape", &mesh.positions, &masses, 0.5, 0.3, 0.1).unwrap(),
        ),
    ];
    paradigms
        .into_iter()
        .map(|p| {
            DeformableBody::new(
                p.name(),
                mesh.positions.clone(),
                masses.clone(),
                mesh.surface.clone(),
                vec![],
                DeformableMaterial::default(),
                p,
            )
            .unwrap()
        })
        .collect()
}

/// With nothing to touch, every paradigm's body falls at exactly `g`: its
/// centre of mass follows symplectic Euler's `z₀ − g h² n(n+1)/2` (to the
/// implicit solves' tolerance, a few nanometres), and all its nodes move
/// together.
#[test]
fn every_paradigm_falls_freely_at_g() {
    let g = Vector3::new(0.0, 0.0, -9.81);
    let mut world = CoupledWorld::new(
        empty_world(g),
        jellies(&at(0.0, 0.0, 0.0)),
        vec![],
        // Four bodies in one place, each falling alone.
        SolverParameters {
            deformable_contacts: false,
            ..SolverParameters::default()
        },
    )
    .unwrap();
    let start: Vec<Point3<f64>> = world.bodies().iter().map(|b| b.centre_of_mass()).collect();
    let h = 0.01;
    let steps = 50;
    for _ in 0..steps {
        world.step(h);
    }
    let t = h * steps as f64;
    for (body, z0) in world.bodies().iter().zip(&start) {
        // Symplectic Euler: z_n = z₀ − g h² n(n+1)/2.
        let expected = z0.z - 9.81 * h * h * (steps * (steps + 1)) as f64 / 2.0;
        let z = body.centre_of_mass().z;
        assert!(
            (z - expected).abs() < 1e-7,
            "{}: z {z}, expected {expected} after {t} s",
            body.model.name
        );
        let speed = body
            .state
            .velocities
            .iter()
            .map(|v| (v.z + 9.81 * t).abs())
            .fold(0.0, f64::max);
        assert!(
            speed < 1e-6,
            "{}: velocities spread by {speed} m/s",
            body.model.name
        );
    }
}

/// A cloth flung at a free rigid bunny (a real mesh, turned into general
/// position) in zero gravity: the total linear momentum of cloth and bunny
/// is kept through the impact to 1e-6 of itself.
#[test]
fn a_cloth_striking_a_free_rigid_body_keeps_the_total_momentum() {
    let bunny_mesh = haptic_acceptance::mesh_sized("pybullet-bunny.obj", 0.12);
    let pose = Isometry3::from_parts(
        Translation3::new(0.0, 0.0, 0.0),
        UnitQuaternion::from_euler_angles(0.3, -0.7, 1.1),
    );
    let mut bunny = RigidBody::from_mesh(
        "bunny",
        &bunny_mesh,
        500.0,
        &pose,
        &GeometryResolution::default(),
    )
    .unwrap();
    bunny.model.static_friction = 0.6;
    bunny.model.dynamic_friction = 0.6;
    let rigid = World::new(
        vec![bunny],
        vec![],
        WorldParameters {
            gravity: Vector3::zeros(),
            ..WorldParameters::default()
        },
    )
    .unwrap();
    let centre = rigid.bodies()[0].state.pose.translation.vector;
    let sheet_pose = Isometry3::from_parts(
        Translation3::new(centre.x + 0.15, centre.y + 0.01, centre.z - 0.02),
        UnitQuaternion::from_euler_angles(0.0, std::f64::consts::FRAC_PI_2, 0.2),
    );
    let spec = ClothSpec {
        nodes: 15,
        side: 0.14,
        areal_density: 2.0,
        ..ClothSpec::default()
    };
    let (mut body, _) = cloth("cloth", &spec, &sheet_pose).unwrap();
    for v in &mut body.state.velocities {
        *v = Vector3::new(-1.5, 0.1, 0.05);
    }
    let mut world =
        CoupledWorld::new(rigid, vec![body], vec![], SolverParameters::default()).unwrap();
    let before = world.momentum();
    let mut touched = 0;
    for _ in 0..40 {
        let report = world.step(0.005);
        touched += report.contacts;
    }
    let after = world.momentum();
    let bunny_speed = world.rigid().bodies()[0].state.velocity.norm();
    assert!(touched > 0, "the cloth never touched the bunny");
    assert!(
        bunny_speed > 0.01,
        "the bunny was not pushed: {bunny_speed} m/s"
    );
    let drift = (after - before).norm() / before.norm();
    println!("momentum before {before:?}, after {after:?}, relative drift {drift:e}, bunny {bunny_speed} m/s");
    assert!(drift < 1e-6, "{drift:e}");
}

/// A cloth hanging from a line of world anchors, which pin their nodes,
/// has the pins carry its weight: their impulse per step, averaged over the
/// last second, is `m g h` within 1 %, and no edge is stretched by more
/// than 1 %.
#[test]
fn the_anchors_of_a_hanging_cloth_carry_its_weight() {
    let pose = Isometry3::from_parts(
        Translation3::new(0.0, 0.0, 1.0),
        UnitQuaternion::from_euler_angles(std::f64::consts::FRAC_PI_2, 0.0, 0.0),
    );
    let spec = ClothSpec {
        nodes: 21,
        side: 0.4,
        ..ClothSpec::default()
    };
    let (body, sheet) = cloth("cloth", &spec, &pose).unwrap();
    let top: Vec<u32> = (0..sheet.positions.len() as u32)
        .filter(|&i| i as usize >= 20 * 21)
        .collect();
    let anchors: Vec<Anchor> = top
        .iter()
        .map(|&node| Anchor {
            body: 0,
            node,
            target: AnchorTarget::World(sheet.positions[node as usize]),
        })
        .collect();
    let mass = body.mass();
    let g = 9.81;
    let mut world = CoupledWorld::new(
        empty_world(Vector3::new(0.0, 0.0, -g)),
        vec![body],
        anchors,
        SolverParameters::default(),
    )
    .unwrap();
    let h = 0.01;
    let (mut carried, mut samples) = (0.0, 0);
    for step in 0..400 {
        let report = world.step(h);
        if step >= 300 {
            carried += report.pin_impulse.z / h;
            samples += 1;
        }
    }
    let carried = carried / samples as f64;
    let strain = world.bodies()[0].max_strain(&sheet.structural);
    println!(
        "weight {:.6} N, anchors carry {carried:.6} N, strain {strain:.4}",
        mass * g
    );
    assert!(
        (carried - mass * g).abs() < 0.01 * mass * g,
        "{carried} vs {}",
        mass * g
    );
}

/// Co-rotational FEM stores no energy in a rigid rotation: a jelly built
/// turned by 90° from its rest shape stays undeformed, and one spinning
/// freely neither deforms nor gains energy.
#[test]
fn corotational_fem_is_indifferent_to_rotation() {
    let mesh = tet_box([3, 3, 3], [0.06; 3], &Isometry3::identity());
    let masses = solid_masses(&mesh.positions, &mesh.tets, 1000.0);
    let fem = CorotationalFem::new(
        "fem",
        &mesh.positions,
        &mesh.tets,
        1e4,
        0.45,
        ForceIntegration::default(),
    )
    .unwrap();
    // 90° about an axis in general position, not one of the lattice's.
    let axis = nalgebra::Unit::new_normalize(Vector3::new(0.31, -0.52, 0.79));
    let turn = UnitQuaternion::from_axis_angle(&axis, std::f64::consts::FRAC_PI_2);
    let turned: Vec<Point3<f64>> = mesh.positions.iter().map(|p| turn * p).collect();
    let mut body = DeformableBody::new(
        "fem",
        mesh.positions.clone(),
        masses,
        mesh.surface.clone(),
        vec![],
        DeformableMaterial::default(),
        Paradigm::CorotationalFem(fem),
    )
    .unwrap();
    body.state.positions = turned.clone();
    let spin = Vector3::new(0.3, -2.0, 1.0);
    for (v, p) in body.state.velocities.iter_mut().zip(&turned) {
        *v = spin.cross(&p.coords);
    }
    let mut world = CoupledWorld::new(
        empty_world(Vector3::zeros()),
        vec![body],
        vec![],
        SolverParameters::default(),
    )
    .unwrap();
    let energy = world.kinetic_energy();
    let mut highest: f64 = 0.0;
    for _ in 0..200 {
        world.step(0.005);
        highest = highest.max(
            world.kinetic_energy()
                + world.bodies()[0]
                    .model
                    .paradigm
                    .potential_energy(&world.bodies()[0].state.positions),
        );
    }
    // Undeformed: every pairwise distance as at rest.
    let body = &world.bodies()[0];
    let mut worst: f64 = 0.0;
    for e in topology::edges(&body.model.surface, &mesh.positions) {
        let now = (body.state.positions[e.b as usize] - body.state.positions[e.a as usize]).norm();
        worst = worst.max((now - e.rest_length).abs() / e.rest_length);
    }
    println!("energy {energy:.6e} J, highest {highest:.6e} J, worst edge change {worst:e}");
    assert!(
        highest <= energy * (1.0 + 1e-9),
        "energy grew from {energy} to {highest}"
    );
    assert!(worst < 0.02, "{worst}");
}

/// The PGS converges the way the paper's Fig. 1 shows: the root mean square
/// impulse change falls over the first iterations of a cloth resting on the
/// ball.
#[test]
fn pgs_impulse_changes_fall_over_the_iterations() {
    let (body, _) = cloth(
        "cloth",
        &ClothSpec {
            nodes: 31,
            side: 0.6,
            ..ClothSpec::default()
        },
        &at(0.0, 0.0, 0.3),
    )
    .unwrap();
    let mut world = CoupledWorld::new(
        fig3_rigid_world(),
        vec![body],
        vec![],
        SolverParameters {
            warm_start: 0.0,
            ..SolverParameters::default()
        },
    )
    .unwrap();
    for _ in 0..30 {
        world.step(0.02);
    }
    let trace = world.convergence().to_vec();
    println!("RMS Δλ per iteration: {trace:?}");
    assert!(
        trace[1] < trace[0] && trace[4] < trace[1] && trace[9] < 0.5 * trace[0],
        "{trace:?}"
    );
}

#[test]
fn sheet_masses_add_up_to_the_areal_density_times_the_area() {
    let s = topology::sheet(7, 5, 0.6, 0.4, &Isometry3::identity());
    let total: f64 = sheet_masses(&s.positions, &s.triangles, 0.3).iter().sum();
    assert!((total - 0.3 * 0.24).abs() < 1e-12);
}

/// A node anchored to a point on a rigid body's surface stays on that
/// point: the body does not also push it out by the cloth's thickness.
#[test]
fn a_node_anchored_on_a_rigid_surface_stays_on_its_point() {
    let slab = haptic_deformable::scenes::ground(0.0, 0.3, 0.5);
    let rigid = World::new(vec![slab], vec![], WorldParameters::default()).unwrap();
    let spec = ClothSpec {
        nodes: 5,
        side: 0.1,
        ..ClothSpec::default()
    };
    let (body, sheet) = cloth("cloth", &spec, &at(0.0, 0.0, 0.0)).unwrap();
    let centre = 12u32;
    let point = rigid.bodies()[0]
        .state
        .pose
        .inverse_transform_point(&sheet.positions[centre as usize]);
    let anchors = vec![Anchor {
        body: 0,
        node: centre,
        target: AnchorTarget::Rigid { body: 0, point },
    }];
    let mut world =
        CoupledWorld::new(rigid, vec![body], anchors, SolverParameters::default()).unwrap();
    for _ in 0..50 {
        world.step(0.01);
    }
    let offset = (world.bodies()[0].state.positions[centre as usize]
        - sheet.positions[centre as usize])
        .norm();
    assert!(
        offset < 1e-4,
        "the anchored node moved {offset} m off its point"
    );
}

/// An impulse pushed on a rigid body from outside the coupled world (a
/// haptic tool's contacts) reaches it whole, spread over the substeps: a
/// free body in zero gravity gains `J / m` and `I⁻¹ L`, beside a cloth
/// that never touches it.
#[test]
fn an_external_impulse_on_a_rigid_body_reaches_it_whole() {
    use haptic_physics::{Motion, RigidBodyModel, RigidBodyState};
    use nalgebra::{Matrix3, Vector6};
    let (mass, inertia) = (0.5, 2e-3);
    let cube = RigidBody {
        model: RigidBodyModel {
            name: "cube".into(),
            motion: Motion::Dynamic,
            mass,
            body_inertia: Matrix3::identity() * inertia,
            geometry: None,
            static_friction: 0.5,
            dynamic_friction: 0.5,
        },
        state: RigidBodyState::at_rest(at(0.0, 0.0, 0.0)),
    };
    let rigid = World::new(
        vec![cube],
        vec![],
        WorldParameters {
            gravity: Vector3::zeros(),
            ..WorldParameters::default()
        },
    )
    .unwrap();
    let (sheet, _) = cloth("cloth", &ClothSpec::default(), &at(5.0, 0.0, 0.0)).unwrap();
    let parameters = SolverParameters {
        substeps: 4,
        ..SolverParameters::default()
    };
    let mut world = CoupledWorld::new(rigid, vec![sheet], vec![], parameters).unwrap();
    let push = Vector6::new(0.1, -0.05, 0.0, 0.0, 0.0, 4e-4);
    world.step_with_impulses(0.02, &[push]);
    let body = &world.rigid().bodies()[0];
    let velocity = body.state.velocity - Vector3::new(0.2, -0.1, 0.0);
    let spin = body.state.angular_velocity - Vector3::new(0.0, 0.0, 0.2);
    assert!(velocity.norm() < 1e-12, "{:?}", body.state.velocity);
    assert!(spin.norm() < 1e-12, "{:?}", body.state.angular_velocity);
    // None more: it keeps its velocity.
    world.step(0.02);
    let body = &world.rigid().bodies()[0];
    assert!((body.state.velocity - Vector3::new(0.2, -0.1, 0.0)).norm() < 1e-12);
}

/// The position-based paradigms' solves with contact planes (XPBD's and
/// shape matching's substeps): a cube falling at 0.3 m/s onto planes under
/// its bottom nodes, two of its nodes pushed sideways, ends no node moving
/// into its plane, every support pushing and together stopping the fall,
/// and the body's momentum changed by exactly gravity, the impulses and
/// the supports.
#[test]
fn position_based_solves_with_contact_planes_push_and_keep_momentum() {
    let g = Vector3::new(0.0, 0.0, -9.81);
    let h = 0.02;
    for mut body in jellies(&at(0.0, 0.0, 0.0)).into_iter().skip(2) {
        let n = body.state.positions.len();
        let start = vec![Vector3::new(0.01, 0.0, -0.3); n];
        let bottom = body
            .state
            .positions
            .iter()
            .map(|p| p.z)
            .fold(f64::INFINITY, f64::min);
        let planes: Vec<ContactPlane> = (0..n)
            .filter(|&i| body.state.positions[i].z < bottom + 1e-9)
            .map(|i| ContactPlane {
                node: i as u32,
                normal: Vector3::z(),
                normal_velocity: 0.0,
            })
            .collect();
        let mut impulses = vec![Vector3::zeros(); n];
        impulses[n - 1] = Vector3::new(1e-4, 0.0, 0.0);
        impulses[n / 2] = Vector3::new(0.0, -2e-4, 1e-4);
        let pinned = vec![None; n];
        let masses = body.model.masses.clone();
        let input = StepInput {
            h,
            gravity: g,
            masses: &masses,
            positions: &body.state.positions,
            velocities: &start,
            pinned: &pinned,
        };
        let mut free = vec![Vector3::zeros(); n];
        body.model.paradigm.free_velocities(&input, &mut free);
        let (mut velocities, mut supports) = (vec![Vector3::zeros(); n], vec![0.0; planes.len()]);
        assert!(body.model.paradigm.solve_with_contacts(
            &input,
            &impulses,
            &planes,
            &mut velocities,
            &mut supports
        ));
        let name = body.model.name.clone();
        assert!(supports.iter().all(|&f| f >= 0.0), "{name}: {supports:?}");
        let mass: f64 = masses.iter().sum();
        let carried: f64 = supports.iter().sum();
        // The fall's momentum and the step's weight, less what the body
        // keeps falling with.
        assert!(
            carried > 0.5 * mass * 0.3,
            "{name}: the planes carry {carried} N·s"
        );
        for plane in &planes {
            let v = velocities[plane.node as usize];
            assert!(
                v.z > -1e-12,
                "{name}: node {} moves into its plane at {v}",
                plane.node
            );
        }
        let gained: Vector3<f64> = (0..n).map(|i| masses[i] * (velocities[i] - start[i])).sum();
        let given: Vector3<f64> =
            mass * h * g + impulses.iter().sum::<Vector3<f64>>() + carried * Vector3::z();
        assert!(
            (gained - given).norm() < 1e-12 * given.norm(),
            "{name}: momentum gained {gained}, given {given}"
        );
    }
}
