use super::*;
use crate::schema::Solver;
use haptic_mesh::shapes::{BLOCK_HALF, CUBE_HALF, PEG_LENGTH, PEG_RADIUS};
use haptic_render::{FrictionModel, RenderParameters};
use std::path::Path;

fn example(name: &str) -> Scene {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../config")
        .join(name);
    Scene::load(&path, &Overrides::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// Parses `text` as `bad.toml` in a temporary directory.
fn parse(text: &str) -> Result<Scene, ConfigError> {
    Scene::parse(
        text,
        Path::new("bad.toml"),
        Path::new("/nonexistent"),
        &Overrides::default(),
    )
}

const MINIMAL: &str = r#"
[[objects]]
name = "tool"
shape = { kind = "sphere", radius_m = 0.02 }
role = "point_shell"
tool = true

[[objects]]
name = "wall"
shape = { kind = "box", half_extents_m = [0.1, 0.1, 0.01] }
role = "field"

[device]
motion = { segments = [{ type = "hold", duration_s = 1.0 }] }
"#;

#[test]
fn empty_tables_take_the_renderer_defaults() {
    let config = parse(&format!("{MINIMAL}\n[rendering]\n[threads]\n[telemetry]\n")).unwrap();
    let (p, d) = (config.render_parameters(), RenderParameters::default());
    assert_eq!(p.penalty, d.penalty);
    assert_eq!(p.coupling, d.coupling);
    assert_eq!(p.mass, d.mass);
    assert_eq!(p.gradient, d.gradient);
    assert_eq!(p.pyramid_sides, d.pyramid_sides);
    assert_eq!(p.static_damping, d.static_damping);
    assert_eq!(p.friction, d.friction);
    assert_eq!(p.solver, d.solver);
    let wall = config.environment().next().unwrap();
    assert_eq!(config.friction_coefficient(wall), 0.5);
    assert_eq!(config.threads().servo.rate_hz, 1000.0);
    assert_eq!(config.telemetry().address.port(), 7701);
}

#[test]
fn the_examples_match_the_scenarios() {
    let corner = example("cube-corner.toml");
    assert_eq!(
        corner.tool().shape,
        Some(Shape::Box {
            half_extents_m: [CUBE_HALF; 3]
        })
    );
    let start = corner.tool().position_m;
    assert!((start[0] - (CUBE_HALF + 5e-4)).abs() < 1e-15 && start[0] == start[2]);
    for (name, mu) in [
        ("cube-corner.toml", 0.5),
        ("box-lift.toml", 10.0),
        ("slide.toml", 0.3),
        ("peg-in-hole.toml", 0.3),
        ("default.toml", 0.5),
    ] {
        let config = example(name);
        let environment: Vec<_> = config.environment().collect();
        assert_eq!(environment.len(), 1, "{name}");
        assert_eq!(config.friction_coefficient(environment[0]), mu, "{name}");
    }
    let peg = example("peg-in-hole.toml");
    let p = peg.render_parameters();
    assert_eq!(p.pyramid_sides, 4);
    let mass = 7800.0 * std::f64::consts::PI * PEG_RADIUS * PEG_RADIUS * PEG_LENGTH;
    assert!((p.mass.mass - mass).abs() < 1e-15);
    assert_eq!(p.friction, FrictionModel::PreSliding { displacement: 5e-6 });
    assert_eq!(
        peg.environment().next().unwrap().shape,
        Some(Shape::BlockWithHole {
            half_extents_m: BLOCK_HALF.into(),
            hole_radius_m: PEG_RADIUS / 1.01,
            segments: 128,
        })
    );
    let floor = example("box-lift.toml");
    let grid = floor.environment().next().unwrap().shape.unwrap();
    assert_eq!(grid.point_grid().unwrap().len(), 41 * 41);
    assert!(grid.mesh().is_none());
}

/// `text`'s error, checked to name line `line` and field `field`.
fn error(text: &str, line: usize, field: &str) -> ConfigError {
    let error = parse(text).expect_err("must fail");
    let shown = error.to_string();
    assert_eq!(error.at.map(|a| a.line), Some(line), "{shown}");
    assert_eq!(error.field.as_deref(), Some(field), "{shown}");
    assert!(
        shown.starts_with(&format!("bad.toml:{line}:")) && shown.contains(field),
        "{shown}"
    );
    error
}

fn line_of(text: &str, needle: &str) -> usize {
    text[..text.find(needle).unwrap()].matches('\n').count() + 1
}

#[test]
fn parse_errors_name_the_line_and_the_field() {
    let text = MINIMAL.replace("role = \"field\"", "role = \"field\"\nradius = 2");
    let e = error(&text, line_of(&text, "radius = 2"), "objects[1].radius");
    assert!(e.message.contains("unknown field `radius`"), "{e}");

    let text = MINIMAL.replace("tool = true", "tool = \"yes\"");
    error(&text, line_of(&text, "tool = \"yes\""), "objects[0].tool");

    let text = MINIMAL.replace("role = \"field\"", "role = \"surface\"");
    let e = error(&text, line_of(&text, "\"surface\""), "objects[1].role");
    assert!(e.message.contains("point_shell"), "{e}");

    let text = format!("{MINIMAL}\n[rendering]\npyramid_sides = -4\n");
    error(
        &text,
        line_of(&text, "pyramid_sides"),
        "rendering.pyramid_sides",
    );

    let text = MINIMAL.replace("role = \"field\"\n", "");
    let e = error(
        &text,
        line_of(&text, "[[objects]]\nname = \"wall\""),
        "objects[1].role",
    );
    assert!(e.message.contains("missing field"), "{e}");
}

#[test]
fn invalid_values_name_the_line_and_the_field() {
    let text = format!("{MINIMAL}\n[materials.default]\nfriction_coefficient = -0.1\n");
    let e = error(
        &text,
        line_of(&text, "friction_coefficient"),
        "materials.default.friction_coefficient",
    );
    assert!(e.message.contains("μ"), "{e}");

    let text = format!("{MINIMAL}\n[rendering]\nstatic_damping = 1.0\n");
    error(
        &text,
        line_of(&text, "static_damping"),
        "rendering.static_damping",
    );

    let text = format!("{MINIMAL}\n[threads.servo]\nrate_hz = 0.0\n");
    error(&text, line_of(&text, "rate_hz"), "threads.servo.rate_hz");

    let text = MINIMAL.replace(
        "shape = { kind = \"box\", half_extents_m = [0.1, 0.1, 0.01] }",
        "mesh = \"meshes/wall.obj\"",
    );
    let e = error(&text, line_of(&text, "mesh ="), "objects[1].mesh");
    assert!(e.message.contains("/nonexistent/meshes/wall.obj"), "{e}");

    let text = MINIMAL.replace("role = \"field\"", "role = \"field\"\nmaterial = \"oak\"");
    error(&text, line_of(&text, "material ="), "objects[1].material");

    let text = MINIMAL.replace("tool = true", "tool = false");
    error(&text, line_of(&text, "[[objects]]"), "objects");

    let text = MINIMAL.replace("role = \"point_shell\"", "role = \"field\"");
    error(
        &text,
        line_of(&text, "role = \"field\"\n\n"),
        "objects[1].role",
    );
}

#[test]
fn referenced_files_resolve_from_the_config_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("profiles")).unwrap();
    let hid = MINIMAL.replace(
        "motion = { segments = [{ type = \"hold\", duration_s = 1.0 }] }",
        "kind = \"hid\"\nprofiles_dir = \"profiles\"\nprofile = \"knob\"",
    );
    let path = dir.path().join("scene.toml");
    std::fs::write(&path, &hid).unwrap();
    let e = Scene::load(&path, &Overrides::default()).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("device.profile"), "{e}");
    assert_eq!(e.at.map(|a| a.line), Some(line_of(&hid, "profile = ")));

    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../device-profiles");
    let hid = hid
        .replace("\"profiles\"", &format!("{:?}", real.display().to_string()))
        .replace("\"knob\"", "\"generic-force-feedback\"");
    std::fs::write(&path, &hid).unwrap();
    Scene::load(&path, &Overrides::default()).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn the_embedded_default_is_config_default_toml_and_self_contained() {
    let embedded = Scene::embedded_default(&Overrides::default()).unwrap();
    let file = example("default.toml");
    assert_eq!(embedded.objects().len(), file.objects().len());
    assert_eq!(embedded.device(), file.device());
    assert_eq!(embedded.threads(), file.threads());
    assert!(embedded.device().motion_file.is_none());
    let motion = embedded.device().motion.as_ref().unwrap();
    // Repeating: a minute of demo is the motion played again and again.
    let period = motion.duration_s();
    let (a, b) = (motion.state_at(0.7), motion.state_at(0.7 + 3.0 * period));
    assert!((a.position - b.position).norm() < 1e-12);
    assert_eq!(embedded.threads().physics.rate_hz, 200.0);
}

