//! Cases with known answers, run through the reduced LP, the unreduced LP
//! and the QP: a box resting on a plane, one contact, zero friction, the
//! pyramid's inscribed and corner radii (eq 13), no contacts.

use haptic_core::{Matrix6, Vector6};
use std::f64::consts::PI;

use haptic_friction::{
    reduce, FrictionContact, FrictionSolution, FrictionState, FullLpSolver, QpSolver,
    ReferenceLpSolver, StaticFrictionProblem, StaticFrictionSolver,
};
use haptic_testkit::instances::{penalty_stiffness, Family, Instance, InstanceSpec};
use nalgebra::{Vector2, Vector3};

/// The three solvers' answers.
fn solve_all(p: &StaticFrictionProblem) -> [FrictionSolution; 3] {
    let mut solvers: [Box<dyn StaticFrictionSolver>; 3] = [
        Box::new(ReferenceLpSolver::default()),
        Box::new(FullLpSolver::default()),
        Box::new(QpSolver::default()),
    ];
    solvers.each_mut().map(|solver| {
        let mut s = FrictionSolution::with_capacity(p.contacts.len());
        solver.solve(p, &mut s).unwrap();
        s
    })
}

fn mass_norm(mass: &Matrix6, v: &Vector6) -> f64 {
    v.dot(&(mass * v)).sqrt()
}

fn wrench(force: Vector3<f64>, torque: Vector3<f64>) -> Vector6 {
    Vector6::new(force.x, force.y, force.z, torque.x, torque.y, torque.z)
}

fn mass(m: f64, inertia: f64) -> Matrix6 {
    Matrix6::from_diagonal(&Vector6::new(m, m, m, inertia, inertia, inertia))
}

const WEIGHT: f64 = 10.0;

/// A 10 × 6 cm box pressed on the plane z = 0 with force `WEIGHT` by the
/// coupling, four corner contacts sharing it, the reference point at the
/// centre of the bottom face, pushed horizontally by `push` there.
fn box_on_plane(mu: f64, sides: usize, push: Vector3<f64>) -> StaticFrictionProblem {
    let contacts: Vec<FrictionContact> = [(1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0)]
        .map(|(sx, sy)| FrictionContact {
            handle: Vector3::new(0.05 * sx, 0.03 * sy, 0.0),
            normal: Vector3::z(),
            normal_force: WEIGHT / 4.0,
            friction_coefficient: mu,
            slip: Vector3::zeros(),
        })
        .into();
    // Normal forces and coupling cancel (their torques cancel by symmetry).
    StaticFrictionProblem {
        wrench: wrench(push, Vector3::zeros()),
        stiffness: penalty_stiffness(&contacts, 2500.0, 1000.0, 2.0),
        mass: mass(0.5, 2e-4),
        contacts,
        pyramid_sides: sides,
        deadline: None,
    }
}

/// The largest push the pyramids hold when friction must supply `-push`:
/// `μ Σ‖F_n‖ / max_j cos(ψ − θ_j)` for `ψ` the direction of `-push` in the
/// contacts' common `(T_u, T_v)` frame (eq 13).
fn push_limit(p: &StaticFrictionProblem, push: Vector3<f64>) -> f64 {
    let (u, v) = p.contacts[0].tangents();
    let beta = -push.normalize();
    let direction = Vector2::new(beta.dot(&u), beta.dot(&v));
    let support = p
        .side_directions()
        .map(|side| side.dot(&direction))
        .fold(f64::NEG_INFINITY, f64::max);
    p.contacts.iter().map(|c| c.friction_limit()).sum::<f64>() / support
}

