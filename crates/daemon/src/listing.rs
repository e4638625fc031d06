//! What the device backends find on this machine: the listing `hapticd
//! devices` prints and the control API's `GET /v1/devices` returns. Each
//! backend is one [`Enumerator`] of [`ENUMERATORS`], listed in that order;
//! a backend is added by adding its enumerator there.

use haptic_config::{DeviceKind, ServoScene};
use haptic_devices::{list_connected, load_profiles};
use haptic_server::{BackendDevices, DeviceInfo, HidIds};
use std::path::PathBuf;
use std::sync::Arc;

/// Where the backends look.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ListOptions {
    /// The HID device profiles (`*.toml`).
    pub profiles_dir: PathBuf,
    /// The Force Dimension SDK library (or its directory), tried before
    /// `$FORCEDIM_SDK` and the system's directories.
    pub forcedim_library: Option<PathBuf>,
    /// libHD (or its directory), tried before `$OH_SDK_BASE`,
    /// `$OPENHAPTICS` and the system's directories.
    pub openhaptics_library: Option<PathBuf>,
    /// The OpenHaptics device's configuration name.
    pub openhaptics_device: String,
    /// The Haply Inverse Service's simulation channel (`ws://HOST:PORT`).
    pub haply_url: String,
    /// The device the running scene holds, not to be opened again.
    pub in_use: Option<InUse>,
}

/// The running scene's device.
#[derive(Clone, Debug, PartialEq)]
pub struct InUse {
    /// Its backend, as [`Enumerator::backend`] names it.
    pub backend: &'static str,
    /// What picks it in the `[device]` table ([`DeviceInfo::id`]).
    pub id: String,
    /// Its name, as the servo's summary gives it.
    pub name: String,
}

/// What an enumerator found: [`BackendDevices`] without the backend's
/// names.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Found {
    pub source: Option<String>,
    pub error: Option<String>,
    pub devices: Vec<DeviceInfo>,
}

impl Found {
    fn failed(error: impl ToString) -> Found {
        Found {
            error: Some(error.to_string()),
            ..Found::default()
        }
    }
}

/// One backend's listing.
pub struct Enumerator {
    /// The backend as the scene's `device.kind` names it.
    pub backend: &'static str,
    /// Its name for people.
    pub name: &'static str,
    /// Listing opens each device (to read its description): a device the
    /// running scene holds is then reported as in use instead.
    pub opens_devices: bool,
    pub list: fn(&ListOptions) -> Found,
}

/// Every backend, in the order they are listed.
pub const ENUMERATORS: &[Enumerator] = &[
    Enumerator {
        backend: "hid",
        name: "HID",
        opens_devices: false,
        list: hid,
    },
    Enumerator {
        backend: "forcedim",
        name: "Force Dimension",
        opens_devices: true,
        list: forcedim,
    },
    Enumerator {
        backend: "falcon",
        name: "Novint Falcon",
        opens_devices: false,
        list: falcon,
    },
    Enumerator {
        backend: "openhaptics",
        name: "OpenHaptics",
        opens_devices: true,
        list: openhaptics,
    },
    Enumerator {
        backend: "haply",
        name: "Haply",
        opens_devices: false,
        list: haply,
    },
];

/// What every backend of [`ENUMERATORS`] finds. A backend's failure (its
/// library missing, say) is its entry's `error`, never the whole
/// listing's.
pub fn list_devices(options: &ListOptions) -> Vec<BackendDevices> {
    ENUMERATORS
        .iter()
        .map(|e| {
            let found = match &options.in_use {
                Some(in_use) if e.opens_devices && in_use.backend == e.backend => Found {
                    devices: vec![DeviceInfo {
                        id: in_use.id.clone(),
                        name: in_use.name.clone(),
                        detail: String::new(),
                        profile: None,
                        error: Some("in use by the running scene".to_owned()),
                        hid: None,
                    }],
                    ..Found::default()
                },
                _ => (e.list)(options),
            };
            BackendDevices {
                backend: e.backend.to_owned(),
                name: e.name.to_owned(),
                source: found.source,
                error: found.error,
                devices: found.devices,
            }
        })
        .collect()
}

