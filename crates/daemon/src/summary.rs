//! What a run did, printed when it ends and written as JSON on request.

use crate::physics::PhysicsReport;
use crate::signals::signal_name;
use crate::telemetry::TelemetryReport;
use haptic_render::FrictionVerdict;
use haptic_schema::NOT_RENDERED;
use haptic_servo::{LatencyHistogram, ServoStats, StageTimer, VerdictCounts};
use serde_json::{json, Value};
use std::fmt;
use std::io;
use std::time::Duration;

/// Why a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// A signal asked for a clean stop.
    Signal(i32),
    /// A second signal stopped the servo at once.
    Aborted(i32),
    /// The recorded trajectory ended.
    DeviceEnded,
    /// The device was lost and configured not to be waited for.
    DeviceLost,
    /// The requested duration passed.
    Duration,
    /// The control API loaded another scene.
    SceneReplaced,
}

impl fmt::Display for EndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Signal(s) => write!(f, "{}", signal_name(*s)),
            Self::Aborted(s) => write!(f, "second signal ({})", signal_name(*s)),
            Self::DeviceEnded => write!(f, "end of recording"),
            Self::DeviceLost => write!(f, "device lost"),
            Self::Duration => write!(f, "duration reached"),
            Self::SceneReplaced => write!(f, "scene replaced"),
        }
    }
}

/// A run's figures.
#[derive(Clone, Debug)]
pub struct RunSummary {
    pub reason: EndReason,
    pub rate_hz: f64,
    pub servo: ServoStats,
    /// `None` after an abort, which leaves the other threads unjoined.
    pub telemetry: Option<TelemetryReport>,
    pub physics: Option<PhysicsReport>,
    /// Why the recording could not be finished, if it could not.
    pub recording_error: Option<String>,
}

impl RunSummary {
    /// After a full stop; `telemetry` failed only if the recording could
    /// not be finished.
    pub fn new(
        reason: EndReason,
        rate_hz: f64,
        servo: ServoStats,
        telemetry: io::Result<TelemetryReport>,
        physics: PhysicsReport,
    ) -> Self {
        let (telemetry, recording_error) = match telemetry {
            Ok(report) => (Some(report), None),
            Err(error) => (None, Some(error.to_string())),
        };
        Self {
            reason,
            rate_hz,
            servo,
            telemetry,
            physics: Some(physics),
            recording_error,
        }
    }

    /// After a second signal, or a signal before the threads started: the
    /// servo's figures only.
    pub fn servo_only(reason: EndReason, rate_hz: f64, servo: ServoStats) -> Self {
        Self {
            reason,
            rate_hz,
            servo,
            telemetry: None,
            physics: None,
            recording_error: None,
        }
    }

    /// Exit code of the process: 0 after a clean stop, 128 + the signal
    /// after an abort (the shell's convention), 1 if the recording failed
    /// or the device was lost.
    pub fn exit_code(&self) -> u8 {
        match self.reason {
            EndReason::Aborted(signal) => (128 + signal).clamp(0, 255) as u8,
            EndReason::DeviceLost => 1,
            _ if self.recording_error.is_some() => 1,
            _ => 0,
        }
    }

    /// Ticks that woke a whole period or more after their deadline: the
    /// misses of a loop that does no work (cyclictest's definition). The
    /// rest of `deadline_misses` ran late while computing.
    pub fn late_wakeups(&self) -> u64 {
        let period_ns = (1e9 / self.rate_hz).round() as u64;
        let latency = self.servo.latency.histogram();
        latency.count_between(period_ns, latency.max().max(period_ns))
    }

