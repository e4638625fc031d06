//! The four deformable paradigms and how each hands the constraint solver
//! its nodes' unconstrained velocities at `t + h` (the paper's eqs 1–3).
//!
//! Force-based paradigms (mass–spring, co-rotational FEM) give internal
//! forces; they are integrated by the paper's symplectic Euler (eq 38:
//! `v + h m⁻¹ f`) or, beyond the paper, linearly implicitly
//! (`(M − hD − h²K) Δv = h (f + hKv)`, assembled once per step as a sparse
//! block matrix and solved by conjugate gradients), which stays stable at
//! any stiffness and step. Position-based paradigms (XPBD, shape matching)
//! give goal positions `g` from the predicted positions of eq 1, turned into
//! velocities by eqs 2 and 3.
//!
//! The paper's eq 38 adds `h m⁻¹ f` after the solver to velocities that
//! eqs 2–3 already derived from positions predicted with `f` (eq 1), which
//! would count external forces twice for the position-based paradigms. Here
//! every paradigm returns the whole unconstrained velocity, external forces
//! included once: a free body of any paradigm falls at exactly `g`.

pub mod block_matrix;
pub mod conjugate_gradient;
pub mod corotational;
pub mod mass_spring;
pub mod rotation;
pub mod shape_matching;
pub mod xpbd;

use crate::error::DeformableError;
use block_matrix::BlockMatrix;
use conjugate_gradient::{ConjugateGradient, Filter};
pub use corotational::CorotationalFem;
pub use mass_spring::{MassSpring, Spring};
use nalgebra::{Point3, Vector3};
pub use shape_matching::ShapeMatching;
pub use xpbd::Xpbd;

/// How a force-based paradigm advances its velocities.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ForceIntegration {
    /// The paper's symplectic Euler (eq 38): conditionally stable.
    SymplecticEuler,
    /// One linearised backward-Euler step, solved by conjugate gradients to
    /// `tolerance` (relative residual) in at most `max_iterations`.
    LinearlyImplicit {
        max_iterations: usize,
        tolerance: f64,
    },
}

impl Default for ForceIntegration {
    fn default() -> Self {
        ForceIntegration::LinearlyImplicit {
            max_iterations: 40,
            tolerance: 1e-4,
        }
    }
}

/// A deformable body's paradigm, selectable per object.
#[derive(Clone, Debug)]
pub enum Paradigm {
    MassSpring(MassSpring),
    CorotationalFem(CorotationalFem),
    Xpbd(Xpbd),
    ShapeMatching(ShapeMatching),
}

/// What every step needs from outside a body's paradigm.
pub struct StepInput<'a> {
    pub h: f64,
    pub gravity: Vector3<f64>,
    pub masses: &'a [f64],
    pub positions: &'a [Point3<f64>],
    pub velocities: &'a [Vector3<f64>],
    /// The velocity each node anchored to the world must have at `t + h`
    /// (`None` for a free node). A paradigm holds them in its own solve, so
    /// that its stiffness carries the load to them within the step: a
    /// cantilever clamped at one end is held by its elasticity, not by the
    /// anchors' rows pulling on a falling beam one node at a time.
    pub pinned: &'a [Option<Vector3<f64>>],
}

impl StepInput<'_> {
    /// Node `i`'s filter in the implicit solves: pinned or free.
    pub(crate) fn filter(&self, i: usize) -> Filter {
        match self.pinned.get(i) {
            Some(Some(_)) => Filter::Pinned,
            _ => Filter::Free,
        }
    }

    /// Overwrites the pinned nodes' velocities in `velocities`.
    pub(crate) fn hold_pinned(&self, velocities: &mut [Vector3<f64>]) {
        for (v, pin) in velocities.iter_mut().zip(self.pinned) {
            if let Some(target) = pin {
                *v = *target;
            }
        }
    }
}

