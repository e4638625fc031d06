//! `solve` per servo cycle for k ∈ {10, 30, 100, 300} contacts and ℓ ∈ {4, 8}.
//! Instances are generated here in SI units: a 10 cm box held by a virtual
//! coupling, contacts on random faces, pushed along a random wrench `p` with
//! `f = t p`. The friction limit `t*` is bisected with the fast solver; the
//! fast solver is timed on static loads (`t < t*`), sliding loads (`t > t*`)
//! and loads within 10⁻⁶ of the limit.
//!
//! The LP alone, fast against reference: `fast_lp` and `reference_lp` time
//! the fast solver and the clarabel reference on the same instances, the
//! static and sliding loads alternating. After criterion has run, the median
//! of each from criterion's `estimates.json` and their ratio are printed per
//! point and written, as `name: value unit` lines with the reference point
//! (k = 100, ℓ = 8) last, to `friction-summary.txt` in criterion's output
//! directory (read by `scripts/bench-friction`). Points not measured in this
//! run (filtered out) are left out.
//!
//! Static friction with bounded pre-sliding, fast against reference: on
//! [`PRE_SLIDING_INSTANCES`] generic instances of `haptic_testkit::instances`
//! per point, each contact slipped by up to 10 µm from its stick anchor (none
//! on one instance in four, as in `tests/pre_sliding_agreement.rs`), with the
//! default `ε` of 5 µm. The fast solver warm-starts from the atoms of its
//! previous solve, so it is timed three ways:
//!
//! - `pre_sliding_fast_cold`: the instances in turn, so the solver was fed a
//!   different instance before each timed call (its warm start is stale and
//!   re-evaluated for nothing);
//! - `pre_sliding_fast_fresh`: a newly constructed solver per call (the
//!   construction is not timed), no warm start at all;
//! - `pre_sliding_fast_warm`: each instance re-solved after a slightly
//!   perturbed copy of it (wrench components within ±0.1 %, anchor slips
//!   moved by up to 0.1 µm), as in consecutive servo cycles; only the second
//!   solve is timed.
//!
//! `pre_sliding_reference` times the clarabel reference on the same
//! instances in turn. The speedups (reference over fast) are printed and
//! written with the LP's figures; the cold one is the headline.

use criterion::BatchSize;
use criterion::{black_box, BenchmarkId, Criterion};
use haptic_core::{skew, Matrix6, Vector6};
use haptic_friction::{
    FastPreSlidingSolver, FastStaticFrictionSolver, FrictionContact, FrictionSolution,
    FrictionState, PreSlidingParameters, ReferenceLpSolver, ReferencePreSlidingSolver,
    StaticFrictionProblem, StaticFrictionSolver,
};
use haptic_testkit::instances::{with_anchor_slips, Family, Instance, InstanceSpec};
use nalgebra::{Matrix3, Vector3};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

const HALF: f64 = 0.05;
/// Static and sliding loads per (k, ℓ); twice as many at the limit.
const INSTANCES: usize = 32;
const CONTACTS: [usize; 4] = [10, 30, 100, 300];
const SIDES: [usize; 2] = [4, 8];
/// The headline point `(k, ℓ)`, the one docs/rendering.md quotes, reported last.
const HEADLINE: (usize, usize) = (100, 8);
/// Pre-sliding instances per (k, ℓ).
const PRE_SLIDING_INSTANCES: usize = 32;
/// The largest anchor slip of a contact (m), as in the agreement test.
const MAX_SLIP: f64 = 10e-6;

