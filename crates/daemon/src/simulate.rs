//! `hapticd simulate`: a scene's physics world alone — its movable and
//! static objects, gravity, contacts and joints, and its deformable bodies,
//! no device and no tool — stepped on one thread as fast as the machine
//! goes, into a recording of every step. Equal inputs give byte-identical
//! recordings. A scene with `[[deformables]]` steps a
//! `haptic_deformable::CoupledWorld` (the deformables with the rigid world)
//! in place of the rigid world alone.
//!
//! A recording whose path ends in `.mcap` is MCAP
//! (`haptic_recording::SimulationWriter`): per step a `/simulation` message
//! with the columns below and per deformable its node positions on
//! `/deformables/NAME`; and the scene for Foxglove's 3D panel — the bodies'
//! meshes once, then per step their frames, the deformables' surfaces and
//! an arrow per contact (docs/protocol.md, "The scene in Foxglove"). Any other path is CSV (`# hapticd-simulation: 1`):
//! after the version and the step (`# dt_s: …`), a header row and one row
//! per step, the first (step 0) the state the scene starts in. Columns:
//! `step`, `time_s`, `kinetic_energy_j` (all bodies), `contacts`
//! (penetrating shell points between bodies, and deformable surface samples
//! touching rigid bodies), `max_penetration_m`, `quarantined` (bodies put
//! back at rest by this step), then per movable object `NAME_x,NAME_y,NAME_z`
//! (its centre of mass, m), `NAME_qw,NAME_qx,NAME_qy,NAME_qz` (its
//! orientation), `NAME_vx,NAME_vy,NAME_vz` (m/s) and `NAME_wx,NAME_wy,
//! NAME_wz` (rad/s), world frame, then per deformable
//! `NAME_com_x,NAME_com_y,NAME_com_z` (its centre of mass, m; its nodes are
//! in MCAP recordings only). Values print in Rust's shortest round-trip
//! form (`0.065`, `2.5e-10`), so they read back to the bit.

use crate::error::{io, RunError};
use crate::physics::{MovableBody, PhysicsReport, PhysicsWorld};
use crate::recording::{deformable_contact_arrows, rigid_contact_arrows, world_meshes};
use crate::scene::{build_rigid_world, build_world, SceneBuildError};
use haptic_asset::AtomicFile;
use haptic_config::Scene;
use haptic_deformable::CoupledWorld;
use haptic_mesh::TriangleMesh;
use haptic_physics::{PairContact, RigidBody, StepReport};
use haptic_recording::{
    object_frame, ContactArrow, DeformableSurface, SceneSnapshot, SimulatedBody, SimulatedStep,
    SimulationWriter,
};
use nalgebra::{Isometry3, Point3, Vector3};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// The recording's first line.
pub const SIMULATION_HEADER: &str = "# hapticd-simulation: 1";

/// A deformable body as the simulation left it.
#[derive(Clone, Debug, PartialEq)]
pub struct DeformableSummary {
    /// Its name in the config.
    pub name: String,
    pub nodes: usize,
    /// kg.
    pub mass: f64,
    /// m, world frame.
    pub centre_of_mass: Point3<f64>,
    /// The fastest node's speed (m/s).
    pub max_speed: f64,
}

/// What a simulation did.
#[derive(Clone, Debug, PartialEq)]
pub struct SimulationReport {
    /// The step (s).
    pub dt: f64,
    /// The world's figures over every step, and the movable objects at
    /// the end; with deformables, contacts and penetrations count theirs
    /// too.
    pub physics: PhysicsReport,
    /// Kinetic energy of the bodies at the end (J).
    pub kinetic_energy: f64,
    /// The deformable bodies at the end, in the config's order.
    pub deformables: Vec<DeformableSummary>,
}

/// Whether `path` names an MCAP recording: it ends in `.mcap` (any case).
pub fn is_mcap_path(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("mcap"))
}

