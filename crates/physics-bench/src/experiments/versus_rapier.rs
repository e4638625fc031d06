//! `versus-rapier`: a pile of mugs, cubes and tori in our world and in
//! rapier, each at its own largest stable step, in one process.

use super::{log_trial, mixed_pile, print_parameters, print_search, Size};
use crate::bisection::{largest_stable_step, Search};
use crate::cli::Tuning;
use crate::engine::Engine;
use crate::line_fit::cost_fit;
use crate::ours::Ours;
use crate::peer::{peer_shapes, Peer, LENGTH_UNIT};
use crate::ruler::{Ruler, Rulers};
use crate::run::{run, trial, Criteria, Plan, Run};
use crate::scene::Scene;
use crate::trace::Trace;
use std::path::PathBuf;
use std::time::Instant;

/// `--quick`: a smoke run.
const QUICK: Size = Size {
    bodies: 9,
    columns: 3,
    duration: 0.3,
    resolution: 0.5,
    rounds: 1,
};

/// The experiment's size.
const FULL: Size = Size {
    bodies: 50,
    columns: 4,
    duration: 2.0,
    resolution: 0.1,
    rounds: 3,
};

/// One engine set-up of the comparison: how to build it, where its
/// bisection starts and stops, what its runs must meet, and its measured
/// run.
struct Contender<'a> {
    name: &'static str,
    build: Box<dyn Fn() -> Box<dyn Engine> + 'a>,
    start: f64,
    cap: f64,
    criteria: Criteria,
    measured: Option<Run>,
}

impl Contender<'_> {
    /// The largest step at which this set-up meets its criteria, printed.
    fn search(&self, scene: &Scene, ruler: &mut Ruler, size: &Size) -> Option<Search> {
        println!("{}:", self.name);
        let search = largest_stable_step(
            |h| {
                trial(
                    (self.build)().as_mut(),
                    scene,
                    ruler,
                    &self.criteria,
                    h,
                    size.duration,
                )
            },
            self.start,
            self.cap,
            size.resolution,
            log_trial(self.name),
        );
        match &search {
            Ok(search) => print_search(self.name, search),
            Err(e) => println!("  {}: {e}", self.name),
        }
        search.ok()
    }
}

