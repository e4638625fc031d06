//! Every block of the exact contact gradient against central differences of
//! the summed wrench, both roles and several environment objects at once,
//! on a fixed contact set.

use haptic_contact::{
    total_stiffness, ContactScene, EnvironmentGeometry, EnvironmentObject, ForceDirection,
    GradientModel, PenaltyParameters, Role, SharedField, ShellTree, StiffnessScaling, ToolGeometry,
};
use haptic_core::{skew, Matrix6};
use haptic_testkit::jacobian_check::{stiffness_errors, STIFFNESS_BLOCKS};
use haptic_testkit::scenes::*;

use haptic_mesh::shapes::{icosphere, torus};
use haptic_pointshell::TraversalBudget;
use haptic_sdf::{DenseField, DenseOptions, NoProgress};
use haptic_testkit::fields::HalfSpaceField;
use nalgebra::{Isometry3, Point3, Translation3, Vector3};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::sync::Arc;

const H_X: f64 = 1e-7;
const H_THETA: f64 = 1e-6;

/// Checks `poses` random poses of `make(pose)`'s scene; returns the worst
/// relative error per block.
fn worst_stiffness_errors(
    seed: u64,
    poses: usize,
    model: GradientModel,
    make: impl Fn(&Isometry3<f64>, &mut Pcg64) -> ContactScene,
) -> [f64; 4] {
    worst_stiffness_errors_in_cells(seed, poses, model, make, None)
}

/// As [`worst_stiffness_errors`], but with `cells`, only stencils that keep
/// every role A contact in its cell of that field: a trilinear field's
/// gradient jumps across cell faces, and so does a force along it.
fn worst_stiffness_errors_in_cells(
    seed: u64,
    poses: usize,
    model: GradientModel,
    make: impl Fn(&Isometry3<f64>, &mut Pcg64) -> ContactScene,
    cells: Option<&DenseField>,
) -> [f64; 4] {
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut worst = [0.0f64; 4];
    let (mut checked, mut contacts, mut roles) = (0, 0, [0usize; 2]);
    while checked < poses {
        let pose = random_pose(&mut rng);
        let mut scene = make(&pose, &mut rng);
        let checked_pair = match cells {
            None => finite_difference_check(&mut scene, &pose, model, H_X, H_THETA),
            Some(field) => finite_difference_stiffness(&mut scene, &pose, H_X, H_THETA, |s| {
                contact_cells(s, field)
            })
            .map(|fd| (total_stiffness(scene.contacts(), model), fd)),
        };
        let Some((analytic, fd)) = checked_pair else {
            continue;
        };
        for (w, e) in worst.iter_mut().zip(stiffness_errors(&analytic, &fd)) {
            *w = w.max(e);
        }
        contacts += scene.contacts().len();
        for c in scene.contacts() {
            roles[usize::from(c.role == Role::MovingField)] += 1;
        }
        checked += 1;
    }
    println!(
        "{poses} poses, {} contacts per pose (role A {}, role B {}); worst relative error per block:",
        contacts / poses,
        roles[0] / poses,
        roles[1] / poses
    );
    for (name, e) in STIFFNESS_BLOCKS.iter().zip(worst) {
        println!("  {name}: {e:.2e}");
    }
    worst
}

const DIRECTIONS: [ForceDirection; 2] =
    [ForceDirection::FieldGradient, ForceDirection::ShellNormal];

/// Along the field's gradient (the ball's curvature in `∂N/∂P`) and along
/// the turned shell normals.
#[test]
fn exact_gradient_matches_finite_differences_on_analytic_fields() {
    let scaling = StiffnessScaling {
        reference_contacts: 50.0,
    };
    for direction in DIRECTIONS {
        println!("{direction:?}");
        let worst = worst_stiffness_errors(1, 12, GradientModel::Exact, |pose, rng| {
            mixed_scene(pose, rng.gen_range(0.001..0.003), scaling, direction, rng)
        });
        assert!(worst.iter().all(|&e| e < 1e-5), "{direction:?}: {worst:?}");
    }
}

