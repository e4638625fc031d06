//! Gmsh's tetrahedral meshes of the fetched test meshes (made by
//! `scripts/fetch-test-data` with PyPI gmsh 4.15.2), and our own isosurface
//! stuffing of the same surfaces.

use haptic_acceptance::{mesh_path, mesh_sized, test_data_dir};
use haptic_mesh::{load_mesh, LoadOptions};
use haptic_sdf::{DenseField, DenseOptions, NoProgress};
use haptic_tetmesh::{
    enclosed_volume, parse_msh, read_msh, read_tet_mesh, stuff_isosurface, write_msh,
    StuffingOptions,
};
use std::path::PathBuf;

/// `tets/<name>` under the fetched test data; panics naming the script
/// when it is missing.
fn tets_path(name: &str) -> PathBuf {
    let path = test_data_dir().join("tets").join(name);
    assert!(
        path.is_file(),
        "test data {} is missing: run scripts/fetch-test-data",
        path.display()
    );
    path
}

/// Each gmsh mesh, the surface it was made from, and its tet count range
/// (the script's).
const GMSH_MESHES: [(&str, &str, usize, usize); 4] = [
    ("pybullet-bunny.msh", "pybullet-bunny.obj", 1000, 2200),
    (
        "pybullet-bunny-binary.msh",
        "pybullet-bunny.obj",
        1000,
        2200,
    ),
    ("pybullet-torus.msh", "pybullet-torus.obj", 1500, 4000),
    ("metaworld-mug.msh", "metaworld-mug.stl", 350, 900),
];

#[test]
fn gmsh_meshes_read_valid_and_enclose_the_surface_volume() {
    for (tets, surface, low, high) in GMSH_MESHES {
        let loaded = read_msh(&tets_path(tets)).unwrap_or_else(|e| panic!("{e}"));
        let mesh = &loaded.mesh;
        assert!(
            (low..=high).contains(&mesh.tets.len()),
            "{tets}: {} tets",
            mesh.tets.len()
        );
        let source = load_mesh(&mesh_path(surface), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"))
            .mesh;
        let enclosed = enclosed_volume(&source);
        let volume = mesh.volume();
        let error = (volume / enclosed - 1.0).abs();
        assert!(
            error < 0.01,
            "{tets}: volume {volume} against {enclosed} ({error:.2e})"
        );
        // The boundary is the surface gmsh was given: closed, outward.
        let boundary = mesh.check_boundary().unwrap();
        assert!((enclosed_volume(&boundary.surface) / volume - 1.0).abs() < 1e-9);
        assert!(mesh.quality().min_dihedral_deg > 0.0);
        println!(
            "{tets}: {} tets, volume {volume:.6} (surface {enclosed:.6}), {}",
            mesh.tets.len(),
            mesh.quality()
        );
    }
}

#[test]
fn gmsh_ascii_and_binary_files_hold_the_same_mesh() {
    let ascii = read_msh(&tets_path("pybullet-bunny.msh")).unwrap().mesh;
    let binary = read_msh(&tets_path("pybullet-bunny-binary.msh"))
        .unwrap()
        .mesh;
    assert_eq!(ascii.tets, binary.tets);
    assert_eq!(ascii.positions.len(), binary.positions.len());
    for (a, b) in ascii.positions.iter().zip(&binary.positions) {
        assert!((a - b).norm() < 1e-12, "{a} {b}");
    }
}

/// Gmsh's Medit writer (7 significant digits, with a `Triangles` section
/// to skip) against its MSH file of the same mesh.
#[test]
fn gmsh_medit_file_holds_the_msh_file_s_mesh() {
    let msh = read_msh(&tets_path("pybullet-bunny.msh")).unwrap().mesh;
    let medit = read_tet_mesh(&tets_path("pybullet-bunny.mesh"))
        .unwrap_or_else(|e| panic!("{e}"))
        .mesh;
    assert_eq!(medit.tets, msh.tets);
    assert_eq!(medit.positions.len(), msh.positions.len());
    for (a, b) in medit.positions.iter().zip(&msh.positions) {
        assert!((a - b).norm() < 1e-5, "{a} {b}");
    }
    assert!((medit.volume() / msh.volume() - 1.0).abs() < 1e-4);
}

#[test]
fn gmsh_mesh_writes_and_reads_back_exactly() {
    let mesh = read_msh(&tets_path("pybullet-torus.msh")).unwrap().mesh;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("torus.msh");
    write_msh(&path, &mesh).unwrap();
    let back = read_msh(&path).unwrap().mesh;
    assert_eq!(back, mesh);
    let parsed = parse_msh(&std::fs::read(&path).unwrap(), &path).unwrap();
    assert_eq!(parsed.element_numbers.len(), mesh.tets.len());
}

/// Isosurface stuffing of the real closed meshes, scaled to 10 cm, from a
/// 128³ dense field: every tet positive, the boundary closed, the volume
/// within the stated tolerance of the surface's. Measured (volume error,
/// min dihedral): bunny −1.48 % 15.2° at 4 mm, −0.63 % 17.1° at 2.5 mm;
/// torus −0.60 % 12.6°, −0.25 % 8.8°; mug −0.32 % 19.0°, −0.13 % 18.7°.
#[test]
fn stuffing_real_meshes_matches_their_volume() {
    let cases = [
        ("pybullet-bunny.obj", 0.004, 0.02),
        ("pybullet-bunny.obj", 0.0025, 0.01),
        ("pybullet-torus.obj", 0.004, 0.01),
        ("pybullet-torus.obj", 0.0025, 0.005),
        ("metaworld-mug.stl", 0.004, 0.01),
        ("metaworld-mug.stl", 0.0025, 0.005),
    ];
    for (name, spacing, tolerance) in cases {
        let surface = mesh_sized(name, 0.1);
        let field = DenseField::build(
            &surface,
            &DenseOptions {
                resolution: 128,
                padding_fraction: 0.1,
            },
            &NoProgress,
        );
        let stuffed = stuff_isosurface(&field, &StuffingOptions::new(spacing))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let mesh = &stuffed.mesh;
        let enclosed = enclosed_volume(&surface);
        let error = stuffed.report.volume / enclosed - 1.0;
        println!(
            "{name} at {spacing} m: {} tets ({} removed at pinches), {} nodes, volume error {:+.3} %, {}",
            mesh.tets.len(),
            stuffed.report.removed_tets,
            mesh.positions.len(),
            100.0 * error,
            stuffed.report.quality
        );
        assert!(error.abs() < tolerance, "{name}: volume error {error:.4}");
        mesh.validate().unwrap();
        mesh.check_boundary().unwrap();
        assert!(
            stuffed.report.quality.min_dihedral_deg > 5.0,
            "{name}: {}",
            stuffed.report.quality
        );
    }
}
