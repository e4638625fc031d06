use crate::{ConfigError, Overrides, Scene};
use haptic_deformable::scenes::{cloth, ClothSpec};
use haptic_deformable::{AnchorTarget, Paradigm, SolverParameters};
use haptic_physics::{Motion, RigidBody, RigidBodyModel, RigidBodyState, World};
use nalgebra::{Isometry3, Matrix3, Point3, Translation3, UnitQuaternion};
use std::path::Path;

const SCENE: &str = r#"
[[objects]]
name = "tool"
shape = { kind = "sphere", radius_m = 0.02 }
role = "point_shell"
tool = true

[[objects]]
name = "post"
shape = { kind = "box", half_extents_m = [0.1, 0.1, 0.1] }
role = "field"
position_m = [0.0, 0.0, -0.5]

[device]
motion = { segments = [{ type = "hold", duration_s = 1.0 }] }
"#;

const SHEET: &str = r#"
[[deformables]]
name = "sheet"
shape = { kind = "cloth", nodes_x = 5, nodes_y = 4, width = 0.4, depth = 0.3 }
position_m = [0.0, 0.0, 0.2]
density = 0.2
paradigm = { kind = "mass_spring", stiffness = 2.0 }
"#;

fn parse_in(text: &str, base: &Path) -> Result<Scene, ConfigError> {
    Scene::parse(text, Path::new("bad.toml"), base, &Overrides::default())
}

fn line_of(text: &str, needle: &str) -> usize {
    text[..text.find(needle).unwrap()].matches('\n').count() + 1
}

/// `text`'s error, checked to name `bad.toml`, the line of `needle` and
/// `field`.
fn error(text: &str, needle: &str, field: &str) -> ConfigError {
    let error = parse_in(text, Path::new("/nonexistent")).expect_err("must fail");
    let shown = error.to_string();
    let line = line_of(text, needle);
    assert_eq!(error.field.as_deref(), Some(field), "{shown}");
    assert_eq!(error.at.map(|a| a.line), Some(line), "{shown}");
    assert!(shown.starts_with(&format!("bad.toml:{line}:")), "{shown}");
    error
}

/// The rigid world of `scene`'s environment objects where it places them,
/// static and without geometry.
fn rigid_world(scene: &Scene) -> World {
    let bodies = scene
        .environment()
        .map(|o| RigidBody {
            model: RigidBodyModel {
                name: o.name.clone(),
                motion: Motion::Static,
                mass: 0.0,
                body_inertia: Matrix3::zeros(),
                geometry: None,
                static_friction: 0.5,
                dynamic_friction: 0.5,
            },
            state: RigidBodyState::at_rest(o.pose()),
        })
        .collect();
    World::new(bodies, vec![], scene.physics().world_parameters()).unwrap()
}