impl Paradigm {
    /// The paradigm's name as configuration spells it.
    pub fn name(&self) -> &'static str {
        match self {
            Paradigm::MassSpring(_) => "mass_spring",
            Paradigm::CorotationalFem(_) => "corotational_fem",
            Paradigm::Xpbd(_) => "xpbd",
            Paradigm::ShapeMatching(_) => "shape_matching",
        }
    }

    /// Writes into `free` each node's velocity at `t + h` under internal and
    /// external forces, with no constraint (eqs 1–3).
    pub fn free_velocities(&mut self, input: &StepInput, free: &mut [Vector3<f64>]) {
        match self {
            Paradigm::MassSpring(model) => model.free_velocities(input, free),
            Paradigm::CorotationalFem(model) => model.free_velocities(input, free),
            Paradigm::Xpbd(model) => model.free_velocities(input, free),
            Paradigm::ShapeMatching(model) => model.free_velocities(input, free),
        }
    }

    /// Writes into `response` the velocity change the body's internal model
    /// gives the node impulses `impulses` within the step: `A⁻¹ p` for a
    /// linearly implicit force-based body (`A = M − hD − h²K` as the last
    /// [`free_velocities`](Self::free_velocities) prepared it), the goals'
    /// rigid share of it for shape matching. An impulse on a few nodes moves
    /// the whole body as its stiffness passes it on. Returns `false`,
    /// writing nothing, where the response is `M⁻¹ p` (explicit or XPBD).
    pub fn respond(
        &mut self,
        input: &StepInput,
        impulses: &[Vector3<f64>],
        response: &mut [Vector3<f64>],
    ) -> bool {
        match self {
            Paradigm::MassSpring(model) => model.respond(input, impulses, response),
            Paradigm::CorotationalFem(model) => model.respond(input, impulses, response),
            Paradigm::ShapeMatching(model) => model.respond(input, impulses, response),
            Paradigm::Xpbd(_) => false,
        }
    }

    /// Solves the body's implicit step again with the node impulses
    /// `impulses` and the nodes of `planes` held on their contact planes
    /// (Baraff & Witkin's constraint filtering), so that the body's stiffness
    /// carries the contacts' support to all its nodes within the step:
    /// writes the velocities at `t + h` and each plane's support impulse.
    /// `false`, writing nothing, for paradigms not integrated implicitly.
    pub fn solve_with_contacts(
        &mut self,
        input: &StepInput,
        impulses: &[Vector3<f64>],
        planes: &[ContactPlane],
        velocities: &mut [Vector3<f64>],
        supports: &mut [f64],
    ) -> bool {
        match self {
            Paradigm::MassSpring(model) => {
                model.solve_with_contacts(input, impulses, planes, velocities, supports)
            }
            Paradigm::CorotationalFem(model) => {
                model.solve_with_contacts(input, impulses, planes, velocities, supports)
            }
            Paradigm::Xpbd(model) => {
                model.solve_with_contacts(input, impulses, planes, velocities, supports)
            }
            Paradigm::ShapeMatching(model) => {
                model.solve_with_contacts(input, impulses, planes, velocities, supports)
            }
        }
    }

    /// Elastic energy stored at `positions` (J); shape matching stores its
    /// goal springs' `½ k m |g − x|²/h²`-free form as 0 (it has no energy
    /// function).
    pub fn potential_energy(&self, positions: &[Point3<f64>]) -> f64 {
        match self {
            Paradigm::MassSpring(model) => model.potential_energy(positions),
            Paradigm::CorotationalFem(model) => model.potential_energy(positions),
            Paradigm::Xpbd(model) => model.potential_energy(positions),
            Paradigm::ShapeMatching(_) => 0.0,
        }
    }

    /// Checks element indices against `nodes` and the parameters' ranges.
    pub fn check(&self, body: &str, nodes: usize) -> Result<(), DeformableError> {
        match self {
            Paradigm::MassSpring(model) => model.check(body, nodes),
            Paradigm::CorotationalFem(model) => model.check(body, nodes),
            Paradigm::Xpbd(model) => model.check(body, nodes),
            Paradigm::ShapeMatching(model) => model.check(body, nodes),
        }
    }
}

