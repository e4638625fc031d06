//! The shipped profiles load, and bad profiles fail naming the file and field.

use haptic_devices::hid::{Axis, ControlMode, Profile};
use haptic_devices::load_profiles;
use std::path::{Path, PathBuf};

fn profiles_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../device-profiles")
}

const GENERIC: &str = "generic-force-feedback.toml";

fn generic_text() -> String {
    std::fs::read_to_string(profiles_dir().join(GENERIC)).unwrap()
}

#[test]
fn every_shipped_profile_loads() {
    let profiles = load_profiles(&profiles_dir()).unwrap();
    assert_eq!(profiles.len(), 14);
    let spacemice: Vec<_> = profiles
        .iter()
        .filter(|p| [0x046d, 0x256f].contains(&p.usb.vendor_id))
        .collect();
    assert_eq!(spacemice.len(), 13);
    for p in &spacemice {
        let caps = p.capabilities();
        assert_eq!(p.control, ControlMode::Rate, "{}", p.name);
        assert_eq!((caps.input_dof, caps.output_dof), (6, 0), "{}", p.name);
        assert_eq!(caps.max_force, 0.0);
        assert!(!p.force_capable());
    }
    let mut ids: Vec<_> = profiles
        .iter()
        .map(|p| (p.usb.vendor_id, p.usb.product_id))
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), profiles.len(), "vendor/product ids are unique");
}

#[test]
fn generic_profile_is_a_six_dof_force_device() {
    let p = Profile::parse(&generic_text(), Path::new(GENERIC)).unwrap();
    let caps = p.capabilities();
    assert_eq!(p.control, ControlMode::Position);
    assert_eq!((caps.input_dof, caps.output_dof), (6, 6));
    assert_eq!(caps.max_force, 8.0);
    assert_eq!(caps.native_rate, 1000.0);
    assert_eq!(p.button_fields().count(), 2);
    assert_eq!(p.axis_fields().filter(|a| a.axis == Axis::Rz).count(), 1);
}

/// Parses `text` as `bad.toml` and returns the error's text.
fn error_of(text: &str) -> String {
    Profile::parse(text, Path::new("bad.toml"))
        .unwrap_err()
        .to_string()
}

fn assert_mentions(message: &str, needles: &[&str]) {
    assert!(message.starts_with("bad.toml: "), "{message}");
    assert!(!message.contains('\n'), "one line: {message}");
    for needle in needles {
        assert!(message.contains(needle), "{needle:?} not in {message}");
    }
}

#[test]
fn unknown_field_is_named() {
    let text = generic_text().replace("native_rate = 1000.0", "native_rate = 1000.0\nrate = 5");
    assert_mentions(&error_of(&text), &["unknown field `rate`", "line "]);
}

#[test]
fn missing_field_is_named() {
    let text = generic_text().replace("product_id = 0x0001\n", "");
    assert_mentions(&error_of(&text), &["missing field `product_id`"]);
}

#[test]
fn wrong_type_shows_the_line() {
    let text = generic_text().replace("vendor_id = 0x1209", "vendor_id = \"x\"");
    assert_mentions(&error_of(&text), &["vendor_id = \"x\""]);
    let text = generic_text().replace("control = \"position\"", "control = \"torque\"");
    assert_mentions(&error_of(&text), &["unknown variant `torque`", "control"]);
}

#[test]
fn invalid_values_name_their_field() {
    let cases = [
        (
            "sign = 1, scale = 1e-6, raw_range = [-500000",
            "sign = 2, scale = 1e-6, raw_range = [-500000",
            "input[0].axes[0].sign",
        ),
        (
            "offset = 5, width = 4",
            "offset = 5, width = 3",
            "input[0].axes[1].width",
        ),
        (
            "offset = 1, width = 4",
            "offset = 0, width = 4",
            "input[0].axes[0].offset",
        ),
        ("mask = 0x02", "mask = 0x00", "input[0].buttons[1].mask"),
        ("report_id = 2", "report_id = 0", "output.report_id"),
        ("length = 13", "length = 12", "output.components[5].offset"),
        (
            "native_rate = 1000.0",
            "native_rate = 0.0",
            "limits.native_rate",
        ),
        ("max_force = 8.0", "max_force = 0.0", "max_force"),
        (
            "{ axis = \"ry\"",
            "{ axis = \"rx\"",
            "input[0].axes[4].axis",
        ),
        (
            "[-3141593, 3141593] },\n    { axis = \"rz\"",
            "[3141593, -3141593] },\n    { axis = \"rz\"",
            "input[0].axes[4].raw_range",
        ),
    ];
    for (from, to, field) in cases {
        let text = generic_text();
        assert!(text.contains(from), "{from}");
        let message = error_of(&text.replacen(from, to, 1));
        assert_mentions(&message, &[field]);
    }
}

#[test]
fn loading_names_the_file() {
    let dir = std::env::temp_dir().join(format!("hid-profiles-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("broken.toml"), "name = \"x\"\n").unwrap();
    let message = load_profiles(&dir).unwrap_err().to_string();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(message.contains("broken.toml: "), "{message}");
    assert!(message.contains("missing field"), "{message}");
}
