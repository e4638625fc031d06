//! Running an engine over a fixed physical time, and the stability test
//! applied to every step.
//!
//! A run at step `h` over `T` seconds is stable when, at every step,
//! (a) no energy is created: `KE(t) + U(t) ≤ KE(0) + U(0) + ε` with `U` the
//! gravitational potential of the centres of mass and `ε` 1 % of `U(0)`
//! (measured from the floor's top face), so kinetic energy never exceeds
//! the potential energy the pile has given up; (b) the engine's own deepest
//! contact penetration stays below the scene's bound (ours: the deepest
//! shell point in another body's distance field; rapier: parry's exact
//! query on its colliders); (c) no body was quarantined or became
//! non-finite; (d) no surface of a body that could touch another (its
//! bounds, grown by its motion, overlap another body's) moved more than the
//! scene's motion bound, half the mug wall, between two of the engine's
//! contact detections: a point crossing more than half a wall between two
//! detections comes out on the far side unseen, so a run that allows it
//! cannot show its penetration. rapier detects once a step; our world once
//! a substep, and reports how far such bodies moved in each. Both engines' poses are also
//! measured with one ruler, our shells in our fields, which for rapier adds
//! its colliders' departure from the meshes. A run may also be held to a
//! depth by that ruler ([`Criteria::ruler_penetration_bound`]), to compare
//! engines at equal penetration.

use crate::engine::Engine;
use crate::ruler::Ruler;
use crate::scene::Scene;
use crate::trace::Trace;
use std::time::Instant;

/// The outcome of the stability test.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Verdict {
    Stable,
    /// Energy exceeded the start's by `excess` J (beyond the tolerance) at `time`.
    EnergyCreated {
        time: f64,
        excess: f64,
    },
    /// Penetration reached `depth` m at `time`.
    Penetration {
        time: f64,
        depth: f64,
    },
    /// A body's surface moved `motion` m in the step ending at `time`.
    TooFast {
        time: f64,
        motion: f64,
    },
    /// A body was quarantined or became non-finite at `time`.
    Failed {
        time: f64,
    },
}

impl Verdict {
    pub fn is_stable(&self) -> bool {
        *self == Verdict::Stable
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verdict::Stable => write!(f, "stable"),
            Verdict::EnergyCreated { time, excess } => {
                write!(f, "energy created: +{excess:.3e} J at t = {time:.4} s")
            }
            Verdict::Penetration { time, depth } => {
                write!(f, "penetration {:.3} mm at t = {time:.4} s", depth * 1e3)
            }
            Verdict::Failed { time } => write!(f, "non-finite or quarantined at t = {time:.4} s"),
            Verdict::TooFast { time, motion } => write!(
                f,
                "a surface moved {:.3} mm in the step to t = {time:.4} s",
                motion * 1e3
            ),
        }
    }
}

/// The stability test's bounds.
#[derive(Clone, Copy, Debug)]
pub struct Criteria {
    /// m.
    pub penetration_bound: f64,
    /// J.
    pub energy_tolerance: f64,
    /// m.
    pub motion_bound: f64,
    /// A bound on the ruler's penetration as well (m), for a run asked to
    /// penetrate no deeper than another engine: the ruler then measures
    /// every step, bisection trials too.
    pub ruler_penetration_bound: Option<f64>,
}

impl Criteria {
    /// The scene's penetration bound and 1 % of its initial potential energy.
    pub fn of(scene: &Scene) -> Criteria {
        Criteria {
            penetration_bound: scene.penetration_bound,
            motion_bound: scene.motion_bound,
            energy_tolerance: 0.01 * scene.potential_energy(&scene.initial_poses),
            ruler_penetration_bound: None,
        }
    }
}

/// One run's figures.
#[derive(Clone, Debug)]
pub struct Run {
    /// s.
    pub step: f64,
    pub steps: usize,
    /// Sum of the steps' wall times (s).
    pub wall: f64,
    pub verdict: Verdict,
    /// Deepest penetration by the ruler over the run (m), if measured.
    pub max_penetration: Option<f64>,
    /// By the engine's own measure (m).
    pub max_own_penetration: f64,
    /// Ruler penetration at the end (m).
    pub final_penetration: f64,
    /// Largest `E(t) − E(0)` (J).
    pub max_energy_gain: f64,
    /// `E(T) − E(T_s)` over the last quarter of the run (J).
    pub settled_drift: f64,
    /// J.
    pub final_kinetic: f64,
    /// (contacts, step wall time in s) per step.
    pub samples: Vec<(usize, f64)>,
    /// (contacts, [`crate::engine::Stepped::dynamics_per_detection`]) per step, for the
    /// engines that measure it.
    pub dynamics_samples: Vec<(usize, f64)>,
}

