//! rapier's soft bodies on the scenes: the cloth from rapier's own cloth
//! builder (structural, shear and bending edges, the particles' contact
//! skin half the grid spacing), the jelly from the scene's tetrahedra with
//! rapier's corotational cells at the scene's Young's modulus and Poisson's
//! ratio; the ball and the ground are fixed rigid colliders with the
//! scene's friction. rapier's world runs single-threaded (its `parallel`
//! feature is off).
//!
//! rapier solves every soft element as a soft constraint of a natural
//! frequency and a damping ratio ([`SoftBodyMaterial`]), Gauss–Seidel once
//! per substep; a step has `IntegrationParameters::num_solver_iterations`
//! substeps (plus the up to `soft_bodies.max_extra_substeps` rapier adds by
//! itself while a soft body is hit fast). [`RapierSoftSettings`] turns
//! those knobs.

use crate::engine::{BodySize, Engine};
use crate::scene::{ClothScene, JellyScene, GRAVITY};
use nalgebra::Point3;
use rapier3d_f64::math::Vector;
use rapier3d_f64::prelude::{
    ColliderBuilder, IntegrationParameters, PhysicsWorld, RigidBodyBuilder, SoftBodyBuilder,
    SoftBodyCellModel, SoftBodyEdgeKind, SoftBodyHandle, SoftBodyMaterial,
    SoftBodyParticleSettings, SpringCoefficients,
};
use thiserror::Error;

/// A setting rapier cannot run.
#[derive(Debug, Error, PartialEq)]
pub enum SettingsError {
    #[error("substeps = {0}: at least 1")]
    Substeps(usize),
    #[error("{field} = {value}: must be finite and positive")]
    Softness { field: &'static str, value: f64 },
}

/// rapier's body does not hold the scene's nodes.
#[derive(Debug, Error, PartialEq)]
pub enum BuildError {
    #[error("rapier's cloth builder made {rapier} particles, the scene has {scene} nodes")]
    NodeCount { rapier: usize, scene: usize },
    #[error("rapier's cloth builder put particle {node} at {rapier:?}, the scene's node is at {scene:?}")]
    NodeOrder {
        node: usize,
        rapier: [f64; 3],
        scene: [f64; 3],
    },
}

/// The knobs of rapier's soft bodies this benchmark turns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RapierSoftSettings {
    /// Solver substeps per step (`IntegrationParameters::num_solver_iterations`).
    pub substeps: usize,
    /// The cloth's structural and shear edges (`SoftBodyMaterial::edge_softness`).
    pub edge_softness: SpringCoefficients<f64>,
    /// The cloth's bending edges (`SoftBodyMaterial::bend_softness`).
    pub bend_softness: SpringCoefficients<f64>,
    /// Whether the body may fall asleep at rest, after which its steps cost
    /// nothing (`SoftBodyParticleSettings::can_sleep`).
    pub can_sleep: bool,
    /// Whether the body's surface collides with itself
    /// (`SoftBodyBuilder::self_contacts`; off by default).
    pub self_contacts: bool,
}

impl Default for RapierSoftSettings {
    /// rapier's own defaults: 4 substeps, edges at 30 Hz and bending at
    /// 10 Hz, both critically damped, sleeping allowed.
    fn default() -> Self {
        let material = SoftBodyMaterial::default();
        RapierSoftSettings {
            substeps: IntegrationParameters::default().num_solver_iterations,
            edge_softness: material.edge_softness,
            bend_softness: material.bend_softness,
            can_sleep: SoftBodyParticleSettings::default().can_sleep,
            self_contacts: false,
        }
    }
}

impl RapierSoftSettings {
    /// rapier's defaults with `substeps` substeps and the edges' natural
    /// frequency, the knob rapier documents as their stiffness, `edge_factor`
    /// times its default (a spring's stiffness goes as the square of its
    /// frequency at a given mass).
    pub fn scaled(substeps: usize, edge_factor: f64) -> RapierSoftSettings {
        let mut settings = RapierSoftSettings {
            substeps,
            ..RapierSoftSettings::default()
        };
        settings.edge_softness.natural_frequency *= edge_factor;
        settings
    }

