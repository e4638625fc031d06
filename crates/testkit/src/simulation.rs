//! `hapticd simulate` recordings read back: two `#` header lines, a row of
//! column names, then one row of numbers per step; and the least-squares
//! slope of a simulated quantity over time.

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
