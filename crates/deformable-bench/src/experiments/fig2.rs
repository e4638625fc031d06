//! The four jellies of Fig. 2 under the bar on the dish
//! ([`haptic_deformable::scenes::fig2_jellies`]) in our coupled world: the
//! step times of the whole scene, and each jelly's rulers at the end.

use crate::engine::Stages;
use crate::run::StepTimes;
use haptic_deformable::scenes::{fig2_jellies, Fig2Spec};
use haptic_deformable::topology::{tet_cylinder, tet_volume};
use haptic_deformable::{CoupledWorld, SolverParameters};
use nalgebra::Isometry3;
use std::time::Instant;

/// One run of the scene.
pub struct Fig2Run {
    pub times: StepTimes,
    /// Per jelly: its paradigm, nodes, volume change `(V − V₀)/V₀` at the
    /// end, and its deepest node below the dish's top at the end (m,
    /// negative: clearance).
    pub jellies: Vec<(&'static str, usize, f64, f64)>,
    /// How far the bar's centre sank over the run (m).
    pub bar_drop: f64,
    /// Bodies quarantined over the run.
    pub quarantined: u64,
    /// Seconds per step in each stage, medians over the run.
    pub stages: Stages,
}

/// Runs the scene of `spec` at `parameters` for `duration` seconds of
/// `step`-second steps, timing each step call alone.
pub fn run_fig2(
    spec: &Fig2Spec,
    parameters: SolverParameters,
    step: f64,
    duration: f64,
) -> Result<Fig2Run, String> {
    let scene = fig2_jellies(spec).map_err(|e| e.to_string())?;
    let (bar, jelly_count) = (scene.bar, scene.jellies.len());
    let mut world = CoupledWorld::new(scene.rigid, scene.jellies, vec![], parameters)
        .map_err(|e| e.to_string())?;
    // Every jelly is the same cylinder, so one mesh's tetrahedra measure all.
    let tets = tet_cylinder(
        spec.jelly_rings,
        spec.jelly_layers,
        spec.jelly_radius,
        spec.jelly_height,
        &Isometry3::identity(),
    )
    .tets;
    let volumes = |w: &CoupledWorld| -> Vec<f64> {
        w.bodies()
            .iter()
            .map(|b| tets.iter().map(|t| tet_volume(&b.state.positions, t)).sum())
            .collect()
    };
    let start = volumes(&world);
    let bar_start = world.rigid().bodies()[bar].state.pose.translation.vector.z;
    let steps = (duration / step).round() as usize;
    let mut times = Vec::with_capacity(steps);
    let mut stages = Vec::with_capacity(steps);
    for _ in 0..steps {
        let began = Instant::now();
        let report = world.step(step);
        let took = began.elapsed().as_secs_f64();
        times.push(took);
        stages.push(Stages::of(&report, took));
    }
    let stages = Stages::medians(&stages);
    let end = volumes(&world);
    let jellies = (0..jelly_count)
        .map(|k| {
            let body = &world.bodies()[k];
            let lowest = body
                .state
                .positions
                .iter()
                .map(|p| p.z)
                .fold(f64::INFINITY, f64::min);
            (
                body.model.paradigm.name(),
                body.state.positions.len(),
                end[k] / start[k] - 1.0,
                -lowest,
            )
        })
        .collect();
    Ok(Fig2Run {
        times: StepTimes(times),
        jellies,
        bar_drop: bar_start - world.rigid().bodies()[bar].state.pose.translation.vector.z,
        quarantined: world.quarantined(),
        stages,
    })
}

/// Settings of `fig2` that replace the tuned ones.
pub struct Overrides {
    pub substeps: Option<usize>,
    pub elastic_passes: Option<usize>,
    pub iterations: Option<usize>,
    pub projection_sweeps: Option<usize>,
}

/// The scene alone, `rounds` runs of `duration` seconds of `step`-second
/// steps, at the scene's own parameters ([`Fig2Spec::solver_parameters`])
/// with `overrides`; the headline `fig2_jellies_step_median` over the
/// pooled rounds.
pub fn fig2(rounds: usize, duration: f64, step: f64, overrides: Overrides) -> Result<(), String> {
    if !(step.is_finite() && step > 0.0) {
        return Err(format!("--step {step} s: must be finite and positive"));
    }
    if !(duration.is_finite() && duration >= step) {
        return Err(format!(
            "--duration {duration} s: must be at least one step ({step} s)"
        ));
    }
    let spec = Fig2Spec::default();
    let mut parameters = Fig2Spec::solver_parameters();
    parameters.substeps = overrides.substeps.unwrap_or(parameters.substeps);
    parameters.elastic_passes = overrides
        .elastic_passes
        .unwrap_or(parameters.elastic_passes);
    parameters.iterations = overrides.iterations.unwrap_or(parameters.iterations);
    parameters.projection_sweeps = overrides
        .projection_sweeps
        .unwrap_or(parameters.projection_sweeps);
    parameters
        .check()
        .map_err(|e| format!("fig. 2 settings: {e}"))?;
    print_fig2_scene(&spec, step, duration);
    println!(
        "ours: {} substep(s), {} elastic pass(es), {} iterations, {} projection passes",
        parameters.substeps,
        parameters.elastic_passes,
        parameters.iterations,
        parameters.projection_sweeps
    );
    let mut times = StepTimes::default();
    for round in 1..=rounds {
        println!("fig. 2 round {round}:");
        let run = run_fig2(&spec, parameters, step, duration)?;
        print_fig2_run(&run);
        times = times.pooled(&run.times);
    }
    println!("fig2_jellies_step_median: {:.2} ms", 1e3 * times.median());
    Ok(())
}

/// The scene in words.
pub fn print_fig2_scene(spec: &Fig2Spec, step: f64, duration: f64) {
    println!(
        "fig. 2: four jelly cylinders r = {r} m, h = {h} m ({rings} rings × {layers} layers of nodes), {rho} kg/m³, \
         E = {e} Pa, ν = {nu}, {spacing} m apart on a dish {dish}, one per paradigm (mass–spring, co-rotational FEM, \
         XPBD, shape matching), under a free {bl} × {bw} × {bt} m bar of {bd} kg/m³, friction μ = {mu}; \
         step {step} s, {duration} s simulated",
        r = spec.jelly_radius,
        h = spec.jelly_height,
        rings = spec.jelly_rings,
        layers = spec.jelly_layers,
        rho = spec.jelly_density,
        e = spec.young_modulus,
        nu = spec.poisson_ratio,
        spacing = spec.spacing,
        dish = if spec.dish_on_ground {
            "free on a fixed ground"
        } else {
            "fixed in place"
        },
        bl = spec.bar_size[0],
        bw = spec.bar_size[1],
        bt = spec.bar_size[2],
        bd = spec.bar_density,
        mu = spec.friction,
    );
}

/// One run's line: step times, then each jelly's rulers.
pub fn print_fig2_run(run: &Fig2Run) {
    println!(
        "  fig2: step median {:.2} ms, p95 {:.2} ms, max {:.2} ms; bar sank {:.1} mm; quarantined {}",
        1e3 * run.times.median(),
        1e3 * run.times.p95(),
        1e3 * run.times.max(),
        1e3 * run.bar_drop,
        run.quarantined
    );
    println!("    stages (medians per step): {}", run.stages);
    for (name, nodes, volume, depth) in &run.jellies {
        println!(
            "    {name}: {nodes} nodes, final volume change {volume:+.4}, deepest node below the dish {:.2} mm",
            1e3 * depth
        );
    }
}