#[test]
fn a_box_on_a_plane_holds_below_mu_weight_and_slides_above_the_corner_radius() {
    let mu = 0.4;
    for sides in [4, 8] {
        for k in 0..24 {
            let angle = 2.0 * PI * k as f64 / 24.0 + 0.1;
            let direction = Vector3::new(angle.cos(), angle.sin(), 0.0);

            let p = box_on_plane(mu, sides, direction * 0.99 * mu * WEIGHT);
            let free = mass_norm(&p.mass, &p.frictionless_displacement().unwrap());
            for s in solve_all(&p) {
                assert_eq!(s.state, FrictionState::Static, "ℓ = {sides}, {angle}");
                // The object does not move, and friction balances the push.
                assert!(mass_norm(&p.mass, &s.displacement) <= 1e-7 * free);
                let total: Vector3<f64> = p
                    .contacts
                    .iter()
                    .zip(&s.beta)
                    .map(|(c, b)| {
                        let (u, v) = c.tangents();
                        u * b[0] + v * b[1]
                    })
                    .sum();
                assert!((total + direction * 0.99 * mu * WEIGHT).norm() < 1e-6 * WEIGHT);
            }

            let corner = mu * WEIGHT / (PI / sides as f64).cos();
            let p = box_on_plane(mu, sides, direction * 1.01 * corner);
            let free = p.frictionless_displacement().unwrap();
            for s in solve_all(&p) {
                assert_eq!(s.state, FrictionState::Sliding, "ℓ = {sides}, {angle}");
                assert_eq!(s.displacement, free);
            }
        }
    }
}

/// Between `μW` and `μW / cos(π/ℓ)` the direction decides: the limit is the
/// pyramid's support in the push direction, exact to 10⁻³ for ℓ = 3, 4, 8 at
/// face normals, corners and in between.
#[test]
fn the_friction_limit_follows_the_pyramid() {
    let mu = 0.7;
    for sides in [3, 4, 8] {
        let probe = box_on_plane(mu, sides, Vector3::x());
        let (u, v) = probe.contacts[0].tangents();
        // Directions of β = −push in (T_u, T_v): every face normal θ_j, every
        // corner 2πj/ℓ, and a few others.
        let faces = (0..sides).map(|j| (2 * j + 1) as f64 * PI / sides as f64);
        let corners = (0..sides).map(|j| 2.0 * PI * j as f64 / sides as f64);
        for psi in faces.chain(corners).chain([0.3, 1.9, 4.4]) {
            let push = -(u * psi.cos() + v * psi.sin());
            let limit = push_limit(&probe, push);
            let expected = if (0..sides)
                .any(|j| ((2 * j + 1) as f64 * PI / sides as f64 - psi).abs() < 1e-12)
            {
                mu * WEIGHT
            } else if (0..sides).any(|j| (2.0 * PI * j as f64 / sides as f64 - psi).abs() < 1e-12) {
                mu * WEIGHT / (PI / sides as f64).cos()
            } else {
                limit
            };
            assert!(
                (limit - expected).abs() < 1e-12 * expected,
                "ℓ = {sides}, ψ = {psi}"
            );
            for (scale, state) in [
                (1.0 - 1e-3, FrictionState::Static),
                (1.0 + 1e-3, FrictionState::Sliding),
            ] {
                let p = box_on_plane(mu, sides, push * limit * scale);
                for s in solve_all(&p) {
                    assert_eq!(s.state, state, "ℓ = {sides}, ψ = {psi}, × {scale}");
                }
            }
        }
    }
}

