//! `hapticd replay`: a recorded trajectory through a scene, deterministic
//! and as fast as possible, into a tick recording.

use anyhow::Context;
use haptic_config::{Config, DeviceKind};
use std::path::{Path, PathBuf};

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
    let base = args
        .config
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_owned();
    let cwd = std::env::current_dir().context("reading the current directory")?;
    // Before validation: the config need not name a trajectory or an
    // emulator, and whatever device it names is not opened.
    let config = Config::load_with(&args.config, |config| {
        config.device.kind = DeviceKind::Emulator;
        config.device.trajectory_file = Some(cwd.join(&args.trajectory));
    })?;
    let report = haptic_daemon::replay::replay(&config, &base, &args.out)?;
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
    Ok(())
}