/// Where the running `scene` has its backends look: its profiles and
/// vendor libraries (relative paths from its directory), its device held
/// as `device_name`.
pub fn scene_options(scene: &ServoScene, device_name: &str) -> ListOptions {
    let base = scene.base();
    let d = scene.device();
    let in_use = |backend, id: String| {
        Some(InUse {
            backend,
            id,
            name: device_name.to_owned(),
        })
    };
    ListOptions {
        profiles_dir: base.join(&d.profiles_dir),
        forcedim_library: d.forcedim.library.as_ref().map(|l| base.join(l)),
        openhaptics_library: d.openhaptics.library.as_ref().map(|l| base.join(l)),
        openhaptics_device: d.openhaptics.device_name.clone(),
        haply_url: d.haply.url.clone(),
        in_use: match d.kind {
            DeviceKind::ForceDimension => in_use("forcedim", d.forcedim.device_index.to_string()),
            DeviceKind::OpenHaptics => in_use("openhaptics", d.openhaptics.device_name.clone()),
            _ => None,
        },
    }
}

/// Connected HID devices and the profile each matches.
fn hid(options: &ListOptions) -> Found {
    let dir = &options.profiles_dir;
    let profiles = match load_profiles(dir) {
        Ok(profiles) => profiles,
        Err(error) => return Found::failed(error),
    };
    let source = Some(format!(
        "{} profiles from {}",
        profiles.len(),
        dir.display()
    ));
    let connected = match list_connected(&profiles) {
        Ok(connected) => connected,
        Err(error) => {
            return Found {
                source,
                ..Found::failed(error)
            }
        }
    };
    let devices = connected
        .into_iter()
        .map(|(info, profile)| {
            let label = [info.manufacturer.as_deref(), info.product.as_deref()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" ");
            DeviceInfo {
                id: info.path.clone(),
                name: if label.is_empty() {
                    "?".to_owned()
                } else {
                    label
                },
                detail: format!(
                    "{:04x}:{:04x}, interface {}, usage {:04x}:{:04x}",
                    info.vendor_id,
                    info.product_id,
                    info.interface_number,
                    info.usage_page,
                    info.usage
                ),
                profile,
                error: None,
                hid: Some(HidIds {
                    vendor_id: info.vendor_id,
                    product_id: info.product_id,
                    manufacturer: info.manufacturer,
                    product: info.product,
                    interface_number: info.interface_number,
                    usage_page: info.usage_page,
                    usage: info.usage,
                }),
            }
        })
        .collect();
    Found {
        source,
        error: None,
        devices,
    }
}

/// The Force Dimension SDK and the devices it sees, each opened briefly for
/// its description.
fn forcedim(options: &ListOptions) -> Found {
    use haptic_device_forcedim::{list_devices, Sdk};
    let sdk = match Sdk::load(options.forcedim_library.as_deref()) {
        Ok(sdk) => sdk,
        Err(error) => return Found::failed(error),
    };
    let [major, minor, release, revision] = sdk.version();
    let source = Some(format!(
        "Force Dimension SDK {major}.{minor}.{release}.{revision} from {}",
        sdk.path().display()
    ));
    let listed = match list_devices(&sdk) {
        Ok(listed) => listed,
        Err(message) => {
            return Found {
                source,
                ..Found::failed(format!("listing devices failed: {message}"))
            }
        }
    };
    let devices = listed
        .into_iter()
        .map(|device| {
            let id = device.index.to_string();
            match device.info {
                Ok(info) => {
                    let wrist = match (info.wrist, info.active_wrist) {
                        (true, true) => "wrist: active",
                        (true, false) => "wrist: passive",
                        _ => "no wrist",
                    };
                    let mut detail = vec![
                        format!("system type {}", info.system_type),
                        wrist.to_owned(),
                    ];
                    if info.gripper {
                        detail.push("gripper".to_owned());
                    }
                    detail.push(
                        if info.left_handed {
                            "left-handed"
                        } else {
                            "right-handed"
                        }
                        .to_owned(),
                    );
                    listed_device(id, info.name, detail.join("; "), None)
                }
                Err(message) => listed_device(
                    id,
                    "Force Dimension device".to_owned(),
                    String::new(),
                    Some(message),
                ),
            }
        })
        .collect();
    Found {
        source,
        error: None,
        devices,
    }
}

