//! A servo record as the recording keeps it (`haptic-recording`), and the
//! poses it carries.

use haptic_friction::FrictionState;
use haptic_recording::{RecordedTick, NOT_RENDERED};
use haptic_render::FrictionVerdict;
use haptic_servo::TickRecord;
use nalgebra::{Isometry3, Quaternion, Translation3, UnitQuaternion, Vector3};

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
