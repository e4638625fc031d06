//! Scripted manipulandum paths run through a [`RenderingCycle`], recorded as
//! a [`Trace`], and the built-in scenes of Zhao, Li & Barbič (static
//! friction LP) §4.1, §4.2, §5.3 and §5.4 from generated geometry.

use haptic_contact::{
    EnvironmentGeometry, EnvironmentObject, SharedField, ShellTree, ToolGeometry,
};
use haptic_devices::ServoRate;
use haptic_friction::FrictionState;
use haptic_mesh::shapes::{
    block_with_hole, box_mesh, corner_mesh, cylinder, BLOCK_HALF, CUBE_HALF, PEG_LENGTH, PEG_RADIUS,
};
use haptic_mesh::TriangleMesh;
use haptic_pointshell::shapes::floor_shell;
use haptic_pointshell::{sample_point_shell, spacing_for_count};
use haptic_render::MassProperties;
use haptic_render::{
    CycleBudget, FrictionModel, FrictionVerdict, RenderError, RenderParameters, RenderingCycle,
    StageTimings,
};
use haptic_sdf::{DenseField, DenseOptions, NoProgress};
use nalgebra::{Isometry3, Matrix3, Translation3, Vector3};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path as FsPath;
use std::sync::Arc;
use std::time::Duration;

/// One piece of a manipulandum path, in servo cycles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Segment {
    /// Stay where the path is.
    Hold { cycles: usize },
    /// Move linearly (translation) and by slerp (rotation) to `to`,
    /// arriving on the last cycle.
    Line { to: Isometry3<f64>, cycles: usize },
    /// Offset the translation from the segment's start by `F / k_vc`, `F`
    /// ramping linearly from `from` to `to` (N): the coupling force grows
    /// by `F` while the tool holds still (eq 5).
    ForceRamp {
        from: Vector3<f64>,
        to: Vector3<f64>,
        cycles: usize,
    },
}

impl Segment {
    pub fn cycles(&self) -> usize {
        match *self {
            Self::Hold { cycles } | Self::Line { cycles, .. } | Self::ForceRamp { cycles, .. } => {
                cycles
            }
        }
    }
}

/// A scripted manipulandum path: one pose per servo cycle.
#[derive(Clone, Debug, PartialEq)]
pub struct Path {
    pub(crate) start: Isometry3<f64>,
    pub(crate) segments: Vec<Segment>,
}

impl Path {
    /// Every cycle's pose and segment index, `k_vc` converting force ramps.
    pub fn poses(&self, translational_stiffness: f64) -> Vec<(Isometry3<f64>, usize)> {
        let mut poses = Vec::with_capacity(self.segments.iter().map(Segment::cycles).sum());
        let mut current = self.start;
        for (index, segment) in self.segments.iter().enumerate() {
            let n = segment.cycles();
            let at = |i: usize| (i + 1) as f64 / n as f64;
            let from = current;
            for i in 0..n {
                let pose = match *segment {
                    Segment::Hold { .. } => from,
                    Segment::Line { to, .. } => from.lerp_slerp(&to, at(i)),
                    Segment::ForceRamp {
                        from: f0, to: f1, ..
                    } => {
                        let force = f0.lerp(&f1, at(i));
                        Isometry3::from_parts(
                            Translation3::from(
                                from.translation.vector + force / translational_stiffness,
                            ),
                            from.rotation,
                        )
                    }
                };
                poses.push((pose, index));
                current = pose;
            }
        }
        poses
    }
}

/// The tool's geometry, the environment and where the object
/// starts. Cloning shares the geometry.
#[derive(Clone)]
pub struct SceneSetup {
    pub moving: ToolGeometry,
    pub environment: Vec<EnvironmentObject>,
    pub initial_pose: Isometry3<f64>,
}

/// A scene, a path and the rendering parameters.
#[derive(Clone)]
pub struct Scenario {
    pub name: String,
    pub scene: SceneSetup,
    pub path: Path,
    pub parameters: RenderParameters,
}

impl Scenario {
    /// The same scenario with another friction model.
    pub fn with_friction(mut self, friction: FrictionModel) -> Self {
        self.parameters.friction = friction;
        self
    }

