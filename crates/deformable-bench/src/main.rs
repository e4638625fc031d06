//! `haptic-deformable-bench`: the deformable-body benchmarks of Vezzano,
//! Zerbato & Fiorini §5, each printing a table and then its headline
//! figures as `name: value unit` lines.
//!
//! - `scenes`: the cloth over the ball (Fig. 3) and the jelly drop (Fig. 2)
//!   with every engine set-up, round after round, in one process.
//! - `fig2`: the four jellies of Fig. 2 alone, with each stage's time.
//! - `cloth-figure`: the cloth over the ball over time, as CSV for
//!   `scripts/plot-cloth`.
//! - `cloth`, `jelly`: one scene in rapier at one setting.
//! - `sweep`: rapier's cloth over substeps and edge stiffness, and the
//!   cheapest setting reaching a strain and a penetration.

mod cli;
mod engine;
mod experiments;
mod metrics;
mod ours;
mod rapier_soft;
mod run;
mod scene;

use clap::Parser;
use cli::{Cli, Command};
use experiments::{cloth, cloth_figure, fig2, jelly, scenes, sweep};

fn main() {
    let outcome = match Cli::parse().command {
        Command::Scenes {
            quick,
            rounds,
            stiff_substeps,
            stiff_edge_factor,
            self_collision,
            cloth,
            jelly,
        } => scenes::scenes(
            &scenes::Plan {
                quick,
                rounds: rounds as usize,
                stiff_substeps: stiff_substeps as usize,
                stiff_edge_factor,
                self_collision,
            },
            &cloth,
            &jelly,
        ),
        Command::Fig2 {
            rounds,
            duration,
            step,
            substeps,
            elastic_passes,
            iterations,
            projection_sweeps,
        } => fig2::fig2(
            rounds as usize,
            duration,
            step,
            fig2::Overrides {
                substeps,
                elastic_passes,
                iterations,
                projection_sweeps,
            },
        ),
        Command::ClothFigure {
            trace,
            stiff_substeps,
            stiff_edge_factor,
            cloth,
        } => cloth_figure::cloth_figure(
            &cloth,
            rapier_soft::RapierSoftSettings::scaled(stiff_substeps as usize, stiff_edge_factor),
            &trace,
        ),
        Command::Cloth { cloth, rapier } => cloth::cloth(&cloth, &rapier),
        Command::Jelly { jelly, rapier } => jelly::jelly(&jelly, &rapier),
        Command::Sweep {
            substeps,
            edge_factors,
            target_strain,
            target_mean,
            target_penetration,
            cloth,
        } => sweep::sweep(
            &substeps,
            &edge_factors,
            sweep::Targets {
                strain: target_strain,
                mean: target_mean,
                penetration: target_penetration,
            },
            &cloth,
        ),
    };
    if let Err(error) = outcome {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}
