//! Every 3Dconnexion profile in `device-profiles/` decodes report bytes to
//! the values pyspacemouse's devices table implies.
//!
//! pyspacemouse reads axis `a` of report `channel` as the little-endian i16
//! at `[byte1, byte2]`, times `sign / axis_scale` (350): unitless, about
//! ±1 at full deflection. Our profiles give SI rates; dividing by the
//! profile's scale times 350 maps them back. Buttons are compared by name:
//! pressed when `data[byte] & (1 << bit) != 0`.

use haptic_acceptance::spacemouse_devices_toml;
use haptic_devices::hid::{Axis, Dropped, Profile, ReportDecoder};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::collections::BTreeMap;
use std::path::Path;
use toml::Value;

/// pyspacemouse's axis names and the device axes they are.
const AXES: [(&str, Axis); 6] = [
    ("x", Axis::X),
    ("y", Axis::Y),
    ("z", Axis::Z),
    ("pitch", Axis::Rx),
    ("roll", Axis::Ry),
    ("yaw", Axis::Rz),
];

/// One pyspacemouse device: axis mappings and buttons.
struct PyDevice {
    ids: (u16, u16),
    axis_scale: f64,
    /// Per pyspacemouse axis: channel, byte1, byte2, sign.
    mappings: Vec<(Axis, [i64; 4])>,
    /// Per button name: channel, byte, bit.
    buttons: BTreeMap<String, [i64; 3]>,
}

fn ints(value: &Value) -> Vec<i64> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_integer().unwrap())
        .collect()
}

fn read_table() -> BTreeMap<String, PyDevice> {
    let text = std::fs::read_to_string(spacemouse_devices_toml()).unwrap();
    let table: toml::Table = text.parse().unwrap();
    table
        .iter()
        .map(|(name, spec)| {
            let hid = ints(&spec["hid_id"]);
            let mappings = AXES
                .iter()
                .map(|(key, axis)| {
                    let m = ints(&spec["mappings"][*key]);
                    (*axis, [m[0], m[1], m[2], m[3]])
                })
                .collect();
            let buttons = spec
                .get("buttons")
                .and_then(Value::as_table)
                .map(|b| {
                    b.iter()
                        .map(|(n, v)| {
                            let v = ints(v);
                            (n.clone(), [v[0], v[1], v[2]])
                        })
                        .collect()
                })
                .unwrap_or_default();
            let device = PyDevice {
                ids: (hid[0] as u16, hid[1] as u16),
                axis_scale: spec["axis_scale"].as_float().unwrap(),
                mappings,
                buttons,
            };
            (name.clone(), device)
        })
        .collect()
}

fn our_profiles() -> Vec<Profile> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../device-profiles");
    haptic_devices::load_profiles(&dir)
        .unwrap()
        .into_iter()
        .filter(|p| [0x046d, 0x256f].contains(&p.usb.vendor_id))
        .collect()
}

fn to_int16(low: u8, high: u8) -> i64 {
    let x = i64::from(low) | (i64::from(high) << 8);
    if x >= 32768 {
        x - 65536
    } else {
        x
    }
}

#[test]
fn one_profile_per_pyspacemouse_device_with_its_ids() {
    let table = read_table();
    assert_eq!(table.len(), 13);
    let profiles = our_profiles();
    assert_eq!(profiles.len(), table.len());
    for (name, device) in &table {
        let profile = profiles
            .iter()
            .find(|p| &p.name == name)
            .unwrap_or_else(|| panic!("no profile named {name}"));
        assert_eq!(
            (profile.usb.vendor_id, profile.usb.product_id),
            device.ids,
            "{name}"
        );
        let ours: Vec<_> = profile.button_fields().map(|b| b.name.clone()).collect();
        let theirs: Vec<_> = device.buttons.keys().cloned().collect();
        let mut sorted = ours.clone();
        sorted.sort();
        assert_eq!(sorted, theirs, "{name}: button names");
    }
}

/// Our decoded value of `axis` mapped back to pyspacemouse's units.
fn back_to_pyspacemouse(profile: &Profile, decoded: &[f64; 6], axis: Axis, axis_scale: f64) -> f64 {
    let field = profile.axis_fields().find(|a| a.axis == axis).unwrap();
    decoded[axis.index()] / (field.scale * axis_scale)
}

