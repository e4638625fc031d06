//! The MCAP encoding: one JSON message per tick with the CSV's columns,
//! and the tool's, the handle's and the manipulandum's poses as
//! `foxglove.FrameTransform`s, and the scene as Foxglove scene updates
//! (the `scene` module), under `jsonschema` schemas, in zstd chunks; the
//! file renamed into place only once finished (docs/protocol.md,
//! "Recordings").

use crate::coupling::{RecordedCoupling, COUPLING_SCHEMA, COUPLING_SCHEMA_NAME, COUPLING_TOPIC};
use crate::format::{
    unsupported_version, RecordedTick, TickFileError, FORMAT_NAME, FORMAT_VERSION,
};
use crate::mcap_io::mcap_error;
use crate::scene::{BodyMesh, SceneChannels, SceneSnapshot};
use haptic_asset::AtomicFile;
use haptic_core::Wrench;
use mcap::records::{MessageHeader, Metadata};
use mcap::{Compression, McapError, WriteOptions, Writer};
use nalgebra::{Isometry3, Quaternion, Translation3, UnitQuaternion, Vector3};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::io::{self, BufWriter};
use std::path::Path;
use std::time::Duration;

/// The topic of the tick messages.
pub const TICK_TOPIC: &str = "/ticks";
/// The schema name of the tick messages.
pub const TICK_SCHEMA_NAME: &str = "hapticd.Tick";
/// The topic of the tool's transform, `world` → `tool`.
pub const TOOL_TOPIC: &str = "/tf/tool";
/// The topic of the handle's transform, `device` → `handle`.
pub const HANDLE_TOPIC: &str = "/tf/handle";
/// The topic of the manipulandum's transform, `world` → `manipulandum`.
pub const MANIPULANDUM_TOPIC: &str = "/tf/manipulandum";

/// JSON Schema of a tick message: the CSV columns, same names and units.
pub const TICK_SCHEMA: &str = include_str!("tick.schema.json");

/// JSON Schema of `foxglove.FrameTransform`.
const FRAME_TRANSFORM_SCHEMA: &str = include_str!("frame_transform.schema.json");

/// One tick as a JSON message; the fields are [`COLUMNS`](crate::format::COLUMNS), in order.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TickMessage {
    tick: u64,
    time_ns: u64,
    x: Number,
    y: Number,
    z: Number,
    qw: Number,
    qx: Number,
    qy: Number,
    qz: Number,
    fx: Number,
    fy: Number,
    fz: Number,
    tx: Number,
    ty: Number,
    tz: Number,
    contacts: u32,
    state: u8,
    cycle_time_ns: u64,
    rendered_fx: Number,
    rendered_fy: Number,
    rendered_fz: Number,
    rendered_tx: Number,
    rendered_ty: Number,
    rendered_tz: Number,
    tool_x: Number,
    tool_y: Number,
    tool_z: Number,
    tool_qw: Number,
    tool_qx: Number,
    tool_qy: Number,
    tool_qz: Number,
    verdict: u8,
    quarantined: Flag,
}

/// A float that JSON cannot always hold: non-finite values are written as
/// `null` and read back as NaN.
#[derive(Clone, Copy)]
pub(crate) struct Number(pub(crate) f64);

impl Serialize for Number {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Some(self.0).filter(|v| v.is_finite()).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Number(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN)))
    }
}

/// A flag written as 0 or 1, as in the CSV.
#[derive(Clone, Copy)]
struct Flag(bool);

impl Serialize for Flag {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        u8::from(self.0).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match u8::deserialize(d)? {
            0 => Ok(Flag(false)),
            1 => Ok(Flag(true)),
            other => Err(serde::de::Error::custom(format_args!(
                "flag {other} is neither 0 nor 1"
            ))),
        }
    }
}

