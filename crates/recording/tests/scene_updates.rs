//! The scene of an MCAP recording, read back with the `mcap` crate as a
//! Foxglove player reads it: every message valid against the schema stored
//! with its channel, the meshes once, the deformable surfaces indexed, and
//! the contact arrows shown while there are contacts and deleted as they
//! end.

use haptic_recording::{
    object_frame, BodyKind, BodyMesh, ContactArrow, ContactKind, DeformableSurface, RecordedTick,
    SceneSnapshot, SimulatedStep, SimulationWriter, TickFile, CONTACTS_ENTITY,
    CONTACT_ARROW_LENGTH_M, MAX_CONTACT_ARROWS, SCENE_CONTACTS_TOPIC, SCENE_DEFORMABLES_TOPIC,
    SCENE_MESHES_TOPIC, SCENE_TRANSFORMS_TOPIC,
};
use nalgebra::{Isometry3, Point3, Translation3, UnitQuaternion, Vector3};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// Every message of `path` by topic, in order, each as (log time, JSON),
/// each checked against its channel's stored schema.
fn messages(path: &Path) -> BTreeMap<String, Vec<(u64, Value)>> {
    let bytes = std::fs::read(path).unwrap();
    let mut validators = BTreeMap::new();
    let mut topics: BTreeMap<String, Vec<(u64, Value)>> = BTreeMap::new();
    for message in mcap::MessageStream::new(&bytes).unwrap() {
        let message = message.unwrap();
        let channel = &message.channel;
        let schema = channel.schema.as_ref().unwrap();
        assert_eq!(schema.encoding, "jsonschema");
        assert_eq!(channel.message_encoding, "json");
        let validator = validators.entry(schema.name.clone()).or_insert_with(|| {
            let schema: Value = serde_json::from_slice(&schema.data).unwrap();
            jsonschema::validator_for(&schema).unwrap()
        });
        let value: Value = serde_json::from_slice(&message.data).unwrap();
        if let Err(error) = validator.validate(&value) {
            panic!("{} on {}: {error}", schema.name, channel.topic);
        }
        topics
            .entry(channel.topic.clone())
            .or_default()
            .push((message.log_time, value));
    }
    topics
}

fn step(n: u64) -> SimulatedStep {
    SimulatedStep {
        step: n,
        time: n as f64 * 0.01,
        kinetic_energy: 0.0,
        contacts: 0,
        max_penetration: 0.0,
        quarantined: 0,
        bodies: Vec::new(),
    }
}

fn cube_mesh(name: &str, kind: BodyKind) -> BodyMesh {
    let mesh = haptic_test_cube();
    BodyMesh {
        name: name.to_owned(),
        frame_id: object_frame(name),
        kind,
        vertices: mesh.0,
        triangles: mesh.1,
    }
}

/// A unit cube's corners and its 12 triangles.
fn haptic_test_cube() -> (Vec<Point3<f64>>, Vec<[u32; 3]>) {
    let vertices = (0..8)
        .map(|i| Point3::new((i & 1) as f64, ((i >> 1) & 1) as f64, ((i >> 2) & 1) as f64))
        .collect();
    let triangles = vec![
        [0, 2, 1],
        [1, 2, 3],
        [4, 5, 6],
        [5, 7, 6],
        [0, 1, 4],
        [1, 5, 4],
        [2, 6, 3],
        [3, 6, 7],
        [0, 4, 2],
        [2, 4, 6],
        [1, 3, 5],
        [3, 7, 5],
    ];
    (vertices, triangles)
}

fn point(v: &Value) -> Point3<f64> {
    Point3::new(
        v["x"].as_f64().unwrap(),
        v["y"].as_f64().unwrap(),
        v["z"].as_f64().unwrap(),
    )
}

