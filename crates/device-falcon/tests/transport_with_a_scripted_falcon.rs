//! The bring-up and the running exchange against a scripted Falcon: the
//! firmware handshake and upload, bad firmware files, a garbled packet, a
//! device that vanishes mid-run, a sample the kinematics cannot solve, and
//! the shutdown ramp through the safety layer.

use haptic_device_falcon::ftdi::{request, value, Firmware};
use haptic_device_falcon::kinematics::{self, WORKSPACE_CENTRE};
use haptic_device_falcon::link::{Link, LinkSettings};
use haptic_device_falcon::packet::{Command, Status};
use haptic_device_falcon::scripted::{Event, ScriptedFalcon, Step};
use haptic_device_falcon::TransportError;
use haptic_device_falcon::{frame, FalconDevice, FalconError, FalconSettings};
use haptic_devices::{DeviceError, HapticDevice, OnDisconnect, SafetyLayer, Wrench};
use nalgebra::{Point3, Vector3};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Encoders at the workspace centre (−516.3 ticks, rounded), all homed.
fn centre_status() -> Status {
    Status {
        encoders: [-516; 3],
        buttons: 0,
        homed: 0b111,
    }
}

fn settings() -> LinkSettings {
    LinkSettings {
        homing_on_start: true,
        centre: Point3::from(WORKSPACE_CENTRE),
    }
}

fn firmware_file(dir: &Path, bytes: &[u8]) -> Firmware {
    let path = dir.join("falcon.bin");
    std::fs::write(&path, bytes).unwrap();
    Firmware::load(&path).unwrap()
}

fn image(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 % 251) as u8).collect()
}

fn controls(log: &[Event]) -> Vec<(u8, u16)> {
    log.iter()
        .filter_map(|e| match e {
            Event::Control { request, value } => Some((*request, *value)),
            Event::BulkOut(_) => None,
        })
        .collect()
}

#[test]
fn running_firmware_is_found_without_an_upload() {
    let dir = tempfile::tempdir().unwrap();
    let firmware = firmware_file(dir.path(), &image(100));
    let usb = ScriptedFalcon::new(true, vec![Step::Answer(centre_status())]);
    let link = Link::bring_up(usb, &firmware, settings()).unwrap();
    let usb = link.transport();
    assert!(usb.uploaded.is_empty());
    assert_eq!(
        controls(&usb.log),
        [
            (request::RESET, value::RESET_SIO),
            (request::SET_BITMODE, value::BITMODE_RESET),
            (request::RESET, value::PURGE_RX),
            (request::RESET, value::PURGE_TX),
            (request::SET_LATENCY_TIMER, 1),
            (request::SET_BAUD_RATE, 0x0002),
            (request::RESET, value::PURGE_RX),
            (request::RESET, value::PURGE_TX),
        ]
    );
}

#[test]
fn the_loader_handshake_and_upload_follow_libnifalcons_sequence() {
    let dir = tempfile::tempdir().unwrap();
    // 7914 bytes, the size of Novint's images: 127 full chunks and one of 40.
    let firmware = firmware_file(dir.path(), &image(7914));
    let mut usb = ScriptedFalcon::new(false, vec![Step::Answer(centre_status())]);
    usb.loader_deaf_for = 3;
    let link = Link::bring_up(usb, &firmware, settings()).unwrap();
    let usb = link.transport();
    assert_eq!(usb.uploaded, firmware.bytes);
    let c = controls(&usb.log);
    // After the probe of the normal mode found no firmware: the loader's
    // settings, the DTR pulse, then the upload rate, then normal mode.
    let loader = &c[8..];
    assert_eq!(
        loader,
        [
            (request::RESET, value::PURGE_RX),
            (request::RESET, value::PURGE_TX),
            (request::SET_LATENCY_TIMER, 16),
            (request::SET_BAUD_RATE, 0x4138),
            (request::SET_DATA, 8),
            (request::SET_FLOW_CTRL, 0),
            (request::MODEM_CTRL, 0x0200),
            (request::MODEM_CTRL, 0x0100),
            (request::MODEM_CTRL, 0x0101),
            (request::MODEM_CTRL, 0x0100),
            (request::SET_BAUD_RATE, 0x0015),
            (request::SET_LATENCY_TIMER, 1),
            (request::SET_BAUD_RATE, 0x0002),
            (request::RESET, value::PURGE_RX),
            (request::RESET, value::PURGE_TX),
        ]
    );
    let writes: Vec<&Vec<u8>> = usb
        .log
        .iter()
        .filter_map(|e| match e {
            Event::BulkOut(b) => Some(b),
            Event::Control { .. } => None,
        })
        // The probe's command packets went unanswered before the loader.
        .skip_while(|b| b.as_slice() != [0x0a, 0x43, 0x0d])
        .collect();
    // Four first checks (three unanswered), the `A`, then 128 chunks.
    assert!(writes[..4]
        .iter()
        .all(|w| w.as_slice() == [0x0a, 0x43, 0x0d]));
    assert_eq!(writes[4].as_slice(), [0x41]);
    assert_eq!(writes.len(), 5 + 128);
    assert!(writes[5..132].iter().all(|w| w.len() == 62));
    assert_eq!(writes[132].len(), 7914 - 127 * 62);
}

