//! The scene of an MCAP recording as Foxglove's own messages, so that the
//! 3D panel of Foxglove or Lichtblick draws it with no code of ours
//! (docs/protocol.md, "The scene in Foxglove"):
//!
//! - `/scene/meshes`: one `foxglove.SceneUpdate`, at the start, with each
//!   rigid body's triangles in its own frame (`tool`, or
//!   `objects/NAME`), `frame_locked` so that they follow their frames;
//! - `/scene/transforms`: one `foxglove.FrameTransforms` per frame placing
//!   every object's frame in `world` (the tool's is the tick recording's
//!   `/tf/tool`);
//! - `/scene/deformables`: one `foxglove.SceneUpdate` per frame with each
//!   deformable's surface as an indexed `TriangleListPrimitive` (its nodes
//!   as the points, its surface triangles as the indices);
//! - `/scene/contacts`: one `foxglove.SceneUpdate` per frame with contacts,
//!   the entity `contacts` of an `ArrowPrimitive` per contact, and the
//!   entity's deletion once the contacts end.
//!
//! Each kind of update has its own topic because a player seeking in the
//! file shows the last message of each topic before the new time: the
//! meshes, written once, stay drawn. The channels are added with the first
//! scene message, so that a recording without a scene (`hapticd replay`'s)
//! is the same bytes as before there was one. Messages are JSON under the
//! `jsonschema` schemas `scene_update.schema.json` and
//! `frame_transforms.schema.json`, which describe Foxglove's messages
//! field by field. JSON has no room for non-finite numbers, and Foxglove's
//! schemas none for `null`: a transform or surface holding one is left out
//! of its frame.

use mcap::records::MessageHeader;
use mcap::Writer;
use nalgebra::{Isometry3, Point3, UnitQuaternion, Vector3};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, Seek, Write};

use crate::mcap_io::mcap_error;

/// The topic of the rigid bodies' meshes, written once.
pub const SCENE_MESHES_TOPIC: &str = "/scene/meshes";
/// The topic of the objects' frames, one message per frame.
pub const SCENE_TRANSFORMS_TOPIC: &str = "/scene/transforms";
/// The topic of the deformables' surfaces, one message per frame.
pub const SCENE_DEFORMABLES_TOPIC: &str = "/scene/deformables";
/// The topic of the contact arrows, one message per frame with contacts
/// and one as they end.
pub const SCENE_CONTACTS_TOPIC: &str = "/scene/contacts";
/// The schema name of the scene updates.
pub const SCENE_UPDATE_SCHEMA_NAME: &str = "foxglove.SceneUpdate";
/// The schema name of the transforms.
pub const FRAME_TRANSFORMS_SCHEMA_NAME: &str = "foxglove.FrameTransforms";
/// JSON Schema of `foxglove.SceneUpdate`.
pub const SCENE_UPDATE_SCHEMA: &str = include_str!("scene_update.schema.json");
/// JSON Schema of `foxglove.FrameTransforms`.
pub const FRAME_TRANSFORMS_SCHEMA: &str = include_str!("frame_transforms.schema.json");
/// The scene frame every pose is given in.
pub const WORLD_FRAME: &str = "world";
/// The id of the entity holding the contact arrows.
pub const CONTACTS_ENTITY: &str = "contacts";
/// Arrows drawn in a frame at most: of more contacts, every k-th is drawn
/// (the smallest k that keeps to this many).
pub const MAX_CONTACT_ARROWS: usize = 256;
/// The length of a contact arrow (m).
pub const CONTACT_ARROW_LENGTH_M: f64 = 0.01;

/// The frame of environment object (or simulated rigid body) `name`.
pub fn object_frame(name: &str) -> String {
    format!("objects/{name}")
}

/// What a rigid body is, for its colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyKind {
    Tool,
    Movable,
    Static,
}

/// A rigid body's triangles in its own frame.
#[derive(Clone, Debug, PartialEq)]
pub struct BodyMesh {
    /// The entity's id: the body's name.
    pub name: String,
    /// The frame the vertices are in, and that the transforms move
    /// (`tool`, or [`object_frame`]).
    pub frame_id: String,
    pub kind: BodyKind,
    /// m, body frame.
    pub vertices: Vec<Point3<f64>>,
    pub triangles: Vec<[u32; 3]>,
}

/// A deformable body's surface at one frame.
#[derive(Clone, Copy, Debug)]
pub struct DeformableSurface<'a> {
    /// The entity's id: the body's name.
    pub name: &'a str,
    /// Its nodes, world frame (m).
    pub positions: &'a [Point3<f64>],
    /// Its surface triangles, as indices into `positions`.
    pub triangles: &'a [[u32; 3]],
}