#[test]
fn a_simulation_s_scene_reads_back_as_foxglove_scene_updates() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scene.mcap");
    let mut writer = SimulationWriter::create(&path, 0.01, &["sheet"]).unwrap();
    let meshes = [
        cube_mesh("crate", BodyKind::Movable),
        cube_mesh("floor", BodyKind::Static),
        BodyMesh {
            vertices: Vec::new(),
            triangles: Vec::new(),
            ..cube_mesh("prepared", BodyKind::Static)
        },
    ];
    writer.record_meshes(&meshes).unwrap();
    let sheet_triangles = [[0, 1, 2], [1, 3, 2]];
    let (crate_frame, floor_frame) = (object_frame("crate"), object_frame("floor"));
    // Contacts in steps 1–2 and 4, none in 0 and 3: shown, deleted, shown
    // again; 1000 in step 2, thinned out.
    let contacts_at = [0, 1, 1000, 0, 2];
    for (n, &count) in contacts_at.iter().enumerate() {
        let n = n as u64;
        let z = 1.0 - 0.1 * n as f64;
        let sheet: Vec<Point3<f64>> = (0..4)
            .map(|i| Point3::new((i & 1) as f64, (i >> 1) as f64, z))
            .collect();
        let crate_pose = Isometry3::from_parts(
            Translation3::new(0.0, 0.0, z),
            UnitQuaternion::from_euler_angles(0.0, 0.0, 0.1 * n as f64),
        );
        let poses = [
            (crate_frame.as_str(), crate_pose),
            (floor_frame.as_str(), Isometry3::identity()),
        ];
        let contacts: Vec<ContactArrow> = (0..count)
            .map(|i| ContactArrow {
                position: Point3::new(i as f64 * 1e-3, 0.0, 0.0),
                // Straight down: the one direction `rotation_between`
                // from +x needs no special case for; and −x, which it does.
                direction: if i % 2 == 0 {
                    -Vector3::z()
                } else {
                    -Vector3::x() * 3.0
                },
                kind: ContactKind::Touching,
            })
            .collect();
        let surfaces = [DeformableSurface {
            name: "sheet",
            positions: &sheet,
            triangles: &sheet_triangles,
        }];
        let snapshot = SceneSnapshot {
            poses: &poses,
            deformables: &surfaces,
            contacts: &contacts,
        };
        writer.record(&step(n), &[&sheet]).unwrap();
        writer.record_scene(&step(n), &snapshot).unwrap();
    }
    writer.finish().unwrap();

    let topics = messages(&path);
    // The meshes, once, at the start: the empty one left out.
    let meshes_read = &topics[SCENE_MESHES_TOPIC];
    assert_eq!(meshes_read.len(), 1);
    assert_eq!(meshes_read[0].0, 0);
    let entities = meshes_read[0].1["entities"].as_array().unwrap();
    let ids: Vec<&str> = entities.iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["crate", "floor"]);
    for entity in entities {
        assert_eq!(entity["frame_locked"], true);
        assert_eq!(
            entity["frame_id"],
            format!("objects/{}", entity["id"].as_str().unwrap())
        );
        let triangles = &entity["triangles"][0];
        assert_eq!(triangles["points"].as_array().unwrap().len(), 8);
        assert_eq!(triangles["indices"].as_array().unwrap().len(), 36);
        assert_eq!(triangles["indices"][3], 1);
    }

    // Transforms every step, both bodies, the crate's pose exact.
    let transforms = &topics[SCENE_TRANSFORMS_TOPIC];
    assert_eq!(transforms.len(), contacts_at.len());
    for (n, (time, message)) in transforms.iter().enumerate() {
        assert_eq!(*time, (n as f64 * 0.01 * 1e9).round() as u64);
        let list = message["transforms"].as_array().unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[0]["parent_frame_id"], "world");
        assert_eq!(list[0]["child_frame_id"], "objects/crate");
        assert_eq!(
            list[0]["translation"]["z"].as_f64().unwrap(),
            1.0 - 0.1 * n as f64
        );
        let q = UnitQuaternion::from_euler_angles(0.0, 0.0, 0.1 * n as f64);
        assert_eq!(list[0]["rotation"]["w"].as_f64().unwrap(), q.w);
        assert_eq!(list[0]["rotation"]["z"].as_f64().unwrap(), q.k);
    }

    // The sheet every step: its nodes as points, its triangles as indices.
    let deformables = &topics[SCENE_DEFORMABLES_TOPIC];
    assert_eq!(deformables.len(), contacts_at.len());
    for (n, (_, message)) in deformables.iter().enumerate() {
        let entity = &message["entities"][0];
        assert_eq!(
            (entity["id"].as_str(), entity["frame_id"].as_str()),
            (Some("sheet"), Some("world"))
        );
        let triangles = &entity["triangles"][0];
        let points: Vec<Point3<f64>> = triangles["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(point)
            .collect();
        assert_eq!(points.len(), 4);
        assert_eq!(points[3], Point3::new(1.0, 1.0, 1.0 - 0.1 * n as f64));
        let indices: Vec<u64> = triangles["indices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.as_u64().unwrap())
            .collect();
        assert_eq!(indices, [0, 1, 2, 1, 3, 2]);
    }

    // Contacts: none written at step 0; arrows at 1 and 2; deleted at 3;
    // arrows again at 4.
    let contacts = &topics[SCENE_CONTACTS_TOPIC];
    let times: Vec<u64> = contacts.iter().map(|(t, _)| *t).collect();
    assert_eq!(times, [10_000_000, 20_000_000, 30_000_000, 40_000_000]);
    let arrows = |k: usize| {
        contacts[k].1["entities"][0]["arrows"]
            .as_array()
            .unwrap()
            .clone()
    };
    assert_eq!(contacts[0].1["entities"][0]["id"], CONTACTS_ENTITY);
    assert_eq!(arrows(0).len(), 1);
    assert!(arrows(1).len() <= MAX_CONTACT_ARROWS && arrows(1).len() > MAX_CONTACT_ARROWS / 2);
    assert_eq!(arrows(3).len(), 2);
    assert!(contacts[2].1["entities"].as_array().unwrap().is_empty());
    let deletion = &contacts[2].1["deletions"][0];
    assert_eq!(
        (deletion["type"].as_u64(), deletion["id"].as_str()),
        (Some(0), Some(CONTACTS_ENTITY))
    );
    assert_eq!(deletion["timestamp"]["nsec"], 30_000_000);
    // An arrow points along its direction from its point, its length the
    // arrows' one.
    for (arrow, direction) in arrows(3).iter().zip([-Vector3::z(), -Vector3::x()]) {
        let o = &arrow["pose"]["orientation"];
        let q = UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(
            o["w"].as_f64().unwrap(),
            o["x"].as_f64().unwrap(),
            o["y"].as_f64().unwrap(),
            o["z"].as_f64().unwrap(),
        ));
        assert!((q * Vector3::x() - direction).norm() < 1e-12);
        let length =
            arrow["shaft_length"].as_f64().unwrap() + arrow["head_length"].as_f64().unwrap();
        assert!((length - CONTACT_ARROW_LENGTH_M).abs() < 1e-15);
    }
    assert_eq!(
        point(&arrows(3)[1]["pose"]["position"]),
        Point3::new(1e-3, 0.0, 0.0)
    );

    // The recording still reads back as a simulation.
    let read = haptic_recording::load_simulation(&path).unwrap();
    assert_eq!(read.steps.len(), contacts_at.len());
}

