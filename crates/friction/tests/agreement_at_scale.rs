//! The fast solver, the clarabel reference LP and the QP on 10,000 random
//! instances (seeds `2³² + i`, `i < 10,000`, disjoint from the other tests).
//!
//! **Instances.** `InstanceSpec::mixed(seed, 300)`: 60 % generic contact over
//! several faces or a cap, 10 % each one contact, two contacts, collinear
//! and coplanar; `k` log-uniform in 1–300 (median 9 counting the one- and
//! two-contact families, 16 % above 100), `ℓ` = 4 or 8. Every instance's
//! load scale `s*` (the largest push scale that is static,
//! [`Instance::near_threshold`]) is bisected with the fast solver to a
//! relative 10⁻⁷. Instances `i ≡ 0, 1, 2 (mod 10)` that have one
//! are moved near it, to push scale `s*(1 ± δ)` with `δ` log-uniform in
//! 10⁻⁹–10⁻¹ and the sign at random; the others keep their random push.
//!
//! **Band.** An instance with push scale `s` lies at relative distance
//! `d = |s/s* − 1|` from the threshold (`d = ∞` when it has no `s*`: not
//! static at `s = 0`, or static past `s = 2⁴⁰`). Within the band `d ≤ ε`
//! the friction limit is met to within a relative `ε` and the answer is a
//! matter of tolerances: the fast solver certifies to 10⁻⁹ of its force
//! scale and decides undecided cases at 10⁻⁶, clarabel works to its own
//! feasibility tolerances, and the QP tests Zhao, Li & Barbič's definition through a
//! minimiser gap of 10⁻⁶, which is first order in the violation. Bands:
//! [`BAND`] for the fast solver against the reference LP, [`QP_BAND`] for the
//! QP against the reference LP. Outside them every answer must agree, and
//! the reference must not fail. As the static loads along the push form an
//! interval `[0, s*]`, a disagreement at `d ≤ ε` means the other solver puts
//! the threshold within a relative `ε` of the fast solver's; the bisection's
//! 10⁻⁷ is far below either band. Observed widths: 3.5·10⁻⁶ and 2.9·10⁻⁴.
//!
//! **Agreement.** Same state. Static: `Wβ` of both within
//! [`WRENCH_TOLERANCE`] (torques over `L = max‖r_i‖`, over the fast solver's
//! force scale; the fast solver's undecided-case band), `Δq` within
//! [`DISPLACEMENT_TOLERANCE`] (in the `M̄` norm, over that of the frictionless
//! `Δq = −H⁻¹f`, which bounds every static `Δq`); sliding: both the
//! frictionless `Δq`, to the same tolerance. LP ≡ QP (their theorem):
//! the QP's static decision is the reference LP's and, when both are static,
//! its `Δq` is the LP's within [`QP_DISPLACEMENT_TOLERANCE`] and its optimum
//! `½ΔqᵀM̄Δq` is the LP's `Δq`'s within [`OBJECTIVE_TOLERANCE`] (over
//! `½‖Δq_free‖²_M̄`). The QP's `Δq` is looser inside its band: it calls an
//! optimum static when it lies within 10⁻⁶ (scaled units) of the pyramid-free
//! minimiser, which is the LP's `Δq`.
//!
//! All 10,000 instances go to all three solvers, on both cores through
//! rayon: about 26 CPU-seconds in release, 22 s of wall time measured on two
//! cores shared with a concurrent build.

use haptic_core::{Matrix6, Vector6};
use std::collections::BTreeMap;
use std::time::Instant;

use haptic_friction::{
    FastStaticFrictionSolver, FrictionSolution, FrictionState, QpSolver, ReferenceLpSolver,
    StaticFrictionProblem, StaticFrictionSolver,
};
use haptic_testkit::instances::{Family, Instance, InstanceSpec};
use nalgebra::Vector2;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use rayon::prelude::*;

const INSTANCES: u64 = 10_000;
const FIRST_SEED: u64 = 1 << 32;
const MAX_CONTACTS: usize = 300;
/// `ε` of the band around `s*` for the fast solver against the reference.
const BAND: f64 = 1e-5;
/// `ε` of the band around `s*` for the QP against the reference LP.
const QP_BAND: f64 = 1e-3;
const WRENCH_TOLERANCE: f64 = 1e-6;
const DISPLACEMENT_TOLERANCE: f64 = 1e-9;
/// Inside and outside [`QP_BAND`].
const QP_DISPLACEMENT_TOLERANCE: [f64; 2] = [1e-4, 1e-5];
const OBJECTIVE_TOLERANCE: f64 = 1e-8;

/// `√(vᵀM̄v)`.
fn mass_norm(mass: &Matrix6, v: &Vector6) -> f64 {
    v.dot(&(mass * v)).max(0.0).sqrt()
}

/// `Wβ = Σ_i W_i β_i` (N, N·m).
fn friction_wrench(p: &StaticFrictionProblem, s: &FrictionSolution) -> Vector6 {
    p.contacts
        .iter()
        .zip(&s.beta)
        .map(|(c, b)| c.wrench_basis() * Vector2::new(b[0], b[1]))
        .sum()
}

