//! What every device backend lists (`haptic_daemon::listing`), against the
//! simulated Force Dimension SDK and libHD and the simulated Haply Inverse
//! Service: each backend in its place, the
//! simulated devices described, a missing library as its backend's error,
//! and the running scene's device reported as in use, not opened again.

use haply_sim::{SimConfig, SimService};
use haptic_daemon::listing::{list_devices, InUse, ListOptions, ENUMERATORS};
use haptic_server::DeviceInfo;
use haptic_testkit::vendor_library::{find, SimulatedLibrary};
use openhaptics_sim::OhsimState;
use std::path::{Path, PathBuf};

const FORCEDIM: &str = "libforcedim_sim.so";
const OPENHAPTICS: &str = "libopenhaptics_sim.so";

fn profiles() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../device-profiles")
}

fn options() -> ListOptions {
    ListOptions {
        profiles_dir: profiles(),
        forcedim_library: Some(find(FORCEDIM).unwrap()),
        openhaptics_library: Some(find(OPENHAPTICS).unwrap()),
        openhaptics_device: "Default Device".to_owned(),
        // Nothing listens on port 9 of loopback: see `haply_url` below.
        haply_url: "ws://127.0.0.1:9".to_owned(),
        in_use: None,
    }
}

fn device(id: &str, name: &str, detail: &str, error: Option<&str>) -> DeviceInfo {
    DeviceInfo {
        id: id.to_owned(),
        name: name.to_owned(),
        detail: detail.to_owned(),
        profile: None,
        error: error.map(str::to_owned),
        hid: None,
    }
}

/// `hdDisable(HD_FORCE_OUTPUT)` calls since the simulated libHD's reset:
/// opening its device makes one.
fn force_output_disables(libhd: &SimulatedLibrary) -> u32 {
    let mut state = OhsimState::default();
    // SAFETY: `ohsim_state`'s signature.
    unsafe { libhd.hook::<unsafe extern "C" fn(*mut OhsimState)>("ohsim_state\0")(&mut state) };
    state.force_output_disables
}

#[test]
fn every_backend_lists_what_the_simulated_libraries_hold() {
    let (_guard, libhd) = SimulatedLibrary::lock(OPENHAPTICS, "ohsim_reset\0");
    let service = SimService::start(SimConfig::default()).unwrap();
    let listing = list_devices(&ListOptions {
        haply_url: service.url(),
        ..options()
    });
    let backends: Vec<&str> = listing.iter().map(|b| b.backend.as_str()).collect();
    assert_eq!(
        backends,
        ["hid", "forcedim", "falcon", "openhaptics", "haply"]
    );
    assert_eq!(listing.len(), ENUMERATORS.len());
    let [hid, forcedim, _, openhaptics, haply] = &listing[..] else {
        unreachable!()
    };
    let expected = format!("14 profiles from {}", profiles().display());
    assert_eq!(hid.source.as_deref(), Some(expected.as_str()));
    assert_eq!(hid.error, None);
    assert_eq!(
        forcedim.source,
        Some(format!(
            "Force Dimension SDK 3.17.0.0 from {}",
            find(FORCEDIM).unwrap().display()
        ))
    );
    assert_eq!(
        forcedim.devices,
        [device(
            "0",
            "sigma.7",
            "system type 104; wrist: active; gripper; right-handed",
            None
        )]
    );
    assert_eq!(
        openhaptics.source,
        Some(format!(
            "OpenHaptics HD library from {}",
            find(OPENHAPTICS).unwrap().display()
        ))
    );
    assert_eq!(
        openhaptics.devices,
        [device(
            "Default Device",
            "Touch (simulated)",
            "input DoF 6, output DoF 3, 1000 Hz",
            None
        )]
    );
    assert!(force_output_disables(&libhd) > 0);
    assert_eq!(
        haply.source,
        Some(format!(
            "Haply Inverse Service at {}: 1 Inverse3, 1 VerseGrip",
            service.url()
        ))
    );
    assert_eq!(
        haply.devices,
        [
            device("049D", "Inverse3", "inverse3 on COM12", None),
            device("61548", "VerseGrip", "wired on COM3", None)
        ]
    );
}

#[test]
fn a_missing_library_is_its_backend_s_error_and_the_device_in_use_is_not_opened() {
    let (_guard, libhd) = SimulatedLibrary::lock(OPENHAPTICS, "ohsim_reset\0");
    let listing = list_devices(&ListOptions {
        forcedim_library: Some("/nonexistent/libdrd.so".into()),
        in_use: Some(InUse {
            backend: "openhaptics",
            id: "Default Device".to_owned(),
            name: "Touch (simulated)".to_owned(),
        }),
        ..options()
    });
    let forcedim = &listing[1];
    let error = forcedim.error.as_deref().unwrap();
    assert!(
        error.starts_with("the Force Dimension SDK library was not found; tried:\n  /nonexistent/libdrd.so: no such file\n"),
        "{error}"
    );
    assert_eq!(
        (forcedim.source.as_ref(), forcedim.devices.len()),
        (None, 0)
    );
    let haply = listing[4].error.as_deref().unwrap();
    assert!(
        haply.starts_with("cannot connect to the Haply Inverse Service at ws://127.0.0.1:9: "),
        "{haply}"
    );
    let openhaptics = &listing[3];
    assert_eq!(openhaptics.source, None);
    assert_eq!(
        openhaptics.devices,
        [device(
            "Default Device",
            "Touch (simulated)",
            "",
            Some("in use by the running scene")
        )]
    );
    assert_eq!(force_output_disables(&libhd), 0);
}