/// The pile of `QUICK` or `FULL` size with `tuning` in both engines: each
/// set-up's largest stable step, the measured runs at them (their
/// snapshots and series written into `trace_directory`), the table, then
/// the headline figures.
pub fn versus_rapier(
    quick: bool,
    trace_directory: Option<PathBuf>,
    tuning: &Tuning,
) -> Result<(), String> {
    let size = if quick { QUICK } else { FULL };
    let scene = mixed_pile(&size)?;
    let setup = tuning.apply()?;
    let built = Instant::now();
    let bodies = scene.bodies(&setup.0);
    let rulers = Rulers::of(&scene, &setup.0, &bodies);
    let ours_setup = built.elapsed().as_secs_f64();
    let built = Instant::now();
    let shapes = peer_shapes(&scene);
    let rapier_setup = built.elapsed().as_secs_f64();
    let criteria = Criteria::of(&scene);
    print_parameters(&scene, &setup, &criteria, &size);
    for (shape, peer) in scene.shapes.iter().zip(&shapes) {
        println!("rapier collider of {}: {}", shape.name, peer.kind);
    }
    println!(
        "setup (not in the timings): our shells and fields {ours_setup:.2} s, rapier's colliders {rapier_setup:.2} s; \
         rapier length_unit {LENGTH_UNIT} m, sleeping on (its default), contact recycling on (its default) and off; \
         both single-threaded"
    );
    let mut ruler = rulers.ruler();
    let (bodies, scene_ref, shapes_ref, rulers_ref) = (&bodies, &scene, &shapes, &rulers);
    let rapier = move |recycling| -> Box<dyn Fn() -> Box<dyn Engine> + '_> {
        Box::new(move || Box::new(Peer::new(scene_ref, shapes_ref, recycling)))
    };
    let mut contenders = vec![
        Contender {
            name: "ours",
            build: Box::new(move || {
                Box::new(Ours::from_bodies(
                    bodies.clone(),
                    scene_ref.len(),
                    setup.1,
                    rulers_ref.ours(),
                ))
            }),
            start: 1e-4,
            cap: 0.05,
            criteria,
            measured: None,
        },
        Contender {
            name: "rapier",
            build: rapier(true),
            start: 1e-3,
            cap: 0.05,
            criteria,
            measured: None,
        },
        Contender {
            name: "rapier-",
            build: rapier(false),
            start: 1e-3,
            cap: 0.05,
            criteria,
            measured: None,
        },
    ];

    // The largest stable steps, then the measured runs back to back at them.
    let searches: Vec<Option<Search>> = contenders
        .iter()
        .map(|c| c.search(&scene, &mut ruler, &size))
        .collect();
    let mut steps: Vec<Option<f64>> = searches
        .iter()
        .map(|s| s.as_ref().map(|s| s.step))
        .collect();
    // rapier with its defaults held to our world's deepest penetration by
    // the ruler: our stable trial at our step is our measured run (both
    // are deterministic, and our world measures with the ruler itself).
    let ours_depth = searches[0].as_ref().and_then(|search| {
        search
            .trials
            .iter()
            .find(|t| t.step == search.step)
            .and_then(|t| t.max_penetration)
    });
    if let Some(depth) = ours_depth {
        let equal = Contender {
            name: "rapier=",
            build: rapier(true),
            start: steps[1].unwrap_or(1e-3),
            cap: 0.05,
            criteria: Criteria {
                ruler_penetration_bound: Some(depth),
                ..criteria
            },
            measured: None,
        };
        println!(
            "rapier= is rapier with its defaults, held to our world's deepest penetration by the ruler, {:.3} mm:",
            depth * 1e3
        );
        steps.push(equal.search(&scene, &mut ruler, &size).map(|s| s.step));
        contenders.push(equal);
    }
    let times: Vec<f64> = [0.0, 0.25, 0.5, 1.0]
        .iter()
        .map(|f| f * size.duration)
        .collect();
    // The measured runs, in interleaved rounds so that a slow spell of the
    // machine falls on every engine alike; each keeps its fastest round
    // (the runs are deterministic: only their wall times differ).
    let mut traces = Vec::new();
    let mut walls: Vec<Vec<f64>> = vec![Vec::new(); contenders.len()];
    for round in 0..size.rounds {
        for ((c, step), walls) in contenders.iter_mut().zip(&steps).zip(&mut walls) {
            let Some(step) = *step else { continue };
            let mut trace = Trace::new(c.name, &times, 1e-3);
            let tracing = (round == 0 && trace_directory.is_some()).then_some(&mut trace);
            let measured = run(
                (c.build)().as_mut(),
                &scene,
                &mut ruler,
                &c.criteria,
                Plan {
                    step,
                    duration: size.duration,
                    trial: false,
                },
                tracing,
            );
            walls.push(measured.wall_per_second());
            if c.measured
                .as_ref()
                .is_none_or(|fastest| measured.wall < fastest.wall)
            {
                c.measured = Some(measured);
            }
            if round == 0 {
                traces.push(trace);
            }
        }
    }
    if let Some(directory) = &trace_directory {
        Trace::write(&traces.iter().collect::<Vec<_>>(), directory)
            .map_err(|e| format!("{}: {e}", directory.display()))?;
        println!(
            "wrote {}/pile-snapshots.csv and pile-series.csv",
            directory.display()
        );
    }

    println!();
    println!(
        "{:<8} {:>10} {:>7} {:>12} {:>10} {:>10} {:>10} {:>11} {:>11} {:>10} {:>9}  verdict",
        "engine",
        "step (s)",
        "steps",
        "wall/sim s",
        "max pen",
        "own pen",
        "final pen",
        "max gain",
        "drift",
        "final KE",
        "contacts"
    );
    let measured: Vec<(&str, &Run)> = contenders
        .iter()
        .filter_map(|c| c.measured.as_ref().map(|r| (c.name, r)))
        .collect();
    for (name, r) in &measured {
        let mean_contacts =
            r.samples.iter().map(|s| s.0 as f64).sum::<f64>() / r.samples.len() as f64;
        println!(
            "{:<8} {:>10.3e} {:>7} {:>10.3} s {:>7.3} mm {:>7.3} mm {:>7.3} mm {:>9.2e} J {:>9.2e} J {:>8.1e} J {:>9.0}  {}",
            name,
            r.step,
            r.steps,
            r.wall_per_second(),
            r.max_penetration.unwrap_or(f64::NAN) * 1e3,
            r.max_own_penetration * 1e3,
            r.final_penetration * 1e3,
            r.max_energy_gain,
            r.settled_drift,
            r.final_kinetic,
            mean_contacts,
            r.verdict
        );
    }
    for (c, walls) in contenders.iter().zip(&walls).filter(|(_, w)| !w.is_empty()) {
        println!(
            "{} wall per simulated s over {} interleaved rounds: {}",
            c.name,
            walls.len(),
            walls
                .iter()
                .map(|w| format!("{w:.3}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    println!(
        "(wall/sim s: the fastest round; rapier: its defaults; rapier-: contact recycling off; rapier=: its defaults \
         at the largest stable step whose max pen is at most ours. max pen: our ruler, each body's shell points in the \
         others' fields at the engine's poses, which for rapier adds its colliders' departure from the meshes; own \
         pen: the engine's own deepest contact (rapier: parry's exact query on its colliders); gain: largest \
         E(t) − E(0); drift: E(T) − E(3T/4); contacts: mean per step)"
    );
    for (name, r) in &measured {
        let fit = cost_fit(&r.samples);
        println!(
            "{name} step cost: {:.1} µs + {:.3} µs per contact, R² = {:.3}",
            fit.intercept, fit.slope, fit.r_squared
        );
    }
    for (name, r) in measured
        .iter()
        .filter(|(_, r)| !r.dynamics_samples.is_empty())
    {
        let fit = cost_fit(&r.dynamics_samples);
        println!(
            "{name} forces, solve and integration per substep: {:.1} µs + {:.3} µs per contact, R² = {:.3}",
            fit.intercept, fit.slope, fit.r_squared
        );
    }

    // The headline: ours against the faster stable rapier set-up.
    let ours = contenders[0]
        .measured
        .as_ref()
        .ok_or("our world has no stable step: no comparison")?;
    let (rapier_name, rapier) = measured[1..]
        .iter()
        .filter(|(name, _)| *name != "rapier=")
        .min_by(|a, b| a.1.wall_per_second().total_cmp(&b.1.wall_per_second()))
        .copied()
        .ok_or("rapier has no stable step in either set-up: no comparison")?;
    let fit = cost_fit(&ours.samples);
    let dynamics = cost_fit(&ours.dynamics_samples);
    println!();
    println!("rapier set-up compared: {rapier_name}");
    println!("ours_max_stable_step: {:.4e} s", ours.step);
    println!("rapier_max_stable_step: {:.4e} s", rapier.step);
    println!("ours_wall_per_sim_s: {:.3} s", ours.wall_per_second());
    println!("rapier_wall_per_sim_s: {:.3} s", rapier.wall_per_second());
    println!(
        "ratio_ours_over_rapier: {:.2} x",
        ours.wall_per_second() / rapier.wall_per_second()
    );
    println!("ours_max_penetration: {:.3e} m", ours.max_own_penetration);
    println!(
        "ours_max_mesh_penetration: {:.3e} m",
        ours.max_penetration.unwrap_or(f64::NAN)
    );
    println!(
        "rapier_max_penetration: {:.3e} m",
        rapier.max_own_penetration
    );
    println!(
        "rapier_max_mesh_penetration: {:.3e} m",
        rapier.max_penetration.unwrap_or(f64::NAN)
    );
    println!("ours_final_penetration: {:.3e} m", ours.final_penetration);
    println!(
        "rapier_final_penetration: {:.3e} m",
        rapier.final_penetration
    );
    println!("ours_energy_drift: {:.3e} J", ours.settled_drift);
    println!("rapier_energy_drift: {:.3e} J", rapier.settled_drift);
    println!("ours_cost_per_contact: {:.3} us", fit.slope);
    println!("ours_cost_per_step_intercept: {:.1} us", fit.intercept);
    println!("ours_cost_fit_r2: {:.3}", fit.r_squared);
    println!("ours_solve_cost_per_contact: {:.3} us", dynamics.slope);
    println!("ours_solve_cost_fit_r2: {:.3}", dynamics.r_squared);
    if let Some((_, equal)) = measured.iter().find(|(name, _)| *name == "rapier=") {
        println!("rapier_equal_penetration_step: {:.4e} s", equal.step);
        println!(
            "rapier_equal_penetration_wall_per_sim_s: {:.3} s",
            equal.wall_per_second()
        );
        println!(
            "rapier_equal_penetration_max_mesh_penetration: {:.3e} m",
            equal.max_penetration.unwrap_or(f64::NAN)
        );
        println!(
            "ratio_ours_over_rapier_at_equal_penetration: {:.2} x",
            ours.wall_per_second() / equal.wall_per_second()
        );
    }
    Ok(())
}
