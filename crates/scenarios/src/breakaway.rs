//! Coulomb's law on a flat face: a tool resting on a floor, pressed with a
//! normal force, then loaded sideways until it breaks away (or tips), in
//! either contact role, for any mesh with a flat face. The experiment behind
//! the breakaway tables of docs/rendering.md and their tests.
//!
//! **Set-up.** [`FlatTool::new`] turns a closed mesh so that its largest
//! planar face on the convex hull faces down, puts the reference point (the
//! tool's frame origin, where the coupling acts) at the
//! volume centroid and turns it by a yaw, so that nothing is aligned with the
//! axes. The floor is the top `z = 0` of a slab's field (the tool's point
//! shell meets it: role A) or a grid of points (the floor's shell meets the
//! tool's field: role B). The manipulandum presses with [`NORMAL_FORCE`],
//! the tool settles, then the sideways load ramps at the reference point,
//! in the floor plane along `direction`, to [`Breakaway::ramp_ratio`] times
//! the normal force.
//!
//! **Laws.** Coulomb with the ℓ-gon of eq 13 (vertices at `2πm/ℓ` of each
//! contact's tangent frame, which is general in the floor plane): breakaway
//! at `F_t/F_n ∈ [μ, μ/cos(π/ℓ)]`. A rigid tool pushed at height `h` above
//! its face tips first when `μ` exceeds `d/h`, `d` the face's extent from
//! below the centroid along the push ([`FlatTool::tipping_ratio`]).

use crate::scenario::{run, run_with_stalls, Path, Scenario, SceneSetup, Segment, Stalls, Trace};
use haptic_contact::{
    EnvironmentGeometry, EnvironmentObject, ForceDirection, PenaltyParameters, SharedField,
    ShellTree, ToolGeometry,
};
use haptic_mesh::shapes::box_mesh;
use haptic_mesh::TriangleMesh;
use haptic_pointshell::shapes::floor_shell;
use haptic_pointshell::{sample_point_shell, spacing_for_count};
use haptic_render::MassProperties;
use haptic_render::{FrictionModel, RenderParameters};
use haptic_sdf::{DenseField, DenseOptions, NoProgress};
use nalgebra::{Isometry3, Point3, Rotation3, Translation3, UnitQuaternion, Vector3};
use std::sync::Arc;

/// The press (N).
pub const NORMAL_FORCE: f64 = 2.5;

/// Which object carries the point shell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolRole {
    /// Role A: the tool's point shell in the floor's field.
    Shell,
    /// Role B: the floor's point shell in the tool's field.
    Field,
}

/// A closed mesh resting on its largest flat face, in its body frame.
#[derive(Clone, Debug)]
pub struct FlatTool {
    pub name: String,
    /// Body frame: reference point at the volume centroid, the resting face
    /// in the plane `z = −height`, facing down.
    pub mesh: TriangleMesh,
    /// `h`: the centroid's height above the resting face (m).
    pub height: f64,
    /// The resting face's vertices, body frame (z = −h).
    pub face: Vec<Point3<f64>>,
    /// Mass (kg) for a density of 1,000 kg/m³ and the inertia about the
    /// centroid (kg·m²), body frame.
    pub mass: MassProperties,
}

