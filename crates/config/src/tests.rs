use super::*;
use crate::validate::MAX_PYRAMID_SIDES;
use haptic_devices::OnDisconnect;
use haptic_mesh::shapes::{BLOCK_HALF, CUBE_HALF, PEG_LENGTH, PEG_RADIUS};
use haptic_render::{FrictionModel, RenderParameters};
use haptic_schema::rendering::{ForceDirection, Friction, GradientModel, SolverChoice};
use nalgebra::{Matrix3, Vector3};
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
    let tool = config.tool().mass_properties(None);
    let (p, d) = (config.render_parameters(tool), RenderParameters::default());
    assert_eq!(p.penalty, d.penalty);
    assert_eq!(p.coupling, d.coupling);
    assert_eq!(p.mass, d.mass);
    assert_eq!(p.gradient, d.gradient);
    assert_eq!(p.pyramid_sides, d.pyramid_sides);
    assert_eq!(p.static_damping, d.static_damping);
    assert_eq!(p.friction, d.friction);
    assert_eq!(p.solver, d.solver);
    // The library renders exactly by default; a configured servo has a budget.
    assert_eq!(d.time_budget, None);
    let budget = p.time_budget.unwrap();
    assert_eq!(budget.total, std::time::Duration::from_micros(250));
    assert_eq!(budget.collision_share, 0.5);
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
    let p = peg.render_parameters(peg.tool().mass_properties(None));
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

    let text = format!("{MINIMAL}\n[rendering]\ncycle_budget_us = 1000.0\n");
    let e = error(
        &text,
        line_of(&text, "cycle_budget_us"),
        "rendering.cycle_budget_us",
    );
    assert!(e.message.contains("servo period (1000 µs"), "{e}");
    let text = format!("{MINIMAL}\n[rendering]\ncycle_budget_us = -5.0\n");
    error(
        &text,
        line_of(&text, "cycle_budget_us"),
        "rendering.cycle_budget_us",
    );
    let text = format!("{MINIMAL}\n[coupling]\nblend_ms = -1.0\n");
    error(&text, line_of(&text, "blend_ms"), "coupling.blend_ms");
    let text = format!("{MINIMAL}\n[coupling]\npassivity_max_damping_n_s_per_m = nan\n");
    error(
        &text,
        line_of(&text, "passivity_max_damping"),
        "coupling.passivity_max_damping_n_s_per_m",
    );
    let text = format!("{MINIMAL}\n[coupling]\ndevice_rotational_damping_n_m_s_per_rad = -0.1\n");
    error(
        &text,
        line_of(&text, "device_rotational"),
        "coupling.device_rotational_damping_n_m_s_per_rad",
    );

    let text = format!("{MINIMAL}\n[rendering]\ncollision_budget_share = 0.0\n");
    error(
        &text,
        line_of(&text, "collision_budget_share"),
        "rendering.collision_budget_share",
    );

    let text = MINIMAL.replace(
        "shape = { kind = \"box\", half_extents_m = [0.1, 0.1, 0.01] }",
        "mesh = \"meshes/wall.obj\"",
    );
    let e = error(&text, line_of(&text, "mesh ="), "objects[1].mesh");
    assert!(e.message.contains("/nonexistent/meshes/wall.obj"), "{e}");

    let text = MINIMAL.replace(
        "role = \"field\"",
        "role = \"field\"\nmesh_unit = \"furlong\"",
    );
    let e = error(&text, line_of(&text, "mesh_unit"), "objects[1].mesh_unit");
    assert!(e.message.contains("unknown length unit \"furlong\""), "{e}");
    let text = MINIMAL.replace("role = \"field\"", "role = \"field\"\nmesh_unit = \"mm\"");
    let e = error(&text, line_of(&text, "mesh_unit"), "objects[1].mesh_unit");
    assert!(e.message.contains("only to a `mesh` file"), "{e}");
    let text = MINIMAL.replace("role = \"field\"", "role = \"field\"\nmesh_scale = 0.0");
    error(&text, line_of(&text, "mesh_scale"), "objects[1].mesh_scale");

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
    // Its `[physics]` writes out the world's defaults.
    assert_eq!(embedded.physics(), &Physics::default());
    assert_eq!(file.physics(), &Physics::default());
}

/// The mass properties of `object`'s shape at its density.
fn solid(object: &ObjectConfig) -> haptic_physics::MassProperties {
    let mesh = object.shape.unwrap().mesh().unwrap();
    haptic_physics::mass_properties(&mesh, object.density()).unwrap()
}

