//! `hapticd devices`: connected HID devices and the profile each matches,
//! then the Force Dimension devices the vendor's SDK sees, then connected
//! Novint Falcons, then OpenHaptics' libHD and the device it opens.

use crate::output::Stdout;
use anyhow::Context;
use haptic_device_forcedim::{list_devices, DeviceInfo, Sdk};
use haptic_devices::{list_connected, load_profiles, HidDeviceInfo};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct DevicesArgs {
    /// Directory of device profiles (*.toml).
    #[arg(long, value_name = "DIR", default_value = "device-profiles")]
    profiles: PathBuf,
    /// The Force Dimension SDK library (or its directory), tried before
    /// `$FORCEDIM_SDK` and the system's directories.
    #[arg(long, value_name = "PATH")]
    forcedim_library: Option<PathBuf>,
    /// libHD (or its directory), tried before `$OH_SDK_BASE`,
    /// `$OPENHAPTICS` and the system's directories.
    #[arg(long, value_name = "PATH")]
    openhaptics_library: Option<PathBuf>,
    /// The OpenHaptics device's configuration name.
    #[arg(long, value_name = "NAME", default_value = haptic_device_openhaptics::DEFAULT_DEVICE)]
    openhaptics_device: String,
}

pub fn run(args: &DevicesArgs) -> anyhow::Result<()> {
    let profiles = load_profiles(&args.profiles)?;
    let connected = list_connected(&profiles).context("listing HID devices")?;
    let mut out = Stdout::lock();
    writeln!(
        out,
        "{} profiles from {}",
        profiles.len(),
        args.profiles.display()
    )?;
    if connected.is_empty() {
        writeln!(out, "no HID devices found")?;
    }
    for (info, profile) in &connected {
        writeln!(
            out,
            "{}  profile: {}",
            describe(info),
            profile.as_deref().unwrap_or("none")
        )?;
    }
    forcedim(&mut out, args.forcedim_library.as_deref())?;
    falcons(&mut out)?;
    openhaptics(&mut out, args)
}

/// Where libHD was found and the device it opens, or where it was looked
/// for. Opening the device briefly starts the HD scheduler, forces off.
fn openhaptics(out: &mut impl Write, args: &DevicesArgs) -> anyhow::Result<()> {
    use haptic_device_openhaptics::{Library, OpenHapticsDevice, Settings};
    let library = match Library::load(args.openhaptics_library.as_deref()) {
        Ok(library) => std::sync::Arc::new(library),
        Err(error) => {
            writeln!(out, "OpenHaptics: {error}")?;
            return Ok(());
        }
    };
    writeln!(
        out,
        "OpenHaptics HD library from {}",
        library.path().display()
    )?;
    let settings = Settings {
        device_name: args.openhaptics_device.clone(),
        ..Settings::default()
    };
    let name = &settings.device_name;
    match OpenHapticsDevice::open_with(library, &settings) {
        Ok(device) => {
            let info = device.info();
            writeln!(
                out,
                "openhaptics {name:?}: {} (input DoF {}, output DoF {}, {} Hz)",
                info.model, info.input_dof, info.output_dof, info.update_rate
            )?
        }
        Err(error) => writeln!(out, "openhaptics {name:?}: cannot be opened: {error}")?,
    }
    Ok(())
}

/// The Force Dimension SDK and its devices, or where the SDK was looked
/// for.
fn forcedim(out: &mut impl Write, library: Option<&std::path::Path>) -> anyhow::Result<()> {
    let sdk = match Sdk::load(library) {
        Ok(sdk) => sdk,
        Err(error) => {
            writeln!(out, "Force Dimension: {error}")?;
            return Ok(());
        }
    };
    let [major, minor, release, revision] = sdk.version();
    writeln!(
        out,
        "Force Dimension SDK {major}.{minor}.{release}.{revision} from {}",
        sdk.path().display()
    )?;
    let devices = match list_devices(&sdk) {
        Ok(devices) => devices,
        Err(message) => {
            writeln!(out, "listing Force Dimension devices failed: {message}")?;
            return Ok(());
        }
    };
    if devices.is_empty() {
        writeln!(out, "no Force Dimension devices found")?;
    }
    for device in &devices {
        match &device.info {
            Ok(info) => writeln!(
                out,
                "forcedim {}: {}",
                device.index,
                describe_forcedim(info)
            )?,
            Err(message) => writeln!(
                out,
                "forcedim {}: cannot be opened: {message}",
                device.index
            )?,
        }
    }
    Ok(())
}

/// One line per connected Falcon with the `[device.falcon] index` that
/// opens it. A failed USB listing is reported on its line, not as an
/// error: the HID listing above still stands.
fn falcons(out: &mut impl Write) -> anyhow::Result<()> {
    match haptic_device_falcon::list_falcons() {
        Ok(falcons) if falcons.is_empty() => writeln!(out, "no Novint Falcon found")?,
        Ok(falcons) => {
            for f in &falcons {
                writeln!(
                    out,
                    "0403:cb48  bus {} address {}  Novint Falcon  serial {}  (device.falcon.index = {})",
                    f.bus,
                    f.address,
                    f.serial_number.as_deref().unwrap_or("?"),
                    f.index
                )?;
            }
        }
        Err(e) => writeln!(out, "Novint Falcons: {e}")?,
    }
    Ok(())
}

/// `NAME (system type N; wrist: active; gripper; left-handed)`.
fn describe_forcedim(info: &DeviceInfo) -> String {
    let wrist = match (info.wrist, info.active_wrist) {
        (true, true) => "wrist: active",
        (true, false) => "wrist: passive",
        _ => "no wrist",
    };
    let mut parts = vec![
        format!("system type {}", info.system_type),
        wrist.to_owned(),
    ];
    if info.gripper {
        parts.push("gripper".to_owned());
    }
    parts.push(
        if info.left_handed {
            "left-handed"
        } else {
            "right-handed"
        }
        .to_owned(),
    );
    format!("{} ({})", info.name, parts.join("; "))
}

/// `vvvv:pppp  PATH  MANUFACTURER PRODUCT  (interface N, usage PAGE:USAGE)`.
fn describe(info: &HidDeviceInfo) -> String {
    let label = [info.manufacturer.as_deref(), info.product.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    format!(
        "{:04x}:{:04x}  {}  {}  (interface {}, usage {:04x}:{:04x})",
        info.vendor_id,
        info.product_id,
        info.path,
        if label.is_empty() { "?" } else { &label },
        info.interface_number,
        info.usage_page,
        info.usage
    )
}
