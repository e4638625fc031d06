//! Seed 002 §4.1 (Fig 6): lifting a cube off a floor at μ = 10 is not
//! resisted by friction with separating contacts dropped, and sticks
//! without.

use haptic_render::scenario::{box_lift, run, Trace};

/// Largest horizontal coupling force (N) while the coupling pulls the cube
/// up (the rendered force on the manipulandum points down), and the cycles
/// from the lift's start until the cube last touches the floor.
fn lift(trace: &Trace) -> (f64, usize) {
    let rows: Vec<_> = trace.segment(2).chain(trace.segment(3)).collect();
    let force = rows
        .iter()
        .filter(|r| r.coupling_force.z < 0.0)
        .map(|r| r.coupling_force.xy().norm())
        .fold(0.0, f64::max);
    let touching = rows
        .iter()
        .rposition(|r| r.contacts > 0)
        .map_or(0, |i| i + 1);
    (force, touching)
}

#[test]
fn lifting_is_not_resisted_by_friction() {
    let frictionless = run(&box_lift(0.0)).unwrap();
    let ours = run(&box_lift(10.0)).unwrap();
    let mut without = box_lift(10.0);
    without.parameters.anti_stickiness = false;
    let sticky = run(&without).unwrap();

    let (f0, c0) = lift(&frictionless);
    let (f1, c1) = lift(&ours);
    let (f2, c2) = lift(&sticky);
    let dropped = ours.segment(2).map(|r| r.separating_dropped).max().unwrap();
    println!("peak horizontal coupling force while pulling up: μ = 0: {f0:.3} N; μ = 10 with §4.1: {f1:.3} N ({dropped} contacts dropped); μ = 10 without: {f2:.3} N");
    println!("cycles in contact after the lift starts: {c0}, {c1}, {c2}");
    let gap = |t: &Trace| {
        let end = t.rows.last().unwrap();
        (end.manipulandum.translation.vector - end.simulation.translation.vector).norm()
    };
    println!(
        "final manipulandum–object gap: {:.2e}, {:.2e}, {:.2e} m",
        gap(&frictionless),
        gap(&ours),
        gap(&sticky)
    );

    // The lag friction built up while the coupling still pressed down is
    // released within a cycle or two of it pulling up.
    assert!(
        (f1 - f0).abs() < 0.1,
        "with §4.1 the lift feels frictionless"
    );
    assert!(c1 <= c0 + 2);
    assert!(
        f2 > 5.0 * f1.max(0.1),
        "without §4.1 friction resists the lift"
    );
    assert!(gap(&ours) < 1e-6);
}
