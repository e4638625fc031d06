//! Wall time per solve of the reference solvers (model assembly included),
//! generic instances with ℓ = 8. Run on a quiet machine:
//! `cargo test -p haptic-friction --release --test reference_timing -- --ignored --nocapture`.

use std::time::{Duration, Instant};

use haptic_friction::{
    FrictionSolution, FullLpSolver, QpSolver, ReferenceLpSolver, StaticFrictionSolver,
};
use haptic_testkit::instances::{Family, Instance, InstanceSpec};

fn percentile(sorted: &[Duration], q: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn summary(name: &str, mut times: Vec<Duration>) -> Duration {
    times.sort();
    let median = percentile(&times, 0.5);
    println!(
        "  {name:<28} median {:>8.3} ms   p90 {:>8.3} ms   max {:>8.3} ms",
        median.as_secs_f64() * 1e3,
        percentile(&times, 0.9).as_secs_f64() * 1e3,
        times.last().unwrap().as_secs_f64() * 1e3
    );
    median
}

#[test]
#[ignore = "timing; run explicitly in release on a quiet machine"]
fn reference_solver_timings() {
    for (k, samples) in [(10, 300), (100, 100), (300, 40)] {
        let problems: Vec<_> = (0..samples)
            .map(|seed| {
                let spec = InstanceSpec {
                    family: Family::Generic,
                    contacts: k,
                    pyramid_sides: 8,
                    seed,
                };
                Instance::generate(&spec).problem
            })
            .collect();
        let mut s = FrictionSolution::with_capacity(k);
        let mut timed = |solver: &mut dyn StaticFrictionSolver| -> Vec<Duration> {
            problems
                .iter()
                .map(|p| {
                    let start = Instant::now();
                    solver.solve(p, &mut s).unwrap();
                    start.elapsed()
                })
                .collect()
        };
        let reduced = timed(&mut ReferenceLpSolver::default());
        let full = timed(&mut FullLpSolver::default());
        let qp = QpSolver::default();
        let outcomes: Vec<_> = problems.iter().map(|p| qp.analyse(p).unwrap()).collect();
        let statics = outcomes.iter().filter(|o| o.static_friction).count();
        println!("k = {k}, ℓ = 8, {samples} instances ({statics} static):");
        let lp = summary("reduced LP (good_lp)", reduced);
        summary("full LP (good_lp)", full);
        let qp_only = summary(
            "QP eqs 28–31 (clarabel)",
            outcomes.iter().map(|o| o.qp_time).collect(),
        );
        summary(
            "QP + relaxed QP (decision)",
            outcomes
                .iter()
                .map(|o| o.qp_time + o.relaxed_time)
                .collect(),
        );
        println!(
            "  QP / reduced LP median: {:.2}",
            qp_only.as_secs_f64() / lp.as_secs_f64()
        );
    }
}
