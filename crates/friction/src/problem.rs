//! One cycle's static-friction problem and what a solver returns.

use haptic_core::{Matrix6, Vector6};
/// Whether the object stays put this cycle: the friction stage's decision,
/// in the protocol's vocabulary.
pub use haptic_schema::FrictionState;
use nalgebra::{Vector2, Vector3};
use std::time::Instant;

/// A contact entering the friction LP.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrictionContact {
    /// Torque handle `r`: the contact point relative to the simulation
    /// object's reference point, world frame (m).
    pub handle: Vector3<f64>,
    /// Unit contact normal `N`, the direction of the normal force on the
    /// tool.
    pub normal: Vector3<f64>,
    /// Magnitude of the penalty normal force `‖F_n‖` (N).
    pub normal_force: f64,
    /// Coulomb friction coefficient `μ ≥ 0`.
    pub friction_coefficient: f64,
    /// Tangential offset of the tool's material point at this
    /// contact from the contact's stick anchor, world frame (m): the slip
    /// accumulated since the contact last stuck. Only the pre-sliding model
    /// ([`crate::FastPreSlidingSolver`]) reads it; zero for a new contact.
    pub slip: Vector3<f64>,
}

impl FrictionContact {
    /// Unit tangents `(T_u, T_v)` completing `N` to a right-handed frame,
    /// chosen deterministically from the normal alone.
    pub fn tangents(&self) -> (Vector3<f64>, Vector3<f64>) {
        let n = self.normal;
        // The axis least aligned with the normal gives a well-conditioned
        // cross product: n × x, n × y or n × z, chosen without branching.
        let (x, y, z) = (n.x.abs(), n.y.abs(), n.z.abs());
        let by_x = x <= y && x <= z;
        let by_y = !by_x && y <= z;
        let pick = |a: f64, b: f64, c: f64| {
            if by_x {
                a
            } else if by_y {
                b
            } else {
                c
            }
        };
        let u = Vector3::new(
            pick(0.0, -n.z, n.y),
            pick(n.z, 0.0, -n.x),
            pick(-n.y, n.x, 0.0),
        );
        let u = u * (1.0 / u.norm());
        (u, n.cross(&u))
    }

    /// `W_i`: the wrench `(T β, r × T β)` of a tangential force `β = (β_u, β_v)`
    /// at this contact, as a 6×2 matrix (the columns of `T` and `R` of eq 30).
    pub fn wrench_basis(&self) -> nalgebra::Matrix6x2<f64> {
        let (u, v) = self.tangents();
        self.wrench_basis_of(&u, &v)
    }

    /// [`wrench_basis`](Self::wrench_basis) from the [`tangents`](Self::tangents)
    /// `(u, v)` already computed.
    pub(crate) fn wrench_basis_of(
        &self,
        u: &Vector3<f64>,
        v: &Vector3<f64>,
    ) -> nalgebra::Matrix6x2<f64> {
        let mut w = nalgebra::Matrix6x2::zeros();
        w.fixed_view_mut::<3, 1>(0, 0).copy_from(u);
        w.fixed_view_mut::<3, 1>(0, 1).copy_from(v);
        w.fixed_view_mut::<3, 1>(3, 0)
            .copy_from(&self.handle.cross(u));
        w.fixed_view_mut::<3, 1>(3, 1)
            .copy_from(&self.handle.cross(v));
        w
    }

    /// Radius of the pyramid's inscribed circle: `μ ‖F_n‖` (eq 13).
    pub fn friction_limit(&self) -> f64 {
        self.friction_coefficient * self.normal_force
    }
}

/// One servo cycle's static-friction problem (Zhao, Li & Barbič eqs 28–37).
#[derive(Clone, Debug, PartialEq)]
pub struct StaticFrictionProblem {
    /// `f = (F, τ)`: virtual coupling plus all normal contact forces and
    /// torques on the tool (N, N·m), eq 9.
    pub wrench: Vector6,
    /// `H = ∂f/∂q` for `q = (x, θ)`: the penalty gradients of eqs 2–3 plus
    /// `−k_vc I` and `−k_vc,tor I` on the diagonal blocks.
    pub stiffness: Matrix6,
    /// `M̄ = diag(M, I)`: mass (kg) and inertia (kg·m²) of eq 27.
    pub mass: Matrix6,
    /// The non-separating contacts (§4.1 removes the separating ones).
    pub contacts: Vec<FrictionContact>,
    /// `ℓ ≥ 3`, the sides of the friction pyramid (eq 13).
    pub pyramid_sides: usize,
    /// When the solve must end: the fast solvers stop their iteration when
    /// it passes and answer from the iterate they hold, an equilibrium
    /// with every friction force inside its pyramid
    /// ([`FrictionSolution::out_of_time`]). The reference solvers ignore it.
    pub deadline: Option<Instant>,
}

