//! Touched bodies moved at the servo rate (`[coupling] local_models`): a
//! sphere driven at constant acceleration pushes a free 0.5 kg box in zero
//! gravity, without friction, replayed tick by tick with physics at
//! 200 Hz. While the box accelerates with the hand, the hand must feel
//! `m a` every tick, not a sawtooth at the physics rate, and the tool's
//! impulses must reach the box once. With friction, a tool pressing on a
//! box drags it, and the box carries the drag.

mod common;

use common::{handle_rows, press_and_draw, replay_rows};
use haptic_config::{Overrides, Scene};
use haptic_daemon::{replay, ReplayReport};
use haptic_devices::{LengthUnit, Trajectory, TrajectoryRow};
use haptic_recording::RecordedTick;
use std::path::Path;

const MASS_KG: f64 = 0.5;
/// The handle's acceleration (m/s²) after it has held still.
const ACCELERATION: f64 = 0.4;
const HOLD_S: f64 = 0.2;
const PUSH_S: f64 = 0.6;

/// The tool of both scenes: a 2 cm sphere's point shell.
const SPHERE: &str = r#"
[[objects]]
name = "sphere"
shape = { kind = "sphere", radius_m = 0.02 }
role = "point_shell"
tool = true
shell_points = 1000
"#;

fn scene(local_models: bool) -> String {
    format!(
        r#"{SPHERE}
# Its face touching the sphere.
[[objects]]
name = "box"
shape = {{ kind = "box", half_extents_m = [0.025, 0.025, 0.025] }}
role = "field"
position_m = [0.045, 0.0, 0.0]
movable = true
mass_kg = {MASS_KG}
field_resolution = 48

[materials.default]
friction_coefficient = 0.0

[physics]
gravity_m_s2 = [0.0, 0.0, 0.0]

[coupling]
local_models = {local_models}

[device]
kind = "emulator"
"#
    )
}

/// The handle's x at `t_s`: still, then accelerating at [`ACCELERATION`].
fn handle_x(t_s: f64) -> f64 {
    let t = (t_s - HOLD_S).clamp(0.0, PUSH_S);
    0.5 * ACCELERATION * t * t
}

fn run(local_models: bool) -> (ReplayReport, Vec<RecordedTick>) {
    replay_rows(
        &scene(local_models),
        handle_rows(HOLD_S + PUSH_S, |t| [handle_x(t), 0.0, 0.0]),
    )
}

/// The force the hand feels along the push (N) in each tick of the last
/// two thirds of the push, when the box follows the hand.
fn felt(ticks: &[RecordedTick]) -> Vec<f64> {
    ticks
        .iter()
        .filter(|t| {
            let s = t.time.as_secs_f64();
            s > HOLD_S + PUSH_S / 3.0 && s < HOLD_S + PUSH_S
        })
        .map(|t| -t.rendered.force.x)
        .collect()
}

/// Along x: the box's momentum, the impulse it received from the servo,
/// and the impulse the hand felt (the coupling's force over the ticks)
/// until the tick the last physics step read: every fifth tick's, at
/// 200 Hz, which holds the wrenches of the ticks before it. Each tick's
/// contact impulse is booked once by the physics thread, so the first two
/// agree; the third is what the servo rendered for them.
fn momentum_along_x(report: &ReplayReport, ticks: &[RecordedTick]) -> (f64, f64, f64) {
    let body = &report.physics.bodies[0];
    let booked = 5 * report.physics.steps as usize - 1;
    let pushed: f64 = ticks[..booked]
        .iter()
        .map(|t| -t.rendered.force.x * 1e-3)
        .sum();
    (MASS_KG * body.velocity.x, body.impulse.x, pushed)
}

