//! Coulomb's breakaway through `hapticd replay`, as a user runs it: a
//! trajectory file and scene configs written into a temporary directory,
//! the built binary replaying them with the emulator in hand mode
//! (`hand_stiffness_n_per_m = 3000`, `hand_damping_n_s_per_m = 49`, the
//! rotational hand on), the recordings read back with
//! `haptic_recording::load_recording`.
//!
//! The experiment of `haptic_scenarios::breakaway`, end to end: the hand
//! presses a tool onto a floor with about 2.5 N (its target below the
//! surface), holds, then moves slowly sideways, so that the load on the
//! tool passes the friction cone. The peak `|F_t|/|F_n|` of the rendered
//! force must lie in `[μ, μ/cos(π/ℓ)]` (ℓ = 8) within 5 %; a load held at
//! half the cone must not creep. The tool is a generated 40 × 40 × 29 mm box
//! (its point shell on a slab's field, role A, or its field on a floor's
//! point grid, role B), or metaworld's assembly ring or mug from the
//! fetched test data (role A), turned 0.37 rad about the vertical so that
//! nothing is aligned with the axes, and pushed 30° off the device's x
//! axis. The figures of every friction model are printed:
//!
//!     cargo test --release -p hapticd --test replay_breakaway -- --nocapture --test-threads 1

use haptic_devices::{LengthUnit, Trajectory, TrajectoryRow};
use haptic_recording::RecordedTick;
use haptic_render::FrictionVerdict;
use std::f64::consts::PI;
use std::path::Path;
use std::process::Command;

/// The press (N), as in `haptic_scenarios::breakaway::NORMAL_FORCE`.
const NORMAL_FORCE: f64 = 2.5;
/// The defaults of `[rendering]`: coupling stiffness (N/m), ℓ.
const COUPLING: f64 = 1000.0;
const PYRAMID_SIDES: f64 = 8.0;
/// The hand of these tests (N/m, N·s/m): stiff, near critically damped
/// for the 0.2 kg handle (2√(k m) = 49).
const HAND_STIFFNESS: f64 = 3000.0;
const HAND_DAMPING: f64 = 49.0;
/// The tool's yaw, and the push direction in the device frame (rad).
const YAW: f64 = 0.37;
const PUSH_DIRECTION: f64 = PI / 6.0;
/// The tool starts this far above the floor (m).
const GAP: f64 = 3e-4;
/// How far below its resting height the hand aims (m): the gap, the
/// penalty penetration at the 40 · 200 N/m of stiffness scaling (0.31 mm)
/// and 2.5 N through the coupling and the hand in series (3.33 mm).
const PRESS_DEPTH: f64 =
    GAP + NORMAL_FORCE / 8000.0 + NORMAL_FORCE / COUPLING + NORMAL_FORCE / HAND_STIFFNESS;
/// Trajectory rate (Hz): one sample per servo tick, as `hapticd record`
/// writes.
const RATE: f64 = 1000.0;

/// Phases of every trajectory (s): still, the press, the settle.
const STILL: f64 = 0.3;
const PRESS: f64 = 1.0;
const SETTLE: f64 = 1.0;
/// The hand's push: 20 mm over 5 s (4 mm/s), far beyond breakaway (at
/// most 4 mm of hand travel for μ = 1).
const PUSH_DISTANCE: f64 = 0.02;
const PUSH_TIME: f64 = 5.0;

fn hapticd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hapticd"))
}

/// The hand's intention, sampled at [`RATE`]: piecewise, each piece from
/// the previous position to `to` in `duration` seconds.
#[derive(Clone, Copy)]
enum Piece {
    Hold(f64),
    /// Minimum-jerk: at rest at both ends.
    Smooth([f64; 3], f64),
    /// At constant velocity.
    Linear([f64; 3], f64),
}

