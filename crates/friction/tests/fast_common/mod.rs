//! Shared by the `fast_*` tests: physically built problems, random instances
//! and checks that do not use the fast solver's reduction or support function.
#![allow(dead_code)]

use haptic_core::{skew, Matrix6, Vector6};
use haptic_friction::{
    FastSolveReport, FrictionContact, FrictionSolution, FrictionState, MembershipStatus,
    StaticFrictionProblem,
};
use nalgebra::{DMatrix, DVector, Matrix2, Matrix3, Vector2, Vector3};
use rand::Rng;
use rand_pcg::Pcg64;

/// A penalty contact: handle `r`, unit normal `N`, normal stiffness `k_n` and depth.
#[derive(Clone, Copy, Debug)]
pub struct Spring {
    pub handle: Vector3<f64>,
    pub normal: Vector3<f64>,
    pub stiffness: f64,
    pub depth: f64,
    pub friction: f64,
}

/// The problem of eq 9 with `H` from the penalty springs plus the coupling
/// (`−k_vc I`, `−k_vc,tor I`), and `f = f_vc + Σ (F_n, r × F_n)`.
pub fn build_problem(
    springs: &[Spring],
    coupling: Vector6,
    k_vc: f64,
    k_tor: f64,
    mass: Matrix6,
    sides: usize,
) -> StaticFrictionProblem {
    let mut wrench = coupling;
    let mut h = Matrix6::zeros();
    h.fixed_view_mut::<3, 3>(0, 0)
        .copy_from(&(-k_vc * Matrix3::identity()));
    h.fixed_view_mut::<3, 3>(3, 3)
        .copy_from(&(-k_tor * Matrix3::identity()));
    for s in springs {
        let force = s.stiffness * s.depth * s.normal;
        wrench += wrench_of(&s.handle, &force);
        // A point p = x + r moving by δx + δω × r changes the depth by −N·δp.
        let df_dx = -s.stiffness * s.normal * s.normal.transpose();
        let df_dw = -df_dx * skew(&s.handle);
        let dt_dx = skew(&s.handle) * df_dx;
        let dt_dw = skew(&s.handle) * df_dw + skew(&force) * skew(&s.handle);
        let mut block = h.fixed_view_mut::<3, 3>(0, 0);
        block += df_dx;
        let mut block = h.fixed_view_mut::<3, 3>(0, 3);
        block += df_dw;
        let mut block = h.fixed_view_mut::<3, 3>(3, 0);
        block += dt_dx;
        let mut block = h.fixed_view_mut::<3, 3>(3, 3);
        block += dt_dw;
    }
    StaticFrictionProblem {
        wrench,
        stiffness: h,
        mass,
        contacts: springs
            .iter()
            .map(|s| FrictionContact {
                handle: s.handle,
                normal: s.normal,
                normal_force: s.stiffness * s.depth,
                friction_coefficient: s.friction,
                slip: Vector3::zeros(),
            })
            .collect(),
        pyramid_sides: sides,
        deadline: None,
    }
}

/// `(F, r × F)`.
pub fn wrench_of(handle: &Vector3<f64>, force: &Vector3<f64>) -> Vector6 {
    let t = handle.cross(force);
    Vector6::new(force.x, force.y, force.z, t.x, t.y, t.z)
}

pub fn block_mass(mass: f64, inertia: Matrix3<f64>) -> Matrix6 {
    let mut m = Matrix6::zeros();
    m.fixed_view_mut::<3, 3>(0, 0)
        .copy_from(&(mass * Matrix3::identity()));
    m.fixed_view_mut::<3, 3>(3, 3).copy_from(&inertia);
    m
}

/// How a random instance's contacts are laid out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Layout {
    /// Points in a unit ball, random normals: rank W = 6 from three contacts.
    Generic,
    /// Points on one line, random normals: rank 5 from three contacts.
    Collinear,
    /// One face of a box, one normal: rank 3.
    Coplanar,
}

fn unit(rng: &mut Pcg64) -> Vector3<f64> {
    loop {
        let v = Vector3::new(
            rng.gen_range(-1.0..1.0),
            rng.gen_range(-1.0..1.0),
            rng.gen_range(-1.0..1.0),
        );
        let n = v.norm();
        if n > 0.1 && n <= 1.0 {
            return v / n;
        }
    }
}

