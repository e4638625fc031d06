//! The per-tick cost of the Falcon backend on the servo's side
//! (`scripts/bench-devices`): one read and one write of the `FalconDevice`,
//! fed by its I/O thread on a scripted Falcon answering at 1 kHz, beside
//! the simulated device's, both without the safety layer, in the same run;
//! and one exchange of the I/O thread (packet out, packet in, forward
//! kinematics, force to efforts), which a real FT232's bulk transfers
//! dwarf.

use haptic_device_falcon::ftdi::Firmware;
use haptic_device_falcon::kinematics::WORKSPACE_CENTRE;
use haptic_device_falcon::link::{Link, LinkSettings};
use haptic_device_falcon::packet::Status;
use haptic_device_falcon::scripted::{ScriptedFalcon, Step};
use haptic_device_falcon::{FalconDevice, FalconSettings};
use haptic_devices::Wrench;
use haptic_testkit::vendor_library::{device_tick, median_tick, simulated_peer};
use nalgebra::{Point3, Vector3};
use std::hint::black_box;
use std::time::Duration;

const TICKS: usize = 200_000;
const ROUNDS: usize = 7;

fn status(i: usize) -> Status {
    Status {
        encoders: [-516 + (i % 40) as i16, -516 - (i % 25) as i16, -500],
        buttons: 0,
        homed: 0b111,
    }
}

fn main() {
    let wrench = Wrench {
        force: Vector3::new(0.5, -0.3, 1.0),
        torque: Vector3::zeros(),
    };
    let ns = |tick: Duration| tick.as_secs_f64() * 1e9;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("falcon.bin");
    std::fs::write(&path, [1u8; 64]).expect("a firmware file");
    let opener = move || {
        let mut usb =
            ScriptedFalcon::new(true, (0..4000).map(|i| Step::Answer(status(i))).collect());
        usb.pace = Some(Duration::from_millis(1));
        Ok(usb)
    };
    let mut falcon = FalconDevice::start(&FalconSettings::new(&path), Box::new(opener))
        .unwrap_or_else(|e| panic!("starting the Falcon on a scripted device: {e}"));
    let falcon_tick = ns(device_tick(&mut falcon, &wrench, TICKS, ROUNDS));
    drop(falcon);
    let simulated_tick = ns(device_tick(&mut simulated_peer(), &wrench, TICKS, ROUNDS));

    let settings = LinkSettings {
        homing_on_start: true,
        centre: Point3::from(WORKSPACE_CENTRE),
    };
    let exchanges = TICKS / 10;
    let script: Vec<Step> = (0..exchanges * (ROUNDS + 1))
        .map(|i| Step::Answer(status(i)))
        .collect();
    let firmware = Firmware::load(&path).expect("the firmware file");
    let mut link = Link::bring_up(ScriptedFalcon::new(true, script), &firmware, settings)
        .unwrap_or_else(|e| panic!("bringing up the scripted Falcon: {e}"));
    let mut t = 0u64;
    let exchange = ns(median_tick(exchanges, ROUNDS, || {
        t += 1;
        let _ = black_box(link.exchange(black_box(&wrench.force), Duration::from_micros(t * 1000)));
    }));

    println!(
        "falcon ticks per round: {TICKS}, rounds: {ROUNDS} (median), devices without safety layer"
    );
    println!("falcon_tick: {falcon_tick:.1} ns");
    println!("falcon_peer_tick: {simulated_tick:.1} ns");
    println!(
        "falcon_over_simulated: {:.2} x",
        falcon_tick / simulated_tick
    );
    println!("falcon_io_exchange: {exchange:.1} ns");
}
