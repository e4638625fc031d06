//! One servo tick, from device sample to published record.
use haptic_devices::{DeviceSample, HapticDevice, SafetyLayer, Wrench};
use haptic_friction::FrictionState;
use haptic_handoff::{LatestReader, TickProducer};
use haptic_render::RenderingCycle;
use nalgebra::{Isometry3, Translation3, Vector3, Vector6};
use std::time::{Duration, Instant};

/// Maps the device handle into the scene: the handle's position is scaled
/// by `scale`, then the pose is placed by `offset`. The rendered wrench
/// goes back rotated into the device frame and, to keep the mapping
/// energy-consistent, its force multiplied by `scale`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorkspaceMapping {
    pub offset: Isometry3<f64>,
    pub scale: f64,
}

impl WorkspaceMapping {
    /// The manipulandum pose for the handle in `sample`.
    pub fn manipulandum(&self, sample: &DeviceSample) -> Isometry3<f64> {
        self.offset
            * Isometry3::from_parts(
                Translation3::from(sample.position.coords * self.scale),
                sample.orientation,
            )
    }

    /// A scene wrench `[F; τ]` on the manipulandum, in the device frame.
    pub fn to_device(&self, wrench: &Vector6<f64>) -> Wrench {
        let back = self.offset.rotation.inverse();
        Wrench {
            force: back * Vector3::new(wrench[0], wrench[1], wrench[2]) * self.scale,
            torque: back * Vector3::new(wrench[3], wrench[4], wrench[5]),
        }
    }
}

/// The physics thread's latest state as the servo sees it. Only its
/// sequence number is consumed so far; it is recorded per tick.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhysicsSnapshot {
    /// Incremented by the physics thread on every publish.
    pub sequence: u64,
}

/// [`TickRecord::state`]: no contact.
pub const STATE_FREE: u8 = 0;
/// [`TickRecord::state`]: in contact, sliding.
pub const STATE_SLIDING: u8 = 1;
/// [`TickRecord::state`]: in contact, held by static friction.
pub const STATE_STATIC: u8 = 2;
/// [`TickRecord::state`]: the device read failed; nothing was rendered.
pub const STATE_NOT_RENDERED: u8 = 255;

/// What one tick did, as published to telemetry. Timings in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TickRecord {
    /// Ticks before this one.
    pub tick: u64,
    /// Scheduled time of the tick since the servo started.
    pub time: Duration,
    pub contacts: u32,
    /// One of the `STATE_*` codes.
    pub state: u8,
    /// Sequence of the physics snapshot seen this tick.
    pub physics_sequence: u64,
    /// Force written to the device after the safety layer, device frame (N).
    pub force: [f64; 3],
    /// Torque written to the device after the safety layer, device frame (N·m).
    pub torque: [f64; 3],
    pub read_ns: u64,
    pub collision_ns: u64,
    pub assembly_ns: u64,
    pub friction_ns: u64,
    pub coupling_ns: u64,
    pub write_ns: u64,
}

/// Faults seen by the tick, each counted once per tick.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TickFaults {
    /// Device reads that failed (including non-finite samples).
    pub read: u64,
    /// Rendered wrenches that were not finite.
    pub render: u64,
    /// Device writes that failed.
    pub write: u64,
}

fn nanos(d: Duration) -> u64 {
    d.as_nanos() as u64
}

fn state_code(state: FrictionState) -> u8 {
    match state {
        FrictionState::Free => STATE_FREE,
        FrictionState::Sliding => STATE_SLIDING,
        FrictionState::Static => STATE_STATIC,
    }
}

/// Everything one servo tick needs; [`ServoTick::run`] is the tick.
pub struct ServoTick<D: HapticDevice> {
    device: SafetyLayer<D>,
    mapping: WorkspaceMapping,
    cycle: RenderingCycle,
    physics: LatestReader<PhysicsSnapshot>,
    telemetry: TickProducer<TickRecord>,
    ticks: u64,
    faults: TickFaults,
}

impl<D: HapticDevice> ServoTick<D> {
    pub fn new(
        device: SafetyLayer<D>,
        mapping: WorkspaceMapping,
        cycle: RenderingCycle,
        physics: LatestReader<PhysicsSnapshot>,
        telemetry: TickProducer<TickRecord>,
    ) -> Self {
        Self {
            device,
            mapping,
            cycle,
            physics,
            telemetry,
            ticks: 0,
            faults: TickFaults::default(),
        }
    }

    /// One tick scheduled at `time`: read the device, map the handle into
    /// the scene, take the latest physics snapshot, render, write the wrench
    /// through the safety layer and publish the record (dropped and counted
    /// when telemetry is full). A failed read writes zero. Never allocates
    /// and never panics on device faults.
    pub fn run(&mut self, time: Duration) -> TickRecord {
        let mut record = TickRecord {
            tick: self.ticks,
            time,
            state: STATE_NOT_RENDERED,
            ..TickRecord::default()
        };
        self.ticks += 1;

        let started = Instant::now();
        let sample = self.device.read();
        let read_done = Instant::now();
        record.read_ns = nanos(read_done - started);

        record.physics_sequence = self.physics.read().sequence;

        let request = match sample {
            Ok(sample) => {
                let manipulandum = self.mapping.manipulandum(&sample);
                let report = self.cycle.step(&manipulandum);
                record.contacts = report.contacts as u32;
                record.state = state_code(report.state);
                record.collision_ns = nanos(report.timings.collision);
                record.assembly_ns = nanos(report.timings.assembly);
                record.friction_ns = nanos(report.timings.friction);
                record.coupling_ns = nanos(report.timings.coupling);
                let wrench = self.mapping.to_device(&report.coupling_wrench);
                if !wrench.is_finite() {
                    // The safety layer trips and writes zero.
                    self.faults.render += 1;
                }
                wrench
            }
            Err(_) => {
                self.faults.read += 1;
                Wrench::ZERO
            }
        };
        let write_started = Instant::now();
        if self.device.write(&request).is_err() {
            self.faults.write += 1;
        }
        record.write_ns = nanos(write_started.elapsed());
        // What reached the device, after the safety layer's limits.
        let written = self.device.commanded();
        record.force = written.force.into();
        record.torque = written.torque.into();

        self.telemetry.push(record);
        record
    }

    /// The device behind its safety layer.
    pub fn safety(&self) -> &SafetyLayer<D> {
        &self.device
    }

    /// The device behind its safety layer, mutably (for overruns and shutdown).
    pub fn safety_mut(&mut self) -> &mut SafetyLayer<D> {
        &mut self.device
    }

    /// Ticks run so far.
    pub fn ticks(&self) -> u64 {
        self.ticks
    }

    /// Faults counted so far.
    pub fn faults(&self) -> TickFaults {
        self.faults
    }

    /// Records dropped because telemetry was full.
    pub fn telemetry_dropped(&self) -> u64 {
        self.telemetry.dropped()
    }
}