impl FlatTool {
    /// `mesh` (m) resting on its largest flat face on the convex hull,
    /// turned by `yaw` about the vertical.
    ///
    /// # Panics
    /// If the mesh has no planar face that supports it (every mesh with a
    /// flat face does), or is not closed with positive volume.
    pub fn new(name: &str, mesh: &TriangleMesh, yaw: f64) -> Self {
        let extent = mesh.aabb().extents().norm();
        let tolerance = 1e-6 * extent;
        // Group triangles by supporting plane: normal and offset.
        let mut best: Option<(f64, Vector3<f64>, f64)> = None;
        for t in 0..mesh.triangles.len() {
            let scaled = mesh.scaled_normal(t);
            if scaled.norm() == 0.0 {
                continue;
            }
            let n = scaled.normalize();
            let p = mesh.vertices[mesh.triangles[t][0] as usize].coords;
            let offset = n.dot(&p);
            if mesh
                .vertices
                .iter()
                .any(|v| n.dot(&v.coords) > offset + tolerance)
            {
                continue;
            }
            let area: f64 = (0..mesh.triangles.len())
                .filter(|&s| {
                    let m = mesh.scaled_normal(s);
                    m.norm() > 0.0
                        && m.normalize().dot(&n) > 1.0 - 1e-9
                        && (n.dot(&mesh.vertices[mesh.triangles[s][0] as usize].coords) - offset)
                            .abs()
                            <= tolerance
                })
                .map(|s| mesh.area(s))
                .sum();
            if best.is_none_or(|(a, _, _)| area > a * (1.0 + 1e-9)) {
                best = Some((area, n, offset));
            }
        }
        let (_, normal, _) = best.expect("a flat face on the convex hull");
        let turn = Rotation3::rotation_between(&normal, &-Vector3::z()).unwrap_or_else(|| {
            Rotation3::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI)
        });
        let turn = Rotation3::from_axis_angle(&Vector3::z_axis(), yaw) * turn;
        let turned: Vec<Point3<f64>> = mesh.vertices.iter().map(|v| turn * v).collect();
        let turned = TriangleMesh::new(turned, mesh.triangles.clone());
        let properties = haptic_physics::mass_properties(&turned, 1000.0)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let body = haptic_physics::centred(&turned, &properties.centre_of_mass);
        let bottom = body
            .vertices
            .iter()
            .map(|v| v.z)
            .fold(f64::INFINITY, f64::min);
        let face = body
            .vertices
            .iter()
            .filter(|v| v.z <= bottom + tolerance)
            .copied()
            .collect();
        Self {
            name: name.to_owned(),
            mesh: body,
            height: -bottom,
            face,
            mass: MassProperties {
                mass: properties.mass,
                body_inertia: properties.inertia,
            },
        }
    }

    /// `d/h`: the sideways-to-normal load ratio at which the tool, pushed at
    /// its centroid along `direction` (rad, floor plane), starts to tip
    /// over its face's edge, `d` the face's support distance along the push.
    pub fn tipping_ratio(&self, direction: f64) -> f64 {
        let u = Vector3::new(direction.cos(), direction.sin(), 0.0);
        let d = self
            .face
            .iter()
            .map(|p| p.coords.dot(&u))
            .fold(f64::NEG_INFINITY, f64::max);
        d / self.height
    }
}

/// One breakaway experiment.
#[derive(Clone, Debug)]
pub struct Breakaway {
    pub mu: f64,
    /// Push direction in the floor plane (rad).
    pub direction: f64,
    pub friction: FrictionModel,
    /// The penalty force's direction in role A.
    pub force_direction: ForceDirection,
    /// The sideways load ramps to this times [`NORMAL_FORCE`].
    pub ramp_ratio: f64,
    /// Cycles of the sideways ramp.
    pub ramp_cycles: usize,
    /// Host stalls during the ramp (segment 2): cycles whose time budget
    /// is spent before they start.
    pub stalls: Option<usize>,
}

/// What a [`Breakaway`] measured.
#[derive(Clone, Debug)]
pub struct BreakawayResult {
    /// Largest `F_t/F_n` of the rendered force during the ramp, up to the
    /// cycle the face slid 1 mm or the tool turned 0.1 rad.
    pub peak_ratio: f64,
    /// The resting face's centre slid more than 1 mm during the ramp.
    pub slid: bool,
    /// The tool turned more than 0.1 rad during the ramp.
    pub tipped: bool,
    /// How far the face's centre moved in the floor plane by the end of the
    /// ramp, or by the cycle it slid 1 mm or the tool turned 0.1 rad (m).
    pub moved: f64,
    /// How far the tool had turned at the peak (rad).
    pub tilt_at_peak: f64,
    /// Penalty contacts at the end of the settle.
    pub contacts: usize,
    pub trace: Trace,
}

/// A held load ([`FlatBed::hold`]).
#[derive(Clone, Debug)]
pub struct HoldResult {
    /// The sideways load the manipulandum's offset commands (N).
    pub commanded: f64,
    /// The rendered sideways force at the end of the hold (N).
    pub held: f64,
    /// Largest motion of the tool over the hold after its
    /// first second (the static-damping transient of the ramp's end): its
    /// translation (m) and rotation (rad) from that cycle.
    pub creep: f64,
    pub creep_rotation: f64,
    /// Largest change of the rendered force and torque over the same
    /// cycles (N, N·m).
    pub force_drift: f64,
    /// Cycles of the hold that were not static.
    pub not_static: usize,
}