    /// The summary as JSON; times in µs, forces in N.
    pub fn to_json(&self) -> Value {
        let s = &self.servo;
        let safety = &s.safety;
        let faults = &s.faults;
        let mut value = json!({
            "reason": self.reason.to_string(),
            "ticks": s.ticks,
            "rate_hz": self.rate_hz,
            "elapsed_s": s.elapsed.as_secs_f64(),
            "realtime": s.realtime,
            "deadline_misses": s.overruns,
            "skipped_deadlines": s.skipped,
            "late_wakeups": self.late_wakeups(),
            "wake_latency_us": histogram_json(&s.latency),
            "tick_time_us": histogram_json(&s.tick_time),
            "stages_us": stages_json(s),
            "telemetry_dropped": s.telemetry_dropped,
            "faults": {
                "read": faults.read, "render": faults.render, "write": faults.write,
                "solver_failed": faults.solver_failed, "quarantined": faults.quarantined,
            },
            "band_decisions": {
                "static_in_band": s.verdicts.get(FrictionVerdict::StaticInBand),
                "sliding_in_band": s.verdicts.get(FrictionVerdict::SlidingInBand),
            },
            "budget_cuts": {
                "collision": s.budget_cuts.collision,
                "friction": s.budget_cuts.friction,
                "mean_unresolved_points": s.budget_cuts.mean_unresolved_points(),
                "max_unresolved_points": s.budget_cuts.max_unresolved_points,
            },
            "safety_trips": {
                "stale": safety.stale, "sample_not_finite": safety.sample_not_finite,
                "request_not_finite": safety.request_not_finite, "overrun": safety.overrun,
                "disconnected": safety.disconnected, "device_error": safety.device_error,
                "shutdown": safety.shutdown,
            },
        });
        if let Some(error) = &self.recording_error {
            value["recording_error"] = json!(error);
        }
        if let Some(t) = &self.telemetry {
            value["states"] = json!({
                "free": t.states.free, "sliding": t.states.sliding,
                "static": t.states.r#static, "not_rendered": t.states.not_rendered,
            });
            value["verdicts"] = verdicts_json(&t.verdicts);
            value["max_contacts"] = json!(t.max_contacts);
            value["max_force_n"] = json!(t.max_force);
            value["max_torque_n_m"] = json!(t.max_torque);
            value["max_rendered_force_n"] = json!(t.max_rendered_force);
            value["max_rendered_torque_n_m"] = json!(t.max_rendered_torque);
            value["telemetry_send_failures"] = json!(t.send_failures);
            let p = &t.passivity;
            let last = t.last.map(|r| r.passivity).unwrap_or_default();
            value["passivity"] = json!({
                "energy_j": last.energy, "rotational_energy_j": last.rotational_energy,
                "lowest_total_energy_j": p.lowest_total_energy,
                "lowest_energy_j": p.lowest_energy,
                "lowest_rotational_energy_j": p.lowest_rotational_energy,
                "damped_ticks": p.damped_ticks,
                "max_damping_n_s_per_m": p.max_damping,
                "max_rotational_damping_n_m_s_per_rad": p.max_rotational_damping,
            });
            if let Some((ticks, path)) = &t.recorded {
                value["recorded_ticks"] = json!(ticks);
                value["record_file"] = json!(path.display().to_string());
            }
        }
        if let Some(p) = &self.physics {
            value["physics_steps"] = json!(p.steps);
            value["physics_overruns"] = json!(p.overruns);
            value["physics_quarantined"] = json!(p.quarantined);
            value["physics_deformables"] = json!(p.deformables);
            value["physics_deformables_quarantined"] = json!(p.deformables_quarantined);
            value["physics_max_contacts"] = json!(p.max_contacts);
            value["physics_max_penetration_m"] = json!(p.max_penetration);
            value["movable"] = p
                .bodies
                .iter()
                .map(|b| {
                    let q = b.pose.rotation.quaternion();
                    json!({
                        "name": b.name,
                        "position_m": b.pose.translation.vector.as_slice(),
                        "orientation_wijk": [q.w, q.i, q.j, q.k],
                        "velocity_m_s": b.velocity.as_slice(),
                    })
                })
                .collect();
        }
        value
    }
}

