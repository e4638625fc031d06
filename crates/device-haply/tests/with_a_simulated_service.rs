//! The backend against the simulated Inverse Service (`haply-sim`), through
//! the real WebSocket client and I/O thread: forces move the simulated
//! handle, a dropped connection, a slow peer, a refused connection and
//! unusable messages.

mod common;

use common::{at_1khz, eventually, guarded, service};
use haply_sim::{Fault, SimConfig, SimService};
use haptic_device_haply::{
    list_devices, HaplyDevice, HaplyError, HaplySettings, OnDisconnect, ProtocolError,
};
use haptic_devices::{DeviceError, HapticDevice, Wrench};
use nalgebra::{UnitQuaternion, Vector3};
use std::time::Duration;

fn push(z: f64) -> Wrench {
    Wrench {
        force: Vector3::new(0.0, 0.0, z),
        torque: Vector3::zeros(),
    }
}

#[test]
fn the_simulated_handle_follows_the_forces_sent_and_the_grip_is_read() {
    let (sim, settings) = service();
    let quarter = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), std::f64::consts::FRAC_PI_2);
    sim.set_grip(
        [quarter.w, quarter.i, quarter.j, quarter.k],
        [true, false, true],
    );
    let mut device = HaplyDevice::open(&settings).unwrap();
    assert_eq!(device.selected(), ("049D", Some("61548")));
    assert_eq!(device.capabilities().input_dof, 6);
    // 1 N up on a 200 N/m spring: 5 mm above the rest position.
    let mut last = None;
    at_1khz(Duration::from_millis(1500), |_| {
        if let Ok(sample) = device.read() {
            last = Some(sample);
        }
        device.write(&push(1.0)).unwrap();
    });
    let sample = last.expect("samples arrived");
    assert!(
        (sample.position.z - 0.005).abs() < 5e-4,
        "{:?}",
        sample.position
    );
    assert!(sample.position.x.abs() < 1e-9 && sample.position.y.abs() < 1e-9);
    assert!(sample.orientation.angle_to(&quarter) < 1e-9);
    // The wired grip has one button, bit 0.
    assert_eq!(sample.buttons, 1);
    assert!(sample.linear_velocity.unwrap().norm() < 0.01);
    assert_eq!(sim.last_force(), [0.0, 0.0, 1.0]);
    let c = device.counters();
    assert!(c.states > 1000 && c.sent >= c.states, "{c:?}");
    assert_eq!((c.malformed, c.bad_fields, c.disconnects), (0, 0, 0));
}

#[test]
fn a_dropped_connection_zeroes_the_force_is_counted_and_is_reconnected() {
    let (sim, settings) = service();
    let mut layer = guarded(HaplyDevice::open(&settings).unwrap());
    let mut during_loss = Vec::new();
    let mut fresh_after = 0;
    at_1khz(Duration::from_millis(2500), |tick| {
        let read = layer.read();
        let request = if tick < 100 { Wrench::ZERO } else { push(1.0) };
        let _ = layer.write(&request);
        if tick == 900 {
            sim.drop_connection();
        }
        if read == Err(DeviceError::Disconnected) {
            during_loss.push(layer.commanded().force.norm());
        }
        if tick > 900 && read.is_ok() {
            fresh_after += 1;
        }
    });
    assert!(!during_loss.is_empty(), "the loss was seen");
    assert!(during_loss.iter().all(|f| *f == 0.0), "{during_loss:?}");
    assert_eq!(layer.counters().disconnected, 1);
    let c = layer.device_mut().counters();
    assert_eq!((c.disconnects, c.reconnects), (1, 1), "{c:?}");
    assert!(fresh_after > 500, "samples returned: {fresh_after}");
    assert_eq!(sim.connections(), 2);
}

#[test]
fn with_on_disconnect_stop_a_loss_reads_disconnected_once_then_lost() {
    let (sim, mut settings) = service();
    settings.on_disconnect = OnDisconnect::Stop;
    let mut device = HaplyDevice::open(&settings).unwrap();
    assert!(eventually(|| device.read().is_ok()));
    sim.drop_connection();
    assert!(eventually(
        || device.read() == Err(DeviceError::Disconnected)
    ));
    assert_eq!(device.read(), Err(DeviceError::Lost));
    assert_eq!(device.write(&push(1.0)), Err(DeviceError::Disconnected));
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(sim.connections(), 1, "no reconnection is tried");
    assert_eq!(device.counters().disconnects, 1);
}

#[test]
fn a_slow_service_never_holds_up_the_servo_which_reads_stale_and_writes_zero() {
    let (sim, settings) = service();
    let mut layer = guarded(HaplyDevice::open(&settings).unwrap());
    let mut stale_forces = Vec::new();
    let mut fresh_late = 0;
    let paced = at_1khz(Duration::from_millis(2000), |tick| {
        match tick {
            600 => sim.set_delay(Duration::from_millis(60)),
            1200 => sim.set_delay(Duration::ZERO),
            _ => {}
        }
        let read = layer.read();
        let _ = layer.write(&if tick < 100 { Wrench::ZERO } else { push(1.0) });
        if matches!(read, Err(DeviceError::Stale { .. })) {
            stale_forces.push(layer.commanded().force.norm());
        }
        if tick > 1600 && read.is_ok() {
            fresh_late += 1;
        }
    });
    // The servo side kept its 1 kHz: no tick waited for the 60 ms answers
    // (a tick over the period is the scheduler's doing, and rare).
    assert!(paced.ticks >= 1900, "{} ticks in 2 s", paced.ticks);
    assert!(paced.slow <= paced.ticks / 100, "{} slow ticks", paced.slow);
    assert!(!stale_forces.is_empty());
    assert!(stale_forces.iter().all(|f| *f == 0.0));
    assert!(layer.counters().stale >= 1);
    let c = layer.device_mut().counters();
    assert!(c.late_replies >= 5, "{c:?}");
    assert_eq!(c.disconnects, 0, "60 ms is late, not lost");
    assert!(
        fresh_late > 300,
        "fresh samples after the delay: {fresh_late}"
    );
}

