//! The experiments, one a module, and what they share: their size, the
//! mixed pile, and the lines that print their parameters and trials.

pub mod pile;
pub mod stable_step;
pub mod versus_rapier;

use crate::bisection::Search;
use crate::cli::Tuning;
use crate::ruler::Rulers;
use crate::run::{Criteria, Run};
use crate::scene::{self, mesh_directory, Geometry, Mix, Scene};
use haptic_physics::{RigidBody, WorldParameters};

/// A benchmark's size.
pub struct Size {
    pub bodies: usize,
    pub columns: usize,
    /// Simulated seconds per run.
    pub duration: f64,
    /// Relative width the bisection stops at.
    pub resolution: f64,
    /// Measured runs of each engine at its step, interleaved.
    pub rounds: usize,
}

/// Our world on an experiment's scene: its bodies at the tuned geometry,
/// the rulers, its parameters and the stability test's bounds.
pub struct OurSetup {
    pub bodies: Vec<RigidBody>,
    pub rulers: Rulers,
    pub parameters: WorldParameters,
    pub criteria: Criteria,
}

/// Our world on `scene` with `tuning`, for an experiment of `size`, its
/// parameters printed.
pub fn set_up_ours(scene: &Scene, size: &Size, tuning: &Tuning) -> Result<OurSetup, String> {
    let setup = tuning.apply()?;
    let bodies = scene.bodies(&setup.0);
    let rulers = Rulers::of(scene, &setup.0, &bodies);
    let criteria = Criteria::of(scene);
    print_parameters(scene, &setup, &criteria, size);
    Ok(OurSetup {
        bodies,
        rulers,
        parameters: setup.1,
        criteria,
    })
}

pub fn print_parameters(
    scene: &Scene,
    (geometry, parameters): &(Geometry, WorldParameters),
    criteria: &Criteria,
    size: &Size,
) {
    let c = &parameters.contact;
    println!(
        "contact: k = {:.3e} N/m and c = {} N·s/m per finest shell point ({:?} damping), friction anchors k_f = {:.3e} N/m, μ = {}; \
         our steps split beyond {} mm of travel of a body near another, points within {} mm kept between traversals",
        c.stiffness,
        c.damping,
        c.damping_mode,
        c.friction_stiffness,
        scene::FRICTION,
        parameters.max_travel * 1e3,
        c.detection_margin * 1e3
    );
    let (b, f) = (&geometry.body, &geometry.floor);
    println!(
        "geometry: bodies {} shell points in {} levels, field {} nodes along the longest side; floor {} points, {} levels, {} nodes",
        b.shell_points, b.tree_levels, b.field_resolution, f.shell_points, f.tree_levels, f.field_resolution
    );
    for shape in &scene.shapes {
        let e = shape.mesh.aabb().extents();
        println!(
            "shape {}: {:.1} × {:.1} × {:.1} mm, {:.1} g, {} triangles",
            shape.name,
            e.x * 1e3,
            e.y * 1e3,
            e.z * 1e3,
            shape.mass.mass * 1e3,
            shape.mesh.triangles.len()
        );
    }
    println!(
        "pile: {} bodies, {} per layer, dropped from rest; {} s simulated per run",
        scene.len(),
        size.columns * size.columns,
        size.duration
    );
    println!(
        "stable: at every step (a) KE + U ≤ E(0) + {:.3e} J (1 % of the initial potential energy above the floor: \
         no energy created), (b) the engine's own deepest contact penetration ≤ {:.3} mm ({}), \
         (c) no body quarantined or non-finite, (d) no surface of a body that could touch another moved more than \
         {:.2} mm between two of the engine's contact detections (half the mug wall: a point crossing more than half \
         a wall between detections comes out on the far side unseen; rapier detects once a step, our world once a \
         substep)",
        criteria.energy_tolerance,
        criteria.penetration_bound * 1e3,
        scene.penetration_bound_basis,
        criteria.motion_bound * 1e3
    );
}

pub fn log_trial(engine: &str) -> impl FnMut(&Run) + '_ {
    move |r: &Run| {
        println!(
            "  {engine} h = {:.4e} s: {} after {} steps ({:.2} s wall)",
            r.step, r.verdict, r.steps, r.wall
        );
    }
}

/// The pile of mugs, cubes and tori of `size`.
pub fn mixed_pile(size: &Size) -> Result<Scene, String> {
    Scene::pile(
        Mix::MugsCubesTori,
        size.bodies,
        size.columns,
        &mesh_directory(),
    )
}

pub fn print_search(name: &str, search: &Search) {
    match search.unstable {
        Some(u) => println!(
            "  {name}: largest stable step {:.4e} s (unstable at {:.4e} s), {} trials",
            search.step,
            u,
            search.trials.len()
        ),
        None => println!(
            "  {name}: stable up to the cap {:.4e} s, {} trials",
            search.step,
            search.trials.len()
        ),
    }
}
