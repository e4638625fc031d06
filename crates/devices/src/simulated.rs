//! A simulated device that plays a scripted [`Motion`] and records the
//! wrench it is commanded.

use crate::device::{DeviceCapabilities, DeviceError, DeviceSample, HapticDevice, Wrench};
use crate::motion::Motion;
use nalgebra::Vector3;
use std::time::{Duration, Instant};

/// Time source of a [`SimulatedDevice`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimulatedClock {
    /// Real time since the first read.
    Wall,
    /// Deterministic: the first read is at 0, each later read this much on.
    Stepped(Duration),
}

/// A device whose handle follows a [`Motion`]; after a motion that does
/// not repeat ends, it holds the last pose at rest.
#[derive(Clone, Debug)]
pub struct SimulatedDevice {
    motion: Motion,
    clock: SimulatedClock,
    /// Wall time of the first read.
    started: Option<Instant>,
    /// Time of the next read on a stepped clock.
    next: Duration,
    capabilities: DeviceCapabilities,
    buttons: u32,
    last_wrench: Wrench,
    writes: u64,
}

impl SimulatedDevice {
    /// A device with [`SimulatedDevice::default_capabilities`].
    pub fn new(motion: Motion, clock: SimulatedClock) -> Self {
        Self {
            motion,
            clock,
            started: None,
            next: Duration::ZERO,
            capabilities: Self::default_capabilities(),
            buttons: 0,
            last_wrench: Wrench::ZERO,
            writes: 0,
        }
    }

    /// Replaces the capabilities the device reports.
    pub fn with_capabilities(mut self, capabilities: DeviceCapabilities) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// A desk-top 6-DoF force-feedback device: 6-DoF in and out, ±0.1 m
    /// workspace, 8 N and 0.5 N·m (the peak range of common desk-top arms),
    /// 2 kN/m stable stiffness (a stiff but stable wall at 1 kHz) and a
    /// 1 kHz sample rate (the usual haptic servo rate).
    pub fn default_capabilities() -> DeviceCapabilities {
        DeviceCapabilities {
            name: "simulated".to_owned(),
            input_dof: 6,
            output_dof: 6,
            workspace_half_extents: Vector3::repeat(0.1),
            max_force: 8.0,
            max_torque: 0.5,
            max_stiffness: 2000.0,
            native_rate: 1000.0,
        }
    }

    /// Sets the buttons reported from the next read on (bit `i` = button `i`).
    pub fn set_buttons(&mut self, buttons: u32) {
        self.buttons = buttons;
    }

    /// The last wrench written, [`Wrench::ZERO`] before any write.
    pub fn last_wrench(&self) -> Wrench {
        self.last_wrench
    }

    /// How many wrenches have been written.
    pub fn write_count(&self) -> u64 {
        self.writes
    }

    /// The motion being played.
    pub fn motion(&self) -> &Motion {
        &self.motion
    }
}

impl HapticDevice for SimulatedDevice {
    fn capabilities(&self) -> &DeviceCapabilities {
        &self.capabilities
    }

    fn read(&mut self) -> Result<DeviceSample, DeviceError> {
        let timestamp = match self.clock {
            SimulatedClock::Wall => self.started.get_or_insert_with(Instant::now).elapsed(),
            SimulatedClock::Stepped(dt) => {
                let now = self.next;
                self.next += dt;
                now
            }
        };
        let state = self.motion.state_at(timestamp.as_secs_f64());
        Ok(DeviceSample {
            timestamp,
            position: state.position,
            orientation: state.orientation,
            buttons: self.buttons,
            linear_velocity: Some(state.linear_velocity),
            angular_velocity: Some(state.angular_velocity),
        })
    }

    fn write(&mut self, wrench: &Wrench) -> Result<(), DeviceError> {
        self.last_wrench = *wrench;
        self.writes += 1;
        Ok(())
    }
}
