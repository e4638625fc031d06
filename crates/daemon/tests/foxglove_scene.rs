//! The scene of `haptic_daemon::simulate`'s MCAP recordings as Foxglove
//! reads it: every message valid against the schema stored with its
//! channel; every rigid body's mesh once, in its frame, and its frame
//! where the recording's own steps put the body; a deformable's surface
//! each step at the recorded node positions; and contact arrows while the
//! step has contacts, deleted when they end.

use haptic_config::{Overrides, Scene};
use haptic_daemon::simulate;
use haptic_recording::{
    load_simulation, SimulationRecording, CONTACTS_ENTITY, MAX_CONTACT_ARROWS,
    SCENE_CONTACTS_TOPIC, SCENE_DEFORMABLES_TOPIC, SCENE_MESHES_TOPIC, SCENE_TRANSFORMS_TOPIC,
};
use nalgebra::{Isometry3, Point3, Quaternion, Translation3, UnitQuaternion, Vector3};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Every message of `path` by topic, in order, as (log time, JSON), each
/// checked against its channel's stored schema.
fn messages(path: &Path) -> BTreeMap<String, Vec<(u64, Value)>> {
    let bytes = std::fs::read(path).unwrap();
    let mut validators = BTreeMap::new();
    let mut topics: BTreeMap<String, Vec<(u64, Value)>> = BTreeMap::new();
    for message in mcap::MessageStream::new(&bytes).unwrap() {
        let message = message.unwrap();
        let channel = &message.channel;
        let schema = channel.schema.as_ref().unwrap();
        assert_eq!(schema.encoding, "jsonschema");
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

fn scene(dir: &Path, text: &str) -> Scene {
    let path = dir.join("scene.toml");
    std::fs::write(&path, text).unwrap();
    Scene::load(&path, &Overrides::default()).unwrap_or_else(|e| panic!("{e}"))
}

const PARKED_TOOL: &str = r#"
[[objects]]
name = "probe"
shape = { kind = "sphere", radius_m = 0.01 }
role = "point_shell"
tool = true
position_m = [0.0, 0.0, 2.0]
shell_points = 200

[device]
motion = { segments = [{ type = "hold", duration_s = 1.0 }] }
"#;

/// A cube dropped onto the side of a fixed sphere: it strikes it, tips
/// off and falls on, free.
const CUBE_GLANCING_OFF_A_SPHERE: &str = r#"
[[objects]]
name = "knob"
shape = { kind = "sphere", radius_m = 0.02 }
role = "field"
position_m = [0.035, 0.0, 0.0]

[[objects]]
name = "cube"
shape = { kind = "box", half_extents_m = [0.02, 0.02, 0.02] }
role = "field"
movable = true
position_m = [0.0, 0.0, 0.05]
shell_points = 1000
"#;

/// A small cloth dropped onto a fixed ball.
const CLOTH_ON_BALL: &str = r#"
[[objects]]
name = "ball"
shape = { kind = "sphere", radius_m = 0.1 }
role = "field"

[threads.physics]
rate_hz = 50

[[deformables]]
name = "cloth"
shape = { kind = "cloth", nodes_x = 9, nodes_y = 9, width = 0.4, depth = 0.4 }
position_m = [0.0, 0.0, 0.15]
density = 0.2
paradigm = { kind = "mass_spring", stiffness = 1.0, damping = 0.0, integration = "implicit", iterations = 10, tolerance = 1e-3 }
material = { friction = 0.4, thickness = 0.004, bending_limit = 0.02 }
"#;

fn pose_of(transform: &Value) -> Isometry3<f64> {
    let (t, r) = (&transform["translation"], &transform["rotation"]);
    let f = |v: &Value| v.as_f64().unwrap();
    Isometry3::from_parts(
        Translation3::new(f(&t["x"]), f(&t["y"]), f(&t["z"])),
        UnitQuaternion::new_unchecked(Quaternion::new(
            f(&r["w"]),
            f(&r["x"]),
            f(&r["y"]),
            f(&r["z"]),
        )),
    )
}

fn points(triangles: &Value) -> Vec<Point3<f64>> {
    triangles["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            Point3::new(
                p["x"].as_f64().unwrap(),
                p["y"].as_f64().unwrap(),
                p["z"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// The contact updates agree with the steps' contact counts (the largest
/// of a step's substeps; the arrows are its last substep's contacts): no
/// arrows for a step without contacts, at most as many arrows as the step
/// counts, arrows for one in two steps with contacts at least, and a
/// deletion of the arrows whenever the contacts shown end. Returns how
/// many times they ended.
fn check_contacts(recording: &SimulationRecording, contacts: &[(u64, Value)]) -> usize {
    let by_time: BTreeMap<u64, &Value> = contacts.iter().map(|(t, v)| (*t, v)).collect();
    assert_eq!(
        by_time.len(),
        contacts.len(),
        "one contact update a step at most"
    );
    let (mut ended, mut shown, mut touching, mut drawn) = (0, false, 0, 0);
    for step in &recording.steps {
        let time = (step.time * 1e9).round() as u64;
        let update = by_time.get(&time);
        let entities = update.map(|u| u["entities"].as_array().unwrap());
        touching += usize::from(step.contacts > 0);
        match (update, entities) {
            (Some(_), Some(entities)) if !entities.is_empty() => {
                let entity = &entities[0];
                assert_eq!(entity["id"], CONTACTS_ENTITY);
                assert_eq!(entity["frame_id"], "world");
                let arrows = entity["arrows"].as_array().unwrap().len() as u64;
                assert!(arrows >= 1 && arrows <= MAX_CONTACT_ARROWS as u64);
                assert!(arrows <= step.contacts, "step {}", step.step);
                shown = true;
                drawn += 1;
            }
            (Some(update), _) => {
                assert!(shown, "a deletion of arrows shown");
                assert_eq!(update["deletions"][0]["id"], CONTACTS_ENTITY);
                assert_eq!(update["deletions"][0]["type"], 0);
                assert_eq!(
                    update["deletions"][0]["timestamp"]["nsec"],
                    time % 1_000_000_000
                );
                shown = false;
                ended += 1;
            }
            (None, _) => assert!(
                !shown || step.contacts > 0,
                "step {}: arrows left shown",
                step.step
            ),
        }
        if step.contacts == 0 {
            assert!(!shown, "step {}: arrows without contacts", step.step);
        }
    }
    assert!(
        drawn >= 1 && 2 * drawn >= touching,
        "{drawn} steps drawn of {touching} with contacts"
    );
    ended
}

#[test]
fn a_rigid_simulation_draws_its_bodies_where_it_recorded_them_and_its_contacts_while_they_last() {
    let dir = tempfile::tempdir().unwrap();
    let config = scene(
        dir.path(),
        &format!("{PARKED_TOOL}{CUBE_GLANCING_OFF_A_SPHERE}"),
    );
    let out = dir.path().join("glance.mcap");
    simulate(&config, 0.005, 120, &out, |_| {}).unwrap();
    let recording = load_simulation(&out).unwrap();
    let topics = messages(&out);

    // Both bodies' meshes, once, at the start, each in its own frame.
    let meshes = &topics[SCENE_MESHES_TOPIC];
    assert_eq!(meshes.len(), 1);
    assert_eq!(meshes[0].0, 0);
    let entities = meshes[0].1["entities"].as_array().unwrap();
    let frames: Vec<(&str, &str)> = entities
        .iter()
        .map(|e| (e["id"].as_str().unwrap(), e["frame_id"].as_str().unwrap()))
        .collect();
    assert_eq!(frames, [("knob", "objects/knob"), ("cube", "objects/cube")]);
    for entity in entities {
        assert_eq!(entity["frame_locked"], true);
        let triangles = &entity["triangles"][0];
        let corners = points(triangles);
        let indices = triangles["indices"].as_array().unwrap();
        assert!(indices.len() >= 36 && indices.len() % 3 == 0);
        assert!(indices
            .iter()
            .all(|i| (i.as_u64().unwrap() as usize) < corners.len()));
    }
    // The cube's mesh about its centre of mass: its corners 2 cm out.
    let cube = points(&entities[1]["triangles"][0]);
    assert!(cube
        .iter()
        .all(|p| (p.coords.abs() - Vector3::repeat(0.02)).norm() < 1e-12));

    // Every step, both frames; the cube's where the step recorded it.
    let transforms = &topics[SCENE_TRANSFORMS_TOPIC];
    assert_eq!(transforms.len(), recording.steps.len());
    for ((time, message), step) in transforms.iter().zip(&recording.steps) {
        assert_eq!(*time, (step.time * 1e9).round() as u64);
        let list = message["transforms"].as_array().unwrap();
        assert_eq!(list[0]["child_frame_id"], "objects/knob");
        assert_eq!(pose_of(&list[0]), Isometry3::translation(0.035, 0.0, 0.0));
        assert_eq!(list[1]["child_frame_id"], "objects/cube");
        assert_eq!(list[1]["parent_frame_id"], "world");
        assert_eq!(pose_of(&list[1]), step.bodies[0].pose);
    }
    let last = recording.steps.last().unwrap();
    assert!(
        last.bodies[0].pose.translation.z < -0.05,
        "the cube fell past the knob"
    );

    // Contact arrows while the cube strikes the knob, deleted once it
    // falls free; no deformables.
    assert!(recording.steps.iter().any(|s| s.contacts > 0));
    assert!(check_contacts(&recording, &topics[SCENE_CONTACTS_TOPIC]) >= 1);
    assert!(!topics.contains_key(SCENE_DEFORMABLES_TOPIC));
}

#[test]
fn a_cloth_s_surface_is_drawn_at_its_recorded_nodes_every_step() {
    let dir = tempfile::tempdir().unwrap();
    let config = scene(dir.path(), &format!("{PARKED_TOOL}{CLOTH_ON_BALL}"));
    let out = dir.path().join("cloth.mcap");
    simulate(&config, 0.02, 25, &out, |_| {}).unwrap();
    let recording = load_simulation(&out).unwrap();
    let topics = messages(&out);
    let (name, nodes) = &recording.deformables[0];
    assert_eq!(name, "cloth");

    let surfaces = &topics[SCENE_DEFORMABLES_TOPIC];
    assert_eq!(surfaces.len(), recording.steps.len());
    for ((time, message), (step, positions)) in
        surfaces.iter().zip(recording.steps.iter().zip(nodes))
    {
        assert_eq!(*time, (step.time * 1e9).round() as u64);
        let entity = &message["entities"][0];
        assert_eq!(
            (entity["id"].as_str(), entity["frame_id"].as_str()),
            (Some("cloth"), Some("world"))
        );
        let triangles = &entity["triangles"][0];
        // The nodes, every one to the bit, and two triangles per grid cell.
        assert_eq!(&points(triangles), positions);
        let indices: Vec<usize> = triangles["indices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(indices.len(), 3 * 2 * 8 * 8);
        assert!(indices.iter().all(|&i| i < 81));
        // Every triangle joins neighbouring nodes of the grid.
        for t in indices.chunks_exact(3) {
            for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
                let (dx, dy) = ((a % 9).abs_diff(b % 9), (a / 9).abs_diff(b / 9));
                assert!(dx <= 1 && dy <= 1 && a != b, "{t:?}");
            }
        }
    }
    // The ball, static, drawn once; no transform moves it but its own.
    let meshes = &topics[SCENE_MESHES_TOPIC][0].1["entities"];
    assert_eq!(meshes[0]["id"], "ball");
    assert_eq!(meshes[0]["metadata"][0]["value"], "static");
    assert_eq!(
        pose_of(&topics[SCENE_TRANSFORMS_TOPIC][0].1["transforms"][0]),
        Isometry3::identity()
    );
    // The cloth lands on the ball: arrows from then on.
    assert!(recording.steps.last().unwrap().contacts > 0);
    check_contacts(&recording, &topics[SCENE_CONTACTS_TOPIC]);
}
