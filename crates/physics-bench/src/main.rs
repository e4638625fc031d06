//! `haptic-physics-bench`: the rigid world's benchmarks, each printing a
//! table and then its headline figures as `name: value unit` lines.
//!
//! - `stable-step`: Xu, Zhao & Barbič's Fig. 11 experiment with mugs for
//!   bowls: the largest stable step of the semi-implicit integrator and of
//!   symplectic Euler on the same drop, found by bisection.
//! - `versus-rapier`: a pile of mugs, cubes and tori in our world and in
//!   rapier, each at its own largest stable step, in one process.
//! - `pile`: that pile in our world alone at a given step (for profiling).

mod ours;
mod peer;
mod run;
mod scene;
mod trace;

use clap::{Parser, Subcommand};
use haptic_physics::{Integrator, RigidBody, World, WorldParameters};
use ours::{Ours, Ruler};
use peer::{peer_shapes, Peer, LENGTH_UNIT};
use run::{cost_fit, largest_stable_step, run, trial, Criteria, Engine, Plan, Run, Search};
use scene::{mesh_directory, Geometry, Mix, Scene};
use std::path::PathBuf;
use std::time::Instant;
use trace::Trace;

#[derive(Parser)]
#[command(about = "Benchmarks of the rigid world")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Largest stable step, semi-implicit against symplectic Euler, on a
    /// drop of mugs (Xu, Zhao & Barbič Fig. 11).
    StableStep {
        /// A short smoke run: fewer mugs, a shorter drop, a coarser bisection.
        #[arg(long)]
        quick: bool,
        #[command(flatten)]
        tuning: Tuning,
    },
    /// A pile of mugs, cubes and tori in our world and in rapier.
    VersusRapier {
        /// A short smoke run: fewer bodies, a shorter drop, a coarser bisection.
        #[arg(long)]
        quick: bool,
        /// Write the pile's snapshots and series as CSV into this directory.
        #[arg(long)]
        trace: Option<PathBuf>,
        #[command(flatten)]
        tuning: Tuning,
    },
    /// The versus-rapier pile in our world alone at one step, without the
    /// ruler (for profiling).
    Pile {
        /// Step (s).
        #[arg(long, default_value_t = 1e-3)]
        step: f64,
        /// Simulated seconds.
        #[arg(long, default_value_t = 2.0)]
        duration: f64,
        #[command(flatten)]
        tuning: Tuning,
    },
}

/// Contact and sampling parameters (defaults: the tuned pile's).
#[derive(clap::Args)]
struct Tuning {
    /// Contact stiffness per finest shell point (N/m).
    #[arg(long)]
    stiffness: Option<f64>,
    /// Contact damping per finest shell point (N·s/m).
    #[arg(long)]
    damping: Option<f64>,
    /// Shell points per body (at least 100).
    #[arg(long, value_parser = clap::value_parser!(u64).range(100..))]
    shell_points: Option<u64>,
    /// Field nodes along a body's longest side (at least 8).
    #[arg(long, value_parser = clap::value_parser!(u32).range(8..))]
    field_resolution: Option<u32>,
    /// The farthest a body near another may move between two contact
    /// detections before our world splits its step (m).
    #[arg(long)]
    max_travel: Option<f64>,
    /// How near the surface our shell points are kept between traversals (m).
    #[arg(long)]
    detection_margin: Option<f64>,
}

impl Tuning {
    /// The geometry and our world's parameters (semi-implicit), checked as
    /// the world checks them.
    fn apply(&self) -> Result<(Geometry, WorldParameters), String> {
        let mut geometry = Geometry::default();
        let mut parameters = scene::world_parameters();
        let contact = &mut parameters.contact;
        if let Some(k) = self.stiffness {
            contact.stiffness = k;
        }
        if let Some(c) = self.damping {
            contact.damping = c;
        }
        if let Some(margin) = self.detection_margin {
            contact.detection_margin = margin;
        }
        if let Some(travel) = self.max_travel {
            parameters.max_travel = travel;
        }
        if let Some(n) = self.shell_points {
            geometry.body.shell_points = n as usize;
        }
        if let Some(n) = self.field_resolution {
            geometry.body.field_resolution = n;
        }
        World::new(Vec::new(), Vec::new(), parameters)
            .map_err(|e| format!("--stiffness/--damping/--max-travel/--detection-margin: {e}"))?;
        Ok((geometry, parameters))
    }
}