    /// Checks the settings.
    pub fn validated(self) -> Result<RapierSoftSettings, SettingsError> {
        if self.substeps == 0 {
            return Err(SettingsError::Substeps(self.substeps));
        }
        for (field, value) in [
            (
                "edge natural frequency (Hz)",
                self.edge_softness.natural_frequency,
            ),
            ("edge damping ratio", self.edge_softness.damping_ratio),
            (
                "bending natural frequency (Hz)",
                self.bend_softness.natural_frequency,
            ),
            ("bending damping ratio", self.bend_softness.damping_ratio),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Err(SettingsError::Softness { field, value });
            }
        }
        Ok(self)
    }

    /// These settings, the body never sleeping.
    pub fn awake(self) -> RapierSoftSettings {
        RapierSoftSettings {
            can_sleep: false,
            ..self
        }
    }

    /// One line naming the settings.
    pub fn describe(&self) -> String {
        format!(
            "{} substeps, edges {} Hz ζ = {}, bending {} Hz ζ = {}, sleeping {}, self-contacts {}",
            self.substeps,
            self.edge_softness.natural_frequency,
            self.edge_softness.damping_ratio,
            self.bend_softness.natural_frequency,
            self.bend_softness.damping_ratio,
            if self.can_sleep { "on" } else { "off" },
            if self.self_contacts { "on" } else { "off" }
        )
    }
}

fn vector(p: &Point3<f64>) -> Vector {
    Vector::new(p.x, p.y, p.z)
}

/// rapier's world holding one soft body.
pub struct RapierSoft {
    world: PhysicsWorld,
    body: SoftBodyHandle,
}

/// A world with gravity along `−z`, `substeps` substeps, and the ground:
/// a fixed box whose top face is the plane `z = ground`.
fn world_with_ground(substeps: usize, ground: f64, friction: f64) -> PhysicsWorld {
    let mut world = PhysicsWorld::new();
    world.gravity = Vector::new(0.0, 0.0, -GRAVITY);
    world.integration_parameters.num_solver_iterations = substeps;
    let half = Vector::new(2.0, 2.0, 0.1);
    world.insert(
        RigidBodyBuilder::fixed().translation(Vector::new(0.0, 0.0, ground - half.z)),
        ColliderBuilder::cuboid(half.x, half.y, half.z).friction(friction),
    );
    world
}

impl RapierSoft {
    /// The cloth scene: rapier's cloth builder over the scene's grid, the
    /// scene's mass, and the softness and substeps of `settings`; an error
    /// unless its particles are the scene's nodes in the scene's order.
    pub fn cloth(
        scene: &ClothScene,
        settings: &RapierSoftSettings,
    ) -> Result<RapierSoft, BuildError> {
        let mut world = world_with_ground(settings.substeps, scene.ground_height(), scene.friction);
        let c = scene.ball_centre();
        world.insert(
            RigidBodyBuilder::fixed().translation(vector(&c)),
            ColliderBuilder::ball(scene.ball_radius).friction(scene.friction),
        );
        let (origin, du, dv) = scene.grid();
        let n = scene.nodes_per_side;
        let material = SoftBodyMaterial {
            edge_softness: settings.edge_softness,
            bend_softness: settings.bend_softness,
            ..SoftBodyMaterial::default()
        };
        let builder = SoftBodyBuilder::cloth(
            vector(&origin),
            Vector::new(du.x, du.y, du.z),
            Vector::new(dv.x, dv.y, dv.z),
            n,
            n,
        )
        .mass(scene.mass)
        .material(material)
        .self_contacts(settings.self_contacts)
        .particle_settings(SoftBodyParticleSettings {
            can_sleep: settings.can_sleep,
            ..SoftBodyParticleSettings::default()
        })
        .surface_collider(
            ColliderBuilder::ball(0.5 * scene.spacing())
                .density(0.0)
                .friction(scene.friction),
        );
        let body = world.insert_soft_body(builder);
        let rapier = RapierSoft { world, body };
        let mut x = Vec::new();
        rapier.positions(&mut x);
        let expected = scene.initial_positions();
        if x.len() != expected.len() {
            return Err(BuildError::NodeCount {
                rapier: x.len(),
                scene: expected.len(),
            });
        }
        let tolerance = 1e-9 * scene.side;
        if let Some(node) = (0..x.len()).find(|&i| (x[i] - expected[i]).norm() > tolerance) {
            return Err(BuildError::NodeOrder {
                node,
                rapier: x[node].coords.into(),
                scene: expected[node].coords.into(),
            });
        }
        Ok(rapier)
    }

