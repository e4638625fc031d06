//! Seed 002 §4.2 (Fig 7): with α = 0.6 a sliding object covers at most 40 %
//! of its frictionless step per cycle. With the LP, set explicitly: a
//! sliding cycle's step is the frictionless one there, while the
//! pre-sliding model (the default) slides to an equilibrium with friction.

use haptic_friction::FrictionState;
use haptic_render::scenario::{run, slide, Scenario, Trace};
use haptic_render::FrictionModel;

fn slide_lp() -> Scenario {
    slide(0.3).with_friction(FrictionModel::StaticLp)
}

/// Per cycle with contacts after the jump: (step taken / frictionless step).
fn ratios(trace: &Trace) -> Vec<f64> {
    let rows: Vec<_> = trace.rows.iter().collect();
    rows.windows(2)
        .filter(|w| w[1].segment >= 2 && w[1].contacts > 0 && w[1].frictionless_step > 1e-9)
        .map(|w| {
            let step =
                (w[1].simulation.translation.vector - w[0].simulation.translation.vector).norm();
            step / w[1].frictionless_step
        })
        .collect()
}

#[test]
fn sliding_covers_forty_percent_per_cycle() {
    let damped = run(&slide_lp()).unwrap();
    let jump = damped.segment(2).next().unwrap();
    assert_eq!(jump.state, FrictionState::Sliding);
    let r = ratios(&damped);
    let worst = r.iter().copied().fold(0.0, f64::max);
    println!("α = 0.6: first sliding cycle covers {:.4} of Δq₀, worst {worst:.4} over {} cycles in contact", r[0], r.len());
    assert!(worst <= 0.4 + 1e-9);
    assert!((r[0] - 0.4).abs() < 1e-6);
    let moved = damped.rows.last().unwrap().simulation.translation.x
        - damped.segment(1).last().unwrap().simulation.translation.x;
    println!("α = 0.6: slid {:.2} mm in all", moved * 1e3);
    assert!(moved > 5e-3);

    let mut undamped = slide_lp();
    undamped.parameters.static_damping = 0.0;
    let undamped = run(&undamped).unwrap();
    let r0 = ratios(&undamped);
    println!("α = 0: first sliding cycle covers {:.4} of Δq₀", r0[0]);
    assert!((r0[0] - 1.0).abs() < 1e-6);
}
