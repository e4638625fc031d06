//! The PGS solver's cost per iteration against its row count (§4, Algorithm
//! 1: one sweep visits every row once, so the paper claims it linear):
//! square cloths of several sizes dropped on the Fig. 3 ball at the same
//! settings, each step's solver time over its iterations against its rows,
//! and the least-squares line `time = a + b · rows` through each cloth's
//! medians over its draped steps.

use haptic_deformable::scenes::{cloth, fig3_rigid_world, ClothSpec};
use haptic_deformable::{CoupledWorld, SolverParameters};
use nalgebra::{Isometry3, Translation3, UnitQuaternion};

/// One cloth's medians over the second half of its run.
pub struct SizePoint {
    pub rows: f64,
    /// Seconds per PGS iteration.
    pub seconds_per_iteration: f64,
}

/// The fitted line `seconds = intercept + slope · rows` and its R².
pub struct Fit {
    pub intercept: f64,
    pub slope: f64,
    pub r2: f64,
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        0.5 * (values[n / 2 - 1] + values[n / 2])
    }
}

/// Least squares through `(x, y)`; `None` with fewer than two distinct `x`.
pub fn fit(points: &[(f64, f64)]) -> Option<Fit> {
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let syy: f64 = points.iter().map(|p| (p.1 - my).powi(2)).sum();
    if points.len() < 2 || sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let residual: f64 = points
        .iter()
        .map(|p| (p.1 - intercept - slope * p.0).powi(2))
        .sum();
    let r2 = if syy > 0.0 { 1.0 - residual / syy } else { 1.0 };
    Some(Fit {
        intercept,
        slope,
        r2,
    })
}

/// Drops a `nodes_per_side`² cloth (1 m, 0.2 kg, Fig. 3's material) from
/// 0.35 m above the ball's centre for `steps` steps of `h`, and returns its
/// medians over the second half of the steps.
pub fn measure(nodes_per_side: usize, h: f64, steps: usize) -> Result<SizePoint, String> {
    let pose = Isometry3::from_parts(
        Translation3::new(0.0, 0.0, 0.35),
        UnitQuaternion::identity(),
    );
    let spec = ClothSpec {
        nodes: nodes_per_side,
        ..ClothSpec::default()
    };
    let (body, _) = cloth("cloth", &spec, &pose).map_err(|e| e.to_string())?;
    // One pass: the solver time is then the PGS sweeps alone.
    let parameters = SolverParameters {
        elastic_passes: 1,
        ..SolverParameters::default()
    };
    let mut world = CoupledWorld::new(fig3_rigid_world(), vec![body], vec![], parameters)
        .map_err(|e| e.to_string())?;
    let (mut rows, mut times) = (Vec::new(), Vec::new());
    for step in 0..steps {
        let report = world.step(h);
        if report.quarantined > 0 {
            return Err(format!(
                "{nodes_per_side} × {nodes_per_side} cloth quarantined at step {step}"
            ));
        }
        let iterations = world.convergence().len();
        if step >= steps / 2 && iterations > 0 {
            rows.push(report.rows as f64);
            times.push(report.solver_seconds / iterations as f64);
        }
    }
    if rows.is_empty() {
        return Err(format!(
            "{nodes_per_side} × {nodes_per_side} cloth: no step solved rows"
        ));
    }
    Ok(SizePoint {
        rows: median(&mut rows),
        seconds_per_iteration: median(&mut times),
    })
}

/// Measures every size in `sizes`, prints a line each and the fit, and
/// returns the headline lines (`pgs_iteration_slope`, `pgs_iteration_r2`).
pub fn pgs_scaling(sizes: &[usize], h: f64, steps: usize) -> Result<Vec<String>, String> {
    println!(
        "PGS cost per iteration: square cloths (1 m, 0.2 kg) dropped 0.35 m onto the Fig. 3 ball, {} iterations, \
         one pass, step {h} s, {steps} steps each; medians over the second half (draped)",
        SolverParameters::default().iterations
    );
    let mut points = Vec::new();
    for &n in sizes {
        let p = measure(n, h, steps)?;
        println!(
            "  {n} × {n}: {:.0} rows, {:.1} µs per iteration",
            p.rows,
            1e6 * p.seconds_per_iteration
        );
        points.push((p.rows, p.seconds_per_iteration));
    }
    let fit = fit(&points).ok_or("the PGS scaling needs two cloth sizes or more")?;
    println!(
        "  fit: time per iteration = {:.2} µs + {:.3} ns · rows, R² = {:.4}",
        1e6 * fit.intercept,
        1e9 * fit.slope,
        fit.r2
    );
    Ok(vec![
        format!("pgs_iteration_slope: {:.3} ns/row", 1e9 * fit.slope),
        format!("pgs_iteration_r2: {:.4} ratio", fit.r2),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_fitted_exactly() {
        let f = fit(&[(1.0, 3.0), (2.0, 5.0), (4.0, 9.0)]).unwrap();
        assert!((f.slope - 2.0).abs() < 1e-12 && (f.intercept - 1.0).abs() < 1e-12);
        assert!((f.r2 - 1.0).abs() < 1e-12);
        assert!(fit(&[(1.0, 3.0), (1.0, 4.0)]).is_none());
    }

    #[test]
    fn a_larger_cloth_solves_more_rows() {
        let small = measure(5, 0.02, 30).unwrap();
        let large = measure(9, 0.02, 30).unwrap();
        assert!(large.rows > small.rows, "{} vs {}", large.rows, small.rows);
        assert!(small.seconds_per_iteration > 0.0);
    }
}
