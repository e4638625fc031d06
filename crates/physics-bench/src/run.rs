//! Running an engine over a fixed physical time, the stability test, the
//! bisection on the step, and the line fit of step cost against contacts.
//!
//! A run at step `h` over `T` seconds is stable when, at every step,
//! (a) no energy is created: `KE(t) + U(t) ≤ KE(0) + U(0) + ε` with `U` the
//! gravitational potential of the centres of mass and `ε` 1 % of `U(0)`
//! (measured from the floor's top face), so kinetic energy never exceeds
//! the potential energy the pile has given up; (b) the engine's own deepest
//! contact penetration stays below the scene's bound (ours: the deepest
//! shell point in another body's distance field; rapier: parry's exact
//! query on its colliders); (c) no body was quarantined or became
//! non-finite; (d) no surface of a body that could touch another (its
//! bounds, grown by its motion, overlap another body's) moved more than the
//! scene's motion bound, half the mug wall, between two of the engine's
//! contact detections: a point crossing more than half a wall between two
//! detections comes out on the far side unseen, so a run that allows it
//! cannot show its penetration. rapier detects once a step; our world once
//! a substep, and reports how far such bodies moved in each. Both engines' poses are also
//! measured with one ruler, our shells in our fields, which for rapier adds
//! its colliders' departure from the meshes. A run may also be held to a
//! depth by that ruler ([`Criteria::ruler_penetration_bound`]), to compare
//! engines at equal penetration.

use crate::ours::Ruler;
use crate::scene::Scene;
use crate::trace::Trace;
use nalgebra::Isometry3;
use std::time::Instant;

/// What an engine reports after a step, read outside the timed region.
pub struct Stepped {
    /// Contact points the step handled (ours: penetrating shell points;
    /// rapier: its solver contacts).
    pub contacts: usize,
    /// The ruler's penetration, when the engine measures it itself (ours:
    /// its own detection when its shells are the ruler's).
    pub ruler_penetration: Option<f64>,
    /// The engine's own deepest penetration, for the stability test (m);
    /// ours with shells coarser than the ruler's: the deeper of its own
    /// and the ruler's.
    pub own_penetration: f64,
    /// The farthest a surface point of a body that could touch another
    /// moved between two of the engine's contact detections, when the
    /// engine detects more often than once a step (m).
    pub motion_between_detections: Option<f64>,
    /// The engine's time per detection outside the detection (forces,
    /// solve, integration), when it measures it (s).
    pub dynamics_per_detection: Option<f64>,
    pub failed: bool,
}

/// A rigid-body engine stepping the scene's dynamic bodies.
pub trait Engine {
    /// Advances by `h` seconds (the timed part).
    fn step(&mut self, h: f64);
    /// What the last step did.
    fn observe(&mut self) -> Stepped;
    /// The dynamic bodies' centre-of-mass frames, in the scene's order.
    fn poses(&self) -> Vec<Isometry3<f64>>;
    /// J.
    fn kinetic_energy(&self) -> f64;
}

/// The outcome of the stability test.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Verdict {
    Stable,
    /// Energy exceeded the start's by `excess` J (beyond the tolerance) at `time`.
    EnergyCreated {
        time: f64,
        excess: f64,
    },
    /// Penetration reached `depth` m at `time`.
    Penetration {
        time: f64,
        depth: f64,
    },
    /// A body's surface moved `motion` m in the step ending at `time`.
    TooFast {
        time: f64,
        motion: f64,
    },
    /// A body was quarantined or became non-finite at `time`.
    Failed {
        time: f64,
    },
}

impl Verdict {
    pub fn is_stable(&self) -> bool {
        *self == Verdict::Stable
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verdict::Stable => write!(f, "stable"),
            Verdict::EnergyCreated { time, excess } => {
                write!(f, "energy created: +{excess:.3e} J at t = {time:.4} s")
            }
            Verdict::Penetration { time, depth } => {
                write!(f, "penetration {:.3} mm at t = {time:.4} s", depth * 1e3)
            }
            Verdict::Failed { time } => write!(f, "non-finite or quarantined at t = {time:.4} s"),
            Verdict::TooFast { time, motion } => write!(
                f,
                "a surface moved {:.3} mm in the step to t = {time:.4} s",
                motion * 1e3
            ),
        }
    }
}

/// The stability test's bounds.
#[derive(Clone, Copy, Debug)]
pub struct Criteria {
    /// m.
    pub penetration_bound: f64,
    /// J.
    pub energy_tolerance: f64,
    /// m.
    pub motion_bound: f64,
    /// A bound on the ruler's penetration as well (m), for a run asked to
    /// penetrate no deeper than another engine: the ruler then measures
    /// every step, bisection trials too.
    pub ruler_penetration_bound: Option<f64>,
}

impl Criteria {
    /// The scene's penetration bound and 1 % of its initial potential energy.
    pub fn of(scene: &Scene) -> Criteria {
        Criteria {
            penetration_bound: scene.penetration_bound,
            motion_bound: scene.motion_bound,
            energy_tolerance: 0.01 * scene.potential_energy(&scene.initial_poses),
            ruler_penetration_bound: None,
        }
    }
}