/// Steps `config`'s physics world (with its deformables, if any) for
/// `steps` steps of `dt` seconds, recording every step to `out` (written
/// beside it and renamed once complete; MCAP when it ends in `.mcap`, else
/// CSV); `progress` is told each step done.
pub fn simulate(
    config: &Scene,
    dt: f64,
    steps: u64,
    out: &Path,
    progress: impl FnMut(u64),
) -> Result<SimulationReport, RunError> {
    if config.deformables().is_empty() {
        simulate_rigid(config, dt, steps, out, progress)
    } else {
        simulate_coupled(config, dt, steps, out, progress)
    }
}

fn simulate_rigid(
    config: &Scene,
    dt: f64,
    steps: u64,
    out: &Path,
    mut progress: impl FnMut(u64),
) -> Result<SimulationReport, RunError> {
    let (mut world, meshes) = build_world(config)?;
    let mut recorder = Recorder::create(out, dt, world.bodies(), &meshes, &[])?;
    let mut kinetic_energy = world.kinetic_energy();
    let start = StepReport {
        kinetic_energy,
        ..StepReport::default()
    };
    recorder.record(
        &recorded(0, dt, &start, world.bodies()),
        Drawn::from(&world),
    )?;
    for step in 1..=steps {
        let report = world.advance(dt);
        kinetic_energy = report.kinetic_energy;
        recorder.record(
            &recorded(step, dt, &report, world.bodies()),
            Drawn::from(&world),
        )?;
        progress(step);
    }
    recorder.finish()?;
    Ok(SimulationReport {
        dt,
        physics: PhysicsReport {
            steps,
            ..world.report()
        },
        kinetic_energy,
        deformables: Vec::new(),
    })
}

fn simulate_coupled(
    config: &Scene,
    dt: f64,
    steps: u64,
    out: &Path,
    mut progress: impl FnMut(u64),
) -> Result<SimulationReport, RunError> {
    // The coupled world steps the rigid world itself, with no hook for the
    // physics thread's drag impulses: a scene that asks for drag is refused
    // rather than simulated without it.
    for (i, object) in config.objects().iter().enumerate() {
        let (linear, angular) = object.drag();
        for (field, value) in [
            ("linear_damping_n_s_per_m", linear),
            ("angular_damping_n_m_s_per_rad", angular),
        ] {
            if value > 0.0 && object.movable {
                let error = config.invalid(
                    format!("objects[{i}].{field}"),
                    "viscous drag is not applied in a scene with deformables",
                );
                return Err(SceneBuildError::from(error).into());
            }
        }
    }
    let (rigid, meshes) = build_rigid_world(config)?;
    let mut world = config
        .deformable_world(rigid)
        .map_err(SceneBuildError::from)?;
    let names: Vec<&str> = config
        .deformables()
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    let mut recorder = Recorder::create(out, dt, world.rigid().bodies(), &meshes, &names)?;
    let mut kinetic_energy = world.kinetic_energy();
    let mut report = PhysicsReport {
        steps,
        ..PhysicsReport::default()
    };
    let start = StepReport {
        kinetic_energy,
        ..StepReport::default()
    };
    recorder.record(
        &recorded(0, dt, &start, world.rigid().bodies()),
        Drawn::from(&world),
    )?;
    for step in 1..=steps {
        let coupled = world.step(dt);
        let rigid = &coupled.rigid;
        kinetic_energy = world.kinetic_energy();
        let combined = StepReport {
            kinetic_energy,
            contacts: rigid.contacts + coupled.contacts,
            max_penetration: rigid.max_penetration.max(coupled.max_penetration),
            quarantined: rigid.quarantined + coupled.quarantined,
            ..*rigid
        };
        report.max_contacts = report.max_contacts.max(combined.contacts);
        report.max_penetration = report.max_penetration.max(combined.max_penetration);
        recorder.record(
            &recorded(step, dt, &combined, world.rigid().bodies()),
            Drawn::from(&world),
        )?;
        progress(step);
    }
    recorder.finish()?;
    report.quarantined = world.rigid().quarantined() + world.quarantined();
    report.bodies = world
        .rigid()
        .bodies()
        .iter()
        .filter(|b| b.is_dynamic())
        .map(|b| MovableBody {
            name: b.model.name.clone(),
            mass: b.model.mass,
            pose: b.state.pose,
            velocity: b.state.velocity,
            angular_velocity: b.state.angular_velocity,
            impulse: Vector3::zeros(),
        })
        .collect();
    let deformables = world
        .bodies()
        .iter()
        .map(|b| DeformableSummary {
            name: b.model.name.clone(),
            nodes: b.state.positions.len(),
            mass: b.mass(),
            centre_of_mass: b.centre_of_mass(),
            max_speed: b
                .state
                .velocities
                .iter()
                .map(|v| v.norm())
                .fold(0.0, f64::max),
        })
        .collect();
    Ok(SimulationReport {
        dt,
        physics: report,
        kinetic_energy,
        deformables,
    })
}

