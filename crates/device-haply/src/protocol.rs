//! The Inverse Service's simulation channel, 3.x JSON format (Haply,
//! "Simulation Channel" and "WebSocket Protocol",
//! <https://docs.haply.co/inverseSDK/service/api/simulation>).
//!
//! On connect the service sends an inventory: an object with an array per
//! device family (`inverse3`, `verse_grip`, `wireless_verse_grip`), each
//! entry `{device_id, config, state, status}`. After that it answers every
//! message it receives with exactly one state update of the same shape
//! (without `config`). We read, from the selected Inverse3,
//! `state.cursor_position` (m) and `state.cursor_velocity` (m/s), and
//! `state.current_cursor_force` (N) where present; from the selected grip,
//! `state.orientation` (a quaternion `{w, x, y, z}`) and its buttons
//! (`buttons: {a, b, c}`, or the wired grip's single `button`). We send
//! `{"inverse3": [{"device_id": ID, "commands": {"set_cursor_force":
//! {"vector": {"x", "y", "z"}}}}]}` (N), the first time with a `session`
//! that names the profile and asks for the service's own basis (`XYZ`).

use crate::error::ProtocolError;
use serde_json::{Map, Value};
use std::fmt::Write as _;

/// The profile name the service shows for our session.
pub const PROFILE_NAME: &str = "hapticd";

/// An Inverse3 the service reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inverse3Info {
    pub device_id: String,
    /// The serial port it is on (`config.port`), where reported.
    pub port: Option<String>,
    /// `config.type` (`inverse3`, `inverse3x`, `minverse`), where reported.
    pub model: Option<String>,
}

/// A VerseGrip the service reports, wired or wireless.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GripInfo {
    pub device_id: String,
    pub port: Option<String>,
    /// From the `wireless_verse_grip` array.
    pub wireless: bool,
}

/// The devices of the service's first message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inventory {
    pub session_id: Option<u64>,
    pub inverse3: Vec<Inverse3Info>,
    pub grips: Vec<GripInfo>,
}

/// One state update of the selected devices, in the service's frame and
/// units (m, m/s, N).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Reading {
    pub position: [f64; 3],
    pub velocity: [f64; 3],
    /// `current_cursor_force`: the force the service applies, where the
    /// state carries it.
    pub applied_force: Option<[f64; 3]>,
    /// The grip's orientation `[w, x, y, z]`, if a grip is selected and in
    /// the message.
    pub orientation: Option<[f64; 4]>,
    /// Bit 0 `a` (or the wired grip's `button`), bit 1 `b`, bit 2 `c`.
    pub buttons: u32,
}

/// Parses one text frame into a JSON object.
pub fn parse(text: &str) -> Result<Map<String, Value>, ProtocolError> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(ProtocolError::Malformed(format!(
            "expected an object, found {}",
            kind_of(&other)
        ))),
        Err(e) => Err(ProtocolError::Malformed(e.to_string())),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The entries of one device family; an absent family is empty.
fn family<'a>(message: &'a Map<String, Value>, name: &str) -> Result<&'a [Value], ProtocolError> {
    match message.get(name) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(entries)) => Ok(entries),
        Some(_) => Err(ProtocolError::WrongType {
            path: name.to_owned(),
            expected: "an array",
        }),
    }
}

/// An entry's `device_id` (a string, or a number written as one).
fn device_id(entry: &Value, path: &str) -> Result<String, ProtocolError> {
    match entry.get("device_id") {
        Some(Value::String(id)) => Ok(id.clone()),
        Some(Value::Number(n)) => Ok(n.to_string()),
        Some(_) => Err(ProtocolError::WrongType {
            path: format!("{path}.device_id"),
            expected: "a string",
        }),
        None => Err(ProtocolError::Missing(format!("{path}.device_id"))),
    }
}

fn config_str(entry: &Value, key: &str) -> Option<String> {
    entry
        .get("config")
        .and_then(|c| c.get(key))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// Whether an entry's `device_id` is `id`, without allocating.
fn has_id(entry: &Value, id: &str) -> bool {
    match entry.get("device_id") {
        Some(Value::String(s)) => s == id,
        Some(Value::Number(n)) => n.as_u64().is_some_and(|n| {
            let mut digits = [0u8; 20];
            let mut w = Cursor(&mut digits, 0);
            let _ = write!(w, "{n}");
            let len = w.1;
            &digits[..len] == id.as_bytes()
        }),
        _ => false,
    }
}

/// A fixed buffer to format into without allocating.
struct Cursor<'a>(&'a mut [u8], usize);