/// Pushed 4 cm above the plane, the box also feels a tipping torque: the
/// normal forces rebalance it through a small tilt (`λ ∈ null(Wᵀ)`), which
/// shifts the horizontal limit a
/// little through the coupling: held at 0.9 `μW`, sliding at 1.1 times the
/// corner radius.
#[test]
fn a_box_pushed_above_the_plane_tilts_slightly_but_holds() {
    let mu = 0.5;
    for sides in [4, 8] {
        for k in 0..8 {
            let angle = 2.0 * PI * k as f64 / 8.0 + 0.2;
            let direction = Vector3::new(angle.cos(), angle.sin(), 0.0);
            let corner = 1.0 / (PI / sides as f64).cos();
            for (scale, state) in [
                (0.9, FrictionState::Static),
                (1.1 * corner, FrictionState::Sliding),
            ] {
                let force = direction * scale * mu * WEIGHT;
                let mut p = box_on_plane(mu, sides, force);
                let lift = Vector3::new(0.0, 0.0, -0.04);
                for c in &mut p.contacts {
                    c.handle += lift;
                }
                p.stiffness = penalty_stiffness(&p.contacts, 2500.0, 1000.0, 2.0);
                // Normal forces at the lifted handles still cancel the coupling.
                p.wrench = wrench(force, Vector3::zeros());
                let [a, b, c] = solve_all(&p);
                for s in [&a, &b, &c] {
                    assert_eq!(s.state, state, "ℓ = {sides}, {angle}, × {scale}");
                }
                if state == FrictionState::Static {
                    assert_eq!(reduce(&p).unwrap().rank, 3);
                    // Friction holds the sliding directions: the reference
                    // point only swings with the tilt (< 2 % of the
                    // frictionless way), and does not spin.
                    let free = p.frictionless_displacement().unwrap();
                    let horizontal = |v: &Vector6| v.fixed_rows::<2>(0).norm();
                    assert!(horizontal(&a.displacement) < 0.02 * horizontal(&free));
                    assert!(a.displacement[5].abs() < 1e-12 * free.norm());
                    for s in [&b, &c] {
                        let gap = mass_norm(&p.mass, &(s.displacement - a.displacement));
                        assert!(gap < 1e-6 * mass_norm(&p.mass, &free));
                    }
                }
            }
        }
    }
}

/// One contact at the reference point with normal `n`, coupling stiffness
/// 800 N/m and 3 N·m/rad, contact stiffness 5000 N/m.
fn one_contact(n: Vector3<f64>, mu: f64, sides: usize, f: Vector6) -> StaticFrictionProblem {
    let contacts = vec![FrictionContact {
        handle: Vector3::zeros(),
        normal: n.normalize(),
        normal_force: 5.0,
        friction_coefficient: mu,
        slip: Vector3::zeros(),
    }];
    StaticFrictionProblem {
        wrench: f,
        stiffness: penalty_stiffness(&contacts, 5000.0, 800.0, 3.0),
        mass: mass(0.3, 1e-4),
        contacts,
        pyramid_sides: sides,
        deadline: None,
    }
}

/// A tangential push at a single contact is held exactly when `−push` lies
/// in the pyramid (`g = −f`, `Δq = 0`); then `β = −push`.
#[test]
fn one_contact_holds_a_tangential_push_inside_its_pyramid() {
    let n = Vector3::new(0.3, -0.2, 0.93).normalize();
    let mu = 0.6;
    for sides in [4, 8] {
        let probe = one_contact(n, mu, sides, Vector6::zeros());
        let (u, v) = probe.contacts[0].tangents();
        for k in 0..16 {
            let psi = 2.0 * PI * k as f64 / 16.0 + 0.05;
            let push = -(u * psi.cos() + v * psi.sin());
            let limit = push_limit(&probe, push);
            assert!(limit >= mu * 5.0 - 1e-12);
            assert!(limit <= mu * 5.0 / (PI / sides as f64).cos() + 1e-12);
            for (scale, state) in [
                (1.0 - 1e-3, FrictionState::Static),
                (1.0 + 1e-3, FrictionState::Sliding),
            ] {
                let force = push * limit * scale;
                let p = one_contact(n, mu, sides, wrench(force, Vector3::zeros()));
                for s in solve_all(&p) {
                    assert_eq!(s.state, state, "ℓ = {sides}, ψ = {psi}");
                    if state == FrictionState::Static {
                        assert!(s.displacement.norm() < 1e-9);
                        let beta = u * s.beta[0][0] + v * s.beta[0][1];
                        assert!((beta + force).norm() < 1e-6 * force.norm());
                    }
                }
            }
        }
    }
}

/// A push along the normal of a single contact needs no friction, whatever
/// `μ`: static, `β = 0`, and the contact deepens by `p / (k_vc + k_n)`.
#[test]
fn one_contact_pushed_along_its_normal_sinks_in_statically() {
    let n = Vector3::new(-0.5, 0.1, 0.86).normalize();
    for mu in [0.0, 0.5] {
        for sides in [4, 8] {
            let p = one_contact(n, mu, sides, wrench(n * 2.0, Vector3::zeros()));
            let expected = wrench(n * 2.0 / (800.0 + 5000.0), Vector3::zeros());
            assert!(reduce(&p).unwrap().friction_wrench.norm() < 1e-12);
            for s in solve_all(&p) {
                assert_eq!(s.state, FrictionState::Static, "μ = {mu}, ℓ = {sides}");
                assert!((s.displacement - expected).norm() < 1e-7 * expected.norm());
                assert!(s.beta[0][0].abs() < 1e-7 && s.beta[0][1].abs() < 1e-7);
            }
        }
    }
}

