//! The rendering cycle and the contact gradient on the fetched meshes.
//!
//! 1. Zhao, Li & Barbič §5.4 on CGAL's own cube and 90° corner (`cgal-cube.off`,
//!    `cgal-corner.off`): inside the friction cone the LP holds the cube
//!    without slipping along either contact plane, Yamane's springs let it
//!    creep, and out of the cone it slides.
//! 2. The exact 6×6 contact stiffness of a real point shell (the pybullet
//!    bunny) against the dense field of a real mesh (the CGAL armadillo), in
//!    both roles, against central differences of the summed wrench.

use haptic_acceptance::mesh_path;
use haptic_contact::{
    total_stiffness, ContactScene, EnvironmentGeometry, EnvironmentObject, ForceDirection,
    GradientModel, Role, SharedField, ShellTree, ToolGeometry,
};
use haptic_core::Matrix6;
use haptic_friction::FrictionState;
use haptic_mesh::shapes::{corner_mesh, CUBE_HALF};
use haptic_mesh::{load_mesh, LoadOptions, TriangleMesh};
use haptic_pointshell::{sample_point_shell, spacing_for_count, TraversalBudget};
use haptic_render::{FrictionModel, RenderParameters};
use haptic_scenarios::{cube_corner_from_meshes, run, Trace};
use haptic_sdf::{DenseField, DenseOptions, GridSpec, NoProgress};
use haptic_testkit::jacobian_check::{stiffness_errors, STIFFNESS_BLOCKS};
use haptic_testkit::scenes::finite_difference_stiffness;
use nalgebra::{Isometry3, Point3, Translation3, UnitQuaternion, Vector3};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::sync::Arc;

