//! The Falcon as a [`HapticDevice`]: an I/O thread runs the link; the servo
//! thread exchanges samples and forces with it through `haptic-handoff`'s
//! wait-free latest-value buffers, so `read` and `write` never touch USB,
//! never block and never allocate.

use crate::error::FalconError;
use crate::error::TransportError;
use crate::ftdi::{Firmware, FtdiTransport};
use crate::link::{Link, LinkCounters, LinkSettings, Reading};
use haptic_devices::{DeviceCapabilities, DeviceError, DeviceSample, HapticDevice, Wrench};
use haptic_handoff::{Latest, LatestReader, LatestWriter};
use nalgebra::{Point3, UnitQuaternion, Vector3};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A Falcon's configuration (`[device.falcon]`).
#[derive(Clone, Debug, PartialEq)]
pub struct FalconSettings {
    /// Novint's firmware image, supplied by the user.
    pub firmware: PathBuf,
    /// Which connected Falcon, in USB enumeration order.
    pub index: usize,
    /// Home the encoders before reporting positions.
    pub homing_on_start: bool,
    /// Upward force added to every rendered force, carrying the grip's
    /// weight (N).
    pub gravity_compensation_n: f64,
    /// The device frame's origin in the Falcon frame (m).
    pub centre_m: [f64; 3],
}

impl FalconSettings {
    /// Defaults for everything but the firmware: the first Falcon, homing on,
    /// no gravity compensation, libnifalcon's workspace centre.
    pub fn new(firmware: impl Into<PathBuf>) -> Self {
        Self {
            firmware: firmware.into(),
            index: 0,
            homing_on_start: true,
            gravity_compensation_n: 0.0,
            centre_m: crate::kinematics::WORKSPACE_CENTRE,
        }
    }

    fn link(&self) -> LinkSettings {
        LinkSettings {
            homing_on_start: self.homing_on_start,
            centre: Point3::from(self.centre_m),
        }
    }
}

/// What the Falcon can do: Novint's published figures (a 4-inch cube of
/// travel, more than 2 lb of force), 3 DoF in and out.
pub fn capabilities() -> DeviceCapabilities {
    DeviceCapabilities {
        name: "Novint Falcon".into(),
        input_dof: 3,
        output_dof: 3,
        // 4 in = 0.1016 m of travel per axis.
        workspace_half_extents: Vector3::repeat(0.0508),
        // 2 lbf.
        max_force: 8.9,
        max_torque: 0.0,
        // The 2 kN/m of a desk-top device of this size.
        max_stiffness: 2000.0,
        native_rate: 1000.0,
    }
}

/// A sample older than this reads as stale (20 exchanges at 1 kHz).
pub const STALE_AFTER: Duration = Duration::from_millis(20);
/// Between two attempts to reopen a lost Falcon.
pub const RECONNECT_INTERVAL: Duration = Duration::from_millis(500);
/// Consecutive failed exchanges (but timeouts) after which the link is
/// taken as lost and reopened.
pub const FAILURES_BEFORE_RECONNECT: u32 = 100;

/// Ticks over which gravity compensation returns after the rendered force
/// was zero (the safety layer's soft start is 0.5 s).
const GRAVITY_RAMP_TICKS: f64 = 500.0;

/// The link's state as the servo sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Shared {
    connected: bool,
    ready: bool,
    reading: Option<Reading>,
    counters: LinkCounters,
}

/// Reopens a Falcon: the transport of the configured device, or an error.
pub type Opener<T> = Box<dyn FnMut() -> Result<T, FalconError> + Send>;

/// A Novint Falcon driven through its open protocol.
pub struct FalconDevice {
    capabilities: DeviceCapabilities,
    samples: LatestReader<Shared>,
    forces: LatestWriter<Vector3<f64>>,
    opened: Instant,
    gravity: f64,
    gravity_weight: f64,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl FalconDevice {
    /// Opens the Falcon `settings` names over USB (see [`crate::usb`]),
    /// loading the firmware if it is not running, and starts its I/O thread.
    pub fn open(settings: &FalconSettings) -> Result<FalconDevice, FalconError> {
        let index = settings.index;
        Self::start(
            settings,
            Box::new(move || crate::usb::NusbTransport::open(index)),
        )
    }

    /// Opens through `opener` (called again to reconnect a lost device),
    /// loading the firmware if it is not running, and starts the I/O
    /// thread. The firmware file is read and checked first, whether or not
    /// it is needed, so a bad path is reported before any USB traffic.
    pub fn start<T: FtdiTransport + 'static>(
        settings: &FalconSettings,
        mut opener: Opener<T>,
    ) -> Result<FalconDevice, FalconError> {
        let firmware = Firmware::load(&settings.firmware)?;
        let link = Link::bring_up(opener()?, &firmware, settings.link())?;
        let opened = Instant::now();
        let initial = Shared {
            connected: true,
            ready: link.ready(),
            reading: None,
            counters: link.counters(),
        };
        let (samples_in, samples) = Latest::new(&initial).split();
        let (forces, forces_out) = Latest::new(&Vector3::zeros()).split();
        let stop = Arc::new(AtomicBool::new(false));
        let io = Io {
            link,
            firmware,
            settings: settings.link(),
            opener,
            samples: samples_in,
            forces: forces_out,
            opened,
            stop: stop.clone(),
        };
        let thread = std::thread::Builder::new()
            .name("falcon-io".into())
            .spawn(move || io.run())
            .map_err(|e| FalconError::Thread(e.to_string()))?;
        Ok(FalconDevice {
            capabilities: capabilities(),
            samples,
            forces,
            opened,
            gravity: settings.gravity_compensation_n,
            gravity_weight: 0.0,
            stop,
            thread: Some(thread),
        })
    }

