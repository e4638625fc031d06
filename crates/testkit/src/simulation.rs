//! `hapticd simulate` recordings read back: two `#` header lines, a row of
//! column names, then one row of numbers per step; and least-squares fits
//! of a simulated quantity over time: its slope, and its acceleration.

use nalgebra::{Matrix3, Vector3};
use std::path::Path;

/// A simulation recording.
pub struct Recording {
    /// The two `#` lines.
    pub header: Vec<String>,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<f64>>,
}

impl Recording {
    /// Reads `path`; panics if it is missing or malformed.
    pub fn read(path: &Path) -> Recording {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut lines = text.lines();
        let header = lines.by_ref().take(2).map(str::to_owned).collect();
        let columns = lines
            .next()
            .expect("a row of column names")
            .split(',')
            .map(str::to_owned)
            .collect();
        let rows = lines
            .map(|l| {
                l.split(',')
                    .map(|v| v.parse().unwrap_or_else(|e| panic!("{v:?}: {e}")))
                    .collect()
            })
            .collect();
        Recording {
            header,
            columns,
            rows,
        }
    }
}

/// The least-squares slope of `(t, y)` samples (at least two distinct
/// `t`): a body's acceleration from its velocities.
pub fn slope(samples: &[(f64, f64)]) -> f64 {
    let n = samples.len() as f64;
    let (mt, my) = samples
        .iter()
        .fold((0.0, 0.0), |(a, b), &(t, y)| (a + t / n, b + y / n));
    let (sty, stt) = samples.iter().fold((0.0, 0.0), |(a, b), &(t, y)| {
        (a + (t - mt) * (y - my), b + (t - mt) * (t - mt))
    });
    sty / stt
}

/// The least-squares acceleration `2c` of `y = a + b t + c t²` through
/// `(t, y)` samples (at least three distinct `t`): a body's acceleration
/// from its positions, which a late time stamp disturbs far less than it
/// does a velocity differenced between two samples.
pub fn acceleration(samples: &[(f64, f64)]) -> f64 {
    let n = samples.len() as f64;
    let mean = samples.iter().map(|&(t, _)| t).sum::<f64>() / n;
    let mut normal = Matrix3::zeros();
    let mut right = Vector3::zeros();
    for &(t, y) in samples {
        let basis = Vector3::new(1.0, t - mean, (t - mean) * (t - mean));
        normal += basis * basis.transpose();
        right += basis * y;
    }
    let coefficients = normal
        .lu()
        .solve(&right)
        .expect("three distinct sample times");
    2.0 * coefficients[2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acceleration_of_a_parabola_through_uneven_times() {
        let samples: Vec<(f64, f64)> = [0.0, 0.013, 0.02, 0.041, 0.05, 0.066]
            .iter()
            .map(|&t| (t + 2.0, 0.4 + 0.3 * t - 1.47 * t * t))
            .collect();
        assert!((acceleration(&samples) + 2.94).abs() < 1e-9);
        assert!((slope(&[(1.0, 2.0), (3.0, 6.0)]) - 2.0).abs() < 1e-12);
    }
}
