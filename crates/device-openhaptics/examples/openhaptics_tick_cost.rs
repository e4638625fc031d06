//! The per-tick cost of the OpenHaptics backend on the servo side against
//! the simulated libHD (`scripts/bench-devices`): one read (the newest
//! scheduler frame from its hand-off buffer, converted) and one write (the
//! force into the other buffer), called on the device itself — behind the
//! safety layer a loop far faster than the scheduler's 1 kHz would read
//! as stale — with the scheduler thread running beside it; and the
//! simulated device's read and write, also without the safety layer, in
//! the same run.

use haptic_device_openhaptics::{OpenHapticsDevice, Settings};
use haptic_devices::{HapticDevice, Wrench};
use haptic_testkit::vendor_library::{device_tick, find, simulated_peer};
use nalgebra::Vector3;
use std::time::{Duration, Instant};

const TICKS: usize = 200_000;
const ROUNDS: usize = 7;

fn main() {
    // The simulated libHD, built beside the examples as a dev-dependency.
    let library = find("libopenhaptics_sim.so").unwrap_or_else(|error| {
        eprintln!("{error}");
        std::process::exit(1);
    });
    let settings = Settings {
        library: Some(library),
        ..Settings::default()
    };
    let mut device = match OpenHapticsDevice::open(&settings) {
        Ok(device) => device,
        Err(error) => {
            eprintln!("opening the simulated libHD's device: {error}");
            std::process::exit(1);
        }
    };
    let start = Instant::now();
    while device.read().is_err() {
        if start.elapsed() > Duration::from_secs(1) {
            eprintln!("the simulated scheduler sent no frame in 1 s");
            std::process::exit(1);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let request = Wrench {
        force: Vector3::new(0.2, 0.0, 0.1),
        torque: Vector3::zeros(),
    };
    let ns = |tick: Duration| tick.as_secs_f64() * 1e9;
    let openhaptics = ns(device_tick(&mut device, &request, TICKS, ROUNDS));
    let simulated = ns(device_tick(&mut simulated_peer(), &request, TICKS, ROUNDS));
    println!("openhaptics ticks per round: {TICKS}, rounds: {ROUNDS} (median), devices without safety layer");
    println!("openhaptics_sim_tick: {openhaptics:.1} ns");
    println!("openhaptics_peer_tick: {simulated:.1} ns");
    println!(
        "openhaptics_over_simulated: {:.2} x",
        openhaptics / simulated
    );
}