impl StaticFrictionProblem {
    /// An empty problem with room for `contacts` contacts and pyramids of
    /// `pyramid_sides` (`ℓ ≥ 3`, eq 13).
    pub fn with_capacity(contacts: usize, pyramid_sides: usize) -> Self {
        Self {
            wrench: Vector6::zeros(),
            stiffness: Matrix6::zeros(),
            mass: Matrix6::identity(),
            contacts: Vec::with_capacity(contacts),
            pyramid_sides,
            deadline: None,
        }
    }

    /// The unit directions `(cos θ_j, sin θ_j)`, `θ_j = (2j + 1)π/ℓ`, of the
    /// pyramid's sides (eq 13).
    pub fn side_directions(&self) -> impl Iterator<Item = Vector2<f64>> + '_ {
        let l = self.pyramid_sides as f64;
        (0..self.pyramid_sides).map(move |j| {
            let theta = (2 * j + 1) as f64 * std::f64::consts::PI / l;
            Vector2::new(theta.cos(), theta.sin())
        })
    }

    /// The frictionless displacement `Δq = −H⁻¹ f` (eqs 7–8 with `β = 0`),
    /// `None` when `H` is singular.
    pub fn frictionless_displacement(&self) -> Option<Vector6> {
        self.stiffness.lu().solve(&(-self.wrench))
    }
}

/// What a solver found for one cycle.
#[derive(Clone, Debug, PartialEq)]
pub struct FrictionSolution {
    pub state: FrictionState,
    /// Friction force components `(β_u, β_v)` per contact (N), zero unless static.
    pub beta: Vec<[f64; 2]>,
    /// Displacement `Δq = (Δx, Δθ)` of the tool (m, rad).
    pub displacement: Vector6,
    /// Solver iterations this cycle.
    pub iterations: u32,
    /// The solver could not certify `state` to its tolerance (an iteration
    /// cap or working precision) and decided it within its band.
    pub decided_in_band: bool,
    /// The pre-sliding model's load-weighted RMS slip of the contacts from
    /// their stick anchors after `displacement` (m); zero for the LP.
    pub slip: f64,
    /// The pre-sliding model found friction balancing the wrench in place:
    /// no contact slips this cycle, so every contact sticks where it is.
    pub held_in_place: bool,
    /// The problem's deadline stopped the solver before it certified its
    /// answer: `state` was decided from an equilibrium short of the optimum.
    pub out_of_time: bool,
}

impl FrictionSolution {
    /// Clears `β` and every per-solve figure, keeping `beta`'s capacity;
    /// `state` and `displacement` are the solver's to set.
    pub fn reset(&mut self) {
        self.beta.clear();
        self.iterations = 0;
        self.decided_in_band = false;
        self.slip = 0.0;
        self.held_in_place = false;
        self.out_of_time = false;
    }

    /// A solution with room for `contacts` contacts, so that solving never allocates.
    pub fn with_capacity(contacts: usize) -> Self {
        Self {
            state: FrictionState::Free,
            beta: Vec::with_capacity(contacts),
            displacement: Vector6::zeros(),
            iterations: 0,
            decided_in_band: false,
            slip: 0.0,
            held_in_place: false,
            out_of_time: false,
        }
    }
}

/// Why a solver could not answer.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SolverError {
    #[error("the stiffness matrix H is singular")]
    SingularStiffness,
    #[error("the solver did not converge in {iterations} iterations")]
    NotConverged { iterations: u32 },
    #[error("the solver failed: {0}")]
    Backend(String),
}

/// Decides static friction for one cycle (the LP of eqs 32–37 or an
/// equivalent). Implementations sized at start-up never allocate in `solve`.
pub trait StaticFrictionSolver {
    fn solve(
        &mut self,
        problem: &StaticFrictionProblem,
        solution: &mut FrictionSolution,
    ) -> Result<(), SolverError>;
}
