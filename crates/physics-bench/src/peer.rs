//! rapier on the same pile: a convex hull for a convex shape, V-HACD's
//! convex decomposition (parry's defaults) for the others, the bodies'
//! mass, centre of mass and inertia set to ours (not the decomposition's),
//! the same friction, no restitution, and `length_unit` at the bodies'
//! size as rapier's documentation asks, so that its allowed penetration and
//! prediction distance suit 5–9 cm bodies. Contact recycling, on by
//! default, may be turned off: it skips the contacts of pairs that moved
//! little, and resting bodies sink further with it.

use crate::engine::{Engine, Stepped};
use crate::scene::{Scene, FLOOR_HALF_EXTENTS, FRICTION, GRAVITY};
use nalgebra::{Isometry3, Quaternion, Translation3, UnitQuaternion};
use rapier3d_f64::math::{Pose3, Rot3, Vec3};
use rapier3d_f64::parry::mass_properties::MassProperties;
use rapier3d_f64::parry::math::Mat3;
use rapier3d_f64::parry::query;
use rapier3d_f64::prelude::{
    ColliderBuilder, PhysicsWorld, RigidBodyBuilder, RigidBodyHandle, SharedShape,
};

/// How a shape's collider was made.
pub struct PeerShape {
    pub shape: SharedShape,
    /// "convex hull" or "convex decomposition (N pieces)".
    pub kind: String,
}

/// A shape whose convex hull holds at most this much more volume than the
/// mesh is convex.
const CONVEX_VOLUME_RATIO: f64 = 1.01;

/// Colliders of the scene's shapes.
pub fn peer_shapes(scene: &Scene) -> Vec<PeerShape> {
    scene
        .shapes
        .iter()
        .map(|s| {
            let vertices: Vec<Vec3> = s
                .mesh
                .vertices
                .iter()
                .map(|v| Vec3::new(v.x, v.y, v.z))
                .collect();
            let hull = SharedShape::convex_hull(&vertices).expect("a closed mesh spans a volume");
            let hull_volume = hull.mass_properties(1.0).mass();
            if hull_volume <= CONVEX_VOLUME_RATIO * s.mass.volume {
                PeerShape {
                    shape: hull,
                    kind: "convex hull".to_string(),
                }
            } else {
                let shape = SharedShape::convex_decomposition(&vertices, &s.mesh.triangles);
                let pieces = shape.as_compound().map_or(1, |c| c.shapes().len());
                PeerShape {
                    shape,
                    kind: format!("convex decomposition ({pieces} pieces)"),
                }
            }
        })
        .collect()
}

/// rapier's world, the bodies in the scene's order.
pub struct Peer {
    world: PhysicsWorld,
    handles: Vec<RigidBodyHandle>,
}

/// The length unit rapier scales its tolerances by (m): the bodies' size.
pub const LENGTH_UNIT: f64 = 0.1;

fn pose(p: &Isometry3<f64>) -> Pose3 {
    let t = p.translation.vector;
    let q = p.rotation.quaternion();
    Pose3::from_parts(
        Vec3::new(t.x, t.y, t.z),
        Rot3::from_xyzw(q.i, q.j, q.k, q.w),
    )
}

impl Peer {
    /// rapier's world of `scene`; `recycling` keeps rapier's default
    /// contact recycling (contacts of pairs that moved less than 5 % of
    /// `length_unit` are not recomputed).
    pub fn new(scene: &Scene, shapes: &[PeerShape], recycling: bool) -> Peer {
        let mut world = PhysicsWorld::new();
        world.gravity = Vec3::new(0.0, 0.0, -GRAVITY);
        world.integration_parameters.length_unit = LENGTH_UNIT;
        world.integration_parameters.contact_recycling = recycling;
        let handles = scene
            .body_shapes
            .iter()
            .zip(&scene.initial_poses)
            .map(|(&s, p)| {
                let i = &scene.shapes[s].mass.inertia;
                let inertia = Mat3::from_cols_array(&[
                    i[(0, 0)],
                    i[(1, 0)],
                    i[(2, 0)],
                    i[(0, 1)],
                    i[(1, 1)],
                    i[(2, 1)],
                    i[(0, 2)],
                    i[(1, 2)],
                    i[(2, 2)],
                ]);
                let mass = MassProperties::with_inertia_matrix(
                    Vec3::ZERO,
                    scene.shapes[s].mass.mass,
                    inertia,
                );
                let body = RigidBodyBuilder::dynamic()
                    .pose(pose(p))
                    .additional_mass_properties(mass);
                let collider = ColliderBuilder::new(shapes[s].shape.clone())
                    .density(0.0)
                    .friction(FRICTION)
                    .restitution(0.0);
                world.insert(body, collider).0
            })
            .collect();
        let h = FLOOR_HALF_EXTENTS;
        world.insert(
            RigidBodyBuilder::fixed().translation(Vec3::new(0.0, 0.0, -h[2])),
            ColliderBuilder::cuboid(h[0], h[1], h[2])
                .friction(FRICTION)
                .restitution(0.0),
        );
        Peer { world, handles }
    }
}

impl Engine for Peer {
    fn step(&mut self, h: f64) {
        self.world.integration_parameters.dt = h;
        self.world.step();
    }

    fn observe(&mut self) -> Stepped {
        // The deepest penetration of rapier's own colliders, by parry's
        // exact query at the poses reached: the manifolds' depths may be up
        // to `contact_recycle_distance` stale, as rapier documents.
        let mut contacts = 0;
        let mut deepest: f64 = 0.0;
        for pair in self.world.narrow_phase.contact_pairs() {
            contacts += pair
                .solver_manifolds()
                .iter()
                .map(|m| m.data.solver_contacts.len())
                .sum::<usize>();
            let (c1, c2) = (
                &self.world.colliders[pair.collider1],
                &self.world.colliders[pair.collider2],
            );
            if let Ok(Some(contact)) =
                query::contact(c1.position(), c1.shape(), c2.position(), c2.shape(), 0.0)
            {
                deepest = deepest.max(-contact.dist);
            }
        }
        let failed = self.handles.iter().any(|&b| {
            let body = &self.world.bodies[b];
            !(body.position().is_finite() && body.linvel().is_finite() && body.angvel().is_finite())
        });
        Stepped {
            contacts,
            ruler_penetration: None,
            own_penetration: deepest,
            motion_between_detections: None,
            dynamics_per_detection: None,
            failed,
        }
    }

    fn poses(&self) -> Vec<Isometry3<f64>> {
        self.handles
            .iter()
            .map(|&b| {
                let p = self.world.bodies[b].position();
                let (t, q) = (p.translation, p.rotation);
                Isometry3::from_parts(
                    Translation3::new(t.x, t.y, t.z),
                    UnitQuaternion::new_normalize(Quaternion::new(q.w, q.x, q.y, q.z)),
                )
            })
            .collect()
    }

    fn kinetic_energy(&self) -> f64 {
        self.handles
            .iter()
            .map(|&b| self.world.bodies[b].kinetic_energy())
            .sum()
    }
}
