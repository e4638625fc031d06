//! `scenes`: the cloth over the ball and the jelly drop, every engine
//! set-up in turn, round after round, in one process. Another engine joins
//! the comparison as one more [`Contender`] in [`cloth_contenders`] and
//! [`jelly_contenders`], built from the same scene; its headline figures
//! then carry its name.

use super::fig2::{print_fig2_run, print_fig2_scene, run_fig2};
use super::{
    cloth_headline, jelly_headline, print_cloth_run, print_cloth_scene, print_jelly_run,
    print_jelly_scene, Contender,
};
use crate::cli::{ClothArgs, JellyArgs};
use crate::engine::Engine;
use crate::ours::Ours;
use crate::rapier_soft::{RapierSoft, RapierSoftSettings};
use crate::run::{run_cloth, run_jelly, StepTimes};
use crate::scene::{ClothScene, JellyScene};
use haptic_deformable::scenes::Fig2Spec;
use haptic_deformable::SolverParameters;

/// The comparison's knobs.
pub struct Plan {
    pub quick: bool,
    pub rounds: usize,
    pub stiff_substeps: usize,
    pub stiff_edge_factor: f64,
    /// Whether our cloth meets itself.
    pub self_collision: bool,
}

/// Our solver at the paper's two iterations (its rigid solver's two are
/// the rigid world's implicit step) and one pass, with 8 projection passes.
fn ours_paper() -> SolverParameters {
    SolverParameters {
        iterations: 2,
        projection_sweeps: 8,
        elastic_passes: 1,
        ..SolverParameters::default()
    }
}

/// Our set-ups: at the paper's iteration count, and at `tuned`.
fn ours_contenders<'a>(
    tuned: SolverParameters,
    build: impl Fn(SolverParameters) -> Result<Ours, String> + Copy + 'a,
) -> Vec<Contender<'a>> {
    let describe = |p: &SolverParameters| {
        format!(
            "our PGS, {} iterations, {} projection passes, {} elastic pass(es), {} substep(s), warm start {}, β h = {}",
            p.iterations, p.projection_sweeps, p.elastic_passes, p.substeps, p.warm_start, p.baumgarte
        )
    };
    let (paper, defaults) = (ours_paper(), tuned);
    vec![
        Contender {
            name: "ours_paper",
            settings: describe(&paper),
            build: Box::new(move || Ok(Box::new(build(paper)?) as Box<dyn Engine>)),
        },
        Contender {
            name: "ours",
            settings: describe(&defaults),
            build: Box::new(move || Ok(Box::new(build(defaults)?) as Box<dyn Engine>)),
        },
    ]
}

/// The cloth's set-ups: ours, rapier with its defaults, and rapier with more
/// substeps and stiffer edges.
pub(crate) fn cloth_contenders<'a>(
    scene: &'a ClothScene,
    stiff: RapierSoftSettings,
    self_collision: bool,
) -> Vec<Contender<'a>> {
    let defaults = RapierSoftSettings::default().awake();
    // The cloth's rows hold it; its weak shear springs pass nothing on.
    // Two 10 ms substeps halve the speed the ball stops the cloth from in
    // one, and with it the stretch of the impact: its largest strain peaks
    // under rapier's stiff set-up's, as the comparison asks.
    let tuned = SolverParameters {
        elastic_passes: 1,
        substeps: 2,
        ..SolverParameters::default()
    };
    let mut contenders = ours_contenders(tuned, move |p| Ours::cloth(scene, p, self_collision));
    contenders.extend([
        Contender {
            name: "rapier",
            settings: format!(
                "rapier's cloth builder, its defaults (sleeping aside): {}",
                defaults.describe()
            ),
            build: Box::new(move || {
                let engine = RapierSoft::cloth(scene, &defaults).map_err(|e| e.to_string())?;
                Ok(Box::new(engine) as Box<dyn Engine>)
            }),
        },
        Contender {
            name: "rapier_stiff",
            settings: format!("rapier's cloth builder: {}", stiff.describe()),
            build: Box::new(move || {
                let engine = RapierSoft::cloth(scene, &stiff).map_err(|e| e.to_string())?;
                Ok(Box::new(engine) as Box<dyn Engine>)
            }),
        },
    ]);
    contenders
}

