//! `hapticd`: the haptic rendering server and its tools.
//!
//! - `hapticd run [--config FILE] [--device simulated|emulator|hid|forcedim|falcon|openhaptics|haply]
//!   [--trajectory FILE] [--until-end] [--record FILE] [--duration S]
//!   [--summary-json FILE] [--log-format human|json] [--listen ADDR]
//!   [--unix-socket PATH] [--no-server] [--port-file FILE]`: the server, on
//!   the embedded default scene with the simulated device unless `--config`
//!   names a scene, serving the control API and state stream
//!   (docs/protocol.md); SIGINT or SIGTERM ramps the force to zero and
//!   exits 0, a second signal exits at once with zero force.
//! - `hapticd replay --config FILE --trajectory FILE --out FILE`: a
//!   recorded trajectory through a scene, deterministic, into a tick
//!   recording.
//! - `hapticd simulate SCENE --duration S --record FILE [--dt DT]`: the
//!   scene's physics world alone (no device, no tool), deterministic, into
//!   a recording of every step.
//! - `hapticd prep MESH --resolution N --out FILE [--density KG_M3]`: builds
//!   a prepared-geometry file (distance field, point shell, point tree),
//!   skipped when up to date, and reports the mesh's solid: mass, centre of
//!   mass, inertia; `--tets OUT.msh --tet-spacing METRES` also writes the
//!   solid's tetrahedral mesh (Gmsh MSH 4.1, docs/volume-meshes.md).
//! - `hapticd inspect FILE [--query POINTS.csv]`: describes a prepared file,
//!   or prints its field's value and gradient at given points; given a mesh,
//!   describes its solid (`--density`, default 1,000 kg/m³).
//! - `hapticd scenario NAME [--mu MU] [--friction lp|yamane] [--cycles N]
//!   --out TRACE.csv|.json`: runs a built-in scene (from Zhao, Li & Barbič) through the
//!   rendering cycle, writes its trace and prints a summary;
//!   `hapticd scenario --list` names them.
//! - `hapticd devices [--profiles DIR] [--forcedim-library PATH]
//!   [--openhaptics-library PATH] [--openhaptics-device NAME]
//!   [--haply-url URL]`: lists
//!   connected HID devices and the device profile each matches, then the
//!   Force Dimension devices the vendor's SDK sees (or where it looked),
//!   then connected Novint Falcons, then where libHD was found and the
//!   device it opens (or where it looked), then the Inverse3s and
//!   VerseGrips the Haply Inverse Service reports (or where it looked and
//!   why nothing was found).
//! - `hapticd check-config FILE...`: loads and validates configuration
//!   files, printing `ok: FILE` or the error (file, line, field) for each.
//!
//! Errors, including bad arguments, print as `error: ...`, naming the file,
//! and exit with code 1.

mod check_config;
mod devices;
mod inspect;
mod logging;
mod memory;
mod mesh_source;
mod output;
mod prep;
mod progress;
mod record;
mod replay;
mod report;
mod run;
mod scenario;
mod simulate;

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
    /// Run the server: the embedded default scene with the simulated
    /// device, or the scene of `--config`.
    Run(run::RunArgs),
    /// Play a recorded trajectory through a scene, deterministically, into
    /// a tick recording.
    Replay(replay::ReplayArgs),
    /// Step a scene's physics world alone, deterministically, into a
    /// recording of every step.
    Simulate(simulate::SimulateArgs),
    /// Prepare a mesh: build its distance field, point shell and point tree
    /// into a prepared-geometry file.
    Prep(prep::PrepArgs),
    /// Describe a prepared-geometry file, or query its field at points; or
    /// describe a mesh's solid: mass, centre of mass, inertia.
    Inspect(inspect::InspectArgs),
    /// Run a built-in scenario (from Zhao, Li & Barbič) and write its per-cycle trace.
    Scenario(scenario::ScenarioArgs),
    /// List connected HID devices and the device profile each matches, the
    /// Force Dimension devices the vendor's SDK sees, and connected Novint
    /// Falcons.
    Devices(devices::DevicesArgs),
    /// Record a device's samples as a trajectory file for the emulator.
    Record(record::RecordArgs),
    /// Load and validate configuration files.
    CheckConfig(check_config::CheckConfigArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // Help and version go to stdout and succeed; usage errors fail.
            let _ = error.print();
            return if error.use_stderr() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let result = match cli.command {
        Command::Run(args) => {
            logging::init(args.log_format());
            run::run(&args).map(ExitCode::from)
        }
        Command::Replay(args) => {
            logging::init(logging::LogFormat::Human);
            replay::run(&args).map(|()| ExitCode::SUCCESS)
        }
        Command::Simulate(args) => {
            logging::init(logging::LogFormat::Human);
            simulate::run(&args).map(|()| ExitCode::SUCCESS)
        }
        Command::Prep(args) => prep::run(&args).map(|()| ExitCode::SUCCESS),
        Command::Inspect(args) => inspect::run(&args).map(|()| ExitCode::SUCCESS),
        Command::Scenario(args) => scenario::run_scenario(&args).map(|()| ExitCode::SUCCESS),
        Command::Devices(args) => devices::run(&args).map(|()| ExitCode::SUCCESS),
        Command::Record(args) => record::run(&args).map(|()| ExitCode::SUCCESS),
        Command::CheckConfig(args) => check_config::run(&args).map(|()| ExitCode::SUCCESS),
    };
    match result {
        Ok(code) => code,
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
