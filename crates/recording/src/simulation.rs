//! The MCAP encoding of a `hapticd simulate` recording (docs/daemon.md,
//! "hapticd simulate"): per step, one `hapticd.SimulationStep` message on
//! `/simulation` (the CSV simulation format's columns) and, per deformable
//! body, one `hapticd.DeformableNodes` message on `/deformables/NAME` with
//! its node positions as a flat array; and the scene as Foxglove scene
//! updates (the `scene` module): JSON under `jsonschema` schemas, in zstd
//! chunks, renamed into place once finished.

use crate::format::TickFileError;
use crate::mcap_file::{is_mcap, Number, METADATA_NAME};
use crate::mcap_io::mcap_error;
use crate::scene::{BodyMesh, SceneChannels, SceneSnapshot};
use haptic_asset::AtomicFile;
use mcap::records::{MessageHeader, Metadata};
use mcap::{Compression, McapError, WriteOptions, Writer};
use nalgebra::{Isometry3, Point3, Quaternion, Translation3, UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{self, BufWriter};
use std::path::Path;

/// The simulation format's name, in the `hapticd` metadata's `format`.
pub const SIMULATION_FORMAT_NAME: &str = "hapticd-simulation";
/// The version written, and the only one read.
pub const SIMULATION_FORMAT_VERSION: u32 = 1;
/// The topic of the step messages.
pub const SIMULATION_TOPIC: &str = "/simulation";
/// The schema name of the step messages.
pub const SIMULATION_STEP_SCHEMA_NAME: &str = "hapticd.SimulationStep";
/// JSON Schema of a step message.
pub const SIMULATION_STEP_SCHEMA: &str = include_str!("simulation_step.schema.json");
/// The topic of deformable `NAME`'s nodes is this prefix and `NAME`.
pub const DEFORMABLE_TOPIC_PREFIX: &str = "/deformables/";
/// The schema name of the node messages.
pub const DEFORMABLE_NODES_SCHEMA_NAME: &str = "hapticd.DeformableNodes";
/// JSON Schema of a node message.
pub const DEFORMABLE_NODES_SCHEMA: &str = include_str!("deformable_nodes.schema.json");

/// A movable rigid body at one step.
#[derive(Clone, Debug, PartialEq)]
pub struct SimulatedBody {
    pub name: String,
    /// Body frame (origin at the centre of mass) → world.
    pub pose: Isometry3<f64>,
    /// m/s, world frame.
    pub velocity: Vector3<f64>,
    /// rad/s, world frame.
    pub angular_velocity: Vector3<f64>,
}

/// One step of a simulation.
#[derive(Clone, Debug, PartialEq)]
pub struct SimulatedStep {
    pub step: u64,
    /// s.
    pub time: f64,
    /// J.
    pub kinetic_energy: f64,
    pub contacts: u64,
    /// m.
    pub max_penetration: f64,
    pub quarantined: u64,
    /// The movable rigid bodies, in the scene's order.
    pub bodies: Vec<SimulatedBody>,
}

/// A simulation recording read back.
#[derive(Clone, Debug, PartialEq)]
pub struct SimulationRecording {
    /// The step (s).
    pub dt: f64,
    pub steps: Vec<SimulatedStep>,
    /// Per deformable body, in the order they were recorded: its name and
    /// its node positions at each step, in [`steps`](Self::steps)' order.
    pub deformables: Vec<(String, Vec<Vec<Point3<f64>>>)>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct BodyMessage {
    name: String,
    position_m: [Number; 3],
    orientation: [Number; 4],
    velocity_m_s: [Number; 3],
    angular_velocity_rad_s: [Number; 3],
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StepMessage {
    step: u64,
    time_s: Number,
    kinetic_energy_j: Number,
    contacts: u64,
    max_penetration_m: Number,
    quarantined: u64,
    bodies: Vec<BodyMessage>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct NodesMessage {
    step: u64,
    time_s: Number,
    body: String,
    nodes: usize,
    positions_m: Vec<Number>,
}

fn vector<const N: usize>(values: [f64; N]) -> [Number; N] {
    values.map(Number)
}

impl From<&SimulatedStep> for StepMessage {
    fn from(s: &SimulatedStep) -> Self {
        StepMessage {
            step: s.step,
            time_s: Number(s.time),
            kinetic_energy_j: Number(s.kinetic_energy),
            contacts: s.contacts,
            max_penetration_m: Number(s.max_penetration),
            quarantined: s.quarantined,
            bodies: s
                .bodies
                .iter()
                .map(|b| {
                    let (x, q) = (b.pose.translation.vector, b.pose.rotation);
                    BodyMessage {
                        name: b.name.clone(),
                        position_m: vector([x.x, x.y, x.z]),
                        orientation: vector([q.w, q.i, q.j, q.k]),
                        velocity_m_s: vector(b.velocity.into()),
                        angular_velocity_rad_s: vector(b.angular_velocity.into()),
                    }
                })
                .collect(),
        }
    }
}

impl From<StepMessage> for SimulatedStep {
    fn from(m: StepMessage) -> Self {
        let v = |a: [Number; 3]| Vector3::new(a[0].0, a[1].0, a[2].0);
        SimulatedStep {
            step: m.step,
            time: m.time_s.0,
            kinetic_energy: m.kinetic_energy_j.0,
            contacts: m.contacts,
            max_penetration: m.max_penetration_m.0,
            quarantined: m.quarantined,
            bodies: m
                .bodies
                .into_iter()
                .map(|b| {
                    let [w, i, j, k] = b.orientation.map(|n| n.0);
                    SimulatedBody {
                        name: b.name,
                        pose: Isometry3::from_parts(
                            Translation3::from(v(b.position_m)),
                            UnitQuaternion::new_unchecked(Quaternion::new(w, i, j, k)),
                        ),
                        velocity: v(b.velocity_m_s),
                        angular_velocity: v(b.angular_velocity_rad_s),
                    }
                })
                .collect(),
        }
    }
}

/// A simulation recording being written to a temporary file beside its
/// path.
pub struct SimulationWriter {
    writer: Writer<BufWriter<AtomicFile>>,
    step_channel: u16,
    /// Per deformable, its name and channel.
    deformables: Vec<(String, u16)>,
    sequence: u32,
    /// Added with the first scene message.
    scene: Option<SceneChannels>,
}

impl SimulationWriter {
    /// Starts a recording of steps of `dt` seconds that appears at `path`
    /// once finished, with one node channel per name of `deformables`, in
    /// the order [`record`](Self::record) is given their nodes.
    pub fn create(path: &Path, dt: f64, deformables: &[&str]) -> io::Result<SimulationWriter> {
        let temp = AtomicFile::create(path)?;
        let options = WriteOptions::new()
            .compression(Some(Compression::Zstd))
            .compression_threads(0)
            .library(concat!("hapticd ", env!("CARGO_PKG_VERSION")));
        let mut writer = options.create(BufWriter::new(temp)).map_err(mcap_error)?;
        let no_metadata = BTreeMap::new();
        let step_schema = writer
            .add_schema(
                SIMULATION_STEP_SCHEMA_NAME,
                "jsonschema",
                SIMULATION_STEP_SCHEMA.as_bytes(),
            )
            .map_err(mcap_error)?;
        let step_channel = writer
            .add_channel(step_schema, SIMULATION_TOPIC, "json", &no_metadata)
            .map_err(mcap_error)?;
        let mut channels = Vec::with_capacity(deformables.len());
        if !deformables.is_empty() {
            let nodes_schema = writer
                .add_schema(
                    DEFORMABLE_NODES_SCHEMA_NAME,
                    "jsonschema",
                    DEFORMABLE_NODES_SCHEMA.as_bytes(),
                )
                .map_err(mcap_error)?;
            for name in deformables {
                let topic = format!("{DEFORMABLE_TOPIC_PREFIX}{name}");
                let channel = writer
                    .add_channel(nodes_schema, &topic, "json", &no_metadata)
                    .map_err(mcap_error)?;
                channels.push((name.to_string(), channel));
            }
        }
        writer
            .write_metadata(&Metadata {
                name: METADATA_NAME.to_owned(),
                metadata: BTreeMap::from([
                    ("format".to_owned(), SIMULATION_FORMAT_NAME.to_owned()),
                    ("version".to_owned(), SIMULATION_FORMAT_VERSION.to_string()),
                    ("dt_s".to_owned(), format!("{dt:?}")),
                ]),
            })
            .map_err(mcap_error)?;
        Ok(SimulationWriter {
            writer,
            step_channel,
            deformables: channels,
            sequence: 0,
            scene: None,
        })
    }

    /// Draws the rigid bodies' `meshes` from the start (time 0), on
    /// `/scene/meshes`; call it once, before the steps.
    pub fn record_meshes(&mut self, meshes: &[BodyMesh]) -> io::Result<()> {
        SceneChannels::of(&mut self.scene, &mut self.writer)?.meshes(&mut self.writer, 0, meshes)
    }

    /// Appends the scene at `step`'s time.
    pub fn record_scene(
        &mut self,
        step: &SimulatedStep,
        snapshot: &SceneSnapshot,
    ) -> io::Result<()> {
        SceneChannels::of(&mut self.scene, &mut self.writer)?.frame(
            &mut self.writer,
            step_time_ns(step),
            snapshot,
        )
    }

    /// Appends one step and each deformable's node positions (one slice
    /// per name given to [`create`](Self::create), in its order).
    pub fn record(&mut self, step: &SimulatedStep, nodes: &[&[Point3<f64>]]) -> io::Result<()> {
        if nodes.len() != self.deformables.len() {
            return Err(io::Error::other(format!(
                "{} node sets for {} deformables",
                nodes.len(),
                self.deformables.len()
            )));
        }
        let time = step_time_ns(step);
        let message = serde_json::to_vec(&StepMessage::from(step)).map_err(io::Error::other)?;
        self.write(self.step_channel, time, &message)?;
        for ((name, channel), positions) in self.deformables.clone().iter().zip(nodes) {
            let message = NodesMessage {
                step: step.step,
                time_s: Number(step.time),
                body: name.clone(),
                nodes: positions.len(),
                positions_m: positions
                    .iter()
                    .flat_map(|p| [p.x, p.y, p.z])
                    .map(Number)
                    .collect(),
            };
            let bytes = serde_json::to_vec(&message).map_err(io::Error::other)?;
            self.write(*channel, time, &bytes)?;
        }
        self.sequence = self.sequence.wrapping_add(1);
        Ok(())
    }

    fn write(&mut self, channel: u16, time: u64, data: &[u8]) -> io::Result<()> {
        let header = MessageHeader {
            channel_id: channel,
            sequence: self.sequence,
            log_time: time,
            publish_time: time,
        };
        self.writer
            .write_to_known_channel(&header, data)
            .map_err(mcap_error)
    }

    /// Writes the summary, syncs the file and renames it to its path.
    pub fn finish(mut self) -> io::Result<()> {
        self.writer.finish().map_err(mcap_error)?;
        self.writer
            .into_inner()
            .into_inner()
            .map_err(io::IntoInnerError::into_error)?
            .commit()
    }
}

/// The log time of `step` (ns).
fn step_time_ns(step: &SimulatedStep) -> u64 {
    (step.time.max(0.0) * 1e9).round() as u64
}

/// Reads a finished MCAP simulation recording back, every value to the bit
/// (non-finite ones as NaN). A truncated or malformed file, another format
/// or version, a node message of a step with no step message or with a
/// count that disagrees with its positions are errors naming the file.
pub fn load_simulation(path: impl AsRef<Path>) -> Result<SimulationRecording, TickFileError> {
    let path = path.as_ref();
    let file = path.display().to_string();
    let error = |message: String| TickFileError::whole(&file, message);
    let bytes = std::fs::read(path).map_err(|e| error(format!("cannot read: {e}")))?;
    if !is_mcap(&bytes) {
        return Err(error(
            "not an MCAP file: CSV simulation recordings are read as CSV".to_owned(),
        ));
    }
    let malformed = |e: McapError| {
        error(format!(
            "not a complete MCAP recording ({e}); an unfinished recording can be salvaged with `mcap recover`"
        ))
    };
    mcap::read::footer(&bytes).map_err(malformed)?;
    let summary = mcap::Summary::read(&bytes)
        .map_err(malformed)?
        .ok_or_else(|| malformed(McapError::UnexpectedEof))?;
    let metadata = summary
        .metadata_indexes
        .iter()
        .find(|index| index.name == METADATA_NAME)
        .map(|index| mcap::read::metadata(&bytes, index).map_err(malformed))
        .transpose()?
        .map(|m| m.metadata)
        .filter(|m| m.get("format").map(String::as_str) == Some(SIMULATION_FORMAT_NAME))
        .ok_or_else(|| {
            error(format!(
                "no `{METADATA_NAME}` metadata with `format = {SIMULATION_FORMAT_NAME}`: not a simulation recording"
            ))
        })?;
    match metadata.get("version") {
        Some(v) if *v == SIMULATION_FORMAT_VERSION.to_string() => {}
        other => {
            return Err(error(format!(
                "unsupported simulation format version {other:?} (supported: {SIMULATION_FORMAT_VERSION})"
            )))
        }
    }
    let dt: f64 = metadata
        .get("dt_s")
        .and_then(|d| d.parse().ok())
        .ok_or_else(|| error("no readable `dt_s` in the metadata".to_owned()))?;
    // Channels in id order: the deformables in the order they were added.
    let mut channels: Vec<(u16, String)> = summary
        .channels
        .values()
        .filter_map(|c| {
            c.topic
                .strip_prefix(DEFORMABLE_TOPIC_PREFIX)
                .map(|name| (c.id, name.to_owned()))
        })
        .collect();
    channels.sort_unstable();
    let ids: Vec<u16> = channels.iter().map(|(id, _)| *id).collect();
    let mut deformables: Vec<(String, Vec<Vec<Point3<f64>>>)> = channels
        .into_iter()
        .map(|(_, name)| (name, Vec::new()))
        .collect();
    let mut steps = Vec::new();
    let crcs = mcap::read::Options::ValidateChunkCrcs.into();
    for message in mcap::MessageStream::new_with_options(&bytes, crcs).map_err(malformed)? {
        let message = message.map_err(malformed)?;
        let channel = &message.channel;
        let schema = channel.schema.as_ref().map(|s| s.name.as_str());
        if channel.topic == SIMULATION_TOPIC {
            if schema != Some(SIMULATION_STEP_SCHEMA_NAME) {
                return Err(error(format!(
                    "`{SIMULATION_TOPIC}` is not `{SIMULATION_STEP_SCHEMA_NAME}` (schema {schema:?})"
                )));
            }
            let step: StepMessage = serde_json::from_slice(&message.data).map_err(|e| {
                error(format!(
                    "step message {} of `{SIMULATION_TOPIC}`: {e}",
                    message.sequence
                ))
            })?;
            steps.push(SimulatedStep::from(step));
        } else if let Some(k) = ids.iter().position(|&id| id == channel.id) {
            let topic = &channel.topic;
            if schema != Some(DEFORMABLE_NODES_SCHEMA_NAME) {
                return Err(error(format!(
                    "`{topic}` is not `{DEFORMABLE_NODES_SCHEMA_NAME}` (schema {schema:?})"
                )));
            }
            let nodes: NodesMessage = serde_json::from_slice(&message.data).map_err(|e| {
                error(format!(
                    "node message {} of `{topic}`: {e}",
                    message.sequence
                ))
            })?;
            let track = &mut deformables[k].1;
            if nodes.positions_m.len() != 3 * nodes.nodes {
                return Err(error(format!(
                    "node message {} of `{topic}`: {} numbers for {} nodes",
                    message.sequence,
                    nodes.positions_m.len(),
                    nodes.nodes
                )));
            }
            if steps.last().map(|s| s.step) != Some(nodes.step) || track.len() + 1 != steps.len() {
                return Err(error(format!(
                    "node message {} of `{topic}`: step {} does not follow the step messages",
                    message.sequence, nodes.step
                )));
            }
            track.push(
                nodes
                    .positions_m
                    .chunks_exact(3)
                    .map(|c| Point3::new(c[0].0, c[1].0, c[2].0))
                    .collect(),
            );
        }
    }
    if let Some((name, track)) = deformables.iter().find(|(_, t)| t.len() != steps.len()) {
        return Err(error(format!(
            "`{DEFORMABLE_TOPIC_PREFIX}{name}` has {} node messages for {} steps",
            track.len(),
            steps.len()
        )));
    }
    Ok(SimulationRecording {
        dt,
        steps,
        deformables,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(n: u64) -> SimulatedStep {
        SimulatedStep {
            step: n,
            time: n as f64 * 0.005,
            kinetic_energy: 0.1 / (n as f64 + 3.0),
            contacts: n * 7,
            max_penetration: if n == 2 { f64::INFINITY } else { 1e-4 },
            quarantined: 0,
            bodies: vec![SimulatedBody {
                name: "crate".into(),
                pose: Isometry3::from_parts(
                    Translation3::new(0.1, -0.2, 0.3 + n as f64),
                    UnitQuaternion::from_scaled_axis(Vector3::new(0.1, 0.2, 0.3)),
                ),
                velocity: Vector3::new(1.0 / 3.0, 0.0, -9.81),
                angular_velocity: Vector3::new(0.0, 1e-17, 2.0),
            }],
        }
    }

    fn nodes(n: u64, count: usize) -> Vec<Point3<f64>> {
        (0..count)
            .map(|i| Point3::new(i as f64 / 7.0, n as f64 * 0.1, -(i as f64).sqrt()))
            .collect()
    }

    #[test]
    fn steps_and_node_positions_read_back_to_the_bit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sim.mcap");
        let mut writer = SimulationWriter::create(&path, 0.005, &["cloth", "jelly"]).unwrap();
        for n in 0..4 {
            let (a, b) = (nodes(n, 9), nodes(n + 10, 4));
            writer.record(&step(n), &[&a, &b]).unwrap();
        }
        writer.finish().unwrap();
        let read = load_simulation(&path).unwrap();
        assert_eq!(read.dt, 0.005);
        assert_eq!(read.steps.len(), 4);
        assert_eq!(read.steps[1], step(1));
        // JSON cannot hold infinity: it reads back as NaN.
        assert!(read.steps[2].max_penetration.is_nan());
        let names: Vec<&str> = read.deformables.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["cloth", "jelly"]);
        for n in 0..4u64 {
            assert_eq!(read.deformables[0].1[n as usize], nodes(n, 9));
            assert_eq!(read.deformables[1].1[n as usize], nodes(n + 10, 4));
        }
    }

    #[test]
    fn a_mismatched_node_count_and_a_tick_recording_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sim.mcap");
        let mut writer = SimulationWriter::create(&path, 0.01, &["cloth"]).unwrap();
        assert!(writer.record(&step(0), &[]).is_err());
        writer.finish().unwrap();
        let ticks = dir.path().join("ticks.mcap");
        crate::TickFile::create(&ticks).unwrap().finish().unwrap();
        let e = load_simulation(&ticks).unwrap_err();
        assert!(e.to_string().contains("not a simulation recording"), "{e}");
        assert!(e.to_string().contains("ticks.mcap"), "{e}");
    }
}