#[test]
fn movable_objects_take_mass_from_their_mesh_and_drag_and_only_they_do() {
    let movable = MINIMAL.replace(
        "role = \"field\"",
        "role = \"field\"\nmovable = true\nlinear_damping_n_s_per_m = 3.0",
    );
    let config = parse(&movable).unwrap();
    assert!(config.has_movable());
    let wall = config.environment().next().unwrap();
    // A 0.2 × 0.2 × 0.02 m slab of water: m = 0.8 kg, I = m (b² + c²)/12.
    let (a, b, c) = (0.2, 0.2, 0.02);
    let mass = DEFAULT_DENSITY_KG_M3 * a * b * c;
    let closed_form = Matrix3::from_diagonal(&Vector3::new(
        mass * (b * b + c * c) / 12.0,
        mass * (a * a + c * c) / 12.0,
        mass * (a * a + b * b) / 12.0,
    ));
    let body = wall.mass_properties(Some(&solid(wall)));
    assert!((body.mass - mass).abs() < 1e-12 * mass, "{}", body.mass);
    // parry3d rebuilds the tensor from its eigen-decomposition: 1e-8.
    let tolerance = 1e-8 * closed_form.norm();
    assert!(
        (body.body_inertia - closed_form).norm() < tolerance,
        "{}",
        body.body_inertia
    );
    assert_eq!(wall.drag(), (3.0, 0.0));

    // `mass_kg` scales the mesh's inertia; `inertia_kg_m2` replaces it;
    // a density scales both.
    let heavier = movable.replace("movable = true", "movable = true\nmass_kg = 1.6");
    let config = parse(&heavier).unwrap();
    let wall = config.environment().next().unwrap();
    let body = wall.mass_properties(Some(&solid(wall)));
    assert_eq!(body.mass, 1.6);
    assert!((body.body_inertia - closed_form * 2.0).norm() < 2.0 * tolerance);
    let given = heavier.replace(
        "mass_kg = 1.6",
        "mass_kg = 1.6\ninertia_kg_m2 = [1.0, 2.0, 3.0]",
    );
    let config = parse(&given).unwrap();
    let wall = config.environment().next().unwrap();
    let body = wall.mass_properties(Some(&solid(wall)));
    assert_eq!(
        body.body_inertia,
        Matrix3::from_diagonal(&Vector3::new(1.0, 2.0, 3.0))
    );
    let dense = movable.replace("movable = true", "movable = true\ndensity_kg_m3 = 2500.0");
    let config = parse(&dense).unwrap();
    let wall = config.environment().next().unwrap();
    let body = wall.mass_properties(Some(&solid(wall)));
    assert!((body.mass - 2.5 * mass).abs() < 1e-12);

    // The tool takes its mesh's mass properties only with a density.
    let config = parse(MINIMAL).unwrap();
    let tool = config.tool();
    assert_eq!(
        tool.mass_properties(Some(&solid(tool))),
        RenderParameters::default().mass
    );
    let text = MINIMAL.replace("tool = true", "tool = true\ndensity_kg_m3 = 1000.0");
    let config = parse(&text).unwrap();
    let tool = config.tool();
    let sphere = tool.mass_properties(Some(&solid(tool)));
    let ball = 4.0 / 3.0 * std::f64::consts::PI * 0.02f64.powi(3) * 1000.0;
    assert!((sphere.mass - ball).abs() < 0.01 * ball, "{}", sphere.mass);

    let text = movable
        .replace("movable = true\n", "")
        .replace("linear_damping_n_s_per_m = 3.0", "mass_kg = 0.4");
    error(&text, line_of(&text, "mass_kg"), "objects[1].mass_kg");
    let text = movable
        .replace("movable = true\n", "")
        .replace("linear_damping_n_s_per_m = 3.0", "density_kg_m3 = 700.0");
    let e = error(&text, line_of(&text, "density"), "objects[1].density_kg_m3");
    assert!(
        e.message.contains("only the tool and movable objects"),
        "{e}"
    );
    let text = movable.replace("movable = true\n", "");
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
    for density in ["0.0", "-1.0", "nan", "inf"] {
        let text = movable.replace(
            "movable = true",
            &format!("movable = true\ndensity_kg_m3 = {density}"),
        );
        let e = error(&text, line_of(&text, "density"), "objects[1].density_kg_m3");
        assert!(e.message.contains("positive and finite"), "{e}");
    }
    let text = MINIMAL.replace("tool = true", "tool = true\nmovable = true");
    error(&text, line_of(&text, "movable"), "objects[0].movable");
}