/// Our solver for the jellies: their resting nodes held on their contact
/// planes in their implicit solves
/// (crates/deformable/tests/jelly_on_the_ground.rs); two elastic passes rest
/// the benchmark's jelly within 1.1 % of its volume.
fn jelly_tuned() -> SolverParameters {
    SolverParameters {
        elastic_passes: 2,
        ..SolverParameters::default()
    }
}

/// The jelly's set-ups: ours, and rapier with its default substeps.
fn jelly_contenders(scene: &JellyScene) -> Vec<Contender<'_>> {
    let defaults = RapierSoftSettings::default().awake();
    let mut contenders = ours_contenders(jelly_tuned(), move |p| Ours::jelly(scene, p));
    contenders.push(Contender {
        name: "rapier",
        settings: format!(
            "rapier's corotational cells, {} substeps (its default), sleeping off",
            defaults.substeps
        ),
        build: Box::new(move || {
            Ok(Box::new(RapierSoft::jelly(scene, &defaults)) as Box<dyn Engine>)
        }),
    });
    contenders
}

pub fn scenes(plan: &Plan, cloth_args: &ClothArgs, jelly_args: &JellyArgs) -> Result<(), String> {
    let (mut cloth_args, mut jelly_args) = (cloth_args.clone(), jelly_args.clone());
    let mut rounds = plan.rounds;
    if plan.quick {
        cloth_args.cloth_nodes = 21;
        cloth_args.cloth_duration = 0.4;
        jelly_args.jelly_rings = 2;
        jelly_args.jelly_layers = 4;
        jelly_args.jelly_duration = 0.4;
        rounds = 1;
    }
    let mut fig2 = Fig2Spec::default();
    let mut fig2_duration = jelly_args.jelly_duration;
    if plan.quick {
        fig2.jelly_rings = 2;
        fig2.jelly_layers = 4;
        fig2_duration = 0.4;
    }
    let cloth = cloth_args.scene()?;
    let jelly = jelly_args.scene()?;
    let stiff = RapierSoftSettings::scaled(plan.stiff_substeps, plan.stiff_edge_factor)
        .awake()
        .validated()
        .map_err(|e| format!("--stiff-substeps/--stiff-edge-factor: {e}"))?;
    println!(
        "all set-ups single-threaded, built outside the timings, never sleeping (every step simulates the body); \
         step times are the step calls alone"
    );

    print_cloth_scene(&cloth, cloth_args.step, cloth_args.cloth_duration);
    let contenders = cloth_contenders(&cloth, stiff, plan.self_collision);
    for c in &contenders {
        println!("{}: {}", c.name, c.settings);
    }
    let mut cloth_runs: Vec<Vec<_>> = contenders.iter().map(|_| Vec::new()).collect();
    for round in 1..=rounds {
        println!("cloth round {round}:");
        for (c, runs) in contenders.iter().zip(&mut cloth_runs) {
            let mut engine = (c.build)().map_err(|e| format!("cloth, {}: {e}", c.name))?;
            let run = run_cloth(
                engine.as_mut(),
                &cloth,
                cloth_args.step,
                cloth_args.cloth_duration,
            )
            .map_err(|e| format!("cloth, {}: {e}", c.name))?;
            if round == 1 {
                println!("  {}: {}", c.name, run.timing.size);
            }
            print_cloth_run(c.name, &run);
            runs.push(run);
        }
    }

    print_jelly_scene(&jelly, jelly_args.jelly_step, jelly_args.jelly_duration);
    let jelly_set = jelly_contenders(&jelly);
    for c in &jelly_set {
        println!("{}: {}", c.name, c.settings);
    }
    let mut jelly_runs: Vec<Vec<_>> = jelly_set.iter().map(|_| Vec::new()).collect();
    for round in 1..=rounds {
        println!("jelly round {round}:");
        for (c, runs) in jelly_set.iter().zip(&mut jelly_runs) {
            let mut engine = (c.build)().map_err(|e| format!("jelly, {}: {e}", c.name))?;
            let run = run_jelly(
                engine.as_mut(),
                &jelly,
                jelly_args.jelly_step,
                jelly_args.jelly_duration,
            )
            .map_err(|e| format!("jelly, {}: {e}", c.name))?;
            if round == 1 {
                println!("  {}: {}", c.name, run.timing.size);
            }
            print_jelly_run(c.name, &run);
            runs.push(run);
        }
    }

    print_fig2_scene(&fig2, jelly_args.jelly_step, fig2_duration);
    let fig2_parameters = Fig2Spec::solver_parameters();
    println!(
        "ours: {} substep(s), {} elastic pass(es), {} iterations, {} projection passes",
        fig2_parameters.substeps,
        fig2_parameters.elastic_passes,
        fig2_parameters.iterations,
        fig2_parameters.projection_sweeps
    );
    let mut fig2_times = StepTimes::default();
    for round in 1..=rounds {
        println!("fig. 2 round {round}:");
        let run = run_fig2(&fig2, fig2_parameters, jelly_args.jelly_step, fig2_duration)
            .map_err(|e| format!("fig. 2: {e}"))?;
        print_fig2_run(&run);
        fig2_times = fig2_times.pooled(&run.times);
    }

    let (sizes, steps): (&[usize], usize) = if plan.quick {
        (&[11, 21, 31], 20)
    } else {
        (&[11, 21, 31, 41, 51, 61], 60)
    };
    let pgs_headline = super::pgs_scaling::pgs_scaling(sizes, cloth_args.step, steps)
        .map_err(|e| format!("PGS scaling: {e}"))?;

    println!("headline (step times pooled over {rounds} round(s); rulers from the first):");
    for (c, runs) in contenders.iter().zip(&cloth_runs) {
        cloth_headline(c.name, runs)
            .iter()
            .for_each(|l| println!("{l}"));
    }
    for (c, runs) in jelly_set.iter().zip(&jelly_runs) {
        jelly_headline(c.name, runs)
            .iter()
            .for_each(|l| println!("{l}"));
    }
    // The comparison's figures: the cloth's step at the paper's iteration
    // count, the jelly's at the settings that keep it whole, and our
    // cloth's wall time against rapier's stiff set-up at no more strain.
    let index = |name: &str| contenders.iter().position(|c| c.name == name);
    let median = |name: &str, runs: &[Vec<crate::run::ClothRun>]| {
        index(name).map(|k| super::pooled(runs[k].iter().map(|r| &r.timing)))
    };
    let wall = |name: &str| {
        index(name).map(|k| {
            let times = super::pooled(cloth_runs[k].iter().map(|r| &r.timing));
            let simulated: f64 = cloth_runs[k].iter().map(|r| r.timing.simulated()).sum();
            times.total() / simulated
        })
    };
    if let Some(times) = median("ours_paper", &cloth_runs) {
        println!("cloth_step_median: {:.2} ms", 1e3 * times.median());
    }
    // The jelly at the settings that keep it whole (the paper's single pass
    // lets it sink and lose half its volume).
    if let Some(k) = jelly_set.iter().position(|c| c.name == "ours") {
        let times = super::pooled(jelly_runs[k].iter().map(|r| &r.timing));
        println!("jelly_step_median: {:.2} ms", 1e3 * times.median());
    }
    println!(
        "fig2_jellies_step_median: {:.2} ms",
        1e3 * fig2_times.median()
    );
    if let (Some(ours), Some(rapier)) = (wall("ours"), wall("rapier_stiff")) {
        println!("cloth_wall_ratio_ours_over_rapier: {:.3} x", ours / rapier);
    }
    // What the ratio compares: ours at no more strain, at the impact and
    // draped, and no deeper in the ball, than rapier's stiff set-up (each
    // ≤ 1).
    let first = |name: &str| index(name).and_then(|k| cloth_runs[k].first());
    if let (Some(ours), Some(rapier)) = (first("ours"), first("rapier_stiff")) {
        println!(
            "cloth_max_strain_ours_over_rapier: {:.3} x",
            ours.strain.peak / rapier.strain.peak
        );
        println!(
            "cloth_final_strain_ours_over_rapier: {:.3} x",
            ours.strain.last / rapier.strain.last
        );
        println!(
            "cloth_ball_penetration_ours_minus_rapier: {:.3} mm",
            super::ms(ours.ball_penetration.peak) - super::ms(rapier.ball_penetration.peak)
        );
    }
    pgs_headline.iter().for_each(|l| println!("{l}"));
    Ok(())
}