fn example(name: &str) -> Scene {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../config")
        .join(name);
    Scene::load(&path, &Overrides::default()).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_poisson_ratio_of_one_half_is_refused_naming_the_field_and_line() {
    let text = format!(
        "{SCENE}{}",
        r#"
[[deformables]]
name = "jelly"
shape = { kind = "box", cells = [2, 2, 2], size = [0.1, 0.1, 0.1] }
density = 1000.0

[deformables.paradigm]
kind = "corotational_fem"
young_modulus = 1e4
poisson_ratio = 0.5
"#
    );
    let e = error(
        &text,
        "poisson_ratio = 0.5",
        "deformables[0].paradigm.poisson_ratio",
    );
    assert!(e.message.contains("(−1, 0.5)"), "{e}");
    // Accepted just below.
    parse_in(
        &text.replace("poisson_ratio = 0.5", "poisson_ratio = 0.49"),
        Path::new("/nonexistent"),
    )
    .unwrap();
}

#[test]
fn anchors_name_their_body_and_select_one_node() {
    let text = format!("{SCENE}{SHEET}anchors = [{{ node = 0, body = \"crane\" }}]\n");
    let e = error(&text, "anchors", "deformables[0].anchors[0].body");
    assert!(e.message.contains("no object named \"crane\""), "{e}");

    let text = format!("{SCENE}{SHEET}anchors = [{{ node = 0, body = \"tool\" }}]\n");
    let e = error(&text, "anchors", "deformables[0].anchors[0].body");
    assert!(e.message.contains("is the tool"), "{e}");

    let text =
        format!("{SCENE}{SHEET}anchors = [{{ node = 0, near = [0.0, 0.0, 0.0], radius = 0.1 }}]\n");
    error(&text, "anchors", "deformables[0].anchors[0].node");

    let text = format!("{SCENE}{SHEET}anchors = [{{ near = [0.0, 0.0, 0.0] }}]\n");
    let e = error(&text, "anchors", "deformables[0].anchors[0].radius");
    assert!(e.message.contains("radius"), "{e}");

    // A node beyond the body's is found where the body is built.
    let text = format!("{SCENE}{SHEET}anchors = [{{ node = 20 }}]\n");
    let scene = parse_in(&text, Path::new("/nonexistent")).unwrap();
    let e = scene.deformable_world(rigid_world(&scene)).err().unwrap();
    assert_eq!(e.field.as_deref(), Some("deformables[0].anchors[0].node"));
    assert_eq!(e.at.map(|a| a.line), Some(line_of(&text, "anchors")));
    assert!(e.message.contains("beyond `sheet`'s 20 nodes"), "{e}");
}

#[test]
fn anchors_hold_nodes_where_they_start_to_the_world_or_a_body() {
    // The sheet's row y = −0.15 (nodes 0–4, within 1.0198 m of a point
    // 1 m beyond it, the next row 1.1 m away) to the post, its corner node
    // 19 (x = 0.2, y = 0.15) to the world.
    let text = format!(
        "{SCENE}{SHEET}anchors = [{{ near = [0.0, -1.15, 0.2], radius = 1.021, body = \"post\" }}, {{ node = 19 }}]\n"
    );
    let scene = parse_in(&text, Path::new("/nonexistent")).unwrap();
    let world = scene.deformable_world(rigid_world(&scene)).unwrap();
    let anchors = world.anchors();
    assert_eq!(anchors.len(), 6);
    let start = &world.bodies()[0].state.positions;
    for (k, anchor) in anchors[..5].iter().enumerate() {
        assert_eq!(anchor.node, k as u32);
        // The post's frame is at z = −0.5.
        let AnchorTarget::Rigid { body: 0, point } = anchor.target else {
            panic!("{anchor:?}")
        };
        assert!((point - (start[k] - nalgebra::Vector3::new(0.0, 0.0, -0.5))).norm() < 1e-12);
    }
    assert_eq!(
        anchors[5].target,
        AnchorTarget::World(Point3::new(0.2, 0.15, 0.2))
    );
    assert_eq!(start[19], Point3::new(0.2, 0.15, 0.2));

    let text = format!("{SCENE}{SHEET}anchors = [{{ near = [3.0, 0.0, 0.0], radius = 0.1 }}]\n");
    let scene = parse_in(&text, Path::new("/nonexistent")).unwrap();
    let e = scene.deformable_world(rigid_world(&scene)).err().unwrap();
    assert_eq!(e.field.as_deref(), Some("deformables[0].anchors[0].near"));
    assert!(e.message.contains("no node"), "{e}");
}

#[test]
fn a_tet_mesh_with_an_inverted_tet_is_refused_naming_file_and_element() {
    let dir = tempfile::tempdir().unwrap();
    // Tet 2 (1-based, line 13) turned inside out.
    let medit = "MeshVersionFormatted 2
Dimension 3
Vertices
5
0 0 0 1
1 0 0 1
0 1 0 1
0 0 1 1
1 1 1 1
Tetrahedra
2
1 2 3 4 1
2 5 4 3 1
End
";
    std::fs::write(dir.path().join("jelly.mesh"), medit).unwrap();
    let text = format!(
        "{SCENE}{}",
        r#"
[[deformables]]
name = "jelly"
shape = { kind = "tet_mesh", file = "jelly.mesh" }
density = 1000.0
paradigm = { kind = "corotational_fem", young_modulus = 1e4 }
"#
    );
    let e = parse_in(&text, dir.path()).expect_err("must fail");
    let shown = e.to_string();
    assert_eq!(
        e.field.as_deref(),
        Some("deformables[0].shape.file"),
        "{shown}"
    );
    assert_eq!(
        e.at.map(|a| a.line),
        Some(line_of(&text, "shape = { kind = \"tet"))
    );
    assert!(
        shown.contains("jelly.mesh: line 13: element 2: tet 1 is inverted"),
        "{shown}"
    );

    // The same mesh set right builds a body of 5 nodes and 2 elements.
    std::fs::write(
        dir.path().join("jelly.mesh"),
        medit.replace("2 5 4 3 1", "2 5 3 4 1"),
    )
    .unwrap();
    let scene = parse_in(&text, dir.path()).unwrap();
    let world = scene.deformable_world(rigid_world(&scene)).unwrap();
    let body = &world.bodies()[0];
    assert_eq!(body.state.positions.len(), 5);
    let Paradigm::CorotationalFem(fem) = &body.model.paradigm else {
        panic!()
    };
    assert_eq!(fem.element_count(), 2);
    // Volume 1/6 + 1/3 at 1,000 kg/m³.
    assert!((body.mass() - 500.0).abs() < 1e-9, "{}", body.mass());
}

#[test]
fn unknown_keys_and_out_of_range_values_name_file_line_and_field() {
    let text = format!("{SCENE}{SHEET}colour = \"red\"\n");
    let e = error(&text, "colour", "deformables[0].colour");
    assert!(e.message.contains("unknown field `colour`"), "{e}");

    let text = format!("{SCENE}{SHEET}material = {{ friction = -1.0 }}\n");
    error(&text, "material = {", "deformables[0].material.friction");

    let text = format!("{SCENE}{}", SHEET.replace("density = 0.2", "density = 0.0"));
    error(&text, "density", "deformables[0].density");

    let text = format!("{SCENE}{}", SHEET.replace("nodes_x = 5", "nodes_x = 1"));
    error(&text, "nodes_x", "deformables[0].shape.nodes_x");

    let text = format!("{SCENE}{SHEET}\n[deformable_solver]\nbaumgarte = 2.0\n");
    let e = error(&text, "baumgarte", "deformable_solver.baumgarte");
    assert!(e.message.contains("[0, 1]"), "{e}");

    let text = format!("{SCENE}{SHEET}\n[deformable_solver]\nsubsteps = 0\n");
    error(&text, "substeps", "deformable_solver.substeps");

    let text = format!("{SCENE}{SHEET}\n[deformable_solver]\nfriction_bound = \"viscous\"\n");
    let e = error(&text, "viscous", "deformable_solver.friction_bound");
    assert!(e.message.contains("gravity_pressure"), "{e}");

    let text = format!(
        "{SCENE}{}",
        SHEET.replace(
            "{ kind = \"mass_spring\", stiffness = 2.0 }",
            "{ kind = \"corotational_fem\", young_modulus = 1e4 }"
        )
    );
    let e = error(&text, "paradigm", "deformables[0].paradigm.kind");
    assert!(e.message.contains("needs tets"), "{e}");

    let text = format!(
        "{SCENE}{}",
        SHEET.replace(
            "{ kind = \"mass_spring\", stiffness = 2.0 }",
            "{ kind = \"shape_matching\", stiffness = 1.5 }"
        )
    );
    error(&text, "paradigm", "deformables[0].paradigm.stiffness");

    let text = format!("{SCENE}{SHEET}{SHEET}");
    let e = parse_in(&text, Path::new("/nonexistent")).expect_err("must fail");
    assert_eq!(e.field.as_deref(), Some("deformables[1].name"), "{e}");
    let second = text[..text.rfind("name = \"sheet\"").unwrap()]
        .matches('\n')
        .count()
        + 1;
    assert_eq!(e.at.map(|a| a.line), Some(second), "{e}");

    let text = format!(
        "{SCENE}{}",
        SHEET.replace("name = \"sheet\"", "name = \"post\"")
    );
    let e = parse_in(&text, Path::new("/nonexistent")).expect_err("must fail");
    assert_eq!(e.field.as_deref(), Some("deformables[0].name"), "{e}");
    let line = text[..text.rfind("name = \"post\"").unwrap()]
        .matches('\n')
        .count()
        + 1;
    assert_eq!(e.at.map(|a| a.line), Some(line), "{e}");
    assert!(e.message.contains("already names an object"), "{e}");
}

#[test]
fn the_fig3_config_is_the_fig3_cloth_over_the_ball() {
    let scene = example("fig3-cloth-on-ball.toml");
    assert_eq!(
        *scene.deformable_solver(),
        crate::DeformableSolver {
            elastic_passes: 1,
            ..crate::DeformableSolver::default()
        }
    );
    assert_eq!(
        scene.deformable_solver().parameters(),
        SolverParameters {
            elastic_passes: 1,
            ..SolverParameters::default()
        }
    );
    let ball = scene.environment().next().unwrap();
    assert_eq!(ball.name, "ball");
    assert_eq!(scene.friction_coefficient(ball), 0.4);
    assert_eq!(ball.shape, Some(crate::Shape::Sphere { radius_m: 0.25 }));
    assert_eq!(ball.position_m, [0.0; 3]);
    assert!(!ball.movable);
    assert_eq!(scene.threads().physics.rate_hz, 50.0);

    let world = scene.deformable_world(rigid_world(&scene)).unwrap();
    let built = &world.bodies()[0];
    let pose = Isometry3::from_parts(
        Translation3::new(0.0, 0.0, 0.35),
        UnitQuaternion::identity(),
    );
    let (reference, sheet) = cloth("cloth", &ClothSpec::default(), &pose).unwrap();
    assert_eq!(built.state.positions, reference.state.positions);
    assert_eq!(built.model.masses, reference.model.masses);
    assert!((built.mass() - 0.2).abs() < 1e-12);
    assert_eq!(built.model.surface, reference.model.surface);
    assert_eq!(built.model.inextensible, sheet.structural);
    assert_eq!(built.model.hinges.len(), reference.model.hinges.len());
    assert_eq!(built.model.material, ClothSpec::default().material);
    let (Paradigm::MassSpring(a), Paradigm::MassSpring(b)) =
        (&built.model.paradigm, &reference.model.paradigm)
    else {
        panic!("both are mass–spring cloths")
    };
    assert_eq!(a.springs, b.springs);
    assert_eq!(a.integration, b.integration);
    assert!(world.anchors().is_empty());
}

#[test]
fn the_jelly_config_is_a_corotational_box_on_the_ground_in_whole_steps() {
    let scene = example("jelly-drop.toml");
    assert_eq!(scene.deformable_solver().parameters().substeps, 1);
    assert!(scene.deformable_solver().parameters().contact_planes);
    let mut world = scene.deformable_world(rigid_world(&scene)).unwrap();
    let jelly = &world.bodies()[0];
    assert_eq!(jelly.state.positions.len(), 125);
    let Paradigm::CorotationalFem(fem) = &jelly.model.paradigm else {
        panic!()
    };
    assert_eq!(fem.element_count(), 6 * 64);
    assert_eq!(
        (fem.young, fem.poisson, fem.stiffness_damping),
        (1e4, 0.45, 0.01)
    );
    assert!((jelly.mass() - 1000.0 * 0.06f64.powi(3)).abs() < 1e-12);
    assert!((jelly.centre_of_mass() - Point3::new(0.0, 0.0, 0.06)).norm() < 1e-12);
    // Free of the (geometry-less) ground, it falls.
    world.step(0.02);
    assert!(world.bodies()[0].centre_of_mass().z < 0.06);
}

#[test]
fn every_paradigm_builds_on_every_shape_it_fits() {
    let shapes = [
        "{ kind = \"cloth\", nodes_x = 4, nodes_y = 4, width = 0.1, depth = 0.1 }",
        "{ kind = \"rope\", pairs = 6, length = 0.5, width = 0.01 }",
        "{ kind = \"box\", cells = [2, 1, 1], size = [0.1, 0.05, 0.05] }",
    ];
    let paradigms = [
        "{ kind = \"mass_spring\", young_modulus = 1e4, damping = 0.1, integration = \"symplectic_euler\" }",
        "{ kind = \"mass_spring\" }",
        "{ kind = \"xpbd\", young_modulus = 1e4, iterations = 5, damping = 0.1 }",
        "{ kind = \"shape_matching\", stiffness = 0.5, linear_blend = 0.2 }",
        "{ kind = \"corotational_fem\", young_modulus = 1e4, damping = 1.0 }",
    ];
    for shape in shapes {
        for paradigm in paradigms {
            // FEM needs tets, shape matching a volume.
            let solid_only = paradigm.contains("corotational") || paradigm.contains("matching");
            if solid_only && !shape.contains("box") {
                continue;
            }
            let text = format!(
                "{SCENE}\n[[deformables]]\nname = \"d\"\nshape = {shape}\ndensity = 10.0\nparadigm = {paradigm}\n"
            );
            let scene = parse_in(&text, Path::new("/nonexistent"))
                .unwrap_or_else(|e| panic!("{shape} {paradigm}: {e}"));
            let mut world = scene
                .deformable_world(rigid_world(&scene))
                .unwrap_or_else(|e| panic!("{shape} {paradigm}: {e}"));
            assert_eq!(
                world.bodies()[0].model.paradigm.name(),
                paradigm.split('"').nth(1).unwrap()
            );
            world.step(0.01);
            assert!(world.bodies()[0].is_finite(), "{shape} {paradigm}");
        }
    }
}

/// `mesh` as an OBJ file.
fn obj(mesh: &haptic_mesh::TriangleMesh) -> String {
    let mut text = String::new();
    for v in &mesh.vertices {
        text += &format!("v {} {} {}\n", v.x, v.y, v.z);
    }
    for t in &mesh.triangles {
        text += &format!("f {} {} {}\n", t[0] + 1, t[1] + 1, t[2] + 1);
    }
    text
}

#[test]
fn meshes_become_cloths_and_stuffed_solids() {
    let dir = tempfile::tempdir().unwrap();
    let cube = haptic_mesh::shapes::box_mesh(nalgebra::Vector3::new(0.05, 0.05, 0.05));
    std::fs::write(dir.path().join("cube.obj"), obj(&cube)).unwrap();
    let deformable = |shape: &str, density: f64, paradigm: &str| {
        format!(
            "{SCENE}\n[[deformables]]\nname = \"d\"\nshape = {shape}\nposition_m = [0.0, 0.0, 1.0]\ndensity = {density}\nparadigm = {paradigm}\n"
        )
    };

    // A closed surface as a cloth: every edge inextensible, 0.06 m² at
    // 0.5 kg/m².
    let text = deformable(
        "{ kind = \"surface_mesh\", file = \"cube.obj\" }",
        0.5,
        "{ kind = \"mass_spring\" }",
    );
    let scene = parse_in(&text, dir.path()).unwrap();
    let world = scene.deformable_world(rigid_world(&scene)).unwrap();
    let body = &world.bodies()[0];
    assert_eq!(body.state.positions.len(), cube.vertices.len());
    assert_eq!(body.model.surface.len(), cube.triangles.len());
    assert_eq!(body.model.inextensible.len(), 3 * cube.triangles.len() / 2);
    assert!((body.mass() - 0.5 * 0.06).abs() < 1e-12, "{}", body.mass());
    assert!((body.centre_of_mass().z - 1.0).abs() < 1e-12);

    // Filled with tets at 1 cm: the cube's litre at 1,000 kg/m³, within
    // the stuffing's volume error.
    let text = deformable(
        "{ kind = \"solid_from_mesh\", file = \"cube.obj\", spacing = 0.01 }",
        1000.0,
        "{ kind = \"corotational_fem\", young_modulus = 1e4 }",
    );
    let scene = parse_in(&text, dir.path()).unwrap();
    let world = scene.deformable_world(rigid_world(&scene)).unwrap();
    let body = &world.bodies()[0];
    assert!((body.mass() - 1.0).abs() < 0.03, "{}", body.mass());
    assert!((body.centre_of_mass() - Point3::new(0.0, 0.0, 1.0)).norm() < 1e-3);
    let Paradigm::CorotationalFem(fem) = &body.model.paradigm else {
        panic!()
    };
    assert!(fem.element_count() > 1000, "{}", fem.element_count());

    // A missing mesh names the field where the config loads; a spacing too
    // coarse to fill anything where the body is built.
    let e = parse_in(&text.replace("cube.obj", "sphere.obj"), dir.path()).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("deformables[0].shape.file"));
    assert!(e.message.contains("no such file"), "{e}");
    let scene = parse_in(&text.replace("spacing = 0.01", "spacing = 1.0"), dir.path()).unwrap();
    let e = scene.deformable_world(rigid_world(&scene)).err().unwrap();
    assert_eq!(
        e.field.as_deref(),
        Some("deformables[0].shape.spacing"),
        "{e}"
    );
    assert!(e.message.contains("cube.obj"), "{e}");

    // A surface with a hole fills no solid: the file and the open edge.
    let mut open = cube.clone();
    open.triangles.pop();
    std::fs::write(dir.path().join("open.obj"), obj(&open)).unwrap();
    let scene = parse_in(&text.replace("cube.obj", "open.obj"), dir.path()).unwrap();
    let e = scene.deformable_world(rigid_world(&scene)).err().unwrap();
    assert_eq!(e.field.as_deref(), Some("deformables[0].shape.file"), "{e}");
    assert!(e.message.contains("open.obj"), "{e}");
    assert!(e.message.contains("the surface is open: edge ("), "{e}");
}