    /// The jelly scene: the scene's tetrahedra and lumped masses as
    /// rapier's corotational cells (no edges: rapier adds none to
    /// corotational cells) at the scene's Young's modulus and Poisson's
    /// ratio, with `settings`' substeps and sleeping.
    pub fn jelly(scene: &JellyScene, settings: &RapierSoftSettings) -> RapierSoft {
        let mut world = world_with_ground(settings.substeps, scene.ground_height(), scene.friction);
        let mesh = scene.mesh();
        let material = SoftBodyMaterial {
            young_modulus: scene.young_modulus,
            poisson_ratio: scene.poisson_ratio,
            ..SoftBodyMaterial::default()
        };
        let spacing = scene.radius / scene.rings as f64;
        let builder = SoftBodyBuilder::new(mesh.positions.iter().map(vector).collect())
            .masses(mesh.masses)
            .cells(mesh.cells)
            .cell_model(SoftBodyCellModel::Corotational)
            .material(material)
            .particle_settings(SoftBodyParticleSettings {
                can_sleep: settings.can_sleep,
                ..SoftBodyParticleSettings::default()
            })
            .particle_radius(0.5 * spacing.min(scene.height / (scene.layers - 1) as f64))
            .surface_collider(
                ColliderBuilder::ball(0.01)
                    .density(0.0)
                    .friction(scene.friction),
            );
        let body = world.insert_soft_body(builder);
        RapierSoft { world, body }
    }
}

impl Engine for RapierSoft {
    fn step(&mut self, h: f64) {
        self.world.integration_parameters.dt = h;
        self.world.step();
    }

    fn positions(&self, out: &mut Vec<Point3<f64>>) {
        out.clear();
        out.extend(
            self.world.soft_bodies[self.body]
                .particle_positions()
                .map(|p| Point3::new(p.x, p.y, p.z)),
        );
    }

    fn failed(&self) -> bool {
        let body = &self.world.soft_bodies[self.body];
        !body.is_enabled() || !self.world.quarantine().soft_bodies().is_empty()
    }