#[test]
fn meshless_bodies_need_their_mass_properties_given() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("wall.hgeo"), "not read by validation").unwrap();
    let prepared = MINIMAL.replace(
        "shape = { kind = \"box\", half_extents_m = [0.1, 0.1, 0.01] }",
        "prepared = \"wall.hgeo\"\nmovable = true",
    );
    let at = |text: &str| {
        Scene::parse(
            text,
            Path::new("bad.toml"),
            dir.path(),
            &Overrides::default(),
        )
    };
    let e = at(&prepared).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("objects[1].mass_kg"), "{e}");
    assert!(e.message.contains("a prepared file holds no mesh"), "{e}");
    let given = prepared.replace("movable = true", "movable = true\nmass_kg = 0.3");
    let e = at(&given).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("objects[1].inertia_kg_m2"), "{e}");
    let given = given.replace(
        "mass_kg = 0.3",
        "mass_kg = 0.3\ninertia_kg_m2 = [1e-3, 1e-3, 1e-3]",
    );
    at(&given).unwrap_or_else(|e| panic!("{e}"));
    let dense = given.replace("mass_kg = 0.3", "density_kg_m3 = 900.0");
    let e = at(&dense).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("objects[1].density_kg_m3"), "{e}");

    // With movable objects, a floor grid cannot be a body: it has no field.
    let text = format!(
        "{}\n[[objects]]\nname = \"floor\"\nshape = {{ kind = \"floor_grid\", points_per_side = 4, spacing_m = 0.01 }}\nrole = \"point_shell\"\n",
        MINIMAL
            .replace("role = \"point_shell\"", "role = \"both\"")
            .replace("role = \"field\"", "role = \"field\"\nmovable = true")
    );
    let e = error(
        &text,
        line_of(&text, "kind = \"floor_grid\""),
        "objects[2].shape.kind",
    );
    assert!(e.message.contains("needs a solid"), "{e}");
    parse(&text.replace("movable = true", "")).unwrap_or_else(|e| panic!("{e}"));
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
fn force_dimension_settings_are_read_and_checked() {
    let config = parse(MINIMAL).unwrap();
    assert_eq!(config.device().forcedim, ForceDimensionConfig::default());
    let forcedim = MINIMAL.replace("[device]\n", "[device]\nkind = \"forcedim\"\n");
    let text = format!(
        "{forcedim}\n[device.forcedim]\ndevice_index = 2\ngravity_compensation = false\nauto_init = false\nwatchdog_ms = 5.0\nvelocity_threshold = 40\nmax_force_n = 6.5\n"
    );
    let scene = parse(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scene.device().kind, DeviceKind::ForceDimension);
    let f = &scene.device().forcedim;
    assert_eq!(
        (
            f.device_index,
            f.gravity_compensation,
            f.auto_init,
            f.watchdog_ms
        ),
        (2, false, false, 5.0)
    );
    assert_eq!(
        (f.velocity_threshold, f.max_force_n, f.max_torque_n_m),
        (Some(40), Some(6.5), None)
    );
    for (line, field, message) in [
        (
            "watchdog_ms = 40.0",
            "device.forcedim.watchdog_ms",
            "31.875",
        ),
        (
            "device_index = 128",
            "device.forcedim.device_index",
            "0–127",
        ),
        (
            "max_force_n = -1.0",
            "device.forcedim.max_force_n",
            "positive",
        ),
        (
            "max_torque_n_m = inf",
            "device.forcedim.max_torque_n_m",
            "finite",
        ),
        (
            "watchdog = 5.0",
            "device.forcedim.watchdog",
            "unknown field",
        ),
        (
            "library = \"sdk/libdrd.so\"",
            "device.forcedim.library",
            "no such file: /nonexistent/sdk/libdrd.so",
        ),
    ] {
        let text = format!("{forcedim}\n[device.forcedim]\n{line}\n");
        let e = error(&text, line_of(&text, line), field);
        assert!(e.message.contains(message), "{e}");
    }
    // The library is checked only for the device in use.
    let text = format!("{MINIMAL}\n[device.forcedim]\nlibrary = \"sdk/libdrd.so\"\n");
    parse(&text).unwrap_or_else(|e| panic!("{e}"));
    let over = Overrides {
        device: Some(DeviceKind::ForceDimension),
        ..Default::default()
    };
    let e = Scene::parse(
        &text,
        Path::new("bad.toml"),
        Path::new("/nonexistent"),
        &over,
    )
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("device.forcedim.library"), "{e}");
}

