//! The one checker of analytic derivatives against central finite
//! differences, shared by every gradient and constraint-Jacobian test.
//!
//! A function is differentiated in an increment `δ ∈ Rⁿ` from the point of
//! expansion ([`central_differences`]), or in the increments `q = (x, θ)` of
//! one or more poses applied by [`haptic_core::displaced`]
//! ([`pose_central_differences`]), and [`compare`]d with its analytic
//! Jacobian block by block under a [`Tolerance`]; the comparison reports
//! the worst block.

use haptic_core::{displaced, Matrix6, Vector6};
use nalgebra::{DMatrix, DVector, Dim, Isometry3, Matrix, RawStorage};
use std::fmt;

/// Central differences `(f(h_k e_k) − f(−h_k e_k)) / 2h_k`, column `k` for
/// each step `h_k` of `steps`, of `f`, a function of the increment `δ` from
/// the point of expansion. `None` when `f` is `None` anywhere in the
/// stencil: a derivative that holds only on a fixed set (of contacts, of
/// voxels) returns `None` where that set changes.
pub fn central_differences(
    steps: &[f64],
    mut f: impl FnMut(&DVector<f64>) -> Option<DVector<f64>>,
) -> Option<DMatrix<f64>> {
    let mut columns = Vec::with_capacity(steps.len());
    for (k, &h) in steps.iter().enumerate() {
        let mut at = |sign: f64| {
            let mut increment = DVector::zeros(steps.len());
            increment[k] = sign * h;
            f(&increment)
        };
        let (plus, minus) = (at(1.0)?, at(-1.0)?);
        columns.push((plus - minus) / (2.0 * h));
    }
    Some(DMatrix::from_columns(&columns))
}

/// Central differences of `f` in the increments `q = (x, θ)` of each of
/// `poses` in turn (six columns a pose: `h_x` m along x, y, z, then `h_theta`
/// rad about them), each applied by [`displaced`]; `f` sees every pose,
/// one of them displaced. `None` as for [`central_differences`].
pub fn pose_central_differences(
    poses: &[Isometry3<f64>],
    h_x: f64,
    h_theta: f64,
    mut f: impl FnMut(&[Isometry3<f64>]) -> Option<DVector<f64>>,
) -> Option<DMatrix<f64>> {
    let steps: Vec<f64> = (0..6 * poses.len())
        .map(|k| if k % 6 < 3 { h_x } else { h_theta })
        .collect();
    let mut moved = poses.to_vec();
    central_differences(&steps, |increment| {
        moved.copy_from_slice(poses);
        for (j, pose) in moved.iter_mut().enumerate() {
            let q = Vector6::from_iterator(increment.rows(6 * j, 6).iter().copied());
            if q != Vector6::zeros() {
                *pose = displaced(pose, &q);
            }
        }
        f(&moved)
    })
}

/// [`pose_central_differences`] of a wrench (or any six-vector) of one pose:
/// its 6×6 Jacobian in `q = (x, θ)`.
pub fn pose_jacobian(
    pose: &Isometry3<f64>,
    h_x: f64,
    h_theta: f64,
    mut f: impl FnMut(&Isometry3<f64>) -> Option<Vector6>,
) -> Option<Matrix6> {
    let fd = pose_central_differences(std::slice::from_ref(pose), h_x, h_theta, |poses| {
        f(&poses[0]).map(|v| DVector::from_column_slice(v.as_slice()))
    })?;
    Some(Matrix6::from_fn(|i, j| fd[(i, j)]))
}

/// Any nalgebra matrix as a [`DMatrix`], for [`compare`].
pub fn dynamic<R: Dim, C: Dim, S: RawStorage<f64, R, C>>(m: &Matrix<f64, R, C, S>) -> DMatrix<f64> {
    DMatrix::from_fn(m.nrows(), m.ncols(), |i, j| m[(i, j)])
}

/// How far an analytic block `A_b` may lie from its central differences
/// `F_b` (Frobenius norms; a 1×1 block is one entry). The error of a block
/// is the left-hand side measured in units of the right-hand side's norm,
/// and it passes when that error is below `bound`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tolerance {
    /// `‖A_b − F_b‖ < bound`: for Jacobians whose entries share one scale.
    Absolute(f64),
    /// `‖A_b − F_b‖ / max(‖F_b‖, floor) < bound`.
    Relative { bound: f64, floor: f64 },
    /// `‖A_b − F_b‖ / (1 + ‖F_b‖) < bound`: relative where a block is
    /// large, absolute where it vanishes.
    Mixed(f64),
}

impl Tolerance {
    /// The error of a block whose difference has norm `difference` and whose
    /// central differences have norm `reference`.
    pub fn error(&self, difference: f64, reference: f64) -> f64 {
        match *self {
            Tolerance::Absolute(_) => difference,
            Tolerance::Relative { floor, .. } => difference / reference.max(floor),
            Tolerance::Mixed(_) => difference / (1.0 + reference),
        }
    }