#[test]
fn a_refused_connection_names_the_url() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let url = format!("ws://127.0.0.1:{port}");
    let settings = HaplySettings {
        url: url.clone(),
        ..HaplySettings::default()
    };
    let e = HaplyDevice::open(&settings).err().expect("nothing listens");
    assert!(matches!(e, HaplyError::Connect { .. }), "{e}");
    let text = e.to_string();
    assert!(text.contains(&url) && text.contains("refused"), "{text}");
    let e = list_devices(&url, Duration::from_millis(300)).unwrap_err();
    assert!(e.to_string().contains(&url), "{e}");
}

#[test]
fn a_service_that_says_nothing_times_out_naming_the_url() {
    // Accepts TCP and never answers the handshake.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("ws://{}", listener.local_addr().unwrap());
    let started = std::time::Instant::now();
    let e = list_devices(&url, Duration::from_millis(200)).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(e.to_string().contains(&url), "{e}");
    drop(listener);
}

#[test]
fn unusable_messages_are_counted_and_named_and_a_bad_quaternion_is_a_fault() {
    let (sim, settings) = service();
    let mut layer = guarded(HaplyDevice::open(&settings).unwrap());
    assert!(eventually(|| layer.read().is_ok()));
    for fault in [Fault::Malformed, Fault::MissingPosition, Fault::Binary] {
        sim.inject(fault);
        assert!(eventually(|| {
            let c = layer.device_mut().counters();
            c.malformed + c.bad_fields + c.not_text
                == 1 + [Fault::Malformed, Fault::MissingPosition, Fault::Binary]
                    .iter()
                    .position(|f| *f == fault)
                    .unwrap() as u64
        }));
    }
    let c = layer.device_mut().counters();
    assert_eq!((c.malformed, c.bad_fields, c.not_text), (1, 1, 1), "{c:?}");
    assert_eq!(
        layer.device().last_protocol_error(),
        Some(ProtocolError::NotText)
    );
    sim.inject(Fault::MissingPosition);
    assert!(eventually(|| layer.device_mut().counters().bad_fields == 2));
    let named = layer.device().last_protocol_error().unwrap().to_string();
    assert_eq!(
        named,
        "missing field `inverse3[049D].state.cursor_position`"
    );
    // A grip quaternion of zeros: the sample is withheld, a counted fault.
    sim.inject(Fault::ZeroQuaternion);
    assert!(eventually(
        || layer.read() == Err(DeviceError::SampleNotFinite)
    ));
    assert_eq!(layer.counters().sample_not_finite, 1);
    assert_eq!(layer.commanded(), Wrench::ZERO);
    // The session goes on.
    assert!(eventually(|| layer.read().is_ok()));
}

#[test]
fn the_shutdown_ramp_ends_with_a_zero_force_sent() {
    let (sim, settings) = service();
    let mut layer = guarded(HaplyDevice::open(&settings).unwrap());
    at_1khz(Duration::from_millis(800), |tick| {
        let _ = layer.read();
        let _ = layer.write(&if tick < 100 { Wrench::ZERO } else { push(1.5) });
    });
    assert!(sim.last_force()[2] > 0.5, "{:?}", sim.last_force());
    sim.record_forces(true);
    layer.shutdown();
    at_1khz(Duration::from_millis(50), |_| {
        let _ = layer.read();
        let _ = layer.write(&push(1.5));
    });
    drop(layer);
    let forces = sim.forces();
    assert_eq!(forces.last(), Some(&[0.0, 0.0, 0.0]));
    // Ramped down, not cut: some force between full and zero was sent.
    assert!(
        forces.iter().any(|f| f[2] > 0.0 && f[2] < 1.4),
        "{forces:?}"
    );
}

#[test]
fn devices_are_listed_and_chosen_by_id_or_port() {
    let sim = SimService::start(SimConfig {
        grip: Some(("A1".into(), true)),
        ..SimConfig::default()
    })
    .unwrap();
    let inventory = list_devices(&sim.url(), Duration::from_millis(500)).unwrap();
    assert_eq!(inventory.inverse3.len(), 1);
    assert_eq!(inventory.inverse3[0].port.as_deref(), Some("COM12"));
    assert!(inventory.grips[0].wireless);
    let by_port = HaplySettings {
        url: sim.url(),
        inverse3: Some("COM12".into()),
        ..HaplySettings::default()
    };
    let device = HaplyDevice::open(&by_port).unwrap();
    assert_eq!(device.selected(), ("049D", Some("A1")));
    drop(device);
    let missing = HaplySettings {
        verse_grip: Some("B2".into()),
        ..by_port
    };
    let e = HaplyDevice::open(&missing).err().unwrap().to_string();
    assert!(e.contains("no VerseGrip `B2`") && e.contains("A1"), "{e}");
}
