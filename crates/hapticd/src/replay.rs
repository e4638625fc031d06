//! `hapticd replay`: a recorded trajectory through a scene, deterministic
//! and as fast as possible, into a tick recording.

use anyhow::Context;
use haptic_config::{Overrides, Scene};
use haptic_daemon::{PhysicsStall, ReplayOptions};
use std::path::PathBuf;
use std::time::Duration;

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
    /// Stall the physics from AT seconds of servo time for FOR
    /// milliseconds (repeatable): it takes no step meanwhile, as when its
    /// thread is preempted.
    #[arg(long, value_name = "AT_S:FOR_MS", value_parser = parse_stall)]
    physics_stall: Vec<PhysicsStall>,
}

/// `AT_S:FOR_MS`, both finite and ≥ 0.
fn parse_stall(text: &str) -> Result<PhysicsStall, String> {
    let (at, length) = text
        .split_once(':')
        .ok_or_else(|| format!("`{text}` is not AT_S:FOR_MS"))?;
    let number = |field: &str, value: &str| match value.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!(
            "{field} `{value}` of `{text}` is not a finite number ≥ 0"
        )),
    };
    Ok(PhysicsStall {
        start: Duration::from_secs_f64(number("AT_S", at)?),
        length: Duration::from_secs_f64(number("FOR_MS", length)? * 1e-3),
    })
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
    let options = ReplayOptions {
        physics_stalls: args.physics_stall.clone(),
    };
    let report = haptic_daemon::replay_with(&scene, &args.out, &options)?;
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
    let passivity = &report.passivity;
    println!(
        "passivity: energy taken in {:.4e} J (torque port {:.4e} J), lowest {:.4e} J together (ports {:.4e} J, {:.4e} J); damped {} ticks, at most {:.3} N·s/m ({:.4} N·m·s/rad)",
        report.final_energy[0],
        report.final_energy[1],
        passivity.lowest_total_energy,
        passivity.lowest_energy,
        passivity.lowest_rotational_energy,
        passivity.damped_ticks,
        passivity.max_damping,
        passivity.max_rotational_damping
    );
    let p = &report.physics;
    if !p.bodies.is_empty() {
        println!(
            "physics: {} steps, {} quarantined bodies, up to {} contacts between bodies",
            p.steps, p.quarantined, p.max_contacts
        );
    }
    if p.deformables > 0 {
        println!(
            "deformables: {}, {} put back after a step that was not finite or too fast",
            p.deformables, p.deformables_quarantined
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
