//! Running an engine over a scene for a fixed simulated time: each step's
//! wall time (the step call alone), and the rulers applied to the nodes
//! after every step, outside the timed region.

use crate::engine::{BodySize, Engine, Stages};
use crate::metrics::{self, MetricError};
use crate::scene::{ClothScene, JellyScene};
use nalgebra::Point3;
use std::time::Instant;

/// The wall times of a run's steps (s).
#[derive(Clone, Debug, Default)]
pub struct StepTimes(pub Vec<f64>);

impl StepTimes {
    /// The `q`-quantile (nearest rank) of the step times; 0 without steps.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.0.is_empty() {
            return 0.0;
        }
        let mut sorted = self.0.clone();
        sorted.sort_by(f64::total_cmp);
        let rank = (q.clamp(0.0, 1.0) * sorted.len() as f64).ceil() as usize;
        sorted[rank.clamp(1, sorted.len()) - 1]
    }

    pub fn median(&self) -> f64 {
        self.quantile(0.5)
    }

    pub fn p95(&self) -> f64 {
        self.quantile(0.95)
    }

    pub fn max(&self) -> f64 {
        self.0.iter().copied().fold(0.0, f64::max)
    }

    pub fn total(&self) -> f64 {
        self.0.iter().sum()
    }

    /// The times of `self` then `other`.
    pub fn pooled(&self, other: &StepTimes) -> StepTimes {
        StepTimes(self.0.iter().chain(&other.0).copied().collect())
    }
}

impl Stages {
    /// Each stage's median over `steps`.
    pub fn medians(steps: &[Stages]) -> Stages {
        let median = |f: fn(&Stages) -> f64| StepTimes(steps.iter().map(f).collect()).median();
        Stages {
            paradigms: median(|s| s.paradigms),
            detection: median(|s| s.detection),
            solver: median(|s| s.solver),
            projection: median(|s| s.projection),
            rest: median(|s| s.rest),
            rows: median(|s| s.rows),
        }
    }
}

/// The largest and the last value of a quantity over a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Extremes {
    pub peak: f64,
    pub last: f64,
}

impl Extremes {
    fn start(value: f64) -> Extremes {
        Extremes {
            peak: value,
            last: value,
        }
    }

    fn record(&mut self, value: f64) {
        self.peak = self.peak.max(value);
        self.last = value;
    }
}

fn record(slot: &mut Option<Extremes>, value: f64) {
    match slot {
        Some(e) => e.record(value),
        None => *slot = Some(Extremes::start(value)),
    }
}

/// What every run reports, whatever the scene.
#[derive(Clone, Debug)]
pub struct Timing {
    /// Step (s).
    pub h: f64,
    pub step_walls: StepTimes,
    pub size: BodySize,
    /// Simulated time at which the engine gave up, if it did (s).
    pub failed_at: Option<f64>,
    /// The fastest node over the last step (m/s): near zero when the body
    /// has come to rest.
    pub final_speed: f64,
    /// Each stage's median step time, for engines that time them.
    pub stages: Option<Stages>,
}

impl Timing {
    pub fn steps(&self) -> usize {
        self.step_walls.0.len()
    }

    /// Simulated seconds.
    pub fn simulated(&self) -> f64 {
        self.steps() as f64 * self.h
    }

    /// Wall seconds per simulated second (the step calls only).
    pub fn wall_per_simulated_second(&self) -> f64 {
        self.step_walls.total() / self.simulated()
    }
}

/// Steps `engine` by `h` until `duration`, calling `observe` with the time
/// and the nodes after each step (outside the timed region).
fn drive(
    engine: &mut dyn Engine,
    h: f64,
    duration: f64,
    mut observe: impl FnMut(&[Point3<f64>]) -> Result<(), MetricError>,
) -> Result<Timing, MetricError> {
    let steps = (duration / h).round().max(1.0) as usize;
    let mut walls = Vec::with_capacity(steps);
    let mut before = Vec::new();
    let mut after = Vec::new();
    engine.positions(&mut after);
    observe(&after)?;
    let mut failed_at = None;
    let mut final_speed = 0.0;
    for n in 1..=steps {
        std::mem::swap(&mut before, &mut after);
        let start = Instant::now();
        engine.step(h);
        walls.push(start.elapsed().as_secs_f64());
        engine.positions(&mut after);
        if engine.failed()
            || after
                .iter()
                .any(|x| !x.coords.iter().all(|c| c.is_finite()))
        {
            failed_at = Some(n as f64 * h);
            break;
        }
        observe(&after)?;
        final_speed = before
            .iter()
            .zip(&after)
            .map(|(a, b)| (b - a).norm() / h)
            .fold(0.0, f64::max);
    }
    Ok(Timing {
        h,
        step_walls: StepTimes(walls),
        size: engine.size(),
        failed_at,
        final_speed,
        stages: engine.stages(),
    })
}

