//! Per-cycle cost of the whole rendering stage (`RenderingCycle::step`):
//! collision, assembly, friction and coupling, each and in total, against the
//! contact count k ∈ {10, 30, 100, 300} and ℓ ∈ {4, 8}, for both static
//! friction models, each set explicitly: static friction with bounded
//! pre-sliding (`FrictionModel::PreSliding` with the default 5 µm, the
//! default model) and the paper's LP (`FrictionModel::StaticLp`), each with
//! its fast and its reference (clarabel) solver.
//!
//! The scene: a 5 cm cube's point shell of 10,000 points (an 8-level tree, as
//! Zhao, Li & Barbič use in §5 for 7,772–30,017 points) resting on one edge on a floor
//! field (a slab, dense 64³), `μ = 0.5`, the edge along x under the cube's
//! centre so that a vertical push is balanced. The contacts form a strip
//! along the edge whose width grows with the push: with `n > N0` contacts the
//! summed stiffness is `k_n N0`, so the depth, and with it k, is
//! proportional to the pushing force. Per target k the force is bisected
//! (pre-sliding model, fast solver, ℓ = 8) until the settled contact count
//! is within 5%; both models use that force.
//!
//! Per (k, ℓ, model, solver): the manipulandum is lowered onto the pushed pose and
//! held until the object settles, then every measured cycle the push is
//! jittered by up to ±3%, the same sequence for both solvers, so the object
//! stays in static friction (a lateral or rotational jitter of a few mN or
//! mN·m tips this edge contact into sliding: friction alone must balance the
//! couple of a load at the centre, as in `cube_corner`). Medians and 99th
//! percentiles are over the measured cycles.
//!
//! Prints a table, then one `name: value unit` line per figure, named
//! `cycle_k{k}_l{ℓ}_{model}_{solver}…` with model `pre_sliding` or `lp`, and
//! per (k, ℓ, model) the reference solver's friction-stage and whole-cycle
//! medians over the fast solver's (`friction_…_speedup`, `cycle_…_speedup`).
//! Arguments: `--cycles N` measured cycles per point (default 5,000),
//! `--reference-cycles N` with the reference solver (default 2,000).

use haptic_contact::{EnvironmentGeometry, EnvironmentObject, ShellTree, ToolGeometry};
use haptic_friction::FrictionState;
use haptic_friction::PreSlidingParameters;
use haptic_mesh::shapes::box_mesh;
use haptic_mesh::shapes::CUBE_HALF;
use haptic_pointshell::{sample_point_shell, spacing_for_count};
use haptic_render::{FrictionModel, RenderParameters, RenderingCycle, SolverChoice, StageTimings};
use haptic_sdf::{DenseField, DenseOptions, NoProgress};
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::f64::consts::FRAC_PI_4;
use std::sync::Arc;
use std::time::Duration;

const SHELL_POINTS: usize = 10_000;
const TREE_LEVELS: usize = 8;
const TARGETS: [usize; 4] = [10, 30, 100, 300];
const SIDES: [usize; 2] = [4, 8];
/// The headline point `(k, ℓ)`, the one docs/rendering.md quotes.
const HEADLINE: (usize, usize) = (100, 8);
const MU: f64 = 0.5;
/// Cycles lowering the manipulandum, then holding before measuring.
const LOWER_CYCLES: usize = 300;
const SETTLE_CYCLES: usize = 700;
/// Relative jitter of the push in the measured cycles.
const PUSH_JITTER: f64 = 0.03;

/// The cube, the floor and the cube's pose with its lower edge on the floor.
struct Bench {
    moving: ToolGeometry,
    floor: EnvironmentObject,
    touching: Isometry3<f64>,
}

impl Bench {
    fn new() -> Self {
        let cube = box_mesh(Vector3::repeat(CUBE_HALF));
        let shell = sample_point_shell(&cube, spacing_for_count(&cube, SHELL_POINTS), 7);
        let moving = ToolGeometry {
            shell: Some(Arc::new(ShellTree::build(shell, TREE_LEVELS))),
            field: None,
        };
        // A 16 × 16 × 4 cm slab whose top face is z = 0.
        let slab = box_mesh(Vector3::new(0.08, 0.08, 0.02));
        let options = DenseOptions {
            resolution: 64,
            padding_fraction: 0.1,
        };
        let floor = EnvironmentObject {
            pose: Isometry3::translation(0.0, 0.0, -0.02),
            geometry: EnvironmentGeometry::Field(Arc::new(DenseField::build(
                &slab,
                &options,
                &NoProgress,
            ))),
            friction_coefficient: MU,
        };
        let touching = Isometry3::from_parts(
            Translation3::new(0.0, 0.0, CUBE_HALF * 2f64.sqrt()),
            UnitQuaternion::from_axis_angle(&Vector3::x_axis(), FRAC_PI_4),
        );
        Self {
            moving,
            floor,
            touching,
        }
    }

