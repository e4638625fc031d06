//! The experiments, one a module, and what they share: the engine set-ups
//! they compare, and the lines that print scenes, runs and headline figures
//! (`name: value unit`, one a line).

pub mod cloth;
pub mod cloth_figure;
pub mod fig2;
pub mod jelly;
pub mod pgs_scaling;
pub mod scenes;
pub mod sweep;

use crate::engine::Engine;
use crate::run::{ClothRun, Extremes, JellyRun, StepTimes};
use crate::scene::{ClothScene, JellyScene};

/// One engine set-up of a comparison.
pub struct Contender<'a> {
    /// The headline figures' prefix (`rapier`, `rapier_stiff`, `ours`).
    pub name: &'static str,
    /// Its settings, in words.
    pub settings: String,
    /// A fresh engine on the experiment's scene (not timed).
    #[allow(clippy::type_complexity)]
    pub build: Box<dyn Fn() -> Result<Box<dyn Engine>, String> + 'a>,
}

pub fn print_cloth_scene(scene: &ClothScene, h: f64, duration: f64) {
    let c = scene.ball_centre();
    println!(
        "cloth: {n} × {n} nodes, {side} m square, {mass} kg, flat at z = {z:.3} m, falling from rest under g = {g} m/s² \
         onto a fixed ball of radius {r} m centred at ({x}, {y}, {cz}) m, ground z = {ground} m, friction μ = {mu}; \
         step {h} s, {duration} s simulated",
        n = scene.nodes_per_side,
        side = scene.side,
        mass = scene.mass,
        z = c.z + scene.height_above_centre,
        g = crate::scene::GRAVITY,
        r = scene.ball_radius,
        x = c.x,
        y = c.y,
        cz = c.z,
        ground = scene.ground_height(),
        mu = scene.friction,
    );
    println!(
        "rulers: strain (|x_j − x_i| − L)/L over the {} structural (row and column) edges, and over those whose midpoint \
         is above the ball (within its radius of its vertical axis, above its centre); penetration r − |x − c| into the \
         ball and −z below the ground of the deepest node (negative: the nearest node's clearance); peak over the run and \
         final",
        scene.structural_edges().pairs.len()
    );
}

pub fn print_jelly_scene(scene: &JellyScene, h: f64, duration: f64) {
    let mesh = scene.mesh();
    println!(
        "jelly: cylinder r = {} m, h = {} m, axis vertical, {} nodes ({} rings × {} layers), {} tetrahedra, {:.4e} m³, \
         {:.3} kg ({} kg/m³), E = {} Pa, ν = {}, dropped from rest {} m above the ground (friction μ = {}); step {h} s, \
         {duration} s simulated",
        scene.radius,
        scene.height,
        mesh.positions.len(),
        scene.rings,
        scene.layers,
        mesh.cells.len(),
        mesh.volume,
        mesh.masses.iter().sum::<f64>(),
        scene.density,
        scene.young_modulus,
        scene.poisson_ratio,
        scene.drop_height,
        scene.friction
    );
    println!(
        "rulers: penetration −z of the deepest node below the ground (negative: clearance), (V − V₀)/V₀ of the cells, \
         the nodes' mean height, the fastest node over the last step"
    );
}

fn ms(seconds: f64) -> f64 {
    seconds * 1e3
}

fn timing_columns(t: &crate::run::Timing) -> String {
    let failed = t
        .failed_at
        .map_or(String::new(), |at| format!(" FAILED at t = {at:.2} s"));
    format!(
        "{} steps ({} s simulated), step median {:.2} ms, p95 {:.2} ms, max {:.2} ms, {:.3} s wall per simulated s; final speed {:.3} m/s{failed}",
        t.steps(),
        t.simulated(),
        ms(t.step_walls.median()),
        ms(t.step_walls.p95()),
        ms(t.step_walls.max()),
        t.wall_per_simulated_second(),
        t.final_speed
    )
}

fn extremes(e: &Extremes, scale: f64) -> String {
    format!("peak {:.3} final {:.3}", e.peak * scale, e.last * scale)
}

/// The stage line of `t`, for engines that time their stages.
fn print_stages(t: &crate::run::Timing) {
    if let Some(stages) = &t.stages {
        println!("    stages (medians per step): {stages}");
    }
}

pub fn print_cloth_run(name: &str, run: &ClothRun) {
    println!("  {name}: {}", timing_columns(&run.timing));
    print_stages(&run.timing);
    println!(
        "    strain: largest {}, largest over the ball {}, mean over the ball {}; penetration (mm): ball {}, ground {}",
        extremes(&run.strain, 1.0),
        run.strain_over_ball
            .as_ref()
            .map_or("none".to_string(), |e| extremes(e, 1.0)),
        run.mean_strain_over_ball
            .as_ref()
            .map_or("none".to_string(), |e| extremes(e, 1.0)),
        extremes(&run.ball_penetration, 1e3),
        extremes(&run.ground_penetration, 1e3)
    );
}

