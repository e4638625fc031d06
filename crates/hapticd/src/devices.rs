//! `hapticd devices`: what every device backend finds
//! (`haptic_daemon::listing`, in its order: HID devices and the profile
//! each matches, the Force Dimension SDK's devices, connected Novint
//! Falcons, OpenHaptics' libHD and the device it opens, the Inverse3s and
//! VerseGrips the Haply Inverse Service reports), one line each.

use crate::output::Stdout;
use haptic_daemon::listing::{list_devices, ListOptions};
use haptic_devices::load_profiles;
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
    /// The Haply Inverse Service's simulation channel.
    #[arg(long, value_name = "URL", default_value = haptic_device_haply::DEFAULT_URL)]
    haply_url: String,
}

/// Per backend: what it loaded, why it found nothing (`NAME: error`) or
/// `no NAME devices found`, then a line per device, `BACKEND ID: NAME
/// (DETAIL)  profile: PROFILE` or `BACKEND ID: cannot be opened: WHY` (an
/// ID with spaces quoted). A profiles directory that does not load is an
/// error, as it is for `hapticd run`.
pub fn run(args: &DevicesArgs) -> anyhow::Result<()> {
    load_profiles(&args.profiles)?;
    let listing = list_devices(&ListOptions {
        profiles_dir: args.profiles.clone(),
        forcedim_library: args.forcedim_library.clone(),
        openhaptics_library: args.openhaptics_library.clone(),
        openhaptics_device: args.openhaptics_device.clone(),
        haply_url: args.haply_url.clone(),
        in_use: None,
    });
    let mut out = Stdout::lock();
    for backend in &listing {
        if let Some(source) = &backend.source {
            writeln!(out, "{source}")?;
        }
        match &backend.error {
            Some(error) => writeln!(out, "{}: {error}", backend.name)?,
            None if backend.devices.is_empty() => {
                writeln!(out, "no {} devices found", backend.name)?
            }
            None => {}
        }
        for device in &backend.devices {
            let id = if device.id.contains(char::is_whitespace) {
                format!("{:?}", device.id)
            } else {
                device.id.clone()
            };
            write!(out, "{} {id}: ", backend.backend)?;
            if let Some(error) = &device.error {
                writeln!(out, "cannot be opened: {error}")?;
                continue;
            }
            write!(out, "{}", device.name)?;
            if !device.detail.is_empty() {
                write!(out, " ({})", device.detail)?;
            }
            if let Some(profile) = &device.profile {
                write!(out, "  profile: {profile}")?;
            }
            writeln!(out)?;
        }
    }
    Ok(())
}
