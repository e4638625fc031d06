//! The per-tick cost of the Force Dimension backend against the simulated
//! SDK, beside the simulated device's, behind the safety layer
//! (`scripts/bench-devices`).

use haptic_device_forcedim::{ForceDimensionDevice, Settings};
use haptic_devices::{HapticDevice, SafetyLayer, Wrench};
use haptic_testkit::vendor_library::{device_tick, find, simulated_peer};
use nalgebra::Vector3;
use std::time::Duration;

const TICKS: usize = 200_000;
const ROUNDS: usize = 7;

/// The median over rounds of the mean time of one read and one write.
fn per_tick<D: HapticDevice>(layer: &mut SafetyLayer<D>) -> Duration {
    let request = Wrench {
        force: Vector3::new(0.2, 0.0, 0.1),
        torque: Vector3::new(0.0, 0.01, 0.0),
    };
    device_tick(layer, &request, TICKS, ROUNDS)
}

fn main() {
    // The simulated SDK, built beside the examples as a dev-dependency.
    let library = find("libforcedim_sim.so").unwrap_or_else(|error| {
        eprintln!("{error}");
        std::process::exit(1);
    });
    let settings = Settings {
        library: Some(library),
        ..Settings::default()
    };
    let device = match ForceDimensionDevice::open(&settings) {
        Ok(device) => device,
        Err(error) => {
            eprintln!("opening the simulated SDK's device: {error}");
            std::process::exit(1);
        }
    };
    let mut forcedim = SafetyLayer::new(device);
    let mut simulated = SafetyLayer::new(simulated_peer());
    let fd = per_tick(&mut forcedim);
    let sim = per_tick(&mut simulated);
    let ns = |d: Duration| d.as_secs_f64() * 1e9;
    println!("ticks per round: {TICKS}, rounds: {ROUNDS} (median)");
    println!("forcedim_sim_tick: {:.1} ns", ns(fd));
    println!("forcedim_peer_tick: {:.1} ns", ns(sim));
    println!("forcedim_over_simulated: {:.2} x", ns(fd) / ns(sim));
}
