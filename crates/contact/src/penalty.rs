//! Penalty normal contact (Zhao, Li & Barbič eq 1) on the tool, in the two
//! roles of Xu, Zhao & Barbič §4.1.
//!
//! Every quantity is in the world frame. `x` and `R` are the tool's
//! translation and rotation (its frame's origin is the reference point of
//! torques), `P` the contact point, `r = P − x` the torque handle.
//!
//! | | role A: [`Role::MovingShell`] | role B: [`Role::MovingField`] |
//! |---|---|---|
//! | point shell on | the tool (`p`, `n` in its frame) | an environment object (fixed in the world) |
//! | `P` | `x + R p` | the environment point |
//! | `d` | environment field at `P` | moving field at `Rᵀ(P − x)` |
//! | `N` (force direction on the tool) | `∇φ_env/‖∇φ_env‖` at `P`, or eq 1's `−R n` ([`ForceDirection`]) | the environment normal `n_e` |
//! | `∂d/∂x` | `∇φ_env(P)` | `−R ∇φ_moving` |
//!
//! Shell normals `n` are outward. In role A, `R n` points out of the moving
//! object into the environment it penetrates, so eq 1 has the environment
//! push the tool along `N = −R n`; a tool tilted by `θ` then feels normal
//! forces tilted by `θ`. Along the environment field's gradient instead,
//! `N` is the surface's normal whatever the tilt, and moves with `P` by
//! `∂N/∂P = (I − NNᵀ) ∇²φ_env / ‖∇φ_env‖`. Where the gradient is shorter
//! than [`MIN_GRADIENT_NORM`] (where the field blends two surfaces' normals)
//! the contact falls back to eq 1's direction. In role B, the environment point sits
//! inside the tool; the force on the environment point is
//! `k d n_e` (along `−n_e`, into the environment) and its reaction on the
//! tool, applied at `P`, is `F = −k d n_e`, out of the environment.
//! Either way `F = −k d N` with `d < 0` pushes the tool out of the
//! environment, and `τ = r × F` (eq 1).

use haptic_core::Vector6;
use haptic_sdf::DistanceField;
use nalgebra::{Isometry3, Matrix3, Point3, Rotation3, Vector3};

pub use haptic_schema::rendering::ForceDirection;

/// The shortest field gradient a contact takes its force's direction from
/// ([`ForceDirection::FieldGradient`]). A distance field's is 1; its
/// trilinear interpolant's is shorter only in cells that blend two
/// surfaces' normals, on a medial surface or across a concave edge (0.71
/// midway between two perpendicular walls). The gradient turns there within
/// a cell, and the tool's own normal is the better direction
/// (`haptic-render`'s `corner_creep.rs`).
pub const MIN_GRADIENT_NORM: f64 = 0.9;

/// Which of the two objects carries the point shell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// Role A: the tool's point shell against an environment field.
    /// The contact point, its normal and its handle move with the object.
    MovingShell,
    /// Role B: an environment point shell against the tool's field.
    /// The contact point and its normal stay put; the handle `P − x` changes
    /// with `x`.
    MovingField,
}

/// One penalty contact on the tool (eq 1), everything the force,
/// the torque and their exact gradient need.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PenaltyContact {
    pub role: Role,
    /// Index of the environment object.
    pub environment: u32,
    /// Index of the shell point (in the moving shell for role A, in the
    /// environment object's shell for role B).
    pub point: u32,
    /// Finest-level shell points this contact stands for (1 unless the
    /// traversal stopped early at a coarser level).
    pub weight: u32,
    /// Torque handle `r = P − x` (m).
    pub handle: Vector3<f64>,
    /// Unit direction `N` of the force on the tool.
    pub normal: Vector3<f64>,
    /// What `N` follows: in role A the environment field's gradient or the
    /// tool's turned shell normal; in role B it is always
    /// [`ForceDirection::ShellNormal`], the environment's own, fixed.
    pub direction: ForceDirection,
    /// `∂N/∂P` (1/m) along the field's gradient: `(I − NNᵀ) ∇²φ / ‖∇φ‖`;
    /// zero otherwise.
    pub normal_derivative: Matrix3<f64>,
    /// Signed distance `d` (m), negative in contact.
    pub distance: f64,
    /// `∂d/∂x`: the change of `d` per unit translation of the tool,
    /// from the field's own gradient (see the module table). Zhao et al.'s
    /// eqs 2–3 take it to be `N`.
    pub distance_gradient: Vector3<f64>,
    /// Stiffness `k_i` of this contact (N/m): `k_n`, times `weight`, times the
    /// scaling of [`StiffnessScaling`](crate::StiffnessScaling).
    pub stiffness: f64,
}

