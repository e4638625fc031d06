//! Cases with known answers: a box on a plane, one, two and three collinear
//! contacts against the QP's KKT system, frictionless contacts, no contact,
//! the iteration cap and invalid input.

mod fast_common;

use fast_common::{
    block_mass, build_problem, check_solution, equilibrium_residual, pyramid_violation,
    random_problem, relative, support_value, wrench_of, Layout, Spring,
};
use haptic_core::Vector6;
use haptic_friction::{
    FastSolverParameters, FastStaticFrictionSolver, FrictionSolution, FrictionState,
    MembershipStatus, SolverError, StaticFrictionProblem, StaticFrictionSolver,
};
use nalgebra::{Matrix3, Vector3};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

const HALF: f64 = 0.5;
const WEIGHT: f64 = 10.0;
const MU: f64 = 0.5;

/// A box of half-width 0.5 pressed on the plane z = 0 by its weight, the
/// reference point `height` above the bottom face's centre, corners on the
/// plane; `push` is the net wrench with the normal forces balanced.
fn box_on_plane(height: f64, push: Vector6, sides: usize) -> StaticFrictionProblem {
    let springs: Vec<Spring> = [(1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0)]
        .iter()
        .map(|&(sx, sy)| Spring {
            handle: Vector3::new(sx * HALF, sy * HALF, -height),
            normal: Vector3::z(),
            stiffness: 1000.0,
            depth: WEIGHT / 4.0 / 1000.0,
            friction: MU,
        })
        .collect();
    let normal: Vector6 = springs
        .iter()
        .map(|s| wrench_of(&s.handle, &(s.stiffness * s.depth * s.normal)))
        .sum();
    let inertia = Matrix3::from_diagonal_element(1.0 / 6.0);
    build_problem(
        &springs,
        push - normal,
        500.0,
        100.0,
        block_mass(1.0, inertia),
        sides,
    )
}

fn solve(p: &StaticFrictionProblem) -> (FrictionSolution, haptic_friction::FastSolveReport) {
    let mut solver = FastStaticFrictionSolver::new(64, 16);
    let mut solution = FrictionSolution::with_capacity(64);
    solver.solve(p, &mut solution).unwrap();
    (solution, *solver.report())
}

fn force(w: Vector3<f64>) -> Vector6 {
    Vector6::new(w.x, w.y, w.z, 0.0, 0.0, 0.0)
}

/// World direction of a friction force `(cos a, sin a)` in the tangent frame of the plane.
fn tangential(angle: f64) -> Vector3<f64> {
    let (u, v) = box_on_plane(0.0, Vector6::zeros(), 4).contacts[0].tangents();
    u * angle.cos() + v * angle.sin()
}

/// Pushed along a side normal of the pyramid (θ_0 = π/ℓ), friction holds up
/// to exactly μ·weight (eq 13 summed over the corners); along a vertex
/// direction up to μ·weight / cos(π/ℓ). Below: static, `Δq = 0`, friction
/// cancels the push. Above: sliding, and the push direction separates.
#[test]
fn box_on_plane_holds_below_mu_weight_and_slides_above() {
    for sides in [4, 8] {
        let half_angle = std::f64::consts::PI / sides as f64;
        for (angle, capacity) in [
            (half_angle, MU * WEIGHT),
            (0.0, MU * WEIGHT / half_angle.cos()),
        ] {
            let friction = tangential(angle);
            let below = box_on_plane(0.0, force(-0.99 * capacity * friction), sides);
            let (s, report) = solve(&below);
            assert_eq!(s.state, FrictionState::Static, "ℓ = {sides}");
            assert_eq!(report.rank, 3);
            assert!(s.displacement.norm() <= 1e-15, "Δq = {:?}", s.displacement);
            let total = below
                .contacts
                .iter()
                .zip(&s.beta)
                .fold(Vector3::zeros(), |t, (c, b)| {
                    let (u, v) = c.tangents();
                    t + u * b[0] + v * b[1]
                });
            assert!((total - 0.99 * capacity * friction).norm() <= 1e-9 * capacity);
            assert!(pyramid_violation(&below, &s.beta) <= 1e-12);
            check_solution(&below, &s, &report);

            let above = box_on_plane(0.0, force(-1.01 * capacity * friction), sides);
            let (s, report) = solve(&above);
            assert_eq!(s.state, FrictionState::Sliding, "ℓ = {sides}");
            assert_eq!(report.status, MembershipStatus::Separated);
            assert_eq!(s.displacement, above.frictionless_displacement().unwrap());
            let d = force(friction);
            assert!((support_value(&above, &d) - capacity).abs() <= 1e-12 * capacity);
            assert!(d.dot(&(-above.wrench)) > support_value(&above, &d));
            check_solution(&above, &s, &report);
        }
    }
}