#[test]
fn movable_objects_take_mass_and_damping_and_only_they_do() {
    let movable = MINIMAL.replace(
        "role = \"field\"",
        "role = \"field\"\nmovable = true\nmass_kg = 0.4\nlinear_damping_n_s_per_m = 3.0",
    );
    let config = parse(&movable).unwrap();
    let bodies: Vec<_> = config.movable_objects().collect();
    assert_eq!(bodies.len(), 1);
    let (index, object, body) = bodies[0];
    assert_eq!((index, object.name.as_str()), (1, "wall"));
    assert_eq!(body.mass, 0.4);
    assert_eq!(body.linear_damping, 3.0);
    assert_eq!(body.angular_damping, 1e-3);
    // The default cube's inertia, scaled to the mass.
    let tool_default = RenderParameters::default().mass;
    let expected = tool_default.body_inertia * (0.4 / tool_default.mass);
    assert!((body.body_inertia - expected).norm() < 1e-18);

    let text = movable
        .replace("movable = true\n", "")
        .replace("linear_damping_n_s_per_m = 3.0", "");
    error(&text, line_of(&text, "mass_kg"), "objects[1].mass_kg");
    let text = movable.replace("mass_kg = 0.4\n", "");
    let text = text.replace("movable = true\n", "");
    error(
        &text,
        line_of(&text, "linear_damping"),
        "objects[1].linear_damping_n_s_per_m",
    );
    let text = movable.replace("3.0", "-3.0");
    error(
        &text,
        line_of(&text, "linear_damping"),
        "objects[1].linear_damping_n_s_per_m",
    );
    let text = MINIMAL.replace("tool = true", "tool = true\nmovable = true");
    error(&text, line_of(&text, "movable"), "objects[0].movable");
}