/// One run's figures.
#[derive(Clone, Debug)]
pub struct Run {
    /// s.
    pub step: f64,
    pub steps: usize,
    /// Sum of the steps' wall times (s).
    pub wall: f64,
    pub verdict: Verdict,
    /// Deepest penetration by the ruler over the run (m), if measured.
    pub max_penetration: Option<f64>,
    /// By the engine's own measure (m).
    pub max_own_penetration: f64,
    /// Ruler penetration at the end (m).
    pub final_penetration: f64,
    /// Largest `E(t) − E(0)` (J).
    pub max_energy_gain: f64,
    /// `E(T) − E(T_s)` over the last quarter of the run (J).
    pub settled_drift: f64,
    /// J.
    pub final_kinetic: f64,
    /// (contacts, step wall time in s) per step.
    pub samples: Vec<(usize, f64)>,
    /// (contacts, [`Stepped::dynamics_per_detection`]) per step, for the
    /// engines that measure it.
    pub dynamics_samples: Vec<(usize, f64)>,
}

impl Run {
    /// Wall time per simulated second.
    pub fn wall_per_second(&self) -> f64 {
        self.wall / (self.steps as f64 * self.step)
    }
}

/// How a run goes.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// s.
    pub step: f64,
    /// Simulated seconds.
    pub duration: f64,
    /// A bisection trial stops at its first violation and skips the ruler;
    /// a measured run goes to the end and applies the ruler at every step.
    pub trial: bool,
}

/// Runs `engine` as `plan` says from the scene's start; `trace` records
/// snapshots and series.
pub fn run(
    engine: &mut dyn Engine,
    scene: &Scene,
    ruler: &mut Ruler,
    criteria: &Criteria,
    plan: Plan,
    mut trace: Option<&mut Trace>,
) -> Run {
    let (h, stop_early) = (plan.step, plan.trial);
    let measure = !plan.trial || criteria.ruler_penetration_bound.is_some();
    let steps = (plan.duration / h).ceil() as usize;
    let settle_from = (steps * 3) / 4;
    let energy =
        |engine: &dyn Engine| engine.kinetic_energy() + scene.potential_energy(&engine.poses());
    let start = energy(engine);
    if let Some(t) = trace.as_deref_mut() {
        t.record(scene, 0.0, &engine.poses(), start, 0.0);
    }
    let mut result = Run {
        step: h,
        steps: 0,
        wall: 0.0,
        verdict: Verdict::Stable,
        max_penetration: None,
        max_own_penetration: 0.0,
        final_penetration: 0.0,
        max_energy_gain: f64::NEG_INFINITY,
        settled_drift: 0.0,
        final_kinetic: 0.0,
        samples: Vec::with_capacity(steps),
        dynamics_samples: Vec::new(),
    };
    let mut settled_energy = start;
    let mut previous = engine.poses();
    for k in 0..steps {
        let begun = Instant::now();
        engine.step(h);
        let elapsed = begun.elapsed().as_secs_f64();
        result.wall += elapsed;
        result.steps += 1;
        let time = (k + 1) as f64 * h;
        let stepped = engine.observe();
        result.samples.push((stepped.contacts, elapsed));
        if let Some(dynamics) = stepped.dynamics_per_detection {
            result.dynamics_samples.push((stepped.contacts, dynamics));
        }
        let poses = engine.poses();
        let measured = stepped
            .ruler_penetration
            .or_else(|| measure.then(|| ruler.penetration(&poses)));
        if let Some(depth) = measured {
            result.max_penetration = Some(result.max_penetration.unwrap_or(0.0).max(depth));
        }
        let penetration = stepped.own_penetration;
        let motion = stepped
            .motion_between_detections
            .unwrap_or_else(|| ruler.near_motion(scene, &previous, &poses));
        previous.clone_from(&poses);
        let e = engine.kinetic_energy() + scene.potential_energy(&poses);
        result.max_own_penetration = result.max_own_penetration.max(penetration);
        result.max_energy_gain = result.max_energy_gain.max(e - start);
        if k + 1 == settle_from {
            settled_energy = e;
        }
        if let Some(t) = trace.as_deref_mut() {
            t.record(scene, time, &poses, e, measured.unwrap_or(penetration));
        }
        if result.verdict.is_stable() {
            result.verdict = if stepped.failed || !e.is_finite() {
                Verdict::Failed { time }
            } else if e - start > criteria.energy_tolerance {
                Verdict::EnergyCreated {
                    time,
                    excess: e - start,
                }
            } else if penetration > criteria.penetration_bound {
                Verdict::Penetration {
                    time,
                    depth: penetration,
                }
            } else if let Some(depth) = measured.filter(|&d| {
                criteria
                    .ruler_penetration_bound
                    .is_some_and(|bound| d > bound)
            }) {
                Verdict::Penetration { time, depth }
            } else if motion > criteria.motion_bound {
                Verdict::TooFast { time, motion }
            } else {
                Verdict::Stable
            };
            if !result.verdict.is_stable() && stop_early {
                break;
            }
        }
        if k + 1 == steps {
            result.settled_drift = e - settled_energy;
            result.final_kinetic = engine.kinetic_energy();
            result.final_penetration = ruler.penetration(&poses);
        }
    }
    result
}

/// A bisection trial: `engine` run at `step` for `duration` simulated
/// seconds, stopping at the first violation, without the ruler or a trace.
pub fn trial(
    engine: &mut dyn Engine,
    scene: &Scene,
    ruler: &mut Ruler,
    criteria: &Criteria,
    step: f64,
    duration: f64,
) -> Run {
    run(
        engine,
        scene,
        ruler,
        criteria,
        Plan {
            step,
            duration,
            trial: true,
        },
        None,
    )
}

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