/// Internal forces with their Jacobians, for [`integrate_forces`].
pub(crate) trait ElasticForces {
    /// Caches what the products need at `positions` (directions, rotations).
    fn prepare(&mut self, positions: &[Point3<f64>]);
    /// `f += f_internal(x, v)`, elastic and damping.
    fn add_forces(&self, input: &StepInput, forces: &mut [Vector3<f64>]);
    /// `out += s K y`, `K = ∂f/∂x` (negative semi-definite).
    fn add_stiffness_product(&self, s: f64, y: &[Vector3<f64>], out: &mut [Vector3<f64>]);
    /// `out += s D y`, `D = ∂f/∂v` (negative semi-definite).
    fn add_damping_product(
        &self,
        input: &StepInput,
        s: f64,
        y: &[Vector3<f64>],
        out: &mut [Vector3<f64>],
    );
    /// `diag += diag(−hD − h²K)`, scalar per node (a Jacobi preconditioner).
    fn add_implicit_diagonal(&self, input: &StepInput, diagonal: &mut [f64]);
    /// Assembles `A = M − hD − h²K` at the state [`prepare`](Self::prepare)
    /// cached, for the step's products: as a matrix
    /// ([`system_matrix`](Self::system_matrix)), or as what its matrix-free
    /// [`add_implicit_product`](Self::add_implicit_product) needs; by
    /// default nothing.
    fn assemble_system(&mut self, _input: &StepInput) {}
    /// The matrix [`assemble_system`](Self::assemble_system) assembled, if
    /// the model assembles one.
    fn system_matrix(&self) -> Option<&BlockMatrix> {
        None
    }
    /// `out += (−hD − h²K) y`, the step matrix beyond the masses, for a
    /// model without [`system_matrix`](Self::system_matrix): by default the
    /// damping and the stiffness products in turn.
    fn add_implicit_product(
        &self,
        input: &StepInput,
        y: &[Vector3<f64>],
        out: &mut [Vector3<f64>],
    ) {
        damping_then_stiffness(self, input, y, out);
    }
}

/// `out += (−hD − h²K) y` of `model` by its damping and its stiffness
/// products in turn.
fn damping_then_stiffness<M: ElasticForces + ?Sized>(
    model: &M,
    input: &StepInput,
    y: &[Vector3<f64>],
    out: &mut [Vector3<f64>],
) {
    model.add_damping_product(input, -input.h, y, out);
    model.add_stiffness_product(-input.h * input.h, y, out);
}

/// Scratch of [`integrate_forces`], kept between steps.
#[derive(Clone, Debug, Default)]
pub struct ForceScratch {
    forces: Vec<Vector3<f64>>,
    rhs: Vec<Vector3<f64>>,
    delta: Vec<Vector3<f64>>,
    diagonal: Vec<f64>,
    /// The last solve with contacts' velocity changes (the free solve's
    /// before the first): where the next solve with contacts starts.
    last_delta: Vec<Vector3<f64>>,
    cg: ConjugateGradient,
    filters: Vec<Filter>,
    extended: Vec<Vector3<f64>>,
    product: Vec<Vector3<f64>>,
}

/// `out = A y`, `A = M − hD − h²K`: the linearly implicit step's matrix,
/// assembled or matrix-free.
fn apply_system(
    model: &impl ElasticForces,
    input: &StepInput,
    y: &[Vector3<f64>],
    out: &mut [Vector3<f64>],
) {
    if let Some(matrix) = model.system_matrix() {
        matrix.multiply(y, out);
        return;
    }
    for i in 0..y.len() {
        out[i] = input.masses[i] * y[i];
    }
    model.add_implicit_product(input, y, out);
}

