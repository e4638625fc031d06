//! Finding and loading libHD: a missing library names every path tried, a
//! library without the HD API names the first function missing, and the
//! simulated library loads through the same code.

mod common;

use haptic_device_openhaptics::{Library, LoadError, OpenHapticsDevice, SDK_ENVS};

#[test]
fn a_missing_library_names_every_path_tried_and_a_foreign_one_the_missing_symbol() {
    let dir = std::env::temp_dir().join(format!("oh-none-{}", std::process::id()));
    // The only test of this binary that touches the environment.
    unsafe { std::env::set_var(SDK_ENVS[0], &dir) };
    let configured = dir.join("nowhere/libHD.so");
    let error = Library::load(Some(&configured))
        .err()
        .expect("no libHD here");
    unsafe { std::env::remove_var(SDK_ENVS[0]) };
    let text = error.to_string();
    let LoadError::NotFound { tried } = &error else {
        panic!("{text}");
    };
    assert!(
        text.starts_with("the OpenHaptics HD library (libHD.so) was not found; tried:"),
        "{text}"
    );
    assert_eq!(
        tried[0],
        (configured.display().to_string(), "no such file".to_owned())
    );
    for expected in [dir.join("lib/libHD.so"), dir.join("lib64/libHD.so.3.4")] {
        assert!(
            text.contains(&format!("\n  {}: no such file", expected.display())),
            "{text}"
        );
    }
    assert!(
        text.contains("\n  libHD.so (dynamic linker search"),
        "{text}"
    );
    assert!(
        text.contains("/opt/OpenHaptics/Developer/lib/libHD.so"),
        "{text}"
    );

    let libm = haptic_testkit::vendor_library::foreign_library();
    let error = Library::load(Some(libm)).err().expect("libm is not libHD");
    assert!(
        matches!(
            &error,
            LoadError::MissingSymbol {
                symbol: "hdInitDevice",
                ..
            }
        ),
        "{error}"
    );
    assert!(
        error.to_string().contains("has no `hdInitDevice`"),
        "{error}"
    );
}

#[test]
fn the_simulated_library_loads_and_an_unknown_device_name_carries_the_hd_error() {
    let (_guard, sim) = common::Sim::lock();
    let library = Library::load(Some(sim.path())).unwrap();
    assert_eq!(library.path(), sim.path());
    let mut settings = sim.settings();
    settings.device_name = "Left Touch".to_owned();
    let error = OpenHapticsDevice::open(&settings)
        .err()
        .expect("no such device");
    assert_eq!(
        error.to_string(),
        "hdInitDevice failed: 0x0303 (internal -771): Device not found for this configuration"
    );
    assert!(!sim.state().device_initialised);
}