#[test]
fn emulator_settings_are_checked() {
    let config = parse(MINIMAL).unwrap();
    assert_eq!(config.device().emulator, EmulatorSettings::default());
    let text = format!("{MINIMAL}\n[device.emulator]\nmode = \"kinematic\"\n");
    assert_eq!(
        parse(&text).unwrap().device().emulator.mode(),
        haptic_devices::EmulatorMode::Kinematic
    );
    let text = format!("{MINIMAL}\n[device.emulator]\nhandle_mass_kg = 0.0\n");
    error(
        &text,
        line_of(&text, "handle_mass_kg"),
        "device.emulator.handle_mass_kg",
    );
    let text = format!("{MINIMAL}\n[device.emulator]\nhand_damping_n_s_per_m = -1.0\n");
    error(
        &text,
        line_of(&text, "hand_damping"),
        "device.emulator.hand_damping_n_s_per_m",
    );
}

#[test]
fn the_emulator_handle_turns_by_default_and_its_rotation_is_checked() {
    use haptic_devices::{EmulatorMode, RotationParams};
    let hand = |text: &str| match parse(text).unwrap().device().emulator.mode() {
        EmulatorMode::Hand(hand) => hand,
        other => panic!("{other:?}"),
    };
    // On by default, with the documented handle.
    assert_eq!(
        hand(MINIMAL).rotation,
        Some(RotationParams {
            inertia: 1e-4,
            k_hand: 1.0,
            c_hand: 0.02,
            damping: 0.001,
        })
    );
    let text = format!(
        "{MINIMAL}\n[device.emulator]\nhandle_inertia_kg_m2 = 2e-4\nhand_rotational_stiffness_n_m_per_rad = 3.0\nhand_rotational_damping_n_m_s_per_rad = 0.05\nhandle_rotational_damping_n_m_s_per_rad = 0.0\n"
    );
    assert_eq!(
        hand(&text).rotation,
        Some(RotationParams {
            inertia: 2e-4,
            k_hand: 3.0,
            c_hand: 0.05,
            damping: 0.0,
        })
    );
    let text = format!("{MINIMAL}\n[device.emulator]\nrotation = \"kinematic\"\n");
    assert_eq!(hand(&text).rotation, None);
    let text = format!("{MINIMAL}\n[device.emulator]\nrotation = \"free\"\n");
    let e = error(
        &text,
        line_of(&text, "rotation ="),
        "device.emulator.rotation",
    );
    assert!(e.message.contains("kinematic"), "{e}");

    for (field, value) in [
        ("handle_inertia_kg_m2", "0.0"),
        ("handle_inertia_kg_m2", "nan"),
        ("hand_rotational_stiffness_n_m_per_rad", "-1.0"),
        ("hand_rotational_stiffness_n_m_per_rad", "inf"),
        ("hand_rotational_damping_n_m_s_per_rad", "-0.01"),
        ("handle_rotational_damping_n_m_s_per_rad", "inf"),
    ] {
        let text = format!("{MINIMAL}\n[device.emulator]\n{field} = {value}\n");
        let e = error(
            &text,
            line_of(&text, &format!("{field} =")),
            &format!("device.emulator.{field}"),
        );
        assert!(
            e.message.contains("positive") || e.message.contains("≥ 0"),
            "{field} = {value}: {e}"
        );
    }
}

