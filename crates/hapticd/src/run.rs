//! `hapticd run`: the server. With no `--config` it runs the embedded
//! default scene with the simulated device.

use crate::logging::LogFormat;
use anyhow::Context;
use haptic_asset::AtomicFile;
use haptic_config::{DeviceKind, Overrides, Scene, ServoScene};
use haptic_daemon::{RunOptions, Shutdown};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum DeviceChoice {
    /// The simulated device playing the config's motion.
    Simulated,
    /// The recorded-trajectory emulator playing `--trajectory`.
    Emulator,
    /// A HID device: the config's or `--profile`'s profile, else the one
    /// connected device that matches a profile.
    Hid,
    /// A Force Dimension device through the vendor's SDK
    /// (`[device.forcedim]`).
    Forcedim,
    /// A Novint Falcon (`[device.falcon]`).
    Falcon,
    /// A Touch, Touch X or Phantom through the OpenHaptics HD API
    /// (`[device.openhaptics]`).
    Openhaptics,
    /// A Haply Inverse3 (and VerseGrip) through the Haply Inverse Service
    /// (`[device.haply]`).
    Haply,
}

#[derive(clap::Args)]
pub struct RunArgs {
    /// Scene configuration (TOML); default the embedded default scene.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Override the config's device kind.
    #[arg(long, value_enum)]
    device: Option<DeviceChoice>,
    /// HID device profile by name (overrides `device.profile`).
    #[arg(long, value_name = "NAME")]
    profile: Option<String>,
    /// Trajectory file for the emulator (implies `--device emulator`).
    #[arg(long, value_name = "FILE")]
    trajectory: Option<PathBuf>,
    /// Stop when the emulator's trajectory ends; without it the last sample
    /// is held until a signal.
    #[arg(long)]
    until_end: bool,
    /// Record every tick (device pose, the wrench written and rendered, tool
    /// pose, contacts, friction state and verdict) to FILE.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Stop after this many seconds.
    #[arg(long, value_name = "SECONDS")]
    duration: Option<f64>,
    /// Pin the servo thread to this CPU (overrides `[threads.servo] cpu`).
    #[arg(long, value_name = "N")]
    servo_cpu: Option<usize>,
    /// SCHED_FIFO priority of the servo thread, 1–99, or 0 for normal
    /// scheduling (overrides `[threads.servo] priority`).
    #[arg(long, value_name = "P", value_parser = clap::value_parser!(u8).range(0..=99))]
    servo_priority: Option<u8>,
    /// Write the run's summary as JSON to FILE at exit.
    #[arg(long, value_name = "FILE")]
    summary_json: Option<PathBuf>,
    /// Log format on standard error.
    #[arg(long, value_enum, default_value = "human")]
    log_format: LogFormat,
    /// Serve the control API on this TCP address (overrides
    /// `server.listen`; port 0 picks a free one; empty: none).
    #[arg(long, value_name = "ADDR")]
    listen: Option<String>,
    /// Also serve on this Unix socket, created with mode 0600 (overrides
    /// `server.unix_socket`).
    #[arg(long, value_name = "PATH")]
    unix_socket: Option<PathBuf>,
    /// Serve no control API (`server.enabled = false`).
    #[arg(long, conflicts_with_all = ["listen", "unix_socket", "port_file"])]
    no_server: bool,
    /// Write the control API's TCP port to FILE, atomically, once bound.
    #[arg(long, value_name = "FILE")]
    port_file: Option<PathBuf>,
}

impl RunArgs {
    pub fn log_format(&self) -> LogFormat {
        self.log_format
    }
}

/// The command line's overrides of the config.
fn overrides(args: &RunArgs) -> anyhow::Result<Overrides> {
    let cwd = std::env::current_dir().context("reading the current directory")?;
    Ok(Overrides {
        trajectory: args.trajectory.as_ref().map(|t| cwd.join(t)),
        device: args.device.map(|device| match device {
            DeviceChoice::Simulated => DeviceKind::Simulated,
            DeviceChoice::Emulator => DeviceKind::Emulator,
            DeviceChoice::Hid => DeviceKind::Hid,
            DeviceChoice::Forcedim => DeviceKind::ForceDimension,
            DeviceChoice::Falcon => DeviceKind::Falcon,
            DeviceChoice::Openhaptics => DeviceKind::OpenHaptics,
            DeviceChoice::Haply => DeviceKind::Haply,
        }),
        servo_cpu: args.servo_cpu,
        servo_priority: args.servo_priority,
        profile: args.profile.clone(),
        listen: args.listen.clone(),
        unix_socket: args.unix_socket.as_ref().map(|p| cwd.join(p)),
        no_server: args.no_server,
    })
}

/// The scene, with the command line's overrides applied before validation,
/// so that a config may leave out what the command line supplies (an
/// emulator's trajectory, say); checked for the servo.
fn load(args: &RunArgs, overrides: &Overrides) -> anyhow::Result<ServoScene> {
    let scene = match &args.config {
        Some(path) => Scene::load(path, overrides)?,
        None => Scene::embedded_default(overrides)?,
    };
    if args.until_end && scene.device().kind != DeviceKind::Emulator {
        anyhow::bail!("--until-end needs the emulator (`--device emulator --trajectory FILE`)");
    }
    Ok(ServoScene::new(scene)?)
}

/// Runs the daemon; returns the process's exit code.
pub fn run(args: &RunArgs) -> anyhow::Result<u8> {
    let duration = match args.duration {
        Some(s) if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
        Some(s) => anyhow::bail!("--duration must be positive, got {s}"),
        None => None,
    };
    let overrides = overrides(args)?;
    let scene = load(args, &overrides)?;
    let shutdown = Shutdown::install().context("installing the signal handlers")?;
    let options = RunOptions {
        record: args.record.clone(),
        duration,
        hold_at_end: !args.until_end,
        overrides,
        port_file: args.port_file.clone(),
    };
    let summary = haptic_daemon::run(&scene, &options, &shutdown)?;
    if let Some(path) = &args.summary_json {
        let text = serde_json::to_string_pretty(&summary.to_json())?;
        AtomicFile::write(path, text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let s = &summary.servo;
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    tracing::info!(
        reason = %summary.reason,
        ticks = s.ticks,
        deadline_misses = s.overruns,
        wake_latency_p50_us = us(s.latency.quantile(0.5)),
        wake_latency_p99_us = us(s.latency.quantile(0.99)),
        wake_latency_max_us = us(s.latency.max()),
        tick_time_p99_us = us(s.tick_time.quantile(0.99)),
        "stopped"
    );
    print!("{summary}");
    Ok(summary.exit_code())
}