/// What a contact arrow shows, for its colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContactKind {
    /// A contact of the physics world.
    Touching,
    /// A contact of the tool that sticks.
    Static,
    /// A contact of the tool that slides.
    Sliding,
}

/// One contact, drawn as an arrow of [`CONTACT_ARROW_LENGTH_M`] from its
/// point along its direction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactArrow {
    /// World frame (m).
    pub position: Point3<f64>,
    /// The way the contact pushes, any length but zero.
    pub direction: Vector3<f64>,
    pub kind: ContactKind,
}

/// The scene at one frame.
#[derive(Clone, Copy, Debug, Default)]
pub struct SceneSnapshot<'a> {
    /// Each object frame and its pose (body frame → world).
    pub poses: &'a [(&'a str, Isometry3<f64>)],
    pub deformables: &'a [DeformableSurface<'a>],
    pub contacts: &'a [ContactArrow],
}

#[derive(Serialize)]
struct Time {
    sec: u64,
    nsec: u32,
}

impl Time {
    fn from_ns(ns: u64) -> Self {
        Time {
            sec: ns / 1_000_000_000,
            nsec: (ns % 1_000_000_000) as u32,
        }
    }
}

#[derive(Serialize)]
struct Vec3 {
    x: f64,
    y: f64,
    z: f64,
}

impl From<Vector3<f64>> for Vec3 {
    fn from(v: Vector3<f64>) -> Self {
        Vec3 {
            x: v.x,
            y: v.y,
            z: v.z,
        }
    }
}

impl From<&Point3<f64>> for Vec3 {
    fn from(p: &Point3<f64>) -> Self {
        p.coords.into()
    }
}

#[derive(Serialize)]
struct Quat {
    x: f64,
    y: f64,
    z: f64,
    w: f64,
}

impl From<UnitQuaternion<f64>> for Quat {
    fn from(q: UnitQuaternion<f64>) -> Self {
        Quat {
            x: q.i,
            y: q.j,
            z: q.k,
            w: q.w,
        }
    }
}

#[derive(Serialize)]
struct Pose {
    position: Vec3,
    orientation: Quat,
}

impl Pose {
    fn identity() -> Self {
        Pose {
            position: Vector3::zeros().into(),
            orientation: UnitQuaternion::identity().into(),
        }
    }
}

#[derive(Clone, Copy, Serialize)]
struct Color {
    r: f64,
    g: f64,
    b: f64,
    a: f64,
}

const fn rgba(r: f64, g: f64, b: f64, a: f64) -> Color {
    Color { r, g, b, a }
}

impl BodyKind {
    fn color(self) -> Color {
        match self {
            BodyKind::Tool => rgba(0.95, 0.55, 0.2, 1.0),
            BodyKind::Movable => rgba(0.35, 0.6, 0.9, 1.0),
            BodyKind::Static => rgba(0.7, 0.7, 0.7, 1.0),
        }
    }
}

impl ContactKind {
    fn color(self) -> Color {
        match self {
            ContactKind::Touching => rgba(0.9, 0.15, 0.15, 1.0),
            ContactKind::Static => rgba(0.2, 0.8, 0.3, 1.0),
            ContactKind::Sliding => rgba(1.0, 0.6, 0.1, 1.0),
        }
    }
}

/// The colour of the deformables' surfaces.
const DEFORMABLE_COLOR: Color = rgba(0.85, 0.35, 0.75, 1.0);

#[derive(Serialize)]
struct TriangleList {
    pose: Pose,
    points: Vec<Vec3>,
    color: Color,
    colors: [Color; 0],
    indices: Vec<u32>,
}

impl TriangleList {
    /// Indexed triangles over `points`.
    fn new(points: &[Point3<f64>], triangles: &[[u32; 3]], color: Color) -> Self {
        TriangleList {
            pose: Pose::identity(),
            points: points.iter().map(Vec3::from).collect(),
            color,
            colors: [],
            indices: triangles.iter().flatten().copied().collect(),
        }
    }
}

#[derive(Serialize)]
struct Arrow {
    pose: Pose,
    shaft_length: f64,
    shaft_diameter: f64,
    head_length: f64,
    head_diameter: f64,
    color: Color,
}