#[test]
fn openhaptics_settings_are_read_and_checked() {
    let config = parse(MINIMAL).unwrap();
    assert_eq!(config.device().openhaptics, OpenHapticsConfig::default());
    assert_eq!(config.device().openhaptics.device_name, "Default Device");
    let oh = MINIMAL.replace("[device]\n", "[device]\nkind = \"openhaptics\"\n");
    let text =
        format!("{oh}\n[device.openhaptics]\ndevice_name = \"Left Touch\"\nmax_force_n = 2.5\n");
    let scene = parse(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scene.device().kind, DeviceKind::OpenHaptics);
    let o = &scene.device().openhaptics;
    assert_eq!(
        (o.device_name.as_str(), o.max_force_n),
        ("Left Touch", Some(2.5))
    );
    for (line, field, message) in [
        (
            "device_name = \"\"",
            "device.openhaptics.device_name",
            "Default Device",
        ),
        (
            "max_force_n = 0.0",
            "device.openhaptics.max_force_n",
            "positive",
        ),
        (
            "max_torque_n_m = 1.0",
            "device.openhaptics.max_torque_n_m",
            "unknown field",
        ),
        (
            "library = \"oh/libHD.so\"",
            "device.openhaptics.library",
            "no such file: /nonexistent/oh/libHD.so",
        ),
    ] {
        let text = format!("{oh}\n[device.openhaptics]\n{line}\n");
        let e = error(&text, line_of(&text, line), field);
        assert!(e.message.contains(message), "{e}");
    }
    // The library is checked only for the device in use.
    let text = format!("{MINIMAL}\n[device.openhaptics]\nlibrary = \"oh/libHD.so\"\n");
    parse(&text).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn on_disconnect_is_read_for_every_device_kind_and_checked() {
    let config = parse(MINIMAL).unwrap();
    assert_eq!(config.device().on_disconnect, OnDisconnect::Wait);
    let stop = MINIMAL.replace("[device]\n", "[device]\non_disconnect = \"stop\"\n");
    let scene = parse(&stop).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scene.device().on_disconnect, OnDisconnect::Stop);
    let retry = MINIMAL.replace("[device]\n", "[device]\non_disconnect = \"retry\"\n");
    let message = parse(&retry).unwrap_err().to_string();
    assert!(message.contains("device.on_disconnect"), "{message}");
    assert!(message.contains("wait"), "{message}");
    // The Haply table no longer has one of its own.
    let haply = format!("{MINIMAL}\n[device.haply]\non_disconnect = \"stop\"\n");
    let message = parse(&haply).unwrap_err().to_string();
    assert!(message.contains("unknown field"), "{message}");
}

#[test]
fn haply_settings_are_read_and_checked() {
    let config = parse(MINIMAL).unwrap();
    assert_eq!(config.device().haply, HaplyConfig::default());
    assert_eq!(config.device().haply.url, "ws://127.0.0.1:10001");
    let haply = MINIMAL.replace("[device]\n", "[device]\nkind = \"haply\"\n");
    let text = format!(
        "{haply}\n[device.haply]\nurl = \"ws://localhost:10001\"\ninverse3 = \"COM12\"\n\
         verse_grip = \"61548\"\ncentre_m = [0.0, -0.12, 0.15]\n\
         stale_after_ms = 5.0\n"
    );
    let scene = parse(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scene.device().kind, DeviceKind::Haply);
    let h = &scene.device().haply;
    assert_eq!(
        (h.inverse3.as_deref(), h.verse_grip.as_deref()),
        (Some("COM12"), Some("61548"))
    );
    assert_eq!(h.centre_m, [0.0, -0.12, 0.15]);
    assert_eq!(h.stale_after_ms, 5.0);
    for (line, field, message) in [
        (
            "url = \"http://localhost:10001\"",
            "device.haply.url",
            "ws://HOST:PORT",
        ),
        ("url = \"ws://\"", "device.haply.url", "plain WebSocket URL"),
        (
            "inverse3 = \"\"",
            "device.haply.inverse3",
            "device_id or a serial port",
        ),
        (
            "centre_m = [0.0, nan, 0.0]",
            "device.haply.centre_m",
            "finite",
        ),
        ("max_force_n = -1.0", "device.haply.max_force_n", "positive"),
        (
            "exchange_rate_hz = 50.0",
            "device.haply.exchange_rate_hz",
            "between 100",
        ),
        (
            "stale_after_ms = 0.5",
            "device.haply.stale_after_ms",
            "shorter than one exchange",
        ),
        (
            "lost_after_ms = 10.0",
            "device.haply.lost_after_ms",
            "must exceed `stale_after_ms`",
        ),
        (
            "reconnect_interval_ms = 0.0",
            "device.haply.reconnect_interval_ms",
            "positive",
        ),
        (
            "connect_timeout_ms = 90000.0",
            "device.haply.connect_timeout_ms",
            "at most 60000",
        ),
        ("port = 10001", "device.haply.port", "unknown field"),
    ] {
        let text = format!("{haply}\n[device.haply]\n{line}\n");
        let e = error(&text, line_of(&text, line), field);
        assert!(e.message.contains(message), "{e}");
    }
    let text = format!("{haply}\n[device.haply]\nuse_verse_grip = false\nverse_grip = \"A1\"\n");
    let e = error(
        &text,
        line_of(&text, "verse_grip = \"A1\""),
        "device.haply.verse_grip",
    );
    assert!(e.message.contains("use_verse_grip = false"), "{e}");
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
    assert_eq!(servo.rendering().solver, SolverChoice::Fast);
    // Replay and scenarios may use it.
    let text = format!("{MINIMAL}\n[rendering]\nsolver = \"reference\"\n");
    let scene = parse(&text).unwrap();
    assert_eq!(scene.rendering().solver, SolverChoice::Reference);
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
    assert_eq!(
        patched
            .render_parameters(patched.tool().mass_properties(None))
            .pyramid_sides,
        12
    );
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
    assert_eq!(
        reference.unwrap().rendering().solver,
        SolverChoice::Reference
    );
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
    assert_eq!(everything.rendering.gradient, Some(GradientModel::Exact));
    assert_eq!(
        everything.rendering.force_direction,
        Some(ForceDirection::FieldGradient)
    );
    assert_eq!(
        scene.patched(&everything).unwrap().tunable(),
        scene.tunable()
    );
}