    pub fn bound(&self) -> f64 {
        match *self {
            Tolerance::Absolute(bound) | Tolerance::Mixed(bound) => bound,
            Tolerance::Relative { bound, .. } => bound,
        }
    }

    fn measure(&self) -> &'static str {
        match self {
            Tolerance::Absolute(_) => "absolute",
            Tolerance::Relative { .. } => "relative",
            Tolerance::Mixed(_) => "relative to 1 + ‖F‖",
        }
    }
}

/// One block's error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlockError {
    /// The block's first row and column in the Jacobian.
    pub row: usize,
    pub column: usize,
    pub error: f64,
}

/// An analytic Jacobian against its central differences, block by block.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// Rows and columns of a block.
    pub block: (usize, usize),
    pub tolerance: Tolerance,
    /// Every block's error, row of blocks by row of blocks.
    pub errors: Vec<BlockError>,
}

impl Comparison {
    /// The block with the largest error (NaN counts as the largest).
    pub fn worst(&self) -> BlockError {
        *self
            .errors
            .iter()
            .max_by(|a, b| {
                (a.error.is_nan(), a.error)
                    .partial_cmp(&(b.error.is_nan(), b.error))
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
            .expect("a Jacobian has at least one block")
    }

    /// Every block's error is below the tolerance's bound.
    pub fn passes(&self) -> bool {
        self.errors.iter().all(|b| b.error < self.tolerance.bound())
    }

    /// Panics with `what` and the worst block unless every block passes.
    pub fn assert_passes(&self, what: &str) {
        assert!(self.passes(), "{what}: {self}");
    }
}

impl fmt::Display for Comparison {
    /// E.g. `worst 2.3e-9 relative per 6×6 block, at row 6, column 0 (bound 1e-4)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let worst = self.worst();
        write!(
            f,
            "worst {:.1e} {} per {}×{} block, at row {}, column {} (bound {:e})",
            worst.error,
            self.tolerance.measure(),
            self.block.0,
            self.block.1,
            worst.row,
            worst.column,
            self.tolerance.bound()
        )
    }
}

/// `analytic` against `finite_difference` in blocks of `block` (rows,
/// columns), which must tile both.
pub fn compare(
    analytic: &DMatrix<f64>,
    finite_difference: &DMatrix<f64>,
    block: (usize, usize),
    tolerance: Tolerance,
) -> Comparison {
    assert_eq!(
        analytic.shape(),
        finite_difference.shape(),
        "the analytic Jacobian and the central differences differ in shape"
    );
    let (rows, columns) = analytic.shape();
    assert!(
        rows % block.0 == 0 && columns % block.1 == 0 && rows * columns > 0,
        "{}×{} blocks do not tile a {rows}×{columns} Jacobian",
        block.0,
        block.1
    );
    let errors = (0..rows)
        .step_by(block.0)
        .flat_map(|row| {
            (0..columns)
                .step_by(block.1)
                .map(move |column| (row, column))
        })
        .map(|(row, column)| {
            let a = analytic.view((row, column), block);
            let fd = finite_difference.view((row, column), block);
            BlockError {
                row,
                column,
                error: tolerance.error((a - fd).norm(), fd.norm()),
            }
        })
        .collect();
    Comparison {
        block,
        tolerance,
        errors,
    }
}

/// The four 3×3 blocks of a contact stiffness, in [`compare`]'s order.
pub const STIFFNESS_BLOCKS: [&str; 4] = ["dF/dx", "dF/dθ", "dτ/dx", "dτ/dθ"];

/// The errors of a 6×6 contact stiffness's 3×3 blocks
/// ([`STIFFNESS_BLOCKS`]) against its central differences, each relative
/// to the block's central differences: `‖A_b − F_b‖ / ‖F_b‖`.
pub fn stiffness_errors(analytic: &Matrix6, finite_difference: &Matrix6) -> [f64; 4] {
    let relative = Tolerance::Relative {
        bound: f64::INFINITY,
        floor: 0.0,
    };
    let comparison = compare(
        &dynamic(analytic),
        &dynamic(finite_difference),
        (3, 3),
        relative,
    );
    std::array::from_fn(|b| comparison.errors[b].error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use haptic_core::skew;
    use nalgebra::{Point3, UnitQuaternion, Vector3};

    /// `f(x) = (x₀ x₁, sin x₂, x₀² + x₂)` and its Jacobian.
    fn f(x: &DVector<f64>) -> DVector<f64> {
        DVector::from_vec(vec![x[0] * x[1], x[2].sin(), x[0] * x[0] + x[2]])
    }

    fn jacobian(x: &DVector<f64>) -> DMatrix<f64> {
        DMatrix::from_row_slice(
            3,
            3,
            &[x[1], x[0], 0.0, 0.0, 0.0, x[2].cos(), 2.0 * x[0], 0.0, 1.0],
        )
    }

    #[test]
    fn a_right_jacobian_passes_and_a_wrong_entry_fails_where_it_is() {
        let x = DVector::from_vec(vec![0.3, -1.2, 0.7]);
        let fd = central_differences(&[1e-6; 3], |d| Some(f(&(&x + d)))).unwrap();
        let tolerance = Tolerance::Absolute(1e-8);
        let right = compare(&jacobian(&x), &fd, (1, 1), tolerance);
        assert!(right.passes(), "{right}");
        assert!(right.worst().error < 1e-9);

        let mut wrong = jacobian(&x);
        wrong[(1, 2)] += 1e-5;
        let comparison = compare(&wrong, &fd, (1, 1), tolerance);
        assert!(!comparison.passes());
        let worst = comparison.worst();
        assert_eq!((worst.row, worst.column), (1, 2));
        assert!((worst.error - 1e-5).abs() < 1e-8, "{comparison}");
        let report = comparison.to_string();
        assert!(report.contains("at row 1, column 2"), "{report}");
        let panicked = std::panic::catch_unwind(|| comparison.assert_passes("f"));
        assert!(panicked.is_err());
    }

    #[test]
    fn the_measures_divide_the_difference_as_documented() {
        let a = DMatrix::from_row_slice(2, 1, &[3.0, 4.0]);
        let fd = DMatrix::zeros(2, 1);
        // ‖A − F‖ = 5, ‖F‖ = 0.
        for (tolerance, error) in [
            (Tolerance::Absolute(1.0), 5.0),
            (
                Tolerance::Relative {
                    bound: 1.0,
                    floor: 0.5,
                },
                10.0,
            ),
            (Tolerance::Mixed(1.0), 5.0),
        ] {
            assert_eq!(compare(&a, &fd, (2, 1), tolerance).worst().error, error);
        }
        let relative = compare(
            &fd,
            &a,
            (2, 1),
            Tolerance::Relative {
                bound: 1.0,
                floor: 0.0,
            },
        );
        assert_eq!(relative.worst().error, 1.0);
        // A NaN is the worst and fails.
        let nan = DMatrix::from_row_slice(2, 1, &[f64::NAN, 0.0]);
        let comparison = compare(&nan, &a, (1, 1), Tolerance::Absolute(1.0));
        assert!(comparison.worst().error.is_nan() && !comparison.passes());
    }

    #[test]
    fn a_stencil_leaving_the_valid_set_gives_none() {
        let fd = central_differences(&[1e-3, 1e-3], |d| (d[1] >= 0.0).then(|| d.clone()));
        assert!(fd.is_none());
    }

    /// A body point `p` at two poses: `∂(x + R p)/∂x = I`,
    /// `∂/∂θ = −[R p]×` (the rotation increment multiplies on the left).
    #[test]
    fn pose_increments_follow_displaced() {
        let p = Vector3::new(0.1, -0.05, 0.2);
        let poses = [
            Isometry3::from_parts(
                Vector3::new(0.3, 0.1, -0.2).into(),
                UnitQuaternion::from_scaled_axis(Vector3::new(0.4, -0.9, 0.3)),
            ),
            Isometry3::translation(-0.1, 0.0, 0.5),
        ];
        let point = |pose: &Isometry3<f64>| (pose * Point3::from(p)).coords;
        let fd = pose_central_differences(&poses, 1e-6, 1e-6, |moved| {
            let (a, b) = (point(&moved[0]), point(&moved[1]));
            Some(DVector::from_iterator(3, (a - b).iter().copied()))
        })
        .unwrap();
        let mut analytic = DMatrix::zeros(3, 12);
        for (j, sign) in [(0, 1.0), (1, -1.0)] {
            let r_p = poses[j].rotation * p;
            analytic
                .view_mut((0, 6 * j), (3, 3))
                .copy_from(&(Matrix6::identity().fixed_view::<3, 3>(0, 0) * sign));
            analytic
                .view_mut((0, 6 * j + 3), (3, 3))
                .copy_from(&(-skew(&r_p) * sign));
        }
        let comparison = compare(&analytic, &fd, (3, 6), Tolerance::Absolute(1e-9));
        comparison.assert_passes("x + R p");
        // The wrong sign of the rotation term fails in that pose's block.
        analytic.view_mut((0, 3), (3, 3)).neg_mut();
        let flipped = compare(&analytic, &fd, (3, 6), Tolerance::Absolute(1e-9));
        assert!(!flipped.passes());
        assert_eq!((flipped.worst().row, flipped.worst().column), (0, 0));

        let single = pose_jacobian(&poses[0], 1e-6, 1e-6, |pose| {
            let x = point(pose);
            Some(Vector6::new(x.x, x.y, x.z, 0.0, 0.0, 0.0))
        })
        .unwrap();
        assert!((single.fixed_view::<3, 3>(0, 3) + skew(&(poses[0].rotation * p))).norm() < 1e-9);
    }
}
