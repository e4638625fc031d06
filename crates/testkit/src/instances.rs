//! Deterministic random static-friction instances for tests and benchmarks.
//!
//! An [`Instance`] is a rigid box or ellipsoid of random size, density and
//! orientation, with `k` penalty contacts on its surface: handle `r` from the
//! centre of mass, normal `N` pointing into the object, `‖F_n‖ = k_n d` for a
//! penetration `d ≤ 1 mm` and a total stiffness of 2·10³–3·10⁴ N/m shared by
//! the contacts (adaptive stiffness scaling), `μ` in 0.05–1.2. `H` is
//! [`penalty_stiffness`]: eqs 2–3 (with the geometric term where a point
//! carried by the object puts it, which makes `H` unsymmetric) minus `k_vc I`
//! and `k_vc,tor I` on the diagonal blocks, with `k_vc,tor` large enough that
//! `(H + Hᵀ)/2` stays negative definite. The wrench is `f = f_n + f_vc`
//! (eq 9) with a coupling `f_vc = −(1 + η) f_n + s p`: one that balanced the
//! normal forces up to `|η| ≤ 5 %`, plus the user's push `p` scaled by `s`
//! ([`Instance::push`], [`Instance::push_scale`]).

use haptic_core::{skew, Matrix6, Vector6};
use nalgebra::{Matrix3, Quaternion, UnitQuaternion, Vector3};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use haptic_friction::{
    FrictionContact, FrictionSolution, FrictionState, SolverError, StaticFrictionProblem,
    StaticFrictionSolver,
};

/// The contact layouts, each with the rank of `W` it produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// Contacts over several faces of a box (a corner, a hole, a cup or all
    /// around) or over a cap of an ellipsoid: `rank W = 6` for most `k ≥ 3`.
    Generic,
    /// One contact anywhere on the surface: `rank W = 2`.
    OneContact,
    /// Two contacts anywhere on the surface: `rank W ≤ 4`.
    TwoContacts,
    /// Contacts along one box edge, with one normal (an edge on a plane,
    /// `rank W = 3`) or normals turning about the edge (`rank W = 5`).
    Collinear,
    /// Contacts on one box face with its normal (a box on a plane, `rank W = 3`).
    Coplanar,
}

/// What to generate. `contacts` is ignored by `OneContact` and `TwoContacts`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstanceSpec {
    pub family: Family,
    pub contacts: usize,
    pub pyramid_sides: usize,
    pub seed: u64,
}

impl InstanceSpec {
    /// A spec drawn from `seed`: 60 % `Generic` and 10 % each other family,
    /// `k` log-uniform in `1..=max_contacts` (at least 2 for the edge and face
    /// families), `ℓ` = 4 or 8.
    pub fn mixed(seed: u64, max_contacts: usize) -> Self {
        let mut rng = Pcg64::seed_from_u64(!seed);
        let family = match rng.gen_range(0..10) {
            0..=5 => Family::Generic,
            6 => Family::OneContact,
            7 => Family::TwoContacts,
            8 => Family::Collinear,
            _ => Family::Coplanar,
        };
        let min = match family {
            Family::Collinear | Family::Coplanar => 2,
            _ => 1,
        };
        let max = max_contacts.max(min);
        let contacts = log_uniform(&mut rng, min as f64, max as f64 + 1.0).floor() as usize;
        Self {
            family,
            contacts: contacts.clamp(min, max),
            pyramid_sides: if rng.gen_bool(0.5) { 4 } else { 8 },
            seed,
        }
    }
}

/// A generated problem and the knobs of its wrench.
#[derive(Clone, Debug, PartialEq)]
pub struct Instance {
    /// The problem, with `f = base_wrench + push_scale · push`.
    pub problem: StaticFrictionProblem,
    /// `f_n − (1 + η) f_n`: the wrench before the push.
    pub base_wrench: Vector6,
    /// The push `p`: a random force of size `μ̄ Σ‖F_n‖` and a random torque of
    /// up to half that times the object's size.
    pub push: Vector6,
    /// `s`, uniform in 0–2 from [`Instance::generate`]: about half the
    /// generic instances are static.
    pub push_scale: f64,
}