#[test]
fn normal_direction_gradient_is_only_an_approximation() {
    for direction in DIRECTIONS {
        let worst = worst_stiffness_errors(2, 4, GradientModel::NormalDirection, |pose, rng| {
            mixed_scene(pose, 0.002, StiffnessScaling::NONE, direction, rng)
        });
        assert!(worst.iter().any(|&e| e > 1e-2), "{direction:?}: {worst:?}");
    }
}

/// Along the field's gradient the force is normal to the surface whatever
/// the tool's turn: on a half-space every contact pushes along its normal.
#[test]
fn along_the_field_gradient_a_tilted_tool_is_pushed_along_the_surface_normal() {
    let mut rng = Pcg64::seed_from_u64(5);
    for _ in 0..5 {
        let pose = random_pose(&mut rng);
        let mut scene = mixed_scene(
            &pose,
            0.002,
            StiffnessScaling::NONE,
            ForceDirection::FieldGradient,
            &mut rng,
        );
        scene.evaluate(&pose, TraversalBudget::default());
        let half_space = scene.environment()[0].pose.rotation * Vector3::z();
        let on_plane: Vec<_> = scene
            .contacts()
            .iter()
            .filter(|c| c.environment == 0)
            .collect();
        assert!(!on_plane.is_empty());
        for c in on_plane {
            assert_eq!(c.direction, ForceDirection::FieldGradient);
            assert!((c.normal - half_space).norm() < 1e-12, "{:?}", c.normal);
            assert!(c.force().cross(&half_space).norm() < 1e-12 * c.force().norm());
        }
    }
}

/// Each contact's identity and, in role A, the cell of `field` its point
/// lies in.
fn contact_cells(scene: &ContactScene, field: &DenseField) -> Vec<(u32, u32, [u32; 3])> {
    let pose = scene.pose();
    scene
        .contacts()
        .iter()
        .map(|c| {
            let cell = match c.role {
                Role::MovingShell => {
                    let environment = &scene.environment()[c.environment as usize];
                    let point = Point3::from(pose.translation.vector + c.handle);
                    field
                        .grid()
                        .locate(&environment.pose.inverse_transform_point(&point))
                        .0
                }
                Role::MovingField => [0; 3],
            };
            (c.environment, c.point, cell)
        })
        .collect()
}

/// Trilinear fields: the interpolant's gradient is exact inside a cell, but a
/// stencil that crosses a cell face sees a kink, so the bound is looser.
/// Along the field's gradient the force itself jumps there, so stencils that
/// move a role A contact to another cell are skipped.
#[test]
fn exact_gradient_matches_finite_differences_on_dense_fields() {
    let dense = |mesh: &haptic_mesh::TriangleMesh| {
        Arc::new(DenseField::build(
            mesh,
            &DenseOptions {
                resolution: 96,
                padding_fraction: 0.2,
            },
            &NoProgress,
        ))
    };
    let moving_field: SharedField = dense(&torus(MAJOR, MINOR, 96, 48));
    let ball = dense(&icosphere(0.03, 4));
    let ball_field: SharedField = ball.clone();
    let ball_shell = mesh_shell(&icosphere(0.025, 4), 3000, 6);
    let moving_shell = moving_torus().shell;
    for direction in DIRECTIONS {
        let make = |pose: &Isometry3<f64>, rng: &mut Pcg64| {
            let depth = rng.gen_range(0.001..0.003);
            let mut place = |around: f64, tube: f64, radius: f64| {
                let (s, n) = torus_anchor(
                    around + rng.gen_range(-0.3..0.3),
                    tube + rng.gen_range(-0.3..0.3),
                );
                let (s, n) = (pose * s, pose.rotation * n);
                Isometry3::from_parts(
                    Translation3::from(s.coords + n * (radius - depth)),
                    random_rotation(rng),
                )
            };
            ContactScene::new(
                ToolGeometry {
                    shell: moving_shell.clone(),
                    field: Some(moving_field.clone()),
                },
                vec![
                    EnvironmentObject {
                        pose: place(0.5, 0.3, 0.03),
                        geometry: EnvironmentGeometry::Field(ball_field.clone()),
                        friction_coefficient: 0.5,
                    },
                    EnvironmentObject {
                        pose: place(3.5, -0.9, 0.025),
                        geometry: EnvironmentGeometry::Shell(ball_shell.clone()),
                        friction_coefficient: 0.5,
                    },
                ],
                PenaltyParameters {
                    stiffness: 2000.0,
                    scaling: StiffnessScaling::NONE,
                    direction,
                },
            )
            .unwrap()
        };
        // Along the shell normals every stencil counts, as it always has.
        let cells = (direction == ForceDirection::FieldGradient).then_some(&*ball);
        let worst = worst_stiffness_errors_in_cells(3, 8, GradientModel::Exact, make, cells);
        assert!(worst.iter().all(|&e| e < 1e-2), "{direction:?}: {worst:?}");
    }
}

