//! `stable-step`: Xu, Zhao & Barbič's Fig. 11 experiment with mugs for
//! bowls: the largest stable step of the semi-implicit integrator and of
//! symplectic Euler on the same drop, found by bisection.

use super::{log_trial, print_search, set_up_ours, Size};
use crate::bisection::largest_stable_step;
use crate::cli::Tuning;
use crate::ours::Ours;
use crate::run::trial;
use crate::scene::{mesh_directory, Mix, Scene};
use haptic_physics::{Integrator, WorldParameters};

/// `--quick`: a smoke run.
const QUICK: Size = Size {
    bodies: 6,
    columns: 2,
    duration: 0.25,
    resolution: 0.5,
    rounds: 1,
};

/// The experiment's size.
const FULL: Size = Size {
    bodies: 20,
    columns: 3,
    duration: 1.0,
    resolution: 0.1,
    rounds: 1,
};

/// The drop of `QUICK` or `FULL` size with `tuning`: each integrator's
/// largest stable step, then the headline figures.
pub fn stable_step(quick: bool, tuning: &Tuning) -> Result<(), String> {
    let size = if quick { QUICK } else { FULL };
    let scene = Scene::pile(Mix::Mugs, size.bodies, size.columns, &mesh_directory())?;
    let ours = set_up_ours(&scene, &size, tuning)?;
    let mut ruler = ours.rulers.ruler();
    // One detection and one integrator step per step: the integrators'
    // own stability, without substeps.
    let parameters = WorldParameters {
        max_travel: 0.0,
        ..ours.parameters
    };
    let mut searches = Vec::new();
    for (integrator, name) in [
        (Integrator::SemiImplicit, "semi-implicit"),
        (Integrator::SymplecticEuler, "symplectic Euler"),
    ] {
        println!("{name}:");
        let search = largest_stable_step(
            |h| {
                let mut engine = Ours::from_bodies(
                    ours.bodies.clone(),
                    scene.len(),
                    WorldParameters {
                        integrator,
                        ..parameters
                    },
                    ours.rulers.ours(),
                );
                trial(
                    &mut engine,
                    &scene,
                    &mut ruler,
                    &ours.criteria,
                    h,
                    size.duration,
                )
            },
            1e-4,
            1e-2,
            size.resolution,
            log_trial(name),
        )?;
        print_search(name, &search);
        searches.push(search);
    }
    println!();
    println!("semi_implicit_max_stable_step: {:.4e} s", searches[0].step);
    println!(
        "symplectic_euler_max_stable_step: {:.4e} s",
        searches[1].step
    );
    println!(
        "stable_step_ratio: {:.2} x",
        searches[0].step / searches[1].step
    );
    Ok(())
}