/// A random instance of `k` contacts: the coupling cancels the normal wrench
/// up to a random wrench of 0–1.5 times the friction capacity, so that both
/// outcomes are common. Unit-free magnitudes of order one.
pub fn random_problem(
    rng: &mut Pcg64,
    k: usize,
    sides: usize,
    layout: Layout,
) -> StaticFrictionProblem {
    let axis = unit(rng);
    let plane_normal = unit(rng);
    let springs: Vec<Spring> = (0..k)
        .map(|_| {
            let handle = match layout {
                Layout::Generic => unit(rng) * rng.gen_range(0.2..1.0),
                Layout::Collinear => {
                    axis * rng.gen_range(-1.0..1.0) + Vector3::new(0.1, -0.2, 0.05)
                }
                Layout::Coplanar => {
                    let (u, v) = FrictionContact {
                        handle: Vector3::zeros(),
                        normal: plane_normal,
                        normal_force: 0.0,
                        friction_coefficient: 0.0,
                        slip: Vector3::zeros(),
                    }
                    .tangents();
                    u * rng.gen_range(-1.0..1.0) + v * rng.gen_range(-1.0..1.0) - 0.3 * plane_normal
                }
            };
            let normal = if layout == Layout::Coplanar {
                plane_normal
            } else {
                unit(rng)
            };
            Spring {
                handle,
                normal,
                stiffness: rng.gen_range(500.0..2000.0),
                depth: rng.gen_range(0.0..0.01),
                friction: rng.gen_range(0.1..1.0),
            }
        })
        .collect();
    let capacity: f64 = springs
        .iter()
        .map(|s| s.friction * s.stiffness * s.depth)
        .sum();
    let normal_wrench: Vector6 = springs
        .iter()
        .map(|s| wrench_of(&s.handle, &(s.stiffness * s.depth * s.normal)))
        .sum();
    let push = Vector6::from_fn(|_, _| rng.gen_range(-1.0..1.0)).normalize()
        * capacity
        * rng.gen_range(0.0..1.5);
    let inertia = {
        let q = nalgebra::Rotation3::from_scaled_axis(unit(rng) * rng.gen_range(0.0..3.0));
        let d = Matrix3::from_diagonal(&Vector3::new(
            rng.gen_range(0.05..0.3),
            rng.gen_range(0.05..0.3),
            rng.gen_range(0.05..0.3),
        ));
        q.matrix() * d * q.matrix().transpose()
    };
    build_problem(
        &springs,
        push - normal_wrench,
        rng.gen_range(200.0..1000.0),
        rng.gen_range(50.0..300.0),
        block_mass(rng.gen_range(0.5..2.0), inertia),
        sides,
    )
}

/// `W` (6×2k) from the problem's own `wrench_basis`.
pub fn wrench_matrix(p: &StaticFrictionProblem) -> DMatrix<f64> {
    let k = p.contacts.len();
    let mut w = DMatrix::zeros(6, 2 * k);
    for (i, c) in p.contacts.iter().enumerate() {
        w.view_mut((0, 2 * i), (6, 2)).copy_from(&c.wrench_basis());
    }
    w
}

/// The QP of eqs 28–30 (no pyramid), solved densely through its KKT system
/// `M̄Δq + Hᵀλ = 0`, `Wᵀλ = 0`, `HΔq + Wβ = −f`. `β` is not unique, so the
/// KKT matrix is singular: proximal-point iterations (`+ ε/2 ‖β − β_prev‖²`)
/// make each solve regular and converge to a solution of the exact system.
/// `Δq = Δq'/κ`, `λ = λ'/κ²` with `κ = max|H| / max|M̄|` keep every block of
/// order one. Returns the unique `Δq` and `g = Wβ = −f − HΔq`.
pub fn qp_equilibrium(p: &StaticFrictionProblem) -> (Vector6, Vector6) {
    let k = p.contacts.len();
    let n = 12 + 2 * k;
    let kappa = p.stiffness.amax() / p.mass.amax();
    let h = p.stiffness / kappa;
    let w = wrench_matrix(p);
    let mut a = DMatrix::zeros(n, n);
    a.view_mut((0, 0), (6, 6)).copy_from(&p.mass);
    a.view_mut((0, 6 + 2 * k), (6, 6)).copy_from(&h.transpose());
    a.view_mut((6, 6 + 2 * k), (2 * k, 6))
        .copy_from(&w.transpose());
    a.view_mut((6 + 2 * k, 0), (6, 6)).copy_from(&h);
    a.view_mut((6 + 2 * k, 6), (6, 2 * k)).copy_from(&w);
    let mut b = DVector::zeros(n);
    b.rows_mut(6 + 2 * k, 6).copy_from(&(-p.wrench));
    let epsilon = 1e-6;
    let mut regular = a.clone();
    for i in 6..6 + 2 * k {
        regular[(i, i)] = epsilon;
    }
    let lu = regular.full_piv_lu();
    let mut x = DVector::zeros(n);
    for _ in 0..1000 {
        let mut rhs = b.clone();
        for i in 6..6 + 2 * k {
            rhs[i] = epsilon * x[i];
        }
        let next = lu.solve(&rhs).expect("regular KKT");
        let change = (&next - &x).norm();
        x = next;
        if change <= 1e-15 * x.norm() {
            break;
        }
    }
    assert!(
        (&a * &x - &b).norm() <= 1e-10 * b.norm().max(1e-300),
        "KKT system solved inaccurately {:e}",
        (&a * &x - &b).norm() / b.norm()
    );
    let dq = Vector6::from_iterator(x.rows(0, 6).iter().copied()) / kappa;
    (dq, -p.wrench - p.stiffness * dq)
}

