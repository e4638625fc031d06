//! The command line: one subcommand per experiment, and the scene, run and
//! rapier parameters they share.

use crate::rapier_soft::RapierSoftSettings;
use crate::scene::{ClothScene, JellyScene};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(about = "Benchmarks of deformable bodies")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// The cloth over the ball and the jelly drop, every engine set-up in
    /// turn, round after round; a table, then the headline figures.
    Scenes {
        /// A short smoke run: a 21 × 21 cloth, a coarse jelly, 0.4 s each, one round.
        #[arg(long)]
        quick: bool,
        /// Runs of each set-up, interleaved (their step times pooled).
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..))]
        rounds: u64,
        /// Substeps of rapier's stiff cloth set-up.
        #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..))]
        stiff_substeps: u64,
        /// How many times rapier's default edge natural frequency its stiff
        /// cloth set-up's edges get.
        #[arg(long, default_value_t = 10.0)]
        stiff_edge_factor: f64,
        /// Our cloth's surface meets itself (self-collision; rapier's
        /// cloths as they are).
        #[arg(long)]
        self_collision: bool,
        #[command(flatten)]
        cloth: ClothArgs,
        #[command(flatten)]
        jelly: JellyArgs,
    },
    /// The four jellies of Fig. 2 alone, at the settings of `scenes` unless
    /// overridden: step times, each stage's share, and the jellies' rulers.
    Fig2 {
        /// Runs of the scene (their step times pooled).
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..))]
        rounds: u64,
        /// Simulated seconds.
        #[arg(long, default_value_t = 3.0)]
        duration: f64,
        /// Step (s).
        #[arg(long, default_value_t = 0.02)]
        step: f64,
        /// Substeps of each step.
        #[arg(long)]
        substeps: Option<usize>,
        /// Solver passes with the elastic response between them.
        #[arg(long)]
        elastic_passes: Option<usize>,
        /// PGS iterations per pass.
        #[arg(long)]
        iterations: Option<usize>,
        /// Position projection passes.
        #[arg(long)]
        projection_sweeps: Option<usize>,
    },
    /// The cloth over the ball over time, every cloth set-up of `scenes`:
    /// snapshots and strain for `scripts/plot-cloth`, as CSV in `--trace`.
    ClothFigure {
        /// The directory the CSV files are written to.
        #[arg(long)]
        trace: std::path::PathBuf,
        /// Substeps of rapier's stiff cloth set-up.
        #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..))]
        stiff_substeps: u64,
        /// How many times rapier's default edge natural frequency its stiff
        /// cloth set-up's edges get.
        #[arg(long, default_value_t = 10.0)]
        stiff_edge_factor: f64,
        #[command(flatten)]
        cloth: ClothArgs,
    },
    /// The cloth over the ball in rapier at one setting.
    Cloth {
        #[command(flatten)]
        cloth: ClothArgs,
        #[command(flatten)]
        rapier: RapierArgs,
    },
    /// The jelly drop in rapier at one setting.
    Jelly {
        #[command(flatten)]
        jelly: JellyArgs,
        #[command(flatten)]
        rapier: RapierArgs,
    },
    /// rapier's cloth over a grid of substeps and edge stiffness: the
    /// cheapest setting whose strain and penetration meet the targets.
    Sweep {
        /// Substep counts to try.
        #[arg(long, value_delimiter = ',', default_values_t = vec![4u64, 8, 16, 32])]
        substeps: Vec<u64>,
        /// Edge natural frequencies to try, as multiples of rapier's default.
        #[arg(long, value_delimiter = ',', default_values_t = vec![1.0, 3.0, 10.0, 30.0])]
        edge_factors: Vec<f64>,
        /// Largest final strain over the ball a setting may leave.
        #[arg(long, default_value_t = 0.05)]
        target_strain: f64,
        /// The strain target bounds the mean final strain over the ball,
        /// not the largest.
        #[arg(long)]
        target_mean: bool,
        /// Deepest a node may go into the ball or below the ground (m).
        #[arg(long, default_value_t = 0.0)]
        target_penetration: f64,
        #[command(flatten)]
        cloth: ClothArgs,
    },
}