/// A flat patch of points against a half-space whose gradient is the patch
/// normal: `∂d/∂x = N` exactly.
fn flat_contact_scene(role: Role, pose: &Isometry3<f64>, rng: &mut Pcg64) -> ContactScene {
    // Off the reference point, so that every torque term shows.
    let center = Vector3::new(0.012, -0.02, 0.015);
    let plane: SharedField = Arc::new(HalfSpaceField {
        normal: Vector3::z(),
        offset: 0.0,
    });
    // The patch sits 2 mm deep. Role A: the environment's outward normal is
    // −m = N = −R n. Role B: the patch normal N is −R ∇φ = ∂d/∂x.
    let (moving, environment) = match role {
        Role::MovingShell => {
            let m = pose.rotation * Vector3::z();
            let patch = Arc::new(ShellTree::build(flat_patch_shell(12, 0.004, &center), 4));
            (
                ToolGeometry {
                    shell: Some(patch),
                    field: None,
                },
                EnvironmentObject {
                    pose: frame_with_z(
                        &-m,
                        &((pose * Point3::from(center)).coords - m * 0.002),
                        0.7,
                    ),
                    geometry: EnvironmentGeometry::Field(plane),
                    friction_coefficient: 0.4,
                },
            )
        }
        Role::MovingField => {
            let n = pose.rotation * Vector3::z();
            let offset = Vector3::new(rng.gen(), rng.gen(), 0.0) * 0.02 + center;
            let patch = Arc::new(ShellTree::build(
                flat_patch_shell(12, 0.004, &Vector3::zeros()),
                4,
            ));
            (
                ToolGeometry {
                    shell: None,
                    field: Some(plane),
                },
                EnvironmentObject {
                    pose: frame_with_z(
                        &-n,
                        &(pose.translation.vector + pose.rotation * offset
                            - n * (center.z + 0.002)),
                        0.3,
                    ),
                    geometry: EnvironmentGeometry::Shell(patch),
                    friction_coefficient: 0.4,
                },
            )
        }
    };
    ContactScene::new(
        moving,
        vec![environment],
        PenaltyParameters {
            stiffness: 1000.0,
            scaling: StiffnessScaling::NONE,
            direction: ForceDirection::ShellNormal,
        },
    )
    .unwrap()
}