#[test]
fn thread_tables_may_be_partial_and_are_checked() {
    let text = format!("{MINIMAL}\n[threads.servo]\ncpu = 1\n[threads.physics]\npriority = 40\n");
    let threads = *parse(&text).unwrap().threads();
    let defaults = Threads::default();
    assert_eq!(threads.servo.cpu, Some(1));
    assert_eq!(threads.servo.priority, Some(80));
    assert_eq!(threads.servo.rate_hz, 1000.0);
    assert_eq!(threads.physics.priority, Some(40));
    assert_eq!(threads.physics.rate_hz, defaults.physics.rate_hz);
    assert_eq!(threads.telemetry, defaults.telemetry);

    let text = format!("{MINIMAL}\n[threads.servo]\npriority = 0\n");
    assert_eq!(parse(&text).unwrap().threads().servo.priority, None);

    let text = format!("{MINIMAL}\n[threads.servo]\ncores = 1\n");
    let e = error(&text, line_of(&text, "cores"), "threads.servo.cores");
    assert!(e.message.contains("unknown field"), "{e}");
    let text = format!("{MINIMAL}\n[threads.servo]\npriority = 120\n");
    error(&text, line_of(&text, "priority"), "threads.servo.priority");
    let text = format!("{MINIMAL}\n[threads.telemetry]\npriority = 80\n");
    let e = error(
        &text,
        line_of(&text, "priority"),
        "threads.telemetry.priority",
    );
    assert!(e.message.contains("below the servo"), "{e}");
    let text = format!("{MINIMAL}\n[threads.servo]\ncpu = 5000\n");
    error(&text, line_of(&text, "cpu"), "threads.servo.cpu");
    let text = format!("{MINIMAL}\n[threads.physics]\nrate_hz = 0.01\n");
    error(&text, line_of(&text, "rate_hz"), "threads.physics.rate_hz");
}