impl Instance {
    /// The instance of `spec`, the same for the same spec.
    pub fn generate(spec: &InstanceSpec) -> Self {
        let mut rng = Pcg64::seed_from_u64(spec.seed);
        let shape = match spec.family {
            Family::Collinear | Family::Coplanar => Shape::Box(half_extents(&mut rng)),
            _ if rng.gen_bool(0.5) => Shape::Box(half_extents(&mut rng)),
            _ => Shape::Ellipsoid(half_extents(&mut rng)),
        };
        let k = match spec.family {
            Family::OneContact => 1,
            Family::TwoContacts => 2,
            _ => spec.contacts.max(1),
        };
        let local = contact_points(&mut rng, &shape, spec.family, k);
        let rotation = random_rotation(&mut rng);
        let size = shape.half().max();

        // Adaptive stiffness scaling: the contacts share one total stiffness.
        let k_n = log_uniform(&mut rng, 2e3, 3e4) / k as f64;
        let mu = rng.gen_range(0.1..1.0);
        let contacts: Vec<FrictionContact> = local
            .iter()
            .map(|&(point, outward)| FrictionContact {
                handle: rotation * point,
                normal: -(rotation * outward),
                normal_force: k_n * rng.gen_range(0.05e-3..1e-3),
                friction_coefficient: if rng.gen_bool(0.3) {
                    rng.gen_range(0.05..1.2)
                } else {
                    mu
                },
                slip: Vector3::zeros(),
            })
            .collect();

        let normal_wrench: Vector6 = contacts
            .iter()
            .map(|c| {
                let force = c.normal * c.normal_force;
                Vector6::new(force.x, force.y, force.z, 0.0, 0.0, 0.0)
                    + lift_torque(&c.handle.cross(&force))
            })
            .sum();
        let k_vc = log_uniform(&mut rng, 300.0, 3000.0);
        // ‖sym([F_n]×[r]×)‖ ≤ 2‖F_n‖‖r‖: twice that keeps (H + Hᵀ)/2 ≺ 0.
        let geometric: f64 = contacts
            .iter()
            .map(|c| 4.0 * c.normal_force * c.handle.norm())
            .sum();
        let k_tor = (k_vc * size * size * rng.gen_range(0.5..2.0)).max(geometric);
        let total_normal: f64 = contacts.iter().map(|c| c.normal_force).sum();

        let eta = rng.gen_range(-0.05..0.05);
        let push_force = unit_vector(&mut rng) * mu * total_normal;
        let push_torque =
            unit_vector(&mut rng) * mu * total_normal * size * rng.gen_range(0.0..0.5);
        let push = Vector6::new(
            push_force.x,
            push_force.y,
            push_force.z,
            push_torque.x,
            push_torque.y,
            push_torque.z,
        );
        let push_scale = rng.gen_range(0.0..2.0);
        let base_wrench = -eta * normal_wrench;

        let mut mass = Matrix6::zeros();
        let (m, inertia) = shape.mass_properties(rng.gen_range(1000.0..8000.0));
        mass.fixed_view_mut::<3, 3>(0, 0)
            .copy_from(&(Matrix3::identity() * m));
        let r = rotation.to_rotation_matrix();
        let world = r.matrix() * inertia * r.matrix().transpose();
        // Exactly symmetric, as an inertia tensor is.
        mass.fixed_view_mut::<3, 3>(3, 3)
            .copy_from(&((world + world.transpose()) * 0.5));

        Self {
            problem: StaticFrictionProblem {
                wrench: base_wrench + push * push_scale,
                stiffness: penalty_stiffness(&contacts, k_n, k_vc, k_tor),
                mass,
                contacts,
                pyramid_sides: spec.pyramid_sides,
                deadline: None,
            },
            base_wrench,
            push,
            push_scale,
        }
    }

