//! Zhao, Li & Barbič §5.3, Fig 12: the minimal virtual coupling force that inserts a
//! peg into a hole 1 % narrower grows linearly with `μ`, and without
//! friction almost none is needed. A rigid wedge says how fast: with ℓ = 4
//! each contact's pyramid holds `√2 μ ‖F_n‖` along the axis (a vertex), so
//! the slope is `√2 Σ‖F_n‖`. Bounded pre-sliding (the default) meets it with
//! its separation rule on; the paper's LP does only with §4.1 off.
//!
//! The minimal force is the breakaway push of [`peg_in_hole`]'s slow ramp
//! (segment 1, 0.5 mN per cycle): the largest axial coupling force the peg
//! withstood before it first advanced [`ADVANCE`] past where it settled.

use haptic_render::{FrictionModel, RenderingCycle};
use haptic_scenarios::{peg_in_hole, run, Scenario, Trace};
use std::time::Instant;

/// How far the peg must move into the hole to count as inserting (m).
const ADVANCE: f64 = 2e-5;

const MUS: [f64; 6] = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5];

/// The breakaway push (N) and the mean push over the steady part of the
/// insertion (segment 2 after its first 500 cycles).
fn insertion_forces(trace: &Trace) -> (f64, f64) {
    let settled = trace.segment(0).last().unwrap().simulation.translation.z;
    let first = trace
        .rows
        .iter()
        .position(|r| settled - r.simulation.translation.z > ADVANCE)
        .expect("the peg never moved");
    let breakaway = trace.rows[..first]
        .iter()
        .map(|r| r.coupling_force.z)
        .fold(0.0, f64::max);
    let steady: Vec<f64> = trace
        .segment(2)
        .skip(500)
        .map(|r| r.coupling_force.z)
        .collect();
    (breakaway, steady.iter().sum::<f64>() / steady.len() as f64)
}

/// Least squares `y = a + b x`: `(a, b, R²)`.
fn fit(x: &[f64], y: &[f64]) -> (f64, f64, f64) {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let sxy: f64 = x.iter().zip(y).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = x.iter().map(|x| (x - mx).powi(2)).sum();
    let syy: f64 = y.iter().map(|y| (y - my).powi(2)).sum();
    let b = sxy / sxx;
    (my - b * mx, b, sxy * sxy / (sxx * syy))
}

/// Runs `scenario` at every `μ` of [`MUS`] in parallel; returns the peg's
/// (breakaway, steady) pushes and its final advance into the hole.
fn sweep(scenario: &Scenario) -> Vec<(f64, f64, f64)> {
    std::thread::scope(|scope| {
        let runs: Vec<_> = MUS
            .iter()
            .map(|&mu| {
                let scenario = scenario.clone().with_friction_coefficient(mu);
                scope.spawn(move || {
                    let trace = run(&scenario).unwrap();
                    let (breakaway, steady) = insertion_forces(&trace);
                    let start = scenario.scene.initial_pose.translation.z;
                    let advance = start - trace.rows.last().unwrap().simulation.translation.z;
                    (breakaway, steady, advance)
                })
            })
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    })
}

