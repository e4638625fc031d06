//! One exchange with a running Falcon — a command packet out, status
//! packets in, kinematics on the newest — and the bring-up that gets the
//! firmware running first.

use crate::error::FalconError;
use crate::error::TransportError;
use crate::frame;
use crate::ftdi::{self, Firmware, FtdiTransport, STATUS_BYTES, USB_PACKET};
use crate::kinematics::{self, LegAngles};
use crate::packet::{led, Command, PacketCounters, PacketStream, Status, ALL_HOMED, PACKET_LEN};
use nalgebra::{Point3, Vector3};
use std::time::Duration;

/// How long an exchange waits for the device's answer. At 1.5 Mbaud and a
/// 1 ms latency timer the answer takes about 1 ms.
pub const EXCHANGE_TIMEOUT: Duration = Duration::from_millis(3);
/// Cut-off of the first-order low-pass on the finite-difference velocity
/// (Hz): one encoder tick at the grip is about 0.07 mm, so an unfiltered
/// difference at 1 kHz is quantised to 7 cm/s; 50 Hz keeps a hand's motion
/// (below 10 Hz) and smooths the steps.
pub const VELOCITY_CUTOFF_HZ: f64 = 50.0;
/// Exchanges tried when probing for running firmware.
pub const PROBE_EXCHANGES: usize = 200;

/// What the link needs to know of its configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSettings {
    /// Home the encoders before reporting positions: the firmware's homing
    /// mode is on, and the LED red, until all three motors are homed.
    pub homing_on_start: bool,
    /// The device frame's origin in the Falcon frame (m).
    pub centre: Point3<f64>,
}

/// The newest reading of the link, in the device frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reading {
    /// When its packet arrived, since the device was opened.
    pub timestamp: Duration,
    /// Grip position (m); NaN when the kinematics could not solve the
    /// encoder values.
    pub position: Point3<f64>,
    /// Filtered finite-difference velocity (m/s).
    pub velocity: Vector3<f64>,
    /// Grip buttons, bit `i` for button `i`.
    pub buttons: u32,
    /// Raw encoder ticks.
    pub encoders: [i16; 3],
}

/// Counts of the link's life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkCounters {
    /// Status packets by outcome.
    pub packets: PacketCounters,
    /// Exchanges whose answer did not arrive within [`EXCHANGE_TIMEOUT`].
    pub timeouts: u64,
    /// Encoder values the forward kinematics could not solve.
    pub kinematics_failures: u64,
    /// Forces not rendered because the legs were at a singular configuration.
    pub singular: u64,
    /// Times the device was lost.
    pub disconnections: u64,
}

/// A running Falcon: the transport and everything kept between exchanges.
/// An exchange allocates nothing.
pub struct Link<T: FtdiTransport> {
    usb: T,
    settings: LinkSettings,
    stream: PacketStream,
    packet: [u8; USB_PACKET],
    /// Newest solved position (Falcon frame) and its legs: the next forward
    /// kinematics starts there and forces are mapped there.
    position: Point3<f64>,
    legs: Option<[LegAngles; 3]>,
    homed: u8,
    reading: Option<Reading>,
    counters: LinkCounters,
}

impl<T: FtdiTransport> Link<T> {
    /// Brings `usb` up: resets the FT232 and enters normal mode; if no
    /// firmware answers, uploads `firmware` and probes again.
    pub fn bring_up(
        mut usb: T,
        firmware: &Firmware,
        settings: LinkSettings,
    ) -> Result<Link<T>, FalconError> {
        ftdi::reset(&mut usb)?;
        ftdi::normal_mode(&mut usb)?;
        let mut link = Link::new(usb, settings);
        if link.probe()? {
            return Ok(link);
        }
        ftdi::firmware_mode(&mut link.usb)?;
        ftdi::upload(&mut link.usb, firmware)?;
        if link.probe()? {
            Ok(link)
        } else {
            Err(FalconError::NoFirmwareResponse {
                path: firmware.path.clone(),
            })
        }
    }

    fn new(usb: T, settings: LinkSettings) -> Self {
        Self {
            usb,
            position: settings.centre,
            settings,
            stream: PacketStream::new(),
            packet: [0; USB_PACKET],
            legs: None,
            homed: 0,
            reading: None,
            counters: LinkCounters::default(),
        }
    }

