mod common;

use common::{press_into_corner, rig};
use haptic_alloc_counter::{allocations_during, CountingAllocator};
use haptic_devices::{SimulatedClock, SimulatedDevice};
use haptic_servo::PhysicsSnapshot;
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
        rig.tick.run(time);
        time += dt;
    }
    let mut contacts = 0;
    let allocations = allocations_during(|| {
        for i in 0..400 {
            rig.physics.publish(PhysicsSnapshot { sequence: i });
            contacts += rig.tick.run(time).contacts;
            time += dt;
        }
    });
    assert_eq!(allocations, 0);
    assert!(contacts > 0);
    assert!(rig.tick.telemetry_dropped() > 0);
    assert_eq!(rig.telemetry.drain().count(), 256);
}
