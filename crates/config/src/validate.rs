//! Checks after parsing: values in range, one tool, materials
//! and roles that fit together, and the files the config references.

use crate::check::{fail, finite, Check, Invalid};
use crate::file::ConfigFile;
use crate::schema::{
    DeviceKind, ForceDimensionConfig, ObjectConfig, OpenHapticsConfig, ServerSettings, Shape,
    Thread, DEFAULT_MATERIAL,
};
use haptic_devices::Profile;
use haptic_devices::ServoRate;
use haptic_mesh::shapes::BUILTIN_NAMES;
use haptic_mesh::LengthUnit;
use std::path::Path;

/// What validation establishes beyond the values themselves.
pub struct Valid {
    /// Index of the one tool.
    pub tool: usize,
    pub servo_rate: ServoRate,
}

/// The most sides a friction pyramid may have (`rendering.pyramid_sides`).
pub(crate) const MAX_PYRAMID_SIDES: usize = 32;

fn positive(field: String, value: f64) -> Check {
    if value > 0.0 && value.is_finite() {
        Ok(())
    } else {
        fail(field, format!("must be positive and finite, not {value}"))
    }
}

fn file_exists(field: String, base: &Path, file: &Path) -> Check {
    let path = base.join(file);
    if path.is_file() {
        Ok(())
    } else {
        fail(field, format!("no such file: {}", path.display()))
    }
}

pub fn validate(config: &ConfigFile, base: &Path) -> Result<Valid, Invalid> {
    let tool = objects(config, base)?;
    for (name, material) in &config.materials {
        let field = |f: &str| format!("materials.{name}.{f}");
        let mu = material.friction_coefficient;
        if !(mu >= 0.0 && mu.is_finite()) {
            fail(
                field("friction_coefficient"),
                format!("μ must be finite and ≥ 0, not {mu}"),
            )?;
        }
        positive(
            field("contact_stiffness_n_per_m"),
            material.contact_stiffness_n_per_m,
        )?;
    }
    rendering(config)?;
    device(config, base)?;
    for (name, thread) in [
        ("servo", &config.threads.servo),
        ("physics", &config.threads.physics),
        ("telemetry", &config.threads.telemetry),
    ] {
        self::thread(name, thread, &config.threads.servo)?;
    }
    server(&config.server)?;
    let c = &config.coupling;
    for (name, value) in [
        ("blend_ms", Some(c.blend_ms)),
        (
            "passivity_max_damping_n_s_per_m",
            Some(c.passivity_max_damping_n_s_per_m),
        ),
        (
            "passivity_max_rotational_damping_n_m_s_per_rad",
            Some(c.passivity_max_rotational_damping_n_m_s_per_rad),
        ),
        ("device_damping_n_s_per_m", c.device_damping_n_s_per_m),
        (
            "device_rotational_damping_n_m_s_per_rad",
            c.device_rotational_damping_n_m_s_per_rad,
        ),
    ] {
        if let Some(value) = value.filter(|v| !(*v >= 0.0 && v.is_finite())) {
            fail(
                format!("coupling.{name}"),
                format!("must be finite and ≥ 0, not {value}"),
            )?;
        }
    }
    crate::physics::check(&config.physics, &config.joints, &config.objects)?;
    crate::deformable::check(
        &config.deformables,
        &config.deformable_solver,
        &config.objects,
        base,
    )?;
    let servo_rate = ServoRate::from_hz(config.threads.servo.rate_hz).ok_or_else(|| Invalid {
        field: "threads.servo.rate_hz".into(),
        message: "must be positive and finite".into(),
    })?;
    Ok(Valid { tool, servo_rate })
}

