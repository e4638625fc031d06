//! The largest stable step, by geometric bisection on the step between a
//! stable and an unstable trial.

use crate::run::Run;

/// The largest stable step found by bisection, and every trial run.
pub struct Search {
    /// The largest step found stable (s).
    pub step: f64,
    /// The smallest step found unstable (s); `None` if `cap` was stable.
    pub unstable: Option<f64>,
    pub trials: Vec<Run>,
}

/// How far below its start the bisection looks for a stable step.
const MAX_HALVING: f64 = 64.0;

/// Bisects on the step (geometrically) between a stable and an unstable
/// step until they are within `resolution` (relative), starting from
/// `start` and doubling or halving to bracket; steps above `cap` are not
/// tried. `trial(h)` runs at step `h`; `log` sees each trial.
pub fn largest_stable_step(
    mut trial: impl FnMut(f64) -> Run,
    start: f64,
    cap: f64,
    resolution: f64,
    mut log: impl FnMut(&Run),
) -> Result<Search, String> {
    let mut trials = Vec::new();
    let mut attempt = |h: f64, trials: &mut Vec<Run>| {
        let run = trial(h);
        log(&run);
        let stable = run.verdict.is_stable();
        trials.push(run);
        stable
    };
    let (mut stable, mut unstable);
    if attempt(start, &mut trials) {
        stable = start;
        unstable = None;
        while stable < cap {
            let h = (2.0 * stable).min(cap);
            if attempt(h, &mut trials) {
                stable = h;
            } else {
                unstable = Some(h);
                break;
            }
        }
    } else {
        unstable = Some(start);
        stable = start / 2.0;
        while !attempt(stable, &mut trials) {
            unstable = Some(stable);
            stable /= 2.0;
            if stable < start / MAX_HALVING {
                return Err(format!(
                    "no stable step down to {:.3e} s: the parameters, not the step, fail the test",
                    stable * 2.0
                ));
            }
        }
    }
    while let Some(u) = unstable {
        if u / stable <= 1.0 + resolution {
            break;
        }
        let h = (stable * u).sqrt();
        if attempt(h, &mut trials) {
            stable = h;
        } else {
            unstable = Some(h);
        }
    }
    Ok(Search {
        step: stable,
        unstable,
        trials,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::Verdict;

    /// A run whose verdict is stable exactly up to `limit`.
    fn synthetic(h: f64, limit: f64) -> Run {
        Run {
            step: h,
            steps: 1,
            wall: 0.0,
            verdict: if h <= limit {
                Verdict::Stable
            } else {
                Verdict::Failed { time: h }
            },
            max_penetration: None,
            max_own_penetration: 0.0,
            final_penetration: 0.0,
            max_energy_gain: 0.0,
            settled_drift: 0.0,
            final_kinetic: 0.0,
            samples: Vec::new(),
            dynamics_samples: Vec::new(),
        }
    }

    #[test]
    fn bisection_brackets_the_limit_within_the_resolution() {
        for (start, limit) in [(1e-3, 3.3e-3), (1e-3, 2.2e-4), (1e-4, 1e-4)] {
            let search =
                largest_stable_step(|h| synthetic(h, limit), start, 1.0, 0.1, |_| {}).unwrap();
            let unstable = search.unstable.unwrap();
            assert!(
                search.step <= limit && limit < unstable,
                "{start} {limit}: {} {unstable}",
                search.step
            );
            assert!(unstable / search.step <= 1.1 + 1e-12);
        }
        // Stable up to the cap: the cap, with no unstable step.
        let search = largest_stable_step(|h| synthetic(h, 1.0), 1e-3, 5e-3, 0.1, |_| {}).unwrap();
        assert_eq!((search.step, search.unstable), (5e-3, None));
        // Unstable at every step: an error naming the parameters.
        let error = largest_stable_step(|h| synthetic(h, 0.0), 1e-3, 1.0, 0.1, |_| {});
        assert!(error.is_err_and(|e| e.contains("parameters")));
    }
}