/// Writes the trajectory of `pieces` from the device origin (metres,
/// identity orientation) with the library's writer, in the format
/// `hapticd record` produces.
fn write_trajectory(path: &Path, pieces: &[Piece]) {
    let mut rows = Vec::new();
    let mut from = [0.0; 3];
    let mut start = 0.0;
    let mut push = |t: f64, p: [f64; 3]| {
        rows.push(TrajectoryRow {
            t_s: t,
            position: p,
            quaternion: [1.0, 0.0, 0.0, 0.0],
            buttons: 0,
        })
    };
    push(0.0, from);
    for &piece in pieces {
        let (to, duration, profile): ([f64; 3], f64, fn(f64) -> f64) = match piece {
            Piece::Hold(d) => (from, d, |s| s),
            Piece::Smooth(to, d) => (to, d, |s| s * s * s * (10.0 - 15.0 * s + 6.0 * s * s)),
            Piece::Linear(to, d) => (to, d, |s| s),
        };
        let samples = (duration * RATE).round() as usize;
        for i in 1..=samples {
            let s = profile(i as f64 / samples as f64);
            let p = [0, 1, 2].map(|k| from[k] + s * (to[k] - from[k]));
            push(start + i as f64 / RATE, p);
        }
        from = to;
        start += samples as f64 / RATE;
    }
    let trajectory = Trajectory::new(LengthUnit::Meters, RATE, rows).unwrap();
    trajectory
        .write(std::fs::File::create(path).unwrap())
        .unwrap();
}

/// Sideways in the device frame, `distance` along the push direction, the
/// hand pressing at [`PRESS_DEPTH`].
fn sideways(distance: f64) -> [f64; 3] {
    let (sin, cos) = PUSH_DIRECTION.sin_cos();
    [distance * cos, distance * sin, -PRESS_DEPTH]
}

/// Press, settle, then a slow push: the breakaway trajectory.
fn breakaway_pieces() -> Vec<Piece> {
    vec![
        Piece::Hold(STILL),
        Piece::Smooth(sideways(0.0), PRESS),
        Piece::Hold(SETTLE),
        Piece::Linear(sideways(PUSH_DISTANCE), PUSH_TIME),
        Piece::Hold(0.2),
    ]
}

/// When the push starts (s).
const PUSH_START: f64 = STILL + PRESS + SETTLE;

/// Which tool, and which object carries the point shell.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Scene {
    /// (a) The generated box's point shell on a slab's field.
    BoxShell,
    /// (b) The generated box's field on a floor's point grid.
    BoxField,
    /// (c) A mesh file as a point shell on the slab: metaworld's assembly
    /// ring, 132 mm across and 28.8 mm thick, on its flat annulus.
    RingShell,
    /// (c) metaworld's mug on its bottom disk, 54 mm across, 65.6 mm tall.
    MugShell,
}

impl Scene {
    fn name(self) -> &'static str {
        match self {
            Scene::BoxShell => "box shell on floor field",
            Scene::BoxField => "box field on floor grid",
            Scene::RingShell => "ring shell on floor field",
            Scene::MugShell => "mug shell on floor field",
        }
    }

    /// `d/h` pushed at its frame origin, its centre of mass, along the
    /// push: beyond this `F_t/F_n` a rigid tool tips over its face's edge
    /// before it slides
    /// (`haptic_scenarios::breakaway::FlatTool::tipping_ratio`).
    fn tipping_ratio(self) -> f64 {
        // The box's face, turned by YAW, pushed 30° off it: the support
        // distance of the 40 mm square along the push.
        let (sin, cos) = PUSH_DIRECTION.sin_cos();
        let support = match self {
            Scene::BoxShell | Scene::BoxField => 0.02 * (cos.abs() + sin.abs()),
            Scene::RingShell => 0.06615,
            Scene::MugShell => 0.026989,
        };
        support / self.centre_height()
    }

    /// The tool's frame, at its centre of mass, above its flat face (m).
    fn centre_height(self) -> f64 {
        match self {
            // metaworld-mug.stl: its centre of mass at z = −4.92 mm of the
            // file's frame (`hapticd inspect`).
            Scene::MugShell => 0.03358 - 0.00492,
            _ => self.height(),
        }
    }

    /// The tool's resting height: its file's origin above its flat face
    /// (m), where the config places it.
    fn height(self) -> f64 {
        match self {
            Scene::BoxShell | Scene::BoxField => 0.0145,
            // metaworld-assembly-peg-ring.stl: faces at z = ±14.39 mm.
            Scene::RingShell => 0.014394,
            // metaworld-mug.stl: the bottom disk (radius 27 mm) at
            // z = −33.58 mm of the file's frame.
            Scene::MugShell => 0.03358,
        }
    }
}