impl std::fmt::Write for Cursor<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.1 + s.len();
        if end > self.0.len() {
            return Err(std::fmt::Error);
        }
        self.0[self.1..end].copy_from_slice(s.as_bytes());
        self.1 = end;
        Ok(())
    }
}

impl Inventory {
    /// The devices of a message (normally the first, which carries
    /// `config`; a state update lists the same devices without it).
    pub fn from_message(message: &Map<String, Value>) -> Result<Inventory, ProtocolError> {
        let mut inventory = Inventory {
            session_id: message.get("session_id").and_then(Value::as_u64),
            ..Inventory::default()
        };
        for (i, entry) in family(message, "inverse3")?.iter().enumerate() {
            inventory.inverse3.push(Inverse3Info {
                device_id: device_id(entry, &format!("inverse3[{i}]"))?,
                port: config_str(entry, "port"),
                model: config_str(entry, "type"),
            });
        }
        for (name, wireless) in [("verse_grip", false), ("wireless_verse_grip", true)] {
            for (i, entry) in family(message, name)?.iter().enumerate() {
                inventory.grips.push(GripInfo {
                    device_id: device_id(entry, &format!("{name}[{i}]"))?,
                    port: config_str(entry, "port"),
                    wireless,
                });
            }
        }
        Ok(inventory)
    }

    /// The Inverse3 `wanted` names (its `device_id` or its port), or the
    /// first listed when `wanted` is `None`.
    pub fn inverse3(&self, wanted: Option<&str>) -> Option<&Inverse3Info> {
        match wanted {
            None => self.inverse3.first(),
            Some(w) => self
                .inverse3
                .iter()
                .find(|d| d.device_id == w || d.port.as_deref() == Some(w)),
        }
    }

    /// The grip `wanted` names (its `device_id` or its port), or the
    /// first listed when `wanted` is `None`.
    pub fn grip(&self, wanted: Option<&str>) -> Option<&GripInfo> {
        match wanted {
            None => self.grips.first(),
            Some(w) => self
                .grips
                .iter()
                .find(|d| d.device_id == w || d.port.as_deref() == Some(w)),
        }
    }
}

/// Which devices a session reads and commands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    pub inverse3: String,
    /// The grip's `device_id` and whether it is wireless.
    pub grip: Option<(String, bool)>,
}

fn number(parent: &Value, key: &str, path: &dyn Fn() -> String) -> Result<f64, ProtocolError> {
    match parent.get(key) {
        Some(Value::Number(n)) => n.as_f64().ok_or_else(|| ProtocolError::WrongType {
            path: format!("{}.{key}", path()),
            expected: "a number",
        }),
        Some(_) => Err(ProtocolError::WrongType {
            path: format!("{}.{key}", path()),
            expected: "a number",
        }),
        None => Err(ProtocolError::Missing(format!("{}.{key}", path()))),
    }
}

fn object<'a>(
    parent: &'a Value,
    key: &str,
    path: &dyn Fn() -> String,
) -> Result<&'a Value, ProtocolError> {
    match parent.get(key) {
        Some(v @ Value::Object(_)) => Ok(v),
        Some(_) => Err(ProtocolError::WrongType {
            path: format!("{}.{key}", path()),
            expected: "an object",
        }),
        None => Err(ProtocolError::Missing(format!("{}.{key}", path()))),
    }
}

fn vec3(state: &Value, key: &str, path: &dyn Fn() -> String) -> Result<[f64; 3], ProtocolError> {
    let inner = || format!("{}.{key}", path());
    let v = object(state, key, path)?;
    Ok([
        number(v, "x", &inner)?,
        number(v, "y", &inner)?,
        number(v, "z", &inner)?,
    ])
}