#[test]
fn normal_direction_gradient_is_exact_when_the_gradient_is_the_normal_and_normals_stay_put() {
    let mut rng = Pcg64::seed_from_u64(4);
    for _ in 0..5 {
        let pose = random_pose(&mut rng);
        let mut scene = flat_contact_scene(Role::MovingField, &pose, &mut rng);
        scene.evaluate(&pose, TraversalBudget::default());
        assert_eq!(scene.contacts().len(), 144);
        let exact = total_stiffness(scene.contacts(), GradientModel::Exact);
        let approximate = total_stiffness(scene.contacts(), GradientModel::NormalDirection);
        assert!((exact - approximate).norm() < 1e-12 * exact.norm());
        let (analytic, fd) =
            finite_difference_check(&mut scene, &pose, GradientModel::Exact, H_X, H_THETA).unwrap();
        assert!(stiffness_errors(&analytic, &fd).iter().all(|&e| e < 1e-6));

        // Role A: the same but the normals turn with the object, which adds
        // exactly Σ k d [N]× to ∂F/∂θ and [r]× k d [N]× to ∂τ/∂θ.
        let mut scene = flat_contact_scene(Role::MovingShell, &pose, &mut rng);
        scene.evaluate(&pose, TraversalBudget::default());
        assert_eq!(scene.contacts().len(), 144);
        let exact = total_stiffness(scene.contacts(), GradientModel::Exact);
        let approximate = total_stiffness(scene.contacts(), GradientModel::NormalDirection);
        let mut rotating = Matrix6::zeros();
        for c in scene.contacts() {
            let turn = skew(&c.normal) * (c.stiffness * c.distance);
            let mut block = rotating.fixed_view_mut::<3, 3>(0, 3);
            block += turn;
            let mut block = rotating.fixed_view_mut::<3, 3>(3, 3);
            block += skew(&c.handle) * turn;
        }
        assert!((exact - approximate - rotating).norm() < 1e-12 * exact.norm());
        assert!(rotating.norm() > 1e-3 * exact.norm());
    }
}

/// Zhao, Li & Barbič's eq 3 read literally (`∂τ/∂x = (∂F/∂ω)ᵀ + [F]×`,
/// `∂τ/∂ω = [r]× ∂F/∂ω`) is the gradient of a point shell fixed in the world
/// (role B); with the shell on the tool (role A) its `[F]×` belongs
/// in `∂τ/∂θ` as `[F]× [r]×`.
#[test]
fn seed_002_eq_3_is_the_form_for_a_static_point_shell() {
    let literal = |scene: &ContactScene| {
        let mut h = Matrix6::zeros();
        for c in scene.contacts() {
            let k = c.stiffness;
            let df_dx = c.normal * c.normal.transpose() * -k;
            let df_dw = -df_dx * skew(&c.handle);
            let dt_dx = df_dw.transpose() + skew(&c.force());
            let dt_dw = skew(&c.handle) * df_dw;
            for ((r, c), block) in [
                ((0, 0), df_dx),
                ((0, 3), df_dw),
                ((3, 0), dt_dx),
                ((3, 3), dt_dw),
            ] {
                let mut view = h.fixed_view_mut::<3, 3>(r, c);
                view += block;
            }
        }
        h
    };
    let mut rng = Pcg64::seed_from_u64(5);
    let pose = random_pose(&mut rng);
    let mut scene = flat_contact_scene(Role::MovingField, &pose, &mut rng);
    let (_, fd) =
        finite_difference_check(&mut scene, &pose, GradientModel::Exact, H_X, H_THETA).unwrap();
    let errors = stiffness_errors(&literal(&scene), &fd);
    println!(
        "eq 3 literally, role B: {:?}",
        errors.map(|e| format!("{e:.1e}"))
    );
    assert!(errors.iter().all(|&e| e < 1e-6));

    let mut scene = flat_contact_scene(Role::MovingShell, &pose, &mut rng);
    let (_, fd) =
        finite_difference_check(&mut scene, &pose, GradientModel::Exact, H_X, H_THETA).unwrap();
    let errors = stiffness_errors(&literal(&scene), &fd);
    println!(
        "eq 3 literally, role A: {:?}",
        errors.map(|e| format!("{e:.1e}"))
    );
    assert!(errors[0] < 1e-6 && errors[1] > 1e-2 && errors[2] > 1e-2 && errors[3] > 1e-2);
}