/// ℓ = 4 on the box (tangents ŷ, −x̂, so the pyramid's vertices point along
/// ±x̂, ±ŷ): pushing along x̂ holds up to 4√2ρ and twisting about ẑ up to
/// 4·a·√2ρ. Half of each is a midpoint of two points of `Z`: static. 0.8 of
/// each is cut off by `d = (x̂, ẑ/a)`, whose support value is 6√2ρ < 6.4√2ρ.
#[test]
fn box_on_plane_under_a_push_and_a_torque() {
    let rho = MU * WEIGHT / 4.0;
    let push = 4.0 * std::f64::consts::SQRT_2 * rho;
    let twist = HALF * push;
    let load = |t: f64| Vector6::new(-t * push, 0.0, 0.0, 0.0, 0.0, -t * twist);

    let held = box_on_plane(0.0, load(0.5), 4);
    let (s, report) = solve(&held);
    assert_eq!(s.state, FrictionState::Static);
    assert!(s.displacement.norm() <= 1e-15);
    check_solution(&held, &s, &report);

    let turned = box_on_plane(0.0, load(0.8), 4);
    let d = Vector6::new(1.0, 0.0, 0.0, 0.0, 0.0, 1.0 / HALF);
    let h = support_value(&turned, &d);
    assert!((h - 6.0 * std::f64::consts::SQRT_2 * rho).abs() <= 1e-12);
    assert!(d.dot(&(-turned.wrench)) > h);
    let (s, report) = solve(&turned);
    assert_eq!(s.state, FrictionState::Sliding);
    check_solution(&turned, &s, &report);
}

/// With the reference point at the box's centre a horizontal push also tips
/// it: that moment is not in range(W) (rank 3), so the penalty springs take
/// it and the object moves (`Δq ≠ 0`) even while friction holds — the
/// displacement of eqs 32–34, checked against the KKT system.
#[test]
fn pushed_box_tilts_while_friction_holds() {
    let friction = tangential(std::f64::consts::FRAC_PI_4);
    let held = box_on_plane(HALF, force(-0.5 * MU * WEIGHT * friction), 4);
    let (s, report) = solve(&held);
    assert_eq!(s.state, FrictionState::Static);
    assert_eq!(report.rank, 3);
    assert!(s.displacement.fixed_rows::<3>(3).norm() > 1e-4);
    check_solution(&held, &s, &report);

    let pushed = box_on_plane(HALF, force(-1.5 * MU * WEIGHT * friction), 4);
    let (s, report) = solve(&pushed);
    assert_eq!(s.state, FrictionState::Sliding);
    check_solution(&pushed, &s, &report);
}

/// Normals that agree only to single precision (an SDF gradient on a flat
/// face) still make one plane: rank 3 and the exact box's answer. A real
/// tilt of 10⁻³ makes `W` full rank.
#[test]
fn nearly_coplanar_normals_count_as_coplanar() {
    let friction = tangential(std::f64::consts::FRAC_PI_4);
    let exact = box_on_plane(HALF, force(-0.5 * MU * WEIGHT * friction), 4);
    let (reference, _) = solve(&exact);
    for (tilt, rank) in [(1e-7, 3), (1e-3, 6)] {
        let mut p = exact.clone();
        for (i, c) in p.contacts.iter_mut().enumerate() {
            let wobble = Vector3::new(i as f64 - 1.5, 0.5 - (i % 2) as f64, 0.0) * tilt;
            c.normal = (c.normal + wobble).normalize();
        }
        let (s, report) = solve(&p);
        assert_eq!(report.rank, rank, "tilt {tilt}");
        if rank == 3 {
            // The exact LP sees six (tiny) singular values; the tolerance
            // trades them for a relative equilibrium error of about `tilt`.
            assert_eq!(s.state, reference.state);
            assert!(
                (s.displacement - reference.displacement).norm()
                    <= 1e-5 * reference.displacement.norm()
            );
            assert!(relative(&report, &equilibrium_residual(&p, &s)) <= 1e-6);
            assert!(pyramid_violation(&p, &s.beta) <= 1e-12);
        } else {
            check_solution(&p, &s, &report);
        }
    }
}

/// One contact (rank 2), two (rank 4: four tangential columns) and three on
/// a line (rank 5: no moment about the line): `Δq`, `β` and the target
/// wrench agree with the KKT system of eqs 28–30 over a sweep of loads that
/// crosses from static to sliding.
#[test]
fn few_contacts_match_the_kkt_equilibrium() {
    let mut rng = Pcg64::seed_from_u64(7);
    for (k, layout, rank) in [
        (1, Layout::Generic, 2),
        (2, Layout::Generic, 4),
        (3, Layout::Collinear, 5),
        (7, Layout::Collinear, 5),
    ] {
        let mut seen = [false; 2];
        for _ in 0..40 {
            let base = random_problem(&mut rng, k, 8, layout);
            let direction = Vector6::from_fn(|_, _| rng.gen_range(-1.0..1.0));
            for t in [0.0, 0.1, 0.3, 1.0, 3.0, 10.0] {
                let mut p = base.clone();
                p.wrench += direction * t;
                let (s, report) = solve(&p);
                assert_eq!(report.rank, rank);
                match check_solution(&p, &s, &report) {
                    FrictionState::Static => seen[0] = true,
                    _ => seen[1] = true,
                }
            }
        }
        assert_eq!(seen, [true, true], "{k} contacts");
    }
}

