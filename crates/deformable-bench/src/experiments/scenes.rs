//! `scenes`: the cloth over the ball and the jelly drop, every engine
//! set-up in turn, round after round, in one process. Another engine joins
//! the comparison as one more [`Contender`] in [`cloth_contenders`] and
//! [`jelly_contenders`], built from the same scene; its headline figures
//! then carry its name.

use super::{
    cloth_headline, jelly_headline, print_cloth_run, print_cloth_scene, print_jelly_run,
    print_jelly_scene, Contender,
};
use crate::cli::{ClothArgs, JellyArgs};
use crate::engine::Engine;
use crate::rapier_soft::{RapierSoft, RapierSoftSettings};
use crate::run::{run_cloth, run_jelly};
use crate::scene::{ClothScene, JellyScene};

/// The comparison's knobs.
pub struct Plan {
    pub quick: bool,
    pub rounds: usize,
    pub stiff_substeps: usize,
    pub stiff_edge_factor: f64,
}

/// The cloth's set-ups: rapier with its defaults, and rapier with more
/// substeps and stiffer edges.
fn cloth_contenders<'a>(scene: &'a ClothScene, stiff: RapierSoftSettings) -> Vec<Contender<'a>> {
    let defaults = RapierSoftSettings::default().awake();
    vec![
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
    ]
}

/// The jelly's set-ups: rapier with its default substeps.
fn jelly_contenders(scene: &JellyScene) -> Vec<Contender<'_>> {
    let defaults = RapierSoftSettings::default().awake();
    vec![Contender {
        name: "rapier",
        settings: format!(
            "rapier's corotational cells, {} substeps (its default), sleeping off",
            defaults.substeps
        ),
        build: Box::new(move || {
            Ok(Box::new(RapierSoft::jelly(scene, &defaults)) as Box<dyn Engine>)
        }),
    }]
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
    let contenders = cloth_contenders(&cloth, stiff);
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
    Ok(())
}