#[test]
fn the_hand_feels_the_inertia_of_a_pushed_box_every_tick() {
    let expected = MASS_KG * ACCELERATION;
    let mut errors = Vec::new();
    for local_models in [true, false] {
        let (report, ticks) = run(local_models);
        assert_eq!(report.physics.quarantined, 0);
        let forces = felt(&ticks);
        let mean = forces.iter().sum::<f64>() / forces.len() as f64;
        let rms = (forces.iter().map(|f| (f - expected).powi(2)).sum::<f64>()
            / forces.len() as f64)
            .sqrt();
        let largest_step = forces
            .windows(2)
            .map(|w| (w[1] - w[0]).abs())
            .fold(0.0, f64::max);
        let (momentum, received, pushed) = momentum_along_x(&report, &ticks);
        eprintln!(
            "local models {local_models}: felt {mean:.4} N (RMS error {rms:.4} N, largest step \
             {largest_step:.4} N) against m a = {expected:.4} N; box momentum {momentum:.5} N·s, \
             received {received:.5}, felt {pushed:.5}"
        );
        errors.push((rms, largest_step, momentum, received, pushed));
    }
    for &(_, _, momentum, received, _) in &errors {
        assert!(
            (momentum - received).abs() < 1e-9 * momentum,
            "momentum {momentum} against the impulse received {received}"
        );
    }
    let (on, off) = (errors[0], errors[1]);
    // What the hand felt is what the box received: the servo pushed the
    // body it rendered. (Without local models the tool sinks into a body
    // that stands still between steps and lags it by static damping: the
    // hand feels half as much again as the box gets.)
    let (momentum, pushed) = (on.2, on.4);
    assert!(
        (pushed - momentum).abs() < 0.01 * momentum,
        "felt {pushed} N·s against the box's {momentum} N·s"
    );
    assert!(
        on.0 < 0.1 * expected,
        "RMS error {} N with local models",
        on.0
    );
    assert!(
        on.1 < off.1 / 3.0,
        "largest force step {} N against {} N",
        on.1,
        off.1
    );
}

/// A 0.5 kg box on a frictionless floor under gravity (the pair's μ the
/// geometric mean of the box's 1 and the floor's 0), the sphere resting on
/// its top with the box's μ = 1.
fn dragged_box(local_models: bool) -> String {
    format!(
        r#"{SPHERE}
[[objects]]
name = "box"
shape = {{ kind = "box", half_extents_m = [0.025, 0.025, 0.025] }}
role = "field"
position_m = [0.0, 0.0, -0.045]
movable = true
mass_kg = {MASS_KG}
field_resolution = 48
material = "grip"

[[objects]]
name = "floor"
shape = {{ kind = "box", half_extents_m = [0.3, 0.3, 0.01] }}
role = "field"
position_m = [0.0, 0.0, -0.08]
field_resolution = 64
material = "ice"

[materials.grip]
friction_coefficient = 1.0

[materials.ice]
friction_coefficient = 0.0

[coupling]
local_models = {local_models}

[device]
kind = "emulator"
"#
    )
}

/// The sphere presses the box's top 3 mm down, holds, and then draws it
/// along x at [`ACCELERATION`]: the tool sticks, and the friction that
/// holds it drags the box over the floor, which takes nothing along x.
/// The box's momentum along x is what the hand gave along it, tick by
/// tick, within 1 %, and the box keeps up with the hand: the servo hands
/// the bodies the friction it renders, not only the normal forces (which
/// on the flat top are all vertical).
#[test]
fn a_tool_pressing_on_a_box_drags_it_by_friction() {
    const PRESS_S: f64 = 0.4;
    for local_models in [true, false] {
        let (report, ticks) = replay_rows(
            &dragged_box(local_models),
            press_and_draw(0.003, PRESS_S, ACCELERATION, PUSH_S),
        );
        assert_eq!(report.physics.quarantined, 0);
        let (momentum, received, pushed) = momentum_along_x(&report, &ticks);
        let hand = MASS_KG * ACCELERATION * PUSH_S;
        eprintln!(
            "local models {local_models}: box momentum {momentum:.5} N·s, received {received:.5}, \
             felt {pushed:.5}, the hand's m a t {hand:.5}"
        );
        // Without local models the box stands still between steps and the
        // tool, dragging it, lags and overshoots as in the push above; the
        // drag still reaches it.
        assert!(
            momentum > 0.5 * hand,
            "the box took {momentum} N·s, the hand's drag {hand}"
        );
        if local_models {
            assert!(
                (pushed - momentum).abs() < 0.01 * momentum,
                "felt {pushed} N·s against the box's {momentum} N·s"
            );
            assert!(
                (momentum - hand).abs() < 0.05 * hand,
                "the box took {momentum} N·s, the hand's drag {hand}"
            );
        }
    }
}

/// `|Σ w_i (f_i − f̄) e^{−2πi ν t_i}|`, Hann-windowed: the force's line at
/// `ν` Hz over ticks 1 ms apart (N, up to the window's gain).
fn line_at(forces: &[f64], hz: f64) -> f64 {
    let n = forces.len() as f64;
    let mean = forces.iter().sum::<f64>() / n;
    let (mut re, mut im) = (0.0, 0.0);
    for (i, f) in forces.iter().enumerate() {
        let w = 0.5 - 0.5 * (std::f64::consts::TAU * i as f64 / (n - 1.0)).cos();
        let phase = std::f64::consts::TAU * hz * i as f64 * 1e-3;
        re += w * (f - mean) * phase.cos();
        im -= w * (f - mean) * phase.sin();
    }
    2.0 * (re * re + im * im).sqrt() / (0.5 * n)
}

