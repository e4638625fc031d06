//! Per-tick read + write on the servo's side: the Falcon (fed by its I/O
//! thread on a scripted device) against the simulated device, in the same
//! run; and one exchange of the I/O thread (packet out, packet in, forward
//! kinematics, force to efforts).

use criterion::{criterion_group, criterion_main, Criterion};
use haptic_device_falcon::ftdi::Firmware;
use haptic_device_falcon::kinematics::WORKSPACE_CENTRE;
use haptic_device_falcon::link::{Link, LinkSettings};
use haptic_device_falcon::packet::Status;
use haptic_device_falcon::scripted::{ScriptedFalcon, Step};
use haptic_device_falcon::{FalconDevice, FalconSettings};
use haptic_devices::{HapticDevice, Motion, SimulatedClock, SimulatedDevice, Wrench};
use nalgebra::{Point3, Vector3};
use std::hint::black_box;
use std::time::Duration;

fn status(i: usize) -> Status {
    Status {
        encoders: [-516 + (i % 40) as i16, -516 - (i % 25) as i16, -500],
        buttons: 0,
        homed: 0b111,
    }
}

fn firmware(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("falcon.bin");
    std::fs::write(&path, [1u8; 64]).unwrap();
    path
}

fn tick(c: &mut Criterion) {
    let wrench = Wrench {
        force: Vector3::new(0.5, -0.3, 1.0),
        torque: Vector3::zeros(),
    };
    let motion: Motion = toml::from_str(
        "[[segments]]\ntype = \"circle\"\ncentre_m = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\nturns = 2.0\nduration_s = 1.0\n",
    )
    .unwrap();
    let mut simulated =
        SimulatedDevice::new(motion, SimulatedClock::Stepped(Duration::from_millis(1)));
    c.bench_function("device_tick/simulated", |b| {
        b.iter(|| {
            let _ = black_box(simulated.read());
            simulated.write(black_box(&wrench)).unwrap();
        })
    });

    let dir = tempfile::tempdir().unwrap();
    let path = firmware(dir.path());
    let opener = move || {
        let mut usb =
            ScriptedFalcon::new(true, (0..4000).map(|i| Step::Answer(status(i))).collect());
        usb.pace = Some(Duration::from_millis(1));
        Ok(usb)
    };
    let mut falcon = FalconDevice::start(&FalconSettings::new(&path), Box::new(opener)).unwrap();
    c.bench_function("device_tick/falcon", |b| {
        b.iter(|| {
            let _ = black_box(falcon.read());
            falcon.write(black_box(&wrench)).unwrap();
        })
    });
    drop(falcon);

    let settings = LinkSettings {
        homing_on_start: true,
        centre: Point3::from(WORKSPACE_CENTRE),
    };
    let script: Vec<Step> = (0..1_000_000).map(|i| Step::Answer(status(i))).collect();
    let firmware = Firmware::load(&path).unwrap();
    let mut link = Link::bring_up(ScriptedFalcon::new(true, script), &firmware, settings).unwrap();
    let mut t = 0u64;
    c.bench_function("falcon_io/exchange", |b| {
        b.iter(|| {
            t += 1;
            link.exchange(black_box(&wrench.force), Duration::from_micros(t * 1000))
                .unwrap();
        })
    });
}

criterion_group!(benches, tick);
criterion_main!(benches);