/// With `μ = 0` everywhere the object is static exactly when friction has
/// nothing to do, `g = 0`: for random wrenches it slides; for
/// `f = K M̄⁻¹ Kᵀ λ` with `λ ∈ null(Wᵀ)` (so `g = Sλ − f = 0`) it is static
/// and `Δq = M̄⁻¹Kᵀλ = −H⁻¹f`, the frictionless displacement.
#[test]
fn zero_friction_is_static_only_without_tangential_load() {
    let families = [
        Family::Generic,
        Family::OneContact,
        Family::TwoContacts,
        Family::Collinear,
        Family::Coplanar,
    ];
    for seed in 0..60u64 {
        let spec = InstanceSpec {
            family: families[seed as usize % 5],
            contacts: 2 + seed as usize % 9,
            pyramid_sides: [4, 8][seed as usize % 2],
            seed,
        };
        let mut p = Instance::generate(&spec).problem;
        for c in &mut p.contacts {
            c.friction_coefficient = 0.0;
        }
        let free = p.frictionless_displacement().unwrap();
        // A floor for f = 0 (rank W = 6 leaves λ = 0).
        let floor = 1e-9 * mass_norm(&p.mass, &free);
        assert!(reduce(&p).unwrap().friction_wrench.norm() > 1e-6 * p.wrench.norm());
        for s in solve_all(&p) {
            assert_eq!(s.state, FrictionState::Sliding, "{spec:?}");
            assert_eq!(s.displacement, free);
        }

        // λ in null(Wᵀ): eigenvectors of WWᵀ with zero eigenvalue.
        let rank = reduce(&p).unwrap().rank;
        let mut w = nalgebra::DMatrix::zeros(6, 2 * p.contacts.len());
        for (i, c) in p.contacts.iter().enumerate() {
            w.fixed_view_mut::<6, 2>(0, 2 * i)
                .copy_from(&c.wrench_basis());
        }
        let gram = Matrix6::from_iterator((&w * w.transpose()).iter().copied());
        let eigen = gram.symmetric_eigen();
        let mut order: Vec<usize> = (0..6).collect();
        order.sort_by(|&a, &b| eigen.eigenvalues[a].total_cmp(&eigen.eigenvalues[b]));
        let mut lambda = Vector6::zeros();
        for (j, &i) in order.iter().take(6 - rank).enumerate() {
            lambda += eigen.eigenvectors.column(i) * (1.0 + j as f64);
        }
        let k = -p.stiffness;
        let m_inv_kt = p.mass.cholesky().unwrap().solve(&k.transpose());
        // Sized like the normal forces.
        let f = k * m_inv_kt * lambda;
        let size = p.contacts.iter().map(|c| c.normal_force).sum::<f64>() / f.norm().max(1e-300);
        p.wrench = f * size;
        let expected = m_inv_kt * lambda * size;
        let scale = mass_norm(&p.mass, &expected);
        for s in solve_all(&p) {
            assert_eq!(s.state, FrictionState::Static, "{spec:?}, rank {rank}");
            assert!(mass_norm(&p.mass, &(s.displacement - expected)) <= 1e-6 * scale + floor);
        }
    }
}

#[test]
fn without_contacts_the_object_is_free() {
    let mut p = one_contact(Vector3::z(), 0.5, 8, wrench(Vector3::x(), Vector3::y()));
    p.contacts.clear();
    let free = p.frictionless_displacement().unwrap();
    for s in solve_all(&p) {
        assert_eq!(s.state, FrictionState::Free);
        assert_eq!(s.displacement, free);
        assert!(s.beta.is_empty());
    }
}