#[test]
fn a_parameter_of_another_paradigm_or_shape_is_an_unknown_field() {
    let text = format!(
        "{SCENE}{}",
        SHEET.replace("stiffness = 2.0", "stiffness = 2.0, linear_blend = 0.5")
    );
    let e = parse_in(&text, Path::new("/nonexistent")).unwrap_err();
    assert_eq!(
        e.at.map(|a| a.line),
        Some(line_of(&text, "paradigm =")),
        "{e}"
    );
    assert!(
        e.field
            .as_deref()
            .unwrap()
            .starts_with("deformables[0].paradigm"),
        "{e}"
    );
    assert!(e.message.contains("unknown field `linear_blend`"), "{e}");

    let text = format!(
        "{SCENE}{}",
        SHEET.replace("depth = 0.3", "depth = 0.3, spacing = 0.1")
    );
    let e = parse_in(&text, Path::new("/nonexistent")).unwrap_err();
    let line = text[..text.rfind("shape =").unwrap()].matches('\n').count() + 1;
    assert_eq!(e.at.map(|a| a.line), Some(line), "{e}");
    assert!(
        e.field
            .as_deref()
            .unwrap()
            .starts_with("deformables[0].shape"),
        "{e}"
    );
    assert!(e.message.contains("unknown field `spacing`"), "{e}");

    let text = format!("{SCENE}{}", SHEET.replace("\"mass_spring\"", "\"fem\""));
    let e = parse_in(&text, Path::new("/nonexistent")).unwrap_err();
    assert_eq!(
        e.at.map(|a| a.line),
        Some(line_of(&text, "paradigm =")),
        "{e}"
    );
    assert!(e.message.contains("corotational_fem"), "{e}");
}