#[test]
fn a_wrong_echo_or_a_silent_loader_stops_the_upload() {
    let dir = tempfile::tempdir().unwrap();
    let firmware = firmware_file(dir.path(), &image(500));
    let mut usb = ScriptedFalcon::new(false, vec![]);
    usb.corrupt_echo_at = Some(130);
    let error = Link::bring_up(usb, &firmware, settings()).err().unwrap();
    assert!(
        matches!(
            error,
            FalconError::EchoMismatch {
                offset: 130,
                sent: Some(_),
                ..
            }
        ),
        "{error}"
    );
    let mut usb = ScriptedFalcon::new(false, vec![]);
    usb.loader_deaf_for = usize::MAX;
    let error = Link::bring_up(usb, &firmware, settings()).err().unwrap();
    assert_eq!(error, FalconError::LoaderSilent { attempts: 100 });
    assert!(error.to_string().contains("did not answer"), "{error}");
}

#[test]
fn firmware_that_does_not_start_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let firmware = firmware_file(dir.path(), &image(300));
    // The loader takes the image, but the firmware never answers.
    let usb = ScriptedFalcon::new(false, vec![Step::Silent; 1000]);
    let error = Link::bring_up(usb, &firmware, settings()).err().unwrap();
    assert!(matches!(error, FalconError::NoFirmwareResponse { .. }));
    assert!(error.to_string().contains("falcon.bin"), "{error}");
}

#[test]
fn a_missing_or_empty_firmware_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("novint.bin");
    let error = Firmware::load(&missing).unwrap_err();
    assert!(matches!(error, FalconError::FirmwareFile { .. }));
    assert!(
        error.to_string().contains(&missing.display().to_string()),
        "{error}"
    );
    let empty = dir.path().join("empty.bin");
    std::fs::write(&empty, b"").unwrap();
    let error = Firmware::load(&empty).unwrap_err();
    assert!(matches!(error, FalconError::FirmwareInvalid { .. }));
    assert!(error.to_string().contains("empty.bin"), "{error}");
    // The device reads the file before any USB traffic.
    let opened = FalconDevice::start(
        &FalconSettings::new(&missing),
        Box::new(|| -> Result<ScriptedFalcon, FalconError> { panic!("opened USB") }),
    );
    assert!(matches!(
        opened.err().unwrap(),
        FalconError::FirmwareFile { .. }
    ));
}

fn running_link(script: Vec<Step>) -> Link<ScriptedFalcon> {
    let dir = tempfile::tempdir().unwrap();
    let firmware = firmware_file(dir.path(), &image(64));
    let mut full = vec![Step::Answer(centre_status())];
    full.extend(script);
    Link::bring_up(ScriptedFalcon::new(true, full), &firmware, settings()).unwrap()
}

