//! `hapticd check-config FILE...`: loads and validates configuration files.

use crate::output::Stdout;
use haptic_config::{Overrides, Scene};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct CheckConfigArgs {
    /// Configuration files (TOML).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
}

/// Prints `ok: FILE` for each file that loads (after its warnings, on
/// stderr) and each other file's error (file, line, field); fails if any
/// did.
pub fn run(args: &CheckConfigArgs) -> anyhow::Result<()> {
    let mut failed = 0;
    for file in &args.files {
        match Scene::load(file, &Overrides::default()) {
            Ok(scene) => {
                for warning in scene.warnings() {
                    eprintln!("warning: {warning}");
                }
                writeln!(Stdout::lock(), "ok: {}", file.display())?
            }
            Err(error) => {
                failed += 1;
                eprintln!("error: {error}");
            }
        }
    }
    if failed > 0 {
        anyhow::bail!("{failed} of {} config files failed", args.files.len());
    }
    Ok(())
}
