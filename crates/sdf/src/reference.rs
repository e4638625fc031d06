//! Brute-force exact signed distance, and accuracy measurements of a field
//! against it: the ground truth the fields are tested and benchmarked with.

use crate::triangle_queries::{closest_point_on_triangle, solid_angle};
use haptic_mesh::TriangleMesh;
use nalgebra::{Point3, Vector3};
use rayon::prelude::*;

/// Exact signed distance at `p` and the nearest surface point, by visiting
/// every triangle; inside where the exact generalised winding number exceeds
/// one half.
pub fn exact_signed_distance(mesh: &TriangleMesh, p: &Point3<f64>) -> (f64, Point3<f64>) {
    let mut nearest = (f64::INFINITY, *p);
    let mut solid_angles = 0.0;
    for t in 0..mesh.triangles.len() {
        let [a, b, c] = mesh.corners(t);
        let q = closest_point_on_triangle(p, &a, &b, &c);
        let d = (p - q).norm_squared();
        if d < nearest.0 {
            nearest = (d, q);
        }
        solid_angles += solid_angle(p, &a, &b, &c);
    }
    let d = nearest.0.sqrt();
    let inside = solid_angles / (4.0 * std::f64::consts::PI) > 0.5;
    (if inside { -d } else { d }, nearest.1)
}

/// [`exact_signed_distance`] at every point, in parallel.
pub fn exact_signed_distances(mesh: &TriangleMesh, points: &[Point3<f64>]) -> Vec<f64> {
    points
        .par_iter()
        .map(|p| exact_signed_distance(mesh, p).0)
        .collect()
}

/// Whether the voxel-sized cube around `p` holds a line or point of the
/// medial axis: its corners' nearest surface points lie in directions more
/// than 60° apart. There the distance has a cone-shaped kink that any
/// trilinear interpolant of exact samples misses by up to √3/2 voxel (at a
/// cell centre whose corners all lie √3/2 voxel from the apex).
pub(crate) fn near_medial_axis(mesh: &TriangleMesh, p: &Point3<f64>, voxel: f64) -> bool {
    let directions: Vec<Vector3<f64>> = (0..8)
        .map(|corner| {
            let offset = Vector3::new(
                if corner & 1 == 0 { -0.5 } else { 0.5 },
                if corner & 2 == 0 { -0.5 } else { 0.5 },
                if corner & 4 == 0 { -0.5 } else { 0.5 },
            ) * voxel;
            let q = p + offset;
            (q - exact_signed_distance(mesh, &q).1).normalize()
        })
        .collect();
    directions
        .iter()
        .any(|a| directions.iter().any(|b| a.dot(b) < 0.5))
}

/// How a field's values compare with the exact signed distance.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AccuracyReport {
    pub samples: usize,
    /// Largest |value − exact| away from the medial axis (voxels).
    pub worst_error_voxels: f64,
    /// Mean |value − exact| over the compared samples (voxels).
    pub mean_error_voxels: f64,
    /// Samples whose error exceeds half a voxel, all next to the medial axis.
    pub medial_axis_samples: usize,
    /// Largest error at those samples (voxels).
    pub(crate) worst_medial_axis_error_voxels: f64,
    /// Samples with error over half a voxel that are not next to the medial axis.
    pub unexplained_errors: usize,
    /// Samples farther than one voxel from the surface with the wrong sign.
    pub sign_errors: usize,
    /// Samples beyond a sparse field's band whose value claims more clearance
    /// than there is (by over half a voxel).
    pub(crate) overestimates_beyond_band: usize,
}

impl AccuracyReport {
    /// Compares `field` with [`exact_signed_distance`] at `points`. With
    /// `band = Some(w)`, samples farther than `w − voxel` from the surface only
    /// have to be conservative (never more clearance than the truth).
    pub fn measure(
        mesh: &TriangleMesh,
        field: impl Fn(&Point3<f64>) -> f64 + Sync,
        points: &[Point3<f64>],
        voxel: f64,
        band: Option<f64>,
    ) -> Self {
        let exact = exact_signed_distances(mesh, points);
        let values: Vec<f64> = points.par_iter().map(&field).collect();
        Self::compare(mesh, points, &exact, &values, voxel, band)
    }

    /// [`AccuracyReport::measure`] with the exact distances at `points`
    /// already computed, so several fields can share them.
    pub fn compare(
        mesh: &TriangleMesh,
        points: &[Point3<f64>],
        exact: &[f64],
        values: &[f64],
        voxel: f64,
        band: Option<f64>,
    ) -> Self {
        let exact: Vec<(f64, f64)> = exact.iter().copied().zip(values.iter().copied()).collect();
        let mut report = AccuracyReport {
            samples: points.len(),
            ..Default::default()
        };
        let mut compared = 0usize;
        let mut total_error = 0.0;
        let mut large: Vec<(Point3<f64>, f64)> = Vec::new();
        for (p, &(exact, value)) in points.iter().zip(&exact) {
            if exact.abs() > voxel && value.signum() != exact.signum() {
                report.sign_errors += 1;
            }
            if let Some(w) = band {
                if exact.abs() > w - voxel {
                    if value.abs() > exact.abs() + 0.5 * voxel {
                        report.overestimates_beyond_band += 1;
                    }
                    continue;
                }
            }
            let error = (value - exact).abs() / voxel;
            compared += 1;
            total_error += error;
            if error > 0.5 {
                large.push((*p, error));
            } else {
                report.worst_error_voxels = report.worst_error_voxels.max(error);
            }
        }
        report.mean_error_voxels = total_error / compared.max(1) as f64;
        let on_axis: Vec<bool> = large
            .par_iter()
            .map(|(p, _)| near_medial_axis(mesh, p, voxel))
            .collect();
        for ((_, error), on_axis) in large.iter().zip(on_axis) {
            if on_axis {
                report.medial_axis_samples += 1;
                report.worst_medial_axis_error_voxels =
                    report.worst_medial_axis_error_voxels.max(*error);
            } else {
                report.unexplained_errors += 1;
                report.worst_error_voxels = report.worst_error_voxels.max(*error);
            }
        }
        report
    }

    /// Every promise holds: half a voxel off the medial axis, √3/2 voxel on
    /// it, right signs beyond one voxel, conservative beyond the band.
    pub fn holds(&self) -> bool {
        self.unexplained_errors == 0
            && self.worst_medial_axis_error_voxels <= 0.5 * 3f64.sqrt()
            && self.sign_errors == 0
            && self.overestimates_beyond_band == 0
    }
}

impl std::fmt::Display for AccuracyReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} samples: worst {:.3} voxel, mean {:.4}; {} near the medial axis (worst {:.3}); \
             {} unexplained; {} sign errors; {} overestimates beyond the band",
            self.samples,
            self.worst_error_voxels,
            self.mean_error_voxels,
            self.medial_axis_samples,
            self.worst_medial_axis_error_voxels,
            self.unexplained_errors,
            self.sign_errors,
            self.overestimates_beyond_band
        )
    }
}

/// `count` points uniformly distributed in `bounds`, from `seed`.
pub fn uniform_points(bounds: &haptic_mesh::Aabb, count: usize, seed: u64) -> Vec<Point3<f64>> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            Point3::from(Vector3::from_fn(|axis, _| {
                rng.gen_range(bounds.min[axis]..=bounds.max[axis])
            }))
        })
        .collect()
}
