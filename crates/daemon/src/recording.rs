//! A servo record as the recording keeps it (`haptic-recording`), and the
//! poses it carries; and the scene as an MCAP recording draws it: the
//! bodies' meshes and the contacts' arrows.

use haptic_config::Scene;
use haptic_deformable::constraints::contact::RigidContact;
use haptic_friction::FrictionState;
use haptic_mesh::TriangleMesh;
use haptic_physics::{PairContact, RigidBody};
use haptic_recording::{
    object_frame, BodyKind, BodyMesh, ContactArrow, ContactKind, CoupledBody, RecordedCoupling,
    RecordedTick, TickFile, NOT_RENDERED,
};
use haptic_render::FrictionVerdict;
use haptic_servo::{ContactPoint, TickRecord};
use nalgebra::{Isometry3, Point3, Quaternion, Translation3, UnitQuaternion, Vector3};

/// The device pose of a servo record.
pub fn device_pose(record: &TickRecord) -> Isometry3<f64> {
    pose(record.device_position, record.device_orientation)
}

/// The tool pose of a servo record.
pub fn tool_pose(record: &TickRecord) -> Isometry3<f64> {
    pose(record.tool_position, record.tool_orientation)
}

/// The manipulandum of a servo record.
pub fn manipulandum_pose(record: &TickRecord) -> Isometry3<f64> {
    pose(
        record.manipulandum_position,
        record.manipulandum_orientation,
    )
}

fn pose(position: [f64; 3], [w, i, j, k]: [f64; 4]) -> Isometry3<f64> {
    Isometry3::from_parts(
        Translation3::from(Vector3::from(position)),
        UnitQuaternion::new_unchecked(Quaternion::new(w, i, j, k)),
    )
}

/// The `verdict` column: the verdict's code, or [`NOT_RENDERED`].
fn verdict_code(verdict: Option<FrictionVerdict>) -> u8 {
    verdict.map_or(NOT_RENDERED, FrictionVerdict::code)
}

/// The `state` column: the code of the certified verdict of the tick's
/// friction state (0 free, 1 sliding, 2 static), or [`NOT_RENDERED`].
fn state_code(state: Option<FrictionState>) -> u8 {
    verdict_code(state.map(|state| match state {
        FrictionState::Free => FrictionVerdict::Free,
        FrictionState::Sliding => FrictionVerdict::Sliding,
        FrictionState::Static => FrictionVerdict::Static,
    }))
}

/// One servo tick as recorded: the device pose read, the wrench written to
/// the device and the wrench rendered, the tool pose, contacts, the
/// friction state and verdict, whether the tool pose was quarantined, and
/// the measured compute time.
pub fn recorded_tick(record: &TickRecord) -> RecordedTick {
    RecordedTick {
        tick: record.tick,
        time: record.time,
        pose: device_pose(record),
        wrench: haptic_devices::Wrench {
            force: record.force.into(),
            torque: record.torque.into(),
        },
        rendered: haptic_devices::Wrench {
            force: record.rendered_force.into(),
            torque: record.rendered_torque.into(),
        },
        tool_pose: tool_pose(record),
        contacts: record.contacts,
        state: state_code(record.friction_state()),
        verdict: verdict_code(record.verdict),
        quarantined: record.quarantined,
        cycle_time_ns: record.compute_ns(),
    }
}

/// The coupling of a servo record: the passivity observer's energies, the
/// controller's damping and the bodies the local models moved.
pub fn recorded_coupling(record: &TickRecord) -> RecordedCoupling {
    let p = &record.passivity;
    let moved = (record.local_body_count as usize).min(record.local_bodies.len());
    RecordedCoupling {
        tick: record.tick,
        energy_j: p.energy,
        rotational_energy_j: p.rotational_energy,
        damping_n_s_per_m: p.damping,
        rotational_damping_n_m_s_per_rad: p.rotational_damping,
        local_bodies: record.local_body_count,
        bodies: record.local_bodies[..moved]
            .iter()
            .map(|b| CoupledBody {
                body: b.body,
                position_m: b.position,
                orientation_wijk: b.orientation,
                velocity: b.velocity,
            })
            .collect(),
    }
}

/// Appends `record` to `file` as `recorded` (its tick as recorded), with
/// the manipulandum and, in MCAP, its coupling.
pub fn record_tick(
    file: &mut TickFile,
    record: &TickRecord,
    recorded: &RecordedTick,
) -> std::io::Result<()> {
    file.record(recorded, &manipulandum_pose(record))?;
    file.record_coupling(record.time, &recorded_coupling(record))
}

/// The frame the tool's mesh is drawn in: the tick recording's `/tf/tool`
/// moves it.
const TOOL_FRAME: &str = "tool";

