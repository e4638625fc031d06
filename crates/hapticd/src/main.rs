//! `hapticd`: the haptic rendering server's tools.
//!
//! - `hapticd prep MESH --resolution N --out FILE`: builds a prepared-geometry
//!   file (distance field, point shell, point tree), skipped when up to date.
//! - `hapticd inspect FILE [--query POINTS.csv]`: describes a prepared file,
//!   or prints its field's value and gradient at given points.
//!
//! Errors print as `error: ...`, naming the file, and exit with code 1.

mod inspect;
mod output;
mod prep;
mod progress;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(version, about = "Tools of the haptic rendering server")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Prepare a mesh: build its distance field, point shell and point tree
    /// into a prepared-geometry file.
    Prep(prep::PrepArgs),
    /// Describe a prepared-geometry file, or query its field at points.
    Inspect(inspect::InspectArgs),
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Prep(args) => prep::run(&args),
        Command::Inspect(args) => inspect::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", message(&error));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes joined by `: `, leaving out a cause whose text
/// its parent already shows.
fn message(error: &anyhow::Error) -> String {
    let mut message = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if !message.contains(&text) {
            if !message.is_empty() {
                message.push_str(": ");
            }
            message.push_str(&text);
        }
    }
    message
}