impl Run {
    /// Wall time per simulated second.
    pub fn wall_per_second(&self) -> f64 {
        self.wall / (self.steps as f64 * self.step)
    }
}

/// How a run goes.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// s.
    pub step: f64,
    /// Simulated seconds.
    pub duration: f64,
    /// A bisection trial stops at its first violation and skips the ruler;
    /// a measured run goes to the end and applies the ruler at every step.
    pub trial: bool,
}

/// Runs `engine` as `plan` says from the scene's start; `trace` records
/// snapshots and series.
pub fn run(
    engine: &mut dyn Engine,
    scene: &Scene,
    ruler: &mut Ruler,
    criteria: &Criteria,
    plan: Plan,
    mut trace: Option<&mut Trace>,
) -> Run {
    let (h, stop_early) = (plan.step, plan.trial);
    let measure = !plan.trial || criteria.ruler_penetration_bound.is_some();
    let steps = (plan.duration / h).ceil() as usize;
    let settle_from = (steps * 3) / 4;
    let energy =
        |engine: &dyn Engine| engine.kinetic_energy() + scene.potential_energy(&engine.poses());
    let start = energy(engine);
    if let Some(t) = trace.as_deref_mut() {
        t.record(scene, 0.0, &engine.poses(), start, 0.0);
    }
    let mut result = Run {
        step: h,
        steps: 0,
        wall: 0.0,
        verdict: Verdict::Stable,
        max_penetration: None,
        max_own_penetration: 0.0,
        final_penetration: 0.0,
        max_energy_gain: f64::NEG_INFINITY,
        settled_drift: 0.0,
        final_kinetic: 0.0,
        samples: Vec::with_capacity(steps),
        dynamics_samples: Vec::new(),
    };
    let mut settled_energy = start;
    let mut previous = engine.poses();
    for k in 0..steps {
        let begun = Instant::now();
        engine.step(h);
        let elapsed = begun.elapsed().as_secs_f64();
        result.wall += elapsed;
        result.steps += 1;
        let time = (k + 1) as f64 * h;
        let stepped = engine.observe();
        result.samples.push((stepped.contacts, elapsed));
        if let Some(dynamics) = stepped.dynamics_per_detection {
            result.dynamics_samples.push((stepped.contacts, dynamics));
        }
        let poses = engine.poses();
        let measured = stepped
            .ruler_penetration
            .or_else(|| measure.then(|| ruler.penetration(&poses)));
        if let Some(depth) = measured {
            result.max_penetration = Some(result.max_penetration.unwrap_or(0.0).max(depth));
        }
        let penetration = stepped.own_penetration;
        let motion = stepped
            .motion_between_detections
            .unwrap_or_else(|| ruler.near_motion(scene, &previous, &poses));
        previous.clone_from(&poses);
        let e = engine.kinetic_energy() + scene.potential_energy(&poses);
        result.max_own_penetration = result.max_own_penetration.max(penetration);
        result.max_energy_gain = result.max_energy_gain.max(e - start);
        if k + 1 == settle_from {
            settled_energy = e;
        }
        if let Some(t) = trace.as_deref_mut() {
            t.record(scene, time, &poses, e, measured.unwrap_or(penetration));
        }
        if result.verdict.is_stable() {
            result.verdict = if stepped.failed || !e.is_finite() {
                Verdict::Failed { time }
            } else if e - start > criteria.energy_tolerance {
                Verdict::EnergyCreated {
                    time,
                    excess: e - start,
                }
            } else if penetration > criteria.penetration_bound {
                Verdict::Penetration {
                    time,
                    depth: penetration,
                }
            } else if let Some(depth) = measured.filter(|&d| {
                criteria
                    .ruler_penetration_bound
                    .is_some_and(|bound| d > bound)
            }) {
                Verdict::Penetration { time, depth }
            } else if motion > criteria.motion_bound {
                Verdict::TooFast { time, motion }
            } else {
                Verdict::Stable
            };
            if !result.verdict.is_stable() && stop_early {
                break;
            }
        }
        if k + 1 == steps {
            result.settled_drift = e - settled_energy;
            result.final_kinetic = engine.kinetic_energy();
            result.final_penetration = ruler.penetration(&poses);
        }
    }
    result
}

