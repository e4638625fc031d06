//! Node normals of a body's surface ([`DeformableBody::vertex_normals`]).

use haptic_deformable::body::solid_masses;
use haptic_deformable::paradigms::{CorotationalFem, ForceIntegration, Paradigm};
use haptic_deformable::scenes::{cloth, ClothSpec};
use haptic_deformable::topology::tet_box;
use haptic_deformable::{DeformableBody, DeformableMaterial};
use nalgebra::{Isometry3, Point3, Translation3, UnitQuaternion, Vector3};

/// A 4×6×4-cell box jelly, turned and moved off the origin: every surface
/// node's normal is a unit vector pointing away from the centroid, each
/// face's centre node's is that face's outward axis (the top's `+z` before
/// the turn), and the interior nodes have none.
#[test]
fn a_box_jelly_has_outward_unit_normals() {
    let cells = [4, 6, 4];
    let size = [0.06, 0.09, 0.05];
    let turn = UnitQuaternion::from_euler_angles(0.2, -0.4, 0.9);
    let pose = Isometry3::from_parts(Translation3::new(0.3, -0.1, 0.5), turn);
    let mesh = tet_box(cells, size, &pose);
    let masses = solid_masses(&mesh.positions, &mesh.tets, 1000.0);
    let fem = CorotationalFem::new(
        "jelly",
        &mesh.positions,
        &mesh.tets,
        1e4,
        0.45,
        ForceIntegration::default(),
    )
    .unwrap();
    let body = DeformableBody::new(
        "jelly",
        mesh.positions.clone(),
        masses,
        mesh.surface.clone(),
        vec![],
        DeformableMaterial::default(),
        Paradigm::CorotationalFem(fem),
    )
    .unwrap();
    let mut normals = Vec::new();
    body.vertex_normals(&mut normals);
    let capacity = normals.capacity();
    body.vertex_normals(&mut normals);
    assert_eq!(normals.capacity(), capacity);
    assert_eq!(normals.len(), mesh.positions.len());
    let centre = Point3::from(
        mesh.positions
            .iter()
            .map(|p| p.coords)
            .sum::<Vector3<f64>>()
            / mesh.positions.len() as f64,
    );
    let [nx, ny, nz] = cells;
    let index = |i: usize, j: usize, k: usize| i + (nx + 1) * (j + (ny + 1) * k);
    let mut least: f64 = f64::INFINITY;
    for k in 0..=nz {
        for j in 0..=ny {
            for i in 0..=nx {
                let node = index(i, j, k);
                let on_surface = i == 0 || i == nx || j == 0 || j == ny || k == 0 || k == nz;
                let n = normals[node];
                if on_surface {
                    assert!((n.norm() - 1.0).abs() < 1e-12, "node {node}: {n}");
                    let away = n.dot(&(mesh.positions[node] - centre).normalize());
                    least = least.min(away);
                    assert!(away > 0.0, "node {node}: {n}");
                } else {
                    assert_eq!(n, Vector3::zeros(), "node {node}");
                }
            }
        }
    }
    let faces = [
        (index(nx / 2, ny / 2, nz), Vector3::z()),
        (index(nx / 2, ny / 2, 0), -Vector3::z()),
        (index(0, ny / 2, nz / 2), -Vector3::x()),
        (index(nx, ny / 2, nz / 2), Vector3::x()),
        (index(nx / 2, 0, nz / 2), -Vector3::y()),
        (index(nx / 2, ny, nz / 2), Vector3::y()),
    ];
    for (node, axis) in faces {
        let expected = turn * axis;
        println!("face centre {node}: normal {:?}", normals[node]);
        assert!((normals[node] - expected).norm() < 1e-12, "node {node}");
    }
    println!("least cosine between a surface normal and the way out: {least:.4}");
}

/// An open sheet's normals are on the side its triangles' winding gives:
/// `+z` of its pose for the generated cloth.
#[test]
fn a_cloth_faces_the_way_its_triangles_wind() {
    let pose = Isometry3::from_parts(
        Translation3::new(0.0, 0.0, 0.2),
        UnitQuaternion::from_euler_angles(0.5, 0.0, 0.0),
    );
    let spec = ClothSpec {
        nodes: 6,
        side: 0.1,
        ..ClothSpec::default()
    };
    let (body, _) = cloth("cloth", &spec, &pose).unwrap();
    let mut normals = Vec::new();
    body.vertex_normals(&mut normals);
    let up = pose.rotation * Vector3::z();
    for (i, n) in normals.iter().enumerate() {
        assert!((n - up).norm() < 1e-12, "node {i}: {n}");
    }
}