/// The cloth scene and its run.
#[derive(clap::Args, Clone)]
pub struct ClothArgs {
    /// Cloth nodes along a side (the paper's 51).
    #[arg(long, default_value_t = 51)]
    pub cloth_nodes: usize,
    /// The cloth's mass (kg).
    #[arg(long, default_value_t = 0.2)]
    pub cloth_mass: f64,
    /// Simulated seconds of the cloth.
    #[arg(long, default_value_t = 2.0)]
    pub cloth_duration: f64,
    /// Step (s).
    #[arg(long, default_value_t = 0.02)]
    pub step: f64,
}

impl ClothArgs {
    pub fn scene(&self) -> Result<ClothScene, String> {
        check_run(self.step, self.cloth_duration, "--cloth-duration")?;
        ClothScene {
            nodes_per_side: self.cloth_nodes,
            mass: self.cloth_mass,
            ..ClothScene::default()
        }
        .validated()
        .map_err(|e| format!("cloth scene: {e}"))
    }
}

/// The jelly scene and its run.
#[derive(clap::Args, Clone)]
pub struct JellyArgs {
    /// Rings of nodes around the jelly's axis in a layer.
    #[arg(long, default_value_t = 4)]
    pub jelly_rings: usize,
    /// Layers of nodes along the jelly's axis.
    #[arg(long, default_value_t = 9)]
    pub jelly_layers: usize,
    /// The jelly's Young's modulus (Pa).
    #[arg(long, default_value_t = 1.0e4)]
    pub young_modulus: f64,
    /// The jelly's Poisson's ratio.
    #[arg(long, default_value_t = 0.45)]
    pub poisson_ratio: f64,
    /// Simulated seconds of the jelly.
    #[arg(long, default_value_t = 3.0)]
    pub jelly_duration: f64,
    /// Step of the jelly (s).
    #[arg(long, default_value_t = 0.02)]
    pub jelly_step: f64,
}

impl JellyArgs {
    pub fn scene(&self) -> Result<JellyScene, String> {
        check_run(self.jelly_step, self.jelly_duration, "--jelly-duration")?;
        JellyScene {
            rings: self.jelly_rings,
            layers: self.jelly_layers,
            young_modulus: self.young_modulus,
            poisson_ratio: self.poisson_ratio,
            ..JellyScene::default()
        }
        .validated()
        .map_err(|e| format!("jelly scene: {e}"))
    }
}

fn check_run(step: f64, duration: f64, name: &str) -> Result<(), String> {
    if !(step.is_finite() && step > 0.0) {
        return Err(format!("step {step} s: must be finite and positive"));
    }
    if !(duration.is_finite() && duration >= step) {
        return Err(format!(
            "{name} {duration} s: must be at least one step ({step} s)"
        ));
    }
    Ok(())
}

/// rapier's knobs; unset, rapier's defaults.
#[derive(clap::Args, Clone)]
pub struct RapierArgs {
    /// Solver substeps per step (rapier's default 4).
    #[arg(long)]
    pub substeps: Option<usize>,
    /// Natural frequency of the cloth's structural and shear edges (Hz;
    /// rapier's default 30).
    #[arg(long)]
    pub edge_frequency: Option<f64>,
    /// Damping ratio of the cloth's edges (rapier's default 1).
    #[arg(long)]
    pub edge_damping: Option<f64>,
    /// Natural frequency of the cloth's bending edges (Hz; rapier's default 10).
    #[arg(long)]
    pub bend_frequency: Option<f64>,
    /// Let the body fall asleep at rest (rapier's default; a sleeping
    /// body's steps cost nothing).
    #[arg(long)]
    pub sleep: bool,
    /// Let the body's surface collide with itself (off by default).
    #[arg(long)]
    pub self_contacts: bool,
}

impl RapierArgs {
    pub fn settings(&self) -> Result<RapierSoftSettings, String> {
        let mut s = RapierSoftSettings::default();
        if let Some(n) = self.substeps {
            s.substeps = n;
        }
        if let Some(f) = self.edge_frequency {
            s.edge_softness.natural_frequency = f;
        }
        if let Some(z) = self.edge_damping {
            s.edge_softness.damping_ratio = z;
        }
        if let Some(f) = self.bend_frequency {
            s.bend_softness.natural_frequency = f;
        }
        s.can_sleep = self.sleep;
        s.self_contacts = self.self_contacts;
        s.validated().map_err(|e| format!("rapier settings: {e}"))
    }
}