/// The slab, 300 × 300 × 40 mm with its top at z = 0, as a 64³ field.
const FLOOR_FIELD: &str = r#"
[[objects]]
name = "floor"
shape = { kind = "box", half_extents_m = [0.15, 0.15, 0.02] }
position_m = [0.0, 0.0, -0.02]
role = "field"
material = "floor"
field_resolution = 64
"#;

/// The box: 40 × 40 × 29 mm, mass and inertia at 1,000 kg/m³.
const BOX: &str = r#"shape = { kind = "box", half_extents_m = [0.02, 0.02, 0.0145] }
mass_kg = 0.0464
inertia_kg_m2 = [9.439e-6, 9.439e-6, 1.2373e-5]"#;

/// A friction model's `[rendering] friction` name.
const MODELS: [&str; 3] = ["pre_sliding", "static_lp", "yamane_springs"];

/// A fetched mesh's path; fails naming `scripts/fetch-test-data` when the
/// test data is missing.
fn mesh(name: &str) -> String {
    let path = haptic_acceptance::mesh_path(name);
    path.to_str().expect("a UTF-8 path").to_owned()
}

/// The scene's config: the tool turned by [`YAW`] and 0.3 mm above the
/// floor, the device workspace on it (turned alike, so that the handle's
/// rest orientation is the tool's), μ and the friction model.
fn config_text(scene: Scene, mu: f64, friction: &str) -> String {
    let z = scene.height() + GAP;
    let tool = match scene {
        Scene::BoxShell => format!("{BOX}\nrole = \"point_shell\"\nshell_points = 2000"),
        Scene::BoxField => format!("{BOX}\nrole = \"field\"\nfield_resolution = 96"),
        // Masses at 1,000 kg/m³; the ring's inertia that of its annulus,
        // the mug's the default's scaled to its mass.
        Scene::RingShell => format!(
            "mesh = {:?}\nmass_kg = 0.27\ninertia_kg_m2 = [4.1e-4, 4.1e-4, 7.8e-4]\n\
             role = \"point_shell\"\nshell_points = 2000",
            mesh("metaworld-assembly-peg-ring.stl")
        ),
        Scene::MugShell => format!(
            "mesh = {:?}\nmass_kg = 0.067\nrole = \"point_shell\"\nshell_points = 2000",
            mesh("metaworld-mug.stl")
        ),
    };
    // Role B: floor points 1.5 mm apart, ±52 mm, twice the turned box's
    // size as in `haptic_scenarios::breakaway`.
    let floor = match scene {
        Scene::BoxField => r#"
[[objects]]
name = "floor"
shape = { kind = "floor_grid", points_per_side = 71, spacing_m = 0.0015 }
role = "point_shell"
material = "floor"
tree_levels = 7
"#
        .to_owned(),
        _ => FLOOR_FIELD.to_owned(),
    };
    format!(
        r#"[[objects]]
name = "tool"
{tool}
tool = true
position_m = [0.0, 0.0, {z}]
rotation_rad = [0.0, 0.0, {YAW}]
{floor}
[materials.floor]
friction_coefficient = {mu}

[rendering]
friction = "{friction}"

[device]
kind = "emulator"
workspace_offset_m = [0.0, 0.0, {z}]
workspace_rotation_rad = [0.0, 0.0, {YAW}]

[device.emulator]
mode = "hand"
hand_stiffness_n_per_m = {HAND_STIFFNESS:?}
hand_damping_n_s_per_m = {HAND_DAMPING:?}
rotation = "hand"
"#
    )
}

/// Writes `scene`'s config and replays `trajectory` through it with
/// `hapticd replay`; the recording read back.
fn replay(
    dir: &Path,
    scene: Scene,
    mu: f64,
    friction: &str,
    trajectory: &Path,
) -> Vec<RecordedTick> {
    let stem = format!("{scene:?}-{mu}-{friction}");
    let config = dir.join(format!("{stem}.toml"));
    std::fs::write(&config, config_text(scene, mu, friction)).unwrap();
    let out = dir.join(format!("{stem}.csv"));
    let output = hapticd()
        .args(["replay", "--config"])
        .arg(&config)
        .arg("--trajectory")
        .arg(trajectory)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{stem}: {output:?}");
    let records = haptic_recording::load_recording(&out).unwrap();
    assert!(
        records.iter().all(|r| !r.quarantined),
        "{stem}: a quarantined pose"
    );
    records
}

