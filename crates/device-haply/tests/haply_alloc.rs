//! The servo's side of the Haply backend (read and write through the
//! safety layer) allocates nothing per tick, while the I/O thread
//! exchanges JSON with the simulated service beside it, through a dropped
//! connection and a slow spell too.

mod common;

use common::{at_1khz, eventually, guarded, service};
use haptic_alloc_counter::{allocations_during, CountingAllocator};
use haptic_device_haply::HaplyDevice;
use haptic_devices::{HapticDevice, Wrench};
use nalgebra::Vector3;
use std::time::Duration;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[test]
fn reading_and_writing_the_device_allocates_nothing() {
    let (sim, settings) = service();
    let mut layer = guarded(HaplyDevice::open(&settings).unwrap());
    assert!(eventually(|| layer.read().is_ok()));
    let push = Wrench {
        force: Vector3::new(0.0, 0.0, 1.0),
        torque: Vector3::zeros(),
    };
    let nan = Wrench {
        force: Vector3::new(f64::NAN, 0.0, 0.0),
        torque: Vector3::zeros(),
    };
    let mut oks = 0;
    // Counted on this (the servo's) thread only: the I/O thread is apart.
    let n = allocations_during(|| {
        at_1khz(Duration::from_millis(1500), |tick| {
            match tick {
                400 => sim.set_delay(Duration::from_millis(40)),
                600 => sim.set_delay(Duration::ZERO),
                900 => sim.drop_connection(),
                _ => {}
            }
            if layer.read().is_ok() {
                oks += 1;
            }
            let request = match tick {
                0..100 => Wrench::ZERO,
                300..310 => nan,
                _ => push,
            };
            let _ = layer.write(&request);
        });
        layer.shutdown();
        for _ in 0..20 {
            let _ = layer.read();
            let _ = layer.write(&push);
        }
    });
    assert_eq!(n, 0);
    assert!(oks > 800, "{oks} fresh samples");
    let counters = layer.counters();
    assert!(
        counters.stale >= 1 && counters.disconnected == 1,
        "{counters:?}"
    );
}
