//! The line fit of step cost against contacts.

/// Least-squares line `y = a + b x` and its R².
#[derive(Clone, Copy, Debug)]
pub struct LineFit {
    pub intercept: f64,
    pub slope: f64,
    pub r_squared: f64,
}

/// The least-squares line of step cost (µs) against contact count through
/// `(contacts, seconds)` samples.
pub fn cost_fit(samples: &[(usize, f64)]) -> LineFit {
    let points: Vec<(f64, f64)> = samples
        .iter()
        .map(|&(contacts, seconds)| (contacts as f64, seconds * 1e6))
        .collect();
    fit_line(&points)
}

pub fn fit_line(points: &[(f64, f64)]) -> LineFit {
    let n = points.len() as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    let syy: f64 = points.iter().map(|p| (p.1 - mean_y).powi(2)).sum();
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let r_squared = if sxx > 0.0 && syy > 0.0 {
        sxy * sxy / (sxx * syy)
    } else {
        0.0
    };
    LineFit {
        intercept: mean_y - slope * mean_x,
        slope,
        r_squared,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_fit_recovers_a_line_and_its_scatter() {
        let exact: Vec<(f64, f64)> = (0..10).map(|i| (i as f64, 3.0 + 0.5 * i as f64)).collect();
        let fit = fit_line(&exact);
        assert!((fit.intercept - 3.0).abs() < 1e-12 && (fit.slope - 0.5).abs() < 1e-12);
        assert!((fit.r_squared - 1.0).abs() < 1e-12);
        // mean x = mean y = 1.5, sxx = 5, sxy = 3, syy = 5.
        let fit = fit_line(&[(0.0, 1.0), (1.0, 0.0), (2.0, 3.0), (3.0, 2.0)]);
        assert!((fit.slope - 0.6).abs() < 1e-12 && (fit.intercept - 0.6).abs() < 1e-12);
        assert!((fit.r_squared - 9.0 / 25.0).abs() < 1e-12);
    }
}