/// A slab `0.3 × 0.3 × 0.04 m` with its top at `z = 0`, as a 64³ field.
fn floor_field() -> SharedField {
    let mut slab = box_mesh(Vector3::new(0.15, 0.15, 0.02));
    slab.vertices.iter_mut().for_each(|v| v.z -= 0.02);
    Arc::new(DenseField::build(
        &slab,
        &DenseOptions {
            resolution: 64,
            padding_fraction: 0.1,
        },
        &NoProgress,
    ))
}

/// A tool and a floor in one role, the geometry built once for any number
/// of experiments.
#[derive(Clone)]
pub struct FlatBed {
    pub tool: FlatTool,
    pub role: ToolRole,
    scene: SceneSetup,
}

/// Press (200 cycles) and settle (300): segments 0 and 1.
fn pressed() -> Vec<Segment> {
    vec![
        Segment::ForceRamp {
            from: Vector3::zeros(),
            to: Vector3::new(0.0, 0.0, -NORMAL_FORCE),
            cycles: 200,
        },
        Segment::Hold { cycles: 300 },
    ]
}

impl FlatBed {
    /// `tool` 0.3 mm above the floor in `role`.
    pub fn new(tool: FlatTool, role: ToolRole) -> Self {
        let size = tool.mesh.aabb().extents().max();
        let (moving, geometry) = match role {
            ToolRole::Shell => {
                let shell = sample_point_shell(&tool.mesh, spacing_for_count(&tool.mesh, 2000), 11);
                (
                    ToolGeometry {
                        shell: Some(Arc::new(ShellTree::build(shell, 6))),
                        field: None,
                    },
                    EnvironmentGeometry::Field(floor_field()),
                )
            }
            ToolRole::Field => {
                let field: SharedField = Arc::new(DenseField::build(
                    &tool.mesh,
                    &DenseOptions {
                        resolution: 96,
                        padding_fraction: 0.1,
                    },
                    &NoProgress,
                ));
                // Floor points 1.5 mm apart over twice the tool's size.
                let spacing = 1.5e-3;
                let side = (2.0 * size / spacing).ceil() as usize + 1;
                let levels = if side > 60 { 7 } else { 6 };
                (
                    ToolGeometry {
                        shell: None,
                        field: Some(field),
                    },
                    EnvironmentGeometry::Shell(Arc::new(ShellTree::build(
                        floor_shell(side, spacing),
                        levels,
                    ))),
                )
            }
        };
        let scene = SceneSetup {
            moving,
            environment: vec![EnvironmentObject {
                pose: Isometry3::identity(),
                geometry,
                friction_coefficient: 0.0,
            }],
            initial_pose: Isometry3::from_parts(
                Translation3::new(0.0, 0.0, tool.height + 3e-4),
                UnitQuaternion::identity(),
            ),
        };
        Self { tool, role, scene }
    }

    fn scenario(
        &self,
        mu: f64,
        friction: FrictionModel,
        direction: ForceDirection,
        segments: Vec<Segment>,
    ) -> Scenario {
        let mut scene = self.scene.clone();
        scene.environment[0].friction_coefficient = mu;
        let start = scene.initial_pose * Translation3::new(0.0, 0.0, -3e-4);
        let mut path = pressed();
        path.extend(segments);
        Scenario {
            name: format!("breakaway-{}", self.tool.name),
            scene,
            path: Path {
                start,
                segments: path,
            },
            parameters: RenderParameters {
                friction,
                mass: self.tool.mass,
                penalty: PenaltyParameters {
                    direction,
                    ..RenderParameters::default().penalty
                },
                ..RenderParameters::default()
            },
        }
    }

    /// The resting face's centre, `x + R (0, 0, −h)`.
    fn face_centre(&self, pose: &Isometry3<f64>) -> Vector3<f64> {
        (pose * Point3::new(0.0, 0.0, -self.tool.height)).coords
    }