#[test]
fn keeping_cpus_awake_is_the_default_and_can_be_turned_off() {
    assert!(parse(MINIMAL).unwrap().threads().keep_cpus_awake);
    let text = format!("{MINIMAL}\n[threads]\nkeep_cpus_awake = false\n");
    assert!(!parse(&text).unwrap().threads().keep_cpus_awake);
}

#[test]
fn overrides_apply_before_validation() {
    let emulator = MINIMAL.replace(
        "motion = { segments = [{ type = \"hold\", duration_s = 1.0 }] }",
        "kind = \"emulator\"",
    );
    let e = error(
        &emulator,
        line_of(&emulator, "kind = \"emulator\""),
        "device.kind",
    );
    assert!(e.message.contains("trajectory_file"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let trajectory = dir.path().join("walk.traj");
    std::fs::write(&trajectory, "not read by validation").unwrap();
    let overrides = Overrides {
        trajectory: Some(trajectory.clone()),
        ..Overrides::default()
    };
    let config = Scene::parse(&emulator, Path::new("bad.toml"), dir.path(), &overrides)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(config.device().kind, DeviceKind::Emulator);
    assert_eq!(config.device().trajectory_file.as_ref(), Some(&trajectory));
    // Errors in the file still name their line.
    let text = emulator.replace("role = \"field\"", "role = \"field\"\nfield_resolution = 1");
    let e = Scene::parse(&text, Path::new("bad.toml"), dir.path(), &overrides).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("objects[1].field_resolution"));
    assert_eq!(
        e.at.map(|a| a.line),
        Some(line_of(&text, "field_resolution"))
    );
    // A bad override is refused like a bad value in the file.
    let overrides = Overrides {
        device: Some(DeviceKind::Hid),
        profile: Some("no-such-device".to_owned()),
        servo_cpu: Some(2),
        servo_priority: Some(0),
        ..Overrides::default()
    };
    let e = Scene::parse(MINIMAL, Path::new("bad.toml"), dir.path(), &overrides).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("device.profile"), "{e}");
    assert!(e.message.contains("no profile `no-such-device`"), "{e}");
    // Without a profile a HID device is the one that matches at start-up.
    let hid = Overrides {
        profile: None,
        ..overrides.clone()
    };
    let scene = Scene::parse(MINIMAL, Path::new("bad.toml"), dir.path(), &hid).unwrap();
    assert_eq!(scene.device().kind, DeviceKind::Hid);
    let overrides = Overrides {
        device: None,
        profile: None,
        ..overrides
    };
    let servo = Scene::parse(MINIMAL, Path::new("bad.toml"), dir.path(), &overrides)
        .unwrap()
        .threads()
        .servo;
    assert_eq!((servo.cpu, servo.priority), (Some(2), None));
}

#[test]
fn the_servo_refuses_the_reference_solver() {
    let servo = ServoScene::new(parse(MINIMAL).unwrap()).unwrap();
    assert_eq!(servo.rendering().solver, Solver::Fast);
    // Replay and scenarios may use it.
    let text = format!("{MINIMAL}\n[rendering]\nsolver = \"reference\"\n");
    let scene = parse(&text).unwrap();
    assert_eq!(scene.rendering().solver, Solver::Reference);
    let e = ServoScene::new(scene).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("rendering.solver"));
    assert!(e.message.contains("allocates in every tick"), "{e}");
}

