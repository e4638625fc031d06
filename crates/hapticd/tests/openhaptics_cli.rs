//! OpenHaptics devices from the command line, against the simulated libHD
//! (`openhaptics-sim`, built beside the test executables): `hapticd
//! devices` says where libHD was found and the device it opens, or where
//! it looked.

mod vendor;

use vendor::{devices_lists, sim_library};

#[test]
fn devices_names_libhd_and_its_device_or_where_it_looked() {
    let sim = sim_library("libopenhaptics_sim.so");
    devices_lists(
        &["--openhaptics-library".as_ref(), sim.as_os_str()],
        &[
            &format!("OpenHaptics HD library from {}\n", sim.display()),
            "openhaptics \"Default Device\": Touch (simulated) (input DoF 6, output DoF 3, 1000 Hz)\n",
        ],
    );
    devices_lists(
        &["--openhaptics-library", "/nonexistent/libHD.so"],
        &["OpenHaptics: the OpenHaptics HD library (libHD.so) was not found; tried:\n  /nonexistent/libHD.so: no such file\n"],
    );
}
