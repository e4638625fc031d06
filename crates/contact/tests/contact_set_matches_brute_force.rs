//! The tree traversals find exactly the shell points a point-by-point test
//! finds, for every (environment object, role) pair at once.

use haptic_contact::{total_wrench, EnvironmentGeometry, ForceDirection, Role, StiffnessScaling};
use haptic_pointshell::{contacts_brute_force, TraversalBudget};
use haptic_testkit::scenes::*;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::time::{Duration, Instant};

#[test]
fn tree_contacts_equal_brute_force_contacts_in_both_roles() {
    let mut rng = Pcg64::seed_from_u64(11);
    let moving = moving_torus();
    let (moving_shell, moving_field) = (moving.shell.unwrap(), moving.field.unwrap());
    let mut found = Vec::new();
    let mut per_role = [0usize; 2];
    for _ in 0..20 {
        let pose = random_pose(&mut rng);
        let depth = rng.gen_range(0.0005..0.004);
        let mut scene = mixed_scene(
            &pose,
            depth,
            StiffnessScaling::NONE,
            ForceDirection::default(),
            &mut rng,
        );
        scene.evaluate(&pose, TraversalBudget::default());
        let mut from_tree: Vec<_> = scene
            .contacts()
            .iter()
            .map(|c| (c.environment, c.point, c.distance < 0.0, c.weight))
            .collect();
        from_tree.sort_by_key(|&(e, p, _, _)| (e, p));

        let mut brute = Vec::new();
        for (index, object) in scene.environment().iter().enumerate() {
            match &object.geometry {
                EnvironmentGeometry::Field(field) => contacts_brute_force(
                    moving_shell.shell(),
                    field.as_ref(),
                    &object.pose.inv_mul(&pose),
                    &mut found,
                ),
                EnvironmentGeometry::Shell(shell) => contacts_brute_force(
                    shell.shell(),
                    moving_field.as_ref(),
                    &pose.inv_mul(&object.pose),
                    &mut found,
                ),
                EnvironmentGeometry::Nodes { .. } => {
                    unreachable!("the mixed scene has no node set")
                }
            };
            brute.extend(found.iter().map(|c| (index as u32, c.point, true, 1)));
        }
        brute.sort_by_key(|&(e, p, _, _)| (e, p));
        assert_eq!(from_tree, brute);
        for c in scene.contacts() {
            per_role[usize::from(c.role == Role::MovingField)] += 1;
        }
    }
    println!("role A {} contacts, role B {}", per_role[0], per_role[1]);
    assert!(per_role.iter().all(|&n| n > 500), "{per_role:?}");
}

/// After an early stop, a coarse contact stands for its leaf count: its
/// stiffness is `k_n · weight`, so the wrench stays close to the exact one.
#[test]
fn coarse_contacts_carry_the_stiffness_of_their_leaves() {
    let mut rng = Pcg64::seed_from_u64(12);
    for _ in 0..5 {
        let pose = random_pose(&mut rng);
        let mut scene = mixed_scene(
            &pose,
            0.004,
            StiffnessScaling::NONE,
            ForceDirection::default(),
            &mut rng,
        );
        let exact = scene.evaluate(&pose, TraversalBudget::default());
        let force = total_wrench(scene.contacts())
            .fixed_rows::<3>(0)
            .into_owned();
        let coarse = scene.evaluate(
            &pose,
            TraversalBudget {
                max_level: Some(5),
                ..Default::default()
            },
        );
        assert!(coarse.stopped_early && !exact.stopped_early);
        for c in scene.contacts() {
            assert_eq!(c.stiffness, 2000.0 * f64::from(c.weight));
        }
        let coarse_force = total_wrench(scene.contacts())
            .fixed_rows::<3>(0)
            .into_owned();
        let points = f64::from(coarse.represented_points) / f64::from(exact.represented_points);
        println!(
            "level 5 of 7: {:.2} of the points, force off by {:.1} %",
            points,
            100.0 * (coarse_force - force).norm() / force.norm()
        );
        assert!((points - 1.0).abs() < 0.25);
        assert!((coarse_force - force).norm() < 0.25 * force.norm());
    }
}

/// A deadline far off changes nothing; one already passed leaves the
/// traversals at their cheap coarse levels, with the points they did not
/// resolve counted, and a wrench still near the exact one.
#[test]
fn a_deadline_cuts_the_traversals_and_counts_what_they_left() {
    let mut rng = Pcg64::seed_from_u64(13);
    for _ in 0..5 {
        let pose = random_pose(&mut rng);
        let mut scene = mixed_scene(
            &pose,
            0.004,
            StiffnessScaling::NONE,
            ForceDirection::default(),
            &mut rng,
        );
        let exact = scene.evaluate(&pose, TraversalBudget::default());
        let exact_contacts = scene.contacts().to_vec();
        let far = Instant::now() + Duration::from_secs(3600);
        let relaxed = scene.evaluate_before(&pose, TraversalBudget::default(), far);
        assert_eq!(relaxed, exact);
        assert_eq!(scene.contacts(), exact_contacts.as_slice());
        assert_eq!(exact.unresolved_points, 0);

        let cut = scene.evaluate_before(&pose, TraversalBudget::default(), Instant::now());
        assert!(cut.stopped_early, "{cut:?}");
        assert!(cut.lookups < exact.lookups, "{cut:?} against {exact:?}");
        assert!(cut.unresolved_points > 0);
        assert!(
            cut.unresolved_points as usize + scene.contacts().len() >= exact_contacts.len(),
            "{cut:?}: every exact contact is resolved or counted"
        );
    }
}