    /// The link's counters as last published.
    pub fn counters(&mut self) -> LinkCounters {
        self.samples.read().counters
    }

    /// Whether positions are valid yet (homed, when homing was asked for).
    pub fn ready(&mut self) -> bool {
        self.samples.read().ready
    }
}

impl HapticDevice for FalconDevice {
    fn capabilities(&self) -> &DeviceCapabilities {
        &self.capabilities
    }

    /// The newest reading. `Disconnected` while the I/O thread has lost the
    /// device; `Stale` before the first reading, until homed, and when the
    /// newest is older than [`STALE_AFTER`]. A position the kinematics
    /// could not solve is NaN: a non-finite sample, which the safety layer
    /// withholds.
    fn read(&mut self) -> Result<DeviceSample, DeviceError> {
        let now = self.opened.elapsed();
        let shared = *self.samples.read();
        if !shared.connected {
            return Err(DeviceError::Disconnected);
        }
        let Some(reading) = shared.reading.filter(|_| shared.ready) else {
            return Err(DeviceError::Stale { age: now });
        };
        let age = now.saturating_sub(reading.timestamp);
        if age > STALE_AFTER {
            return Err(DeviceError::Stale { age });
        }
        Ok(DeviceSample {
            timestamp: reading.timestamp,
            position: reading.position,
            orientation: UnitQuaternion::identity(),
            buttons: reading.buttons,
            linear_velocity: Some(reading.velocity),
            angular_velocity: None,
        })
    }

    /// Hands the force (plus gravity compensation) to the I/O thread, which
    /// turns it into motor efforts at the newest leg angles; the torque is
    /// ignored (3 DoF out). Gravity compensation drops out with a zero
    /// force (a trip, a shutdown) and returns over 0.5 s after it.
    fn write(&mut self, wrench: &Wrench) -> Result<(), DeviceError> {
        if !wrench.force.iter().all(|f| f.is_finite()) {
            return Err(DeviceError::WrenchNotFinite);
        }
        self.gravity_weight = if wrench.force == Vector3::zeros() {
            0.0
        } else {
            (self.gravity_weight + 1.0 / GRAVITY_RAMP_TICKS).min(1.0)
        };
        let force = wrench.force + Vector3::z() * (self.gravity * self.gravity_weight);
        self.forces.publish(force);
        Ok(())
    }
}

impl Drop for FalconDevice {
    /// Stops the I/O thread, which writes zero efforts before it ends.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The I/O thread's state.
struct Io<T: FtdiTransport> {
    link: Link<T>,
    firmware: Firmware,
    settings: LinkSettings,
    opener: Opener<T>,
    samples: LatestWriter<Shared>,
    forces: LatestReader<Vector3<f64>>,
    opened: Instant,
    stop: Arc<AtomicBool>,
}

impl<T: FtdiTransport> Io<T> {
    /// Exchanges with the device as fast as it answers (its 1 ms latency
    /// timer paces it), publishing each new reading; reopens a lost device
    /// every [`RECONNECT_INTERVAL`]; writes zero efforts when told to stop.
    fn run(mut self) {
        let mut failures = 0u32;
        while !self.stop.load(Ordering::Acquire) {
            let force = *self.forces.read();
            match self.link.exchange(&force, self.opened.elapsed()) {
                Ok(()) => {
                    failures = 0;
                    self.publish(true);
                }
                Err(TransportError::Timeout) => {}
                Err(TransportError::Disconnected) => self.reconnect(),
                Err(TransportError::Failed(_)) => {
                    failures += 1;
                    if failures >= FAILURES_BEFORE_RECONNECT {
                        failures = 0;
                        self.reconnect();
                    }
                }
            }
        }
        self.link.zero();
    }

    fn publish(&mut self, connected: bool) {
        let (ready, reading, counters) = (
            self.link.ready(),
            self.link.reading().copied(),
            self.link.counters(),
        );
        self.samples.publish_with(|shared| {
            *shared = Shared {
                connected,
                ready,
                reading,
                counters,
            }
        });
    }

    /// Publishes the loss, then reopens until the device is back or the
    /// thread is told to stop.
    fn reconnect(&mut self) {
        self.publish(false);
        while !self.stop.load(Ordering::Acquire) {
            std::thread::sleep(RECONNECT_INTERVAL);
            let reopened = (self.opener)()
                .and_then(|usb| Link::bring_up(usb, &self.firmware, self.settings.clone()));
            if let Ok(link) = reopened {
                self.link.replace(link);
                return;
            }
        }
    }
}
