//! `pile`: the versus-rapier pile in our world alone at one step, without
//! the ruler's comparison (for profiling): where the step's time goes.

use super::{mixed_pile, set_up_ours, Size};
use crate::cli::Tuning;
use crate::line_fit::cost_fit;
use crate::ours::Ours;
use crate::run::trial;

/// The 50-body pile in our world alone at `step`, the stability test
/// applied to every step.
pub fn pile(step: f64, duration: f64, tuning: &Tuning) -> Result<(), String> {
    if !(step > 0.0 && duration > 0.0) {
        return Err("--step and --duration must be positive".to_string());
    }
    let size = Size {
        bodies: 50,
        columns: 4,
        duration,
        resolution: 0.0,
        rounds: 1,
    };
    let scene = mixed_pile(&size)?;
    let ours = set_up_ours(&scene, &size, tuning)?;
    let mut ruler = ours.rulers.ruler();
    let mut engine = Ours::from_bodies(
        ours.bodies,
        scene.len(),
        ours.parameters,
        ours.rulers.ours(),
    );
    let r = trial(
        &mut engine,
        &scene,
        &mut ruler,
        &ours.criteria,
        step,
        duration,
    );
    let fit = cost_fit(&r.samples);
    println!("{} after {} steps", r.verdict, r.steps);
    let t = engine.totals;
    let per_step = |v: usize| v as f64 / t.steps.max(1) as f64;
    println!(
        "per step: {:.2} substeps ({:.2} more undone, {:.2} retaken to stop slips), {:.0} contacts, {:.0} field lookups, {:.1} tree traversals",
        per_step(t.substeps),
        per_step(t.undone),
        per_step(t.retaken),
        per_step(t.contacts),
        per_step(t.lookups),
        per_step(t.traversals)
    );
    println!(
        "wall per simulated second: {:.3} s detecting contacts, {:.3} s forces, solve and integration, {:.3} s the rest",
        t.detection / duration,
        t.dynamics / duration,
        r.wall_per_second() - (t.detection + t.dynamics) / duration
    );
    println!(
        "step cost: {:.1} µs + {:.3} µs per contact, R² = {:.3}",
        fit.intercept, fit.slope, fit.r_squared
    );
    let dynamics = cost_fit(&r.dynamics_samples);
    println!(
        "forces, solve and integration per substep: {:.1} µs + {:.3} µs per contact, R² = {:.3}",
        dynamics.intercept, dynamics.slope, dynamics.r_squared
    );
    let eighth = r.samples.len().div_ceil(8).max(1);
    for (k, chunk) in r.samples.chunks(eighth).enumerate() {
        let n = chunk.len() as f64;
        println!(
            "  steps from {:>5}: {:>7.1} µs a step, {:>5.0} contacts",
            k * eighth,
            chunk.iter().map(|s| s.1).sum::<f64>() / n * 1e6,
            chunk.iter().map(|s| s.0 as f64).sum::<f64>() / n
        );
    }
    println!();
    println!("ours_wall_per_sim_s: {:.3} s", r.wall_per_second());
    println!("ours_max_penetration: {:.3e} m", r.max_own_penetration);
    Ok(())
}
