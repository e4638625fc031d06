//! Isosurface stuffing on analytic fields and on fields of closed meshes.

use haptic_mesh::shapes::{icosphere, torus};
use haptic_sdf::{DenseField, DenseOptions, NoProgress};
use haptic_testkit::fields::SphereField;
use haptic_tetmesh::{enclosed_volume, stuff_isosurface, StuffingOptions};
use nalgebra::Point3;

#[test]
fn explore() {
    let sphere = SphereField {
        center: Point3::new(0.01, -0.02, 0.003),
        radius: 0.05,
    };
    for h in [0.02, 0.01, 0.005, 0.0025] {
        let s = stuff_isosurface(&sphere, &StuffingOptions::new(h)).unwrap();
        let exact = 4.0 / 3.0 * std::f64::consts::PI * 0.05f64.powi(3);
        println!(
            "sphere h {h}: {} tets, {} nodes, vol err {:.4}%, {}, {:?}",
            s.mesh.tets.len(),
            s.mesh.positions.len(),
            100.0 * (s.report.volume / exact - 1.0),
            s.report.quality,
            (
                s.report.cut_points,
                s.report.warped_nodes,
                s.report.whole_tets,
                s.report.cut_tets
            )
        );
    }
    let mesh = torus(0.04, 0.015, 96, 48);
    let field = DenseField::build(
        &mesh,
        &DenseOptions {
            resolution: 128,
            padding_fraction: 0.1,
        },
        &NoProgress,
    );
    let exact = enclosed_volume(&mesh);
    for h in [0.01, 0.005, 0.0025] {
        let s = stuff_isosurface(&field, &StuffingOptions::new(h)).unwrap();
        println!(
            "torus h {h}: {} tets, vol err {:.4}%, {}",
            s.mesh.tets.len(),
            100.0 * (s.report.volume / exact - 1.0),
            s.report.quality
        );
    }
    let _ = icosphere;
}
