//! `sweep`: rapier's cloth over a grid of substeps and edge stiffness, and
//! the cheapest setting (least wall time per simulated second) that leaves
//! the cloth over the ball no more stretched, and no node deeper in the
//! ball or the ground, than asked.

use super::{print_cloth_run, print_cloth_scene};
use crate::cli::ClothArgs;
use crate::rapier_soft::{RapierSoft, RapierSoftSettings};
use crate::run::{run_cloth, ClothRun};

/// What a setting must reach.
#[derive(Clone, Copy, Debug)]
pub struct Targets {
    /// Largest final strain over the ball.
    pub strain: f64,
    /// Whether `strain` bounds the mean final strain over the ball rather
    /// than the largest.
    pub mean: bool,
    /// Deepest peak penetration into the ball or below the ground (m).
    pub penetration: f64,
}

impl Targets {
    /// Whether `run` reaches the targets (a failed run never does).
    pub fn met_by(&self, run: &ClothRun) -> bool {
        let over = if self.mean {
            run.mean_strain_over_ball
        } else {
            run.strain_over_ball
        };
        let strain = over.map_or(run.strain.last, |over| over.last);
        run.timing.failed_at.is_none()
            && strain <= self.strain
            && run.ball_penetration.peak.max(run.ground_penetration.peak) <= self.penetration
    }
}

/// The index of the cheapest of `runs` that reaches `targets`.
pub fn cheapest(runs: &[ClothRun], targets: &Targets) -> Option<usize> {
    runs.iter()
        .enumerate()
        .filter(|(_, r)| targets.met_by(r))
        .min_by(|a, b| {
            a.1.timing
                .wall_per_simulated_second()
                .total_cmp(&b.1.timing.wall_per_simulated_second())
        })
        .map(|(i, _)| i)
}

pub fn sweep(
    substeps: &[u64],
    edge_factors: &[f64],
    targets: Targets,
    args: &ClothArgs,
) -> Result<(), String> {
    let scene = args.scene()?;
    print_cloth_scene(&scene, args.step, args.cloth_duration);
    println!(
        "targets: {} final strain over the ball ≤ {}, peak penetration into the ball or the ground ≤ {} mm",
        if targets.mean { "mean" } else { "largest" },
        targets.strain,
        targets.penetration * 1e3
    );
    let mut settings = Vec::new();
    for &n in substeps {
        for &factor in edge_factors {
            let s = RapierSoftSettings::scaled(n as usize, factor)
                .awake()
                .validated()
                .map_err(|e| format!("--substeps {n} --edge-factors {factor}: {e}"))?;
            settings.push(s);
        }
    }
    let mut runs = Vec::with_capacity(settings.len());
    for s in &settings {
        let mut engine = RapierSoft::cloth(&scene, s).map_err(|e| format!("cloth: {e}"))?;
        let run = run_cloth(&mut engine, &scene, args.step, args.cloth_duration)
            .map_err(|e| format!("cloth, {}: {e}", s.describe()))?;
        print_cloth_run(&s.describe(), &run);
        runs.push(run);
    }
    match cheapest(&runs, &targets) {
        Some(i) => {
            let run = &runs[i];
            println!("cheapest meeting the targets: {}", settings[i].describe());
            println!("rapier_sweep_substeps: {} count", settings[i].substeps);
            println!(
                "rapier_sweep_edge_frequency: {} Hz",
                settings[i].edge_softness.natural_frequency
            );
            println!(
                "rapier_sweep_step_median: {:.2} ms",
                run.timing.step_walls.median() * 1e3
            );
            println!(
                "rapier_sweep_wall_per_simulated_second: {:.3} s/s",
                run.timing.wall_per_simulated_second()
            );
        }
        None => println!("no setting of the grid meets the targets"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::BodySize;
    use crate::run::{Extremes, StepTimes, Timing};

    fn run(wall: f64, strain: f64, penetration: f64) -> ClothRun {
        let e = |v| Extremes { peak: v, last: v };
        ClothRun {
            timing: Timing {
                h: 0.02,
                step_walls: StepTimes(vec![wall; 10]),
                size: BodySize {
                    peak_constraints: None,
                    nodes: 4,
                    elements: Vec::new(),
                },
                failed_at: None,
                final_speed: 0.0,
                stages: None,
            },
            strain: e(strain),
            strain_over_ball: Some(e(strain)),
            mean_strain_over_ball: Some(e(0.5 * strain)),
            ball_penetration: e(penetration),
            ground_penetration: e(-1.0),
        }
    }

    #[test]
    fn the_cheapest_run_meeting_both_targets_is_chosen() {
        let mut targets = Targets {
            strain: 0.05,
            mean: false,
            penetration: 0.0,
        };
        let runs = [
            run(0.01, 0.30, -0.01), // cheap, too stretched
            run(0.05, 0.04, -0.01), // meets
            run(0.03, 0.05, -0.01), // meets, cheaper
            run(0.02, 0.01, 0.002), // too deep
        ];
        assert_eq!(cheapest(&runs, &targets), Some(2));
        assert_eq!(cheapest(&runs[..1], &targets), None);
        // By the mean (half the largest here), the cheapest run meets it.
        targets.mean = true;
        targets.strain = 0.15;
        assert_eq!(cheapest(&runs, &targets), Some(0));
    }
}