/// Contacts on the faces of a box of half-width 5 cm, normals into the box,
/// a shared total normal stiffness of 3·10⁴ N/m; `H` from eqs 2–3 plus the
/// coupling; `f = f_vc + Σ (F_n, r × F_n)` (eq 9) with a coupling that
/// cancels the normal wrench up to a push of the size of the friction
/// capacity `Σ μ_i‖F_n^i‖`.
fn instance(rng: &mut Pcg64, k: usize, sides: usize) -> StaticFrictionProblem {
    let k_n = 3e4 / k as f64;
    let (mut h, mut capacity) = (Matrix6::zeros(), 0.0);
    let contacts: Vec<FrictionContact> = (0..k)
        .map(|_| {
            let axis = rng.gen_range(0..3);
            let sign = if rng.gen_bool(0.5) { 1.0 } else { -1.0 };
            let mut handle = Vector3::from_fn(|_, _| rng.gen_range(-HALF..HALF));
            handle[axis] = sign * HALF;
            let normal = -sign * Vector3::ith(axis, 1.0);
            let normal_force = k_n * rng.gen_range(0.05e-3..1e-3);
            let force = normal * normal_force;
            let df_dx = -k_n * normal * normal.transpose();
            let df_dw = -df_dx * skew(&handle);
            let mut block = h.fixed_view_mut::<3, 3>(0, 0);
            block += df_dx;
            let mut block = h.fixed_view_mut::<3, 3>(0, 3);
            block += df_dw;
            let mut block = h.fixed_view_mut::<3, 3>(3, 0);
            block += skew(&handle) * df_dx;
            let mut block = h.fixed_view_mut::<3, 3>(3, 3);
            block += skew(&handle) * df_dw + skew(&force) * skew(&handle);
            let contact = FrictionContact {
                handle,
                normal,
                normal_force,
                friction_coefficient: rng.gen_range(0.2..1.0),
                slip: Vector3::zeros(),
            };
            capacity += contact.friction_limit();
            contact
        })
        .collect();
    let push = Vector6::from_fn(|i, _| rng.gen_range(-1.0..1.0) * if i < 3 { 1.0 } else { HALF });
    let wrench = push.normalize() * capacity;
    for i in 0..3 {
        h[(i, i)] -= 1000.0;
        h[(i + 3, i + 3)] -= 1.0;
    }
    let mut mass = Matrix6::zeros();
    mass.fixed_view_mut::<3, 3>(0, 0)
        .copy_from(&(Matrix3::identity() * 0.1));
    mass.fixed_view_mut::<3, 3>(3, 3)
        .copy_from(&(Matrix3::identity() * 0.1 * HALF * HALF * 2.0 / 3.0));
    StaticFrictionProblem {
        wrench,
        stiffness: h,
        mass,
        contacts,
        pyramid_sides: sides,
        deadline: None,
    }
}