impl From<&RecordedTick> for TickMessage {
    fn from(r: &RecordedTick) -> Self {
        let n = |v: f64| Number(v);
        let (p, q) = (r.pose.translation.vector, r.pose.rotation);
        let (f, t) = (r.wrench.force, r.wrench.torque);
        let (rf, rt) = (r.rendered.force, r.rendered.torque);
        let (s, sq) = (r.tool_pose.translation.vector, r.tool_pose.rotation);
        TickMessage {
            tick: r.tick,
            time_ns: r.time.as_nanos() as u64,
            x: n(p.x),
            y: n(p.y),
            z: n(p.z),
            qw: n(q.w),
            qx: n(q.i),
            qy: n(q.j),
            qz: n(q.k),
            fx: n(f.x),
            fy: n(f.y),
            fz: n(f.z),
            tx: n(t.x),
            ty: n(t.y),
            tz: n(t.z),
            contacts: r.contacts,
            state: r.state,
            cycle_time_ns: r.cycle_time_ns,
            rendered_fx: n(rf.x),
            rendered_fy: n(rf.y),
            rendered_fz: n(rf.z),
            rendered_tx: n(rt.x),
            rendered_ty: n(rt.y),
            rendered_tz: n(rt.z),
            tool_x: n(s.x),
            tool_y: n(s.y),
            tool_z: n(s.z),
            tool_qw: n(sq.w),
            tool_qx: n(sq.i),
            tool_qy: n(sq.j),
            tool_qz: n(sq.k),
            verdict: r.verdict,
            quarantined: Flag(r.quarantined),
        }
    }
}

impl From<&TickMessage> for RecordedTick {
    fn from(m: &TickMessage) -> Self {
        let vector = |a: Number, b: Number, c: Number| Vector3::new(a.0, b.0, c.0);
        let pose = |position: Vector3<f64>, w: Number, i: Number, j: Number, k: Number| {
            Isometry3::from_parts(
                Translation3::from(position),
                UnitQuaternion::new_unchecked(Quaternion::new(w.0, i.0, j.0, k.0)),
            )
        };
        RecordedTick {
            tick: m.tick,
            time: Duration::from_nanos(m.time_ns),
            pose: pose(vector(m.x, m.y, m.z), m.qw, m.qx, m.qy, m.qz),
            wrench: Wrench {
                force: vector(m.fx, m.fy, m.fz),
                torque: vector(m.tx, m.ty, m.tz),
            },
            rendered: Wrench {
                force: vector(m.rendered_fx, m.rendered_fy, m.rendered_fz),
                torque: vector(m.rendered_tx, m.rendered_ty, m.rendered_tz),
            },
            tool_pose: pose(
                vector(m.tool_x, m.tool_y, m.tool_z),
                m.tool_qw,
                m.tool_qx,
                m.tool_qy,
                m.tool_qz,
            ),
            contacts: m.contacts,
            state: m.state,
            verdict: m.verdict,
            quarantined: m.quarantined.0,
            cycle_time_ns: m.cycle_time_ns,
        }
    }
}

/// The metadata record naming the format and its version.
pub(crate) const METADATA_NAME: &str = "hapticd";

/// The channels of a recording being written.
struct Channels {
    tick: u16,
    tool: u16,
    handle: u16,
    manipulandum: u16,
}

/// An MCAP recording being written to a temporary file beside its path.
pub struct McapWriter {
    writer: Writer<BufWriter<AtomicFile>>,
    channels: Channels,
    sequence: u32,
    /// Added with the first scene message.
    scene: Option<SceneChannels>,
    /// The rigid bodies' meshes, written with the first message.
    meshes: Option<Vec<BodyMesh>>,
    /// Added with the first coupling message.
    coupling: Option<u16>,
}

impl McapWriter {
    /// Starts a recording that appears at `path` once finished.
    pub fn create(path: &Path) -> io::Result<McapWriter> {
        let temp = AtomicFile::create(path)?;
        let options = WriteOptions::new()
            .compression(Some(Compression::Zstd))
            // Compress on the calling thread: no worker threads, and
            // equal inputs give equal bytes.
            .compression_threads(0)
            .library(concat!("hapticd ", env!("CARGO_PKG_VERSION")));
        let mut writer = options.create(BufWriter::new(temp)).map_err(mcap_error)?;
        let no_metadata = BTreeMap::new();
        let tick_schema = writer
            .add_schema(TICK_SCHEMA_NAME, "jsonschema", TICK_SCHEMA.as_bytes())
            .map_err(mcap_error)?;
        let frame_schema = writer
            .add_schema(
                "foxglove.FrameTransform",
                "jsonschema",
                FRAME_TRANSFORM_SCHEMA.as_bytes(),
            )
            .map_err(mcap_error)?;
        let mut channel = |schema, topic| {
            writer
                .add_channel(schema, topic, "json", &no_metadata)
                .map_err(mcap_error)
        };
        let channels = Channels {
            tick: channel(tick_schema, TICK_TOPIC)?,
            tool: channel(frame_schema, TOOL_TOPIC)?,
            handle: channel(frame_schema, HANDLE_TOPIC)?,
            manipulandum: channel(frame_schema, MANIPULANDUM_TOPIC)?,
        };
        writer
            .write_metadata(&Metadata {
                name: METADATA_NAME.to_owned(),
                metadata: BTreeMap::from([
                    ("format".to_owned(), FORMAT_NAME.to_owned()),
                    ("version".to_owned(), FORMAT_VERSION.to_string()),
                ]),
            })
            .map_err(mcap_error)?;
        Ok(McapWriter {
            writer,
            channels,
            sequence: 0,
            scene: None,
            meshes: None,
            coupling: None,
        })
    }