/// Reads the selected devices' state from a message. The Inverse3 must be
/// in it with `state.cursor_position` and `state.cursor_velocity`; the
/// grip, if selected, may be absent (`orientation` is then `None`), but
/// when present its `state.orientation` is required.
pub fn read_state(
    message: &Map<String, Value>,
    selection: &Selection,
) -> Result<Reading, ProtocolError> {
    let id = selection.inverse3.as_str();
    let entry = family(message, "inverse3")?
        .iter()
        .find(|e| has_id(e, id))
        .ok_or_else(|| ProtocolError::DeviceAbsent {
            kind: "inverse3",
            id: id.to_owned(),
        })?;
    let path = || format!("inverse3[{id}].state");
    let state = object(entry, "state", &|| format!("inverse3[{id}]"))?;
    let mut reading = Reading {
        position: vec3(state, "cursor_position", &path)?,
        velocity: vec3(state, "cursor_velocity", &path)?,
        applied_force: match state.get("current_cursor_force") {
            Some(_) => Some(vec3(state, "current_cursor_force", &path)?),
            None => None,
        },
        ..Reading::default()
    };
    if let Some((grip, wireless)) = &selection.grip {
        let name = if *wireless {
            "wireless_verse_grip"
        } else {
            "verse_grip"
        };
        if let Some(entry) = family(message, name)?.iter().find(|e| has_id(e, grip)) {
            let path = || format!("{name}[{grip}].state");
            let state = object(entry, "state", &|| format!("{name}[{grip}]"))?;
            let inner = || format!("{}.orientation", path());
            let q = object(state, "orientation", &path)?;
            reading.orientation = Some([
                number(q, "w", &inner)?,
                number(q, "x", &inner)?,
                number(q, "y", &inner)?,
                number(q, "z", &inner)?,
            ]);
            reading.buttons = buttons(state);
        }
    }
    Ok(reading)
}

/// `buttons: {a, b, c}` as bits 0, 1, 2, or the wired grip's `button` as
/// bit 0; none reported is none pressed.
fn buttons(state: &Value) -> u32 {
    if let Some(b) = state.get("buttons") {
        ["a", "b", "c"]
            .iter()
            .enumerate()
            .filter(|(_, k)| b.get(**k).and_then(Value::as_bool) == Some(true))
            .fold(0, |bits, (i, _)| bits | 1 << i)
    } else {
        u32::from(state.get("button").and_then(Value::as_bool) == Some(true))
    }
}