impl PenaltyContact {
    /// Role A: shell point `point` (`p`, outward normal `n`, moving frame)
    /// of the tool at `pose`, against `field` turned into the world by
    /// `field_rotation`, pushing along `direction`. `field_from_shell` is
    /// the field's pose inverted times `pose`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn moving_shell<F: DistanceField + ?Sized>(
        environment: u32,
        point: u32,
        weight: u32,
        p: &Point3<f64>,
        n: &Vector3<f64>,
        pose: &Isometry3<f64>,
        field: &F,
        field_rotation: &Rotation3<f64>,
        field_from_shell: &Isometry3<f64>,
        direction: ForceDirection,
    ) -> Self {
        let at = field_from_shell * p;
        let (distance, local_gradient, local_hessian) = match direction {
            ForceDirection::ShellNormal => {
                let (distance, gradient) = field.value_gradient(&at);
                (distance, gradient, None)
            }
            ForceDirection::FieldGradient => {
                let (distance, gradient, hessian) = field.value_gradient_hessian(&at);
                (distance, gradient, Some(hessian))
            }
        };
        let gradient = field_rotation * local_gradient;
        let mut contact = Self {
            role: Role::MovingShell,
            environment,
            point,
            weight,
            handle: pose.rotation * p.coords,
            normal: -(pose.rotation * n),
            direction: ForceDirection::ShellNormal,
            normal_derivative: Matrix3::zeros(),
            distance,
            distance_gradient: gradient,
            stiffness: 0.0,
        };
        let length = gradient.norm();
        if let Some(local_hessian) = local_hessian.filter(|_| length >= MIN_GRADIENT_NORM) {
            let normal = gradient / length;
            let matrix = field_rotation.matrix();
            let hessian = matrix * local_hessian * matrix.transpose() / length;
            contact.normal = normal;
            contact.direction = ForceDirection::FieldGradient;
            // (I − NNᵀ) ∇²φ / ‖∇φ‖ as a rank-one update.
            contact.normal_derivative = hessian - normal * (normal.transpose() * hessian);
        }
        contact
    }

    /// Role B: environment shell point `point` (`p`, outward normal `n`, in
    /// the frame of an environment object at `shell_pose`) against the field
    /// of the tool at `pose`. `field_from_shell` is
    /// `pose⁻¹ · shell_pose`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn moving_field<F: DistanceField + ?Sized>(
        environment: u32,
        point: u32,
        weight: u32,
        p: &Point3<f64>,
        n: &Vector3<f64>,
        shell_pose: &Isometry3<f64>,
        field: &F,
        pose: &Isometry3<f64>,
        field_from_shell: &Isometry3<f64>,
    ) -> Self {
        let (distance, local_gradient) = field.value_gradient(&(field_from_shell * p));
        Self {
            role: Role::MovingField,
            environment,
            point,
            weight,
            handle: (shell_pose * p).coords - pose.translation.vector,
            normal: shell_pose.rotation * n,
            direction: ForceDirection::ShellNormal,
            normal_derivative: Matrix3::zeros(),
            distance,
            distance_gradient: -(pose.rotation * local_gradient),
            stiffness: 0.0,
        }
    }

    /// `F = −k d N` (N), eq 1.
    #[inline]
    pub fn force(&self) -> Vector3<f64> {
        self.normal * (-self.stiffness * self.distance)
    }

    /// `(F, r × F)` (N, N·m), eq 1.
    #[inline]
    pub fn wrench(&self) -> Vector6 {
        let force = self.force();
        let torque = self.handle.cross(&force);
        Vector6::new(force.x, force.y, force.z, torque.x, torque.y, torque.z)
    }

    /// `‖F‖ = k |d|` (N).
    #[inline]
    pub fn normal_force(&self) -> f64 {
        self.stiffness * (-self.distance).max(0.0)
    }
}

/// `Σ (F_i, τ_i)` over `contacts`: the contact part of eq 9.
pub fn total_wrench(contacts: &[PenaltyContact]) -> Vector6 {
    contacts.iter().map(PenaltyContact::wrench).sum()
}