    /// Appends one tick's coupling at `time` on [`COUPLING_TOPIC`].
    pub fn record_coupling(
        &mut self,
        time: Duration,
        coupling: &RecordedCoupling,
    ) -> io::Result<()> {
        let time = time.as_nanos() as u64;
        let channel = match self.coupling {
            Some(channel) => channel,
            None => {
                let schema = self
                    .writer
                    .add_schema(
                        COUPLING_SCHEMA_NAME,
                        "jsonschema",
                        COUPLING_SCHEMA.as_bytes(),
                    )
                    .map_err(mcap_error)?;
                let channel = self
                    .writer
                    .add_channel(schema, COUPLING_TOPIC, "json", &BTreeMap::new())
                    .map_err(mcap_error)?;
                *self.coupling.insert(channel)
            }
        };
        let data = serde_json::to_vec(coupling).map_err(io::Error::other)?;
        let header = MessageHeader {
            channel_id: channel,
            sequence: self.sequence,
            log_time: time,
            publish_time: time,
        };
        self.writer
            .write_to_known_channel(&header, &data)
            .map_err(mcap_error)
    }

    /// Draws `meshes` (the tool's and the environment's) from the first
    /// message on, on `/scene/meshes`.
    pub fn set_meshes(&mut self, meshes: &[BodyMesh]) {
        self.meshes = Some(meshes.to_vec());
    }

    /// Writes the meshes set, once, at `time_ns`.
    fn write_meshes(&mut self, time_ns: u64) -> io::Result<()> {
        match self.meshes.take() {
            Some(meshes) => SceneChannels::of(&mut self.scene, &mut self.writer)?.meshes(
                &mut self.writer,
                time_ns,
                &meshes,
            ),
            None => Ok(()),
        }
    }

    /// Appends the scene at `time` (the servo's clock, as the ticks').
    pub fn record_scene(&mut self, time: Duration, snapshot: &SceneSnapshot) -> io::Result<()> {
        let time = time.as_nanos() as u64;
        self.write_meshes(time)?;
        SceneChannels::of(&mut self.scene, &mut self.writer)?.frame(
            &mut self.writer,
            time,
            snapshot,
        )
    }