/// config/push-block.toml's scripted motion, recorded at 1 kHz, replayed
/// on the emulator's hand with the physics at `rate` Hz: the force the
/// hand feels along the push in every tick.
fn push_block(rate: f64, local_models: bool) -> Vec<(f64, f64)> {
    let repo = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let base = std::fs::read_to_string(repo.join("config/push-block.toml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let motion = Scene::load(&repo.join("config/push-block.toml"), &Overrides::default())
        .unwrap()
        .device()
        .motion
        .clone()
        .unwrap();
    let rows: Vec<TrajectoryRow> = (0..=(motion.duration_s() * 1000.0).round() as usize)
        .map(|i| TrajectoryRow {
            t_s: i as f64 * 1e-3,
            position: motion.state_at(i as f64 * 1e-3).position.coords.into(),
            quaternion: [1.0, 0.0, 0.0, 0.0],
            buttons: 0,
        })
        .collect();
    let trajectory = dir.path().join("push.traj");
    Trajectory::new(LengthUnit::Meters, 1000.0, rows)
        .unwrap()
        .write(std::fs::File::create(&trajectory).unwrap())
        .unwrap();
    let path = dir.path().join("push.toml");
    std::fs::write(
        &path,
        format!(
            "{base}\n[threads.physics]\nrate_hz = {rate}\n\n[coupling]\nlocal_models = {local_models}\n"
        ),
    )
    .unwrap();
    let overrides = Overrides {
        trajectory: Some(trajectory),
        ..Overrides::default()
    };
    let config = Scene::load(&path, &overrides).unwrap();
    let out = dir.path().join("ticks.csv");
    replay(&config, &out).unwrap();
    haptic_recording::load_recording(&out)
        .unwrap()
        .iter()
        .map(|t| (t.time.as_secs_f64(), -t.rendered.force.x))
        .collect()
}

/// config/push-block.toml's sphere pushing a block across a table, with
/// physics at 50, 100 and 200 Hz: with local models the force the hand
/// feels carries no line at the physics rate.
#[test]
fn a_block_pushed_across_a_table_does_not_buzz_at_the_physics_rate() {
    for rate in [50.0, 100.0, 200.0] {
        let mut lines = Vec::new();
        for local_models in [true, false] {
            // The block sliding with the sphere.
            let forces: Vec<f64> = push_block(rate, local_models)
                .into_iter()
                .filter(|(t, _)| (1.0..2.5).contains(t))
                .map(|(_, f)| f)
                .collect();
            let mean = forces.iter().sum::<f64>() / forces.len() as f64;
            let step = forces
                .windows(2)
                .map(|w| (w[1] - w[0]).abs())
                .fold(0.0, f64::max);
            let line = line_at(&forces, rate);
            eprintln!(
                "physics at {rate} Hz, local models {local_models}: push {mean:.4} N, line at \
                 {rate} Hz {line:.2e} N, largest step between ticks {step:.4} N"
            );
            lines.push(line);
        }
        let db = 20.0 * (lines[0] / lines[1]).log10();
        eprintln!("physics at {rate} Hz: the line {db:.1} dB with local models against without");
        assert!(db <= -20.0, "{db} dB at {rate} Hz");
    }
}

/// The same push with the physics at the servo's 1 kHz is the single-rate
/// reference: at 50, 100 and 200 Hz with local models the force the hand
/// feels stays within 10 % RMS of the reference's peak, over the whole
/// push, the block's start and stop included.
#[test]
fn a_multirate_push_follows_the_single_rate_reference() {
    let reference = push_block(1000.0, true);
    let peak = reference.iter().map(|(_, f)| f.abs()).fold(0.0, f64::max);
    for rate in [50.0, 100.0, 200.0] {
        let mut errors = Vec::new();
        for local_models in [true, false] {
            let forces = push_block(rate, local_models);
            assert_eq!(forces.len(), reference.len());
            let rms = (forces
                .iter()
                .zip(&reference)
                .map(|((_, f), (_, r))| (f - r).powi(2))
                .sum::<f64>()
                / forces.len() as f64)
                .sqrt();
            eprintln!(
                "physics at {rate} Hz, local models {local_models}: RMS difference from the 1 kHz \
                 reference {rms:.4} N, {:.1} % of its {peak:.3} N peak",
                100.0 * rms / peak
            );
            errors.push(rms / peak);
        }
        assert!(errors[0] <= 0.1, "{} of the peak at {rate} Hz", errors[0]);
    }
}
