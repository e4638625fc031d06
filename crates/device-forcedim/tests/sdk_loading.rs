//! Finding and loading the SDK: a missing library names every path tried,
//! a library without the SDK's functions names the first one missing, and
//! the simulated SDK loads through the same code.

mod common;

use haptic_device_forcedim::{LoadError, Sdk, SDK_ENV};

#[test]
fn a_missing_library_names_every_path_tried_and_a_foreign_one_the_missing_symbol() {
    let dir = tempfile_dir();
    // The only test of this binary that touches the environment.
    unsafe { std::env::set_var(SDK_ENV, &dir) };
    let configured = dir.join("nowhere/libdrd.so");
    let error = Sdk::load(Some(&configured)).err().expect("no SDK here");
    unsafe { std::env::remove_var(SDK_ENV) };
    let text = error.to_string();
    let LoadError::NotFound { tried } = &error else {
        panic!("{text}");
    };
    assert!(
        text.starts_with("the Force Dimension SDK library was not found; tried:"),
        "{text}"
    );
    assert_eq!(tried[0].0, configured.display().to_string());
    assert_eq!(tried[0].1, "no such file");
    let arch = format!("lib/release/lin-{}-gcc/libdhd.so.3", std::env::consts::ARCH);
    for expected in [
        dir.join("libdrd.so"),
        dir.join("lib/libdhd.so"),
        dir.join(&arch),
    ] {
        assert!(
            text.contains(&format!("\n  {}: no such file", expected.display())),
            "{text}"
        );
    }
    for name in ["libdrd.so", "libdrd.so.3", "libdhd.so", "libdhd.so.3"] {
        assert!(
            text.contains(&format!("\n  {name} (dynamic linker search")),
            "{text}"
        );
        assert!(text.contains(&format!("/usr/local/lib/{name}")), "{text}");
    }

    // A real shared library that is not the SDK.
    let libm = haptic_testkit::vendor_library::foreign_library();
    let error = Sdk::load(Some(libm)).err().expect("libm is not the SDK");
    assert!(
        matches!(
            &error,
            LoadError::MissingSymbol {
                symbol: "dhdGetDeviceCount",
                ..
            }
        ),
        "{error}"
    );
    assert_eq!(
        error.to_string(),
        format!(
            "{}: not the Force Dimension SDK, or too old a version: it has no `dhdGetDeviceCount`",
            libm.display()
        )
    );
}

#[test]
fn the_simulated_sdk_loads_as_the_real_one_would() {
    let (_guard, sim) = common::Sim::lock();
    let sdk = Sdk::load(Some(sim.path())).unwrap();
    assert_eq!(sdk.path(), sim.path());
    assert!(sdk.has_robotic_sdk());
    assert_eq!(sdk.version(), [3, 17, 0, 0]);
    assert_eq!(sdk.device_count(), Ok(1));
    sim.set_device(common::OMEGA3, 3);
    let listed = haptic_device_forcedim::list_devices(&sdk).unwrap();
    assert_eq!(listed.len(), 3);
    let info = listed[2].info.as_ref().unwrap();
    assert_eq!(
        (info.name.as_str(), info.system_type, info.wrist),
        ("omega.3", 33, false)
    );
    assert_eq!(sim.state().open, 0, "listing closes what it opens");
    // A directory holding the library works as well as the file.
    let dir = sim.path().parent().unwrap();
    let linked = tempfile_dir();
    std::os::unix::fs::symlink(sim.path(), linked.join("libdhd.so")).unwrap();
    let sdk = Sdk::load(Some(&linked)).unwrap();
    assert_eq!(sdk.path(), linked.join("libdhd.so"));
    assert!(dir.is_dir());
}

/// A fresh empty directory under the target's temporary directory.
fn tempfile_dir() -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "forcedim-test-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
