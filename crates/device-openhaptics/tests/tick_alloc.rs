//! A tick — one read and one write through the safety layer — allocates
//! nothing on the servo side against the simulated libHD, through a lost
//! device and non-finite samples too. The count is the servo thread's: the
//! scheduler's thread is the library's.

mod common;

use common::{first_sample, Sim};
use haptic_alloc_counter::{allocations_during, CountingAllocator};
use haptic_device_openhaptics::OpenHapticsDevice;
use haptic_devices::{HapticDevice, SafetyLayer, Wrench};
use nalgebra::Vector3;
use std::time::Duration;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn ticks(layer: &mut SafetyLayer<OpenHapticsDevice>, n: usize, request: Wrench) {
    for _ in 0..n {
        let _ = layer.read();
        let _ = layer.write(&request);
        std::thread::sleep(Duration::from_micros(500));
    }
}

#[test]
fn ticks_allocate_nothing() {
    let (_guard, sim) = Sim::lock();
    let mut device = OpenHapticsDevice::open(&sim.settings()).unwrap();
    first_sample(&mut device);
    let mut layer = SafetyLayer::new(device);
    let push = Wrench {
        force: Vector3::new(1.0, 0.0, 0.0),
        torque: Vector3::zeros(),
    };
    let n = allocations_during(|| {
        ticks(&mut layer, 1000, push);
        sim.inject_nan(5);
        ticks(&mut layer, 20, push);
        sim.set_vanished(true);
        ticks(&mut layer, 100, push);
    });
    assert_eq!(n, 0);
    let c = layer.counters();
    assert_eq!((c.sample_not_finite, c.disconnected), (1, 1), "{c:?}");
}
