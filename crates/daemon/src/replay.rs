//! `hapticd replay`: a recorded trajectory through a scene, tick by tick
//! as fast as the machine goes, on one thread and deterministically: the
//! emulator advances one tick per read, the physics steps every
//! `servo rate / physics rate` ticks, and the recording leaves compute
//! times out, so equal inputs give byte-identical recordings.

use crate::device::{self, Pacing};
use crate::error::{io, RunError};
use crate::physics::PhysicsReport;
use crate::recording::{record_tick, recorded_tick};
use crate::scene::BuiltScene;
use crate::telemetry::PassivitySummary;
use haptic_devices::AtEnd;
use haptic_handoff::{Latest, TickStream};
use haptic_recording::{RecordedTick, TickFile};
use haptic_servo::{PhysicsSnapshot, TickFaults, ToolState, VerdictCounts};
use std::path::Path;
use std::time::Duration;

/// What a replay did.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayReport {
    pub ticks: u64,
    /// Largest force written to the device (N).
    pub max_force: f64,
    pub max_contacts: u32,
    pub faults: TickFaults,
    /// Ticks per friction verdict.
    pub verdicts: VerdictCounts,
    /// What the physics world did, and the movable objects at the end.
    pub physics: PhysicsReport,
    /// The passivity observer's lowest energies and the controller's work.
    pub passivity: PassivitySummary,
    /// The observer's energies at the end (J): force port, torque port.
    pub final_energy: [f64; 2],
}

/// A stretch of servo time in which the physics thread does not step, as
/// when it is preempted or a step takes too long.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PhysicsStall {
    /// Servo time at which it starts.
    pub start: Duration,
    pub length: Duration,
}

impl PhysicsStall {
    fn covers(&self, time: Duration) -> bool {
        time >= self.start && time < self.start + self.length
    }
}

/// What a replay does beyond the config.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReplayOptions {
    /// Stretches in which the physics does not step.
    pub physics_stalls: Vec<PhysicsStall>,
}

/// Replays `config`'s emulator device through its scene until the
/// trajectory ends, recording every tick to `out`.
pub fn replay(config: &haptic_config::Scene, out: &Path) -> Result<ReplayReport, RunError> {
    replay_with(config, out, &ReplayOptions::default())
}

/// [`replay`], with the physics stalled as `options` say.
pub fn replay_with(
    config: &haptic_config::Scene,
    out: &Path,
    options: &ReplayOptions,
) -> Result<ReplayReport, RunError> {
    let mut scene = BuiltScene::build(config)?;
    // Every tick exact, so that a replay is deterministic: the budget is
    // the servo's, against the wall clock.
    scene.cycle.set_time_budget(None);
    let rate = config.servo_rate();
    let period = rate.period();
    let safety = device::open(config, Pacing::Stepped { period }, AtEnd::Error)?;
    let mut world = std::mem::take(&mut scene.physics);
    let physics_every = (rate.hz() / config.threads().physics.rate_hz)
        .round()
        .max(1.0) as u64;
    let physics_dt = physics_every as f64 * period.as_secs_f64();

    let (tool_writer, mut tool_reader) =
        Latest::new(&ToolState::new(scene.environment.len())).split();
    let (mut physics_writer, physics_reader) =
        Latest::new(&PhysicsSnapshot::new(scene.environment_poses())).split();
    // Each tick's record comes back from `run`; the stream is not read.
    let (producer, _unread) = TickStream::new(1).split();
    let (mut tick, _, _) = scene.into_servo_tick(safety, physics_reader, tool_writer, producer);
    let mut file = TickFile::create(out).map_err(io(format!("creating {}", out.display())))?;
    let mut report = ReplayReport {
        ticks: 0,
        max_force: 0.0,
        max_contacts: 0,
        faults: TickFaults::default(),
        verdicts: VerdictCounts::default(),
        physics: PhysicsReport::default(),
        passivity: PassivitySummary::default(),
        final_energy: [0.0; 2],
    };
    let mut time = Duration::ZERO;
    let mut steps = 0;
    loop {
        let record = tick.run(time, Duration::ZERO);
        if tick.device_ended() {
            break;
        }
        // No compute times: equal inputs give equal bytes.
        let recorded = RecordedTick {
            cycle_time_ns: 0,
            ..recorded_tick(&record)
        };
        record_tick(&mut file, &record, &recorded)
            .map_err(io(format!("writing {}", out.display())))?;
        report.ticks += 1;
        report.max_contacts = report.max_contacts.max(record.contacts);
        let force = nalgebra::Vector3::from(record.force).norm();
        report.max_force = report.max_force.max(force);
        report.passivity.add(&record.passivity);
        report.final_energy = [record.passivity.energy, record.passivity.rotational_energy];
        let stalled = options.physics_stalls.iter().any(|s| s.covers(time));
        if report.ticks.is_multiple_of(physics_every) && !stalled {
            world.step(tool_reader.read(), physics_dt);
            world.publish(&mut physics_writer);
            steps += 1;
        }
        time += period;
    }
    report.faults = tick.faults();
    report.verdicts = tick.verdicts();
    report.physics = PhysicsReport {
        steps,
        ..world.report()
    };
    file.finish()
        .map_err(io(format!("finishing {}", out.display())))?;
    Ok(report)
}
