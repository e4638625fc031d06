mod common;

use common::{press_into_corner, rig};
use haptic_alloc_counter::{allocations_during, CountingAllocator};
use haptic_devices::{SimulatedClock, SimulatedDevice};
use haptic_servo::LatencyHistogram;
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
