//! The nested point tree on real meshes: a 10,000-point shell of one mesh in
//! shallow contact with the field of another finds exactly the contacts of
//! brute force with at least ten times fewer field lookups.

use haptic_acceptance::mesh_path;
use haptic_mesh::{load_mesh, LoadOptions};
use haptic_pointshell::{
    contacts_brute_force, sample_point_shell, spacing_for_count, NestedPointTree,
    PointTreeTraversal, TraversalBudget,
};
use haptic_sdf::{DenseField, DenseOptions, DistanceField, NoProgress};
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};

#[test]
fn tree_finds_the_brute_force_contacts_with_ten_times_fewer_lookups() {
    let environment = load_mesh(&mesh_path("cgal-armadillo.off"), &LoadOptions::default())
        .unwrap()
        .mesh;
    let tool = load_mesh(&mesh_path("glmark2-bunny.obj"), &LoadOptions::default())
        .unwrap()
        .mesh;
    let field = DenseField::build(
        &environment,
        &DenseOptions {
            resolution: 128,
            ..DenseOptions::default()
        },
        &NoProgress,
    );
    // Scale the bunny to a fifth of the armadillo's size.
    let scale = 0.2 * environment.aabb().extents().max() / tool.aabb().extents().max();
    let mut tool = tool;
    let centre = tool.aabb().center();
    for v in &mut tool.vertices {
        *v = nalgebra::Point3::from((*v - centre) * scale);
    }
    let shell = sample_point_shell(&tool, spacing_for_count(&tool, 10_000), 1);
    let tree = NestedPointTree::new(&shell, 8);
    let mut traversal = PointTreeTraversal::new(&tree);
    let mut tree_contacts = Vec::with_capacity(shell.len());
    let mut brute_contacts = Vec::with_capacity(shell.len());

    // Bring the bunny along a ray from outside until it just touches.
    let target = environment.aabb().center();
    let mut tested = 0;
    let (mut tree_lookups, mut brute_lookups) = (0u64, 0u64);
    for (i, direction) in [
        Vector3::x(),
        Vector3::y(),
        -Vector3::x(),
        Vector3::z(),
        -Vector3::y(),
    ]
    .iter()
    .enumerate()
    {
        let rotation = UnitQuaternion::from_euler_angles(0.3 * i as f64, 0.7, 0.1 * i as f64);
        let mut distance = environment.aabb().extents().max();
        let step = 0.25 * field.grid().voxel_size;
        loop {
            let pose = Isometry3::from_parts(
                Translation3::from(target.coords + direction * distance),
                rotation,
            );
            let brute = contacts_brute_force(&shell, &field, &pose, &mut brute_contacts);
            if !brute_contacts.is_empty() {
                let stats = traversal.traverse(
                    &tree,
                    &shell,
                    &field,
                    &pose,
                    TraversalBudget::default(),
                    &mut tree_contacts,
                );
                let mut found: Vec<u32> = tree_contacts.iter().map(|c| c.point).collect();
                let mut expected: Vec<u32> = brute_contacts.iter().map(|c| c.point).collect();
                found.sort_unstable();
                expected.sort_unstable();
                assert_eq!(found, expected, "pose {i}: contact sets differ");
                tree_lookups += u64::from(stats.lookups);
                brute_lookups += u64::from(brute);
                tested += 1;
                break;
            }
            distance -= step;
            assert!(distance > 0.0, "pose {i} never touched");
        }
    }
    assert_eq!(tested, 5);
    let ratio = brute_lookups as f64 / tree_lookups as f64;
    println!("lookups: tree {tree_lookups}, brute force {brute_lookups}, ratio {ratio:.1}");
    assert!(ratio >= 10.0, "only {ratio:.1}x fewer lookups");
    assert!(field.lipschitz_bound() >= 1.0);
}