    fn size(&self) -> BodySize {
        let body = &self.world.soft_bodies[self.body];
        let edges = |kind| body.edges().iter().filter(|e| e.kind == kind).count();
        let mut elements = vec![
            (
                "structural and shear edges",
                edges(SoftBodyEdgeKind::Structural),
            ),
            ("bending edges", edges(SoftBodyEdgeKind::Bend)),
            ("dihedrals", body.dihedrals().len()),
            ("tetrahedra", body.cells().len()),
        ];
        elements.retain(|&(_, count)| count > 0);
        BodySize {
            peak_constraints: None,
            nodes: body.num_particles(),
            elements,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{run_cloth, run_jelly};

    /// A 9 × 9 cloth, its node order the scene's.
    fn coarse_cloth() -> ClothScene {
        ClothScene {
            nodes_per_side: 9,
            ..ClothScene::default()
        }
    }

    #[test]
    fn rapiers_cloth_has_the_scenes_nodes_in_the_scenes_order() {
        let scene = coarse_cloth();
        let rapier = RapierSoft::cloth(&scene, &RapierSoftSettings::default()).unwrap();
        let mut x = Vec::new();
        rapier.positions(&mut x);
        let expected = scene.initial_positions();
        assert_eq!(x.len(), expected.len());
        for (a, b) in x.iter().zip(&expected) {
            assert!((a - b).norm() < 1e-12, "{a} against {b}");
        }
        let size = rapier.size();
        // Rows and columns, then both diagonals of each of the 64 squares.
        assert_eq!(
            size.elements[0],
            ("structural and shear edges", 2 * 9 * 8 + 2 * 64)
        );
        assert_eq!(size.elements[1], ("bending edges", 2 * 9 * 7));
    }

    #[test]
    fn a_coarse_cloth_falls_onto_the_ball_and_is_held_there() {
        let scene = coarse_cloth();
        let mut rapier = RapierSoft::cloth(&scene, &RapierSoftSettings::default()).unwrap();
        // 0.4 s: the cloth falls 0.1 m in 0.14 s and lands on the ball.
        let run = run_cloth(&mut rapier, &scene, 0.02, 0.4).unwrap();
        assert_eq!(run.timing.steps(), 20);
        assert_eq!(run.timing.failed_at, None);
        // Held by the ball: no node deeper in it than half the contact
        // skin (half the spacing), the centre node resting on the ball's top
        // within a spacing (the skin).
        assert!(
            run.ball_penetration.peak < 0.5 * scene.spacing(),
            "{:?}",
            run.ball_penetration
        );
        let mut x = Vec::new();
        rapier.positions(&mut x);
        let middle = x[scene.node(4, 4) as usize];
        assert!(middle.z > 2.0 * scene.ball_radius, "{middle}");
        assert!(
            middle.z < 2.0 * scene.ball_radius + scene.spacing(),
            "{middle}"
        );
        // Draped: the edges over the ball are measured and stretched.
        let over = run.strain_over_ball.expect("edges over the ball");
        assert!(over.peak > 0.0 && over.peak < 1.0, "{over:?}");
        assert!(run.strain.peak >= over.peak);
        assert!(run.ground_penetration.peak < 0.0);
    }

    #[test]
    fn stiffer_edges_with_more_substeps_stretch_the_cloth_less() {
        let scene = coarse_cloth();
        let soft = run_cloth(
            &mut RapierSoft::cloth(&scene, &RapierSoftSettings::default()).unwrap(),
            &scene,
            0.02,
            0.6,
        )
        .unwrap();
        let stiff = run_cloth(
            &mut RapierSoft::cloth(&scene, &RapierSoftSettings::scaled(16, 10.0)).unwrap(),
            &scene,
            0.02,
            0.6,
        )
        .unwrap();
        assert!(
            stiff.strain.peak < soft.strain.peak,
            "{stiff:?} against {soft:?}"
        );
    }

    #[test]
    fn a_coarse_jelly_lands_on_the_ground_and_keeps_its_volume() {
        let scene = JellyScene {
            rings: 2,
            layers: 4,
            ..JellyScene::default()
        };
        let mut rapier = RapierSoft::jelly(&scene, &RapierSoftSettings::default());
        let run = run_jelly(&mut rapier, &scene, 0.02, 1.0).unwrap();
        assert_eq!(run.timing.failed_at, None);
        assert!(
            run.ground_penetration.last < 0.01,
            "{:?}",
            run.ground_penetration
        );
        assert!(
            run.final_mean_height < 0.5 * scene.height + 0.01,
            "{}",
            run.final_mean_height
        );
        assert!(
            run.volume_change.last.abs() < 0.1,
            "{:?}",
            run.volume_change
        );
        assert_eq!(run.timing.size.nodes, 4 * 19);
    }

    #[test]
    fn bad_settings_are_named() {
        assert_eq!(
            RapierSoftSettings::scaled(0, 1.0).validated(),
            Err(SettingsError::Substeps(0))
        );
        assert!(matches!(
            RapierSoftSettings::scaled(4, -1.0).validated(),
            Err(SettingsError::Softness {
                field: "edge natural frequency (Hz)",
                ..
            })
        ));
    }
}
