//! Dense and sparse fields against brute-force exact signed distance on
//! generated shapes, and their gradients and Hessians against central
//! differences.

use haptic_mesh::shapes::{box_mesh, torus};
use haptic_mesh::TriangleMesh;
use haptic_sdf::reference::{exact_signed_distance, uniform_points, AccuracyReport};
use haptic_sdf::{DenseField, DenseOptions, DistanceField, NoProgress, SparseField, SparseOptions};
use haptic_testkit::fields::SphereField;
use haptic_testkit::jacobian_check::{central_differences, compare, Tolerance};
use nalgebra::{DMatrix, DVector, Point3, Vector3};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

fn brute_force_signed_distance(mesh: &TriangleMesh, p: &Point3<f64>) -> f64 {
    exact_signed_distance(mesh, p).0
}

fn random_point_in(field: &impl DistanceField, rng: &mut Pcg64) -> Point3<f64> {
    let b = field.bounds();
    Point3::new(
        rng.gen_range(b.min.x..b.max.x),
        rng.gen_range(b.min.y..b.max.y),
        rng.gen_range(b.min.z..b.max.z),
    )
}

#[test]
fn dense_torus_is_within_half_a_voxel_with_right_signs() {
    let mesh = torus(0.05, 0.015, 64, 32);
    let field = DenseField::build(
        &mesh,
        &DenseOptions {
            resolution: 64,
            padding_fraction: 0.1,
        },
        &NoProgress,
    );
    let voxel = field.grid().voxel_size;
    let points = uniform_points(&field.bounds(), 2000, 11);
    let report = AccuracyReport::measure(&mesh, |p| field.value(p), &points, voxel, None);
    assert!(report.holds(), "{report}");
    assert!(field.lipschitz_bound() >= 1.0 && field.lipschitz_bound() < 1.8);
}

#[test]
fn sparse_torus_matches_within_the_band_and_is_conservative_beyond() {
    let mesh = torus(0.05, 0.015, 64, 32);
    let field = SparseField::build(
        &mesh,
        &SparseOptions {
            resolution: 256,
            padding_fraction: 0.1,
            band_half_width_voxels: 3.0,
        },
        &NoProgress,
    );
    let voxel = field.grid().voxel_size;
    let points = uniform_points(&field.bounds(), 2000, 11);
    let band = Some(field.band_half_width());
    let report = AccuracyReport::measure(&mesh, |p| field.value(p), &points, voxel, band);
    assert!(report.holds(), "{report}");
    // Near the surface the band answers; bricks are far fewer than the dense nodes.
    let dense_nodes: usize = field.grid().dims.iter().map(|&d| d as usize).product();
    assert!(
        field.storage_bytes() < dense_nodes,
        "{} bytes",
        field.storage_bytes()
    );
}

#[test]
fn sign_survives_a_hole_and_flipped_triangles() {
    // A box with one face removed and two other triangles flipped.
    let mut mesh = box_mesh(Vector3::new(0.04, 0.03, 0.02));
    mesh.triangles.remove(3);
    mesh.triangles[6].swap(1, 2);
    let field = DenseField::build(
        &mesh,
        &DenseOptions {
            resolution: 48,
            padding_fraction: 0.2,
        },
        &NoProgress,
    );
    assert!(field.value(&Point3::new(0.0, 0.0, 0.0)) < -0.015);
    assert!(field.value(&Point3::new(0.0, 0.0, 0.03)) > 0.005);
    assert!(field.value(&Point3::new(0.03, 0.0, 0.0)) < -0.005);
}

/// The gradient against differences of the value, and the Hessian against
/// differences of the gradient.
#[test]
fn gradients_match_central_differences_away_from_voxel_faces() {
    let mesh = torus(0.05, 0.015, 48, 24);
    let dense = DenseField::build(
        &mesh,
        &DenseOptions {
            resolution: 48,
            padding_fraction: 0.1,
        },
        &NoProgress,
    );
    let sparse = SparseField::build(
        &mesh,
        &SparseOptions {
            resolution: 128,
            padding_fraction: 0.1,
            band_half_width_voxels: 3.0,
        },
        &NoProgress,
    );
    check_gradients(&dense, dense.grid().voxel_size, dense.grid().origin);
    check_gradients(&sparse, sparse.grid().voxel_size, sparse.grid().origin);
}