impl Arrow {
    /// Foxglove's arrow points along its pose's +x.
    fn new(contact: &ContactArrow) -> Option<Self> {
        let direction = contact.direction.try_normalize(0.0)?;
        let orientation = UnitQuaternion::rotation_between(&Vector3::x(), &direction)
            .unwrap_or_else(|| {
                UnitQuaternion::from_axis_angle(&Vector3::z_axis(), std::f64::consts::PI)
            });
        let length = CONTACT_ARROW_LENGTH_M;
        let finite = contact.position.iter().all(|v| v.is_finite());
        finite.then(|| Arrow {
            pose: Pose {
                position: (&contact.position).into(),
                orientation: orientation.into(),
            },
            shaft_length: 0.75 * length,
            shaft_diameter: 0.1 * length,
            head_length: 0.25 * length,
            head_diameter: 0.25 * length,
            color: contact.kind.color(),
        })
    }
}

#[derive(Serialize)]
struct KeyValue {
    key: &'static str,
    value: String,
}

#[derive(Serialize)]
struct Lifetime {
    sec: i64,
    nsec: u32,
}

#[derive(Serialize)]
struct Entity<'a> {
    timestamp: Time,
    frame_id: &'a str,
    id: &'a str,
    /// Zero: shown until replaced or deleted.
    lifetime: Lifetime,
    frame_locked: bool,
    metadata: Vec<KeyValue>,
    arrows: Vec<Arrow>,
    cubes: [(); 0],
    spheres: [(); 0],
    cylinders: [(); 0],
    lines: [(); 0],
    triangles: Vec<TriangleList>,
    texts: [(); 0],
    models: [(); 0],
}

impl<'a> Entity<'a> {
    fn new(time_ns: u64, frame_id: &'a str, id: &'a str) -> Self {
        Entity {
            timestamp: Time::from_ns(time_ns),
            frame_id,
            id,
            lifetime: Lifetime { sec: 0, nsec: 0 },
            frame_locked: false,
            metadata: Vec::new(),
            arrows: Vec::new(),
            cubes: [],
            spheres: [],
            cylinders: [],
            lines: [],
            triangles: Vec::new(),
            texts: [],
            models: [],
        }
    }
}

#[derive(Serialize)]
struct Deletion<'a> {
    timestamp: Time,
    /// 0: the entity of this id on the same topic.
    r#type: u8,
    id: &'a str,
}

#[derive(Serialize)]
struct SceneUpdate<'a> {
    deletions: Vec<Deletion<'a>>,
    entities: Vec<Entity<'a>>,
}

#[derive(Serialize)]
struct FrameTransform<'a> {
    timestamp: Time,
    parent_frame_id: &'a str,
    child_frame_id: &'a str,
    translation: Vec3,
    rotation: Quat,
}

#[derive(Serialize)]
struct FrameTransforms<'a> {
    transforms: Vec<FrameTransform<'a>>,
}

fn is_finite_pose(pose: &Isometry3<f64>) -> bool {
    pose.translation.vector.iter().all(|v| v.is_finite())
        && pose.rotation.coords.iter().all(|v| v.is_finite())
}

/// The scene's channels in a recording being written, and whether the
/// contact arrows are shown.
pub(crate) struct SceneChannels {
    meshes: u16,
    transforms: u16,
    deformables: u16,
    contacts: u16,
    contacts_shown: bool,
    sequence: u32,
}

