//! The command line: one subcommand per experiment, and the contact and
//! sampling parameters they share.

use crate::scene::{self, Geometry};
use clap::{Parser, Subcommand};
use haptic_physics::{World, WorldParameters};
use std::path::PathBuf;

#[derive(Parser)]
#[command(about = "Benchmarks of the rigid world")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Largest stable step, semi-implicit against symplectic Euler, on a
    /// drop of mugs (Xu, Zhao & Barbič Fig. 11).
    StableStep {
        /// A short smoke run: fewer mugs, a shorter drop, a coarser bisection.
        #[arg(long)]
        quick: bool,
        #[command(flatten)]
        tuning: Tuning,
    },
    /// A pile of mugs, cubes and tori in our world and in rapier.
    VersusRapier {
        /// A short smoke run: fewer bodies, a shorter drop, a coarser bisection.
        #[arg(long)]
        quick: bool,
        /// Write the pile's snapshots and series as CSV into this directory.
        #[arg(long)]
        trace: Option<PathBuf>,
        #[command(flatten)]
        tuning: Tuning,
    },
    /// The versus-rapier pile in our world alone at one step, without the
    /// ruler (for profiling).
    Pile {
        /// Step (s).
        #[arg(long, default_value_t = 1e-3)]
        step: f64,
        /// Simulated seconds.
        #[arg(long, default_value_t = 2.0)]
        duration: f64,
        #[command(flatten)]
        tuning: Tuning,
    },
}

/// Contact and sampling parameters (defaults: the tuned pile's).
#[derive(clap::Args)]
pub struct Tuning {
    /// Contact stiffness per finest shell point (N/m).
    #[arg(long)]
    stiffness: Option<f64>,
    /// Contact damping per finest shell point (N·s/m).
    #[arg(long)]
    damping: Option<f64>,
    /// Shell points per body (at least 100).
    #[arg(long, value_parser = clap::value_parser!(u64).range(100..))]
    shell_points: Option<u64>,
    /// Field nodes along a body's longest side (at least 8).
    #[arg(long, value_parser = clap::value_parser!(u32).range(8..))]
    field_resolution: Option<u32>,
    /// The farthest a body near another may move between two contact
    /// detections before our world splits its step (m).
    #[arg(long)]
    max_travel: Option<f64>,
    /// How near the surface our shell points are kept between traversals (m).
    #[arg(long)]
    detection_margin: Option<f64>,
}

impl Tuning {
    /// The geometry and our world's parameters (semi-implicit), checked as
    /// the world checks them.
    pub fn apply(&self) -> Result<(Geometry, WorldParameters), String> {
        let mut geometry = Geometry::default();
        let mut parameters = scene::world_parameters();
        let contact = &mut parameters.contact;
        if let Some(k) = self.stiffness {
            contact.stiffness = k;
        }
        if let Some(c) = self.damping {
            contact.damping = c;
        }
        if let Some(margin) = self.detection_margin {
            contact.detection_margin = margin;
        }
        if let Some(travel) = self.max_travel {
            parameters.max_travel = travel;
        }
        if let Some(n) = self.shell_points {
            geometry.body.shell_points = n as usize;
        }
        if let Some(n) = self.field_resolution {
            geometry.body.field_resolution = n;
        }
        World::new(Vec::new(), Vec::new(), parameters)
            .map_err(|e| format!("--stiffness/--damping/--max-travel/--detection-margin: {e}"))?;
        Ok((geometry, parameters))
    }
}