    /// Press, settle, then ramp the sideways load (segment 2).
    pub fn breakaway(&self, b: &Breakaway) -> BreakawayResult {
        let load = NORMAL_FORCE * b.ramp_ratio;
        let (sin, cos) = b.direction.sin_cos();
        let ramp = Segment::ForceRamp {
            from: Vector3::zeros(),
            to: Vector3::new(load * cos, load * sin, 0.0),
            cycles: b.ramp_cycles,
        };
        let stalls = b.stalls.map(|period| Stalls {
            period,
            from_segment: 2,
        });
        let trace = run_with_stalls(
            &self.scenario(b.mu, b.friction, b.force_direction, vec![ramp]),
            stalls,
        )
        .expect("a valid scene");
        let settled = trace.segment(1).last().expect("a settle segment");
        let home = settled.simulation;
        let contacts = settled.contacts;
        let (mut peak, mut slid, mut tipped) = (0.0_f64, false, false);
        let (mut moved, mut tilt_at_peak) = (0.0, 0.0);
        for row in trace.segment(2) {
            moved = (self.face_centre(&row.simulation) - self.face_centre(&home))
                .xy()
                .norm();
            let turned = (home.rotation.inverse() * row.simulation.rotation).angle();
            slid |= moved > 1e-3;
            tipped |= turned > 0.1;
            if slid || tipped {
                break;
            }
            let f = row.coupling_force;
            if f.z.abs() > 0.0 && f.xy().norm() / f.z.abs() > peak {
                peak = f.xy().norm() / f.z.abs();
                tilt_at_peak = turned;
            }
        }
        BreakawayResult {
            peak_ratio: peak,
            slid,
            tipped,
            moved,
            tilt_at_peak,
            contacts,
            trace,
        }
    }

    /// Press, settle, ramp the sideways load along `direction` to
    /// `fraction · μ ·` [`NORMAL_FORCE`] (1,000 cycles), then hold it for
    /// `seconds` (more than 1). With a `tremor` (N), the load also swings by
    /// ± that much at 5 Hz along the push while it is held, as a hand's
    /// does; creep and drift are then taken once per swing, at its mean.
    pub fn hold(
        &self,
        mu: f64,
        direction: f64,
        fraction: f64,
        friction: FrictionModel,
        seconds: usize,
        tremor: f64,
    ) -> HoldResult {
        let commanded = fraction * mu * NORMAL_FORCE;
        let along = Vector3::new(direction.cos(), direction.sin(), 0.0);
        let swing = |from: f64, to: f64, cycles| Segment::ForceRamp {
            from: Vector3::zeros(),
            to: along * (to - from),
            cycles,
        };
        let mut segments = vec![swing(0.0, commanded, 1000)];
        // Segment 3 onwards: one 200-cycle swing per 0.2 s, back at the mean
        // at its end.
        for _ in 0..5 * seconds {
            if tremor > 0.0 {
                segments.extend([
                    swing(0.0, tremor, 50),
                    swing(tremor, -tremor, 100),
                    swing(-tremor, 0.0, 50),
                ]);
            } else {
                segments.push(Segment::Hold { cycles: 200 });
            }
        }
        let trace = run(&self.scenario(mu, friction, ForceDirection::default(), segments))
            .expect("a valid scene");
        let per_swing = if tremor > 0.0 { 3 } else { 1 };
        let rows: Vec<_> = (3..trace.rows.last().expect("rows").segment + 1)
            .filter(|s| (s - 3) % per_swing == per_swing - 1)
            .filter_map(|s| trace.segment(s).last())
            .skip(5)
            .collect();
        let first = rows[0];
        let (mut creep, mut creep_rotation, mut force_drift) = (0.0_f64, 0.0_f64, 0.0_f64);
        for row in &rows {
            let d = first.simulation.inverse() * row.simulation;
            creep = creep.max(d.translation.vector.norm());
            creep_rotation = creep_rotation.max(d.rotation.angle());
            force_drift = force_drift.max(
                (row.coupling_force - first.coupling_force)
                    .norm()
                    .max((row.coupling_torque - first.coupling_torque).norm()),
            );
        }
        let last = rows.last().expect("a hold");
        HoldResult {
            commanded,
            held: last.coupling_force.xy().norm(),
            creep,
            creep_rotation,
            force_drift,
            not_static: rows
                .iter()
                .filter(|r| r.state != haptic_friction::FrictionState::Static)
                .count(),
        }
    }
}