/// Checks the objects; returns the tool's index.
fn objects(config: &ConfigFile, base: &Path) -> Result<usize, Invalid> {
    let tools: Vec<usize> = (0..config.objects.len())
        .filter(|&i| config.objects[i].tool)
        .collect();
    let &[tool_index] = tools.as_slice() else {
        return Err(Invalid {
            field: "objects".into(),
            message: format!(
                "exactly one object must be `tool = true`, found {}",
                tools.len()
            ),
        });
    };
    let tool = &config.objects[tool_index];
    let movable = config.objects.iter().any(|o| o.movable);
    let mut stiffness: Option<(String, f64)> = None;
    for (i, object) in config.objects.iter().enumerate() {
        let field = |f: &str| format!("objects[{i}].{f}");
        if config.objects[..i].iter().any(|o| o.name == object.name) {
            fail(
                field("name"),
                format!("`{}` names two objects", object.name),
            )?;
        }
        geometry(object, base, &field)?;
        finite(field("position_m"), &object.position_m)?;
        finite(field("rotation_rad"), &object.rotation_rad)?;
        if object.field_resolution < 2 {
            fail(field("field_resolution"), "must be at least 2")?;
        }
        if object.shell_points == 0 || object.tree_levels == 0 {
            let f = if object.shell_points == 0 {
                "shell_points"
            } else {
                "tree_levels"
            };
            fail(field(f), "must be positive")?;
        }
        if object.tool && object.movable {
            fail(
                field("movable"),
                "the tool follows the device; only environment objects are movable",
            )?;
        }
        for (name, damping) in [
            ("linear_damping_n_s_per_m", object.linear_damping_n_s_per_m),
            (
                "angular_damping_n_m_s_per_rad",
                object.angular_damping_n_m_s_per_rad,
            ),
        ] {
            match damping {
                Some(_) if !object.movable => {
                    fail(field(name), "only movable objects have damping")?
                }
                Some(c) if !(c >= 0.0 && c.is_finite()) => {
                    fail(field(name), format!("must be finite and ≥ 0, not {c}"))?
                }
                _ => {}
            }
        }
        // Every body of the physics world carries a point shell and a field.
        if movable && !object.tool && matches!(object.shape, Some(Shape::FloorGrid { .. })) {
            fail(
                field("shape.kind"),
                "a floor grid is points only: with movable objects in the scene, every environment object is a body of the physics world and needs a solid (a `box`, say)",
            )?;
        }
        mass_properties(object, &field)?;
        if object.tool {
            continue;
        }
        if object.role.has_field() && !tool.role.has_shell() {
            fail(
                field("role"),
                format!("a field needs the tool `{}` to have a point shell (role `point_shell` or `both`)", tool.name),
            )?;
        }
        if object.role.has_shell() && !tool.role.has_field() {
            fail(
                field("role"),
                format!(
                    "a point shell needs the tool `{}` to have a field (role `field` or `both`)",
                    tool.name
                ),
            )?;
        }
        let Some(material) = config.material(object) else {
            return Err(Invalid {
                field: field("material"),
                message: format!("no `[materials.{}]`", object.material),
            });
        };
        let k = material.contact_stiffness_n_per_m;
        match &stiffness {
            Some((other, k0)) if *k0 != k => fail(
                field("material"),
                format!(
                    "contact stiffness {k} N/m differs from material `{other}`'s {k0} N/m; the renderer has one"
                ),
            )?,
            None => stiffness = Some((object.material.clone(), k)),
            Some(_) => {}
        }
    }
    if let Some((i, _)) = config
        .objects
        .iter()
        .enumerate()
        .find(|(_, o)| o.tool && o.material != DEFAULT_MATERIAL)
    {
        fail(
            format!("objects[{i}].material"),
            "materials belong to the static objects",
        )?;
    }
    Ok(tool_index)
}