#[test]
fn a_tick_recording_writes_its_meshes_with_its_first_message_and_csv_has_no_scene() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ticks.mcap");
    let mut file = TickFile::create(&path).unwrap();
    assert!(file.has_scene());
    let tool = BodyMesh {
        frame_id: "tool".into(),
        ..cube_mesh("probe", BodyKind::Tool)
    };
    file.set_meshes(&[tool]);
    let tick = RecordedTick {
        tick: 5,
        time: Duration::from_millis(5),
        pose: Isometry3::identity(),
        wrench: Default::default(),
        rendered: Default::default(),
        tool_pose: Isometry3::identity(),
        contacts: 1,
        state: 2,
        verdict: 2,
        quarantined: false,
        cycle_time_ns: 0,
    };
    file.record(&tick, &Isometry3::identity()).unwrap();
    let frame = object_frame("block");
    let poses = [(frame.as_str(), Isometry3::translation(0.1, 0.2, 0.3))];
    let contacts = [ContactArrow {
        position: Point3::origin(),
        direction: Vector3::new(0.0, 0.0, 2.0),
        kind: ContactKind::Static,
    }];
    let snapshot = SceneSnapshot {
        poses: &poses,
        contacts: &contacts,
        ..SceneSnapshot::default()
    };
    file.record_scene(Duration::from_millis(5), &snapshot)
        .unwrap();
    file.finish().unwrap();
    let topics = messages(&path);
    let meshes = &topics[SCENE_MESHES_TOPIC];
    assert_eq!(meshes.len(), 1);
    assert_eq!(meshes[0].0, 5_000_000, "stamped with the first tick");
    assert_eq!(meshes[0].1["entities"][0]["frame_id"], "tool");
    assert_eq!(
        topics[SCENE_TRANSFORMS_TOPIC][0].1["transforms"][0]["translation"]["y"],
        0.2
    );
    assert_eq!(topics[SCENE_CONTACTS_TOPIC].len(), 1);
    // No deformables, no deformable updates.
    assert!(!topics.contains_key(SCENE_DEFORMABLES_TOPIC));
    assert_eq!(haptic_recording::load_recording(&path).unwrap().len(), 1);

    let csv = dir.path().join("ticks.csv");
    let mut file = TickFile::create(&csv).unwrap();
    assert!(!file.has_scene());
    file.record_scene(Duration::ZERO, &snapshot).unwrap();
    file.finish().unwrap();
}