/// A bisection trial: `engine` run at `step` for `duration` simulated
/// seconds, stopping at the first violation, without the ruler or a trace.
pub fn trial(
    engine: &mut dyn Engine,
    scene: &Scene,
    ruler: &mut Ruler,
    criteria: &Criteria,
    step: f64,
    duration: f64,
) -> Run {
    run(
        engine,
        scene,
        ruler,
        criteria,
        Plan {
            step,
            duration,
            trial: true,
        },
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ours::Ours;
    use crate::peer::{peer_shapes, Peer};
    use crate::scene::{self, mesh_directory, Geometry, Mix, GRAVITY};
    use haptic_physics::GeometryResolution;

    /// Shells and fields coarse enough for a quick test.
    fn coarse_geometry() -> Geometry {
        Geometry {
            body: GeometryResolution {
                shell_points: 300,
                tree_levels: 3,
                field_resolution: 24,
            },
            floor: GeometryResolution {
                shell_points: 2000,
                tree_levels: 4,
                field_resolution: 24,
            },
        }
    }

    /// 20 steps of 1 ms of a mug, a cube and a torus in both engines: the
    /// lowest layer starts 1 cm above the floor, so every body is still in
    /// free fall and has dropped `g h² n(n+1)/2` (first-order integrators;
    /// rapier's substeps bring it towards `g t²/2`); both runs are stable.
    #[test]
    fn a_three_body_pile_falls_freely_in_both_engines() {
        let scene = Scene::pile(Mix::MugsCubesTori, 3, 2, &mesh_directory()).unwrap();
        let bodies = scene.bodies(&coarse_geometry());
        let criteria = Criteria::of(&scene);
        let mut ruler = Ruler::new(bodies.clone());
        let shapes = peer_shapes(&scene);
        let (h, n) = (1e-3, 20);
        let engines: [Box<dyn Engine>; 2] = [
            Box::new(Ours::from_bodies(
                bodies.clone(),
                scene.len(),
                scene::world_parameters(),
                None,
            )),
            Box::new(Peer::new(&scene, &shapes, false)),
        ];
        for mut engine in engines {
            let result = run(
                engine.as_mut(),
                &scene,
                &mut ruler,
                &criteria,
                Plan {
                    step: h,
                    duration: n as f64 * h,
                    trial: false,
                },
                None,
            );
            assert_eq!(result.steps, n);
            assert!(result.verdict.is_stable(), "{}", result.verdict);
            assert_eq!(result.max_penetration, Some(0.0));
            let first_order = GRAVITY * h * h * (n * (n + 1)) as f64 / 2.0;
            let exact = GRAVITY * (n as f64 * h).powi(2) / 2.0;
            for (start, end) in scene.initial_poses.iter().zip(engine.poses()) {
                let drop = start.translation.vector.z - end.translation.vector.z;
                assert!(
                    drop >= exact * (1.0 - 1e-9) && drop <= first_order * (1.0 + 1e-9),
                    "{drop} not in [{exact}, {first_order}]"
                );
                assert!(
                    (start.translation.vector.xy() - end.translation.vector.xy()).norm() < 1e-12
                );
            }
        }
    }

    /// A trial held to a depth by the ruler measures every step and fails
    /// once the ruler finds a body deeper; without the bound a trial skips
    /// the ruler.
    #[test]
    fn a_ruler_bound_holds_a_trial_to_that_depth() {
        let scene = Scene::pile(Mix::MugsCubesTori, 3, 2, &mesh_directory()).unwrap();
        let mut ruler = Ruler::new(scene.bodies(&coarse_geometry()));
        let shapes = peer_shapes(&scene);
        let criteria = Criteria::of(&scene);
        let mut rapier_trial = |criteria: &Criteria| {
            let mut rapier = Peer::new(&scene, &shapes, true);
            trial(&mut rapier, &scene, &mut ruler, criteria, 1e-3, 0.3)
        };
        let free = rapier_trial(&criteria);
        assert!(free.verdict.is_stable(), "{}", free.verdict);
        assert_eq!(free.max_penetration, None);
        let bound = 1e-5;
        let result = rapier_trial(&Criteria {
            ruler_penetration_bound: Some(bound),
            ..criteria
        });
        let Verdict::Penetration { depth, .. } = result.verdict else {
            panic!("{}", result.verdict);
        };
        assert!(depth > bound && result.max_penetration == Some(depth));
        assert!(result.steps < 300, "the trial went on after the bound");
    }
}