/// A node held on a contact plane in [`Paradigm::solve_with_contacts`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactPlane {
    /// Index of the node in its body.
    pub node: u32,
    /// Unit normal of the plane.
    pub normal: Vector3<f64>,
    /// The node's velocity along `normal` at `t + h`.
    pub normal_velocity: f64,
}

/// The position-based paradigms' contact planes, once per substep of `hs`:
/// moves each unpinned node of `planes` whose travel from `current` to `p`
/// along its plane's normal falls short of the plane's normal velocity
/// back onto the plane, and adds the move times the node's mass over `hs`
/// to that plane's support.
pub(crate) fn hold_on_planes(
    input: &StepInput,
    planes: &[ContactPlane],
    hs: f64,
    current: &[Point3<f64>],
    p: &mut [Point3<f64>],
    supports: &mut [f64],
) {
    for (plane, support) in planes.iter().zip(supports) {
        let i = plane.node as usize;
        if input.pinned.get(i).is_some_and(Option::is_some) {
            continue;
        }
        let short = plane.normal.dot(&(p[i] - current[i])) - hs * plane.normal_velocity;
        if short < 0.0 {
            p[i] -= short * plane.normal;
            *support -= input.masses[i] * short / hs;
        }
    }
}

/// Solves the step's implicit system again (`A Δv = h (f + hKv) + p`, as the
/// last [`integrate_forces`] prepared it) with the node impulses `impulses`
/// added and the nodes of `planes` held at their normal velocities, writing
/// the velocities at `t + h` into `velocities` and each plane's support
/// impulse along its normal into `supports`. `false` when the paradigm is
/// not integrated implicitly.
#[allow(clippy::too_many_arguments)]
pub(crate) fn solve_implicitly_with_contacts(
    model: &impl ElasticForces,
    integration: ForceIntegration,
    scratch: &mut ForceScratch,
    input: &StepInput,
    impulses: &[Vector3<f64>],
    planes: &[ContactPlane],
    velocities: &mut [Vector3<f64>],
    supports: &mut [f64],
) -> bool {
    let ForceIntegration::LinearlyImplicit {
        max_iterations,
        tolerance,
    } = integration
    else {
        return false;
    };
    if scratch.rhs.len() != input.positions.len() {
        return false;
    }
    let n = input.positions.len();
    scratch.filters.clear();
    scratch.filters.extend((0..n).map(|i| input.filter(i)));
    scratch.delta.clear();
    scratch.delta.extend(
        input
            .pinned
            .iter()
            .zip(input.velocities)
            .map(|(pin, v)| pin.map_or(Vector3::zeros(), |target| target - v)),
    );
    for plane in planes {
        let i = plane.node as usize;
        if scratch.filters[i] == Filter::Free {
            scratch.filters[i] = Filter::Plane(plane.normal);
            scratch.delta[i] =
                (plane.normal_velocity - plane.normal.dot(&input.velocities[i])) * plane.normal;
        }
    }
    scratch.extended.clear();
    scratch
        .extended
        .extend(scratch.rhs.iter().zip(impulses).map(|(b, p)| b + p));
    let ForceScratch {
        extended,
        delta,
        diagonal,
        last_delta,
        cg,
        filters,
        product,
        ..
    } = scratch;
    // Started from the last solve with contacts' answer (this step's or
    // the last step's; the free solve's before the first) where the filters
    // leave a node free: a resting body's supported step changes little
    // from one step to the next, and an active set's rounds differ by a few
    // planes.
    if last_delta.len() == n {
        for i in 0..n {
            delta[i] += filters[i].project(last_delta[i]);
        }
    }
    let apply = |y: &[Vector3<f64>], out: &mut [Vector3<f64>]| apply_system(model, input, y, out);
    cg.solve_filtered(
        |i| filters[i],
        apply,
        |i, r| r / diagonal[i],
        extended,
        delta,
        max_iterations,
        tolerance,
    );
    last_delta.clear();
    last_delta.extend_from_slice(delta);
    product.clear();
    product.resize(n, Vector3::zeros());
    apply(delta, product);
    for (k, plane) in planes.iter().enumerate() {
        let i = plane.node as usize;
        supports[k] = plane.normal.dot(&(product[i] - extended[i]));
    }
    // What the solve's tolerance left unbalanced on the free parts is
    // momentum the body should have had (internal forces add up to
    // nothing): it goes to the free nodes as a common velocity, so that the
    // body's momentum matches the impulses, supports and pins exactly.
    let mut missing = Vector3::zeros();
    let mut free_mass = 0.0;
    for i in 0..n {
        missing += filters[i].project(extended[i] - product[i]);
        if filters[i] == Filter::Free {
            free_mass += input.masses[i];
        }
    }
    for i in 0..n {
        velocities[i] = input.velocities[i] + delta[i];
        if free_mass > 0.0 && filters[i] == Filter::Free {
            velocities[i] += missing / free_mass;
        }
    }
    true
}