pub fn print_jelly_run(name: &str, run: &JellyRun) {
    println!("  {name}: {}", timing_columns(&run.timing));
    print_stages(&run.timing);
    println!(
        "    ground penetration (mm) {}; volume change: largest {:+.4}, final {:+.4}; final mean height {:.4} m",
        extremes(&run.ground_penetration, 1e3),
        run.volume_change.peak,
        run.volume_change.last,
        run.final_mean_height
    );
}

/// The step times of `runs` pooled.
pub(crate) fn pooled<'a>(runs: impl Iterator<Item = &'a crate::run::Timing>) -> StepTimes {
    runs.fold(StepTimes::default(), |all, t| all.pooled(&t.step_walls))
}

/// The size and the step times of a set-up's rounds: `times` pooled over
/// rounds of `first`'s length, `simulated` seconds in all.
fn timing_headline(
    prefix: &str,
    first: &crate::run::Timing,
    times: &StepTimes,
    simulated: f64,
) -> Vec<String> {
    let elements: usize = first.size.elements.iter().map(|(_, n)| n).sum();
    let mut lines = vec![
        format!("{prefix}_nodes: {} count", first.size.nodes),
        format!("{prefix}_elements: {elements} count"),
        format!("{prefix}_simulated_per_run: {:.2} s", first.simulated()),
        format!("{prefix}_step_median: {:.2} ms", ms(times.median())),
        format!("{prefix}_step_p95: {:.2} ms", ms(times.p95())),
        format!("{prefix}_step_max: {:.2} ms", ms(times.max())),
        format!(
            "{prefix}_wall_per_simulated_second: {:.3} s/s",
            times.total() / simulated
        ),
    ];
    if let Some(rows) = first.size.peak_constraints {
        lines.push(format!("{prefix}_peak_constraints: {rows} count"));
    }
    lines
}

/// The headline figures of `runs` (one set-up's rounds): step times pooled
/// over the rounds, the rulers' figures from the first round (the engines
/// are deterministic).
pub fn cloth_headline(name: &str, runs: &[ClothRun]) -> Vec<String> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    let prefix = format!("{name}_cloth");
    let times = pooled(runs.iter().map(|r| &r.timing));
    let simulated: f64 = runs.iter().map(|r| r.timing.simulated()).sum();
    let mut lines = timing_headline(&prefix, &first.timing, &times, simulated);
    lines.push(format!(
        "{prefix}_max_strain: {:.4} ratio",
        first.strain.peak
    ));
    lines.push(format!(
        "{prefix}_final_strain: {:.4} ratio",
        first.strain.last
    ));
    if let Some(over) = &first.strain_over_ball {
        lines.push(format!(
            "{prefix}_max_strain_over_ball: {:.4} ratio",
            over.peak
        ));
        lines.push(format!(
            "{prefix}_final_strain_over_ball: {:.4} ratio",
            over.last
        ));
    }
    if let Some(mean) = &first.mean_strain_over_ball {
        lines.push(format!(
            "{prefix}_max_mean_strain_over_ball: {:.4} ratio",
            mean.peak
        ));
        lines.push(format!(
            "{prefix}_final_mean_strain_over_ball: {:.4} ratio",
            mean.last
        ));
    }
    lines.push(format!(
        "{prefix}_max_ball_penetration: {:.3} mm",
        ms(first.ball_penetration.peak)
    ));
    lines.push(format!(
        "{prefix}_max_ground_penetration: {:.3} mm",
        ms(first.ground_penetration.peak)
    ));
    if let Some(at) = first.timing.failed_at {
        lines.push(format!("{prefix}_failed_at: {at:.2} s"));
    }
    lines
}

/// The headline figures of a jelly set-up's rounds, as [`cloth_headline`].
pub fn jelly_headline(name: &str, runs: &[JellyRun]) -> Vec<String> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    let prefix = format!("{name}_jelly");
    let times = pooled(runs.iter().map(|r| &r.timing));
    let simulated: f64 = runs.iter().map(|r| r.timing.simulated()).sum();
    let mut lines = timing_headline(&prefix, &first.timing, &times, simulated);
    lines.push(format!(
        "{prefix}_max_ground_penetration: {:.3} mm",
        ms(first.ground_penetration.peak)
    ));
    lines.push(format!(
        "{prefix}_final_ground_penetration: {:.3} mm",
        ms(first.ground_penetration.last)
    ));
    lines.push(format!(
        "{prefix}_volume_change_at_rest: {:+.4} ratio",
        first.volume_change.last
    ));
    lines.push(format!(
        "{prefix}_largest_volume_change: {:+.4} ratio",
        first.volume_change.peak
    ));
    if let Some(at) = first.timing.failed_at {
        lines.push(format!("{prefix}_failed_at: {at:.2} s"));
    }
    lines
}