fn seconds(r: &RecordedTick) -> f64 {
    r.time.as_secs_f64()
}

/// `|F_t|/|F_n|` of the rendered force (device frame: the floor normal is
/// its z axis, as the scene's).
fn ratio(r: &RecordedTick) -> f64 {
    let f = r.rendered.force;
    f.xy().norm() / f.z.abs()
}

/// What one breakaway replay measured.
#[derive(Debug)]
struct Breakaway {
    /// The rendered normal force at the end of the settle (N).
    normal: f64,
    /// Largest `|F_t|/|F_n|` of the rendered force during the push, up to
    /// the tick the tool has slid 1 mm or turned 0.1 rad from where it
    /// settled (as `haptic_scenarios::breakaway` measures, but the slip is
    /// that of the resting face's point below the frame origin: the
    /// origin of a tall tool also moves as the tool leans on its penalty
    /// contacts).
    peak: f64,
    /// The same over the whole push, sliding included.
    peak_whole_push: f64,
    /// The tool slid 1 mm.
    slid: bool,
    /// The tool turned 0.1 rad before it slid.
    tipped: bool,
    /// How far it had turned at the peak (rad).
    tilt_at_peak: f64,
    /// The largest turn during the push (rad).
    max_tilt: f64,
    /// How far the resting face had slid by the end of the recording, in
    /// the floor plane (m).
    travel: f64,
    /// Ticks per friction verdict during the push, as `FrictionVerdict`
    /// names.
    verdicts: Vec<(&'static str, usize)>,
}

fn measure(records: &[RecordedTick], scene: Scene) -> Breakaway {
    let push = records
        .iter()
        .position(|r| seconds(r) >= PUSH_START)
        .expect("the push");
    let settled = &records[push - 1];
    let home = settled.tool_pose;
    let face = nalgebra::Point3::new(0.0, 0.0, -scene.centre_height());
    let mut result = Breakaway {
        normal: settled.rendered.force.z.abs(),
        peak: 0.0,
        peak_whole_push: 0.0,
        slid: false,
        tipped: false,
        tilt_at_peak: 0.0,
        max_tilt: 0.0,
        travel: 0.0,
        verdicts: Vec::new(),
    };
    let mut counts = [0usize; 6];
    for r in &records[push..] {
        let slip = (r.tool_pose * face - home * face).xy().norm();
        let turned = (home.rotation.inverse() * r.tool_pose.rotation).angle();
        result.peak_whole_push = result.peak_whole_push.max(ratio(r));
        result.max_tilt = result.max_tilt.max(turned);
        if let Some(v) = FrictionVerdict::from_code(r.verdict) {
            counts[FrictionVerdict::ALL.iter().position(|&a| a == v).unwrap()] += 1;
        }
        if !(result.slid || result.tipped) {
            result.slid |= slip > 1e-3;
            result.tipped |= turned > 0.1;
            if !(result.slid || result.tipped) && ratio(r) > result.peak {
                result.peak = ratio(r);
                result.tilt_at_peak = turned;
            }
        }
        result.travel = slip;
    }
    result.verdicts = FrictionVerdict::ALL
        .iter()
        .zip(counts)
        .filter(|(_, n)| *n > 0)
        .map(|(v, n)| (v.name(), n))
        .collect();
    result
}

/// The breakaway replays of `scene` for each μ and every friction model,
/// printed. With `pre_sliding`, where the tool slides before it tips
/// (`μ/cos(π/ℓ)` below its tipping ratio), asserts Coulomb's law: the
/// press about 2.5 N, the tool slid 1 mm and did not tip, and the peak
/// `F_t/F_n` in `[μ, μ/cos(π/ℓ)]` within 5 %. The figures by (μ, model).
fn breakaway(scene: Scene, mus: &[f64]) -> Vec<(f64, &'static str, Breakaway)> {
    let dir = tempfile::tempdir().unwrap();
    let trajectory = dir.path().join("breakaway.traj");
    write_trajectory(&trajectory, &breakaway_pieces());
    let (low, high) = (1.0, 1.0 / (PI / PYRAMID_SIDES).cos());
    let mut results = Vec::new();
    for &mu in mus {
        let coulomb = high * mu < scene.tipping_ratio();
        for model in MODELS {
            let records = replay(dir.path(), scene, mu, model, &trajectory);
            let b = measure(&records, scene);
            println!(
                "{} μ = {mu} {model:>14}: F_n {:.3} N, peak F_t/F_n {:.4} = {:.4} μ \
                 (whole push {:.4} μ), slid {}, tipped {}, tilt at peak {:.2e} rad \
                 (largest {:.2e}), face slid {:.2} mm; verdicts {:?}{}",
                scene.name(),
                b.normal,
                b.peak,
                b.peak / mu,
                b.peak_whole_push / mu,
                b.slid,
                b.tipped,
                b.tilt_at_peak,
                b.max_tilt,
                b.travel * 1e3,
                b.verdicts,
                if coulomb {
                    String::new()
                } else {
                    format!(" (tips first: d/h = {:.3} < μ)", scene.tipping_ratio())
                }
            );
            if model == "pre_sliding" && coulomb {
                assert!(
                    (b.normal - NORMAL_FORCE).abs() < 0.1 * NORMAL_FORCE,
                    "{}: pressed with {} N",
                    scene.name(),
                    b.normal
                );
                assert!(b.slid && !b.tipped, "{} μ = {mu}: {b:?}", scene.name());
                assert!(
                    b.peak >= 0.95 * low * mu && b.peak <= 1.05 * high * mu,
                    "{} μ = {mu}: peak F_t/F_n {} outside [{}, {}] within 5 %",
                    scene.name(),
                    b.peak,
                    low * mu,
                    high * mu
                );
            }
            results.push((mu, model, b));
        }
    }
    results
}

/// (a) The box's point shell on the slab's field. Zhao, Li & Barbič's LP as stated
/// (`static_lp`) lets the box slide at a small fraction of μ in this role:
/// the old failure, kept in view.
#[test]
fn breakaway_through_replay_box_shell_on_floor_field() {
    for (mu, model, b) in breakaway(Scene::BoxShell, &[0.3, 1.0]) {
        if model == "static_lp" {
            assert!(
                b.peak < 0.5 * mu,
                "static_lp μ = {mu}: peak F_t/F_n {} is no longer far below μ",
                b.peak
            );
        }
    }
}

/// (b) The box's field on the floor's point grid.
#[test]
fn breakaway_through_replay_box_field_on_floor_grid() {
    breakaway(Scene::BoxField, &[0.3, 1.0]);
}

/// (c) Real meshes resting on a flat face in their files' frames (the
/// fetched test data; `scripts/fetch-test-data`), their point shells on
/// the slab's field: metaworld's assembly ring at μ = 0.3 and 1, and
/// metaworld's mug at μ = 0.3. Pushed at its centre of mass (its frame),
/// 28.7 mm above its 27 mm-radius bottom, the mug tips before it slides
/// once μ exceeds d/h = 0.94: at μ = 1 its figures are printed, not
/// asserted.
#[test]
fn breakaway_through_replay_real_meshes_on_floor_field() {
    breakaway(Scene::RingShell, &[0.3, 1.0]);
    breakaway(Scene::MugShell, &[0.3, 1.0]);
}

/// Press, settle, then move the hand sideways to `offset` along the push
/// direction in 1 s and hold it there for `hold` seconds.
fn held_pieces(offset: f64, hold: f64) -> Vec<Piece> {
    vec![
        Piece::Hold(STILL),
        Piece::Smooth(sideways(0.0), PRESS),
        Piece::Hold(SETTLE),
        Piece::Smooth(sideways(offset), 1.0),
        Piece::Hold(hold),
    ]
}

/// How much the tool pose and the rendered force changed over `window`:
/// the largest displacement of the tool's frame origin plus its turn
/// times `reach` (an upper bound on any of its points within `reach` of
/// the origin; m), and the largest change of the rendered force (N), both
/// from the window's first tick.
fn drift(window: &[RecordedTick], reach: f64) -> (f64, f64) {
    let first = &window[0];
    window.iter().fold((0.0_f64, 0.0_f64), |(pose, force), r| {
        let moved = (r.tool_pose.translation.vector - first.tool_pose.translation.vector).norm()
            + (first.tool_pose.rotation.inverse() * r.tool_pose.rotation).angle() * reach;
        let changed = (r.rendered.force - first.rendered.force).norm();
        (pose.max(moved), force.max(changed))
    })
}

/// How far the box's centre gives per newton of sideways load at its
/// centre as it leans on its penalty contacts (m/N): `h² / k_θ`, `h` =
/// 14.5 mm, `k_θ` the contact patch's tilt stiffness (40 · 200 N/m of
/// stiffness scaling over the 40 mm square face: `K b²/12` = 1.07
/// N·m/rad) with the coupling's and the rotational hand's 1 N·m/rad each
/// in series (0.5 N·m/rad) beside it.
const BOX_LEAN: f64 = 0.0145 * 0.0145 / (8000.0 * 0.04 * 0.04 / 12.0 + 0.5);

/// A load held at half the friction cone through the replay, for 10 s of
/// emulated time: with `pre_sliding` the tool does not creep (pose within
/// 1e-9 m, rendered force within 1e-6 N over the last 9 s); Yamane's
/// springs' creep is printed.
#[test]
fn a_held_load_at_half_the_cone_does_not_creep_through_replay() {
    let dir = tempfile::tempdir().unwrap();
    let hold = 10.0;
    for scene in [Scene::BoxShell, Scene::BoxField] {
        for mu in [0.3, 1.0] {
            // Half the cone through the coupling, the hand and the box's
            // lean in series.
            let load = 0.5 * mu * NORMAL_FORCE;
            let offset = load * (1.0 / COUPLING + 1.0 / HAND_STIFFNESS + BOX_LEAN);
            let trajectory = dir.path().join(format!("held-{mu}.traj"));
            write_trajectory(&trajectory, &held_pieces(offset, hold));
            for model in ["pre_sliding", "yamane_springs"] {
                let records = replay(dir.path(), scene, mu, model, &trajectory);
                let start = PUSH_START + 1.0;
                let window: Vec<RecordedTick> = records
                    .iter()
                    .filter(|r| seconds(r) >= start + hold - 9.0 && seconds(r) <= start + hold)
                    .cloned()
                    .collect();
                assert!(window.len() >= 8999, "{} ticks", window.len());
                // The box's corners are 28.4 mm from its centre.
                let (pose, force) = drift(&window, 0.0284);
                let static_ticks = window
                    .iter()
                    .filter(|r| {
                        FrictionVerdict::from_code(r.verdict)
                            .is_some_and(|v| v.state() == haptic_friction::FrictionState::Static)
                    })
                    .count();
                let held = &window[0];
                let load_ratio = ratio(held) / mu;
                let start_home = records
                    .iter()
                    .rfind(|r| seconds(r) < PUSH_START)
                    .unwrap()
                    .tool_pose;
                let slip = (held.tool_pose.translation.vector - start_home.translation.vector)
                    .xy()
                    .norm();
                println!(
                    "{} μ = {mu} {model:>14}: held at {:.3} of the cone (F_n {:.3} N), \
                     {:.2e} m from where it settled; over the last 9 s: pose {:.3e} m, \
                     rendered force {:.3e} N; static {static_ticks} of {} ticks",
                    scene.name(),
                    load_ratio,
                    held.rendered.force.z.abs(),
                    slip,
                    pose,
                    force,
                    window.len()
                );
                assert!(
                    (0.45..0.55).contains(&load_ratio),
                    "{} μ = {mu} {model}: the load sits at {load_ratio} of the cone",
                    scene.name()
                );
                if model == "pre_sliding" {
                    assert!(
                        pose < 1e-9 && force < 1e-6,
                        "{} μ = {mu}: the tool crept {pose} m, the force {force} N",
                        scene.name()
                    );
                }
            }
        }
    }
}