fn check_gradients(field: &impl DistanceField, voxel: f64, origin: Point3<f64>) {
    let mut rng = Pcg64::seed_from_u64(5);
    let mut checked = 0;
    while checked < 500 {
        let p = random_point_in(field, &mut rng);
        // Stay at least 1 % of a voxel away from every cell face.
        let fraction = (p - origin) / voxel;
        if fraction.iter().any(|x| (x - x.round()).abs() < 0.01) {
            continue;
        }
        let (_, gradient) = field.value_gradient(&p);
        let fd = central_differences(&[1e-4 * voxel; 3], |d| {
            let at = p + Vector3::new(d[0], d[1], d[2]);
            Some(DVector::from_element(1, field.value(&at)))
        })
        .unwrap();
        let analytic = DMatrix::from_row_slice(1, 3, gradient.as_slice());
        let relative = Tolerance::Relative {
            bound: 1e-3,
            floor: 1e-3,
        };
        compare(&analytic, &fd, (1, 3), relative).assert_passes(&format!("{p}: {gradient}"));

        let (value, same_gradient, hessian) = field.value_gradient_hessian(&p);
        assert_eq!((value, same_gradient), field.value_gradient(&p));
        let fd = central_differences(&[1e-4 * voxel; 3], |d| {
            let at = p + Vector3::new(d[0], d[1], d[2]);
            Some(DVector::from_column_slice(
                field.value_gradient(&at).1.as_slice(),
            ))
        })
        .unwrap();
        let analytic = DMatrix::from_column_slice(3, 3, hessian.as_slice());
        let relative = Tolerance::Relative {
            bound: 1e-3,
            floor: 1e-3 / voxel,
        };
        compare(&analytic, &fd, (3, 3), relative).assert_passes(&format!("{p}: {hessian}"));
        checked += 1;
    }
}

#[test]
fn outside_the_grid_the_answer_is_a_lower_bound_continuous_at_the_boundary() {
    let mesh = torus(0.05, 0.015, 48, 24);
    let field = DenseField::build(
        &mesh,
        &DenseOptions {
            resolution: 48,
            padding_fraction: 0.1,
        },
        &NoProgress,
    );
    let edge = field.bounds().max.x;
    let inside = field.value(&Point3::new(edge - 1e-9, 0.0, 0.0));
    let outside = field.value(&Point3::new(edge + 1e-9, 0.0, 0.0));
    assert!((inside - outside).abs() < 1e-6);
    let mut rng = Pcg64::seed_from_u64(3);
    for _ in 0..200 {
        let p = Point3::new(
            rng.gen_range(-1.0..1.0),
            rng.gen_range(-1.0..1.0),
            rng.gen_range(-1.0..1.0),
        );
        let value = field.value(&p);
        assert!(value > 0.0);
        assert!(value <= brute_force_signed_distance(&mesh, &p) + 1e-9);
    }
}

/// Beyond the box a field names in `positive_beyond`, every value is at
/// least the distance to that box, for dense and sparse fields, up to
/// several box sizes away and right at its faces.
#[test]
fn values_beyond_the_positive_box_are_at_least_the_distance_to_it() {
    let mesh = torus(0.05, 0.015, 64, 32);
    let dense = DenseField::build(
        &mesh,
        &DenseOptions {
            resolution: 48,
            padding_fraction: 0.05,
        },
        &NoProgress,
    );
    let sparse = SparseField::build(
        &mesh,
        &SparseOptions {
            resolution: 128,
            padding_fraction: 0.05,
            band_half_width_voxels: 3.0,
        },
        &NoProgress,
    );
    let fields: [&dyn DistanceField; 2] = [&dense, &sparse];
    let mut rng = Pcg64::seed_from_u64(5);
    for field in fields {
        let b = field.positive_beyond().expect("grid fields have one");
        let extent = (b.max - b.min).norm();
        let mut outside = 0;
        for _ in 0..4000 {
            let direction = Vector3::new(
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
            );
            let p = b.clamp(&(b.center() + direction * extent))
                + direction * rng.gen_range(0.0..2.0f64).powi(3) * extent * 0.5;
            let gap = b.distance_squared(&p).sqrt();
            if gap > 0.0 {
                outside += 1;
                assert!(field.value(&p) >= gap, "{} < {gap} at {p}", field.value(&p));
            }
        }
        assert!(outside > 3000);
    }
}

/// A ball that gives only its value and gradient, so that its Hessian is
/// the trait's default: central differences of the gradient.
struct GradientOnly(SphereField);

impl DistanceField for GradientOnly {
    fn value(&self, p: &Point3<f64>) -> f64 {
        self.0.value(p)
    }

    fn value_gradient(&self, p: &Point3<f64>) -> (f64, Vector3<f64>) {
        self.0.value_gradient(p)
    }

    fn bounds(&self) -> haptic_mesh::Aabb {
        self.0.bounds()
    }

    fn lipschitz_bound(&self) -> f64 {
        self.0.lipschitz_bound()
    }
}

#[test]
fn the_default_hessian_matches_a_ball_s_curvature() {
    let ball = SphereField {
        center: Point3::new(0.01, -0.02, 0.005),
        radius: 0.03,
    };
    let plain = GradientOnly(ball);
    let mut rng = Pcg64::seed_from_u64(6);
    for _ in 0..200 {
        let p = random_point_in(&ball, &mut rng);
        if (p - ball.center).norm() < 0.005 {
            continue;
        }
        let (value, gradient, hessian) = plain.value_gradient_hessian(&p);
        let (exact_value, exact_gradient, exact) = ball.value_gradient_hessian(&p);
        assert_eq!((value, gradient), (exact_value, exact_gradient));
        assert!(
            (hessian - exact).norm() < 1e-6 * exact.norm(),
            "{p}: {hessian} against {exact}"
        );
    }
}
