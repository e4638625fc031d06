//! `hapticd record`: records a device's samples as a trajectory file, the
//! input of the recorded-trajectory emulator (docs/devices.md).

use anyhow::{bail, Context};
use haptic_devices::{
    list_connected, load_profiles, HapticDevice, HidDevice, LengthUnit, Motion, SimulatedClock,
    SimulatedDevice, Trajectory, TrajectoryRow,
};
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum DeviceKind {
    /// The simulated device playing `--motion`, stepped (as fast as possible).
    Simulated,
    /// The first connected HID device that a profile matches, in real time.
    Hid,
}

#[derive(clap::Args)]
pub struct RecordArgs {
    #[arg(long, value_enum, default_value = "simulated")]
    device: DeviceKind,
    /// Scripted motion (TOML) for the simulated device.
    #[arg(long, value_name = "FILE")]
    motion: Option<PathBuf>,
    /// Directory of device profiles for `--device hid`.
    #[arg(long, value_name = "DIR", default_value = "device-profiles")]
    profiles: PathBuf,
    /// Seconds to record; the simulated device defaults to its motion's length.
    #[arg(long, value_name = "S")]
    duration: Option<f64>,
    /// Samples per second.
    #[arg(long, value_name = "HZ", default_value_t = 1000.0)]
    rate: f64,
    /// The trajectory file to write.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

pub fn run(args: &RecordArgs) -> anyhow::Result<()> {
    if !(args.rate.is_finite() && args.rate > 0.0) {
        bail!("--rate must be positive, got {}", args.rate);
    }
    if let Some(d) = args.duration.filter(|d| !(d.is_finite() && *d > 0.0)) {
        bail!("--duration must be positive, got {d}");
    }
    let period = Duration::from_secs_f64(1.0 / args.rate);
    let rows = match args.device {
        DeviceKind::Simulated => {
            let path = args
                .motion
                .as_ref()
                .context("--device simulated needs --motion FILE.toml")?;
            let motion = Motion::load(path)?;
            let duration = args.duration.unwrap_or(motion.duration_s());
            let mut device = SimulatedDevice::new(motion, SimulatedClock::Stepped(period));
            sample(&mut device, duration, None)?
        }
        DeviceKind::Hid => {
            let duration = args.duration.context("--device hid needs --duration S")?;
            let profiles = load_profiles(&args.profiles)?;
            let connected = list_connected(&profiles).context("listing HID devices")?;
            let (info, name) = connected
                .into_iter()
                .find_map(|(info, name)| name.map(|n| (info, n)))
                .context("no connected HID device matches a profile (see hapticd devices)")?;
            let profile = profiles
                .iter()
                .find(|p| p.name == name)
                .context("the matched profile vanished")?;
            let mut device = HidDevice::open(profile)
                .with_context(|| format!("opening {} at {}", name, info.path))?;
            sample(&mut device, duration, Some(period))?
        }
    };
    let trajectory = Trajectory::new(LengthUnit::Meters, args.rate, rows)?;
    let mut file = std::fs::File::create(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    trajectory
        .write(&mut file)
        .with_context(|| format!("writing {}", args.out.display()))?;
    println!(
        "recorded {} samples over {:.3} s into {}",
        trajectory.rows().len(),
        trajectory.end_s() - trajectory.start_s(),
        args.out.display()
    );
    Ok(())
}

/// Reads `device` until its samples span `duration` seconds, pacing reads by
/// `period` of wall-clock time when given. A sample whose timestamp does not
/// advance is skipped: a trajectory's time strictly increases.
fn sample(
    device: &mut dyn HapticDevice,
    duration: f64,
    period: Option<Duration>,
) -> anyhow::Result<Vec<TrajectoryRow>> {
    let mut rows: Vec<TrajectoryRow> = Vec::new();
    let start = Instant::now();
    let mut next = start;
    loop {
        if let Some(period) = period {
            next += period;
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
        }
        let s = device.read().context("reading the device")?;
        let t_s = s.timestamp.as_secs_f64();
        if rows.last().is_some_and(|r| t_s <= r.t_s) {
            continue;
        }
        let q = s.orientation.quaternion();
        rows.push(TrajectoryRow {
            t_s,
            position: [s.position.x, s.position.y, s.position.z],
            quaternion: [q.w, q.i, q.j, q.k],
            buttons: s.buttons,
        });
        if t_s - rows[0].t_s >= duration {
            return Ok(rows);
        }
    }
}
