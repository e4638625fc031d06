//! `hapticd simulate`: a scene's physics world alone — its movable and
//! static objects, gravity, contacts and joints, no device and no tool —
//! stepped on one thread as fast as the machine goes, into a recording of
//! every step. Equal inputs give byte-identical recordings.
//!
//! The recording is CSV (`# hapticd-simulation: 1`): after the version and
//! the step (`# dt_s: …`), a header row and one row per step, the first
//! (step 0) the state the scene starts in. Columns: `step`, `time_s`,
//! `kinetic_energy_j` (all bodies), `contacts` (penetrating shell points
//! between bodies), `max_penetration_m`, `quarantined` (bodies put back at
//! rest by this step), then per movable object `NAME_x,NAME_y,NAME_z`
//! (its centre of mass, m), `NAME_qw,NAME_qx,NAME_qy,NAME_qz` (its
//! orientation), `NAME_vx,NAME_vy,NAME_vz` (m/s) and `NAME_wx,NAME_wy,
//! NAME_wz` (rad/s), world frame. Values print in Rust's shortest
//! round-trip form (`0.065`, `2.5e-10`), so they read back to the bit.

use crate::error::{io, RunError};
use crate::physics::PhysicsReport;
use crate::scene::build_world;
use haptic_asset::AtomicFile;
use haptic_config::Scene;
use haptic_physics::{RigidBody, StepReport};
use std::io::{BufWriter, Write};
use std::path::Path;

/// The recording's first line.
pub const SIMULATION_HEADER: &str = "# hapticd-simulation: 1";

/// What a simulation did.
#[derive(Clone, Debug, PartialEq)]
pub struct SimulationReport {
    /// The step (s).
    pub dt: f64,
    /// The world's figures over every step, and the movable objects at
    /// the end.
    pub physics: PhysicsReport,
    /// Kinetic energy of the bodies at the end (J).
    pub kinetic_energy: f64,
}

/// Steps `config`'s physics world for `steps` steps of `dt` seconds,
/// recording every step to `out` (written beside it and renamed once
/// complete); `progress` is told each step done.
pub fn simulate(
    config: &Scene,
    dt: f64,
    steps: u64,
    out: &Path,
    mut progress: impl FnMut(u64),
) -> Result<SimulationReport, RunError> {
    let mut world = build_world(config)?;
    let writing = || io(format!("writing {}", out.display()));
    let mut file = AtomicFile::create(out).map_err(io(format!("creating {}", out.display())))?;
    let mut csv = BufWriter::new(file.file_mut());
    writeln!(csv, "{SIMULATION_HEADER}\n# dt_s: {dt:?}").map_err(writing())?;
    header(&mut csv, world.bodies()).map_err(writing())?;
    let mut kinetic_energy = world.kinetic_energy();
    row(
        &mut csv,
        0,
        dt,
        &StepReport {
            kinetic_energy,
            ..StepReport::default()
        },
        world.bodies(),
    )
    .map_err(writing())?;
    for step in 1..=steps {
        let report = world.advance(dt);
        kinetic_energy = report.kinetic_energy;
        row(&mut csv, step, dt, &report, world.bodies()).map_err(writing())?;
        progress(step);
    }
    csv.flush().map_err(writing())?;
    drop(csv);
    file.commit()
        .map_err(io(format!("finishing {}", out.display())))?;
    Ok(SimulationReport {
        dt,
        physics: PhysicsReport {
            steps,
            ..world.report()
        },
        kinetic_energy,
    })
}

/// Per movable object, the suffixes of its columns.
const BODY_COLUMNS: [&str; 13] = [
    "x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz",
];

fn header(out: &mut impl Write, bodies: &[RigidBody]) -> std::io::Result<()> {
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
    writeln!(out)
}

fn row(
    out: &mut impl Write,
    step: u64,
    dt: f64,
    report: &StepReport,
    bodies: &[RigidBody],
) -> std::io::Result<()> {
    write!(
        out,
        "{step},{:?},{:?},{},{:?},{}",
        step as f64 * dt,
        report.kinetic_energy,
        report.contacts,
        report.max_penetration,
        report.quarantined
    )?;
    for body in bodies.iter().filter(|b| b.is_dynamic()) {
        let x = body.state.pose.translation.vector;
        let q = body.state.pose.rotation.quaternion();
        let (v, w) = (body.state.velocity, body.state.angular_velocity);
        for value in [
            x.x, x.y, x.z, q.w, q.i, q.j, q.k, v.x, v.y, v.z, w.x, w.y, w.z,
        ] {
            write!(out, ",{value:?}")?;
        }
    }
    writeln!(out)
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