    /// Appends one tick's message and the tool's, the handle's and the
    /// manipulandum's transforms.
    pub fn record(&mut self, tick: &RecordedTick, manipulandum: &Isometry3<f64>) -> io::Result<()> {
        let time = tick.time.as_nanos() as u64;
        self.write_meshes(time)?;
        let tick_json = serde_json::to_vec(&TickMessage::from(tick)).map_err(io::Error::other)?;
        let tool = frame_transform(time, "world", "tool", &tick.tool_pose);
        let handle = frame_transform(time, "device", "handle", &tick.pose);
        let manipulandum = frame_transform(time, "world", "manipulandum", manipulandum);
        let frames = [
            (self.channels.tick, &tick_json),
            (self.channels.tool, &tool),
            (self.channels.handle, &handle),
            (self.channels.manipulandum, &manipulandum),
        ];
        for (channel, data) in frames {
            let header = MessageHeader {
                channel_id: channel,
                sequence: self.sequence,
                log_time: time,
                publish_time: time,
            };
            self.writer
                .write_to_known_channel(&header, data)
                .map_err(mcap_error)?;
        }
        self.sequence = self.sequence.wrapping_add(1);
        Ok(())
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

/// A `foxglove.FrameTransform` message placing `child` in `parent`.
fn frame_transform(time_ns: u64, parent: &str, child: &str, pose: &Isometry3<f64>) -> Vec<u8> {
    let (t, q) = (pose.translation.vector, pose.rotation);
    serde_json::json!({
        "timestamp": {"sec": time_ns / 1_000_000_000, "nsec": time_ns % 1_000_000_000},
        "parent_frame_id": parent,
        "child_frame_id": child,
        "translation": {"x": t.x, "y": t.y, "z": t.z},
        "rotation": {"x": q.i, "y": q.j, "z": q.k, "w": q.w},
    })
    .to_string()
    .into_bytes()
}

/// Whether `bytes` start with the MCAP magic.
pub fn is_mcap(bytes: &[u8]) -> bool {
    bytes.starts_with(mcap::MAGIC)
}

/// Reads the tick messages of a finished MCAP recording of
/// [`FORMAT_VERSION`]; `file` names it in errors. A truncated or malformed
/// file is an error, never a shorter recording.
pub fn read_mcap(bytes: &[u8], file: &str) -> Result<Vec<RecordedTick>, TickFileError> {
    let error = |message: String| TickFileError::whole(file, message);
    let malformed = |e: McapError| {
        error(format!(
            "not a complete MCAP recording ({e}); an unfinished recording can be salvaged with `mcap recover`"
        ))
    };
    mcap::read::footer(bytes).map_err(malformed)?;
    let summary = mcap::Summary::read(bytes)
        .map_err(malformed)?
        .ok_or_else(|| malformed(McapError::UnexpectedEof))?;
    if !summary.channels.values().any(|c| c.topic == TICK_TOPIC) {
        return Err(error(format!(
            "no `{TICK_TOPIC}` channel: not a hapticd tick recording"
        )));
    }
    let version = summary
        .metadata_indexes
        .iter()
        .find(|index| index.name == METADATA_NAME)
        .map(|index| mcap::read::metadata(bytes, index).map_err(malformed))
        .transpose()?
        .filter(|metadata| metadata.metadata.get("format").map(String::as_str) == Some(FORMAT_NAME))
        .and_then(|mut metadata| metadata.metadata.remove("version"));
    match version {
        Some(version) if version == FORMAT_VERSION.to_string() => {}
        Some(version) => return Err(error(unsupported_version(&version))),
        None => {
            return Err(error(format!(
                "no `{METADATA_NAME}` metadata with `format = {FORMAT_NAME}` and its version"
            )))
        }
    }
    let mut ticks = Vec::new();
    let crcs = mcap::read::Options::ValidateChunkCrcs.into();
    for message in mcap::MessageStream::new_with_options(bytes, crcs).map_err(malformed)? {
        let message = message.map_err(malformed)?;
        let channel = &message.channel;
        if channel.topic != TICK_TOPIC {
            continue;
        }
        let schema = channel.schema.as_ref().map(|s| s.name.as_str());
        if schema != Some(TICK_SCHEMA_NAME) || channel.message_encoding != "json" {
            return Err(error(format!(
                "`{TICK_TOPIC}` is not `{TICK_SCHEMA_NAME}` in JSON (schema {schema:?}, encoding `{}`)",
                channel.message_encoding
            )));
        }
        let tick: TickMessage = serde_json::from_slice(&message.data).map_err(|e| {
            error(format!(
                "tick message {} of `{TICK_TOPIC}`: {e}",
                message.sequence
            ))
        })?;
        ticks.push(RecordedTick::from(&tick));
    }
    Ok(ticks)
}

/// Reads the coupling messages of a finished MCAP recording (none when
/// it has no [`COUPLING_TOPIC`]); `file` names it in errors.
pub fn read_coupling(bytes: &[u8], file: &str) -> Result<Vec<RecordedCoupling>, TickFileError> {
    let error = |message: String| TickFileError::whole(file, message);
    let crcs = mcap::read::Options::ValidateChunkCrcs.into();
    let messages = mcap::MessageStream::new_with_options(bytes, crcs)
        .map_err(|e| error(format!("not a complete MCAP recording ({e})")))?;
    let mut couplings = Vec::new();
    for message in messages {
        let message = message.map_err(|e| error(format!("not a complete MCAP recording ({e})")))?;
        if message.channel.topic != COUPLING_TOPIC {
            continue;
        }
        couplings.push(serde_json::from_slice(&message.data).map_err(|e| {
            error(format!(
                "coupling message {} of `{COUPLING_TOPIC}`: {e}",
                message.sequence
            ))
        })?);
    }
    Ok(couplings)
}
