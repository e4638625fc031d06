//! The instance generator: deterministic, physically plausible, each family
//! with the rank of `W` it promises, and a stiffness that matches finite
//! differences of the penalty wrench.

use haptic_core::Vector6;
use haptic_friction::{
    reduce, FrictionContact, FrictionSolution, FrictionState, ReferenceLpSolver,
    StaticFrictionSolver,
};
use haptic_testkit::instances::{penalty_stiffness, Family, Instance, InstanceSpec};
use haptic_testkit::jacobian_check::{central_differences, compare, dynamic, Tolerance};
use nalgebra::{DVector, Rotation3, Vector3};

#[test]
fn the_same_spec_gives_the_same_instance() {
    for seed in 0..50 {
        let spec = InstanceSpec::mixed(seed, 100);
        assert_eq!(spec, InstanceSpec::mixed(seed, 100));
        assert_eq!(Instance::generate(&spec), Instance::generate(&spec));
    }
    let a = Instance::generate(&InstanceSpec::mixed(1, 100));
    let b = Instance::generate(&InstanceSpec::mixed(2, 100));
    assert_ne!(a, b);
}

#[test]
fn instances_are_physically_plausible() {
    let mut families = std::collections::HashSet::new();
    for seed in 0..300 {
        let spec = InstanceSpec::mixed(seed, 300);
        families.insert(spec.family);
        assert!(spec.contacts >= 1 && spec.contacts <= 300);
        assert!(spec.pyramid_sides == 4 || spec.pyramid_sides == 8);
        let instance = Instance::generate(&spec);
        let p = &instance.problem;
        assert_eq!(
            p.wrench,
            instance.base_wrench + instance.push * instance.push_scale
        );
        for c in &p.contacts {
            assert!((c.normal.norm() - 1.0).abs() < 1e-12);
            // On the surface of an object at most 8 cm across in each half-axis.
            assert!(c.handle.norm() <= 0.08 * 3f64.sqrt());
            assert!(c.normal_force > 0.0 && c.normal_force < 30.0);
            assert!((0.05..=1.2).contains(&c.friction_coefficient));
        }
        assert_eq!(p.mass, p.mass.transpose());
        assert!(p.mass.cholesky().is_some());
        // Unsymmetric (the geometric term), but its symmetric part is negative definite.
        let symmetric = (p.stiffness + p.stiffness.transpose()) * 0.5;
        assert!((-symmetric).cholesky().is_some(), "{spec:?}");
        assert!((p.stiffness - p.stiffness.transpose()).norm() > 0.0);
    }
    assert_eq!(families.len(), 5);
}

#[test]
fn each_family_has_the_rank_it_promises() {
    let mut generic_full_rank = 0;
    for seed in 0..200 {
        for family in [
            Family::Generic,
            Family::OneContact,
            Family::TwoContacts,
            Family::Collinear,
            Family::Coplanar,
        ] {
            let spec = InstanceSpec {
                family,
                contacts: 6 + (seed as usize % 20),
                pyramid_sides: 8,
                seed,
            };
            let p = Instance::generate(&spec).problem;
            let rank = reduce(&p).unwrap().rank;
            match family {
                Family::Generic => generic_full_rank += usize::from(rank == 6),
                Family::OneContact => assert_eq!(rank, 2),
                Family::TwoContacts => assert!(rank == 3 || rank == 4, "{spec:?}: {rank}"),
                Family::Collinear => assert!(rank == 3 || rank == 5, "{spec:?}: {rank}"),
                Family::Coplanar => assert_eq!(rank, 3),
            }
        }
    }
    println!("generic instances with 6–25 contacts: {generic_full_rank} of 200 have rank 6");
    assert!(generic_full_rank >= 140);
}

#[test]
fn about_a_third_of_generic_instances_are_static() {
    let mut solver = ReferenceLpSolver::default();
    let mut s = FrictionSolution::with_capacity(40);
    let mut statics = 0;
    for seed in 0..200 {
        let spec = InstanceSpec {
            family: Family::Generic,
            contacts: 3 + seed as usize % 37,
            pyramid_sides: 8,
            seed,
        };
        solver
            .solve(&Instance::generate(&spec).problem, &mut s)
            .unwrap();
        statics += usize::from(s.state == FrictionState::Static);
    }
    println!("{statics} of 200 generic instances are static");
    assert!((40..=160).contains(&statics));
}

/// The wrench of penalty contacts carried by the object against planes fixed
/// in the world, at `q = (x, θ)` (θ a rotation vector), plus the coupling.
fn wrench_at(
    q: &Vector6,
    contacts: &[FrictionContact],
    k_n: f64,
    k_vc: f64,
    k_tor: f64,
) -> Vector6 {
    let x = Vector3::new(q[0], q[1], q[2]);
    let theta = Vector3::new(q[3], q[4], q[5]);
    let mut f = Vector6::zeros();
    f.fixed_rows_mut::<3>(0).copy_from(&(-k_vc * x));
    f.fixed_rows_mut::<3>(3).copy_from(&(-k_tor * theta));
    for c in contacts {
        // The plane through the contact's rest position pushed in by the rest depth.
        let depth = c.normal_force / k_n;
        let r = Rotation3::new(theta) * c.handle;
        let d = c.normal.dot(&(x + r - c.handle)) - depth;
        let force = -k_n * d * c.normal;
        let torque = r.cross(&force);
        f += Vector6::new(force.x, force.y, force.z, torque.x, torque.y, torque.z);
    }
    f
}

/// `penalty_stiffness` is the Jacobian of the penalty wrench (every gradient
/// in the project is checked against finite differences).
#[test]
fn the_penalty_stiffness_matches_finite_differences() {
    for seed in 0..20 {
        let spec = InstanceSpec::mixed(seed, 12);
        let contacts = Instance::generate(&spec).problem.contacts;
        let (k_n, k_vc, k_tor) = (4000.0, 700.0, 2.5);
        let mut contacts = contacts;
        for c in &mut contacts {
            c.normal_force = k_n * 1e-3 * (0.5 + c.friction_coefficient);
        }
        let h = penalty_stiffness(&contacts, k_n, k_vc, k_tor);
        let numeric = central_differences(&[1e-7; 6], |dq| {
            let dq = Vector6::from_column_slice(dq.as_slice());
            let wrench = wrench_at(&dq, &contacts, k_n, k_vc, k_tor);
            Some(DVector::from_column_slice(wrench.as_slice()))
        })
        .unwrap();
        let relative = Tolerance::Relative {
            bound: 1e-7,
            floor: 0.0,
        };
        compare(&dynamic(&h), &numeric, (6, 6), relative).assert_passes(&format!("{spec:?}"));
    }
}
