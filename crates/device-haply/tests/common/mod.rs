//! What the tests against the simulated service share.

#![allow(dead_code)]

use haply_sim::{SimConfig, SimService};
use haptic_device_haply::{HaplyDevice, HaplySettings};
use haptic_devices::{HapticDevice, SafetyLayer, SafetyLimits, ServoRate};
use std::time::{Duration, Instant};

/// A simulated service and settings that reach it, centred on the
/// handle's rest position, reconnecting quickly.
pub fn service() -> (SimService, HaplySettings) {
    let config = SimConfig::default();
    let rest = config.rest_m;
    let sim = SimService::start(config).expect("the simulated service starts");
    let settings = HaplySettings {
        url: sim.url(),
        centre_m: rest,
        reconnect_interval: Duration::from_millis(50),
        lost_after: Duration::from_millis(200),
        ..HaplySettings::default()
    };
    (sim, settings)
}

/// The device behind the safety layer with the limits the daemon gives it.
pub fn guarded(device: HaplyDevice) -> SafetyLayer<HaplyDevice> {
    let limits = SafetyLimits::from_capabilities(device.capabilities(), ServoRate::DEFAULT);
    SafetyLayer::new(device).with_limits(limits)
}

/// What [`at_1khz`] saw.
pub struct Paced {
    /// Ticks run.
    pub ticks: u32,
    /// Ticks that took longer than the 1 ms period.
    pub slow: u32,
}

/// Runs `tick` every millisecond for `duration`, as a 1 kHz servo would
/// (late ticks run back to back to catch up), counting the ticks and
/// those that took longer than the period. Allocates nothing.
pub fn at_1khz(duration: Duration, mut tick: impl FnMut(u32)) -> Paced {
    let start = Instant::now();
    let mut next = start;
    let mut paced = Paced { ticks: 0, slow: 0 };
    while start.elapsed() < duration {
        let began = Instant::now();
        tick(paced.ticks);
        if began.elapsed() > Duration::from_millis(1) {
            paced.slow += 1;
        }
        paced.ticks += 1;
        next += Duration::from_millis(1);
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        }
    }
    paced
}

/// Waits up to 2 s for `done`, polling every millisecond.
pub fn eventually(mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(2) {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    false
}
