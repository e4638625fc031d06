//! Our deformable world on the benchmark's scenes: the cloth as the Fig. 3
//! mass–spring cloth with inextensibility and bending rows, the jelly as a
//! co-rotational FEM body, the ball and the ground as fixed rigid bodies.

use crate::engine::{BodySize, Engine, Stages};
use crate::scene::{ClothScene, JellyScene};
use haptic_deformable::paradigms::{
    CorotationalFem, ForceIntegration, MassSpring, Paradigm, Spring,
};
use haptic_deformable::scenes::{fixed_ball, ground};
use haptic_deformable::topology::{self, Edge};
use haptic_deformable::{CoupledWorld, DeformableBody, DeformableMaterial, SolverParameters};
use haptic_physics::{RigidBody, World, WorldParameters};
use nalgebra::{Isometry3, Point3, Vector3};
use std::time::Instant;

/// A coupled world holding one deformable body.
pub struct Ours {
    world: CoupledWorld,
    elements: Vec<(&'static str, usize)>,
    rows: usize,
    /// Each step's time by stage.
    stages: Vec<Stages>,
}

fn rigid_world(bodies: Vec<RigidBody>) -> World {
    World::new(
        bodies,
        vec![],
        WorldParameters {
            gravity: Vector3::new(0.0, 0.0, -crate::scene::GRAVITY),
            ..WorldParameters::default()
        },
    )
    .expect("fixed bodies are valid")
}

impl Ours {
    /// The cloth: nodes of equal mass, structural edges inextensible,
    /// shear springs, bending rows over interior edges.
    /// With `self_collision`, the cloth's surface meets itself
    /// (`DeformableMaterial::self_collision`).
    pub fn cloth(
        scene: &ClothScene,
        parameters: SolverParameters,
        self_collision: bool,
    ) -> Result<Ours, String> {
        let n = scene.nodes_per_side;
        let positions = scene.initial_positions();
        // The generated sheet's node (column c, row r) is r n + c, the
        // scene's (i, j) is i n + j: the same grid, so its elements apply.
        let grid = topology::sheet(n, n, scene.side, scene.side, &Isometry3::identity());
        let rest = |a: u32, b: u32| (positions[b as usize] - positions[a as usize]).norm();
        let structural: Vec<Edge> = grid
            .structural
            .iter()
            .map(|e| Edge {
                rest_length: rest(e.a, e.b),
                ..*e
            })
            .collect();
        let springs = grid
            .shear
            .iter()
            .map(|e| Spring {
                a: e.a,
                b: e.b,
                rest_length: rest(e.a, e.b),
                stiffness: 1.0,
                damping: 0.0,
            })
            .collect();
        let masses = vec![scene.mass / (n * n) as f64; n * n];
        let material = DeformableMaterial {
            friction: scene.friction,
            thickness: 0.004,
            bending_limit: 0.02,
            self_collision,
            ..DeformableMaterial::default()
        };
        let body = DeformableBody::new(
            "cloth",
            positions,
            masses,
            grid.triangles.clone(),
            structural.clone(),
            material,
            Paradigm::MassSpring(MassSpring::new(
                springs,
                ForceIntegration::LinearlyImplicit {
                    max_iterations: 10,
                    tolerance: 1e-3,
                },
            )),
        )
        .map_err(|e| e.to_string())?;
        let hinges = body.model.hinges.len();
        let mut ball = fixed_ball(scene.ball_radius, 4, 1.0);
        ball.state.pose.translation.vector = scene.ball_centre().coords;
        ball.model.static_friction = 1.0;
        let world = CoupledWorld::new(
            rigid_world(vec![ball, ground(scene.ground_height(), scene.side, 1.0)]),
            vec![body],
            vec![],
            parameters,
        )
        .map_err(|e| e.to_string())?;
        Ok(Ours {
            world,
            elements: vec![
                ("inextensibility rows", structural.len()),
                ("bending rows", hinges),
                ("shear springs", grid.shear.len()),
            ],
            rows: 0,
            stages: Vec::new(),
        })
    }

    /// The jelly: co-rotational FEM on the scene's tetrahedra, linearly
    /// implicit, its boundary as its surface.
    pub fn jelly(scene: &JellyScene, parameters: SolverParameters) -> Result<Ours, String> {
        let mesh = scene.mesh();
        let fem = CorotationalFem::new(
            "jelly",
            &mesh.positions,
            &mesh.cells,
            scene.young_modulus,
            scene.poisson_ratio,
            ForceIntegration::default(),
        )
        .map_err(|e| e.to_string())?
        .with_damping(0.0, 0.01);
        let surface = topology::boundary(&mesh.cells, &mesh.positions);
        let body = DeformableBody::new(
            "jelly",
            mesh.positions.clone(),
            mesh.masses.clone(),
            surface.clone(),
            vec![],
            DeformableMaterial {
                friction: scene.friction,
                thickness: 0.001,
                ..DeformableMaterial::default()
            },
            Paradigm::CorotationalFem(fem),
        )
        .map_err(|e| e.to_string())?;
        let world = CoupledWorld::new(
            rigid_world(vec![ground(scene.ground_height(), 0.5, 1.0)]),
            vec![body],
            vec![],
            parameters,
        )
        .map_err(|e| e.to_string())?;
        Ok(Ours {
            world,
            elements: vec![
                ("tetrahedra", mesh.cells.len()),
                ("surface triangles", surface.len()),
            ],
            rows: 0,
            stages: Vec::new(),
        })
    }
}

impl Engine for Ours {
    fn step(&mut self, h: f64) {
        let started = Instant::now();
        let report = self.world.step(h);
        self.stages
            .push(Stages::of(&report, started.elapsed().as_secs_f64()));
        self.rows = self.rows.max(report.rows);
    }

    fn positions(&self, out: &mut Vec<Point3<f64>>) {
        out.clear();
        out.extend_from_slice(&self.world.bodies()[0].state.positions);
    }

    fn failed(&self) -> bool {
        self.world.quarantined() > 0
    }

    fn size(&self) -> BodySize {
        BodySize {
            nodes: self.world.bodies()[0].state.positions.len(),
            elements: self.elements.clone(),
            peak_constraints: Some(self.rows),
        }
    }

    fn stages(&self) -> Option<Stages> {
        Some(Stages::medians(&self.stages))
    }
}