/// Writes a `set_cursor_force` command for `inverse3` into `out`
/// (cleared first), with the session's handshake when `first`. Forces are
/// written in Rust's shortest round-trip form; they must be finite.
pub fn write_force(out: &mut String, inverse3: &str, force: [f64; 3], first: bool) {
    out.clear();
    out.push('{');
    if first {
        let _ = write!(
            out,
            r#""session":{{"configure":{{"profile":{{"name":"{PROFILE_NAME}"}},"basis":{{"permutation":"XYZ"}}}}}},"#
        );
    }
    out.push_str(r#""inverse3":[{"device_id":"#);
    write_json_string(out, inverse3);
    let [x, y, z] = force;
    let _ = write!(
        out,
        r#","commands":{{"set_cursor_force":{{"vector":{{"x":{x:?},"y":{y:?},"z":{z:?}}}}}}}}}]}}"#
    );
}

/// A JSON string literal.
fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    const INVENTORY: &str = r#"{
        "session_id": 7,
        "inverse3": [{
            "device_id": "049D",
            "config": {"type": "inverse3", "port": "COM12"},
            "state": {
                "cursor_position": {"x": 0.0, "y": -0.12, "z": 0.15},
                "cursor_velocity": {"x": 0.5, "y": 0.0, "z": -0.25},
                "current_cursor_force": {"x": 0.0, "y": 0.0, "z": 1.5}
            },
            "status": {"ready": true}
        }],
        "verse_grip": [{
            "device_id": 61548,
            "config": {"type": "verse_grip", "port": "COM3"},
            "state": {"button": true, "hall": 0,
                      "orientation": {"w": 1.0, "x": 0.0, "y": 0.0, "z": 0.0}}
        }],
        "wireless_verse_grip": [{
            "device_id": "A1",
            "state": {"buttons": {"a": false, "b": true, "c": true},
                      "orientation": {"w": 0.0, "x": 1.0, "y": 0.0, "z": 0.0}}
        }]
    }"#;

    #[test]
    fn the_inventory_lists_every_device_with_its_port() {
        let inventory = Inventory::from_message(&parse(INVENTORY).unwrap()).unwrap();
        assert_eq!(inventory.session_id, Some(7));
        assert_eq!(
            inventory.inverse3,
            vec![Inverse3Info {
                device_id: "049D".into(),
                port: Some("COM12".into()),
                model: Some("inverse3".into()),
            }]
        );
        assert_eq!(inventory.grips.len(), 2);
        assert_eq!(inventory.grips[0].device_id, "61548");
        assert!(inventory.grips[1].wireless);
        assert_eq!(inventory.inverse3(Some("COM12")).unwrap().device_id, "049D");
        assert_eq!(inventory.grip(Some("A1")).unwrap().device_id, "A1");
        assert!(inventory.inverse3(Some("FFFF")).is_none());
    }

    #[test]
    fn a_state_update_gives_position_velocity_force_orientation_and_buttons() {
        let message = parse(INVENTORY).unwrap();
        let wired = Selection {
            inverse3: "049D".into(),
            grip: Some(("61548".into(), false)),
        };
        let r = read_state(&message, &wired).unwrap();
        assert_eq!(r.position, [0.0, -0.12, 0.15]);
        assert_eq!(r.velocity, [0.5, 0.0, -0.25]);
        assert_eq!(r.applied_force, Some([0.0, 0.0, 1.5]));
        assert_eq!(r.orientation, Some([1.0, 0.0, 0.0, 0.0]));
        assert_eq!(r.buttons, 1);
        let wireless = Selection {
            inverse3: "049D".into(),
            grip: Some(("A1".into(), true)),
        };
        let r = read_state(&message, &wireless).unwrap();
        assert_eq!(
            (r.orientation, r.buttons),
            (Some([0.0, 1.0, 0.0, 0.0]), 0b110)
        );
    }

    #[test]
    fn missing_and_mistyped_fields_are_named() {
        let selection = Selection {
            inverse3: "049D".into(),
            grip: Some(("61548".into(), false)),
        };
        for (from, to, expected) in [
            (
                r#""cursor_position": {"x": 0.0, "y": -0.12, "z": 0.15},"#,
                "",
                ProtocolError::Missing("inverse3[049D].state.cursor_position".into()),
            ),
            (
                r#""cursor_velocity": {"x": 0.5, "y": 0.0,"#,
                r#""cursor_velocity": {"x": 0.5,"#,
                ProtocolError::Missing("inverse3[049D].state.cursor_velocity.y".into()),
            ),
            (
                r#""y": -0.12"#,
                r#""y": "far""#,
                ProtocolError::WrongType {
                    path: "inverse3[049D].state.cursor_position.y".into(),
                    expected: "a number",
                },
            ),
            (
                r#""orientation": {"w": 1.0,"#,
                r#""orientation": {"#,
                ProtocolError::Missing("verse_grip[61548].state.orientation.w".into()),
            ),
            (
                r#""device_id": "049D""#,
                r#""device_id": "0000""#,
                ProtocolError::DeviceAbsent {
                    kind: "inverse3",
                    id: "049D".into(),
                },
            ),
        ] {
            let text = INVENTORY.replace(from, to);
            assert_ne!(text, INVENTORY, "{from}");
            let e = read_state(&parse(&text).unwrap(), &selection).unwrap_err();
            assert_eq!(e, expected);
        }
        for bad in ["{\"inverse3\": [", "[1, 2]", "NaN"] {
            assert!(
                matches!(parse(bad), Err(ProtocolError::Malformed(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_force_command_is_the_documented_json() {
        let mut out = String::new();
        write_force(&mut out, "049D", [0.0, -1.25, 1.5], false);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"inverse3": [{"device_id": "049D", "commands":
                {"set_cursor_force": {"vector": {"x": 0.0, "y": -1.25, "z": 1.5}}}}]})
        );
        write_force(&mut out, "a\"b", [1e-300, 0.1, 3.0], true);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["session"]["configure"]["profile"]["name"], PROFILE_NAME);
        assert_eq!(v["session"]["configure"]["basis"]["permutation"], "XYZ");
        assert_eq!(v["inverse3"][0]["device_id"], "a\"b");
        assert_eq!(
            v["inverse3"][0]["commands"]["set_cursor_force"]["vector"]["x"],
            1e-300
        );
    }
}