    /// Whether running firmware answers a zero command within
    /// [`PROBE_EXCHANGES`] exchanges.
    fn probe(&mut self) -> Result<bool, FalconError> {
        let before = self.stream.counters().accepted;
        for _ in 0..PROBE_EXCHANGES {
            match self.exchange(&Vector3::zeros(), Duration::ZERO) {
                Ok(()) | Err(TransportError::Timeout) => {}
                Err(error) => {
                    return Err(FalconError::Usb {
                        step: "probing for the firmware",
                        error,
                    })
                }
            }
            if self.stream.counters().accepted > before {
                self.reading = None;
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The transport (for the scripted device's log in tests).
    pub fn transport(&self) -> &T {
        &self.usb
    }

    pub fn counters(&self) -> LinkCounters {
        LinkCounters {
            packets: self.stream.counters(),
            ..self.counters
        }
    }

    /// Whether positions are valid: all motors homed, or homing not asked for.
    pub fn ready(&self) -> bool {
        !self.settings.homing_on_start || self.homed == ALL_HOMED
    }

    /// The newest reading, once a status packet has arrived.
    pub fn reading(&self) -> Option<&Reading> {
        self.reading.as_ref()
    }

    /// The command for `force` (N, device frame) at the newest legs: motor
    /// efforts by [`kinematics::arm_torques`], zero before the first solved
    /// position and until homed; LEDs red while homing, green after.
    pub fn command(&mut self, force: &Vector3<f64>) -> Command {
        let ready = self.ready();
        let efforts = match (&self.legs, ready) {
            (Some(legs), true) => {
                match kinematics::arm_torques(legs, &frame::vector_to_falcon(force)) {
                    Some(torques) if torques.iter().all(|t| t.is_finite()) => {
                        kinematics::efforts(&torques)
                    }
                    _ => {
                        self.counters.singular += 1;
                        [0; 3]
                    }
                }
            }
            _ => [0; 3],
        };
        Command {
            efforts,
            leds: if ready { led::GREEN } else { led::RED },
            homing: !ready,
        }
    }

    /// One exchange at time `now` (since opening): writes the command for
    /// `force` and reads one bulk packet of answers, updating the reading
    /// from the newest status in it. [`TransportError::Timeout`] when no
    /// answer came in time (counted; the next exchange carries on).
    pub fn exchange(&mut self, force: &Vector3<f64>, now: Duration) -> Result<(), TransportError> {
        let command = self.command(force).encode();
        let result = self
            .usb
            .bulk_out(&command, EXCHANGE_TIMEOUT)
            .and_then(|()| self.receive(now));
        if result == Err(TransportError::Disconnected) {
            self.counters.disconnections += 1;
            self.stream.clear();
        }
        result
    }

    fn receive(&mut self, now: Duration) -> Result<(), TransportError> {
        let len = match self.usb.bulk_in(&mut self.packet, EXCHANGE_TIMEOUT) {
            Err(TransportError::Timeout) => {
                self.counters.timeouts += 1;
                return Err(TransportError::Timeout);
            }
            other => other?,
        };
        let mut newest: Option<Status> = None;
        let payload = &self.packet[STATUS_BYTES.min(len)..len.min(USB_PACKET)];
        self.stream.feed(payload, |status| newest = Some(status));
        if let Some(status) = newest {
            self.update(&status, now);
        }
        Ok(())
    }

    /// Forward kinematics and the velocity filter for a new status.
    fn update(&mut self, status: &Status, now: Duration) {
        self.homed = status.homed;
        let theta = Vector3::from(status.encoders.map(kinematics::theta_from_encoder));
        let (position, velocity) = match kinematics::forward(&theta, &self.position) {
            Some(solution) => {
                self.position = solution.position;
                self.legs = Some(solution.legs);
                let position = frame::position_to_device(&solution.position, &self.settings.centre);
                let velocity = match &self.reading {
                    Some(last)
                        if now > last.timestamp
                            && last.position.coords.iter().all(|x| x.is_finite()) =>
                    {
                        let dt = (now - last.timestamp).as_secs_f64();
                        let raw = (position - last.position) / dt;
                        let tau = 1.0 / (2.0 * std::f64::consts::PI * VELOCITY_CUTOFF_HZ);
                        last.velocity + (raw - last.velocity) * (dt / (dt + tau))
                    }
                    Some(last) if now == last.timestamp => last.velocity,
                    _ => Vector3::zeros(),
                };
                (position, velocity)
            }
            None => {
                self.counters.kinematics_failures += 1;
                self.position = self.settings.centre;
                self.legs = None;
                (Point3::new(f64::NAN, f64::NAN, f64::NAN), Vector3::zeros())
            }
        };
        self.reading = Some(Reading {
            timestamp: now,
            position,
            velocity,
            buttons: u32::from(status.buttons),
            encoders: status.encoders,
        });
    }

    /// Writes zero efforts, best effort (closing, or after a fault).
    pub fn zero(&mut self) {
        let command = Command {
            efforts: [0; 3],
            leds: 0,
            homing: false,
        };
        let _ = self.usb.bulk_out(&command.encode(), EXCHANGE_TIMEOUT);
    }

    /// Replaces a lost transport with a reopened one, keeping the counters.
    pub fn replace(&mut self, other: Link<T>) {
        let counters = self.counters;
        let packets = self.stream.counters();
        *self = other;
        self.counters.timeouts += counters.timeouts;
        self.counters.kinematics_failures += counters.kinematics_failures;
        self.counters.singular += counters.singular;
        self.counters.disconnections += counters.disconnections;
        self.stream.add_counters(&packets);
    }
}

const _: () = assert!(PACKET_LEN <= USB_PACKET - STATUS_BYTES);
