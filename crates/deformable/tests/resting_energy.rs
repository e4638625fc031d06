//! Resting bodies gain no energy: a cloth draped on the fixed ball, a cloth
//! hanging from a pinned top row and an FEM jelly on a slab, each settled
//! and then watched for 60 s of simulated time at 20 ms steps.

use haptic_deformable::scenes::{cloth, fig3_rigid_world, jelly_on_the_ground, ClothSpec};
use haptic_deformable::topology::tet_volume;
use haptic_deformable::{Anchor, AnchorTarget, CoupledWorld, SolverParameters};
use haptic_physics::{World, WorldParameters};
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};

const G: f64 = 9.81;
const H: f64 = 0.02;
/// Steps in the watched 60 s.
const WATCHED: usize = 3000;

/// Kinetic, gravitational (`Σ m g z`) and elastic energy of the first body (J).
fn mechanical_energy(world: &CoupledWorld) -> f64 {
    let body = &world.bodies()[0];
    let gravity: f64 = body
        .model
        .masses
        .iter()
        .zip(&body.state.positions)
        .map(|(m, p)| m * G * p.z)
        .sum();
    body.kinetic_energy() + gravity + body.model.paradigm.potential_energy(&body.state.positions)
}

/// What the watched minute did to a body's energy.
struct Watch {
    /// Mechanical energy at the start of the minute (J).
    start: f64,
    /// The largest rise of the mechanical energy above `start` (J).
    rise: f64,
    /// Mechanical energy at the end (J).
    end: f64,
    /// The largest kinetic energy over the minute (J).
    peak_kinetic: f64,
    /// Kinetic energy at the start and end (J).
    start_kinetic: f64,
    end_kinetic: f64,
}

/// Steps `settle` steps, then watches `WATCHED` steps, calling `each`
/// after every watched step.
fn watch(world: &mut CoupledWorld, settle: usize, mut each: impl FnMut(&CoupledWorld)) -> Watch {
    for _ in 0..settle {
        assert_eq!(world.step(H).quarantined, 0);
    }
    let start = mechanical_energy(world);
    let start_kinetic = world.kinetic_energy();
    let (mut rise, mut peak_kinetic) = (0.0f64, start_kinetic);
    for _ in 0..WATCHED {
        assert_eq!(world.step(H).quarantined, 0);
        assert!(world.bodies()[0].is_finite());
        rise = rise.max(mechanical_energy(world) - start);
        peak_kinetic = peak_kinetic.max(world.kinetic_energy());
        each(world);
    }
    Watch {
        start,
        rise,
        end: mechanical_energy(world),
        peak_kinetic,
        start_kinetic,
        end_kinetic: world.kinetic_energy(),
    }
}

fn report(name: &str, w: &Watch) {
    println!(
        "{name}: E {:.6} → {:.6} J (largest rise {:.3e} J), kinetic {:.3e} → {:.3e} J, peak {:.3e} J",
        w.start, w.end, w.rise, w.start_kinetic, w.end_kinetic, w.peak_kinetic
    );
}

/// A 21 × 21 cloth (1 m, 0.2 kg) dropped on the Fig. 3 ball, settled for
/// 3 s, then watched for 60 s.
fn draped_cloth(bending_baumgarte: f64) -> (Watch, f64) {
    let pose = Isometry3::from_parts(
        Translation3::new(0.0, 0.0, 0.35),
        UnitQuaternion::identity(),
    );
    let spec = ClothSpec {
        nodes: 21,
        ..ClothSpec::default()
    };
    let (body, _) = cloth("cloth", &spec, &pose).unwrap();
    let mut world = CoupledWorld::new(
        fig3_rigid_world(),
        vec![body],
        vec![],
        SolverParameters {
            elastic_passes: 1,
            bending_baumgarte,
            ..SolverParameters::default()
        },
    )
    .unwrap();
    let w = watch(&mut world, 150, |_| {});
    (w, world.bodies()[0].centre_of_mass().z)
}