/// Step `step`'s record: `report`'s figures and the movable `bodies`.
fn recorded(step: u64, dt: f64, report: &StepReport, bodies: &[RigidBody]) -> SimulatedStep {
    SimulatedStep {
        step,
        time: step as f64 * dt,
        kinetic_energy: report.kinetic_energy,
        contacts: report.contacts as u64,
        max_penetration: report.max_penetration,
        quarantined: report.quarantined as u64,
        bodies: bodies
            .iter()
            .filter(|b| b.is_dynamic())
            .map(|b| SimulatedBody {
                name: b.model.name.clone(),
                pose: b.state.pose,
                velocity: b.state.velocity,
                angular_velocity: b.state.angular_velocity,
            })
            .collect(),
    }
}

/// What a step's scene is drawn from: the rigid bodies, their contacts, and
/// the coupled world's deformables and their contacts, if any.
struct Drawn<'a> {
    bodies: &'a [RigidBody],
    contacts: &'a [PairContact],
    coupled: Option<&'a CoupledWorld>,
}

impl<'a> From<&'a PhysicsWorld> for Drawn<'a> {
    fn from(world: &'a PhysicsWorld) -> Self {
        Drawn {
            bodies: world.bodies(),
            contacts: world.contacts(),
            coupled: None,
        }
    }
}

impl<'a> From<&'a CoupledWorld> for Drawn<'a> {
    fn from(world: &'a CoupledWorld) -> Self {
        Drawn {
            bodies: world.rigid().bodies(),
            contacts: world.rigid().contacts(),
            coupled: Some(world),
        }
    }
}

/// Where the steps go.
enum Recorder {
    Csv {
        file: AtomicFile,
        out: String,
    },
    Mcap {
        writer: Box<SimulationWriter>,
        out: String,
        /// Each rigid body's frame, in the world's order.
        frames: Vec<String>,
        /// The contacts' arrows, kept to be refilled each step.
        arrows: Vec<ContactArrow>,
    },
}

impl Recorder {
    /// A recording of steps of `dt` of `bodies`, drawn with `meshes` (in
    /// their order, body frames), and of the deformables named.
    fn create(
        out: &Path,
        dt: f64,
        bodies: &[RigidBody],
        meshes: &[TriangleMesh],
        deformables: &[&str],
    ) -> Result<Recorder, RunError> {
        let name = out.display().to_string();
        if is_mcap_path(out) {
            let mut writer = SimulationWriter::create(out, dt, deformables)
                .map_err(io(format!("creating {name}")))?;
            writer
                .record_meshes(&world_meshes(bodies, meshes))
                .map_err(io(format!("writing {name}")))?;
            return Ok(Recorder::Mcap {
                writer: Box::new(writer),
                out: name,
                frames: bodies.iter().map(|b| object_frame(&b.model.name)).collect(),
                arrows: Vec::new(),
            });
        }
        let mut file = AtomicFile::create(out).map_err(io(format!("creating {name}")))?;
        let csv = file.file_mut();
        let writing = || io(format!("writing {name}"));
        writeln!(csv, "{SIMULATION_HEADER}\n# dt_s: {dt:?}").map_err(writing())?;
        header(csv, bodies, deformables).map_err(writing())?;
        Ok(Recorder::Csv { file, out: name })
    }