/// The vertices of contact `i`'s pyramid section (eq 13), each the crossing
/// of two consecutive side lines.
pub fn polygon(p: &StaticFrictionProblem, i: usize) -> Vec<Vector2<f64>> {
    let sides: Vec<Vector2<f64>> = p.side_directions().collect();
    let rho = p.contacts[i].friction_limit();
    (0..sides.len())
        .map(|j| {
            let next = sides[(j + 1) % sides.len()];
            let a = Matrix2::new(sides[j].x, sides[j].y, next.x, next.y);
            a.lu().solve(&Vector2::new(rho, rho)).expect("sides cross")
        })
        .collect()
}

/// `h_Z(d) = Σ_i max_v ⟨W_iᵀ d, v⟩` by enumeration of the vertices.
pub fn support_value(p: &StaticFrictionProblem, d: &Vector6) -> f64 {
    p.contacts
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let a = c.wrench_basis().transpose() * d;
            polygon(p, i)
                .iter()
                .map(|v| a.dot(v))
                .fold(f64::NEG_INFINITY, f64::max)
        })
        .sum()
}

/// `max_{i,j} β_i · (cos θ_j, sin θ_j) − μ_i‖F_n^i‖`: ≤ 0 inside every pyramid (eq 13).
pub fn pyramid_violation(p: &StaticFrictionProblem, beta: &[[f64; 2]]) -> f64 {
    p.contacts
        .iter()
        .zip(beta)
        .flat_map(|(c, b)| {
            p.side_directions()
                .map(move |u| b[0] * u.x + b[1] * u.y - c.friction_limit())
        })
        .fold(f64::NEG_INFINITY, f64::max)
}

/// `f + HΔq + Wβ` (eqs 35–36).
pub fn equilibrium_residual(p: &StaticFrictionProblem, s: &FrictionSolution) -> Vector6 {
    let mut r = p.wrench + p.stiffness * s.displacement;
    for (c, b) in p.contacts.iter().zip(&s.beta) {
        r += c.wrench_basis() * Vector2::new(b[0], b[1]);
    }
    r
}

/// A wrench with torques divided by the report's length scale, over its force scale.
pub fn relative(report: &FastSolveReport, w: &Vector6) -> f64 {
    let l = report.length_scale;
    Vector6::new(w[0], w[1], w[2], w[3] / l, w[4] / l, w[5] / l).norm() / report.force_scale
}

/// Checks every property the solution must have, independently of the
/// solver's internals; returns the state.
pub fn check_solution(
    p: &StaticFrictionProblem,
    s: &FrictionSolution,
    report: &FastSolveReport,
) -> FrictionState {
    let k = p.contacts.len();
    assert_eq!(s.beta.len(), k);
    let largest_limit = p
        .contacts
        .iter()
        .map(|c| c.friction_limit())
        .fold(0.0, f64::max);
    assert!(report.force_scale >= largest_limit);
    let (dq_qp, g_qp) = qp_equilibrium(p);
    let frictionless = p.frictionless_displacement().expect("H regular");
    let dq_scale = dq_qp.norm().max(frictionless.norm()).max(1e-300);
    assert!(
        relative(report, &(report.target - g_qp)) <= 1e-7,
        "target {:?} vs the KKT's {:?}",
        report.target,
        g_qp
    );
    match s.state {
        FrictionState::Static => {
            assert!(matches!(
                report.status,
                MembershipStatus::Contained | MembershipStatus::BandContained
            ));
            let residual = relative(report, &equilibrium_residual(p, s));
            let bound = if report.status == MembershipStatus::Contained {
                1e-8
            } else {
                1e-6
            };
            assert!(residual <= bound, "f + HΔq + Wβ = {residual:e} relative");
            assert!(
                pyramid_violation(p, &s.beta) <= 1e-12 * report.force_scale,
                "β outside a pyramid by {:e}",
                pyramid_violation(p, &s.beta)
            );
            assert!(
                (s.displacement - dq_qp).norm() <= 1e-7 * dq_scale,
                "Δq {:?} vs the KKT's {:?}",
                s.displacement,
                dq_qp
            );
        }
        FrictionState::Sliding => {
            assert!(s.beta.iter().all(|b| *b == [0.0, 0.0]));
            assert!((s.displacement - frictionless).norm() <= 1e-9 * frictionless.norm());
            if report.status == MembershipStatus::Separated {
                let d = report.separating_direction;
                let margin = d.dot(&g_qp) - support_value(p, &d);
                assert!(
                    margin > 0.5 * report.separation * report.force_scale,
                    "certificate fails: margin {margin:e}"
                );
            } else {
                assert_eq!(report.status, MembershipStatus::BandSeparated);
            }
        }
        FrictionState::Free => assert_eq!(k, 0),
    }
    s.state
}