/// A benchmark's size.
struct Size {
    bodies: usize,
    columns: usize,
    /// Simulated seconds per run.
    duration: f64,
    /// Relative width the bisection stops at.
    resolution: f64,
    /// Measured runs of each engine at its step, interleaved.
    rounds: usize,
}

fn main() {
    let outcome = match Cli::parse().command {
        Command::StableStep { quick, tuning } => stable_step(
            if quick {
                Size {
                    bodies: 6,
                    columns: 2,
                    duration: 0.25,
                    resolution: 0.5,
                    rounds: 1,
                }
            } else {
                Size {
                    bodies: 20,
                    columns: 3,
                    duration: 1.0,
                    resolution: 0.1,
                    rounds: 1,
                }
            },
            &tuning,
        ),
        Command::VersusRapier {
            quick,
            trace,
            tuning,
        } => versus_rapier(
            if quick {
                Size {
                    bodies: 9,
                    columns: 3,
                    duration: 0.3,
                    resolution: 0.5,
                    rounds: 1,
                }
            } else {
                Size {
                    bodies: 50,
                    columns: 4,
                    duration: 2.0,
                    resolution: 0.1,
                    rounds: 3,
                }
            },
            trace,
            &tuning,
        ),
        Command::Pile {
            step,
            duration,
            tuning,
        } => pile(step, duration, &tuning),
    };
    if let Err(error) = outcome {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}

fn print_parameters(
    scene: &Scene,
    (geometry, parameters): &(Geometry, WorldParameters),
    criteria: &Criteria,
    size: &Size,
) {
    let c = &parameters.contact;
    println!(
        "contact: k = {:.3e} N/m and c = {} N·s/m per finest shell point ({:?} damping), friction anchors k_f = {:.3e} N/m, μ = {}; \
         our steps split beyond {} mm of travel of a body near another, points within {} mm kept between traversals",
        c.stiffness,
        c.damping,
        c.damping_mode,
        c.friction_stiffness,
        scene::FRICTION,
        parameters.max_travel * 1e3,
        c.detection_margin * 1e3
    );
    let (b, f) = (&geometry.body, &geometry.floor);
    println!(
        "geometry: bodies {} shell points in {} levels, field {} nodes along the longest side; floor {} points, {} levels, {} nodes",
        b.shell_points, b.tree_levels, b.field_resolution, f.shell_points, f.tree_levels, f.field_resolution
    );
    for shape in &scene.shapes {
        let e = shape.mesh.aabb().extents();
        println!(
            "shape {}: {:.1} × {:.1} × {:.1} mm, {:.1} g, {} triangles",
            shape.name,
            e.x * 1e3,
            e.y * 1e3,
            e.z * 1e3,
            shape.mass.mass * 1e3,
            shape.mesh.triangles.len()
        );
    }
    println!(
        "pile: {} bodies, {} per layer, dropped from rest; {} s simulated per run",
        scene.len(),
        size.columns * size.columns,
        size.duration
    );
    println!(
        "stable: at every step (a) KE + U ≤ E(0) + {:.3e} J (1 % of the initial potential energy above the floor: \
         no energy created), (b) the engine's own deepest contact penetration ≤ {:.3} mm ({}), \
         (c) no body quarantined or non-finite, (d) no surface of a body that could touch another moved more than \
         {:.2} mm between two of the engine's contact detections (half the mug wall: a point crossing more than half \
         a wall between detections comes out on the far side unseen; rapier detects once a step, our world once a \
         substep)",
        criteria.energy_tolerance,
        criteria.penetration_bound * 1e3,
        scene.penetration_bound_basis,
        criteria.motion_bound * 1e3
    );
}

fn log_trial(engine: &str) -> impl FnMut(&Run) + '_ {
    move |r: &Run| {
        println!(
            "  {engine} h = {:.4e} s: {} after {} steps ({:.2} s wall)",
            r.step, r.verdict, r.steps, r.wall
        );
    }
}