    /// The same scenario cut after `cycles` cycles: the segment running then
    /// ends there, at the pose (or force) it had reached.
    pub fn truncated(mut self, cycles: usize) -> Self {
        let poses = self
            .path
            .poses(self.parameters.coupling.translational_stiffness);
        let mut left = cycles;
        let mut kept = Vec::new();
        for segment in &self.path.segments {
            if left == 0 {
                break;
            }
            let (n, k) = (segment.cycles(), segment.cycles().min(left));
            kept.push(match *segment {
                _ if k == n => *segment,
                Segment::Hold { .. } => Segment::Hold { cycles: k },
                Segment::Line { .. } => Segment::Line {
                    to: poses[cycles - left + k - 1].0,
                    cycles: k,
                },
                Segment::ForceRamp { from, to, .. } => Segment::ForceRamp {
                    from,
                    to: from.lerp(&to, k as f64 / n as f64),
                    cycles: k,
                },
            });
            left -= k;
        }
        self.path.segments = kept;
        self
    }

    /// The same scenario with every environment object's `μ` set to `mu`.
    pub fn with_friction_coefficient(mut self, mu: f64) -> Self {
        for object in &mut self.scene.environment {
            object.friction_coefficient = mu;
        }
        self
    }
}

/// One cycle of a [`Trace`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceRow {
    pub cycle: usize,
    /// Index into the path's segments.
    pub segment: usize,
    /// `cycle` times the default servo period (s).
    pub time: f64,
    pub manipulandum: Isometry3<f64>,
    /// After this cycle's update.
    pub simulation: Isometry3<f64>,
    pub state: FrictionState,
    /// The friction stage's decision, with band decisions and failures.
    pub verdict: FrictionVerdict,
    pub contacts: usize,
    pub separating_dropped: usize,
    /// [`CycleReport::slip`](haptic_render::CycleReport::slip) (m).
    pub slip: f64,
    /// Coupling force and torque on the manipulandum (rendered; N, N·m).
    pub coupling_force: Vector3<f64>,
    pub(crate) coupling_torque: Vector3<f64>,
    /// Translation of this cycle's frictionless step `Δq₀` (m).
    pub frictionless_step: f64,
    pub solver_iterations: u32,
    pub timings: StageTimings,
}

/// Host stalls for [`run_with_stalls`]: from segment `from_segment` on,
/// one cycle in every `period` starts with its time budget already spent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stalls {
    pub period: usize,
    pub from_segment: usize,
}

impl Stalls {
    fn stalls(&self, cycle: usize, segment: usize) -> bool {
        segment >= self.from_segment && cycle % self.period == self.period - 1
    }
}

/// A scenario's record, one row per cycle.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    pub rows: Vec<TraceRow>,
}

/// Runs every cycle of `scenario`'s path.
pub fn run(scenario: &Scenario) -> Result<Trace, RenderError> {
    run_with_stalls(scenario, None)
}

/// A cycle budget spent before the cycle starts, as after a host stall:
/// collision affords only its always-afforded coarse levels and friction
/// answers from its warm start.
const SPENT: CycleBudget = CycleBudget {
    total: Duration::ZERO,
    collision_share: 0.5,
};

/// Runs every cycle of `scenario`'s path as [`run`] does, except that each
/// of `stalls`' cycles starts with its time budget already spent.
pub fn run_with_stalls(scenario: &Scenario, stalls: Option<Stalls>) -> Result<Trace, RenderError> {
    let setup = scenario.scene.clone();
    let p = scenario.parameters;
    let mut cycle = RenderingCycle::new(setup.moving, setup.environment, p, setup.initial_pose)?;
    let poses = scenario.path.poses(p.coupling.translational_stiffness);
    let rows = poses
        .iter()
        .enumerate()
        .map(|(i, (manipulandum, segment))| {
            let stalled = stalls.is_some_and(|s| s.stalls(i, *segment));
            if stalled {
                cycle.set_time_budget(Some(SPENT));
            }
            let report = cycle.step(manipulandum);
            if stalled {
                cycle.set_time_budget(p.time_budget);
            }
            let w = report.coupling_wrench;
            TraceRow {
                cycle: i,
                segment: *segment,
                time: i as f64 * ServoRate::DEFAULT.dt(),
                manipulandum: *manipulandum,
                simulation: report.tool_pose,
                state: report.verdict.state(),
                verdict: report.verdict,
                contacts: report.contacts,
                separating_dropped: report.separating_dropped,
                slip: report.slip,
                coupling_force: Vector3::new(w[0], w[1], w[2]),
                coupling_torque: Vector3::new(w[3], w[4], w[5]),
                frictionless_step: report.frictionless_displacement.fixed_rows::<3>(0).norm(),
                solver_iterations: report.solver_iterations,
                timings: report.timings,
            }
        })
        .collect();
    Ok(Trace { rows })
}

