//! The per-tick path of the safety layer allocates nothing, on the normal
//! path and through every trip.

use haptic_alloc_counter::{allocations_during, CountingAllocator};
use haptic_devices::{
    DeviceCapabilities, DeviceError, DeviceSample, HapticDevice, Motion, SafetyLayer,
    SimulatedClock, SimulatedDevice, Wrench,
};
use nalgebra::{Point3, UnitQuaternion, Vector3};
use std::time::Duration;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// A device that misbehaves on command, without allocating.
struct Faulty {
    capabilities: DeviceCapabilities,
    time: Duration,
    frozen: bool,
    nan: bool,
    stale: bool,
    connected: bool,
}

impl HapticDevice for Faulty {
    fn capabilities(&self) -> &DeviceCapabilities {
        &self.capabilities
    }

    fn read(&mut self) -> Result<DeviceSample, DeviceError> {
        if !self.connected {
            return Err(DeviceError::Disconnected);
        }
        if self.stale {
            return Err(DeviceError::Stale { age: self.time });
        }
        if !self.frozen {
            self.time += Duration::from_millis(1);
        }
        let x = if self.nan { f64::NAN } else { 0.01 };
        Ok(DeviceSample {
            timestamp: self.time,
            position: Point3::new(x, 0.0, 0.0),
            orientation: UnitQuaternion::identity(),
            buttons: 0,
            linear_velocity: None,
            angular_velocity: None,
        })
    }

    fn write(&mut self, _: &Wrench) -> Result<(), DeviceError> {
        if self.connected {
            Ok(())
        } else {
            Err(DeviceError::Disconnected)
        }
    }
}

fn ticks<D: HapticDevice>(layer: &mut SafetyLayer<D>, n: usize, request: Wrench) {
    for _ in 0..n {
        let _ = layer.read();
        let _ = layer.write(&request);
    }
}

#[test]
fn simulated_device_behind_the_layer_does_not_allocate() {
    // The counter sees allocations.
    assert_eq!(
        allocations_during(|| drop(std::hint::black_box(Vec::<u8>::with_capacity(8)))),
        1
    );
    let motion: Motion = toml::from_str(
        "[[segments]]\ntype = \"circle\"\ncentre_m = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\nturns = 2.0\nduration_s = 1.0\n[[segments]]\ntype = \"rotate\"\naxis = [0.0, 1.0, 0.0]\nangle_rad = 1.0\nduration_s = 1.0\n",
    )
    .unwrap();
    let device = SimulatedDevice::new(motion, SimulatedClock::Stepped(Duration::from_millis(1)));
    let mut layer = SafetyLayer::new(device);
    let push = Wrench {
        force: Vector3::new(20.0, 0.0, 0.0),
        torque: Vector3::new(0.0, 1.0, 0.0),
    };
    let nan = Wrench {
        force: Vector3::new(f64::NAN, 0.0, 0.0),
        torque: Vector3::zeros(),
    };
    let n = allocations_during(|| {
        ticks(&mut layer, 10, push);
        ticks(&mut layer, 600, Wrench::ZERO);
        ticks(&mut layer, 1000, push);
        ticks(&mut layer, 10, nan);
        layer.report_overrun();
        ticks(&mut layer, 600, Wrench::ZERO);
        layer.shutdown();
        ticks(&mut layer, 100, push);
    });
    assert_eq!(n, 0);
    assert_eq!(layer.device().write_count(), 2321);
}

#[test]
fn trips_do_not_allocate() {
    let device = Faulty {
        capabilities: SimulatedDevice::default_capabilities(),
        time: Duration::ZERO,
        frozen: false,
        nan: false,
        stale: false,
        connected: true,
    };
    let mut layer = SafetyLayer::new(device).with_reconnect(|d: &mut Faulty| {
        d.connected = true;
        Ok(())
    });
    let push = Wrench {
        force: Vector3::new(3.0, 0.0, 0.0),
        torque: Vector3::zeros(),
    };
    let n = allocations_during(|| {
        ticks(&mut layer, 600, Wrench::ZERO);
        ticks(&mut layer, 10, push);
        layer.device_mut().frozen = true;
        ticks(&mut layer, 50, push);
        layer.device_mut().frozen = false;
        ticks(&mut layer, 5, push);
        layer.device_mut().nan = true;
        ticks(&mut layer, 10, push);
        layer.device_mut().nan = false;
        ticks(&mut layer, 5, push);
        layer.device_mut().stale = true;
        ticks(&mut layer, 10, push);
        layer.device_mut().stale = false;
        layer.device_mut().connected = false;
        ticks(&mut layer, 300, push);
        ticks(&mut layer, 600, Wrench::ZERO);
    });
    assert_eq!(n, 0);
    let c = layer.counters();
    assert_eq!(
        (c.stale, c.sample_not_finite, c.disconnected),
        (2, 1, 1),
        "{c:?}"
    );
}