/// `t*`: the largest `t` with `t f` static, to a relative 10⁻⁹ (`None` past 2⁴⁰).
fn friction_limit(solver: &mut FastStaticFrictionSolver, p: &StaticFrictionProblem) -> Option<f64> {
    let mut solution = FrictionSolution::with_capacity(p.contacts.len());
    let mut holds = |t: f64| {
        solver.solve(&scaled(p, t), &mut solution).unwrap();
        solution.state == FrictionState::Static
    };
    let (mut lo, mut hi) = (0.0, 1.0);
    while holds(hi) {
        if hi > 2f64.powi(40) {
            return None;
        }
        (lo, hi) = (hi, 2.0 * hi);
    }
    while hi - lo > 1e-9 * hi {
        let mid = 0.5 * (lo + hi);
        if holds(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(lo)
}

fn scaled(p: &StaticFrictionProblem, t: f64) -> StaticFrictionProblem {
    let mut q = p.clone();
    q.wrench *= t;
    q
}

fn solvers(c: &mut Criterion) {
    let mut rng = Pcg64::seed_from_u64(2024);
    for k in CONTACTS {
        for sides in SIDES {
            let mut fast = FastStaticFrictionSolver::new(k, sides);
            let mut solution = FrictionSolution::with_capacity(k);
            let (mut held, mut sliding, mut limit) = (Vec::new(), Vec::new(), Vec::new());
            while held.len() < INSTANCES {
                let p = instance(&mut rng, k, sides);
                let Some(t) = friction_limit(&mut fast, &p) else {
                    continue;
                };
                held.push(scaled(&p, t * rng.gen_range(0.0..0.999)));
                sliding.push(scaled(&p, t * rng.gen_range(1.001..2.0)));
                limit.push(scaled(&p, t * (1.0 - 1e-6)));
                limit.push(scaled(&p, t * (1.0 + 1e-6)));
            }
            let id = format!("k{k}_l{sides}");
            for (name, problems) in [("static", &held), ("sliding", &sliding), ("limit", &limit)] {
                let (mut iterations, mut most, mut states) = (0, 0, [0; 2]);
                for p in problems.iter() {
                    fast.solve(p, &mut solution).unwrap();
                    iterations += solution.iterations;
                    most = most.max(solution.iterations);
                    states[usize::from(solution.state == FrictionState::Sliding)] += 1;
                }
                println!(
                    "{id} {name}: {} static, {} sliding, {:.1} iterations on average, {most} at most",
                    states[0],
                    states[1],
                    f64::from(iterations) / problems.len() as f64
                );
                let mut group = c.benchmark_group(format!("fast_{name}"));
                let mut next = 0;
                group.bench_function(BenchmarkId::from_parameter(&id), |b| {
                    b.iter(|| {
                        next = (next + 1) % problems.len();
                        fast.solve(black_box(&problems[next]), &mut solution)
                    })
                });
                group.finish();
            }

            let mixed: Vec<_> = held
                .iter()
                .zip(&sliding)
                .flat_map(|(a, b)| [a, b])
                .collect();
            let mut group = c.benchmark_group("fast_lp");
            let mut next = 0;
            group.bench_function(BenchmarkId::from_parameter(&id), |b| {
                b.iter(|| {
                    next = (next + 1) % mixed.len();
                    fast.solve(black_box(mixed[next]), &mut solution)
                })
            });
            group.finish();
            let mut group = c.benchmark_group("reference_lp");
            group
                .sample_size(10)
                .warm_up_time(Duration::from_millis(200))
                .measurement_time(Duration::from_secs(2));
            let mut reference = ReferenceLpSolver::default();
            let mut next = 0;
            group.bench_function(BenchmarkId::from_parameter(&id), |b| {
                b.iter(|| {
                    next = (next + 1) % mixed.len();
                    reference.solve(black_box(mixed[next]), &mut solution)
                })
            });
            group.finish();
        }
    }
}

/// A slightly perturbed copy of `problem`: each wrench component within
/// ±0.1 %, each anchor slip moved tangentially by up to 0.1 µm.
fn perturbed(problem: &StaticFrictionProblem, rng: &mut Pcg64) -> StaticFrictionProblem {
    let mut p = problem.clone();
    for w in p.wrench.iter_mut() {
        *w *= 1.0 + rng.gen_range(-1e-3..1e-3);
    }
    for c in &mut p.contacts {
        let (u, v) = c.tangents();
        c.slip += u * rng.gen_range(-0.1e-6..0.1e-6) + v * rng.gen_range(-0.1e-6..0.1e-6);
    }
    p
}

fn pre_sliding(c: &mut Criterion) {
    let params = PreSlidingParameters::default();
    for k in CONTACTS {
        for sides in SIDES {
            let mut rng = Pcg64::seed_from_u64(0x5112 + (k * 10 + sides) as u64);
            let problems: Vec<StaticFrictionProblem> = (0..PRE_SLIDING_INSTANCES)
                .map(|_| {
                    let spec = InstanceSpec {
                        family: Family::Generic,
                        contacts: k,
                        pyramid_sides: sides,
                        seed: rng.gen(),
                    };
                    with_anchor_slips(Instance::generate(&spec).problem, MAX_SLIP, &mut rng)
                })
                .collect();
            let nearby: Vec<_> = problems.iter().map(|p| perturbed(p, &mut rng)).collect();
            let mut fast = FastPreSlidingSolver::new(k, sides, params);
            let mut reference = ReferencePreSlidingSolver::new(params);
            let mut solution = FrictionSolution::with_capacity(k);
            let mut expected = FrictionSolution::with_capacity(k);
            let (mut iterations, mut most, mut statics, mut agree) = (0, 0, 0, 0);
            for p in &problems {
                fast.solve(p, &mut solution).unwrap();
                reference.solve(p, &mut expected).unwrap();
                iterations += solution.iterations;
                most = most.max(solution.iterations);
                statics += usize::from(solution.state == FrictionState::Static);
                agree += usize::from(solution.state == expected.state);
            }
            let mut warm_iterations = 0;
            for (p, q) in problems.iter().zip(&nearby) {
                fast.solve(q, &mut solution).unwrap();
                fast.solve(p, &mut solution).unwrap();
                warm_iterations += solution.iterations;
            }
            let n = problems.len();
            println!(
                "pre-sliding k{k}_l{sides}: {statics} of {n} static, the reference agreeing on \
                 {agree}; {:.1} iterations on average cold, {most} at most; {:.1} warm",
                f64::from(iterations) / n as f64,
                f64::from(warm_iterations) / n as f64,
            );

            let id = format!("k{k}_l{sides}");
            let mut group = c.benchmark_group("pre_sliding_fast_cold");
            let mut next = 0;
            group.bench_function(BenchmarkId::from_parameter(&id), |b| {
                b.iter(|| {
                    next = (next + 1) % n;
                    fast.solve(black_box(&problems[next]), &mut solution)
                })
            });
            group.finish();
            let mut group = c.benchmark_group("pre_sliding_fast_fresh");
            let mut next = 0;
            group.bench_function(BenchmarkId::from_parameter(&id), |b| {
                b.iter_batched_ref(
                    || FastPreSlidingSolver::new(k, sides, params),
                    |solver| {
                        next = (next + 1) % n;
                        solver.solve(black_box(&problems[next]), &mut solution)
                    },
                    BatchSize::SmallInput,
                )
            });
            group.finish();
            let mut group = c.benchmark_group("pre_sliding_fast_warm");
            let mut next = 0;
            group.bench_function(BenchmarkId::from_parameter(&id), |b| {
                b.iter_custom(|iterations| {
                    let mut total = Duration::ZERO;
                    let mut prepared = FrictionSolution::with_capacity(k);
                    for _ in 0..iterations {
                        next = (next + 1) % n;
                        fast.solve(&nearby[next], &mut prepared).unwrap();
                        let start = Instant::now();
                        let solved = fast.solve(black_box(&problems[next]), &mut solution);
                        total += start.elapsed();
                        black_box(solved).unwrap();
                    }
                    total
                })
            });
            group.finish();
            let mut group = c.benchmark_group("pre_sliding_reference");
            group
                .sample_size(10)
                .warm_up_time(Duration::from_millis(200))
                .measurement_time(Duration::from_secs(2));
            let mut next = 0;
            group.bench_function(BenchmarkId::from_parameter(&id), |b| {
                b.iter(|| {
                    next = (next + 1) % n;
                    reference.solve(black_box(&problems[next]), &mut solution)
                })
            });
            group.finish();
        }
    }
}

/// Criterion's output directory, found as criterion finds it: under
/// `CARGO_TARGET_DIR`, else under cargo's target directory.
fn criterion_directory() -> Option<PathBuf> {
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => {
            let output = Command::new(std::env::var_os("CARGO")?)
                .args(["metadata", "--format-version", "1", "--no-deps"])
                .output()
                .ok()?;
            let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).ok()?;
            PathBuf::from(metadata["target_directory"].as_str()?)
        }
    };
    Some(target.join("criterion"))
}