    /// The same instance with push scale `s`.
    pub fn with_push_scale(&self, s: f64) -> Self {
        let mut instance = self.clone();
        instance.problem.wrench = self.base_wrench + self.push * s;
        instance.push_scale = s;
        instance
    }

    /// A pair of instances just inside and just outside the friction limit.
    ///
    /// The instance of `spec` with push scale `s` is static on an interval
    /// `[0, s*]` (the static wrenches `{f : ∃β ∈ ΠP_i, Wβ = g(f)}` are convex
    /// and `g` is linear in `f`). `s*` is bracketed by doubling from 1 and
    /// then bisected with `solver` to a relative width of 10⁻⁷; the pair is
    /// `(s_lo (1 − margin), s_hi (1 + margin))`. `None` when the instance is
    /// not static at `s = 0` or stays static past `s = 2⁴⁰` (the push lies
    /// where no friction is needed).
    pub fn near_threshold(
        spec: &InstanceSpec,
        solver: &mut dyn StaticFrictionSolver,
        margin: f64,
    ) -> Result<Option<(Self, Self)>, SolverError> {
        let base = Self::generate(spec);
        let mut solution = FrictionSolution::with_capacity(base.problem.contacts.len());
        let mut is_static = |s: f64| -> Result<bool, SolverError> {
            solver.solve(&base.with_push_scale(s).problem, &mut solution)?;
            Ok(solution.state == FrictionState::Static)
        };
        if !is_static(0.0)? {
            return Ok(None);
        }
        let (mut lo, mut hi) = (0.0, 1.0);
        while is_static(hi)? {
            if hi > 2f64.powi(40) {
                return Ok(None);
            }
            lo = hi;
            hi *= 2.0;
        }
        while hi - lo > 1e-7 * hi {
            let mid = 0.5 * (lo + hi);
            if is_static(mid)? {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Ok(Some((
            base.with_push_scale(lo * (1.0 - margin)),
            base.with_push_scale(hi * (1.0 + margin)),
        )))
    }
}

/// `H = ∂f/∂q` for penalty contacts carried by the object against fixed
/// tangent planes (normals fixed in the world), plus the coupling's `−k_vc I`
/// and `−k_vc,tor I` (eqs 5–6): per contact, with `k_n` the contact stiffness,
///
/// ```text
/// ∂F_n/∂x = −k_n N Nᵀ,   ∂F_n/∂θ = −(∂F_n/∂x)[r]×          (eq 2)
/// ∂τ_n/∂x = (∂F_n/∂θ)ᵀ,  ∂τ_n/∂θ = [r]× ∂F_n/∂θ + [F_n]×[r]×
/// ```
///
/// Eq 3 instead puts the geometric term `[F_n]×` in `∂τ_n/∂x`, which is the
/// derivative for a contact point fixed in the world (handle `r = p − x`);
/// for a point carried by the object, `r` rotates with it and the term moves
/// to `∂τ_n/∂θ` as above (checked by finite differences in the tests). Either
/// way `H` is unsymmetric.
pub fn penalty_stiffness(
    contacts: &[FrictionContact],
    contact_stiffness: f64,
    k_vc: f64,
    k_vc_tor: f64,
) -> Matrix6 {
    let mut h = Matrix6::zeros();
    for c in contacts {
        let n = c.normal;
        let r = skew(&c.handle);
        let df_dx = -contact_stiffness * n * n.transpose();
        let df_dw = -df_dx * r;
        let dt_dx = df_dw.transpose();
        let dt_dw = r * df_dw + skew(&(n * c.normal_force)) * r;
        for (row, col, block) in [(0, 0, df_dx), (0, 3, df_dw), (3, 0, dt_dx), (3, 3, dt_dw)] {
            let mut view = h.fixed_view_mut::<3, 3>(row, col);
            view += block;
        }
    }
    for i in 0..3 {
        h[(i, i)] -= k_vc;
        h[(i + 3, i + 3)] -= k_vc_tor;
    }
    h
}

fn lift_torque(t: &Vector3<f64>) -> Vector6 {
    Vector6::new(0.0, 0.0, 0.0, t.x, t.y, t.z)
}

#[derive(Clone, Copy, Debug)]
enum Shape {
    /// Half extents (m).
    Box(Vector3<f64>),
    /// Semi-axes (m).
    Ellipsoid(Vector3<f64>),
}

impl Shape {
    fn half(&self) -> Vector3<f64> {
        match *self {
            Shape::Box(h) | Shape::Ellipsoid(h) => h,
        }
    }

    /// Mass (kg) and body-frame inertia (kg·m²) at `density` (kg/m³).
    fn mass_properties(&self, density: f64) -> (f64, Matrix3<f64>) {
        let h = self.half();
        let sq = h.component_mul(&h);
        let (volume, factor) = match self {
            Shape::Box(_) => (8.0 * h.x * h.y * h.z, 1.0 / 3.0),
            Shape::Ellipsoid(_) => (4.0 / 3.0 * std::f64::consts::PI * h.x * h.y * h.z, 0.2),
        };
        let m = density * volume;
        let inertia = Matrix3::from_diagonal(&Vector3::new(sq.y + sq.z, sq.x + sq.z, sq.x + sq.y))
            * (m * factor);
        (m, inertia)
    }

    /// A surface point and its outward normal, faces chosen by area.
    fn surface_point(&self, rng: &mut Pcg64) -> (Vector3<f64>, Vector3<f64>) {
        match *self {
            Shape::Box(h) => {
                let areas = [h.y * h.z, h.x * h.z, h.x * h.y];
                let mut pick = rng.gen_range(0.0..areas.iter().sum::<f64>());
                let mut axis = 0;
                while axis < 2 && pick >= areas[axis] {
                    pick -= areas[axis];
                    axis += 1;
                }
                let sign = random_sign(rng);
                face_point(rng, h, axis, sign)
            }
            Shape::Ellipsoid(h) => ellipsoid_point(h, unit_vector(rng)),
        }
    }
}

/// Local contact points and outward normals for `family`.
fn contact_points(
    rng: &mut Pcg64,
    shape: &Shape,
    family: Family,
    k: usize,
) -> Vec<(Vector3<f64>, Vector3<f64>)> {
    let h = shape.half();
    match (family, *shape) {
        (Family::Generic, Shape::Box(_)) => {
            let faces: &[(usize, f64)] = match rng.gen_range(0..4) {
                0 => &[(0, -1.0), (1, -1.0), (2, -1.0)],
                1 => &[(0, -1.0), (0, 1.0), (1, -1.0), (1, 1.0)],
                2 => &[(0, -1.0), (0, 1.0), (1, -1.0), (1, 1.0), (2, -1.0)],
                _ => &[
                    (0, -1.0),
                    (0, 1.0),
                    (1, -1.0),
                    (1, 1.0),
                    (2, -1.0),
                    (2, 1.0),
                ],
            };
            (0..k)
                .map(|_| {
                    let (axis, sign) = faces[rng.gen_range(0..faces.len())];
                    face_point(rng, h, axis, sign)
                })
                .collect()
        }
        (Family::Generic, Shape::Ellipsoid(_)) => {
            // A cap about −z of half-angle 60°–180°.
            let cos_max = rng.gen_range(60f64..180.0).to_radians().cos();
            (0..k)
                .map(|_| {
                    let cos = rng.gen_range(cos_max..1.0);
                    let sin = (1.0 - cos * cos).sqrt();
                    let phi = rng.gen_range(0.0..std::f64::consts::TAU);
                    ellipsoid_point(h, Vector3::new(sin * phi.cos(), sin * phi.sin(), -cos))
                })
                .collect()
        }
        (Family::Collinear, _) => {
            let along = rng.gen_range(0..3);
            let (a, b) = ((along + 1) % 3, (along + 2) % 3);
            let (sa, sb) = (random_sign(rng), random_sign(rng));
            let angle = |rng: &mut Pcg64| rng.gen_range(0.2..std::f64::consts::FRAC_PI_2 - 0.2);
            let common = rng.gen_bool(0.5).then(|| angle(rng));
            (0..k)
                .map(|_| {
                    let mut p = Vector3::zeros();
                    p[a] = sa * h[a];
                    p[b] = sb * h[b];
                    p[along] = rng.gen_range(-0.95..0.95) * h[along];
                    let phi = common.unwrap_or_else(|| angle(rng));
                    let mut n = Vector3::zeros();
                    n[a] = sa * phi.cos();
                    n[b] = sb * phi.sin();
                    (p, n)
                })
                .collect()
        }
        (Family::Coplanar, _) => {
            let (axis, sign) = (rng.gen_range(0..3), random_sign(rng));
            (0..k).map(|_| face_point(rng, h, axis, sign)).collect()
        }
        _ => (0..k).map(|_| shape.surface_point(rng)).collect(),
    }
}

/// A point on the box face `sign · e_axis` and that outward normal.
fn face_point(
    rng: &mut Pcg64,
    h: Vector3<f64>,
    axis: usize,
    sign: f64,
) -> (Vector3<f64>, Vector3<f64>) {
    let mut p = Vector3::zeros();
    for c in 0..3 {
        p[c] = rng.gen_range(-0.95..0.95) * h[c];
    }
    p[axis] = sign * h[axis];
    let mut n = Vector3::zeros();
    n[axis] = sign;
    (p, n)
}

/// The ellipsoid point `h ⊙ u` for a unit `u`, and its outward normal.
fn ellipsoid_point(h: Vector3<f64>, u: Vector3<f64>) -> (Vector3<f64>, Vector3<f64>) {
    (h.component_mul(&u), u.component_div(&h).normalize())
}

fn half_extents(rng: &mut Pcg64) -> Vector3<f64> {
    Vector3::from_fn(|_, _| rng.gen_range(0.01..0.08))
}

fn random_sign(rng: &mut Pcg64) -> f64 {
    if rng.gen_bool(0.5) {
        1.0
    } else {
        -1.0
    }
}

fn log_uniform(rng: &mut Pcg64, lo: f64, hi: f64) -> f64 {
    rng.gen_range(lo.ln()..hi.ln()).exp()
}

/// Uniform on the unit sphere (rejection from the cube).
fn unit_vector(rng: &mut Pcg64) -> Vector3<f64> {
    loop {
        let v = Vector3::from_fn(|_, _| rng.gen_range(-1.0..1.0));
        let n = v.norm();
        if n > 1e-3 && n <= 1.0 {
            return v / n;
        }
    }
}

/// Uniform on SO(3): a unit quaternion uniform on the 3-sphere.
fn random_rotation(rng: &mut Pcg64) -> UnitQuaternion<f64> {
    loop {
        let q = Quaternion::new(
            rng.gen_range(-1.0..1.0),
            rng.gen_range(-1.0..1.0),
            rng.gen_range(-1.0..1.0),
            rng.gen_range(-1.0..1.0),
        );
        let n = q.norm();
        if n > 1e-3 && n <= 1.0 {
            return UnitQuaternion::from_quaternion(q);
        }
    }
}

/// `problem` with each contact slipped from its stick anchor
/// ([`FrictionContact::slip`](haptic_friction::FrictionContact::slip)) by up to
/// `max_slip` (m) in a random tangential direction, and not at all on one
/// problem in four: the pre-sliding model's instances.
pub fn with_anchor_slips(
    mut problem: StaticFrictionProblem,
    max_slip: f64,
    rng: &mut Pcg64,
) -> StaticFrictionProblem {
    let slipping = rng.gen_bool(0.75);
    for c in &mut problem.contacts {
        let (u, v) = c.tangents();
        let a = rng.gen_range(0.0..std::f64::consts::TAU);
        let r = if slipping {
            rng.gen_range(0.0..max_slip)
        } else {
            0.0
        };
        c.slip = (u * a.cos() + v * a.sin()) * r;
    }
    problem
}
