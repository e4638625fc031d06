//! A tick — one read and one write through the safety layer — allocates
//! nothing against the simulated SDK, through a lost device, non-finite
//! samples and failed calls too.

mod common;

use common::Sim;
use haptic_alloc_counter::{allocations_during, CountingAllocator};
use haptic_device_forcedim::ForceDimensionDevice;
use haptic_devices::{HapticDevice, SafetyLayer, Wrench};
use nalgebra::Vector3;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn ticks(layer: &mut SafetyLayer<ForceDimensionDevice>, n: usize, request: Wrench) {
    for _ in 0..n {
        let _ = layer.read();
        let _ = layer.write(&request);
    }
}

#[test]
fn ticks_allocate_nothing() {
    let (_guard, sim) = Sim::lock();
    let device = ForceDimensionDevice::open(&sim.settings()).unwrap();
    let mut layer = SafetyLayer::new(device);
    let push = Wrench {
        force: Vector3::new(1.0, 0.0, 0.0),
        torque: Vector3::new(0.0, 0.1, 0.0),
    };
    let n = allocations_during(|| {
        ticks(&mut layer, 1000, push);
        sim.inject_nan(5);
        ticks(&mut layer, 10, push);
        sim.fail_next(common::ERROR_TIMEOUT);
        ticks(&mut layer, 10, push);
        sim.set_disconnected(true);
        ticks(&mut layer, 300, push);
    });
    assert_eq!(n, 0);
    let c = layer.counters();
    assert_eq!(
        (c.sample_not_finite, c.device_error, c.disconnected),
        (1, 1, 1),
        "{c:?}"
    );
    assert!(sim.state().commands >= 1000);
}