const COLUMNS: [&str; 34] = [
    "cycle",
    "segment",
    "time",
    "manipulandum_x",
    "manipulandum_y",
    "manipulandum_z",
    "manipulandum_qw",
    "manipulandum_qx",
    "manipulandum_qy",
    "manipulandum_qz",
    "simulation_x",
    "simulation_y",
    "simulation_z",
    "simulation_qw",
    "simulation_qx",
    "simulation_qy",
    "simulation_qz",
    "state",
    "contacts",
    "separating_dropped",
    "force_x",
    "force_y",
    "force_z",
    "torque_x",
    "torque_y",
    "torque_z",
    "frictionless_step",
    "solver_iterations",
    "collision_us",
    "assembly_us",
    "friction_us",
    "coupling_us",
    "verdict",
    "slip",
];

fn pose_values(pose: &Isometry3<f64>) -> [f64; 7] {
    let (t, q) = (pose.translation.vector, pose.rotation);
    [t.x, t.y, t.z, q.w, q.i, q.j, q.k]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

impl TraceRow {
    /// The row's values in column order, `state` as text.
    fn fields(&self) -> Vec<String> {
        let mut fields = vec![
            self.cycle.to_string(),
            self.segment.to_string(),
            format!("{:e}", self.time),
        ];
        for v in pose_values(&self.manipulandum)
            .into_iter()
            .chain(pose_values(&self.simulation))
        {
            fields.push(format!("{v:e}"));
        }
        fields.push(self.state.name().to_owned());
        fields.push(self.contacts.to_string());
        fields.push(self.separating_dropped.to_string());
        for v in self
            .coupling_force
            .iter()
            .chain(self.coupling_torque.iter())
            .chain([self.frictionless_step].iter())
        {
            fields.push(format!("{v:e}"));
        }
        fields.push(self.solver_iterations.to_string());
        let t = &self.timings;
        for d in [t.collision, t.assembly, t.friction, t.coupling] {
            fields.push(format!("{:.3}", micros(d)));
        }
        fields.push(self.verdict.name().to_owned());
        fields.push(format!("{:e}", self.slip));
        fields
    }
}

impl Trace {
    /// One header line naming the columns, then one line per cycle.
    pub fn write_csv(&self, path: impl AsRef<FsPath>) -> std::io::Result<()> {
        let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
        writeln!(out, "{}", COLUMNS.join(","))?;
        for row in &self.rows {
            writeln!(out, "{}", row.fields().join(","))?;
        }
        out.flush()
    }

    /// An array of objects, one per cycle, keyed by column name.
    pub fn write_json(&self, path: impl AsRef<FsPath>) -> std::io::Result<()> {
        let mut text = String::from("[\n");
        for (i, row) in self.rows.iter().enumerate() {
            text.push_str("  {");
            for (j, (key, value)) in COLUMNS.iter().zip(row.fields()).enumerate() {
                let sep = if j == 0 { "" } else { ", " };
                if *key == "state" {
                    let _ = write!(text, "{sep}\"{key}\": \"{value}\"");
                } else {
                    let _ = write!(text, "{sep}\"{key}\": {value}");
                }
            }
            text.push_str(if i + 1 == self.rows.len() {
                "}\n"
            } else {
                "},\n"
            });
        }
        text.push_str("]\n");
        std::fs::write(path, text)
    }

    /// The rows of path segment `segment`.
    pub fn segment(&self, segment: usize) -> impl Iterator<Item = &TraceRow> {
        self.rows.iter().filter(move |r| r.segment == segment)
    }
}

fn dense(mesh: &TriangleMesh, resolution: u32) -> SharedField {
    Arc::new(DenseField::build(
        mesh,
        &DenseOptions {
            resolution,
            padding_fraction: 0.1,
        },
        &NoProgress,
    ))
}

fn at(x: f64, y: f64, z: f64) -> Isometry3<f64> {
    Isometry3::translation(x, y, z)
}

/// Zhao et al. §5.4: a cube's point shell (about 2,000 points, 6 levels)
/// against a 90° corner's field (an L prism, 64³), `μ = 0.5`. The cube
/// starts 0.5 mm off the floor and the wall. Path segments:
///
/// 0. push 2 N into the floor and 2 N into the wall (200 cycles);
/// 1. settle (500);
/// 2. to 4. a tangential load along the edge (y) of +0.15 N, then
///    −0.15 N, then 0: 2,500 + 5,000 + 2,500 cycles. The normal loads settle
///    near 1.2 N per face (the ramp counts from the start pose, 0.5 mm
///    out), so the cone is `μ · 2.4 N ≈ 1.2 N`; but with the cube held
///    (`rank W = 6`, `Δq = 0`) friction alone must also balance the couple
///    of a load at the cube's centre, which the frozen normal forces cannot
///    take up, and the LP turns infeasible from about 0.23 N;
/// 5. ramp the tangential load to 6 N, far out of the cone (500);
/// 6. hold (500).
pub fn cube_corner(mu: f64) -> Scenario {
    cube_corner_from_meshes(
        box_mesh(Vector3::repeat(CUBE_HALF)),
        corner_mesh(0.1, 0.1, 0.02, 0.06),
        64,
        mu,
    )
}

/// [`cube_corner`]'s scene and path on given meshes, in metres: `cube` in
/// its body frame (reference point at its centre, about
/// [`CUBE_HALF`]-sized, as the default mass properties assume), `corner`
/// in the world frame with its inner edge on the y axis, floor top `z = 0`
/// and wall face `x = 0` (as [`corner_mesh`]). The cube's point shell
/// (about 2,000 points, 6 levels) meets the corner's dense field,
/// `resolution` nodes along its padded box's longest side; the cube starts
/// 0.5 mm off the floor and the wall, centred on `y = 0`.
///
/// The load the held cube takes before the LP turns infeasible depends on
/// the normal forces along the inner edge, hence on the voxel size there:
/// keep it near [`cube_corner`]'s 2.3 mm.
pub fn cube_corner_from_meshes(
    cube: TriangleMesh,
    corner: TriangleMesh,
    resolution: u32,
    mu: f64,
) -> Scenario {
    let shell = sample_point_shell(&cube, spacing_for_count(&cube, 2000), 7);
    let moving = ToolGeometry {
        shell: Some(Arc::new(ShellTree::build(shell, 6))),
        field: None,
    };
    let environment = vec![EnvironmentObject {
        pose: Isometry3::identity(),
        geometry: EnvironmentGeometry::Field(dense(&corner, resolution)),
        friction_coefficient: mu,
    }];
    let gap = 5e-4;
    let low = cube.aabb().min;
    let start = at(gap - low.x, 0.0, gap - low.z);
    let tangential = |from: f64, to: f64, cycles| Segment::ForceRamp {
        from: Vector3::new(0.0, from, 0.0),
        to: Vector3::new(0.0, to, 0.0),
        cycles,
    };
    // Each ramp restarts from the path's current pose, so the tangential
    // ramps are increments: +0.15, −0.3, +0.15, then +6 N.
    let segments = vec![
        Segment::ForceRamp {
            from: Vector3::zeros(),
            to: Vector3::new(-2.0, 0.0, -2.0),
            cycles: 200,
        },
        Segment::Hold { cycles: 500 },
        tangential(0.0, 0.15, 2500),
        tangential(0.0, -0.3, 5000),
        tangential(0.0, 0.15, 2500),
        tangential(0.0, 6.0, 500),
        Segment::Hold { cycles: 500 },
    ];
    Scenario {
        name: "cube_corner".into(),
        scene: SceneSetup {
            moving,
            environment,
            initial_pose: start,
        },
        path: Path { start, segments },
        parameters: RenderParameters::default(),
    }
}

/// The cube's field (64³) on a floor's point shell (41 × 41 points, 3 mm
/// apart, in `z = 0`): the roles of Zhao et al. §5.4. The cube starts
/// `gap` above the floor.
fn cube_on_floor(mu: f64, gap: f64) -> (SceneSetup, Isometry3<f64>) {
    let moving = ToolGeometry {
        shell: None,
        field: Some(dense(&box_mesh(Vector3::repeat(CUBE_HALF)), 64)),
    };
    let floor = EnvironmentObject {
        pose: Isometry3::identity(),
        geometry: EnvironmentGeometry::Shell(Arc::new(ShellTree::build(floor_shell(41, 0.003), 6))),
        friction_coefficient: mu,
    };
    let start = at(0.0, 0.0, CUBE_HALF + gap);
    (
        SceneSetup {
            moving,
            environment: vec![floor],
            initial_pose: start,
        },
        start,
    )
}

const PRESS: Segment = Segment::ForceRamp {
    from: Vector3::new(0.0, 0.0, 0.0),
    to: Vector3::new(0.0, 0.0, -3.0),
    cycles: 200,
};

/// Zhao et al. §4.1, Fig 6: a cube pressed onto a floor with 3 N, then lifted
/// diagonally, 20 mm up and 20 mm along x in 200 cycles (0.14 m/s).
/// Segments: 0 press (200), 1 settle (300), 2 lift (200), 3 hold (300).
pub fn box_lift(mu: f64) -> Scenario {
    let (scene, start) = cube_on_floor(mu, 3e-4);
    let pressed = start.translation.vector + Vector3::new(0.0, 0.0, -3e-3);
    let lifted = pressed + Vector3::new(0.02, 0.0, 0.02);
    Scenario {
        name: "box_lift".into(),
        scene,
        path: Path {
            start,
            segments: vec![
                PRESS,
                Segment::Hold { cycles: 300 },
                Segment::Line {
                    to: at(lifted.x, lifted.y, lifted.z),
                    cycles: 200,
                },
                Segment::Hold { cycles: 300 },
            ],
        },
        parameters: RenderParameters::default(),
    }
}

/// Zhao et al. §4.2, Fig 7: a cube pressed onto a floor with 3 N, then the
/// manipulandum jumps 10 mm along x in one cycle, far out of the cone for
/// `μ = 0.3` (10 N tangential against 0.9 N). Segments: 0 press (200),
/// 1 settle (300), 2 jump (1), 3 hold (300).
pub fn slide(mu: f64) -> Scenario {
    let (scene, start) = cube_on_floor(mu, 3e-4);
    let pressed = start.translation.vector + Vector3::new(0.0, 0.0, -3e-3);
    Scenario {
        name: "slide".into(),
        scene,
        path: Path {
            start,
            segments: vec![
                PRESS,
                Segment::Hold { cycles: 300 },
                Segment::Line {
                    to: at(pressed.x + 0.01, pressed.y, pressed.z),
                    cycles: 1,
                },
                Segment::Hold { cycles: 300 },
            ],
        },
        parameters: RenderParameters::default(),
    }
}

/// How deep the peg starts in the hole (m).
const PEG_START_DEPTH: f64 = 0.01;
/// The axial push of [`peg_in_hole`]'s ramp (segment 1), N.
const PEG_RAMP_FORCE: f64 = 1.0;

/// Zhao et al. §5.3, Fig 12: a cylindrical peg pushed into a hole `oversize`
/// narrower than it (the paper's 1 % is `oversize = 0.01`: hole radius
/// `PEG_RADIUS / (1 + oversize)`), with `μ` between peg and block.
///
/// The paper's sentence names the peg for both roles (a 128³ field and a
/// 672-point, 6-level shell); here the peg is the shell and the block the
/// field, as in §5.4's cube and corner: 672 points on the peg put about 30
/// around its circumference, where on the block most of them would land
/// on the outer faces (the spacing for 680 points yields 673). The peg
/// (10 mm × 60 mm, 128 segments) is the tool, frame at its
/// centre, axis z, a steel peg's mass; the block (50 × 50 × 30 mm, centred
/// at the origin) is sampled at 128³. The pyramid has `ℓ = 4` sides; with
/// the tangents of [`haptic_friction::FrictionContact::tangents`] the axis
/// is a pyramid vertex on the hole wall, so each contact holds up to
/// `√2 μ ‖F_n‖` axially.
///
/// The peg starts aligned, 10 mm (`PEG_START_DEPTH`) into the hole, so it
/// presses on the wall all round (about 90 contacts, `Σ‖F_n‖ ≈ 0.8 N`
/// with the default stiffness and scaling). Pushed along the axis, the
/// frictionless prediction barely moves it sideways, so §4.1 drops about
/// half the wall contacts as separating on the sign of that sideways
/// motion, and the peg breaks away at about `0.18 N · μ`, against the
/// cone's `√2 μ Σ‖F_n‖ ≈ 1.1 N · μ` with §4.1 off (`tests/peg_in_hole.rs`).
/// Path segments:
///
/// 0. hold (200 cycles): the penalty forces settle;
/// 1. ramp the push along −z from 0 to 1 N (`PEG_RAMP_FORCE`, 2,000 cycles):
///    the peg sticks until the push leaves the cone, then slips;
/// 2. move the manipulandum 15 mm further down (3,000 cycles, 5 mm/s): the
///    insertion, stick-slip at about the breakaway push;
/// 3. hold (300).
pub fn peg_in_hole(mu: f64, oversize: f64) -> Scenario {
    let peg = cylinder(PEG_RADIUS, PEG_LENGTH, 128);
    let shell = sample_point_shell(&peg, spacing_for_count(&peg, 680), 11);
    let moving = ToolGeometry {
        shell: Some(Arc::new(ShellTree::build(shell, 6))),
        field: None,
    };
    let block = block_with_hole(BLOCK_HALF, PEG_RADIUS / (1.0 + oversize), 128);
    let environment = vec![EnvironmentObject {
        pose: Isometry3::identity(),
        geometry: EnvironmentGeometry::Field(dense(&block, 128)),
        friction_coefficient: mu,
    }];
    let start = at(0.0, 0.0, BLOCK_HALF.z + 0.5 * PEG_LENGTH - PEG_START_DEPTH);
    let (r, l) = (PEG_RADIUS, PEG_LENGTH);
    let mass = 7800.0 * std::f64::consts::PI * r * r * l;
    let across = mass * (3.0 * r * r + l * l) / 12.0;
    let parameters = RenderParameters {
        mass: MassProperties {
            mass,
            body_inertia: Matrix3::from_diagonal(&Vector3::new(across, across, 0.5 * mass * r * r)),
        },
        pyramid_sides: 4,
        ..RenderParameters::default()
    };
    // Where the ramp left the manipulandum, then 15 mm deeper.
    let k_vc = parameters.coupling.translational_stiffness;
    let inserted = start.translation.z - PEG_RAMP_FORCE / k_vc - 0.015;
    Scenario {
        name: "peg_in_hole".into(),
        scene: SceneSetup {
            moving,
            environment,
            initial_pose: start,
        },
        path: Path {
            start,
            segments: vec![
                Segment::Hold { cycles: 200 },
                Segment::ForceRamp {
                    from: Vector3::zeros(),
                    to: Vector3::new(0.0, 0.0, -PEG_RAMP_FORCE),
                    cycles: 2000,
                },
                Segment::Line {
                    to: at(0.0, 0.0, inserted),
                    cycles: 3000,
                },
                Segment::Hold { cycles: 300 },
            ],
        },
        parameters,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_truncated_path_is_the_prefix_of_the_whole() {
        let whole = box_lift(0.5);
        let k = whole.parameters.coupling.translational_stiffness;
        let poses = whole.path.poses(k);
        for cycles in [0, 1, 150, 200, 201, 650, 700, poses.len(), poses.len() + 5] {
            let cut = whole.clone().truncated(cycles).path.poses(k);
            assert_eq!(cut.len(), cycles.min(poses.len()));
            for ((a, i), (b, j)) in cut.iter().zip(&poses) {
                assert_eq!(i, j);
                assert!((a.translation.vector - b.translation.vector).norm() < 1e-15);
                assert!(a.rotation.angle_to(&b.rotation) < 1e-12);
            }
        }
    }
}