#[test]
fn readings_are_positions_in_the_device_frame_with_buttons_and_velocity() {
    let ms = Duration::from_millis(1);
    // Motor 1's arm moves 10 ticks a millisecond; button 2 is pressed.
    let script: Vec<Step> = (1..=40)
        .map(|i| {
            Step::Answer(Status {
                encoders: [-516 + 10 * i, -516, -516],
                buttons: 0b0100,
                homed: 0b111,
            })
        })
        .collect();
    let mut link = running_link(script);
    for i in 1..=40u32 {
        link.exchange(&Vector3::zeros(), ms * i).unwrap();
    }
    let reading = *link.reading().unwrap();
    assert_eq!(reading.buttons, 0b0100);
    assert_eq!(reading.encoders, [-116, -516, -516]);
    let theta = Vector3::from(reading.encoders.map(kinematics::theta_from_encoder));
    let p = kinematics::forward(&theta, &Point3::from(WORKSPACE_CENTRE))
        .unwrap()
        .position;
    let expected = frame::position_to_device(&p, &Point3::from(WORKSPACE_CENTRE));
    assert!((reading.position - expected).norm() < 1e-9);
    // The filtered velocity approaches the true one: the last step's
    // displacement over 1 ms, to within the filter's lag on a curving path.
    let before = {
        let theta = Vector3::from([-126i16, -516, -516].map(kinematics::theta_from_encoder));
        let p = kinematics::forward(&theta, &Point3::from(WORKSPACE_CENTRE))
            .unwrap()
            .position;
        frame::position_to_device(&p, &Point3::from(WORKSPACE_CENTRE))
    };
    let step_velocity = (reading.position - before) / 1e-3;
    let error = (reading.velocity - step_velocity).norm() / step_velocity.norm();
    assert!(error < 0.1, "{:?} vs {step_velocity:?}", reading.velocity);
}

#[test]
fn a_garbled_packet_is_counted_and_dropped() {
    let mut garbled = centre_status().encode();
    garbled[5] = 0x7f;
    let moved = Status {
        encoders: [-400, -516, -516],
        ..centre_status()
    };
    let mut link = running_link(vec![Step::Raw(garbled), Step::Answer(moved)]);
    link.exchange(&Vector3::zeros(), Duration::from_millis(1))
        .unwrap();
    assert_eq!(link.counters().packets.garbled, 1);
    assert!(
        link.reading().is_none(),
        "the garbled packet gave no reading"
    );
    link.exchange(&Vector3::zeros(), Duration::from_millis(2))
        .unwrap();
    assert_eq!(link.reading().unwrap().encoders, [-400, -516, -516]);
    assert_eq!(link.counters().packets.garbled, 1);
}

#[test]
fn a_silent_exchange_is_a_counted_timeout() {
    let mut link = running_link(vec![Step::Silent, Step::Answer(centre_status())]);
    assert_eq!(
        link.exchange(&Vector3::zeros(), Duration::from_millis(1)),
        Err(TransportError::Timeout)
    );
    assert_eq!(link.counters().timeouts, 1);
    link.exchange(&Vector3::zeros(), Duration::from_millis(2))
        .unwrap();
}

#[test]
fn a_force_is_written_as_the_motor_efforts_of_the_jacobian() {
    let mut link = running_link(vec![]);
    link.exchange(&Vector3::zeros(), Duration::from_millis(1))
        .unwrap();
    // 2 N up and 1 N towards the user (−y in the device frame).
    let force = Vector3::new(0.0, -1.0, 2.0);
    link.exchange(&force, Duration::from_millis(2)).unwrap();
    let sent = link.transport().last_command;
    let legs = kinematics::inverse(
        &kinematics::forward(
            &Vector3::repeat(kinematics::theta_from_encoder(-516)),
            &Point3::from(WORKSPACE_CENTRE),
        )
        .unwrap()
        .position,
    );
    // In the Falcon frame: 2 N along +y (up), 1 N along +z (towards the user).
    let torques = kinematics::arm_torques(&legs, &Vector3::new(0.0, 2.0, 1.0)).unwrap();
    let expected = Command {
        efforts: kinematics::efforts(&torques),
        leds: haptic_device_falcon::packet::led::GREEN,
        homing: false,
    };
    assert_eq!(sent, expected.encode());
    assert!(
        expected.efforts.iter().any(|&e| e.unsigned_abs() > 100),
        "{expected:?}"
    );
}

#[test]
fn no_force_and_a_red_led_until_homed() {
    let unhomed = Status {
        homed: 0b011,
        ..centre_status()
    };
    let dir = tempfile::tempdir().unwrap();
    let firmware = firmware_file(dir.path(), &image(64));
    let usb = ScriptedFalcon::new(true, vec![Step::Answer(unhomed); 3]);
    let mut link = Link::bring_up(usb, &firmware, settings()).unwrap();
    link.exchange(&Vector3::zeros(), Duration::from_millis(1))
        .unwrap();
    link.exchange(&Vector3::new(1.0, 0.0, 0.0), Duration::from_millis(2))
        .unwrap();
    let command = Command {
        efforts: [0; 3],
        leds: haptic_device_falcon::packet::led::RED,
        homing: true,
    };
    assert_eq!(link.transport().last_command, command.encode());
    assert!(!link.ready());
}