/// The median time per iteration (s) of `group/id`, if measured since `start`.
fn median(directory: &Path, group: &str, id: &str, start: SystemTime) -> Option<f64> {
    let path = directory.join(group).join(id).join("new/estimates.json");
    if std::fs::metadata(&path).ok()?.modified().ok()? < start {
        return None;
    }
    let estimates: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
    Some(estimates["median"]["point_estimate"].as_f64()? * 1e-9)
}

/// Prints and writes the per-point medians and ratios (module docs): the
/// LP's, then the pre-sliding model's, each with the reference point last,
/// and the two headline speedups at the reference point at the very end.
fn summarise(start: SystemTime) {
    let Some(directory) = criterion_directory() else {
        eprintln!("criterion's output directory not found: no summary");
        return;
    };
    let mut points: Vec<_> = CONTACTS
        .iter()
        .flat_map(|&k| SIDES.map(|l| (k, l)))
        .filter(|&p| p != HEADLINE)
        .collect();
    points.push(HEADLINE);
    let mut summary = String::new();
    let mut headline = Vec::new();
    for &(k, l) in &points {
        let id = format!("k{k}_l{l}");
        let (Some(fast), Some(reference)) = (
            median(&directory, "fast_lp", &id, start),
            median(&directory, "reference_lp", &id, start),
        ) else {
            continue;
        };
        println!(
            "LP k = {k}, ℓ = {l}: fast {:.2} µs, reference {:.3} ms, ratio {:.0}",
            fast * 1e6,
            reference * 1e3,
            reference / fast
        );
        writeln!(summary, "fast_lp_{id}_median: {:.2} us", fast * 1e6).unwrap();
        writeln!(
            summary,
            "reference_lp_{id}_median: {:.3} ms",
            reference * 1e3
        )
        .unwrap();
        writeln!(summary, "lp_speedup_{id}: {:.0} x", reference / fast).unwrap();
        if (k, l) == HEADLINE {
            headline.push(format!("lp_speedup_{id}: {:.0} x", reference / fast));
        }
    }
    for &(k, l) in &points {
        let id = format!("k{k}_l{l}");
        let time = |group: &str| median(&directory, group, &id, start);
        let (Some(cold), Some(fresh), Some(warm), Some(reference)) = (
            time("pre_sliding_fast_cold"),
            time("pre_sliding_fast_fresh"),
            time("pre_sliding_fast_warm"),
            time("pre_sliding_reference"),
        ) else {
            continue;
        };
        println!(
            "pre-sliding k = {k}, ℓ = {l}: fast {:.2} µs cold, {:.2} µs fresh, {:.2} µs warm; \
             reference {:.3} ms; ratio {:.0} cold, {:.0} fresh, {:.0} warm",
            cold * 1e6,
            fresh * 1e6,
            warm * 1e6,
            reference * 1e3,
            reference / cold,
            reference / fresh,
            reference / warm,
        );
        for (name, fast) in [("cold", cold), ("fresh", fresh), ("warm", warm)] {
            writeln!(
                summary,
                "pre_sliding_fast_{name}_{id}_median: {:.2} us",
                fast * 1e6
            )
            .unwrap();
        }
        writeln!(
            summary,
            "pre_sliding_reference_{id}_median: {:.3} ms",
            reference * 1e3
        )
        .unwrap();
        for (name, fast) in [("cold", cold), ("fresh", fresh), ("warm", warm)] {
            writeln!(
                summary,
                "pre_sliding_speedup_{name}_{id}: {:.0} x",
                reference / fast
            )
            .unwrap();
        }
        if (k, l) == HEADLINE {
            headline.push(format!(
                "pre_sliding_speedup_cold_{id}: {:.0} x",
                reference / cold
            ));
        }
    }
    if summary.is_empty() {
        return;
    }
    for line in headline {
        writeln!(summary, "{line}").unwrap();
    }
    let path = directory.join("friction-summary.txt");
    std::fs::write(&path, summary).expect("writable criterion directory");
    println!("Summary written to {}", path.display());
}

fn main() {
    let start = SystemTime::now();
    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    solvers(&mut criterion);
    pre_sliding(&mut criterion);
    criterion.final_summary();
    summarise(start);
}
