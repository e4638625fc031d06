//! The servo's side of the Falcon (read and write through the safety
//! layer) and the I/O thread's exchange allocate nothing per tick.

use haptic_alloc_counter::{allocations_during, CountingAllocator};
use haptic_device_falcon::ftdi::Firmware;
use haptic_device_falcon::kinematics::WORKSPACE_CENTRE;
use haptic_device_falcon::link::{Link, LinkSettings};
use haptic_device_falcon::packet::Status;
use haptic_device_falcon::scripted::{ScriptedFalcon, Step};
use haptic_device_falcon::{FalconDevice, FalconSettings};
use haptic_devices::{HapticDevice, SafetyLayer, Wrench};
use nalgebra::{Point3, Vector3};
use std::time::Duration;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn status(i: i16) -> Status {
    Status {
        encoders: [-516 + i % 50, -516 - i % 30, -516],
        buttons: (i % 16) as u8,
        homed: 0b111,
    }
}

#[test]
fn an_exchange_allocates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("falcon.bin");
    std::fs::write(&path, [1u8; 64]).unwrap();
    let firmware = Firmware::load(&path).unwrap();
    let script: Vec<Step> = (0..2000).map(|i| Step::Answer(status(i))).collect();
    let settings = LinkSettings {
        homing_on_start: true,
        centre: Point3::from(WORKSPACE_CENTRE),
    };
    let mut link = Link::bring_up(ScriptedFalcon::new(true, script), &firmware, settings).unwrap();
    let force = Vector3::new(0.5, -1.0, 2.0);
    let n = allocations_during(|| {
        for i in 1..1500u64 {
            link.exchange(&force, Duration::from_millis(i)).unwrap();
        }
    });
    assert_eq!(n, 0);
    assert_eq!(link.counters().packets.accepted, 1500);
}

#[test]
fn reading_and_writing_the_device_allocates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("falcon.bin");
    std::fs::write(&path, [1u8; 64]).unwrap();
    let script: Vec<Step> = (0..5000).map(|i| Step::Answer(status(i))).collect();
    let opener = move || {
        let mut usb = ScriptedFalcon::new(true, script.clone());
        usb.pace = Some(Duration::from_micros(500));
        Ok(usb)
    };
    let mut settings = FalconSettings::new(&path);
    settings.gravity_compensation_n = 0.3;
    let mut layer = SafetyLayer::new(FalconDevice::start(&settings, Box::new(opener)).unwrap());
    let push = Wrench {
        force: Vector3::new(0.0, 0.0, 1.0),
        torque: Vector3::zeros(),
    };
    let nan = Wrench {
        force: Vector3::new(f64::NAN, 0.0, 0.0),
        torque: Vector3::zeros(),
    };
    // Counted on this (the servo's) thread only: the I/O thread is apart.
    let n = allocations_during(|| {
        for tick in 0..1000 {
            let _ = layer.read();
            let request = match tick {
                0..100 => Wrench::ZERO,
                500..510 => nan,
                _ => push,
            };
            let _ = layer.write(&request);
            std::thread::sleep(Duration::from_micros(300));
        }
        layer.shutdown();
        for _ in 0..20 {
            let _ = layer.read();
            let _ = layer.write(&push);
        }
    });
    assert_eq!(n, 0);
    assert!(layer.device_mut().counters().packets.accepted > 100);
}
