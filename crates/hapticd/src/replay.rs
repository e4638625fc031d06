//! `hapticd replay`: a recorded trajectory through a scene, deterministic
//! and as fast as possible, into a tick recording.

use anyhow::Context;
use haptic_config::{Overrides, Scene};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct ReplayArgs {
    /// Scene configuration (TOML).
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// The trajectory to play (`hapticd record`).
    #[arg(long, value_name = "FILE")]
    trajectory: PathBuf,
    /// The tick recording to write.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

pub fn run(args: &ReplayArgs) -> anyhow::Result<()> {
    let cwd = std::env::current_dir().context("reading the current directory")?;
    // Before validation: the config need not name a trajectory or an
    // emulator, and whatever device it names is not opened.
    let overrides = Overrides {
        trajectory: Some(cwd.join(&args.trajectory)),
        ..Overrides::default()
    };
    let scene = Scene::load(&args.config, &overrides)?;
    let report = haptic_daemon::replay(&scene, &args.out)?;
    let f = &report.faults;
    println!(
        "replayed {} ticks into {}: max force {:.3} N, max {} contacts; faults: render {}, solver failed {}, quarantined {}; {} decisions in the solver's band",
        report.ticks,
        args.out.display(),
        report.max_force,
        report.max_contacts,
        f.render,
        f.solver_failed,
        f.quarantined,
        report.verdicts.band_decisions()
    );
    let p = &report.physics;
    if !p.bodies.is_empty() {
        println!(
            "physics: {} steps, {} quarantined bodies, up to {} contacts between bodies",
            p.steps, p.quarantined, p.max_contacts
        );
    }
    for body in &p.bodies {
        let x = body.pose.translation.vector;
        println!(
            "movable `{}` ended at ({:.4}, {:.4}, {:.4}) m",
            body.name, x.x, x.y, x.z
        );
    }
    Ok(())
}
