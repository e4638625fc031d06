//! Nested point tree traversal vs one lookup per point, for a 10,000-point
//! shell (8 levels, as in Zhao, Li & Barbič §5) in shallow contact with
//! analytic fields; and the cost of sampling such a shell.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use haptic_mesh::shapes::icosphere;
use haptic_pointshell::{
    contacts_brute_force, sample_point_shell, spacing_for_count, Contact, NestedPointTree,
    PointTreeTraversal, TraversalBudget,
};
use haptic_sdf::DistanceField;
use haptic_testkit::fields::{HalfSpaceField, SphereField};
use nalgebra::{Isometry3, Point3, Vector3};

const RADIUS: f64 = 0.05;

fn bench_field<F: DistanceField>(c: &mut Criterion, name: &str, field: &F, pose: &Isometry3<f64>) {
    let mesh = icosphere(RADIUS, 5);
    let shell = sample_point_shell(&mesh, spacing_for_count(&mesh, 10_000), 1);
    let tree = NestedPointTree::new(&shell, 8);
    let mut traversal = PointTreeTraversal::new(&tree);
    let mut contacts: Vec<Contact> = Vec::with_capacity(shell.len());

    let stats = traversal.traverse(
        &tree,
        &shell,
        field,
        pose,
        TraversalBudget::default(),
        &mut contacts,
    );
    let brute = contacts_brute_force(&shell, field, pose, &mut contacts);
    println!(
        "{name}: {} points, {} in contact, tree {} lookups, brute force {brute} ({:.1}× fewer)",
        shell.len(),
        contacts.len(),
        stats.lookups,
        f64::from(brute) / f64::from(stats.lookups)
    );

    let mut group = c.benchmark_group(name);
    group.bench_function("tree", |b| {
        b.iter(|| {
            traversal.traverse(
                &tree,
                &shell,
                black_box(field),
                black_box(pose),
                TraversalBudget::default(),
                &mut contacts,
            )
        })
    });
    group.bench_function("brute_force", |b| {
        b.iter(|| contacts_brute_force(&shell, black_box(field), black_box(pose), &mut contacts))
    });
    group.finish();
}

fn traversal(c: &mut Criterion) {
    // Penetrations of 3 mm into the plane and 4 mm into the ball: a few % of
    // the points in contact.
    let rotation = Vector3::new(0.3, -0.7, 0.2);
    let plane = HalfSpaceField {
        normal: Vector3::z(),
        offset: 0.0,
    };
    let above_plane = Isometry3::new(Vector3::new(0.01, -0.02, RADIUS - 0.003), rotation);
    bench_field(c, "plane_10k", &plane, &above_plane);

    let ball = SphereField {
        center: Point3::origin(),
        radius: 0.2,
    };
    let touching_ball = Isometry3::new(Vector3::new(0.0, 0.0, 0.2 + RADIUS - 0.004), rotation);
    bench_field(c, "ball_10k", &ball, &touching_ball);
}

fn sampling(c: &mut Criterion) {
    let mesh = icosphere(RADIUS, 6);
    let spacing = spacing_for_count(&mesh, 10_000);
    let mut group = c.benchmark_group("sampling");
    group.sample_size(10);
    group.bench_function("10k_points_from_81920_triangles", |b| {
        b.iter(|| sample_point_shell(black_box(&mesh), spacing, 1))
    });
    let shell = sample_point_shell(&mesh, spacing, 1);
    group.bench_function("tree_8_levels_over_10k_points", |b| {
        b.iter(|| NestedPointTree::new(black_box(&shell), 8))
    });
    group.finish();
}

criterion_group!(benches, traversal, sampling);
criterion_main!(benches);
