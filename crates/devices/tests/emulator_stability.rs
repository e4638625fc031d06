//! Closed-loop stability of hand mode against a stiff unilateral wall at
//! z = 0 (F = k_wall · max(0, −z) · ẑ, no wall damping; the handle's own
//! damping only). The hand presses 5 mm into the wall; the handle starts at
//! rest, displaced from the static equilibrium by a fraction of the static
//! penetration. In persistent contact the oscillation's energy stays
//! bounded (and decays with damping) below
//! `HandParams::max_render_stiffness` and grows above it. Contact that
//! breaks and remakes pumps energy at lower stiffnesses.

use haptic_devices::{
    Clock, EmulatorConfig, EmulatorMode, HandParams, HapticDevice, LengthUnit, Trajectory,
    TrajectoryEmulator, TrajectoryRow, Wrench,
};
use nalgebra::Vector3;

const DT: f64 = 1e-3;
const PRESS: f64 = -0.005;
const TICKS: usize = 3000;

fn params(damping: f64) -> HandParams {
    HandParams {
        mass: 0.2,
        k_hand: 300.0,
        c_hand: 0.0,
        damping,
        rotation: None,
    }
}

/// Oscillation energy above the static equilibrium, per tick, for a start
/// `offset` × (static penetration) above the equilibrium.
fn energies(p: &HandParams, k_wall: f64, offset: f64) -> Vec<f64> {
    let row = |t_s| TrajectoryRow {
        t_s,
        position: [0.0, 0.0, PRESS],
        quaternion: [1.0, 0.0, 0.0, 0.0],
        buttons: 0,
    };
    let traj = Trajectory::new(LengthUnit::Meters, 1000.0, vec![row(0.0), row(10.0)]).unwrap();
    let z_eq = p.k_hand * PRESS / (p.k_hand + k_wall);
    let mut config = EmulatorConfig::new(EmulatorMode::Hand(p.clone()), Clock::Stepped);
    config.initial_offset = Vector3::new(0.0, 0.0, z_eq - PRESS - offset * z_eq);
    let mut dev = TrajectoryEmulator::new(traj, config);
    let potential =
        |z: f64| 0.5 * p.k_hand * (z - PRESS).powi(2) + 0.5 * k_wall * (-z).max(0.0).powi(2);
    (0..TICKS)
        .map(|_| {
            let s = dev.read().unwrap();
            let z = s.position.z;
            dev.write(&Wrench {
                force: Vector3::new(0.0, 0.0, k_wall * (-z).max(0.0)),
                torque: Vector3::zeros(),
            })
            .unwrap();
            let v = s.linear_velocity.unwrap().norm();
            0.5 * p.mass * v * v + potential(z) - potential(z_eq)
        })
        .collect()
}

/// Largest energy in the last tenth of the run over that in the first 20
/// ticks (several periods of the fast modes near the limit, which
/// oscillate at close to half the tick rate).
fn growth(p: &HandParams, k_wall: f64, offset: f64) -> f64 {
    let e = energies(p, k_wall, offset);
    let peak = |w: &[f64]| w.iter().copied().fold(0.0, f64::max);
    peak(&e[TICKS - TICKS / 10..]) / peak(&e[..20])
}

/// Small enough to stay in contact up to 0.99 × the limit, where the
/// discrete oscillation is 10× the initial offset.
const IN_CONTACT: f64 = 0.05;
/// Small enough for growth above the limit to show before contact breaks.
const TINY: f64 = 1e-6;

#[test]
fn stable_below_the_limit_and_growing_above_it() {
    for damping in [0.0, 2.0] {
        let p = params(damping);
        let limit = p.max_render_stiffness(DT);
        for factor in [0.01, 0.3, 0.9, 0.99] {
            let g = growth(&p, factor * limit, IN_CONTACT);
            let bound = if damping > 0.0 { 0.5 } else { 1.05 };
            assert!(
                g <= bound,
                "b = {damping}: k_wall = {factor} × limit: energy grew {g}×"
            );
        }
        for factor in [1.01, 1.1, 2.0] {
            let g = growth(&p, factor * limit, TINY);
            assert!(
                g > 1e3,
                "b = {damping}: k_wall = {factor} × limit: energy only grew {g}×"
            );
        }
    }
}

#[test]
fn measured_limit_matches_the_formula() {
    for damping in [0.0, 2.0] {
        let p = params(damping);
        let limit = p.max_render_stiffness(DT);
        let (mut stable, mut unstable) = (0.5 * limit, 1.5 * limit);
        for _ in 0..40 {
            let k = 0.5 * (stable + unstable);
            if growth(&p, k, TINY) > 10.0 {
                unstable = k;
            } else {
                stable = k;
            }
        }
        let measured = 0.5 * (stable + unstable);
        eprintln!(
            "b = {damping} N·s/m: formula {limit:.3} N/m, measured {measured:.3} N/m ({:+.2e})",
            measured / limit - 1.0
        );
        assert!((measured / limit - 1.0).abs() < 1e-3);
    }
}

#[test]
fn bouncing_contact_leaks_energy_below_the_limit() {
    // Starting above the surface, the handle hits the wall and bounces.
    for damping in [0.0, 2.0] {
        let p = params(damping);
        let limit = p.max_render_stiffness(DT);
        for factor in [0.01, 0.1] {
            let g = growth(&p, factor * limit, 2.0);
            assert!(g <= 1.05, "b = {damping}: {factor} × limit: grew {g}×");
        }
    }
    let p = params(0.0);
    let g = growth(&p, 0.9 * p.max_render_stiffness(DT), 2.0);
    assert!(g > 1e3, "undamped bouncing at 0.9 × limit only grew {g}×");
}