#[test]
fn the_force_direction_reaches_the_penalty_parameters_and_a_wrong_one_is_named() {
    let text = format!("{MINIMAL}\n[rendering]\nforce_direction = \"shell_normal\"\n");
    let config = parse(&text).unwrap();
    let p = config.render_parameters(config.tool().mass_properties(None));
    assert_eq!(p.penalty.direction, ForceDirection::ShellNormal);
    let text = format!("{MINIMAL}\n[rendering]\nforce_direction = \"along_x\"\n");
    let message = parse(&text).unwrap_err().to_string();
    assert!(
        message.contains("force_direction") && message.contains("field_gradient"),
        "{message}"
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
    let tool = patched.tool().mass_properties(None);
    assert_eq!(patched.render_parameters(tool).penalty.stiffness, 300.0);
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
    // Integers carry the range validation accepts, so that every
    // schema-valid value fits the field.
    let fields: serde_json::Value = serde_json::from_str(&fields).unwrap();
    let sides = &fields["properties"]["pyramid_sides"];
    assert_eq!(
        (sides["minimum"].as_f64(), sides["maximum"].as_f64()),
        (Some(3.0), Some(MAX_PYRAMID_SIDES as f64)),
        "{sides}"
    );
    let friction = serde_json::to_string(&Friction::schema()).unwrap();
    assert!(friction.contains("yamane_springs"), "{friction}");
}

#[test]
fn the_physics_table_defaults_to_the_world_s_and_is_checked() {
    use haptic_physics::{ContactModel, DampingMode, Integrator, WorldParameters};
    let defaults = parse(MINIMAL).unwrap().physics().world_parameters();
    assert_eq!(defaults, WorldParameters::default());
    assert_eq!(defaults.gravity, Vector3::new(0.0, 0.0, -9.81));
    let text = format!(
        "{MINIMAL}\n[physics]\ngravity_m_s2 = [0.0, -1.62, 0.0]\nintegrator = \"rk4\"\ncontact_model = \"pid_penalty\"\ncontact_stiffness_n_per_m = 5e4\ncontact_damping_n_s_per_m = 0.0\ndamping_mode = \"full\"\nstiffness_scaling_contacts = 30.0\nfriction_stiffness_n_per_m = 900.0\nbaumgarte_alpha_per_s = 0.0\njoint_post_stabilisation = false\n[physics.pid]\nkp_per_s2 = 900.0\nforgetting = 0.5\npoints = \"deepest\"\n"
    );
    let p = parse(&text).unwrap().physics().world_parameters();
    assert_eq!(p.gravity, Vector3::new(0.0, -1.62, 0.0));
    assert_eq!(p.integrator, Integrator::Rk4);
    assert_eq!(p.contact_model, ContactModel::PidPenalty);
    assert_eq!(p.contact.stiffness, 5e4);
    assert_eq!(p.contact.damping, 0.0);
    assert_eq!(p.contact.damping_mode, DampingMode::Full);
    assert_eq!(p.contact.scaling.reference_contacts, 30.0);
    assert_eq!(p.contact.friction_stiffness, 900.0);
    assert_eq!(p.baumgarte_alpha, 0.0);
    assert!(defaults.joint_post_stabilisation && !p.joint_post_stabilisation);
    assert_eq!(p.pid.kp, 900.0);
    assert_eq!(p.pid.forgetting, 0.5);
    assert_eq!(p.pid.ki, WorldParameters::default().pid.ki);
    assert_eq!(p.pid.points, haptic_physics::pid::PidPoints::Deepest);

    for (line, field, says) in [
        (
            "gravity_m_s2 = [0.0, 0.0, nan]",
            "physics.gravity_m_s2",
            "finite",
        ),
        (
            "contact_stiffness_n_per_m = 0.0",
            "physics.contact_stiffness_n_per_m",
            "positive",
        ),
        (
            "contact_damping_n_s_per_m = -1.0",
            "physics.contact_damping_n_s_per_m",
            "≥ 0",
        ),
        (
            "friction_stiffness_n_per_m = inf",
            "physics.friction_stiffness_n_per_m",
            "finite",
        ),
        (
            "stiffness_scaling_contacts = 0.0",
            "physics.stiffness_scaling_contacts",
            "N0",
        ),
        (
            "baumgarte_alpha_per_s = -2.0",
            "physics.baumgarte_alpha_per_s",
            "≥ 0",
        ),
        (
            "integrator = \"euler\"",
            "physics.integrator",
            "semi_implicit",
        ),
        ("stiffness = 3.0", "physics.stiffness", "unknown field"),
    ] {
        let text = format!("{MINIMAL}\n[physics]\n{line}\n");
        let key = line.split(' ').next().unwrap();
        let e = error(&text, line_of(&text, key), field);
        assert!(e.message.contains(says), "{line}: {e}");
    }
    for (line, field, says) in [
        ("forgetting = 1.0", "physics.pid.forgetting", "in [0, 1)"),
        ("restitution = 1.5", "physics.pid.restitution", "in [0, 1]"),
        ("kd_per_s = -60.0", "physics.pid.kd_per_s", "≥ 0"),
        (
            "friction_coefficient = nan",
            "physics.pid.friction_coefficient",
            "finite",
        ),
    ] {
        let text = format!("{MINIMAL}\n[physics.pid]\n{line}\n");
        let key = line.split(' ').next().unwrap();
        let e = error(&text, line_of(&text, key), field);
        assert!(e.message.contains(says), "{line}: {e}");
    }
}

/// MINIMAL with two movable objects, a box and a door, and `joints`.
fn jointed(joints: &str) -> String {
    format!(
        r#"{}
[[objects]]
name = "box"
shape = {{ kind = "box", half_extents_m = [0.02, 0.02, 0.02] }}
role = "field"
movable = true
position_m = [0.0, 0.0, 0.2]

[[objects]]
name = "door"
shape = {{ kind = "box", half_extents_m = [0.1, 0.005, 0.1] }}
role = "field"
movable = true
position_m = [0.3, 0.0, 0.2]
{joints}"#,
        MINIMAL
    )
}

#[test]
fn joints_name_their_bodies_and_errors_their_fields() {
    let valid = jointed(
        r#"
[[joints]]
name = "pivot"
kind = "ball"
body_a = "box"
point_m = [0.0, 0.0, 0.3]

[[joints]]
name = "hinge"
kind = "hinge"
body_a = "door"
body_b = "wall"
point_m = [0.2, 0.0, 0.2]
axis = [0.0, 0.0, 1.0]

[[joints]]
name = "lid"
kind = "prismatic"
body_a = "box"
body_b = "door"
axis = [1.0, 0.0, 0.0]
controller = { stiffness_n_per_m = 50.0, damping_n_s_per_m = 2.0, target_m = 0.01 }

[[joints]]
name = "upright"
kind = "target_rotation"
body_a = "box"
"#,
    );
    let scene = parse(&valid).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scene.joints().len(), 4);
    assert_eq!(scene.joints()[1].body_b.as_deref(), Some("wall"));
    assert_eq!(
        scene.joints()[2].controller,
        Some(Controller {
            stiffness_n_per_m: 50.0,
            damping_n_s_per_m: 2.0,
            target_m: 0.01
        })
    );

    let missing = valid.replace("body_b = \"door\"", "body_b = \"lid\"");
    let e = error(
        &missing,
        line_of(&missing, "body_b = \"lid\""),
        "joints[2].body_b",
    );
    assert_eq!(e.message, "no object named \"lid\"");
    assert!(
        e.to_string()
            .contains("field `joints[2].body_b`: no object named \"lid\""),
        "{e}"
    );

    for (from, to, field, says) in [
        (
            "body_a = \"door\"",
            "body_a = \"tool\"",
            "joints[1].body_a",
            "is the tool",
        ),
        (
            "body_a = \"door\"",
            "body_a = \"wall\"",
            "joints[1].body_a",
            "not movable",
        ),
        (
            "body_b = \"wall\"",
            "body_b = \"door\"",
            "joints[1].body_b",
            "to itself",
        ),
        (
            "name = \"hinge\"",
            "name = \"pivot\"",
            "joints[1].name",
            "names two joints",
        ),
        (
            "axis = [0.0, 0.0, 1.0]",
            "axis = [0.0, 0.0, 0.0]",
            "joints[1].axis",
            "zero",
        ),
        (
            "axis = [0.0, 0.0, 1.0]",
            "",
            "joints[1].axis",
            "needs its `axis`",
        ),
        (
            "point_m = [0.0, 0.0, 0.3]",
            "point_m = [0.0, inf, 0.3]",
            "joints[0].point_m",
            "finite",
        ),
        (
            "point_m = [0.0, 0.0, 0.3]",
            "",
            "joints[0].point_m",
            "needs its anchor",
        ),
        (
            "kind = \"ball\"",
            "kind = \"slider\"",
            "joints[0].kind",
            "prismatic",
        ),
        (
            "target_m = 0.01",
            "target_m = nan",
            "joints[2].controller.target_m",
            "finite",
        ),
        (
            "stiffness_n_per_m = 50.0",
            "stiffness_n_per_m = -5.0",
            "joints[2].controller.stiffness_n_per_m",
            "≥ 0",
        ),
        (
            "controller = {",
            "point_m = [0.0, 0.0, 0.0]\ncontroller = {",
            "",
            "",
        ),
        (
            "kind = \"ball\"",
            "kind = \"ball\"\naxis = [1.0, 0.0, 0.0]",
            "joints[0].axis",
            "has no axis",
        ),
        (
            "body_a = \"box\"\n\n[[joints]]\nname = \"hinge\"",
            "body_a = \"box\"\nbody_b = \"wall\"\n\n[[joints]]\nname = \"hinge\"",
            "",
            "",
        ),
        (
            "kind = \"target_rotation\"\nbody_a = \"box\"",
            "kind = \"target_rotation\"\nbody_a = \"box\"\nbody_b = \"door\"",
            "joints[3].body_b",
            "alone",
        ),
    ] {
        let text = valid.replacen(from, to, 1);
        if from == "controller = {" {
            // The hinge's controller, on its own line.
            let text = text.replace("kind = \"prismatic\"", "kind = \"hinge\"");
            let e = error(
                &text,
                line_of(&text, "controller ="),
                "joints[2].controller",
            );
            assert!(e.message.contains("only a prismatic"), "{e}");
            continue;
        }
        if field.is_empty() {
            // A ball joint to a static body is fine.
            parse(&text).unwrap_or_else(|e| panic!("{e}"));
            continue;
        }
        let at = valid.find(from).unwrap();
        let offset = if to.is_empty() {
            // A missing field is placed at its joint's table.
            valid[..at].rfind("[[joints]]").unwrap()
        } else {
            // The changed line, or the one the change added.
            at + to.rfind('\n').map_or(0, |n| n + 1)
        };
        let e = error(&text, text[..offset].matches('\n').count() + 1, field);
        assert!(e.message.contains(says), "{to}: {e}");
    }
}