    /// The manipulandum pose that pushes the object down with `force` (N).
    fn pushed(&self, force: f64, p: &RenderParameters) -> Isometry3<f64> {
        let mut pose = self.touching;
        pose.translation.vector.z -= force / p.coupling.translational_stiffness;
        pose
    }

    /// A cycle pushed down with `force`, settled. Returns it and the mean
    /// contact count over the settling hold's second half.
    fn settled(
        &self,
        force: f64,
        sides: usize,
        friction: FrictionModel,
        solver: SolverChoice,
    ) -> (RenderingCycle, f64) {
        let p = RenderParameters {
            pyramid_sides: sides,
            friction,
            solver,
            ..RenderParameters::default()
        };
        let target = self.pushed(force, &p);
        let mut cycle = RenderingCycle::new(
            self.moving.clone(),
            vec![self.floor.clone()],
            p,
            self.touching,
        )
        .expect("valid scene");
        for i in 0..LOWER_CYCLES {
            let t = (i + 1) as f64 / LOWER_CYCLES as f64;
            cycle.step(&self.touching.lerp_slerp(&target, t));
        }
        let mut contacts = 0;
        for i in 0..SETTLE_CYCLES {
            let report = cycle.step(&target);
            if 2 * i >= SETTLE_CYCLES {
                contacts += report.contacts;
            }
        }
        let mean = contacts as f64 / (SETTLE_CYCLES - SETTLE_CYCLES / 2) as f64;
        (cycle, mean)
    }

    /// The push (N) whose settled contact count is within 5% of `target`,
    /// bisected in log space.
    fn force_for(&self, target: usize) -> f64 {
        let (mut low, mut high) = (1e-3_f64, 100.0_f64);
        let mut force = (low * high).sqrt();
        for _ in 0..30 {
            force = (low * high).sqrt();
            let (_, k) = self.settled(force, 8, pre_sliding(), SolverChoice::Fast);
            if (k / target as f64 - 1.0).abs() <= 0.05 {
                break;
            }
            if k < target as f64 {
                low = force;
            } else {
                high = force;
            }
        }
        force
    }
}

/// One (k, ℓ, model, solver) point's measured cycles.
struct Samples {
    timings: Vec<StageTimings>,
    contacts: usize,
    statics: usize,
}

impl Samples {
    fn measure(
        bench: &Bench,
        force: f64,
        sides: usize,
        friction: FrictionModel,
        solver: SolverChoice,
        n: usize,
    ) -> Self {
        let (mut cycle, _) = bench.settled(force, sides, friction, solver);
        assert_eq!(cycle.parameters().friction, friction);
        let base = bench.pushed(force, cycle.parameters());
        let push = force / cycle.parameters().coupling.translational_stiffness;
        let mut rng = Pcg64::seed_from_u64(11);
        let mut samples = Self {
            timings: Vec::with_capacity(n),
            contacts: 0,
            statics: 0,
        };
        for _ in 0..n {
            let mut manipulandum = base;
            manipulandum.translation.vector.z += rng.gen_range(-1.0..1.0) * PUSH_JITTER * push;
            let report = cycle.step(&manipulandum);
            samples.timings.push(report.timings);
            samples.contacts += report.contacts;
            samples.statics += usize::from(report.verdict.state() == FrictionState::Static);
        }
        samples
    }

    fn mean_contacts(&self) -> f64 {
        self.contacts as f64 / self.timings.len() as f64
    }

    fn static_percent(&self) -> f64 {
        100.0 * self.statics as f64 / self.timings.len() as f64
    }

    /// Median and 99th percentile (µs) of one stage, or of the total.
    fn percentiles(&self, stage: Stage) -> (f64, f64) {
        let mut times: Vec<f64> = self
            .timings
            .iter()
            .map(|t| stage(t).as_secs_f64() * 1e6)
            .collect();
        times.sort_by(f64::total_cmp);
        let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
        (at(0.5), at(0.99))
    }
}

