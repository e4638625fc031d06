//! The Haply backend against the simulated Inverse Service
//! (`scripts/bench-devices`), on loopback:
//!
//! - the servo side's per-tick cost, one read (the newest state update
//!   from its hand-off buffer) and one write (the force into the other),
//!   called on the device itself — behind the safety layer a loop far
//!   faster than the exchanges would read as stale — beside the simulated
//!   device's read and write, in the same process;
//! - the state updates received per second, at the default 1 kHz
//!   exchange rate and at the 10 kHz the configuration allows at most;
//! - the round trip of one exchange (a `set_cursor_force` out, the state
//!   update whose `current_cursor_force` is that force back), on a
//!   session of its own;
//! - through the device, the time from a servo `write` of a new force to
//!   the service receiving it (the I/O thread's pacing included).

use haply_sim::{SimConfig, SimService};
use haptic_device_haply::{HaplyDevice, HaplySettings, Session};
use haptic_devices::{HapticDevice, Wrench};
use haptic_testkit::vendor_library::{device_tick, simulated_peer};
use nalgebra::Vector3;
use std::time::{Duration, Instant};

const TICKS: usize = 200_000;
const ROUNDS: usize = 7;
const EXCHANGES: usize = 5_000;

fn fail(what: &str) -> ! {
    eprintln!("{what}");
    std::process::exit(1)
}

/// The median over rounds of the mean time of one read and one write.
fn per_tick(device: &mut impl HapticDevice) -> Duration {
    let request = Wrench {
        force: Vector3::new(0.2, 0.0, 0.1),
        torque: Vector3::zeros(),
    };
    device_tick(device, &request, TICKS, ROUNDS)
}

fn open(sim: &SimService, rate_hz: f64) -> HaplyDevice {
    let settings = HaplySettings {
        url: sim.url(),
        centre_m: SimConfig::default().rest_m,
        exchange_rate_hz: rate_hz,
        ..HaplySettings::default()
    };
    let mut device = HaplyDevice::open(&settings)
        .unwrap_or_else(|e| fail(&format!("opening the simulated Inverse3: {e}")));
    let start = Instant::now();
    while device.read().is_err() {
        if start.elapsed() > Duration::from_secs(2) {
            fail("the simulated service sent no state in 2 s");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    device
}

/// State updates published per second over `span`.
fn states_per_second(device: &mut HaplyDevice, span: Duration) -> f64 {
    let before = device.counters().states;
    let start = Instant::now();
    std::thread::sleep(span);
    (device.counters().states - before) as f64 / start.elapsed().as_secs_f64()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let sim = SimService::start(SimConfig::default())
        .unwrap_or_else(|e| fail(&format!("starting the simulated service: {e}")));

    // The servo side, beside the simulated device.
    let mut haply = open(&sim, 1000.0);
    let mut simulated = simulated_peer();
    let tick = per_tick(&mut haply);
    let simulated_tick = per_tick(&mut simulated);

    // The rate at 1 kHz, then at the most the configuration allows.
    let rate_1k = states_per_second(&mut haply, Duration::from_secs(2));
    let faults = haply.counters();
    drop(haply);
    let mut fast = open(&sim, 10_000.0);
    let rate_10k = states_per_second(&mut fast, Duration::from_secs(2));

    // Write → service, through the device: a new force each time.
    let mut to_service = Vec::with_capacity(500);
    for i in 1..=500 {
        let z = i as f64 * 1e-3;
        let wrench = Wrench {
            force: Vector3::new(0.0, 0.0, z),
            torque: Vector3::zeros(),
        };
        let _ = fast.read();
        let sent = Instant::now();
        fast.write(&wrench).ok();
        // serde_json's float parsing may differ from the shortest form's
        // value by an ulp.
        while (sim.last_force()[2] - z).abs() > 1e-12 {
            if sent.elapsed() > Duration::from_secs(1) {
                fail("a force never reached the simulated service");
            }
            std::hint::spin_loop();
        }
        to_service.push(sent.elapsed());
    }
    drop(fast);

    // The round trip of one exchange, on a session of its own.
    let (mut session, first) = Session::connect(&sim.url(), Duration::from_secs(1))
        .unwrap_or_else(|e| fail(&format!("connecting: {e}")));
    let id = first["inverse3"][0]["device_id"]
        .as_str()
        .unwrap_or_else(|| fail("no inverse3 in the inventory"))
        .to_owned();
    let mut round_trips = Vec::with_capacity(EXCHANGES);
    for i in 0..EXCHANGES {
        let z = (i % 100) as f64 * 1e-2;
        let sent = Instant::now();
        session
            .send_force(&id, [0.0, 0.0, z])
            .unwrap_or_else(|e| fail(&format!("sending: {e:?}")));
        let reply = session
            .receive()
            .unwrap_or_else(|e| fail(&format!("receiving: {e:?}")));
        let elapsed = sent.elapsed();
        let applied = reply["inverse3"][0]["state"]["current_cursor_force"]["z"].as_f64();
        if applied.is_none_or(|a| (a - z).abs() > 1e-12) {
            fail("a state update did not reflect the force it answers");
        }
        round_trips.push(elapsed);
    }
    session.close();

    to_service.sort();
    round_trips.sort();
    let ns = |d: Duration| d.as_secs_f64() * 1e9;
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "haply ticks per round: {TICKS}, rounds: {ROUNDS} (median), devices without safety layer; \
         {EXCHANGES} round trips; 500 writes; faults in the 1 kHz run: {} malformed, {} bad fields, {} late",
        faults.malformed, faults.bad_fields, faults.late_replies
    );
    println!("haply_sim_tick: {:.1} ns", ns(tick));
    println!("haply_peer_tick: {:.1} ns", ns(simulated_tick));
    println!(
        "haply_over_simulated: {:.2} x",
        ns(tick) / ns(simulated_tick)
    );
    println!("haply_states_per_s_at_1khz: {rate_1k:.0} /s");
    println!("haply_states_per_s_at_10khz: {rate_10k:.0} /s");
    println!(
        "haply_round_trip_median: {:.1} us",
        us(percentile(&round_trips, 0.5))
    );
    println!(
        "haply_round_trip_p99: {:.1} us",
        us(percentile(&round_trips, 0.99))
    );
    println!(
        "haply_write_to_service_median: {:.1} us",
        us(percentile(&to_service, 0.5))
    );
    println!(
        "haply_write_to_service_p99: {:.1} us",
        us(percentile(&to_service, 0.99))
    );
}