/// The physics world's bodies of `scene` where it places them, without
/// geometry.
fn bodies_of(scene: &Scene) -> Vec<haptic_physics::RigidBody> {
    use haptic_physics::{Motion, RigidBody, RigidBodyModel, RigidBodyState};
    scene
        .environment()
        .map(|o| RigidBody {
            model: RigidBodyModel {
                name: o.name.clone(),
                motion: if o.movable {
                    Motion::Dynamic
                } else {
                    Motion::Static
                },
                mass: 1.0,
                body_inertia: Matrix3::identity() * 1e-3,
                geometry: None,
                static_friction: 0.5,
                dynamic_friction: 0.5,
            },
            state: RigidBodyState::at_rest(o.pose()),
        })
        .collect()
}

#[test]
fn redundant_joints_are_kept_and_build_errors_name_the_joint() {
    let hinge = r#"
[[joints]]
name = "hinge"
kind = "hinge"
body_a = "door"
point_m = [0.2, 0.0, 0.2]
axis = [0.0, 0.0, 1.0]
"#;
    // The same hinge twice, and a ball on its axis: 5 + 5 + 3 rows of
    // which 8 are redundant. The solver's pseudo-inverse takes them.
    let text = jointed(&format!(
        "{hinge}{}\n[[joints]]\nname = \"ball\"\nkind = \"ball\"\nbody_a = \"door\"\npoint_m = [0.2, 0.0, 0.25]\n",
        hinge.replace("\"hinge\"\nkind", "\"again\"\nkind")
    ));
    let scene = parse(&text).unwrap_or_else(|e| panic!("{e}"));
    let bodies = bodies_of(&scene);
    let joints = scene
        .world_joints(&bodies)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(joints.len(), 3);
    assert_eq!((joints[0].a, joints[0].b), (2, None));
    haptic_physics::World::new(bodies, joints, scene.physics().world_parameters())
        .unwrap_or_else(|e| panic!("{e}"));

    // A prismatic joint along the line of centres needs two centres.
    let text = jointed(
        "\n[[joints]]\nname = \"slide\"\nkind = \"prismatic\"\nbody_a = \"box\"\nbody_b = \"door\"\n",
    )
    .replace("position_m = [0.3, 0.0, 0.2]", "position_m = [0.0, 0.0, 0.2]");
    let scene = parse(&text).unwrap_or_else(|e| panic!("{e}"));
    let e = scene.world_joints(&bodies_of(&scene)).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("joints[0].axis"), "{e}");
    assert_eq!(e.at.map(|a| a.line), Some(line_of(&text, "[[joints]]")));
    assert!(e.message.contains("centres of mass coincide"), "{e}");
    assert!(e.to_string().starts_with("bad.toml:"), "{e}");
}