fn stable_step(size: Size, tuning: &Tuning) -> Result<(), String> {
    let scene = Scene::pile(Mix::Mugs, size.bodies, size.columns, &mesh_directory())?;
    let setup = tuning.apply()?;
    let bodies = scene.bodies(&setup.0);
    let rulers = Rulers::of(&scene, &setup.0, &bodies);
    let criteria = Criteria::of(&scene);
    print_parameters(&scene, &setup, &criteria, &size);
    let mut ruler = rulers.ruler();
    // One detection and one integrator step per step: the integrators'
    // own stability, without substeps.
    let setup = (
        setup.0,
        WorldParameters {
            max_travel: 0.0,
            ..setup.1
        },
    );
    let mut searches = Vec::new();
    for (integrator, name) in [
        (Integrator::SemiImplicit, "semi-implicit"),
        (Integrator::SymplecticEuler, "symplectic Euler"),
    ] {
        println!("{name}:");
        let search = largest_stable_step(
            |h| {
                let mut engine = Ours::from_bodies(
                    bodies.clone(),
                    scene.len(),
                    WorldParameters {
                        integrator,
                        ..setup.1
                    },
                    rulers.ours(),
                );
                trial(&mut engine, &scene, &mut ruler, &criteria, h, size.duration)
            },
            1e-4,
            1e-2,
            size.resolution,
            log_trial(name),
        )?;
        print_search(name, &search);
        searches.push(search);
    }
    println!();
    println!("semi_implicit_max_stable_step: {:.4e} s", searches[0].step);
    println!(
        "symplectic_euler_max_stable_step: {:.4e} s",
        searches[1].step
    );
    println!(
        "stable_step_ratio: {:.2} x",
        searches[0].step / searches[1].step
    );
    Ok(())
}

/// The pile of mugs, cubes and tori of `size`.
fn mixed_pile(size: &Size) -> Result<Scene, String> {
    Scene::pile(
        Mix::MugsCubesTori,
        size.bodies,
        size.columns,
        &mesh_directory(),
    )
}

