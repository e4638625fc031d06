//! `hapticd scenario`: runs a built-in scripted scene (from Zhao, Li & Barbič) through the
//! rendering cycle and writes its trace.

use crate::output::Stdout;
use anyhow::{bail, Context};
use haptic_friction::FrictionState;
use haptic_render::FrictionModel;
use haptic_scenarios::{box_lift, cube_corner, peg_in_hole, run, slide, Scenario, Trace};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args)]
pub struct ScenarioArgs {
    /// A built-in scenario (see --list).
    #[arg(required_unless_present = "list")]
    name: Option<String>,

    /// List the built-in scenarios and exit.
    #[arg(long, conflicts_with_all = ["name", "out"])]
    list: bool,

    /// Friction coefficient μ between the tool and the environment
    /// (default: the scenario's own).
    #[arg(long, value_name = "MU", allow_hyphen_values = true)]
    mu: Option<f64>,

    /// Friction model: static friction with bounded pre-sliding, the LP of
    /// Zhao, Li & Barbič (§4) as stated, or Yamane's springs (§5.6), whose
    /// stiffness is the scenario's per-point `k_n`.
    #[arg(long, value_enum, default_value_t = Friction::PreSliding)]
    friction: Friction,

    /// Run at most the path's first N cycles.
    #[arg(long, value_name = "N")]
    cycles: Option<usize>,

    /// Trace file, one row per cycle: .csv or .json.
    #[arg(long, value_name = "TRACE", required_unless_present = "list")]
    out: Option<PathBuf>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Friction {
    /// Static friction with bounded pre-sliding (the default).
    PreSliding,
    /// Zhao, Li & Barbič's LP as stated.
    Lp,
    /// Yamane's springs.
    Yamane,
}

/// A built-in scenario: its name, default `μ`, what it shows and how to
/// build it.
struct BuiltIn {
    name: &'static str,
    mu: f64,
    about: &'static str,
    build: fn(f64) -> Scenario,
}

const BUILT_INS: [BuiltIn; 4] = [
    BuiltIn {
        name: "cube-corner",
        mu: 0.5,
        about:
            "§5.4: a cube held in a 90° corner under a tangential load, then pushed out of the cone",
        build: cube_corner,
    },
    BuiltIn {
        name: "box-lift",
        mu: 10.0,
        about: "§4.1 (Fig 6): a cube pressed onto a floor, then lifted diagonally",
        build: box_lift,
    },
    BuiltIn {
        name: "slide",
        mu: 0.3,
        about: "§4.2 (Fig 7): a cube pressed onto a floor, then yanked 10 mm sideways",
        build: slide,
    },
    BuiltIn {
        name: "peg-in-hole",
        mu: 0.3,
        about: "§5.3 (Fig 12): a peg pushed into a hole 1 % narrower, the push ramped to 1 N",
        build: peg,
    },
];

fn peg(mu: f64) -> Scenario {
    peg_in_hole(mu, 0.01)
}

enum Format {
    Csv,
    Json,
}

pub fn run_scenario(args: &ScenarioArgs) -> anyhow::Result<()> {
    let mut out = Stdout::lock();
    if args.list {
        for b in &BUILT_INS {
            writeln!(out, "{:<12} μ = {:<4} {}", b.name, b.mu, b.about)?;
        }
        return Ok(());
    }
    let (Some(name), Some(path)) = (&args.name, &args.out) else {
        bail!("a scenario NAME and --out TRACE are needed without --list");
    };
    let Some(built_in) = BUILT_INS.iter().find(|b| b.name == name) else {
        let names: Vec<_> = BUILT_INS.iter().map(|b| b.name).collect();
        bail!(
            "unknown scenario {name:?}; the built-in ones are {}",
            names.join(", ")
        );
    };
    let format = match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("csv") => Format::Csv,
        Some(e) if e.eq_ignore_ascii_case("json") => Format::Json,
        _ => bail!(
            "{}: the trace file must end in .csv or .json",
            path.display()
        ),
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !parent.is_dir() {
            bail!(
                "{}: directory {} does not exist",
                path.display(),
                parent.display()
            );
        }
    }
    let mu = args.mu.unwrap_or(built_in.mu);
    if !(mu >= 0.0 && mu.is_finite()) {
        bail!("--mu {mu}: the friction coefficient must be finite and ≥ 0");
    }
    let mut scenario = (built_in.build)(mu);
    match args.friction {
        Friction::PreSliding => {}
        Friction::Lp => scenario = scenario.with_friction(FrictionModel::StaticLp),
        Friction::Yamane => {
            let stiffness = scenario.parameters.penalty.stiffness;
            scenario = scenario.with_friction(FrictionModel::YamaneSprings { stiffness });
        }
    }
    if let Some(cycles) = args.cycles {
        scenario = scenario.truncated(cycles);
    }
    let trace = run(&scenario)?;
    match format {
        Format::Csv => trace.write_csv(path),
        Format::Json => trace.write_json(path),
    }
    .with_context(|| format!("writing {}", path.display()))?;
    writeln!(out, "{}: {}", built_in.name, summary(&trace))?;
    writeln!(out, "wrote {}", path.display())?;
    Ok(())
}

/// Cycles, friction states, contacts and cycle times in one line.
fn summary(trace: &Trace) -> String {
    let count = |state| trace.rows.iter().filter(|r| r.state == state).count();
    let mut times: Vec<Duration> = trace.rows.iter().map(|r| r.timings.total()).collect();
    times.sort();
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    let (mean, p99) = match times.len() {
        0 => (0.0, 0.0),
        n => (
            micros(times.iter().sum::<Duration>()) / n as f64,
            micros(times[(n * 99).div_ceil(100) - 1]),
        ),
    };
    format!(
        "{} cycles (static {}, sliding {}, free {}), at most {} contacts, cycle mean {mean:.1} µs, p99 {p99:.1} µs",
        trace.rows.len(),
        count(FrictionState::Static),
        count(FrictionState::Sliding),
        count(FrictionState::Free),
        trace.rows.iter().map(|r| r.contacts).max().unwrap_or(0),
    )
}
