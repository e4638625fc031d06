//! A servo tick on the `cube_corner` scene, the handle pushing the cube
//! into the corner.
#![allow(dead_code)]

use haptic_contact::{EnvironmentObject, ToolGeometry};
use haptic_devices::{HapticDevice, Motion, MotionConfig, SafetyLayer, SegmentConfig};
use haptic_handoff::{Latest, LatestReader, LatestWriter, TickConsumer, TickStream};
use haptic_render::RenderingCycle;
use haptic_scenarios::cube_corner;
use haptic_servo::{
    PhysicsSnapshot, ServoChannels, ServoControl, ServoTick, TickRecord, ToolState,
    WorkspaceMapping,
};

/// 4 mm into the floor and the wall (the cube starts 0.5 mm off both)
/// over 0.2 s, then held.
pub fn press_into_corner() -> Motion {
    Motion::try_from(MotionConfig {
        start_position_m: [0.0; 3],
        start_rotation_rad: [0.0; 3],
        segments: vec![
            SegmentConfig::Line {
                to_m: [-0.004, 0.0, -0.004],
                duration_s: 0.2,
            },
            SegmentConfig::Hold { duration_s: 1.0 },
        ],
        repeat: false,
    })
    .unwrap()
}

pub struct Rig<D: HapticDevice> {
    pub tick: ServoTick<D>,
    pub telemetry: TickConsumer<TickRecord>,
    pub physics: LatestWriter<PhysicsSnapshot>,
    pub tool: LatestReader<ToolState>,
    pub control: ServoControl,
}

/// `device` behind a safety layer, driving `cube_corner` with the handle's
/// origin at the cube's start pose.
pub fn rig<D: HapticDevice>(device: D, telemetry_capacity: usize) -> Rig<D> {
    rig_with(device, telemetry_capacity, |environment| environment)
}

/// [`rig`] with `cube_corner`'s environment replaced by `environment` of it.
pub fn rig_with<D: HapticDevice>(
    device: D,
    telemetry_capacity: usize,
    environment: impl FnOnce(Vec<EnvironmentObject>) -> Vec<EnvironmentObject>,
) -> Rig<D> {
    rig_with_geometry(device, telemetry_capacity, |tool, objects| {
        (tool, environment(objects))
    })
}

/// [`rig`] with `cube_corner`'s tool geometry and environment replaced by
/// `geometry` of them.
pub fn rig_with_geometry<D: HapticDevice>(
    device: D,
    telemetry_capacity: usize,
    geometry: impl FnOnce(
        ToolGeometry,
        Vec<EnvironmentObject>,
    ) -> (ToolGeometry, Vec<EnvironmentObject>),
) -> Rig<D> {
    let scenario = cube_corner(0.5);
    let scene = scenario.scene;
    let mapping = WorkspaceMapping::new(scene.initial_pose, 1.0);
    let (moving, environment) = geometry(scene.moving, scene.environment);
    let poses = environment.iter().map(|object| object.pose).collect();
    let objects = environment.len();
    let cycle =
        RenderingCycle::new(moving, environment, scenario.parameters, scene.initial_pose).unwrap();
    let (physics, reader) = Latest::new(&PhysicsSnapshot::new(poses)).split();
    let (tool_writer, tool) = Latest::new(&ToolState::new(objects)).split();
    let (producer, telemetry) = TickStream::new(telemetry_capacity).split();
    let (channels, control) = ServoChannels::with_control(&cycle, reader, tool_writer, producer);
    Rig {
        tick: ServoTick::new(SafetyLayer::new(device), mapping, cycle, channels),
        telemetry,
        physics,
        tool,
        control,
    }
}