/// Checks the mass properties of the tool or a movable object, and that
/// its geometry can give what they do not: a prepared file and a floor
/// grid hold no mesh to integrate.
fn mass_properties(object: &ObjectConfig, field: &dyn Fn(&str) -> String) -> Check {
    let given = [
        ("density_kg_m3", object.density_kg_m3.is_some()),
        ("mass_kg", object.mass_kg.is_some()),
        ("inertia_kg_m2", object.inertia_kg_m2.is_some()),
    ];
    if !(object.tool || object.movable) {
        if let Some((name, _)) = given.iter().find(|(_, given)| *given) {
            fail(
                field(name),
                "only the tool and movable objects have mass properties",
            )?;
        }
        return Ok(());
    }
    for (name, value) in [
        ("density_kg_m3", object.density_kg_m3),
        ("mass_kg", object.mass_kg),
    ] {
        if let Some(value) = value {
            positive(field(name), value)?;
        }
    }
    for &moment in object.inertia_kg_m2.iter().flatten() {
        positive(field("inertia_kg_m2"), moment)?;
    }
    let meshless = match (&object.prepared, &object.shape) {
        (Some(_), _) => Some("a prepared file"),
        (_, Some(Shape::FloorGrid { .. })) => Some("a floor grid"),
        _ => None,
    };
    if let Some(what) = meshless {
        if object.density_kg_m3.is_some() {
            fail(
                field("density_kg_m3"),
                format!("{what} holds no mesh to integrate: give `mass_kg` and `inertia_kg_m2`"),
            )?;
        }
        if object.movable {
            for (name, given) in &given[1..] {
                if !given {
                    fail(
                        field(name),
                        format!("{what} holds no mesh to integrate: a movable one needs `mass_kg` and `inertia_kg_m2`"),
                    )?;
                }
            }
        }
    }
    Ok(())
}

fn geometry(object: &ObjectConfig, base: &Path, field: &dyn Fn(&str) -> String) -> Check {
    let sources = [
        object.mesh.is_some(),
        object.prepared.is_some(),
        object.shape.is_some(),
    ];
    if sources.iter().filter(|&&s| s).count() != 1 {
        fail(
            field("mesh"),
            "give exactly one of `mesh`, `prepared` and `shape`",
        )?;
    }
    if let Some(mesh) = &object.mesh {
        match mesh.strip_prefix("builtin:") {
            Some(name) if BUILTIN_NAMES.contains(&name) => {}
            Some(name) => fail(
                field("mesh"),
                format!(
                    "no built-in mesh `{name}` (expected {})",
                    BUILTIN_NAMES.join(", ")
                ),
            )?,
            None => file_exists(field("mesh"), base, Path::new(mesh))?,
        }
    }
    let from_file = object
        .mesh
        .as_ref()
        .is_some_and(|m| !m.starts_with("builtin:"));
    positive(field("mesh_scale"), object.mesh_scale)?;
    if !from_file && object.mesh_scale != 1.0 {
        fail(field("mesh_scale"), "applies only to a `mesh` file")?;
    }
    if !from_file && object.mesh_unit != LengthUnit::Metre {
        fail(field("mesh_unit"), "applies only to a `mesh` file")?;
    }
    if let Some(prepared) = &object.prepared {
        file_exists(field("prepared"), base, prepared)?;
    }
    if let Some(shape) = &object.shape {
        self::shape(shape, object, field)?;
    }
    Ok(())
}

fn shape(shape: &Shape, object: &ObjectConfig, field: &dyn Fn(&str) -> String) -> Check {
    let field = |f: &str| field(&format!("shape.{f}"));
    let all_positive =
        |f: &str, values: &[f64]| values.iter().try_for_each(|&v| positive(field(f), v));
    let segments = |n: u32| {
        if n < 3 {
            fail(field("segments"), format!("must be at least 3, not {n}"))
        } else {
            Ok(())
        }
    };
    match *shape {
        Shape::Box { half_extents_m } => all_positive("half_extents_m", &half_extents_m),
        Shape::Sphere { radius_m } => all_positive("radius_m", &[radius_m]),
        Shape::Torus {
            major_radius_m,
            minor_radius_m,
        } => {
            all_positive("major_radius_m", &[major_radius_m])?;
            all_positive("minor_radius_m", &[minor_radius_m])?;
            if minor_radius_m >= major_radius_m {
                fail(
                    field("minor_radius_m"),
                    "must be less than `major_radius_m`",
                )?;
            }
            Ok(())
        }
        Shape::Cylinder {
            radius_m,
            length_m,
            segments: n,
        } => {
            all_positive("radius_m", &[radius_m])?;
            all_positive("length_m", &[length_m])?;
            segments(n)
        }
        Shape::Corner {
            reach_m,
            height_m,
            thickness_m,
            depth_m,
        } => {
            all_positive("reach_m", &[reach_m])?;
            all_positive("height_m", &[height_m])?;
            all_positive("thickness_m", &[thickness_m])?;
            all_positive("depth_m", &[depth_m])
        }
        Shape::BlockWithHole {
            half_extents_m,
            hole_radius_m,
            segments: n,
        } => {
            all_positive("half_extents_m", &half_extents_m)?;
            all_positive("hole_radius_m", &[hole_radius_m])?;
            if hole_radius_m >= half_extents_m[0].min(half_extents_m[1]) {
                fail(
                    field("hole_radius_m"),
                    "the hole must fit inside the block's x and y half extents",
                )?;
            }
            segments(n)
        }
        Shape::FloorGrid {
            points_per_side,
            spacing_m,
        } => {
            if points_per_side == 0 {
                fail(field("points_per_side"), "must be positive")?;
            }
            all_positive("spacing_m", &[spacing_m])?;
            if object.role.has_field() {
                fail(
                    field("kind"),
                    "a floor grid is points only: its role must be `point_shell`",
                )?;
            }
            Ok(())
        }
    }
}

