//! `hapticd simulate`: a scene's physics world alone (its rigid bodies and
//! its deformables), headless and deterministic, as fast as the machine
//! goes, into a recording of every step (`haptic_daemon::simulate`).

use anyhow::bail;
use haptic_config::{Overrides, Scene};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args)]
pub struct SimulateArgs {
    /// Scene configuration (TOML) with movable objects or deformables.
    scene: PathBuf,
    /// Simulated time (s).
    #[arg(long, value_name = "SECONDS")]
    duration: f64,
    /// The recording to write, one record per step: MCAP when it ends in
    /// `.mcap` (with every deformable's node positions), else CSV (with
    /// each deformable's centre of mass).
    #[arg(long, value_name = "FILE")]
    record: PathBuf,
    /// The step (s) [default: the scene's physics period, 1 /
    /// `[threads.physics] rate_hz`].
    #[arg(long, value_name = "SECONDS")]
    dt: Option<f64>,
}

pub fn run(args: &SimulateArgs) -> anyhow::Result<()> {
    let scene = Scene::load(&args.scene, &Overrides::default())?;
    if !scene.has_movable() && scene.deformables().is_empty() {
        bail!(
            "{}: no movable objects and no deformables: the physics world has nothing to move",
            args.scene.display()
        );
    }
    let dt = args.dt.unwrap_or(1.0 / scene.threads().physics.rate_hz);
    if !(dt.is_finite() && dt > 0.0) {
        bail!("--dt must be finite and positive, got {dt}");
    }
    if !(args.duration.is_finite() && args.duration > 0.0) {
        bail!(
            "--duration must be finite and positive, got {}",
            args.duration
        );
    }
    let steps = (args.duration / dt).round().max(1.0) as u64;
    // indicatif draws nothing to a stderr that is not a terminal.
    let bar = ProgressBar::with_draw_target(Some(steps), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:>10} [{bar:40.cyan/blue}] {pos:>7}/{len:7} steps {elapsed:>4} ETA {eta}",
        )
        .expect("the template is valid")
        .progress_chars("=> "),
    );
    bar.set_message("simulating");
    let started = Instant::now();
    let report = haptic_daemon::simulate(&scene, dt, steps, &args.record, |step| {
        bar.set_position(step)
    })?;
    bar.finish_and_clear();
    let wall = started.elapsed().as_secs_f64();
    let simulated = steps as f64 * dt;
    let p = &report.physics;
    println!(
        "simulated {steps} steps of {dt} s ({simulated} s) into {} in {wall:.2} s ({:.1}× real time): up to {} contacts, deepest {:.3} mm, {} quarantined; kinetic energy at the end {:.3e} J",
        args.record.display(),
        simulated / wall,
        p.max_contacts,
        p.max_penetration * 1e3,
        p.quarantined,
        report.kinetic_energy
    );
    for body in &p.bodies {
        let x = body.pose.translation.vector;
        println!(
            "`{}` ended at ({:.4}, {:.4}, {:.4}) m, moving at {:.2e} m/s",
            body.name,
            x.x,
            x.y,
            x.z,
            body.velocity.norm()
        );
    }
    for body in &report.deformables {
        let c = body.centre_of_mass;
        println!(
            "deformable `{}` ({} nodes, {:.4} kg) ended with its centre of mass at ({:.4}, {:.4}, {:.4}) m, fastest node {:.2e} m/s",
            body.name, body.nodes, body.mass, c.x, c.y, c.z, body.max_speed
        );
    }
    if !report.deformables.is_empty() && !haptic_daemon::is_mcap_path(&args.record) {
        println!(
            "node positions are recorded in MCAP only (--record FILE.mcap); {} holds each deformable's centre of mass",
            args.record.display()
        );
    }
    Ok(())
}
