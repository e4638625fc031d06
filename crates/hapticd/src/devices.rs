//! `hapticd devices`: connected HID devices and the profile each matches.

use crate::output::Stdout;
use anyhow::Context;
use haptic_devices::{list_connected, load_profiles, HidDeviceInfo};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct DevicesArgs {
    /// Directory of device profiles (*.toml).
    #[arg(long, value_name = "DIR", default_value = "device-profiles")]
    profiles: PathBuf,
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
    Ok(())
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