#[test]
fn the_server_table_is_checked_and_names_its_fields() {
    let server = parse(MINIMAL).unwrap().server().clone();
    assert_eq!(server, ServerSettings::default());
    assert_eq!(
        server.listen_address(),
        Some(std::net::SocketAddr::from(([127, 0, 0, 1], 7878)))
    );
    for (table, field, message) in [
        (
            "listen = \"0.0.0.0:7878\"",
            "server.token",
            "not a loopback",
        ),
        ("listen = \"localhost\"", "server.listen", "not an address"),
        ("listen = \"\"", "server.listen", "listen nowhere"),
        ("token = \"two words\"", "server.token", "printable"),
        ("max_clients = 0", "server.max_clients", "1–1024"),
        (
            "max_request_bytes = 10",
            "server.max_request_bytes",
            "1 KiB",
        ),
        (
            "requests_per_second = 0",
            "server.requests_per_second",
            "at least 1",
        ),
    ] {
        let text = format!("{MINIMAL}\n[server]\n{table}\n");
        // A missing token is placed at its table.
        let written = if table.starts_with("token") || field != "server.token" {
            table
        } else {
            "[server]"
        };
        let e = error(&text, line_of(&text, written), field);
        assert!(e.message.contains(message), "{table}: {e}");
    }
    let remote = format!("{MINIMAL}\n[server]\nlisten = \"0.0.0.0:0\"\ntoken = \"s3cret\"\n");
    let server = parse(&remote).unwrap().server().clone();
    assert_eq!(server.token.as_deref(), Some("s3cret"));
    let unix_only = format!("{MINIMAL}\n[server]\nlisten = \"\"\nunix_socket = \"h.sock\"\n");
    assert_eq!(parse(&unix_only).unwrap().server().listen_address(), None);
    let disabled = format!("{MINIMAL}\n[server]\nenabled = false\nlisten = \"0.0.0.0:1\"\n");
    assert!(!parse(&disabled).unwrap().server().enabled);
}

#[test]
fn server_overrides_apply_before_validation() {
    let with = |overrides: Overrides| {
        Scene::parse(
            MINIMAL,
            Path::new("bad.toml"),
            Path::new("/nonexistent"),
            &overrides,
        )
    };
    let e = with(Overrides {
        listen: Some("[::]:0".into()),
        ..Overrides::default()
    })
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("server.token"), "{e}");
    let scene = with(Overrides {
        listen: Some("127.0.0.1:0".into()),
        unix_socket: Some("/tmp/h.sock".into()),
        no_server: true,
        ..Overrides::default()
    })
    .unwrap();
    let server = scene.server();
    assert_eq!(server.listen, "127.0.0.1:0");
    assert_eq!(
        server.unix_socket.as_deref(),
        Some(Path::new("/tmp/h.sock"))
    );
    assert!(!server.enabled);
}

/// A patch from its JSON, as the control API receives it.
fn patch(json: &str) -> RenderingPatch {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_patch_changes_only_the_fields_it_names() {
    let scene = Scene::embedded_default(&Overrides::default()).unwrap();
    let before = scene.tunable();
    let patched = scene
        .patched(&patch(
            r#"{"materials": {"wood": {"friction_coefficient": 0.8}},
                "rendering": {"static_damping": 0.3, "friction": "yamane_springs",
                              "pyramid_sides": 12}}"#,
        ))
        .unwrap();
    let after = patched.tunable();
    assert_eq!(after.materials["wood"].friction_coefficient, 0.8);
    assert_eq!(
        after.materials["wood"].contact_stiffness_n_per_m,
        before.materials["wood"].contact_stiffness_n_per_m
    );
    let expected = Rendering {
        static_damping: 0.3,
        friction: Friction::YamaneSprings,
        pyramid_sides: 12,
        ..before.rendering
    };
    assert_eq!(after.rendering, expected);
    let corner = patched.environment().next().unwrap();
    assert_eq!(patched.friction_coefficient(corner), 0.8);
    assert_eq!(patched.render_parameters().pyramid_sides, 12);
    assert_eq!(patched.name(), scene.name());
    // The original is untouched, and an empty patch changes nothing.
    assert_eq!(scene.tunable(), before);
    assert_eq!(
        scene.patched(&RenderingPatch::default()).unwrap().tunable(),
        before
    );
}