/// μ = 0: without friction the LP reduces to eqs 7–8, so `Δq = −H⁻¹f`
/// whatever the state. Static only when the wrench is balanced by the
/// displacement alone: `f = −HΔq` with `Δq = M̄⁻¹Kᵀλ`, `λ ∈ null(Wᵀ)`.
#[test]
fn frictionless_contacts_reduce_to_the_linear_system() {
    let mut rng = Pcg64::seed_from_u64(11);
    for n in 0..90 {
        let layout = [Layout::Generic, Layout::Collinear, Layout::Coplanar][n % 3];
        let k = rng.gen_range(1..=12);
        let mut p = random_problem(&mut rng, k, 4, layout);
        p.contacts
            .iter_mut()
            .for_each(|c| c.friction_coefficient = 0.0);
        let (s, report) = solve(&p);
        assert_eq!(s.state, FrictionState::Sliding);
        check_solution(&p, &s, &report);
    }

    let mut p = random_problem(&mut rng, 1, 4, Layout::Generic);
    p.contacts[0].friction_coefficient = 0.0;
    let normal = p.contacts[0].normal;
    let lambda = Vector6::new(normal.x, normal.y, normal.z, 0.0, 0.0, 0.0);
    let dq = p
        .mass
        .lu()
        .solve(&(-p.stiffness.transpose() * lambda))
        .unwrap();
    p.wrench = -p.stiffness * dq;
    let (s, report) = solve(&p);
    assert_eq!(s.state, FrictionState::Static);
    assert_eq!(s.beta, vec![[0.0, 0.0]]);
    assert!((s.displacement - dq).norm() <= 1e-12 * dq.norm());
    check_solution(&p, &s, &report);
}

#[test]
fn no_contact_is_free() {
    let mut rng = Pcg64::seed_from_u64(5);
    let mut p = random_problem(&mut rng, 3, 4, Layout::Generic);
    p.contacts.clear();
    let (s, report) = solve(&p);
    assert_eq!(s.state, FrictionState::Free);
    assert!(s.beta.is_empty());
    assert_eq!(report.status, MembershipStatus::NoContact);
    let expected = p.frictionless_displacement().unwrap();
    assert!((s.displacement - expected).norm() <= 1e-14 * expected.norm());
}

/// At the iteration cap the band decides: with a band of 1 every capped
/// solve is static, the reported residual is the true one, β stays inside
/// the pyramids; with a band of 0 every capped solve slides.
#[test]
fn the_band_decides_at_the_iteration_cap() {
    let mut rng = Pcg64::seed_from_u64(13);
    let mut capped = 0;
    for _ in 0..100 {
        let p = random_problem(&mut rng, 20, 8, Layout::Generic);
        for band in [1.0, 0.0] {
            let params = FastSolverParameters {
                max_iterations: 2,
                band,
                ..FastSolverParameters::default()
            };
            let mut solver = FastStaticFrictionSolver::with_parameters(20, 8, params);
            let mut s = FrictionSolution::with_capacity(20);
            solver.solve(&p, &mut s).unwrap();
            let report = *solver.report();
            match report.status {
                MembershipStatus::BandContained => {
                    capped += 1;
                    assert_eq!(band, 1.0);
                    assert_eq!(s.state, FrictionState::Static);
                    let residual = relative(&report, &equilibrium_residual(&p, &s));
                    assert!((residual - report.residual).abs() <= 1e-9);
                    assert!(pyramid_violation(&p, &s.beta) <= 1e-12);
                }
                MembershipStatus::BandSeparated => {
                    assert_eq!(band, 0.0);
                    assert_eq!(s.state, FrictionState::Sliding);
                }
                _ => assert!(report.iterations <= 2),
            }
        }
    }
    assert!(capped > 10);
}

#[test]
fn invalid_input_is_an_error() {
    let mut rng = Pcg64::seed_from_u64(17);
    let mut solver = FastStaticFrictionSolver::new(4, 8);
    let mut s = FrictionSolution::with_capacity(8);
    let p = random_problem(&mut rng, 5, 8, Layout::Generic);
    assert!(matches!(
        solver.solve(&p, &mut s),
        Err(SolverError::Backend(_))
    ));
    let mut p = random_problem(&mut rng, 4, 8, Layout::Generic);
    p.pyramid_sides = 9;
    assert!(matches!(
        solver.solve(&p, &mut s),
        Err(SolverError::Backend(_))
    ));
    p.pyramid_sides = 8;
    p.stiffness = haptic_core::Matrix6::zeros();
    p.contacts
        .iter_mut()
        .for_each(|c| c.friction_coefficient = 0.0);
    assert_eq!(
        solver.solve(&p, &mut s),
        Err(SolverError::SingularStiffness)
    );
}