#[test]
fn a_falcon_needs_its_firmware_file_and_sane_values() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scene.toml");
    let falcon = MINIMAL.replace(
        "motion = { segments = [{ type = \"hold\", duration_s = 1.0 }] }",
        "kind = \"falcon\"\n\n[device.falcon]\nfirmware = \"novint.bin\"\ngravity_compensation_n = 0.5",
    );
    std::fs::write(&path, &falcon).unwrap();
    let e = Scene::load(&path, &Overrides::default()).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("device.falcon.firmware"), "{e}");
    assert_eq!(e.at.map(|a| a.line), Some(line_of(&falcon, "firmware = ")));
    assert!(e.message.contains("novint.bin"), "{e}");

    std::fs::write(dir.path().join("novint.bin"), [0u8; 16]).unwrap();
    let scene = Scene::load(&path, &Overrides::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scene.device().kind, DeviceKind::Falcon);
    let f = &scene.device().falcon;
    assert_eq!(
        (f.index, f.homing_on_start, f.gravity_compensation_n),
        (0, true, 0.5)
    );
    assert_eq!(f.centre_m, [0.0, 0.0, 0.11]);

    let heavy = falcon.replace(
        "gravity_compensation_n = 0.5",
        "gravity_compensation_n = 12.0",
    );
    std::fs::write(&path, &heavy).unwrap();
    let e = Scene::load(&path, &Overrides::default()).unwrap_err();
    assert_eq!(
        e.field.as_deref(),
        Some("device.falcon.gravity_compensation_n"),
        "{e}"
    );
    assert_eq!(
        e.at.map(|a| a.line),
        Some(line_of(&heavy, "gravity_compensation_n"))
    );

    let unknown = falcon.replace("gravity_compensation_n = 0.5", "serial = \"x\"");
    std::fs::write(&path, &unknown).unwrap();
    let e = Scene::load(&path, &Overrides::default()).unwrap_err();
    assert_eq!(
        e.at.map(|a| a.line),
        Some(line_of(&unknown, "serial")),
        "{e}"
    );

    let missing = falcon.replace("firmware = \"novint.bin\"\n", "");
    std::fs::write(&path, &missing).unwrap();
    let e = Scene::load(&path, &Overrides::default()).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("device.falcon.firmware"), "{e}");
}