#[test]
fn a_refused_patch_names_the_field_and_changes_nothing() {
    let scene = ServoScene::new(Scene::embedded_default(&Overrides::default()).unwrap()).unwrap();
    let before = scene.tunable();
    for (json, field, says) in [
        (
            r#"{"rendering": {"static_damping": 1.0}}"#,
            "rendering.static_damping",
            "α must be in [0, 1)",
        ),
        (
            r#"{"rendering": {"pyramid_sides": 2}}"#,
            "rendering.pyramid_sides",
            "at least 3",
        ),
        (
            r#"{"rendering": {"pyramid_sides": 33}}"#,
            "rendering.pyramid_sides",
            "at most 32",
        ),
        (
            r#"{"materials": {"wood": {"friction_coefficient": -0.1}}}"#,
            "materials.wood.friction_coefficient",
            "≥ 0",
        ),
        (
            r#"{"materials": {"steel": {"friction_coefficient": 0.2}}}"#,
            "materials.steel",
            "no such material",
        ),
        (
            r#"{"rendering": {"solver": "reference"}}"#,
            "rendering.solver",
            "allocates in every tick",
        ),
    ] {
        let e = scene.patched(&patch(json)).unwrap_err();
        assert_eq!(e.field.as_deref(), Some(field), "{json}: {e}");
        assert!(e.message.contains(says), "{json}: {e}");
        assert_eq!(
            e.file,
            Path::new("<parameter patch of <embedded default scene>>")
        );
        assert_eq!(e.at, None);
        assert_eq!(scene.tunable(), before);
    }
    // Replay and scenarios may patch to the reference solver.
    let reference = Scene::patched(&scene, &patch(r#"{"rendering": {"solver": "reference"}}"#));
    assert_eq!(reference.unwrap().rendering().solver, Solver::Reference);
}

#[test]
fn patches_refuse_unknown_fields_and_use_the_file_s_names() {
    for json in [
        r#"{"rendering": {"damping": 0.5}}"#,
        r#"{"materials": {"wood": {"mu": 0.5}}}"#,
        r#"{"device": {}}"#,
        r#"{"rendering": {"friction": "coulomb"}}"#,
    ] {
        assert!(
            serde_json::from_str::<RenderingPatch>(json).is_err(),
            "{json}"
        );
    }
    let scene = Scene::embedded_default(&Overrides::default()).unwrap();
    let tunable = serde_json::to_value(scene.tunable()).unwrap();
    assert_eq!(tunable["rendering"]["friction"], "pre_sliding");
    assert_eq!(tunable["rendering"]["solver"], "fast");
    assert_eq!(tunable["materials"]["wood"]["friction_coefficient"], 0.5);
    // Every tunable field is patchable under the same name.
    let everything: RenderingPatch = serde_json::from_value(tunable).unwrap();
    assert_eq!(everything.rendering.gradient, Some(Gradient::Exact));
    assert_eq!(
        scene.patched(&everything).unwrap().tunable(),
        scene.tunable()
    );
}

#[test]
fn the_implicit_default_material_is_tunable() {
    let scene = parse(MINIMAL).unwrap();
    assert_eq!(
        scene.tunable().materials.keys().collect::<Vec<_>>(),
        ["default"]
    );
    let patched = scene
        .patched(&patch(
            r#"{"materials": {"default": {"contact_stiffness_n_per_m": 300.0}}}"#,
        ))
        .unwrap();
    assert_eq!(patched.render_parameters().penalty.stiffness, 300.0);
}

#[test]
fn the_patch_schema_names_the_file_s_fields() {
    use utoipa::PartialSchema;
    let schema = serde_json::to_string(&RenderingPatch::schema()).unwrap();
    for name in ["materials", "rendering"] {
        assert!(schema.contains(name), "{schema}");
    }
    let fields = serde_json::to_string(&RenderingFieldsPatch::schema()).unwrap();
    for name in ["static_damping", "pyramid_sides", "friction", "solver"] {
        assert!(fields.contains(&format!("\"{name}\"")), "{fields}");
    }
    let friction = serde_json::to_string(&Friction::schema()).unwrap();
    assert!(friction.contains("yamane_springs"), "{friction}");
}