/// A draped cloth gains no energy at the defaults: over the minute its
/// mechanical energy never rises more than 1e-4 J (0.05 mm of its whole
/// weight) above the start (8.0e-5 J), and it comes to rest (kinetic
/// energy under 1e-4 J, then under 1e-8 J). With its bending rows biased
/// as the paper biases every row (`bending_baumgarte = baumgarte`), the
/// bias pushes at the folds draping makes, which nothing else takes back:
/// it creeps over the ball, its energy rising by about 1.4e-3 J (more than
/// 5e-4 J here).
#[test]
fn a_cloth_draped_on_the_ball_gains_no_energy() {
    let defaults = SolverParameters::default();
    let (w, centre) = draped_cloth(defaults.bending_baumgarte);
    report("draped cloth, defaults", &w);
    assert!(centre.abs() < 0.25, "fell off the ball: {centre}");
    assert!(w.rise < 1e-4, "gained {:e} J", w.rise);
    assert!(w.peak_kinetic < 1e-4, "kinetic {:e} J", w.peak_kinetic);
    assert!(w.end_kinetic < 1e-8, "still moving: {:e} J", w.end_kinetic);

    let (w, centre) = draped_cloth(defaults.baumgarte);
    report("draped cloth, bending rows biased", &w);
    assert!(centre.abs() < 0.25, "fell off the ball: {centre}");
    assert!(w.rise > 5e-4, "gained only {:e} J", w.rise);
}

/// A 21 × 21 cloth (0.4 m) hanging from its pinned top row, settled for
/// 5 s, then watched for 60 s.
fn hanging_cloth(parameters: SolverParameters) -> Watch {
    let pose = Isometry3::from_parts(
        Translation3::new(0.0, 0.0, 1.0),
        UnitQuaternion::from_euler_angles(std::f64::consts::FRAC_PI_2, 0.0, 0.0),
    );
    let spec = ClothSpec {
        nodes: 21,
        side: 0.4,
        ..ClothSpec::default()
    };
    let (body, sheet) = cloth("cloth", &spec, &pose).unwrap();
    let anchors: Vec<Anchor> = (20 * 21..21 * 21)
        .map(|node: u32| Anchor {
            body: 0,
            node,
            target: AnchorTarget::World(sheet.positions[node as usize]),
        })
        .collect();
    let rigid = World::new(
        vec![],
        vec![],
        WorldParameters {
            gravity: Vector3::new(0.0, 0.0, -G),
            ..WorldParameters::default()
        },
    )
    .unwrap();
    let mut world = CoupledWorld::new(rigid, vec![body], anchors, parameters).unwrap();
    watch(&mut world, 250, |_| {})
}

/// A cloth hanging from a pinned line gains no energy at the defaults: its
/// mechanical energy never rises more than 1e-4 J above the minute's start
/// (6.0e-5 J) and its kinetic energy stays under 1e-5 J (3.8e-6 J). With
/// its bending rows biased as the paper's, it flutters with up to 1.8e-4 J.
#[test]
fn a_hanging_cloth_gains_no_energy() {
    let w = hanging_cloth(SolverParameters::default());
    report("hanging cloth, defaults", &w);
    assert!(w.rise < 1e-4, "gained {:e} J", w.rise);
    assert!(w.peak_kinetic < 1e-5, "kinetic {:e} J", w.peak_kinetic);
}

/// The 6 cm FEM jelly cube of `jelly_on_the_ground.rs` (E = 10 kPa,
/// ν = 0.45) dropped 3 cm on a slab, settled for 3 s, then 60 s: its
/// mechanical energy (with the elastic) never rises more than 1e-5 J above
/// the minute's start, its kinetic energy stays under 1e-4 J, and its
/// volume stays within 3 % of its rest volume.
#[test]
fn a_jelly_resting_on_the_ground_gains_no_energy() {
    let (mut world, tets) = jelly_on_the_ground(4);
    let volume = |w: &CoupledWorld| -> f64 {
        tets.iter()
            .map(|t| tet_volume(&w.bodies()[0].state.positions, t))
            .sum()
    };
    let rest = volume(&world);
    let mut worst_volume = 0.0f64;
    let w = watch(&mut world, 150, |w| {
        let change = volume(w) / rest - 1.0;
        if change.abs() > worst_volume.abs() {
            worst_volume = change;
        }
    });
    report("resting jelly", &w);
    println!("resting jelly: worst volume change {worst_volume:.4}");
    assert!(worst_volume.abs() < 0.03, "volume {worst_volume}");
    assert!(w.rise < 1e-5, "gained {:e} J", w.rise);
    assert!(w.peak_kinetic < 1e-4, "kinetic {:e} J", w.peak_kinetic);
}