fn body_mesh(name: &str, frame_id: String, kind: BodyKind, mesh: &TriangleMesh) -> BodyMesh {
    BodyMesh {
        name: name.to_owned(),
        frame_id,
        kind,
        vertices: mesh.vertices.clone(),
        triangles: mesh.triangles.clone(),
    }
}

/// The meshes of a run's scene, `display_meshes` in the config's order and
/// body frames: the tool in its frame `tool`, every other object in
/// `objects/NAME`.
pub fn scene_meshes(config: &Scene, display_meshes: &[TriangleMesh]) -> Vec<BodyMesh> {
    config
        .objects()
        .iter()
        .zip(display_meshes)
        .map(|(object, mesh)| {
            let (frame, kind) = match (object.tool, object.movable) {
                (true, _) => (TOOL_FRAME.to_owned(), BodyKind::Tool),
                (false, true) => (object_frame(&object.name), BodyKind::Movable),
                (false, false) => (object_frame(&object.name), BodyKind::Static),
            };
            body_mesh(&object.name, frame, kind, mesh)
        })
        .collect()
}

/// The meshes of a physics world's `bodies`, `meshes` in their order and
/// body frames, each in its frame `objects/NAME`.
pub fn world_meshes(bodies: &[RigidBody], meshes: &[TriangleMesh]) -> Vec<BodyMesh> {
    bodies
        .iter()
        .zip(meshes)
        .map(|(body, mesh)| {
            let kind = if body.is_dynamic() {
                BodyKind::Movable
            } else {
                BodyKind::Static
            };
            let name = &body.model.name;
            body_mesh(name, object_frame(name), kind, mesh)
        })
        .collect()
}

/// Appends an arrow per contact between rigid bodies: at its shell point,
/// along the field body's outward gradient, the way the contact pushes the
/// shell body.
pub fn rigid_contact_arrows(contacts: &[PairContact], out: &mut Vec<ContactArrow>) {
    out.extend(contacts.iter().map(|c| ContactArrow {
        position: c.position,
        direction: c.distance_gradient,
        kind: ContactKind::Touching,
    }));
}

/// Appends an arrow per contact of a deformable's surface sample with a
/// rigid body: at the sample, along the normal out of the rigid body.
pub fn deformable_contact_arrows(contacts: &[RigidContact], out: &mut Vec<ContactArrow>) {
    out.extend(contacts.iter().map(|c| ContactArrow {
        position: c.point,
        direction: c.normal,
        kind: ContactKind::Touching,
    }));
}

/// Appends an arrow per contact of the tool: at its point, along the force
/// on the tool (penalty and friction), green while it sticks, orange while
/// it slides.
pub fn tool_contact_arrows(contacts: &[ContactPoint], out: &mut Vec<ContactArrow>) {
    out.extend(contacts.iter().map(|c| {
        let force = Vector3::from(c.normal_force) + Vector3::from(c.friction_force);
        let direction = if force.norm() > 0.0 {
            force
        } else {
            Vector3::from(c.normal)
        };
        ContactArrow {
            position: Point3::from(c.position),
            direction,
            kind: if c.stuck {
                ContactKind::Static
            } else {
                ContactKind::Sliding
            },
        }
    }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_servo_record_keeps_its_codes_and_poses() {
        let angle: f64 = 0.3;
        let record = TickRecord {
            tick: 7,
            time: Duration::from_micros(7007),
            contacts: 21,
            verdict: Some(FrictionVerdict::StaticInBand),
            quarantined: true,
            device_position: [0.1, -0.2, 1e-9],
            device_orientation: [angle.cos(), angle.sin(), 0.0, 0.0],
            tool_position: [0.5, 0.25, -1.0],
            tool_orientation: [angle.cos(), 0.0, 0.0, angle.sin()],
            force: [0.1, -0.7, 2.0],
            rendered_torque: [0.0, 1e-3, -0.0],
            ..TickRecord::default()
        };
        let tick = recorded_tick(&record);
        assert_eq!((tick.tick, tick.time, tick.contacts), (7, record.time, 21));
        assert_eq!(tick.verdict, FrictionVerdict::StaticInBand.code());
        // A verdict in the solver's band is static.
        assert_eq!(tick.state, FrictionVerdict::Static.code());
        assert!(tick.quarantined);
        assert_eq!(tick.pose, device_pose(&record));
        assert_eq!(tick.pose.translation.vector.z, 1e-9);
        assert_eq!(tick.tool_pose.rotation.k, angle.sin());
        assert_eq!(tick.wrench.force.y, -0.7);
        assert_eq!(tick.rendered.torque.y, 1e-3);
        assert_eq!(tick.cycle_time_ns, record.compute_ns());

        let not_rendered = recorded_tick(&TickRecord::default());
        assert_eq!(
            (not_rendered.state, not_rendered.verdict),
            (NOT_RENDERED, NOT_RENDERED)
        );
    }
}