fn rendering(config: &ConfigFile) -> Check {
    let r = &config.rendering;
    let field = |f: &str| format!("rendering.{f}");
    positive(
        field("coupling_stiffness_n_per_m"),
        r.coupling_stiffness_n_per_m,
    )?;
    positive(
        field("coupling_torsional_stiffness_n_m_per_rad"),
        r.coupling_torsional_stiffness_n_m_per_rad,
    )?;
    if !(0.0..1.0).contains(&r.static_damping) {
        fail(
            field("static_damping"),
            format!("α must be in [0, 1), not {}", r.static_damping),
        )?;
    }
    if r.pyramid_sides < 3 {
        fail(
            field("pyramid_sides"),
            format!("ℓ must be at least 3, not {}", r.pyramid_sides),
        )?;
    }
    // The friction solve grows with ℓ: on the default corner scene (333
    // contacts) its tick's p99 is 170 µs at ℓ = 8, 560 µs at 32, and at 64
    // the 1 kHz servo misses deadlines.
    if r.pyramid_sides > MAX_PYRAMID_SIDES {
        fail(
            field("pyramid_sides"),
            format!(
                "ℓ must be at most {MAX_PYRAMID_SIDES} (more sides cost the servo its deadline), not {}",
                r.pyramid_sides
            ),
        )?;
    }
    if r.stiffness_scaling_contacts.is_nan() || r.stiffness_scaling_contacts <= 0.0 {
        fail(
            field("stiffness_scaling_contacts"),
            format!(
                "N0 must be positive (or inf), not {}",
                r.stiffness_scaling_contacts
            ),
        )?;
    }
    positive(
        field("pre_sliding_displacement_m"),
        r.pre_sliding_displacement_m,
    )?;
    positive(
        field("friction_spring_stiffness_n_per_m"),
        r.friction_spring_stiffness_n_per_m,
    )?;
    positive(field("cycle_budget_us"), r.cycle_budget_us)?;
    let period_us = 1e6 / config.threads.servo.rate_hz;
    if r.cycle_budget_us >= period_us {
        fail(
            field("cycle_budget_us"),
            format!(
                "the rendering budget must be shorter than the servo period ({period_us} µs at threads.servo.rate_hz = {}), not {} µs",
                config.threads.servo.rate_hz, r.cycle_budget_us
            ),
        )?;
    }
    if !(r.collision_budget_share > 0.0 && r.collision_budget_share <= 1.0) {
        fail(
            field("collision_budget_share"),
            format!("must lie in (0, 1], not {}", r.collision_budget_share),
        )?;
    }
    Ok(())
}