/// Connected Novint Falcons, with the `[device.falcon] index` of each.
fn falcon(_: &ListOptions) -> Found {
    match haptic_device_falcon::list_falcons() {
        Ok(falcons) => Found {
            devices: falcons
                .into_iter()
                .map(|f| {
                    let serial = f.serial_number.as_deref().unwrap_or("?");
                    let detail = format!(
                        "0403:cb48, bus {} address {}, serial {serial}",
                        f.bus, f.address
                    );
                    listed_device(
                        f.index.to_string(),
                        "Novint Falcon".to_owned(),
                        detail,
                        None,
                    )
                })
                .collect(),
            ..Found::default()
        },
        Err(error) => Found::failed(error),
    }
}

/// Where libHD was found and the device it opens. Opening the device
/// briefly starts the HD scheduler, forces off.
fn openhaptics(options: &ListOptions) -> Found {
    use haptic_device_openhaptics::{Library, OpenHapticsDevice, Settings};
    let library = match Library::load(options.openhaptics_library.as_deref()) {
        Ok(library) => Arc::new(library),
        Err(error) => return Found::failed(error),
    };
    let source = Some(format!(
        "OpenHaptics HD library from {}",
        library.path().display()
    ));
    let settings = Settings {
        device_name: options.openhaptics_device.clone(),
        ..Settings::default()
    };
    let id = settings.device_name.clone();
    let device = match OpenHapticsDevice::open_with(library, &settings) {
        Ok(device) => {
            let info = device.info();
            let detail = format!(
                "input DoF {}, output DoF {}, {} Hz",
                info.input_dof, info.output_dof, info.update_rate
            );
            listed_device(id, info.model.clone(), detail, None)
        }
        Err(error) => listed_device(
            id,
            "OpenHaptics device".to_owned(),
            String::new(),
            Some(error.to_string()),
        ),
    };
    Found {
        source,
        error: None,
        devices: vec![device],
    }
}

/// A device of a backend that matches no profile and has no HID ids.
fn listed_device(id: String, name: String, detail: String, error: Option<String>) -> DeviceInfo {
    DeviceInfo {
        id,
        name,
        detail,
        profile: None,
        error,
        hid: None,
    }
}

/// How long the listing waits for the Haply Inverse Service.
const HAPLY_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(500);

/// The Inverse3s and VerseGrips the Haply Inverse Service reports in its
/// first message, each by the id `[device.haply]` picks it by; or where
/// the service was looked for and why nothing was found.
fn haply(options: &ListOptions) -> Found {
    let url = &options.haply_url;
    let inventory = match haptic_device_haply::list_devices(url, HAPLY_TIMEOUT) {
        Ok(inventory) => inventory,
        Err(error) => return Found::failed(error),
    };
    let port = |p: &Option<String>| p.clone().unwrap_or_else(|| "an unreported port".into());
    let inverse3 = inventory.inverse3.iter().map(|d| DeviceInfo {
        id: d.device_id.clone(),
        name: "Inverse3".to_owned(),
        detail: format!(
            "{} on {}",
            d.model.as_deref().unwrap_or("inverse3"),
            port(&d.port)
        ),
        profile: None,
        error: None,
        hid: None,
    });
    let grips = inventory.grips.iter().map(|g| DeviceInfo {
        id: g.device_id.clone(),
        name: "VerseGrip".to_owned(),
        detail: format!(
            "{} on {}",
            if g.wireless { "wireless" } else { "wired" },
            port(&g.port)
        ),
        profile: None,
        error: None,
        hid: None,
    });
    Found {
        source: Some(format!(
            "Haply Inverse Service at {url}: {} Inverse3, {} VerseGrip",
            inventory.inverse3.len(),
            inventory.grips.len()
        )),
        error: None,
        devices: inverse3.chain(grips).collect(),
    }
}