/// For the position-based paradigms' solves with contacts, which end at
/// the step's travel `v = (x(t + h) − x(t))/h` (eq 3) rather than at their
/// last substep's velocity: scales the planes' `supports` (their
/// substeps' sums) by the one factor that best gives the body the momentum
/// change of those `velocities` (gravity, `impulses` and supports: `Σ mᵢ
/// (vᵢ − vᵢ⁰) = M g h + Σ pᵢ + Σ λ_k n_k`), and gives what the planes'
/// normals cannot carry to the free nodes as a common velocity, so that the
/// body's momentum matches exactly. At rest the factor is 1.
pub(crate) fn balance_supports(
    input: &StepInput,
    impulses: &[Vector3<f64>],
    planes: &[ContactPlane],
    velocities: &mut [Vector3<f64>],
    supports: &mut [f64],
    on_plane: &mut Vec<bool>,
) {
    let n = input.positions.len();
    if input.pinned.iter().any(Option::is_some) {
        // A pinned body passes momentum to what holds it.
        return;
    }
    let total: f64 = input.masses.iter().sum();
    let mut needed = Vector3::zeros();
    for i in 0..n {
        needed += input.masses[i] * (velocities[i] - input.velocities[i] - input.h * input.gravity)
            - impulses[i];
    }
    let carried: Vector3<f64> = planes
        .iter()
        .zip(supports.iter())
        .map(|(plane, f)| *f * plane.normal)
        .sum();
    let scale = if carried.norm_squared() > 0.0 {
        (needed.dot(&carried) / carried.norm_squared()).max(0.0)
    } else {
        0.0
    };
    supports.iter_mut().for_each(|f| *f *= scale);
    let missing = scale * carried - needed;
    on_plane.clear();
    on_plane.resize(n, false);
    for plane in planes {
        on_plane[plane.node as usize] = true;
    }
    let free_mass: f64 = (0..n)
        .filter(|&i| !on_plane[i])
        .map(|i| input.masses[i])
        .sum();
    let mass = if free_mass > 0.0 { free_mass } else { total };
    for i in 0..n {
        if free_mass <= 0.0 || !on_plane[i] {
            velocities[i] += missing / mass;
        }
    }
}