#[test]
fn random_reports_decode_as_pyspacemouse_reads_them() {
    let table = read_table();
    let profiles = our_profiles();
    let mut rng = Pcg64::seed_from_u64(0x5ace);
    let mut compared = 0usize;
    let mut garbled = 0usize;
    for (name, device) in &table {
        let profile = profiles.iter().find(|p| &p.name == name).unwrap();
        // pyspacemouse's scale is uniform per kind of axis; ours must be too.
        for group in [&AXES[..3], &AXES[3..]] {
            let scales: Vec<f64> = group
                .iter()
                .map(|(_, axis)| {
                    profile
                        .axis_fields()
                        .find(|a| a.axis == *axis)
                        .unwrap()
                        .scale
                })
                .collect();
            assert!(scales.iter().all(|s| *s == scales[0]), "{name}: {scales:?}");
        }
        let channels: Vec<i64> = {
            let mut c: Vec<i64> = device.mappings.iter().map(|(_, m)| m[0]).collect();
            c.extend(device.buttons.values().map(|b| b[0]));
            c.sort();
            c.dedup();
            c
        };
        let mut decoder = ReportDecoder::new(profile);
        for trial in 0..4000 {
            let channel = channels[trial % channels.len()];
            let len = 1 + device
                .mappings
                .iter()
                .filter(|(_, m)| m[0] == channel)
                .map(|(_, m)| m[2] as usize)
                .chain(
                    device
                        .buttons
                        .values()
                        .filter(|b| b[0] == channel)
                        .map(|b| b[1] as usize),
                )
                .max()
                .unwrap();
            let mut data: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            data[0] = channel as u8;
            // Half the trials put plausible counts (|v| <= 1024) in every axis.
            if trial % 2 == 0 {
                for (_, m) in device.mappings.iter().filter(|(_, m)| m[0] == channel) {
                    let v: i16 = rng.gen_range(-1024..=1024);
                    let [low, high] = v.to_le_bytes();
                    data[m[1] as usize] = low;
                    data[m[2] as usize] = high;
                }
            }
            let before = *decoder.state();
            match decoder.decode(&data) {
                Ok(id) => assert_eq!(i64::from(id), channel),
                Err(Dropped::Garbled { raw, .. }) => {
                    // pyspacemouse would pass implausible counts on; we drop them.
                    assert!(raw.abs() > 1024, "{name}: {raw}");
                    assert_eq!(*decoder.state(), before);
                    garbled += 1;
                    continue;
                }
                Err(other) => panic!("{name}: {data:?} dropped: {other:?}"),
            }
            let state = decoder.state();
            for (axis, [chan, b1, b2, sign]) in &device.mappings {
                if *chan != channel {
                    continue;
                }
                let raw = to_int16(data[*b1 as usize], data[*b2 as usize]);
                let expected = *sign as f64 * raw as f64 / device.axis_scale;
                let got = back_to_pyspacemouse(profile, &state.axes, *axis, device.axis_scale);
                assert!(
                    (got - expected).abs() <= 1e-12 * expected.abs().max(1.0),
                    "{name} {axis:?}: ours {got}, pyspacemouse {expected}"
                );
                compared += 1;
            }
            for (i, button) in profile.button_fields().enumerate() {
                let [chan, byte, bit] = device.buttons[&button.name];
                if chan != channel {
                    continue;
                }
                let pressed = data[byte as usize] & (1 << bit) != 0;
                assert_eq!(
                    (state.buttons >> i) & 1 == 1,
                    pressed,
                    "{name} {}",
                    button.name
                );
                compared += 1;
            }
        }
        let counters = decoder.counters();
        assert_eq!(counters.total(), 4000);
        assert_eq!((counters.short, counters.unknown_id), (0, 0), "{name}");
    }
    eprintln!("{compared} values compared, {garbled} reports with counts beyond ±1024 dropped");
    assert!(compared > 13 * 4000);
    assert!(garbled > 0);
}