    /// Appends `step`, the deformables of the coupled world when given,
    /// and in MCAP the scene drawn.
    fn record(&mut self, step: &SimulatedStep, drawn: Drawn) -> Result<(), RunError> {
        let bodies = drawn.coupled.map_or(&[][..], CoupledWorld::bodies);
        match self {
            Recorder::Csv { file, out } => {
                let centres: Vec<Point3<f64>> = bodies.iter().map(|b| b.centre_of_mass()).collect();
                row(&mut BufWriter::new(file.file_mut()), step, &centres)
                    .map_err(io(format!("writing {out}")))
            }
            Recorder::Mcap {
                writer,
                out,
                frames,
                arrows,
            } => {
                let nodes: Vec<&[Point3<f64>]> = bodies
                    .iter()
                    .map(|b| b.state.positions.as_slice())
                    .collect();
                let poses: Vec<(&str, Isometry3<f64>)> = frames
                    .iter()
                    .zip(drawn.bodies)
                    .map(|(frame, body)| (frame.as_str(), body.state.pose))
                    .collect();
                let surfaces: Vec<DeformableSurface> = bodies
                    .iter()
                    .map(|b| DeformableSurface {
                        name: &b.model.name,
                        positions: &b.state.positions,
                        triangles: &b.model.surface,
                    })
                    .collect();
                arrows.clear();
                rigid_contact_arrows(drawn.contacts, arrows);
                if let Some(coupled) = drawn.coupled {
                    deformable_contact_arrows(coupled.contacts(), arrows);
                }
                let snapshot = SceneSnapshot {
                    poses: &poses,
                    deformables: &surfaces,
                    contacts: arrows,
                };
                writer
                    .record(step, &nodes)
                    .and_then(|()| writer.record_scene(step, &snapshot))
                    .map_err(io(format!("writing {out}")))
            }
        }
    }

    fn finish(self) -> Result<(), RunError> {
        match self {
            Recorder::Csv { file, out } => file.commit().map_err(io(format!("finishing {out}"))),
            Recorder::Mcap { writer, out, .. } => {
                writer.finish().map_err(io(format!("finishing {out}")))
            }
        }
    }
}

/// Per movable object, the suffixes of its columns.
const BODY_COLUMNS: [&str; 13] = [
    "x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz",
];

fn header(out: &mut File, bodies: &[RigidBody], deformables: &[&str]) -> std::io::Result<()> {
    let mut out = BufWriter::new(out);
    write!(
        out,
        "step,time_s,kinetic_energy_j,contacts,max_penetration_m,quarantined"
    )?;
    for body in bodies.iter().filter(|b| b.is_dynamic()) {
        for column in BODY_COLUMNS {
            write!(
                out,
                ",{}",
                csv_field(&format!("{}_{column}", body.model.name))
            )?;
        }
    }
    for name in deformables {
        for column in DEFORMABLE_COLUMNS {
            write!(out, ",{}", csv_field(&format!("{name}_{column}")))?;
        }
    }
    writeln!(out)?;
    out.flush()
}

/// Per deformable, the suffixes of its columns.
const DEFORMABLE_COLUMNS: [&str; 3] = ["com_x", "com_y", "com_z"];

fn row(
    out: &mut BufWriter<&mut File>,
    step: &SimulatedStep,
    centres: &[Point3<f64>],
) -> std::io::Result<()> {
    write!(
        out,
        "{},{:?},{:?},{},{:?},{}",
        step.step,
        step.time,
        step.kinetic_energy,
        step.contacts,
        step.max_penetration,
        step.quarantined
    )?;
    for body in &step.bodies {
        let x = body.pose.translation.vector;
        let q = body.pose.rotation.quaternion();
        let (v, w) = (body.velocity, body.angular_velocity);
        for value in [
            x.x, x.y, x.z, q.w, q.i, q.j, q.k, v.x, v.y, v.z, w.x, w.y, w.z,
        ] {
            write!(out, ",{value:?}")?;
        }
    }
    for c in centres {
        write!(out, ",{:?},{:?},{:?}", c.x, c.y, c.z)?;
    }
    writeln!(out)?;
    out.flush()
}

/// `text` as one CSV field: quoted when it holds a comma, quote or line
/// break.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}
