//! `haptic-physics-bench`: the rigid world's benchmarks, each printing a
//! table and then its headline figures as `name: value unit` lines.
//!
//! - `stable-step`: Xu, Zhao & Barbič's Fig. 11 experiment with mugs for
//!   bowls: the largest stable step of the semi-implicit integrator and of
//!   symplectic Euler on the same drop, found by bisection.
//! - `versus-rapier`: a pile of mugs, cubes and tori in our world and in
//!   rapier, each at its own largest stable step, in one process.
//! - `pile`: that pile in our world alone at a given step (for profiling).

mod bisection;
mod cli;
mod engine;
mod experiments;
mod line_fit;
mod ours;
mod peer;
mod ruler;
mod run;
mod scene;
mod trace;

use clap::Parser;
use cli::{Cli, Command};
use experiments::{pile, stable_step, versus_rapier};

fn main() {
    let outcome = match Cli::parse().command {
        Command::StableStep { quick, tuning } => stable_step::stable_step(quick, &tuning),
        Command::VersusRapier {
            quick,
            trace,
            tuning,
        } => versus_rapier::versus_rapier(quick, trace, &tuning),
        Command::Pile {
            step,
            duration,
            tuning,
        } => pile::pile(step, duration, &tuning),
    };
    if let Err(error) = outcome {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}
