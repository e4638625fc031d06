mod common;

use common::{press_into_corner, rig};
use haptic_alloc_counter::{allocations_during, CountingAllocator};
use haptic_devices::{SimulatedClock, SimulatedDevice};
use haptic_render::{FrictionModel, RenderParameters, RenderingUpdate};
use haptic_servo::{LatencyHistogram, ParameterUpdate, SCENE_FRAME_CONTACTS};
use nalgebra::Isometry3;
use std::time::Duration;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[test]
fn a_tick_allocates_nothing_after_warm_up() {
    let dt = Duration::from_millis(1);
    let device = SimulatedDevice::new(press_into_corner(), SimulatedClock::Stepped(dt));
    // Smaller than the run: the stream fills and drops too.
    let mut rig = rig(device, 256);
    let mut time = Duration::ZERO;
    for _ in 0..200 {
        rig.tick.run(time, Duration::ZERO);
        time += dt;
    }
    let corner = rig.tick.cycle().scene().environment()[0].pose;
    let mut contacts = 0;
    let mut published = 0;
    let mut impulse = nalgebra::Vector6::zeros();
    let allocations = allocations_during(|| {
        for i in 0..400 {
            // New environment poses on every other tick, read back each tick.
            if i % 2 == 0 {
                rig.physics.publish_with(|snapshot| {
                    snapshot.sequence = i;
                    snapshot.environment_poses[0] =
                        corner * Isometry3::translation(0.0, 1e-6 * i as f64, 0.0);
                });
            }
            contacts += rig.tick.run(time, Duration::from_micros(3)).contacts;
            let state = rig.tool.read();
            published += u64::from(state.contact_wrenches[0].norm() > 0.0);
            impulse = state.contact_impulses[0];
            time += dt;
        }
    });
    assert_eq!(allocations, 0);
    assert!(contacts > 0);
    assert!(published > 0);
    assert!(impulse.norm() > 0.0);
    let moved = rig.tick.cycle().scene().environment()[0].pose;
    assert!((moved.translation.y - corner.translation.y - 398e-6).abs() < 1e-15);
    assert!(rig.tick.telemetry_dropped() > 0);
    assert_eq!(rig.telemetry.drain().count(), 256);
}

#[test]
fn a_tick_applying_an_update_and_publishing_a_scene_frame_allocates_nothing() {
    let dt = Duration::from_millis(1);
    let device = SimulatedDevice::new(press_into_corner(), SimulatedClock::Stepped(dt));
    let mut rig = rig(device, 4096);
    let mut time = Duration::ZERO;
    for _ in 0..200 {
        rig.tick.run(time, Duration::ZERO);
        time += dt;
    }
    let layout = rig.control.layout;
    let objects = layout.environment_objects;
    let mut contacts_seen = 0;
    for (generation, friction) in [
        FrictionModel::StaticLp,
        FrictionModel::YamaneSprings { stiffness: 150.0 },
        FrictionModel::PreSliding { displacement: 1e-5 },
    ]
    .into_iter()
    .enumerate()
    {
        // Built and sent off the servo thread.
        let parameters = RenderParameters {
            friction,
            pyramid_sides: 4 + generation,
            ..*rig.tick.cycle().parameters()
        };
        let mu = vec![0.3 + 0.1 * generation as f64; objects];
        let rendering = RenderingUpdate::new(layout, parameters, mu).unwrap();
        let update = Box::new(ParameterUpdate::new(generation as u64 + 1, rendering));
        assert!(rig.control.updates.send(update).is_ok());
        let allocations = allocations_during(|| {
            for _ in 0..50 {
                let record = rig.tick.run(time, Duration::ZERO);
                assert_eq!(record.generation, generation as u64 + 1);
                let frame = rig.control.scene_frames.read();
                assert_eq!(frame.tick, record.tick);
                assert_eq!(frame.contacts_total, record.contacts);
                assert!(frame.contacts.len() <= SCENE_FRAME_CONTACTS);
                contacts_seen += frame.contacts.len();
                time += dt;
            }
        });
        assert_eq!(allocations, 0, "{friction:?}");
        let back = rig.control.updates.collect().expect("handed back");
        assert!(matches!(back.applied, Some(Ok(_))));
        assert_eq!(back.rendering.parameters().friction, friction);
    }
    assert!(contacts_seen > 0);
}

#[test]
fn recording_a_latency_allocates_nothing() {
    let mut histogram = LatencyHistogram::default();
    let allocations = allocations_during(|| {
        for ns in (0..200_000u64).step_by(7) {
            histogram.record(Duration::from_nanos(ns * ns));
        }
        // Beyond the 10 s range: clamped, not grown.
        histogram.record(Duration::from_secs(3600));
    });
    assert_eq!(allocations, 0);
    assert_eq!(histogram.total(), 200_000 / 7 + 2);
    let top = histogram.max();
    assert!(
        top >= Duration::from_secs(10) && top <= Duration::from_millis(10_010),
        "{top:?}"
    );
}