fn device(config: &ConfigFile, base: &Path) -> Check {
    let d = &config.device;
    let field = |f: &str| format!("device.{f}");
    finite(field("workspace_offset_m"), &d.workspace_offset_m)?;
    finite(field("workspace_rotation_rad"), &d.workspace_rotation_rad)?;
    positive(field("workspace_scale"), d.workspace_scale)?;
    if let Some(button) = d.clutch_button {
        if button >= 32 {
            fail(
                field("clutch_button"),
                format!("buttons are numbered 0–31, not {button}"),
            )?;
        }
    }
    forcedim(&d.forcedim, d.kind == DeviceKind::ForceDimension, base)?;
    openhaptics(&d.openhaptics, d.kind == DeviceKind::OpenHaptics, base)?;
    haply(&d.haply)?;
    let e = &d.emulator;
    positive(field("emulator.handle_mass_kg"), e.handle_mass_kg)?;
    positive(
        field("emulator.hand_stiffness_n_per_m"),
        e.hand_stiffness_n_per_m,
    )?;
    positive(
        field("emulator.handle_inertia_kg_m2"),
        e.handle_inertia_kg_m2,
    )?;
    positive(
        field("emulator.hand_rotational_stiffness_n_m_per_rad"),
        e.hand_rotational_stiffness_n_m_per_rad,
    )?;
    for (name, value) in [
        ("emulator.hand_damping_n_s_per_m", e.hand_damping_n_s_per_m),
        (
            "emulator.handle_damping_n_s_per_m",
            e.handle_damping_n_s_per_m,
        ),
        (
            "emulator.hand_rotational_damping_n_m_s_per_rad",
            e.hand_rotational_damping_n_m_s_per_rad,
        ),
        (
            "emulator.handle_rotational_damping_n_m_s_per_rad",
            e.handle_rotational_damping_n_m_s_per_rad,
        ),
    ] {
        if !(value >= 0.0 && value.is_finite()) {
            fail(field(name), format!("must be finite and ≥ 0, not {value}"))?;
        }
    }
    match d.kind {
        DeviceKind::Simulated => match (&d.motion, &d.motion_file) {
            (Some(_), Some(_)) | (None, None) => fail(
                field("kind"),
                "a simulated device needs exactly one of `motion` and `motion_file`",
            ),
            (None, Some(file)) => {
                file_exists(field("motion_file"), base, file)?;
                haptic_devices::Motion::load(&base.join(file))
                    .map(drop)
                    .map_err(|e| Invalid {
                        field: field("motion_file"),
                        message: e.to_string(),
                    })
            }
            (Some(_), None) => Ok(()),
        },
        DeviceKind::Emulator => match &d.trajectory_file {
            Some(file) => file_exists(field("trajectory_file"), base, file),
            None => fail(field("kind"), "an emulator needs `trajectory_file`"),
        },
        DeviceKind::ForceDimension | DeviceKind::OpenHaptics | DeviceKind::Haply => Ok(()),
        DeviceKind::Falcon => falcon(&d.falcon, base),
        DeviceKind::Hid => {
            // Without a profile the daemon picks the one connected device
            // that matches a profile, at start-up.
            let Some(profile) = &d.profile else {
                return Ok(());
            };
            let path = base.join(&d.profiles_dir).join(format!("{profile}.toml"));
            if !path.is_file() {
                return fail(
                    field("profile"),
                    format!("no profile `{profile}` ({} does not exist)", path.display()),
                );
            }
            Profile::load(&path).map(drop).map_err(|e| Invalid {
                field: field("profile"),
                message: e.to_string(),
            })
        }
    }
}

/// The watchdog's longest setting (ms): 255 units of 125 µs.
const MAX_WATCHDOG_MS: f64 = 31.875;