/// One stage's time in a cycle's timings.
type Stage = fn(&StageTimings) -> Duration;

const STAGES: [(&str, Stage); 5] = [
    ("collision", |t| t.collision),
    ("assembly", |t| t.assembly),
    ("friction", |t| t.friction),
    ("coupling", |t| t.coupling),
    ("total", StageTimings::total),
];

/// The default model, set explicitly: pre-sliding with the default `ε`.
fn pre_sliding() -> FrictionModel {
    FrictionModel::PreSliding {
        displacement: PreSlidingParameters::default().displacement,
    }
}

/// The measured models and their names in the figures.
fn models() -> [(&'static str, FrictionModel); 2] {
    [
        ("pre_sliding", pre_sliding()),
        ("lp", FrictionModel::StaticLp),
    ]
}

fn solver_name(solver: SolverChoice) -> &'static str {
    match solver {
        SolverChoice::Fast => "fast",
        SolverChoice::Reference => "reference",
    }
}

fn argument(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name} takes a count, got {v}"))
        })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cycles = argument(&args, "--cycles", 5000);
    let reference_cycles = argument(&args, "--reference-cycles", 2000);

    let bench = Bench::new();
    let shell_len = bench.moving.shell.as_ref().map_or(0, |s| s.shell().len());
    println!(
        "cube of {shell_len} shell points ({TREE_LEVELS} levels) on one edge on a floor field, \
         mu = {MU}; {cycles} cycles per point with the fast solver, {reference_cycles} with the reference"
    );
    println!(
        "{:>4} {:>2} {:>11} {:>9} {:>7} {:>7} {:>7} | {:>9} {:>9} {:>9} {:>9} | {:>9} {:>9}",
        "k",
        "l",
        "model",
        "solver",
        "push N",
        "mean k",
        "static%",
        "collision",
        "assembly",
        "friction",
        "coupling",
        "total",
        "total p99"
    );
    let mut lines = Vec::new();
    for target in TARGETS {
        let force = bench.force_for(target);
        for sides in SIDES {
            for (model, friction) in models() {
                let mut friction_medians = [0.0; 2];
                let mut total_medians = [0.0; 2];
                for (j, (solver, n)) in [
                    (SolverChoice::Fast, cycles),
                    (SolverChoice::Reference, reference_cycles),
                ]
                .into_iter()
                .enumerate()
                {
                    let samples = Samples::measure(&bench, force, sides, friction, solver, n);
                    let stages: Vec<(f64, f64)> = STAGES
                        .iter()
                        .map(|(_, stage)| samples.percentiles(*stage))
                        .collect();
                    friction_medians[j] = stages[2].0;
                    total_medians[j] = stages[4].0;
                    println!(
                        "{target:>4} {sides:>2} {model:>11} {:>9} {force:>7.3} {:>7.1} {:>7.1} | {:>9.2} {:>9.2} {:>9.2} {:>9.2} | {:>9.2} {:>9.2}",
                        solver_name(solver),
                        samples.mean_contacts(),
                        samples.static_percent(),
                        stages[0].0,
                        stages[1].0,
                        stages[2].0,
                        stages[3].0,
                        stages[4].0,
                        stages[4].1,
                    );
                    let point = format!("k{target}_l{sides}_{model}_{}", solver_name(solver));
                    lines.push(format!(
                        "cycle_{point}_contacts: {:.1} count",
                        samples.mean_contacts()
                    ));
                    lines.push(format!(
                        "cycle_{point}_static: {:.1} %",
                        samples.static_percent()
                    ));
                    for ((name, _), (median, p99)) in STAGES.iter().zip(&stages) {
                        let stage = if *name == "total" {
                            String::new()
                        } else {
                            format!("_{name}")
                        };
                        lines.push(format!("cycle_{point}{stage}_median: {median:.2} us"));
                        lines.push(format!("cycle_{point}{stage}_p99: {p99:.2} us"));
                    }
                }
                lines.push(format!(
                    "friction_k{target}_l{sides}_{model}_speedup: {:.1} x",
                    friction_medians[1] / friction_medians[0]
                ));
                lines.push(format!(
                    "cycle_k{target}_l{sides}_{model}_speedup: {:.1} x",
                    total_medians[1] / total_medians[0]
                ));
            }
            if (target, sides) == HEADLINE {
                lines.push(format!("cycle_k{target}_push: {force:.3} N"));
            }
        }
    }
    println!();
    for line in lines {
        println!("{line}");
    }
}