/// What one instance gave; deviations are `None` where they do not apply.
struct Case {
    spec: InstanceSpec,
    near: bool,
    /// `|s/s* − 1|`, infinite without `s*`.
    distance: f64,
    fast: FrictionState,
    /// `None` when clarabel failed.
    reference: Option<FrictionState>,
    qp: Option<FrictionState>,
    /// Fast against reference, both static: `Wβ`.
    wrench: Option<f64>,
    /// Fast against reference, same state: `Δq`.
    displacement: Option<f64>,
    /// QP against reference, both static: `Δq` and the objective.
    qp_displacement: Option<f64>,
    qp_objective: Option<f64>,
}

struct Solvers {
    fast: FastStaticFrictionSolver,
    reference: ReferenceLpSolver,
    qp: QpSolver,
    a: FrictionSolution,
    b: FrictionSolution,
}

fn evaluate(index: u64, solvers: &mut Solvers) -> Case {
    let seed = FIRST_SEED + index;
    let spec = InstanceSpec::mixed(seed, MAX_CONTACTS);
    let threshold = Instance::near_threshold(&spec, &mut solvers.fast, 0.0)
        .unwrap_or_else(|e| panic!("{spec:?}: {e}"))
        .map(|(lo, _)| lo.push_scale)
        .filter(|&t| t > 0.0);
    let mut instance = Instance::generate(&spec);
    let near = index % 10 < 3 && threshold.is_some();
    if let (true, Some(t)) = (near, threshold) {
        let mut rng = Pcg64::seed_from_u64(seed.rotate_left(17));
        let delta = 10f64.powf(rng.gen_range(-9.0..-1.0));
        let sign = if rng.gen_bool(0.5) { 1.0 } else { -1.0 };
        instance = instance.with_push_scale(t * (1.0 + sign * delta));
    }
    let distance = threshold.map_or(f64::INFINITY, |t| (instance.push_scale / t - 1.0).abs());
    let p = &instance.problem;
    let free = p.frictionless_displacement().expect("H regular");
    let scale = mass_norm(&p.mass, &free).max(f64::MIN_POSITIVE);

    let Solvers {
        fast,
        reference,
        qp,
        a,
        b,
    } = solvers;
    fast.solve(p, a).unwrap_or_else(|e| panic!("{spec:?}: {e}"));
    let report = *fast.report();
    let reference_state = reference.solve(p, b).ok().map(|()| b.state);
    let (mut wrench, mut displacement) = (None, None);
    if reference_state == Some(a.state) {
        displacement = Some(mass_norm(&p.mass, &(a.displacement - b.displacement)) / scale);
        if a.state == FrictionState::Static {
            let d = friction_wrench(p, a) - friction_wrench(p, b);
            let l = report.length_scale;
            let scaled = Vector6::new(d[0], d[1], d[2], d[3] / l, d[4] / l, d[5] / l);
            wrench = Some(scaled.norm() / report.force_scale);
        }
    }
    let outcome = qp.analyse(p).ok();
    let qp_state = outcome.as_ref().map(|o| {
        if o.static_friction {
            FrictionState::Static
        } else {
            FrictionState::Sliding
        }
    });
    let (mut qp_displacement, mut qp_objective) = (None, None);
    if let (Some(o), Some(FrictionState::Static), Some(FrictionState::Static)) =
        (&outcome, qp_state, reference_state)
    {
        qp_displacement = Some(mass_norm(&p.mass, &(o.displacement - b.displacement)) / scale);
        let lp_objective = 0.5 * b.displacement.dot(&(p.mass * b.displacement));
        qp_objective = Some((lp_objective - o.objective).abs() / (0.5 * scale * scale));
    }
    Case {
        spec,
        near,
        distance,
        fast: a.state,
        reference: reference_state,
        qp: qp_state,
        wrench,
        displacement,
        qp_displacement,
        qp_objective,
    }
}

/// Disagreements (and reference failures) split by the band.
#[derive(Debug, Default)]
struct Tally {
    agree: usize,
    inside: usize,
    outside: Vec<String>,
    /// The largest `d` of a disagreement inside the band.
    widest: f64,
}

impl Tally {
    fn add(&mut self, case: &Case, band: f64, agree: bool) {
        if agree {
            self.agree += 1;
        } else if case.distance <= band {
            self.inside += 1;
            self.widest = self.widest.max(case.distance);
        } else {
            self.outside.push(format!(
                "{:?} d = {:.1e}: fast {:?}, reference {:?}, QP {:?}",
                case.spec, case.distance, case.fast, case.reference, case.qp
            ));
        }
    }
}

/// The largest `field` inside and outside `band`.
fn worst(cases: &[Case], band: f64, field: impl Fn(&Case) -> Option<f64>) -> [f64; 2] {
    let mut w = [0.0f64; 2];
    for c in cases {
        if let Some(v) = field(c) {
            let i = usize::from(c.distance > band);
            w[i] = w[i].max(v);
        }
    }
    w
}