/// `A⁻¹ p` of a force-based paradigm prepared by [`integrate_forces`]
/// (see [`Paradigm::respond`]); `false` when it integrates explicitly. The
/// solve stops at a quarter of the step's iterations or 1 % residual: the
/// next pass corrects what it leaves (a 10 kPa cube settles to the same
/// volume, −2.5 % against −2.4 %, in half the time).
pub(crate) fn respond_implicitly(
    model: &impl ElasticForces,
    integration: ForceIntegration,
    scratch: &mut ForceScratch,
    input: &StepInput,
    impulses: &[Vector3<f64>],
    response: &mut [Vector3<f64>],
) -> bool {
    let ForceIntegration::LinearlyImplicit {
        max_iterations,
        tolerance,
    } = integration
    else {
        return false;
    };
    response.iter_mut().for_each(|r| *r = Vector3::zeros());
    let ForceScratch { diagonal, cg, .. } = scratch;
    cg.solve_filtered(
        |i| input.filter(i),
        |y, out| apply_system(model, input, y, out),
        |i, r| r / diagonal[i],
        impulses,
        response,
        (max_iterations / 4).max(5),
        tolerance.max(1e-2),
    );
    if input.pinned.iter().any(Option::is_some) {
        // A pinned body passes momentum to what holds it.
        return true;
    }
    // `A` moves a uniform translation `t` as `M` does (`K t = D t = 0`), so
    // the exact answer carries the impulses' momentum, `Σ mᵢ rᵢ = Σ pᵢ`;
    // the solve's tolerance is taken off as a common translation.
    let total_mass: f64 = input.masses.iter().sum();
    let missing: Vector3<f64> = impulses.iter().sum::<Vector3<f64>>()
        - input
            .masses
            .iter()
            .zip(response.iter())
            .map(|(m, r)| *m * r)
            .sum::<Vector3<f64>>();
    let shift = missing / total_mass;
    response.iter_mut().for_each(|r| *r += shift);
    true
}

/// The free velocities of a force-based paradigm (eq 38 or its linearly
/// implicit form, see [`ForceIntegration`]).
pub(crate) fn integrate_forces(
    model: &mut impl ElasticForces,
    integration: ForceIntegration,
    scratch: &mut ForceScratch,
    input: &StepInput,
    free: &mut [Vector3<f64>],
) {
    let n = input.positions.len();
    let h = input.h;
    model.prepare(input.positions);
    if matches!(integration, ForceIntegration::LinearlyImplicit { .. }) {
        model.assemble_system(input);
    }
    scratch.forces.clear();
    scratch
        .forces
        .extend(input.masses.iter().map(|m| *m * input.gravity));
    model.add_forces(input, &mut scratch.forces);
    match integration {
        ForceIntegration::SymplecticEuler => {
            for i in 0..n {
                free[i] = input.velocities[i] + h / input.masses[i] * scratch.forces[i];
            }
            input.hold_pinned(free);
        }
        ForceIntegration::LinearlyImplicit {
            max_iterations,
            tolerance,
        } => {
            // rhs = h (f + h K v)
            scratch.rhs.clear();
            scratch.rhs.resize(n, Vector3::zeros());
            model.add_stiffness_product(h, input.velocities, &mut scratch.rhs);
            for i in 0..n {
                scratch.rhs[i] = h * (scratch.forces[i] + scratch.rhs[i]);
            }
            scratch.diagonal.clear();
            scratch.diagonal.extend_from_slice(input.masses);
            model.add_implicit_diagonal(input, &mut scratch.diagonal);
            scratch.delta.clear();
            scratch.delta.extend(
                input
                    .pinned
                    .iter()
                    .zip(input.velocities)
                    .map(|(pin, v)| pin.map_or(Vector3::zeros(), |target| target - v)),
            );
            let ForceScratch {
                rhs,
                delta,
                diagonal,
                cg,
                ..
            } = scratch;
            let model = &*model;
            cg.solve_filtered(
                |i| input.filter(i),
                |y, out| apply_system(model, input, y, out),
                |i, r| r / diagonal[i],
                rhs,
                delta,
                max_iterations,
                tolerance,
            );
            for i in 0..n {
                free[i] = input.velocities[i] + scratch.delta[i];
            }
            if scratch.last_delta.len() != n {
                scratch.last_delta.clear();
                scratch.last_delta.extend_from_slice(&scratch.delta);
            }
        }
    }
}