/// Checks `[device.forcedim]`; its library must exist when the device is
/// the one in use.
fn forcedim(f: &ForceDimensionConfig, in_use: bool, base: &Path) -> Check {
    let field = |name: &str| format!("device.forcedim.{name}");
    if f.device_index > 127 {
        fail(
            field("device_index"),
            format!("the SDK numbers devices 0–127, not {}", f.device_index),
        )?;
    }
    if !(0.0..=MAX_WATCHDOG_MS).contains(&f.watchdog_ms) {
        fail(
            field("watchdog_ms"),
            format!(
                "must be 0 (off) to {MAX_WATCHDOG_MS} ms (255 × 125 µs), not {}",
                f.watchdog_ms
            ),
        )?;
    }
    if let Some(force) = f.max_force_n {
        positive(field("max_force_n"), force)?;
    }
    if let Some(torque) = f.max_torque_n_m {
        if !(torque >= 0.0 && torque.is_finite()) {
            fail(
                field("max_torque_n_m"),
                format!("must be finite and ≥ 0, not {torque}"),
            )?;
        }
    }
    match &f.library {
        Some(library) if in_use && !base.join(library).exists() => fail(
            field("library"),
            format!("no such file: {}", base.join(library).display()),
        ),
        _ => Ok(()),
    }
}

/// Checks `[device.openhaptics]`; its library must exist when the device
/// is the one in use.
fn openhaptics(o: &OpenHapticsConfig, in_use: bool, base: &Path) -> Check {
    let field = |name: &str| format!("device.openhaptics.{name}");
    if o.device_name.is_empty() || o.device_name.contains('\0') {
        fail(
            field("device_name"),
            format!(
                "must name a device of the Touch setup tool (\"Default Device\" for the default), not {:?}",
                o.device_name
            ),
        )?;
    }
    if let Some(force) = o.max_force_n {
        positive(field("max_force_n"), force)?;
    }
    match &o.library {
        Some(library) if in_use && !base.join(library).exists() => fail(
            field("library"),
            format!("no such file: {}", base.join(library).display()),
        ),
        _ => Ok(()),
    }
}

/// Checks `[device.haply]`: a plain `ws://HOST[:PORT]` URL, names that
/// are not empty, a grip named only when grips are read, a finite
/// centre, and timing that fits together (a sample may go stale only
/// after one exchange period, the link may be lost only after going
/// stale).
fn haply(h: &crate::schema::HaplyConfig) -> Check {
    let field = |name: &str| format!("device.haply.{name}");
    match h.url.strip_prefix("ws://") {
        Some(rest) if !rest.is_empty() && !rest.starts_with([':', '/']) => {}
        _ => fail(
            field("url"),
            format!(
                "must be a plain WebSocket URL `ws://HOST:PORT` (the service's simulation channel, `ws://127.0.0.1:10001`), not {:?}",
                h.url
            ),
        )?,
    }
    for (name, value) in [("inverse3", &h.inverse3), ("verse_grip", &h.verse_grip)] {
        if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
            fail(
                field(name),
                "must name a device_id or a serial port (`hapticd devices` lists them), or be left out for the first",
            )?;
        }
    }
    if h.verse_grip.is_some() && !h.use_verse_grip {
        fail(
            field("verse_grip"),
            "names a grip while `use_verse_grip = false`",
        )?;
    }
    finite(field("centre_m"), &h.centre_m)?;
    positive(field("max_force_n"), h.max_force_n)?;
    if !(100.0..=10_000.0).contains(&h.exchange_rate_hz) {
        fail(
            field("exchange_rate_hz"),
            format!(
                "must be between 100 and 10000 Hz, not {}",
                h.exchange_rate_hz
            ),
        )?;
    }
    positive(field("stale_after_ms"), h.stale_after_ms)?;
    let period_ms = 1000.0 / h.exchange_rate_hz;
    if h.stale_after_ms < period_ms {
        fail(
            field("stale_after_ms"),
            format!(
                "{} ms is shorter than one exchange ({period_ms} ms at {} Hz): every sample would be stale",
                h.stale_after_ms, h.exchange_rate_hz
            ),
        )?;
    }
    positive(field("lost_after_ms"), h.lost_after_ms)?;
    if h.lost_after_ms <= h.stale_after_ms {
        fail(
            field("lost_after_ms"),
            format!(
                "must exceed `stale_after_ms` ({} ms), not {}",
                h.stale_after_ms, h.lost_after_ms
            ),
        )?;
    }
    for (name, value) in [
        ("connect_timeout_ms", h.connect_timeout_ms),
        ("reconnect_interval_ms", h.reconnect_interval_ms),
    ] {
        positive(field(name), value)?;
        if value > 60_000.0 {
            fail(
                field(name),
                format!("must be at most 60000 ms, not {value}"),
            )?;
        }
    }
    Ok(())
}