/// The 50-body pile in our world alone at `step`, the stability test
/// applied to every step.
fn pile(step: f64, duration: f64, tuning: &Tuning) -> Result<(), String> {
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
    let setup = tuning.apply()?;
    let bodies = scene.bodies(&setup.0);
    let rulers = Rulers::of(&scene, &setup.0, &bodies);
    let criteria = Criteria::of(&scene);
    print_parameters(&scene, &setup, &criteria, &size);
    let mut ruler = rulers.ruler();
    let mut engine = Ours::from_bodies(bodies, scene.len(), setup.1, rulers.ours());
    let r = trial(&mut engine, &scene, &mut ruler, &criteria, step, duration);
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

/// The bodies penetration is measured with: the scene's at the default
/// geometry (1,000 shell points a body), whatever geometry our world runs.
struct Rulers {
    bodies: Vec<RigidBody>,
    /// Our world's shells are not the ruler's, so it needs its own ruler.
    separate: bool,
}

impl Rulers {
    /// For our world's `bodies`, built at `geometry`.
    fn of(scene: &Scene, geometry: &Geometry, bodies: &[RigidBody]) -> Rulers {
        let separate = *geometry != Geometry::default();
        Rulers {
            bodies: if separate {
                scene.bodies(&Geometry::default())
            } else {
                bodies.to_vec()
            },
            separate,
        }
    }

    /// A ruler for the engines' poses.
    fn ruler(&self) -> Ruler {
        Ruler::new(self.bodies.clone())
    }

    /// Our world's own ruler, if its shells are not the ruler's.
    fn ours(&self) -> Option<Ruler> {
        self.separate.then(|| self.ruler())
    }
}

fn print_search(name: &str, search: &Search) {
    match search.unstable {
        Some(u) => println!(
            "  {name}: largest stable step {:.4e} s (unstable at {:.4e} s), {} trials",
            search.step,
            u,
            search.trials.len()
        ),
        None => println!(
            "  {name}: stable up to the cap {:.4e} s, {} trials",
            search.step,
            search.trials.len()
        ),
    }
}

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

fn versus_rapier(
    size: Size,
    trace_directory: Option<PathBuf>,
    tuning: &Tuning,
) -> Result<(), String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use haptic_physics::GeometryResolution;
    use scene::GRAVITY;

    /// Shells and fields coarse enough for a quick test.
    fn coarse_geometry() -> Geometry {
        Geometry {
            body: GeometryResolution {
                shell_points: 300,
                tree_levels: 3,
                field_resolution: 24,
            },
            floor: GeometryResolution {
                shell_points: 2000,
                tree_levels: 4,
                field_resolution: 24,
            },
        }
    }

    /// 20 steps of 1 ms of a mug, a cube and a torus in both engines: the
    /// lowest layer starts 1 cm above the floor, so every body is still in
    /// free fall and has dropped `g h² n(n+1)/2` (first-order integrators;
    /// rapier's substeps bring it towards `g t²/2`); both runs are stable.
    #[test]
    fn a_three_body_pile_falls_freely_in_both_engines() {
        let scene = Scene::pile(Mix::MugsCubesTori, 3, 2, &mesh_directory()).unwrap();
        let bodies = scene.bodies(&coarse_geometry());
        let criteria = Criteria::of(&scene);
        let mut ruler = Ruler::new(bodies.clone());
        let shapes = peer_shapes(&scene);
        let (h, n) = (1e-3, 20);
        let engines: [Box<dyn Engine>; 2] = [
            Box::new(Ours::from_bodies(
                bodies.clone(),
                scene.len(),
                scene::world_parameters(),
                None,
            )),
            Box::new(Peer::new(&scene, &shapes, false)),
        ];
        for mut engine in engines {
            let result = run(
                engine.as_mut(),
                &scene,
                &mut ruler,
                &criteria,
                Plan {
                    step: h,
                    duration: n as f64 * h,
                    trial: false,
                },
                None,
            );
            assert_eq!(result.steps, n);
            assert!(result.verdict.is_stable(), "{}", result.verdict);
            assert_eq!(result.max_penetration, Some(0.0));
            let first_order = GRAVITY * h * h * (n * (n + 1)) as f64 / 2.0;
            let exact = GRAVITY * (n as f64 * h).powi(2) / 2.0;
            for (start, end) in scene.initial_poses.iter().zip(engine.poses()) {
                let drop = start.translation.vector.z - end.translation.vector.z;
                assert!(
                    drop >= exact * (1.0 - 1e-9) && drop <= first_order * (1.0 + 1e-9),
                    "{drop} not in [{exact}, {first_order}]"
                );
                assert!(
                    (start.translation.vector.xy() - end.translation.vector.xy()).norm() < 1e-12
                );
            }
        }
    }

    /// A trial held to a depth by the ruler measures every step and fails
    /// once the ruler finds a body deeper; without the bound a trial skips
    /// the ruler.
    #[test]
    fn a_ruler_bound_holds_a_trial_to_that_depth() {
        let scene = Scene::pile(Mix::MugsCubesTori, 3, 2, &mesh_directory()).unwrap();
        let mut ruler = Ruler::new(scene.bodies(&coarse_geometry()));
        let shapes = peer_shapes(&scene);
        let criteria = Criteria::of(&scene);
        let mut rapier_trial = |criteria: &Criteria| {
            let mut rapier = Peer::new(&scene, &shapes, true);
            trial(&mut rapier, &scene, &mut ruler, criteria, 1e-3, 0.3)
        };
        let free = rapier_trial(&criteria);
        assert!(free.verdict.is_stable(), "{}", free.verdict);
        assert_eq!(free.max_penetration, None);
        let bound = 1e-5;
        let result = rapier_trial(&Criteria {
            ruler_penetration_bound: Some(bound),
            ..criteria
        });
        let run::Verdict::Penetration { depth, .. } = result.verdict else {
            panic!("{}", result.verdict);
        };
        assert!(depth > bound && result.max_penetration == Some(depth));
        assert!(result.steps < 300, "the trial went on after the bound");
    }
}
