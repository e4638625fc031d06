//! What the daemon tells the control API and the stream about a scene and
//! its ticks: the scene's description and display geometry, tick frames
//! from tick records, and the names of states, verdicts and trips.

use haptic_config::{ObjectConfig, ObjectRole, Scene, Shape};
use haptic_devices::{DeviceSample, SafetyState, TripCause};
use haptic_friction::FrictionState;
use haptic_mesh::shapes::builtin;
use haptic_mesh::{load_mesh, LoadOptions, TriangleMesh};
use haptic_server::{
    HelloObject, Mesh, Pose, SceneAnnouncement, SceneInfo, SceneObject, TickFrame,
};
use haptic_servo::{TickRecord, WorkspaceMapping};
use nalgebra::{Isometry3, Point3};

/// `free`, `sliding`, `static` or `not_rendered`.
pub fn state_name(record: &TickRecord) -> &'static str {
    match record.friction_state() {
        Some(FrictionState::Free) => "free",
        Some(FrictionState::Sliding) => "sliding",
        Some(FrictionState::Static) => "static",
        None => "not_rendered",
    }
}

/// The friction verdict's name, or `not_rendered`.
pub fn verdict_name(record: &TickRecord) -> &'static str {
    record
        .verdict
        .map_or("not_rendered", |verdict| verdict.name())
}

/// A trip cause by the name the summary gives it.
pub fn trip_name(cause: TripCause) -> &'static str {
    match cause {
        TripCause::Stale => "stale",
        TripCause::SampleNotFinite => "sample_not_finite",
        TripCause::RequestNotFinite => "request_not_finite",
        TripCause::Overrun => "overrun",
        TripCause::Disconnected => "disconnected",
        TripCause::DeviceError => "device_error",
        TripCause::Shutdown => "shutdown",
    }
}

fn safety_name(state: SafetyState) -> &'static str {
    match state {
        SafetyState::Tripped => "tripped",
        SafetyState::WaitingForSmallRequest => "waiting_for_small_request",
        SafetyState::Ramping { .. } => "ramping",
        SafetyState::Running => "normal",
        SafetyState::ShuttingDown => "shutting_down",
        SafetyState::Off => "off",
    }
}

fn role_name(role: ObjectRole) -> &'static str {
    match role {
        ObjectRole::PointShell => "point_shell",
        ObjectRole::Field => "field",
        ObjectRole::Both => "both",
    }
}

pub fn pose(p: &Isometry3<f64>) -> Pose {
    let q = p.rotation.quaternion();
    Pose {
        position_m: p.translation.vector.into(),
        orientation_wijk: [q.w, q.i, q.j, q.k],
    }
}

/// The scene as `GET /v1/scene` describes it.
pub fn scene_info(scene: &Scene) -> SceneInfo {
    SceneInfo {
        file: scene.name().display().to_string(),
        servo_rate_hz: scene.servo_rate().hz(),
        objects: scene
            .objects()
            .iter()
            .enumerate()
            .map(|(index, object)| SceneObject {
                index: index as u32,
                name: object.name.clone(),
                role: role_name(object.role).to_owned(),
                tool: object.tool,
                movable: object.movable,
                material: object.material_name().to_owned(),
            })
            .collect(),
    }
}

/// The triangles to draw `object` with, in its frame: its mesh or shape; a
/// floor grid as the square it covers; nothing for a prepared file, which
/// holds no mesh, or a mesh that cannot be read (the scene build reports
/// that).
fn display_mesh(object: &ObjectConfig, scene: &Scene) -> TriangleMesh {
    let empty = || TriangleMesh::new(Vec::new(), Vec::new());
    if let Some(mesh) = &object.mesh {
        return match mesh.strip_prefix("builtin:") {
            Some(name) => builtin(name).unwrap_or_else(empty),
            None => load_mesh(&scene.base().join(mesh), &LoadOptions::default())
                .map_or_else(|_| empty(), |loaded| loaded.mesh),
        };
    }
    match &object.shape {
        Some(Shape::FloorGrid {
            points_per_side,
            spacing_m,
        }) => {
            let h = (points_per_side.saturating_sub(1)) as f64 * spacing_m / 2.0;
            TriangleMesh::new(
                vec![
                    Point3::new(-h, -h, 0.0),
                    Point3::new(h, -h, 0.0),
                    Point3::new(h, h, 0.0),
                    Point3::new(-h, h, 0.0),
                ],
                vec![[0, 1, 2], [0, 2, 3]],
            )
        }
        Some(shape) => shape.mesh().unwrap_or_else(empty),
        None => empty(),
    }
}

/// `hello` and the geometry of `scene`'s objects, in the config's order.
pub fn announcement(scene: &Scene) -> SceneAnnouncement {
    let objects = scene
        .objects()
        .iter()
        .enumerate()
        .map(|(index, object)| {
            let mesh = display_mesh(object, scene);
            let hello = HelloObject {
                index: index as u32,
                name: object.name.clone(),
                tool: object.tool,
                role: role_name(object.role).to_owned(),
                movable: object.movable,
                vertices: mesh.vertices.len() as u32,
                triangles: mesh.triangles.len() as u32,
            };
            let mesh = Mesh {
                vertices: mesh
                    .vertices
                    .iter()
                    .map(|v| [v.x as f32, v.y as f32, v.z as f32])
                    .collect(),
                triangles: mesh.triangles,
            };
            (hello, mesh)
        })
        .collect();
    SceneAnnouncement {
        scene: scene.name().display().to_string(),
        servo_rate_hz: scene.servo_rate().hz(),
        objects,
    }
}

/// Fills `frame` from `record`: the manipulandum through `mapping`.
pub fn fill_tick_frame(
    frame: &mut TickFrame,
    record: &TickRecord,
    mapping: &WorkspaceMapping,
    servo_dropped: u64,
    deadline_misses: u64,
) {
    let device = crate::recording::device_pose(record);
    let sample = DeviceSample {
        timestamp: record.time,
        position: device.translation.vector.into(),
        orientation: device.rotation,
        buttons: 0,
        linear_velocity: None,
        angular_velocity: None,
    };
    frame.tick = record.tick;
    frame.time_s = record.time.as_secs_f64();
    frame.tool = pose(&crate::recording::tool_pose(record));
    frame.manipulandum = pose(&mapping.manipulandum(&sample));
    frame.force_n = record.force;
    frame.torque_n_m = record.torque;
    frame.rendered_force_n = record.rendered_force;
    frame.rendered_torque_n_m = record.rendered_torque;
    frame.contacts = record.contacts;
    frame.state = state_name(record);
    frame.verdict = verdict_name(record);
    frame.safety_state = safety_name(record.safety_state);
    frame.clutched = record.clutched;
    frame.compute_us = record.compute_ns() as f64 / 1e3;
    frame.wake_latency_us = record.wake_latency_ns as f64 / 1e3;
    frame.deadline_misses = deadline_misses;
    frame.generation = record.generation;
    frame.servo_dropped = servo_dropped;
}