#[test]
fn fast_reference_and_qp_agree_on_ten_thousand_instances() {
    let start = Instant::now();
    let cases: Vec<Case> = (0..INSTANCES)
        .into_par_iter()
        .map_init(
            || Solvers {
                fast: FastStaticFrictionSolver::new(MAX_CONTACTS, 8),
                reference: ReferenceLpSolver::default(),
                qp: QpSolver::default(),
                a: FrictionSolution::with_capacity(MAX_CONTACTS),
                b: FrictionSolution::with_capacity(MAX_CONTACTS),
            },
            |solvers, i| evaluate(i, solvers),
        )
        .collect();
    let elapsed = start.elapsed();

    // Composition: (family, ℓ) and k buckets, with reference static counts.
    let mut families: BTreeMap<String, [usize; 3]> = BTreeMap::new();
    let mut sizes: BTreeMap<usize, usize> = BTreeMap::new();
    for c in &cases {
        let key = format!("{:?} ℓ={}", c.spec.family, c.spec.pyramid_sides);
        let entry = families.entry(key).or_default();
        entry[0] += 1;
        entry[1] += usize::from(c.reference == Some(FrictionState::Static));
        entry[2] += usize::from(c.near);
        let k = match c.spec.family {
            Family::OneContact => 1,
            Family::TwoContacts => 2,
            _ => c.spec.contacts,
        };
        let bucket = [1, 2, 10, 30, 60, 100, 300]
            .into_iter()
            .find(|&b| k <= b)
            .expect("k ≤ 300");
        *sizes.entry(bucket).or_default() += 1;
    }
    println!(
        "{} instances in {:.1} s; (family, ℓ): [count, static, near s*]",
        cases.len(),
        elapsed.as_secs_f64()
    );
    for (key, n) in &families {
        println!("  {key}: {n:?}");
    }
    println!("  k ≤ bucket: {sizes:?}");
    let in_band = |band: f64| cases.iter().filter(|c| c.distance <= band).count();
    println!(
        "  near s*: {} placed, {} within {BAND:.0e}, {} within {QP_BAND:.0e}",
        cases.iter().filter(|c| c.near).count(),
        in_band(BAND),
        in_band(QP_BAND)
    );

    let (mut fast, mut qp) = (Tally::default(), Tally::default());
    for c in &cases {
        fast.add(c, BAND, c.reference == Some(c.fast));
        qp.add(c, QP_BAND, c.reference.is_some() && c.qp == c.reference);
    }
    let reference_failures = cases.iter().filter(|c| c.reference.is_none()).count();
    let qp_failures = cases.iter().filter(|c| c.qp.is_none()).count();
    println!(
        "fast vs reference LP: {} agree, {} disagree inside the band (d ≤ {:.1e}), {} outside",
        fast.agree,
        fast.inside,
        fast.widest,
        fast.outside.len()
    );
    println!(
        "QP vs reference LP: {} agree, {} disagree inside the band (d ≤ {:.1e}), {} outside",
        qp.agree,
        qp.inside,
        qp.widest,
        qp.outside.len()
    );
    println!("solver failures: reference {reference_failures}, QP {qp_failures}");
    // (name, band, worst [inside, outside] the band, tolerance [inside, outside]).
    let deviations = [
        (
            "fast/reference Wβ",
            BAND,
            worst(&cases, BAND, |c| c.wrench),
            [WRENCH_TOLERANCE; 2],
        ),
        (
            "fast/reference Δq",
            BAND,
            worst(&cases, BAND, |c| c.displacement),
            [DISPLACEMENT_TOLERANCE; 2],
        ),
        (
            "QP/LP Δq",
            QP_BAND,
            worst(&cases, QP_BAND, |c| c.qp_displacement),
            QP_DISPLACEMENT_TOLERANCE,
        ),
        (
            "QP/LP objective",
            QP_BAND,
            worst(&cases, QP_BAND, |c| c.qp_objective),
            [OBJECTIVE_TOLERANCE; 2],
        ),
    ];
    for (name, band, [inside, outside], [within, beyond]) in deviations {
        println!(
            "worst {name}: {outside:.1e} outside the band (tolerance {beyond:.0e}), \
             {inside:.1e} inside d ≤ {band:.0e} ({within:.0e})"
        );
    }

    assert!(fast.outside.is_empty(), "{:#?}", fast.outside);
    assert!(qp.outside.is_empty(), "{:#?}", qp.outside);
    for (name, _, worst, tolerance) in deviations {
        assert!(
            worst[0] <= tolerance[0] && worst[1] <= tolerance[1],
            "{name}: {worst:?}"
        );
    }
    // Both outcomes, every family and the band itself are well represented.
    let statics = families.values().map(|n| n[1]).sum::<usize>();
    assert!((3000..7000).contains(&statics), "{statics} static");
    assert!(families.values().all(|n| n[0] >= 300), "{families:?}");
    assert!(in_band(BAND) >= 500 && sizes[&300] >= 1000);
}