/// The Falcon's largest force (N): Novint's 2 lbf.
const FALCON_MAX_FORCE_N: f64 = 8.9;

/// Checks `[device.falcon]` for `kind = "falcon"`: the firmware file exists,
/// gravity compensation within the Falcon's force, a finite centre.
fn falcon(f: &crate::schema::FalconConfig, base: &Path) -> Check {
    let field = |name: &str| format!("device.falcon.{name}");
    let Some(firmware) = &f.firmware else {
        return fail(
            field("firmware"),
            "a Falcon needs `firmware`, the path of Novint's firmware image (docs/devices.md)",
        );
    };
    let path = base.join(firmware);
    if !path.is_file() {
        return fail(
            field("firmware"),
            format!("no firmware file at {}", path.display()),
        );
    }
    let g = f.gravity_compensation_n;
    if !(0.0..=FALCON_MAX_FORCE_N).contains(&g) {
        fail(
            field("gravity_compensation_n"),
            format!("must be between 0 and the Falcon's {FALCON_MAX_FORCE_N} N, not {g}"),
        )?;
    }
    finite(field("centre_m"), &f.centre_m)
}

/// Highest CPU number `sched_setaffinity` takes (`CPU_SETSIZE` − 1).
const MAX_CPU: usize = 1023;

/// Checks `[server]`: an address to listen on, a token beyond loopback,
/// limits in range.
fn server(server: &ServerSettings) -> Check {
    let listen = if server.listen.is_empty() {
        None
    } else {
        let address: std::net::SocketAddr = server.listen.parse().map_err(|_| Invalid {
            field: "server.listen".into(),
            message: format!(
                "`{}` is not an address and port (`127.0.0.1:7878`, `[::1]:7878`)",
                server.listen
            ),
        })?;
        Some(address)
    };
    if server.enabled && listen.is_none() && server.unix_socket.is_none() {
        fail(
            "server.listen",
            "empty, and no `server.unix_socket`: the server would listen nowhere",
        )?;
    }
    if let Some(token) = &server.token {
        if token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic()) {
            fail(
                "server.token",
                "must be printable ASCII without spaces, and not empty",
            )?;
        }
    }
    if let Some(address) = listen.filter(|a| !a.ip().is_loopback()) {
        if server.enabled && server.token.is_none() {
            fail(
                "server.token",
                format!("required when `server.listen` ({address}) is not a loopback address"),
            )?;
        }
    }
    if !(1..=1024).contains(&server.max_clients) {
        fail("server.max_clients", "must be 1–1024")?;
    }
    if !(1024..=64 << 20).contains(&server.max_request_bytes) {
        fail("server.max_request_bytes", "must be 1 KiB to 64 MiB")?;
    }
    if server.requests_per_second == 0 {
        fail("server.requests_per_second", "must be at least 1")?;
    }
    Ok(())
}

fn thread(name: &str, thread: &Thread, servo: &Thread) -> Check {
    let field = |f: &str| format!("threads.{name}.{f}");
    let rate = thread.rate_hz;
    if !(1.0..=100_000.0).contains(&rate) {
        fail(
            field("rate_hz"),
            format!("must be 1 Hz to 100 kHz, not {rate}"),
        )?;
    }
    if let Some(priority) = thread.priority {
        if !(1..=99).contains(&priority) {
            fail(
                field("priority"),
                format!("SCHED_FIFO priorities are 1–99 (0 for normal scheduling), not {priority}"),
            )?;
        }
        if name != "servo" && servo.priority.is_none_or(|s| priority >= s) {
            fail(
                field("priority"),
                "must be below the servo's SCHED_FIFO priority, or the servo could wait for it",
            )?;
        }
    }
    if let Some(cpu) = thread.cpu.filter(|&cpu| cpu > MAX_CPU) {
        fail(
            field("cpu"),
            format!("CPUs are numbered 0–{MAX_CPU}, not {cpu}"),
        )?;
    }
    Ok(())
}