fn load(name: &str) -> TriangleMesh {
    load_mesh(&mesh_path(name), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .mesh
}

/// `(v − origin) · scale` for every vertex.
fn placed(mut mesh: TriangleMesh, origin: Vector3<f64>, scale: f64) -> TriangleMesh {
    for v in &mut mesh.vertices {
        *v = Point3::from((v.coords - origin) * scale);
    }
    mesh
}

fn signed_volume(mesh: &TriangleMesh) -> f64 {
    (0..mesh.triangles.len())
        .map(|t| {
            let [a, b, c] = mesh.corners(t);
            a.coords.dot(&b.coords.cross(&c.coords)) / 6.0
        })
        .sum()
}

// ---------------------------------------------------------------------------
// 1. Cube against a 90° corner (Zhao et al. §5.4) on CGAL's meshes.
// ---------------------------------------------------------------------------

/// Metres per unit of CGAL's corner block: its inner floor and wall become
/// 10 cm deep, high and wide, and the 5 cm cube rests in it with 2.5 cm to
/// spare either side along the edge.
const CORNER_SCALE: f64 = 0.1;

/// Nodes along the corner field's longest side: the 20 cm block (24 cm
/// padded) at the voxel size of `cube_corner`'s 64³ field on its 12 cm
/// corner, 2.3 mm. (At 64³ the voxel here is 3.8 mm and the LP already
/// turns infeasible near 0.07 N of load along the edge, against 0.23 N at
/// 2.3 mm, below this path's 0.15 N: the cube slips by about 0.07 mm.)
const CORNER_RESOLUTION: u32 = 106;

/// CGAL's cube `[−1, 1]³` scaled to a 5 cm cube about its centre, and its
/// L-shaped corner (floor slab `x ∈ [0, 2], z ∈ [0, 1]`, wall
/// `x ∈ [0, 1], z ∈ [1, 2]`, `y ∈ [0, 1]`, inner edge `x = z = 1`) moved so
/// that its inner edge is the y axis, centred on `y = 0`, in metres.
fn cgal_cube_and_corner() -> (TriangleMesh, TriangleMesh) {
    let cube = load("cgal-cube.off");
    let b = cube.aabb();
    assert_eq!(
        (b.min, b.max),
        (Point3::new(-1.0, -1.0, -1.0), Point3::new(1.0, 1.0, 1.0))
    );
    assert!(
        (signed_volume(&cube) - 8.0).abs() < 1e-12,
        "cube inside out"
    );
    let cube = placed(cube, Vector3::zeros(), CUBE_HALF);

    let corner = load("cgal-corner.off");
    let b = corner.aabb();
    assert_eq!(
        (b.min, b.max),
        (Point3::new(0.0, 0.0, 0.0), Point3::new(2.0, 1.0, 2.0))
    );
    // An L: the 2 × 1 × 2 box minus the unit block above the floor beyond
    // the wall, positively oriented.
    assert!(
        (signed_volume(&corner) - 3.0).abs() < 1e-12,
        "not the L block"
    );
    for y in [0.0, 1.0] {
        assert!(corner.vertices.contains(&Point3::new(1.0, y, 1.0)));
        assert!(!corner.vertices.contains(&Point3::new(2.0, y, 2.0)));
    }
    let corner = placed(corner, Vector3::new(1.0, 0.5, 1.0), CORNER_SCALE);
    (cube, corner)
}

/// Largest tangential slip (m) of the cube's two contact faces from the
/// settled pose (end of segment 1) over segments 2–4: 10,000 cycles of
/// ±0.15 N along the edge. Friction creep is slip along the contact planes:
/// in-plane motion of the bottom face on the floor (x, y) and of the face
/// against the wall (y, z). Rotation about the corner edge moves both faces
/// along their normals only; friction cannot resist it (`rank W = 5` for a
/// cube seated in a corner), the penalty normal forces' compliance does.
fn slip(trace: &Trace) -> (f64, f64) {
    let settled = trace.segment(1).last().unwrap().simulation;
    let a = CUBE_HALF;
    // Corners and centres of the bottom face (z = −a) and the wall face (x = −a).
    let bottom: Vec<Point3<f64>> = [(-a, -a), (-a, a), (a, -a), (a, a), (0.0, 0.0)]
        .iter()
        .map(|&(x, y)| Point3::new(x, y, -a))
        .collect();
    let wall: Vec<Point3<f64>> = [(-a, -a), (-a, a), (a, -a), (a, a), (0.0, 0.0)]
        .iter()
        .map(|&(y, z)| Point3::new(-a, y, z))
        .collect();
    let slip_at = |pose: &Isometry3<f64>| {
        let moved = |p: &Point3<f64>| pose * p - settled * p;
        let on_floor = bottom.iter().map(|p| moved(p).xy().norm());
        let on_wall = wall.iter().map(|p| moved(p).yz().norm());
        on_floor.chain(on_wall).fold(0.0, f64::max)
    };
    let largest = (2..=4)
        .flat_map(|s| trace.segment(s))
        .map(|r| slip_at(&r.simulation))
        .fold(0.0, f64::max);
    (
        largest,
        slip_at(&trace.segment(4).last().unwrap().simulation),
    )
}

/// Largest translation (m) and rotation (rad) from the settled pose over the
/// same cycles, slip and normal compliance together.
fn creep(trace: &Trace) -> (f64, f64) {
    let settled = trace.segment(1).last().unwrap().simulation;
    (2..=4)
        .flat_map(|s| trace.segment(s))
        .map(|r| {
            let d = settled.inverse() * r.simulation;
            (d.translation.vector.norm(), d.rotation.angle())
        })
        .fold((0.0, 0.0), |(a, b), (x, y)| {
            (f64::max(a, x), f64::max(b, y))
        })
}

#[test]
fn cgal_cube_in_cgal_corner_sticks_inside_the_cone_and_slides_outside() {
    let (cube, corner) = cgal_cube_and_corner();
    let voxel = GridSpec::covering(&corner.aabb(), CORNER_RESOLUTION, 0.1).voxel_size;
    let generated = GridSpec::covering(&corner_mesh(0.1, 0.1, 0.02, 0.06).aabb(), 64, 0.1);
    println!(
        "corner field voxel {:.3} mm (cube_corner's {:.3} mm)",
        voxel * 1e3,
        generated.voxel_size * 1e3
    );
    assert!((voxel / generated.voxel_size - 1.0).abs() < 0.01);
    // The LP of Zhao et al. with the force direction it is posed with, the
    // shell normals of their eq 1. Along the environment field's gradient
    // (the default direction, which the pre-sliding model below keeps) the
    // LP let one cycle inside the cone slide, by 39 µm, on these meshes
    // (docs/rendering.md, "Which direction").
    let defaults = cube_corner_from_meshes(cube, corner, CORNER_RESOLUTION, 0.5);
    let mut scenario = defaults.clone().with_friction(FrictionModel::StaticLp);
    scenario.parameters.penalty.direction = ForceDirection::ShellNormal;
    let ours = run(&scenario).unwrap();

    // Settled against floor and wall: the cube's centre about half a side
    // from each, pressed by about the pushes of segment 0.
    let settled = ours.segment(1).last().unwrap();
    let centre = settled.simulation.translation.vector;
    let force = settled.coupling_force;
    println!(
        "settled: centre ({:.3}, {:.3}, {:.3}) mm, {} contacts, coupling force ({:.3}, {:.3}, {:.3}) N",
        centre.x * 1e3,
        centre.y * 1e3,
        centre.z * 1e3,
        settled.contacts,
        force.x,
        force.y,
        force.z
    );
    assert!(settled.contacts > 20);
    assert!((centre - Vector3::new(CUBE_HALF, 0.0, CUBE_HALF)).norm() < 2e-3);
    assert!(settled.simulation.rotation.angle() < 1e-2);
    for f in [force.x, force.z] {
        assert!((0.5..2.5).contains(&f.abs()), "normal load {f} N");
    }
    let cone = 0.5 * (force.x.abs() + force.z.abs());

    // Inside the cone (±0.15 N along the edge): exactly put, always static.
    let in_cone: Vec<_> = (2..=4).flat_map(|s| ours.segment(s)).collect();
    assert_eq!(in_cone.len(), 10_000);
    let peak = in_cone
        .iter()
        .map(|r| r.coupling_force.y.abs())
        .fold(0.0, f64::max);
    let not_static = in_cone
        .iter()
        .filter(|r| r.state != FrictionState::Static)
        .count();
    let (translation, rotation) = creep(&ours);
    let (ours_slip, ours_drift) = slip(&ours);
    println!(
        "LP: tangential load up to {peak:.3} N (cone μ·ΣF_n ≈ {cone:.2} N), {not_static} cycles not static: slip {ours_slip:.2e} m, {ours_drift:.2e} m left when the load returns to zero; pose change {translation:.2e} m, {rotation:.2e} rad over {} cycles",
        in_cone.len()
    );

    // Out of the cone (6 N): it slides along the edge, towards the load.
    let home = ours.segment(1).last().unwrap().simulation;
    let last = ours.rows.last().unwrap();
    let slid = (home.inverse() * last.simulation).translation.vector;
    let sliding = ours
        .segment(5)
        .filter(|r| r.state == FrictionState::Sliding)
        .count();
    println!(
        "LP: 6 N along the edge: slid ({:.2}, {:.2}, {:.2}) mm, {sliding} of 500 ramp cycles sliding",
        slid.x * 1e3,
        slid.y * 1e3,
        slid.z * 1e3
    );

    // Yamane's springs under the same load creep measurably.
    let yamane = run(&scenario
        .clone()
        .with_friction(FrictionModel::YamaneSprings { stiffness: 100.0 }))
    .unwrap();
    let (y_translation, y_rotation) = creep(&yamane);
    let (yamane_slip, yamane_drift) = slip(&yamane);
    println!(
        "Yamane (k_f = 100 N/m per contact): slip {yamane_slip:.2e} m, {yamane_drift:.2e} m left; pose change {y_translation:.2e} m, {y_rotation:.2e} rad"
    );

    assert!(peak > 0.14 && peak < cone);
    assert!(slid.y > 2e-3 && slid.x.abs() < 1e-3 && slid.z.abs() < 1e-3);
    assert!(sliding > 0);
    assert!(
        yamane_slip > 1e-6,
        "Yamane springs slipped only {yamane_slip:.2e} m"
    );
    assert!(yamane_slip > 1000.0 * ours_slip.max(1e-9));
    assert_eq!(not_static, 0, "the LP let go inside the cone");
    // Seated in the corner the cube's contact wrenches have rank 5: friction
    // cannot resist rotation about the corner edge, so the LP's static Δq is
    // not zero but the minimum-energy motion in that direction (eqs 32–34).
    // On these meshes that leaves 2.1e-9 m of slip after 10,000 cycles (on
    // the generated corner, `crates/render/tests/corner_creep.rs`: 0 m,
    // below the 1e-9 m bound); it depends on the field's sampling of the
    // seat and is still three orders below Yamane's springs.
    assert!(ours_slip < 1e-8, "static, yet slipped {ours_slip:.2e} m");
    // What moves is normal compliance: micrometres at most, not sliding.
    assert!(translation < 1e-6 && rotation < 1e-5);

    // Bounded pre-sliding (the default): static inside the cone, the faces
    // slip only while the load first reaches each extreme (the cube tilts
    // on its soft contacts, which in a corner slips the other face), and not
    // at all when the last ramp brings back loads already held; then it
    // slides along the edge.
    let pre =
        run(&defaults.with_friction(FrictionModel::PreSliding { displacement: 5e-6 })).unwrap();
    let in_cone: Vec<_> = (2..=4).flat_map(|s| pre.segment(s)).collect();
    let not_static = in_cone
        .iter()
        .filter(|r| r.state != FrictionState::Static)
        .count();
    let (pre_slip, pre_left) = slip(&pre);
    let start = pre.segment(4).next().unwrap().simulation;
    let again = pre
        .segment(4)
        .map(|r| (start.inverse() * r.simulation).translation.vector.norm())
        .fold(0.0, f64::max);
    let home = pre.segment(1).last().unwrap().simulation;
    let slid = (home.inverse() * pre.rows.last().unwrap().simulation)
        .translation
        .vector;
    println!(
        "pre-sliding: {not_static} cycles not static; slip {pre_slip:.2e} m, {pre_left:.2e} m left; \
         {again:.2e} m over the last ramp; 6 N along the edge: slid {:.2} mm",
        slid.y * 1e3
    );
    assert_eq!(not_static, 0);
    assert!(pre_slip < 1e-5);
    // Nanometres: along the CGAL corner's inner edge the field's gradient
    // turns between floor and wall, and the pyramids turn with the contact
    // points it samples there (the generated corner: under 1e-9 m).
    assert!(again < 1e-8);
    assert!(slid.y > 2e-3);
}

// ---------------------------------------------------------------------------
// 2. Exact contact gradient against central differences on a real field.
// ---------------------------------------------------------------------------

/// Central-difference steps: small enough that no contact point of the
/// stencil leaves its voxel (checked), where the trilinear interpolant is a
/// polynomial and the exact gradient is exact for the fixed contact set.
const H_X: f64 = 1e-9;
const H_THETA: f64 = 1e-8;
/// Bound on `‖H − H_fd‖_F / ‖H_fd‖_F` per 3×3 block.
const TOLERANCE: f64 = 1e-5;

struct Geometry {
    field: Arc<DenseField>,
    shell: Arc<ShellTree>,
}

/// The contacts' identities and, per contact, the field cell its point
/// is in: a stencil must keep both.
fn signature(scene: &ContactScene, geometry: &Geometry) -> Vec<(u32, [u32; 3])> {
    let pose = scene.pose();
    let grid = geometry.field.grid();
    let mut keys: Vec<_> = scene
        .contacts()
        .iter()
        .map(|c| {
            let p = geometry.shell.shell().points[c.point as usize];
            let env = &scene.environment()[c.environment as usize].pose;
            let q = match c.role {
                Role::MovingShell => env.inv_mul(pose) * p,
                Role::MovingField => pose.inv_mul(env) * p,
            };
            (c.point, grid.locate(&q).0)
        })
        .collect();
    keys.sort_unstable();
    keys
}

/// The exact and normal-direction stiffness at `pose` and central
/// differences of the summed wrench, or `None` if a contact appears,
/// disappears or changes voxel inside the stencil.
fn check(
    scene: &mut ContactScene,
    geometry: &Geometry,
    pose: &Isometry3<f64>,
) -> Option<(Matrix6, Matrix6, Matrix6)> {
    let fd = finite_difference_stiffness(scene, pose, H_X, H_THETA, |scene| {
        signature(scene, geometry)
    })?;
    let exact = total_stiffness(scene.contacts(), GradientModel::Exact);
    let normal = total_stiffness(scene.contacts(), GradientModel::NormalDirection);
    Some((exact, normal, fd))
}

fn random_rotation(rng: &mut Pcg64) -> UnitQuaternion<f64> {
    let axis = Vector3::new(rng.gen(), rng.gen(), rng.gen()) * 2.0 - Vector3::repeat(1.0);
    UnitQuaternion::from_scaled_axis(axis * std::f64::consts::PI)
}

#[test]
fn exact_stiffness_of_the_bunny_shell_on_the_armadillo_field_matches_finite_differences() {
    // The armadillo (about 150 units tall) scaled to 10 cm, the bunny to
    // 3 cm, each centred on its frame's origin.
    let armadillo = load("cgal-armadillo.off");
    let b = armadillo.aabb();
    let armadillo = placed(armadillo, b.center().coords, 0.1 / b.extents().max());
    let bunny = load("pybullet-bunny.obj");
    let b = bunny.aabb();
    let bunny = placed(bunny, b.center().coords, 0.03 / b.extents().max());
    let geometry = Geometry {
        field: Arc::new(DenseField::build(
            &armadillo,
            &DenseOptions {
                resolution: 128,
                padding_fraction: 0.1,
            },
            &NoProgress,
        )),
        shell: Arc::new(ShellTree::build(
            sample_point_shell(&bunny, spacing_for_count(&bunny, 3000), 7),
            6,
        )),
    };
    let voxel = geometry.field.grid().voxel_size;
    let shared: SharedField = geometry.field.clone();
    let penalty = RenderParameters::default().penalty;
    let mut rng = Pcg64::seed_from_u64(2024);

    // Relative placements of the bunny in the armadillo's frame: along a
    // ray towards the armadillo's centre, from outside until the first
    // contact, then 1 mm deeper (shallow contact).
    let probe_scene = |bunny_pose: Isometry3<f64>| {
        ContactScene::new(
            ToolGeometry {
                shell: Some(geometry.shell.clone()),
                field: None,
            },
            vec![EnvironmentObject {
                pose: Isometry3::identity(),
                geometry: EnvironmentGeometry::Field(shared.clone()),
                friction_coefficient: 0.5,
            }],
            penalty,
        )
        .map(|mut s| {
            s.evaluate(&bunny_pose, TraversalBudget::default());
            s.contacts().len()
        })
        .unwrap()
    };
    let mut placements = Vec::new();
    while placements.len() < 8 {
        let direction = Vector3::new(rng.gen(), rng.gen(), rng.gen()) * 2.0 - Vector3::repeat(1.0);
        let Some(direction) = direction.try_normalize(1e-3) else {
            continue;
        };
        let rotation = random_rotation(&mut rng);
        let at = |distance: f64| {
            Isometry3::from_parts(Translation3::from(direction * distance), rotation)
        };
        let mut distance = 0.12;
        while distance > 0.0 && probe_scene(at(distance)) == 0 {
            distance -= 0.25 * voxel;
        }
        if distance > 0.0 {
            placements.push(at(distance - 1e-3));
        }
    }

    let (mut worst, mut worst_normal) = ([[0.0f64; 4]; 2], [0.0f64; 2]);
    let (mut checked, mut contacts, mut retries) = ([0usize; 2], [0usize; 2], 0);
    for relative in &placements {
        for role in [Role::MovingShell, Role::MovingField] {
            // Role A: the bunny moves; role B: the armadillo moves, somewhere
            // else in the world, the bunny fixed at the same relative pose.
            let armadillo_pose = Isometry3::from_parts(
                Translation3::from(
                    Vector3::new(rng.gen(), rng.gen(), rng.gen()) * 0.2 - Vector3::repeat(0.1),
                ),
                random_rotation(&mut rng),
            );
            let (moving, environment, pose) = match role {
                Role::MovingShell => (
                    ToolGeometry {
                        shell: Some(geometry.shell.clone()),
                        field: None,
                    },
                    EnvironmentObject {
                        pose: armadillo_pose,
                        geometry: EnvironmentGeometry::Field(shared.clone()),
                        friction_coefficient: 0.5,
                    },
                    armadillo_pose * relative,
                ),
                Role::MovingField => (
                    ToolGeometry {
                        shell: None,
                        field: Some(shared.clone()),
                    },
                    EnvironmentObject {
                        pose: armadillo_pose * relative,
                        geometry: EnvironmentGeometry::Shell(geometry.shell.clone()),
                        friction_coefficient: 0.5,
                    },
                    armadillo_pose,
                ),
            };
            let mut scene = ContactScene::new(moving, vec![environment], penalty).unwrap();
            // Nudge the pose by a micrometre until the stencil keeps every
            // contact in its voxel.
            let mut result = None;
            for attempt in 0..20 {
                let nudge = (Vector3::new(rng.gen(), rng.gen(), rng.gen()) - Vector3::repeat(0.5))
                    * if attempt == 0 { 0.0 } else { 1e-6 };
                let nudged = Isometry3::from_parts(
                    Translation3::from(pose.translation.vector + nudge),
                    pose.rotation,
                );
                if let Some(r) = check(&mut scene, &geometry, &nudged) {
                    result = Some(r);
                    break;
                }
                retries += 1;
            }
            let (exact, normal, fd) = result.expect("no stencil stayed inside the voxels");
            let role_index = usize::from(role == Role::MovingField);
            let n = scene.contacts().len();
            assert!(n >= 5, "{n} contacts: not a contact patch");
            assert!(scene.contacts().iter().all(|c| c.role == role));
            let depth = scene
                .contacts()
                .iter()
                .map(|c| -c.distance)
                .fold(0.0, f64::max);
            assert!(depth < 3e-3, "deepest contact {depth} m: not shallow");
            let errors = stiffness_errors(&exact, &fd);
            let normal_error = stiffness_errors(&normal, &fd)
                .into_iter()
                .fold(0.0, f64::max);
            println!(
                "{role:?}: {n} contacts, deepest {:.2} mm, ‖H‖ {:.3e}: errors {:?}, Zhao et al. eqs 2–3 {normal_error:.1e}",
                depth * 1e3,
                fd.norm(),
                errors.map(|e| format!("{e:.1e}"))
            );
            for (w, e) in worst[role_index].iter_mut().zip(errors) {
                *w = w.max(e);
            }
            worst_normal[role_index] = worst_normal[role_index].max(normal_error);
            checked[role_index] += 1;
            contacts[role_index] += n;
        }
    }
    println!(
        "armadillo field 128³ (voxel {:.3} mm), bunny shell {} points; steps {H_X:e} m, {H_THETA:e} rad; {retries} nudges",
        voxel * 1e3,
        geometry.shell.shell().len()
    );
    for (i, name) in ["role A (moving shell)", "role B (moving field)"]
        .iter()
        .enumerate()
    {
        println!(
            "{name}: {} poses, {} contacts per pose; worst relative error {}; normal-direction model {:.1e}",
            checked[i],
            contacts[i] / checked[i],
            STIFFNESS_BLOCKS
                .iter()
                .zip(worst[i])
                .map(|(b, e)| format!("{b} {e:.1e}"))
                .collect::<Vec<_>>()
                .join(", "),
            worst_normal[i]
        );
    }
    assert!(checked.iter().all(|&c| c == placements.len()));
    assert!(worst.iter().flatten().all(|&e| e < TOLERANCE), "{worst:?}");
    // The check can tell: Zhao et al.'s approximation is far off on this field.
    assert!(
        worst_normal.iter().all(|&e| e > 100.0 * TOLERANCE),
        "{worst_normal:?}"
    );
}