#[test]
fn a_vanished_device_is_disconnected() {
    let mut link = running_link(vec![Step::Answer(centre_status()), Step::Vanish]);
    link.exchange(&Vector3::zeros(), Duration::from_millis(1))
        .unwrap();
    assert_eq!(
        link.exchange(&Vector3::zeros(), Duration::from_millis(2)),
        Err(TransportError::Disconnected)
    );
    assert_eq!(link.counters().disconnections, 1);
}

/// A device on the scripted Falcon, paced at 0.5 ms an exchange, playing
/// `script` after one answer at the centre and then holding its last
/// answer; `unplugged` unplugs it, and while it is set, reopening fails.
fn device(script: Vec<Step>, dir: &Path, unplugged: Arc<AtomicBool>) -> FalconDevice {
    let path = dir.join("falcon.bin");
    std::fs::write(&path, image(64)).unwrap();
    let mut full = vec![Step::Answer(centre_status())];
    full.extend(script);
    let opener = move || {
        if unplugged.load(Ordering::Acquire) {
            return Err(FalconError::NotConnected { index: 0, found: 0 });
        }
        let mut usb = ScriptedFalcon::new(true, full.clone());
        usb.pace = Some(Duration::from_micros(500));
        usb.unplugged = Some(unplugged.clone());
        Ok(usb)
    };
    FalconDevice::start(&FalconSettings::new(&path), Box::new(opener)).unwrap()
}