/// A cloth run's figures.
#[derive(Clone, Debug)]
pub struct ClothRun {
    pub timing: Timing,
    /// Largest strain over the structural edges.
    pub strain: Extremes,
    /// Largest strain over the structural edges above the ball
    /// ([`metrics::above_ball`]); `None` if no edge ever was.
    pub strain_over_ball: Option<Extremes>,
    /// The mean strain over the structural edges above the ball.
    pub mean_strain_over_ball: Option<Extremes>,
    /// Deepest node inside the ball (m, negative when all are clear).
    pub ball_penetration: Extremes,
    /// Deepest node below the ground (m, negative when all are clear).
    pub ground_penetration: Extremes,
}

/// Runs `engine` on the cloth `scene` with step `h` for `duration` s.
pub fn run_cloth(
    engine: &mut dyn Engine,
    scene: &ClothScene,
    h: f64,
    duration: f64,
) -> Result<ClothRun, MetricError> {
    let edges = scene.structural_edges();
    let (centre, radius, ground) = (
        scene.ball_centre(),
        scene.ball_radius,
        scene.ground_height(),
    );
    let mut strain = None;
    let mut strain_over_ball = None;
    let mut mean_over_ball = None;
    let mut ball = None;
    let mut floor = None;
    let timing = drive(engine, h, duration, |x| {
        record(
            &mut strain,
            metrics::max_edge_strain(x, &edges.pairs, &edges.rest)?,
        );
        let over = |m: &Point3<f64>| metrics::above_ball(m, &centre, radius);
        if let Some(s) = metrics::max_edge_strain_where(x, &edges.pairs, &edges.rest, over)? {
            record(&mut strain_over_ball, s);
        }
        if let Some(s) = metrics::mean_edge_strain_where(x, &edges.pairs, &edges.rest, over)? {
            record(&mut mean_over_ball, s);
        }
        record(
            &mut ball,
            metrics::max_ball_penetration(x, &centre, radius)?,
        );
        record(&mut floor, metrics::max_ground_penetration(x, ground)?);
        Ok(())
    })?;
    // `drive` observes the start before any step, so every slot but the
    // selection's is filled.
    let filled = |slot: Option<Extremes>| slot.ok_or(MetricError::NoNodes);
    Ok(ClothRun {
        timing,
        strain: filled(strain)?,
        strain_over_ball,
        mean_strain_over_ball: mean_over_ball,
        ball_penetration: filled(ball)?,
        ground_penetration: filled(floor)?,
    })
}

/// A jelly run's figures.
#[derive(Clone, Debug)]
pub struct JellyRun {
    pub timing: Timing,
    /// Deepest node below the ground (m, negative when all are clear).
    pub ground_penetration: Extremes,
    /// `(V − V₀) / V₀` of the cells: `peak` the largest in magnitude (with
    /// its sign), `last` at the end, at rest.
    pub volume_change: Extremes,
    /// The nodes' mean height at the end (m).
    pub final_mean_height: f64,
}

/// Runs `engine` on the jelly `scene` with step `h` for `duration` s.
pub fn run_jelly(
    engine: &mut dyn Engine,
    scene: &JellyScene,
    h: f64,
    duration: f64,
) -> Result<JellyRun, MetricError> {
    let mesh = scene.mesh();
    let ground = scene.ground_height();
    let mut floor = None;
    let mut volume: Option<Extremes> = None;
    let mut mean_height = 0.0;
    let timing = drive(engine, h, duration, |x| {
        record(&mut floor, metrics::max_ground_penetration(x, ground)?);
        let change = metrics::relative_volume_change(x, &mesh.cells, mesh.volume)?;
        match &mut volume {
            Some(v) => {
                if change.abs() > v.peak.abs() {
                    v.peak = change;
                }
                v.last = change;
            }
            None => volume = Some(Extremes::start(change)),
        }
        mean_height = x.iter().map(|p| p.z).sum::<f64>() / x.len() as f64;
        Ok(())
    })?;
    Ok(JellyRun {
        timing,
        ground_penetration: floor.ok_or(MetricError::NoNodes)?,
        volume_change: volume.ok_or(MetricError::NoNodes)?,
        final_mean_height: mean_height,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_nearest_rank() {
        let t = StepTimes((1..=20).map(f64::from).collect());
        assert_eq!(t.median(), 10.0);
        assert_eq!(t.p95(), 19.0);
        assert_eq!(t.max(), 20.0);
        assert_eq!(t.total(), 210.0);
        assert_eq!(StepTimes(vec![3.0]).p95(), 3.0);
    }
}