/// Ticks per verdict by name, and `not_rendered`.
fn verdicts_json(counts: &VerdictCounts) -> Value {
    let mut map: serde_json::Map<String, Value> = FrictionVerdict::ALL
        .iter()
        .map(|&v| (v.name().to_owned(), json!(counts.get(v))))
        .collect();
    map.insert(NOT_RENDERED.to_owned(), json!(counts.not_rendered));
    map.into()
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn histogram_json(h: &LatencyHistogram) -> Value {
    json!({
        "min": us(h.min()), "mean": us(h.mean()), "p50": us(h.quantile(0.5)),
        "p90": us(h.quantile(0.9)), "p99": us(h.quantile(0.99)),
        "p999": us(h.quantile(0.999)), "max": us(h.max()),
    })
}

fn stage_mean_us(timer: &StageTimer, ticks: u64) -> f64 {
    timer.total_ns as f64 / ticks.max(1) as f64 / 1e3
}

/// Mean and largest time of each stage (µs).
fn stages_json(s: &ServoStats) -> Value {
    s.stages
        .stages
        .iter()
        .map(|(stage, timer)| {
            let value =
                json!({ "mean": stage_mean_us(timer, s.ticks), "max": timer.max_ns as f64 / 1e3 });
            (stage.name().to_owned(), value)
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

impl fmt::Display for RunSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.servo;
        let quantiles = |h: &LatencyHistogram| {
            format!(
                "p50 {:.1} µs, p99 {:.1} µs, p99.9 {:.1} µs, max {:.1} µs",
                us(h.quantile(0.5)),
                us(h.quantile(0.99)),
                us(h.quantile(0.999)),
                us(h.max())
            )
        };
        writeln!(
            f,
            "stopped after {:.3} s: {}",
            s.elapsed.as_secs_f64(),
            self.reason
        )?;
        writeln!(
            f,
            "servo: {} ticks at {} Hz, {}; {} deadline misses, {} of them late wake-ups ({} deadlines skipped)",
            s.ticks,
            self.rate_hz,
            if s.realtime {
                "SCHED_FIFO"
            } else {
                "normal priority"
            },
            s.overruns,
            self.late_wakeups(),
            s.skipped
        )?;
        writeln!(f, "wake-up latency: {}", quantiles(&s.latency))?;
        writeln!(f, "tick time: {}", quantiles(&s.tick_time))?;
        let means: Vec<String> = s
            .stages
            .stages
            .iter()
            .map(|(stage, timer)| format!("{} {:.1}", stage.name(), stage_mean_us(timer, s.ticks)))
            .collect();
        writeln!(f, "stage means (µs): {}", means.join(", "))?;
        let trips = s.safety.total() - s.safety.shutdown;
        writeln!(
            f,
            "safety trips: {trips} (besides shutdown); faults: read {}, render {}, write {}, solver failed {}, quarantined {}",
            s.faults.read, s.faults.render, s.faults.write, s.faults.solver_failed, s.faults.quarantined
        )?;
        writeln!(
            f,
            "friction decided in the solver's band: static {}, sliding {}",
            s.verdicts.get(FrictionVerdict::StaticInBand),
            s.verdicts.get(FrictionVerdict::SlidingInBand)
        )?;
        let cuts = &s.budget_cuts;
        writeln!(
            f,
            "rendering budget cut: collision in {} ticks ({:.0} shell points unresolved on average, {} at most), friction in {} ticks",
            cuts.collision,
            cuts.mean_unresolved_points(),
            cuts.max_unresolved_points,
            cuts.friction
        )?;
        if let Some(error) = &self.recording_error {
            writeln!(f, "recording failed: {error}")?;
        }
        if let Some(t) = &self.telemetry {
            let seen = t.received;
            writeln!(
                f,
                "contact: max {} contacts; free {:.1} %, sliding {:.1} %, static {:.1} %",
                t.max_contacts,
                percent(t.states.free, seen),
                percent(t.states.sliding, seen),
                percent(t.states.r#static, seen)
            )?;
            let verdicts: Vec<String> = FrictionVerdict::ALL
                .iter()
                .map(|&v| format!("{} {}", v.name(), t.verdicts.get(v)))
                .collect();
            writeln!(
                f,
                "verdicts (ticks): {}, not rendered {}",
                verdicts.join(", "),
                t.verdicts.not_rendered
            )?;
            writeln!(
                f,
                "output: max force {:.3} N, max torque {:.4} N·m (rendered {:.3} N, {:.4} N·m); telemetry dropped {}",
                t.max_force, t.max_torque, t.max_rendered_force, t.max_rendered_torque, s.telemetry_dropped
            )?;
            if let Some((ticks, path)) = &t.recorded {
                writeln!(f, "recorded {ticks} ticks to {}", path.display())?;
            }
        }
        if let Some(p) = &self.physics {
            if !p.bodies.is_empty() || p.deformables > 0 {
                writeln!(
                    f,
                    "physics: {} steps, {} overruns, {} quarantined bodies, up to {} contacts, deepest {:.3} mm",
                    p.steps,
                    p.overruns,
                    p.quarantined,
                    p.max_contacts,
                    p.max_penetration * 1e3
                )?;
            }
            if p.deformables > 0 {
                writeln!(
                    f,
                    "deformables: {}, {} quarantined (steps put back: non-finite or too fast)",
                    p.deformables, p.deformables_quarantined
                )?;
            }
            for body in &p.bodies {
                let x = body.pose.translation.vector;
                writeln!(
                    f,
                    "movable `{}` ended at ({:.4}, {:.4}, {:.4}) m",
                    body.name, x.x, x.y, x.z
                )?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use haptic_render::BudgetCut;
    use haptic_servo::TickRecord;

    /// A physics world with deformables reports them and their quarantines
    /// in both forms, beside the rigid bodies'.
    #[test]
    fn deformable_quarantines_reach_the_summary() {
        let physics = PhysicsReport {
            steps: 250,
            quarantined: 1,
            deformables: 2,
            deformables_quarantined: 3,
            ..PhysicsReport::default()
        };
        let summary = RunSummary::new(
            EndReason::DeviceEnded,
            1000.0,
            ServoStats::default(),
            Ok(TelemetryReport::default()),
            physics,
        );
        let json = summary.to_json();
        assert_eq!(json["physics_quarantined"], 1);
        assert_eq!(json["physics_deformables"], 2);
        assert_eq!(json["physics_deformables_quarantined"], 3);
        let text = summary.to_string();
        for part in [
            "physics: 250 steps, 0 overruns, 1 quarantined bodies",
            "deformables: 2, 3 quarantined",
        ] {
            assert!(text.contains(part), "{part:?} not in\n{text}");
        }
    }

    /// Records with band decisions, solver failures and quarantined poses,
    /// fed through the servo's counting and the telemetry's, come out in
    /// both forms of the summary.
    #[test]
    fn verdicts_and_friction_faults_reach_the_summary() {
        use FrictionVerdict::*;
        let verdicts = [
            (Free, 3, false),
            (Sliding, 5, false),
            (Static, 7, false),
            (StaticInBand, 4, false),
            (SlidingInBand, 2, true),
            (SolverFailed, 6, false),
            (Static, 1, true),
        ];
        let mut records = Vec::new();
        for (verdict, ticks, quarantined) in verdicts {
            for _ in 0..ticks {
                records.push(TickRecord {
                    tick: records.len() as u64,
                    verdict: Some(verdict),
                    quarantined,
                    ..TickRecord::default()
                });
            }
        }
        records.push(TickRecord::default());
        let mut servo = ServoStats::default();
        let mut telemetry = TelemetryReport::default();
        for record in &records {
            if let Some(verdict) = record.verdict {
                servo.faults.count_cycle(verdict, record.quarantined);
            }
            // Every third tick cut: collision on the odd ones, friction on
            // the even ones.
            let cut = BudgetCut {
                unresolved_points: if record.tick % 3 == 0 && record.tick % 2 == 1 {
                    record.tick as u32
                } else {
                    0
                },
                friction_out_of_time: record.tick % 3 == 0 && record.tick % 2 == 0,
            };
            servo.budget_cuts.add(&cut);
            servo.verdicts.add(record.verdict);
            servo.ticks += 1;
            telemetry.add(record);
        }
        let summary = RunSummary {
            reason: EndReason::DeviceEnded,
            rate_hz: 1000.0,
            servo,
            telemetry: Some(telemetry),
            physics: None,
            recording_error: None,
        };

        let json = summary.to_json();
        assert_eq!(json["faults"]["solver_failed"], 6);
        assert_eq!(json["faults"]["quarantined"], 3);
        assert_eq!(json["band_decisions"]["static_in_band"], 4);
        assert_eq!(json["band_decisions"]["sliding_in_band"], 2);
        // Ticks 3, 9, …, 27 cut collision; 0, 6, …, 24 and the last
        // record's (tick 0) friction.
        assert_eq!(json["budget_cuts"]["collision"], 5);
        assert_eq!(json["budget_cuts"]["friction"], 6);
        assert_eq!(json["budget_cuts"]["max_unresolved_points"], 27);
        assert_eq!(json["budget_cuts"]["mean_unresolved_points"], 15.0);
        assert!(
            summary
                .to_string()
                .contains("collision in 5 ticks (15 shell points unresolved on average, 27 at most), friction in 6 ticks"),
            "{summary}"
        );
        let expected = [
            ("free", 3),
            ("sliding", 5),
            ("static", 8),
            ("static_in_band", 4),
            ("sliding_in_band", 2),
            ("solver_failed", 6),
            ("not_rendered", 1),
        ];
        for (name, count) in expected {
            assert_eq!(json["verdicts"][name], count, "{name}: {json}");
        }
        // The states fold the verdicts: in-band static is static, in-band
        // sliding and failed solves slide.
        assert_eq!(json["states"]["static"], 12);
        assert_eq!(json["states"]["sliding"], 13);

        let text = summary.to_string();
        for part in [
            "solver failed 6, quarantined 3",
            "friction decided in the solver's band: static 4, sliding 2",
            "free 3, sliding 5, static 8, static_in_band 4, sliding_in_band 2, solver_failed 6, not rendered 1",
        ] {
            assert!(text.contains(part), "{part:?} not in\n{text}");
        }
    }
}
