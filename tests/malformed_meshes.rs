//! The malformed inputs of the test data (openscad-testing-data) give a typed
//! error naming the file, or load with a documented repair — never a panic.

use haptic_acceptance::{malformed_path, MALFORMED};
use haptic_mesh::{load_mesh, LoadOptions, MeshError};

#[test]
fn every_malformed_file_errors_or_is_repaired_as_documented() {
    for &name in MALFORMED {
        let path = malformed_path(name);
        let result = load_mesh(&path, &LoadOptions::default());
        match name {
            "empty.stl" => {
                let error = result.expect_err("an empty file has no mesh");
                assert!(matches!(error, MeshError::EmptyMesh { .. }), "{error}");
                assert!(error.to_string().contains(name), "{error}");
            }
            "invalidvertex.stl" => {
                let error = result.expect_err("a vertex coordinate is the word 'blah'");
                assert!(matches!(error, MeshError::Parse { .. }), "{error}");
                assert_eq!(error.line(), Some(89), "{error}");
                assert!(error.to_string().contains(name), "{error}");
            }
            "issue1580-zero-area-triangle.stl" => {
                // Repair: the zero-area triangle is dropped and reported.
                let loaded = result.expect("the remaining triangles load");
                assert_eq!(loaded.report.repair.degenerate_triangles, 1);
                assert_eq!(loaded.mesh.triangles.len(), 13);
            }
            bad_stl if bad_stl.starts_with("bad-stl-") => {
                // These broke an old CGAL with thin slivers; they are
                // well-formed closed meshes and load as such.
                let loaded = result.unwrap_or_else(|e| panic!("{bad_stl}: {e}"));
                assert!(
                    loaded.report.topology.is_closed(),
                    "{bad_stl}: {}",
                    loaded.report
                );
            }
            other => panic!("{other}: no expectation written for this malformed input"),
        }
    }
}