/// Reads until `done` or 2 s pass, ticking at about 1 kHz.
fn read_until(
    device: &mut impl HapticDevice,
    mut done: impl FnMut(&Result<haptic_devices::DeviceSample, DeviceError>) -> bool,
) -> Result<haptic_devices::DeviceSample, DeviceError> {
    let start = Instant::now();
    loop {
        let result = device.read();
        if done(&result) || start.elapsed() > Duration::from_secs(2) {
            return result;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn the_device_reports_a_vanished_falcon_as_disconnected_until_it_is_back() {
    let dir = tempfile::tempdir().unwrap();
    let unplugged = Arc::new(AtomicBool::new(false));
    let mut falcon = device(vec![], dir.path(), unplugged.clone());
    let first = read_until(&mut falcon, |r| r.is_ok()).unwrap();
    assert!(first.position.coords.norm() < 1e-4, "{first:?}");
    assert_eq!(first.orientation, nalgebra::UnitQuaternion::identity());
    assert!(first.linear_velocity.is_some());
    unplugged.store(true, Ordering::Release);
    let lost = read_until(&mut falcon, |r| *r == Err(DeviceError::Disconnected));
    assert_eq!(lost, Err(DeviceError::Disconnected));
    assert_eq!(falcon.counters().disconnections, 1);
    // Still unplugged: reopening fails, the device stays disconnected.
    std::thread::sleep(2 * haptic_device_falcon::RECONNECT_INTERVAL);
    assert_eq!(falcon.read(), Err(DeviceError::Disconnected));
    // Plugged back: reopened within a reconnection interval.
    unplugged.store(false, Ordering::Release);
    assert!(read_until(&mut falcon, |r| r.is_ok()).is_ok());
    assert_eq!(falcon.counters().disconnections, 1);
}

#[test]
fn a_vanished_falcon_gets_zero_force_and_is_waited_for_or_stops_the_run() {
    let push = Wrench {
        force: Vector3::new(0.0, 0.0, 0.05),
        torque: Vector3::zeros(),
    };
    for on_disconnect in [OnDisconnect::Wait, OnDisconnect::Stop] {
        let dir = tempfile::tempdir().unwrap();
        let unplugged = Arc::new(AtomicBool::new(false));
        let mut layer = SafetyLayer::new(device(vec![], dir.path(), unplugged.clone()))
            .with_on_disconnect(on_disconnect);
        read_until(&mut layer, |r| r.is_ok()).unwrap();
        // Below the soft start's threshold: the push goes through.
        let start = Instant::now();
        while layer.commanded() == Wrench::ZERO && start.elapsed() < Duration::from_secs(2) {
            let _ = layer.read();
            let _ = layer.write(&push);
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_ne!(layer.commanded(), Wrench::ZERO, "{on_disconnect:?}");
        unplugged.store(true, Ordering::Release);
        let lost = read_until(&mut layer, |r| *r == Err(DeviceError::Disconnected));
        assert_eq!(lost, Err(DeviceError::Disconnected), "{on_disconnect:?}");
        assert_eq!(layer.commanded(), Wrench::ZERO);
        assert_eq!(layer.counters().disconnected, 1);
        // Plugged back at once: waited for, the Falcon returns (at zero
        // until the soft start); told to stop, every read is `Lost`.
        unplugged.store(false, Ordering::Release);
        let start = Instant::now();
        let mut last = Err(DeviceError::Disconnected);
        while start.elapsed() < 3 * haptic_device_falcon::RECONNECT_INTERVAL {
            last = layer.read();
            let _ = layer.write(&push);
            if on_disconnect == OnDisconnect::Stop {
                assert_eq!(last, Err(DeviceError::Lost));
                assert_eq!(layer.commanded(), Wrench::ZERO);
            } else if last.is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        if on_disconnect == OnDisconnect::Wait {
            assert!(last.is_ok(), "{last:?}");
        }
        assert_eq!(layer.counters().disconnected, 1);
    }
}

#[test]
fn an_unsolvable_sample_is_withheld_by_the_safety_layer() {
    let dir = tempfile::tempdir().unwrap();
    let out_of_reach = Status {
        encoders: [30_000; 3],
        ..centre_status()
    };
    let mut script = vec![Step::Answer(centre_status()); 30];
    script.extend(vec![Step::Answer(out_of_reach); 3000]);
    let mut layer = SafetyLayer::new(device(script, dir.path(), Arc::default()));
    let result = read_until(&mut layer, |r| *r == Err(DeviceError::SampleNotFinite));
    assert_eq!(result, Err(DeviceError::SampleNotFinite));
    assert_eq!(layer.counters().sample_not_finite, 1);
    assert!(layer.device_mut().counters().kinematics_failures >= 1);
    layer
        .write(&Wrench {
            force: Vector3::new(0.2, 0.0, 0.0),
            torque: Vector3::zeros(),
        })
        .unwrap();
    assert_eq!(layer.commanded(), Wrench::ZERO);
}

#[test]
fn shutdown_ramps_the_force_to_zero_through_the_safety_layer() {
    let dir = tempfile::tempdir().unwrap();
    let mut layer = SafetyLayer::new(device(vec![], dir.path(), Arc::default()));
    read_until(&mut layer, |r| r.is_ok()).unwrap();
    // Reads before the first reading tripped `Stale`; nothing may trip after.
    let before = layer.counters();
    let push = Wrench {
        force: Vector3::new(0.0, 0.0, 2.0),
        torque: Vector3::zeros(),
    };
    // One tick per new reading, so the layer never sees a repeated
    // timestamp however the machine schedules the threads. Soft start: a
    // small request first, then 0.5 s of ramp to full.
    let mut last = None;
    let mut ticks = 0;
    let start = Instant::now();
    while layer.commanded().force.z < 1.999 && start.elapsed() < Duration::from_secs(20) {
        let fresh = layer.device_mut().read().ok().map(|s| s.timestamp);
        if fresh.is_none() || fresh == last {
            std::thread::sleep(Duration::from_micros(100));
            continue;
        }
        last = fresh;
        layer.read().unwrap();
        layer
            .write(if ticks == 0 { &Wrench::ZERO } else { &push })
            .unwrap();
        ticks += 1;
    }
    assert!(
        (layer.commanded().force.z - 2.0).abs() < 1e-9,
        "{:?} after {ticks}",
        layer.commanded()
    );
    assert_eq!(layer.counters(), before);
    layer.shutdown();
    let mut ramp = Vec::new();
    for _ in 0..12 {
        layer.write(&push).unwrap();
        ramp.push(layer.commanded().force.z);
    }
    // 10 ticks from 2 N: 1.8, 1.6, …, 0.2, then zero for good.
    for (i, f) in ramp[..9].iter().enumerate() {
        assert!(
            (f - 2.0 * (1.0 - (i + 1) as f64 / 10.0)).abs() < 1e-9,
            "{ramp:?}"
        );
    }
    assert!(ramp[9..].iter().all(|&f| f == 0.0), "{ramp:?}");
}
