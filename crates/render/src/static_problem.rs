//! One servo cycle's static-friction problem (Zhao, Li & Barbič eqs 7–9, 27–37):
//! the wrench `f` = coupling + contacts, its stiffness `H`, `M̄` and the
//! friction contacts, assembled without allocating from the contact stage's
//! output (the update `q ← q + Δq` is [`haptic_core::displaced`]).

use haptic_contact::{total_stiffness, total_wrench, ContactScene, GradientModel, VirtualCoupling};
use haptic_core::Matrix6;
use haptic_friction::{FrictionContact, StaticFrictionProblem};
use nalgebra::{Isometry3, Matrix3, UnitQuaternion, Vector3};

/// Mass and inertia of the tool (eq 27's `M` and `I`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MassProperties {
    /// kg.
    pub mass: f64,
    /// Inertia about the reference point, in the object's frame (kg·m²).
    pub body_inertia: Matrix3<f64>,
}

impl MassProperties {
    /// `M̄ = diag(m I, R I_body Rᵀ)`.
    pub fn matrix(&self, rotation: &UnitQuaternion<f64>) -> Matrix6 {
        let r = rotation.to_rotation_matrix();
        let mut m = Matrix6::zeros();
        m.fixed_view_mut::<3, 3>(0, 0)
            .copy_from(&(Matrix3::identity() * self.mass));
        m.fixed_view_mut::<3, 3>(3, 3)
            .copy_from(&(r.matrix() * self.body_inertia * r.matrix().transpose()));
        m
    }
}

/// How a cycle's problem is assembled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StaticCoupling {
    pub coupling: VirtualCoupling,
    pub mass: MassProperties,
    /// The contact gradient in `H`.
    pub gradient: GradientModel,
}

impl StaticCoupling {
    /// An empty problem with room for every contact `scene` can report, so
    /// that [`assemble`](Self::assemble) never allocates, and friction
    /// pyramids of `pyramid_sides` (`ℓ ≥ 3`, eq 13), which it keeps.
    pub fn problem_for(&self, scene: &ContactScene, pyramid_sides: usize) -> StaticFrictionProblem {
        StaticFrictionProblem::with_capacity(scene.max_contacts(), pyramid_sides)
    }

    /// Fills `problem` from the contacts of the last `scene.evaluate` (the
    /// tool at `scene.pose()`) and the manipulandum's pose:
    /// `f = f_vc + Σ (F_i, τ_i)` (eq 9), `H = ∂f_vc/∂q + H_c` (eqs 2–3, 5–6),
    /// `M̄`, and one [`FrictionContact`] per penalty contact with its handle,
    /// normal, normal force `k_i |d_i|` and its environment object's `μ`.
    /// The paper's §4.1 removal of separating contacts is left to the
    /// friction stage, which has the frictionless prediction it needs.
    pub fn assemble(
        &self,
        scene: &ContactScene,
        manipulandum: &Isometry3<f64>,
        problem: &mut StaticFrictionProblem,
    ) {
        let simulation = scene.pose();
        let contacts = scene.contacts();
        problem.wrench = self.coupling.wrench(manipulandum, simulation) + total_wrench(contacts);
        problem.stiffness = self.coupling.stiffness(manipulandum, simulation)
            + total_stiffness(contacts, self.gradient);
        problem.mass = self.mass.matrix(&simulation.rotation);
        let environment = scene.environment();
        problem.contacts.clear();
        problem
            .contacts
            .extend(contacts.iter().map(|c| FrictionContact {
                handle: c.handle,
                normal: c.normal,
                normal_force: c.normal_force(),
                friction_coefficient: environment[c.environment as usize].friction_coefficient,
                slip: Vector3::zeros(),
            }));
    }
}