#[test]
fn insertion_force_grows_linearly_with_mu() {
    let started = Instant::now();
    let seed = peg_in_hole(0.0, 0.01);
    // Σ‖F_n‖ at the start pose; with ℓ = 4 each contact holds √2 μ ‖F_n‖
    // along the axis, a vertex of its pyramid.
    let setup = seed.scene.clone();
    let mut cycle = RenderingCycle::new(
        setup.moving,
        setup.environment,
        seed.parameters,
        setup.initial_pose,
    )
    .unwrap();
    cycle.step(&setup.initial_pose);
    let contacts = cycle.scene().contacts();
    let normal: f64 = contacts.iter().map(|c| c.normal_force()).sum();
    let lp = seed.clone().with_friction(FrictionModel::StaticLp);
    let mut without = lp.clone();
    without.parameters.anti_stickiness = false;
    let pre_sliding = sweep(&seed);
    let with_dropping = sweep(&lp);
    let without_dropping = sweep(&without);

    let shell = seed.scene.moving.shell.as_ref().unwrap();
    println!(
        "peg shell: {} points, {} levels; {} contacts at the start, Σ‖F_n‖ = {normal:.4} N",
        shell.shell().len(),
        shell.tree().levels(),
        contacts.len()
    );
    println!("  μ  | pre-sliding: breakaway N  steady N | LP: breakaway N  steady N  advance mm | LP, no §4.1: breakaway N | √2μΣ‖F_n‖ N");
    for (i, mu) in MUS.iter().enumerate() {
        let (p, ps, _) = pre_sliding[i];
        let (b, s, a) = with_dropping[i];
        let (b0, _, _) = without_dropping[i];
        println!(
            "{mu:4.1} | {p:24.4}  {ps:8.4} | {b:15.4}  {s:8.4}  {:10.2} | {b0:24.4} | {:11.4}",
            a * 1e3,
            2f64.sqrt() * mu * normal
        );
    }
    let pre_breakaway: Vec<f64> = pre_sliding.iter().map(|r| r.0).collect();
    let pre_steady: Vec<f64> = pre_sliding.iter().map(|r| r.1).collect();
    let breakaway: Vec<f64> = with_dropping.iter().map(|r| r.0).collect();
    let steady: Vec<f64> = with_dropping.iter().map(|r| r.1).collect();
    let plain: Vec<f64> = without_dropping.iter().map(|r| r.0).collect();
    let report = |name: &str, y: &[f64]| {
        let (a, b, r2) = fit(&MUS, y);
        println!("{name}: F = {a:.4} N + {b:.4} N · μ, R² = {r2:.5}");
        (b, r2)
    };
    let (pre_slope, pre_r2) = report("pre-sliding breakaway (separation rule on)", &pre_breakaway);
    let (pre_steady_slope, _) = report("pre-sliding steady insertion", &pre_steady);
    let (slope, r2) = report("LP breakaway (Zhao et al. §4.1 on)", &breakaway);
    let (steady_slope, steady_r2) = report("LP steady insertion (§4.1 on)", &steady);
    let (plain_slope, plain_r2) = report("LP breakaway (§4.1 off)", &plain);
    println!(
        "frictionless / μ = 0.5: {:.2} %; {:.1} s",
        100.0 * breakaway[0] / breakaway[5],
        started.elapsed().as_secs_f64()
    );

    // The rigid wedge, with the separation rule on.
    let cone = 2f64.sqrt() * normal;
    assert!(pre_r2 >= 0.98);
    assert!(
        (pre_slope - cone).abs() < 0.15 * cone,
        "pre-sliding: {pre_slope} vs {cone} N"
    );
    // Sliding in, friction stays at its Coulomb limit.
    assert!((pre_steady_slope - cone).abs() < 0.15 * cone);
    assert!(pre_breakaway[0] < 0.05 * pre_breakaway[5]);
    assert!(slope > 0.0 && r2 >= 0.98);
    assert!(steady_slope > 0.0 && steady_r2 >= 0.98);
    assert!(plain_slope > 0.0 && plain_r2 >= 0.98);
    assert!(breakaway[0] < 0.05 * breakaway[5]);
    // Without §4.1 every contact stays in the LP and the peg breaks away
    // near the friction cone's axial capacity (a little below: the uneven
    // ring's axial friction has a couple the LP must also balance).
    assert!(
        (plain_slope - cone).abs() < 0.08 * cone,
        "{plain_slope} vs {cone} N"
    );
    // Every μ completes the 16 mm insertion, lagging by its push.
    for (mu, (_, _, advance)) in MUS.iter().cycle().zip(
        pre_sliding
            .iter()
            .chain(&with_dropping)
            .chain(&without_dropping),
    ) {
        assert!(*advance > 0.015, "μ = {mu}: advanced {advance} m");
    }
}
