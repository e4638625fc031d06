//! What the daemon tells the control API and the stream about a scene and
//! its ticks: the scene's description and display geometry, and tick
//! frames from tick records.

use crate::physics::{surface_nodes, surface_triangles};
use haptic_config::Scene;
use haptic_deformable::DeformableBody;
use haptic_friction::FrictionState;
use haptic_mesh::TriangleMesh;
use haptic_render::FrictionVerdict;
use haptic_schema::OrNotRendered;
use haptic_server::{
    HelloDeformable, HelloObject, Mesh, Pose, SceneAnnouncement, SceneInfo, SceneObject, TickFrame,
};
use haptic_servo::TickRecord;
use nalgebra::Isometry3;

/// What the tool did in the tick of `record`.
pub fn state(record: &TickRecord) -> OrNotRendered<FrictionState> {
    record.friction_state().into()
}

/// What the friction stage decided in the tick of `record`.
pub fn verdict(record: &TickRecord) -> OrNotRendered<FrictionVerdict> {
    record.verdict.into()
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
                role: object.role,
                tool: object.tool,
                movable: object.movable,
                material: object.material_name().to_owned(),
            })
            .collect(),
    }
}

/// `hello` and the geometry of `scene`'s objects, in the config's order,
/// with `meshes` ([`BuiltScene::display_meshes`](crate::BuiltScene)), and
/// the surfaces of its `deformables` (the physics world's).
pub fn announcement(
    scene: &Scene,
    meshes: &[TriangleMesh],
    deformables: &[DeformableBody],
) -> SceneAnnouncement {
    let objects = scene
        .objects()
        .iter()
        .zip(meshes)
        .enumerate()
        .map(|(index, (object, mesh))| {
            let hello = HelloObject {
                index: index as u32,
                name: object.name.clone(),
                tool: object.tool,
                role: object.role,
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
                triangles: mesh.triangles.clone(),
            };
            (hello, mesh)
        })
        .collect();
    let deformables = deformables
        .iter()
        .enumerate()
        .map(|(index, body)| {
            let nodes = surface_nodes(&body.model.surface);
            HelloDeformable {
                index: index as u32,
                name: body.model.name.clone(),
                vertices: nodes.len() as u32,
                triangles: surface_triangles(&body.model.surface, &nodes),
            }
        })
        .collect();
    SceneAnnouncement {
        scene: scene.name().display().to_string(),
        servo_rate_hz: scene.servo_rate().hz(),
        objects,
        deformables,
    }
}

/// Fills `frame` from `record`, but for what the scene frame gives (the
/// environment and the contact points).
pub fn fill_tick_frame(
    frame: &mut TickFrame,
    record: &TickRecord,
    servo_dropped: u64,
    deadline_misses: u64,
) {
    frame.tick = record.tick;
    frame.time_s = record.time.as_secs_f64();
    frame.tool = pose(&crate::recording::tool_pose(record));
    frame.manipulandum = pose(&crate::recording::manipulandum_pose(record));
    frame.force_n = record.force;
    frame.torque_n_m = record.torque;
    frame.rendered_force_n = record.rendered_force;
    frame.rendered_torque_n_m = record.rendered_torque;
    frame.contacts = record.contacts;
    frame.state = state(record);
    frame.verdict = verdict(record);
    frame.safety_state = record.safety_state;
    frame.clutched = record.clutched;
    frame.compute_us = record.compute_ns() as f64 / 1e3;
    frame.wake_latency_us = record.wake_latency_ns as f64 / 1e3;
    frame.deadline_misses = deadline_misses;
    frame.generation = record.generation;
    frame.servo_dropped = servo_dropped;
    frame.passivity_energy_j = record.passivity.energy;
    frame.passivity_rotational_energy_j = record.passivity.rotational_energy;
    frame.passivity_damping_n_s_per_m = record.passivity.damping;
    frame.passivity_rotational_damping_n_m_s_per_rad = record.passivity.rotational_damping;
    frame.local_bodies = record.local_body_count;
}