#[test]
fn a_coupling_stiffer_than_the_device_damping_allows_is_warned_of() {
    // 2b/T = 2 · 0.5 N·s/m / 1 ms = 1,000 N/m: the default 1,000 N/m is at
    // the bound, scaled by 2 it is four times past it.
    let text = format!("{MINIMAL}\n[coupling]\ndevice_damping_n_s_per_m = 0.5\n");
    let warnings = parse(&text).unwrap().warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("rendering.coupling_stiffness_n_per_m")
            && warnings[0].contains("2b/T is 1000 N/m"),
        "{}",
        warnings[0]
    );
    let text = format!("{MINIMAL}\n[coupling]\ndevice_damping_n_s_per_m = 1.5\n");
    assert!(parse(&text).unwrap().warnings().is_empty());
    // The emulator's handle is damped by its configured damping; the
    // defaults pass (2,000 N/m and 2 N·m/rad against 1,000 and 1).
    let dir = tempfile::tempdir().unwrap();
    let trajectory = dir.path().join("walk.traj");
    std::fs::write(&trajectory, "not read by validation").unwrap();
    let emulated = |text: &str| {
        let overrides = Overrides {
            trajectory: Some(trajectory.clone()),
            ..Overrides::default()
        };
        let text = text.replace(
            "motion = { segments = [{ type = \"hold\", duration_s = 1.0 }] }",
            "kind = \"emulator\"",
        );
        Scene::parse(&text, Path::new("bad.toml"), dir.path(), &overrides)
            .unwrap_or_else(|e| panic!("{e}"))
            .warnings()
    };
    assert!(emulated(MINIMAL).is_empty());
    let weak =
        format!("{MINIMAL}\n[device.emulator]\nhandle_rotational_damping_n_m_s_per_rad = 0.0001\n");
    let warnings = emulated(&weak);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("rendering.coupling_torsional_stiffness_n_m_per_rad")
            && warnings[0].contains("emulator handle_rotational_damping_n_m_s_per_rad"),
        "{}",
        warnings[0]
    );
}
