//! Every real mesh of the test data: dense and sparse fields against the
//! brute-force exact signed distance at 10,000 random points each.
//!
//! Promise: within half a voxel everywhere except next to a line or point of
//! the medial axis (where trilinear interpolation of exact samples cannot do
//! better than √3/2 voxel), the right sign farther than one voxel from the
//! surface, and beyond a sparse field's band a value that never claims more
//! clearance than there is. The dense samples themselves stay within 0.15
//! voxel of the exact distance at 20,000 random nodes.

use haptic_acceptance::{mesh_path, MESHES};
use haptic_mesh::{load_mesh, LoadOptions};
use haptic_sdf::reference::{exact_signed_distances, uniform_points, AccuracyReport};
use haptic_sdf::{
    DenseField, DenseOptions, DistanceField, MeshBvh, NoProgress, SparseField, SparseOptions,
};
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

const SAMPLES: usize = 10_000;
const DENSE_RESOLUTION: u32 = 128;
const SPARSE_RESOLUTION: u32 = 256;
/// Random grid nodes whose samples are compared with the exact distance.
const NODE_SAMPLES: usize = 20_000;
/// Samples propagated from neighbouring nodes may miss the exact distance by
/// this much at most (measured: under 0.11 voxel).
const NODE_TOLERANCE_VOXELS: f64 = 0.15;

/// The largest error of the dense field's samples at random nodes, against
/// the exact nearest-triangle distance and winding-number sign, in voxels.
fn worst_node_error(mesh: &haptic_mesh::TriangleMesh, field: &DenseField) -> f64 {
    let bvh = MeshBvh::new(mesh);
    let grid = *field.grid();
    let mut rng = rand_pcg::Pcg64::seed_from_u64(99);
    let nodes: Vec<[u32; 3]> = (0..NODE_SAMPLES)
        .map(|_| grid.dims.map(|d| rng.gen_range(0..d)))
        .collect();
    nodes
        .par_iter()
        .map(|&[i, j, k]| {
            let q = grid.node_position(i, j, k);
            let distance = bvh.nearest(&q).map_or(0.0, |n| n.distance_squared.sqrt());
            let exact = if bvh.winding_number(&q) > 0.5 {
                -distance
            } else {
                distance
            };
            (f64::from(field.values()[grid.index(i, j, k)]) - exact).abs() / grid.voxel_size
        })
        .reduce(|| 0.0, f64::max)
}

#[test]
fn every_real_mesh_meets_the_accuracy_promise() {
    let mut failures = Vec::new();
    for entry in MESHES {
        let path = mesh_path(entry.name);
        let loaded = load_mesh(&path, &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", entry.name));
        let mesh = loaded.mesh;
        let dense = DenseField::build(
            &mesh,
            &DenseOptions {
                resolution: DENSE_RESOLUTION,
                ..DenseOptions::default()
            },
            &NoProgress,
        );
        let sparse = SparseField::build(
            &mesh,
            &SparseOptions {
                resolution: SPARSE_RESOLUTION,
                band_half_width_voxels: 3.0,
                ..SparseOptions::default()
            },
            &NoProgress,
        );
        let points = uniform_points(&dense.bounds(), SAMPLES, 2024);
        let exact = exact_signed_distances(&mesh, &points);
        let values = |field: &(dyn DistanceField + Sync)| -> Vec<f64> {
            points.par_iter().map(|p| field.value(p)).collect()
        };
        let dense_report = AccuracyReport::compare(
            &mesh,
            &points,
            &exact,
            &values(&dense),
            dense.grid().voxel_size,
            None,
        );
        let sparse_report = AccuracyReport::compare(
            &mesh,
            &points,
            &exact,
            &values(&sparse),
            sparse.grid().voxel_size,
            Some(sparse.band_half_width()),
        );
        let node_error = worst_node_error(&mesh, &dense);
        println!("{} ({} triangles)", entry.name, mesh.triangles.len());
        println!("  dense {DENSE_RESOLUTION}: {dense_report}");
        println!("  dense {DENSE_RESOLUTION} nodes: worst error {node_error:.3} voxel");
        if node_error > NODE_TOLERANCE_VOXELS {
            failures.push(format!(
                "{} dense nodes: worst error {node_error:.3} voxel",
                entry.name
            ));
        }
        println!("  sparse {SPARSE_RESOLUTION}: {sparse_report}");
        for (kind, report) in [("dense", dense_report), ("sparse", sparse_report)] {
            if !report.holds() {
                failures.push(format!("{} {kind}: {report}", entry.name));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "accuracy promise broken:\n{}",
        failures.join("\n")
    );
}