impl SceneChannels {
    /// The scene's channels of `writer`, added to it on first use, so that a
    /// recording without a scene is the same bytes as before it had one.
    pub(crate) fn of<'a, W: Write + Seek>(
        scene: &'a mut Option<SceneChannels>,
        writer: &mut Writer<W>,
    ) -> io::Result<&'a mut SceneChannels> {
        if scene.is_none() {
            *scene = Some(SceneChannels::add(writer)?);
        }
        Ok(scene.as_mut().expect("added"))
    }

    /// Adds the scene's schemas and channels to `writer`.
    fn add<W: Write + Seek>(writer: &mut Writer<W>) -> io::Result<SceneChannels> {
        let no_metadata = BTreeMap::new();
        let update = writer
            .add_schema(
                SCENE_UPDATE_SCHEMA_NAME,
                "jsonschema",
                SCENE_UPDATE_SCHEMA.as_bytes(),
            )
            .map_err(mcap_error)?;
        let transforms = writer
            .add_schema(
                FRAME_TRANSFORMS_SCHEMA_NAME,
                "jsonschema",
                FRAME_TRANSFORMS_SCHEMA.as_bytes(),
            )
            .map_err(mcap_error)?;
        let mut channel = |schema, topic| {
            writer
                .add_channel(schema, topic, "json", &no_metadata)
                .map_err(mcap_error)
        };
        Ok(SceneChannels {
            meshes: channel(update, SCENE_MESHES_TOPIC)?,
            transforms: channel(transforms, SCENE_TRANSFORMS_TOPIC)?,
            deformables: channel(update, SCENE_DEFORMABLES_TOPIC)?,
            contacts: channel(update, SCENE_CONTACTS_TOPIC)?,
            contacts_shown: false,
            sequence: 0,
        })
    }

    /// Writes the rigid bodies' `meshes` at `time_ns`; a body without
    /// triangles is left out.
    pub(crate) fn meshes<W: Write + Seek>(
        &mut self,
        writer: &mut Writer<W>,
        time_ns: u64,
        meshes: &[BodyMesh],
    ) -> io::Result<()> {
        let entities = meshes
            .iter()
            .filter(|m| !m.triangles.is_empty())
            .map(|mesh| Entity {
                frame_locked: true,
                metadata: vec![KeyValue {
                    key: "kind",
                    value: format!("{:?}", mesh.kind).to_lowercase(),
                }],
                triangles: vec![TriangleList::new(
                    &mesh.vertices,
                    &mesh.triangles,
                    mesh.kind.color(),
                )],
                ..Entity::new(time_ns, &mesh.frame_id, &mesh.name)
            })
            .collect();
        let update = SceneUpdate {
            deletions: Vec::new(),
            entities,
        };
        write_json(writer, self.meshes, 0, time_ns, &update)
    }

    /// Writes one frame at `time_ns`: the objects' transforms, the
    /// deformables' surfaces when there are any, and the contact arrows
    /// when there are contacts or they just ended.
    pub(crate) fn frame<W: Write + Seek>(
        &mut self,
        writer: &mut Writer<W>,
        time_ns: u64,
        snapshot: &SceneSnapshot,
    ) -> io::Result<()> {
        let sequence = self.sequence;
        self.sequence = self.sequence.wrapping_add(1);
        if !snapshot.poses.is_empty() {
            let transforms = FrameTransforms {
                transforms: snapshot
                    .poses
                    .iter()
                    .filter(|(_, pose)| is_finite_pose(pose))
                    .map(|(frame, pose)| FrameTransform {
                        timestamp: Time::from_ns(time_ns),
                        parent_frame_id: WORLD_FRAME,
                        child_frame_id: frame,
                        translation: pose.translation.vector.into(),
                        rotation: pose.rotation.into(),
                    })
                    .collect(),
            };
            write_json(writer, self.transforms, sequence, time_ns, &transforms)?;
        }
        if !snapshot.deformables.is_empty() {
            let entities = snapshot
                .deformables
                .iter()
                .filter(|d| d.positions.iter().all(|p| p.iter().all(|v| v.is_finite())))
                .map(|d| Entity {
                    triangles: vec![TriangleList::new(
                        d.positions,
                        d.triangles,
                        DEFORMABLE_COLOR,
                    )],
                    ..Entity::new(time_ns, WORLD_FRAME, d.name)
                })
                .collect();
            let update = SceneUpdate {
                deletions: Vec::new(),
                entities,
            };
            write_json(writer, self.deformables, sequence, time_ns, &update)?;
        }
        let stride = snapshot.contacts.len().div_ceil(MAX_CONTACT_ARROWS).max(1);
        let arrows: Vec<Arrow> = snapshot
            .contacts
            .iter()
            .step_by(stride)
            .filter_map(Arrow::new)
            .collect();
        let update = if !arrows.is_empty() {
            self.contacts_shown = true;
            SceneUpdate {
                deletions: Vec::new(),
                entities: vec![Entity {
                    arrows,
                    ..Entity::new(time_ns, WORLD_FRAME, CONTACTS_ENTITY)
                }],
            }
        } else if self.contacts_shown {
            self.contacts_shown = false;
            SceneUpdate {
                deletions: vec![Deletion {
                    timestamp: Time::from_ns(time_ns),
                    r#type: 0,
                    id: CONTACTS_ENTITY,
                }],
                entities: Vec::new(),
            }
        } else {
            return Ok(());
        };
        write_json(writer, self.contacts, sequence, time_ns, &update)
    }
}

fn write_json<W: Write + Seek>(
    writer: &mut Writer<W>,
    channel: u16,
    sequence: u32,
    time_ns: u64,
    message: &impl Serialize,
) -> io::Result<()> {
    let data = serde_json::to_vec(message).map_err(io::Error::other)?;
    let header = MessageHeader {
        channel_id: channel,
        sequence,
        log_time: time_ns,
        publish_time: time_ns,
    };
    writer
        .write_to_known_channel(&header, &data)
        .map_err(mcap_error)
}
