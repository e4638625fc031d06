//! `haptic-bench`: the geometry pipeline's benchmarks, each printing
//! `name: value unit` lines. `scripts/bench-geometry` runs them beside the
//! peers (mesh_to_sdf in-process, OpenVDB in Python) and prints the ratios.

use clap::{Parser, Subcommand};
use haptic_mesh::{load_mesh, LoadOptions, Point3, TriangleMesh};
use haptic_pointshell::{
    contacts_brute_force, sample_point_shell, spacing_for_count, NestedPointTree,
    PointTreeTraversal, TraversalBudget,
};
use haptic_sdf::reference::{exact_signed_distances, uniform_points, AccuracyReport};
use haptic_sdf::{
    BuildProgress, DenseField, DenseOptions, DistanceField, GridSpec, MeshBvh, NoProgress, Slab,
    SparseField, SparseOptions,
};
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use rayon::prelude::*;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Parser)]
#[command(about = "Benchmarks of the geometry pipeline")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Dense build time and accuracy, ours and mesh_to_sdf's on the same nodes.
    Dense {
        mesh: PathBuf,
        #[arg(long, default_value_t = 256)]
        resolution: u32,
        /// Random points compared with brute-force exact distance (0: skip).
        #[arg(long, default_value_t = 10_000)]
        samples: usize,
    },
    /// Sparse narrow-band build time and peak memory (run alone in its process).
    Sparse {
        mesh: PathBuf,
        #[arg(long, default_value_t = 1024)]
        resolution: u32,
        #[arg(long, default_value_t = 3.0)]
        band: f64,
    },
    /// Value-and-gradient lookups per second, random and coherent.
    Lookups {
        mesh: PathBuf,
        #[arg(long, default_value_t = 256)]
        resolution: u32,
    },
    /// Field lookups of the nested point tree against brute force.
    PointTree {
        /// The mesh whose field the shell touches.
        environment: PathBuf,
        /// The mesh sampled into the point shell.
        tool: PathBuf,
        #[arg(long, default_value_t = 10_000)]
        points: usize,
    },
}

fn main() {
    match Cli::parse().command {
        Command::Dense {
            mesh,
            resolution,
            samples,
        } => dense(&load(&mesh), resolution, samples),
        Command::Sparse {
            mesh,
            resolution,
            band,
        } => sparse(&load(&mesh), resolution, band),
        Command::Lookups { mesh, resolution } => lookups(&load(&mesh), resolution),
        Command::PointTree {
            environment,
            tool,
            points,
        } => point_tree(&load(&environment), load(&tool), points),
    }
}

fn load(path: &Path) -> TriangleMesh {
    match load_mesh(path, &LoadOptions::default()) {
        Ok(loaded) => loaded.mesh,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::exit(1);
        }
    }
}

fn dense(mesh: &TriangleMesh, resolution: u32, samples: usize) {
    let options = DenseOptions {
        resolution,
        ..DenseOptions::default()
    };
    let stages = StageTimes::new();
    let start = Instant::now();
    let ours = DenseField::build(mesh, &options, &stages);
    stages.finish();
    let ours_time = start.elapsed().as_secs_f64();
    let grid = *ours.grid();

    let vertices: Vec<[f32; 3]> = mesh
        .vertices
        .iter()
        .map(|v| [v.x as f32, v.y as f32, v.z as f32])
        .collect();
    let indices: Vec<u32> = mesh.triangles.iter().flatten().copied().collect();
    let h = grid.voxel_size as f32;
    let peer_grid = mesh_to_sdf::Grid::new(
        [
            grid.origin.x as f32,
            grid.origin.y as f32,
            grid.origin.z as f32,
        ],
        [h, h, h],
        grid.dims.map(|d| d as usize),
    );
    let start = Instant::now();
    let peer_values = mesh_to_sdf::generate_grid_sdf(
        &vertices,
        mesh_to_sdf::Topology::TriangleList(Some(&indices)),
        &peer_grid,
        mesh_to_sdf::SignMethod::Raycast,
    );
    let peer_time = start.elapsed().as_secs_f64();
    let peer = peer_as_field(&grid, &peer_grid, &peer_values, mesh);

    println!("dense_dims: {:?}", grid.dims);
    node_disagreements(mesh, &grid, ours.values(), peer.values());
    println!("dense_voxel_size: {:.6e} m", grid.voxel_size);
    println!("dense_build_time: {ours_time:.3} s");
    println!("mesh_to_sdf_build_time: {peer_time:.3} s");
    println!(
        "dense_build_speedup_vs_mesh_to_sdf: {:.2} x",
        peer_time / ours_time
    );
    if samples > 0 {
        let points = uniform_points(&ours.bounds(), samples, 7);
        let exact = exact_signed_distances(mesh, &points);
        for (name, field) in [("dense", &ours), ("mesh_to_sdf", &peer)] {
            let values: Vec<f64> = points.par_iter().map(|p| field.value(p)).collect();
            let report =
                AccuracyReport::compare(mesh, &points, &exact, &values, grid.voxel_size, None);
            println!("{name}_accuracy: {report}");
            println!("{name}_worst_error: {:.3} voxel", report.worst_error_voxels);
            println!("{name}_mean_error: {:.4} voxel", report.mean_error_voxels);
            println!(
                "{name}_error_over_half_voxel: {} count",
                report.medial_axis_samples + report.unexplained_errors
            );
            println!("{name}_sign_errors: {} count", report.sign_errors);
        }
    }
}

/// Where our samples and mesh_to_sdf's differ by more than 0.01 voxel or in
/// sign, which of the two is off (against the exact nearest triangle and the
/// winding number), and by how much.
fn node_disagreements(mesh: &TriangleMesh, grid: &GridSpec, ours: &[f32], peer: &[f32]) {
    let bvh = MeshBvh::new(mesh);
    let h = grid.voxel_size;
    let disagreeing: Vec<usize> = (0..ours.len())
        .filter(|&n| {
            (f64::from(ours[n] - peer[n])).abs() > 0.01 * h || ours[n].signum() != peer[n].signum()
        })
        .collect();
    let errors: Vec<(f64, f64, bool, bool)> = disagreeing
        .par_iter()
        .map(|&n| {
            let (nx, ny) = (grid.dims[0] as usize, grid.dims[1] as usize);
            let [i, j, k] = [n % nx, (n / nx) % ny, n / (nx * ny)].map(|c| c as u32);
            let q = grid.node_position(i, j, k);
            let distance = bvh.nearest(&q).map_or(0.0, |t| t.distance_squared.sqrt());
            let exact = if bvh.winding_number(&q) > 0.5 {
                -distance
            } else {
                distance
            };
            let sign_wrong = |v: f32| distance > h && f64::from(v).signum() != exact.signum();
            (
                (f64::from(ours[n]) - exact).abs() / h,
                (f64::from(peer[n]) - exact).abs() / h,
                sign_wrong(ours[n]),
                sign_wrong(peer[n]),
            )
        })
        .collect();
    let worst =
        |pick: fn(&(f64, f64, bool, bool)) -> f64| errors.iter().map(pick).fold(0.0, f64::max);
    let over =
        |pick: fn(&(f64, f64, bool, bool)) -> f64| errors.iter().filter(|e| pick(e) > 0.1).count();
    println!("nodes_compared: {} count", ours.len());
    println!(
        "nodes_disagreeing_with_mesh_to_sdf: {} count",
        disagreeing.len()
    );
    println!("dense_worst_node_error: {:.3} voxel", worst(|e| e.0));
    println!("mesh_to_sdf_worst_node_error: {:.3} voxel", worst(|e| e.1));
    println!("dense_nodes_off_by_over_0.1_voxel: {} count", over(|e| e.0));
    println!(
        "mesh_to_sdf_nodes_off_by_over_0.1_voxel: {} count",
        over(|e| e.1)
    );
    println!(
        "dense_node_sign_errors: {} count",
        errors.iter().filter(|e| e.2).count()
    );
    println!(
        "mesh_to_sdf_node_sign_errors: {} count",
        errors.iter().filter(|e| e.3).count()
    );
}

/// mesh_to_sdf's samples at our nodes, interpolated by our code so that the
/// comparison measures the samples alone.
fn peer_as_field(
    grid: &GridSpec,
    peer_grid: &mesh_to_sdf::Grid<[f32; 3]>,
    peer_values: &[f32],
    mesh: &TriangleMesh,
) -> DenseField {
    let mut values = vec![0f32; grid.node_count()];
    for k in 0..grid.dims[2] {
        for j in 0..grid.dims[1] {
            for i in 0..grid.dims[0] {
                let peer_index = peer_grid.get_cell_idx(&[i as usize, j as usize, k as usize]);
                values[grid.index(i, j, k)] = peer_values[peer_index];
            }
        }
    }
    DenseField::from_parts(*grid, Slab::from_vec(values), 2.0, mesh.aabb())
        .expect("the peer's samples fill our grid")
}

/// Prints how long each build stage took, as `stage_<name>_time: s`.
struct StageTimes {
    current: std::sync::Mutex<Option<(String, Instant)>>,
}

impl StageTimes {
    fn new() -> Self {
        Self {
            current: std::sync::Mutex::new(None),
        }
    }

    fn finish(&self) {
        let mut current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((name, start)) = current.take() {
            println!(
                "stage_{}_time: {:.3} s",
                name.replace(' ', "_"),
                start.elapsed().as_secs_f64()
            );
        }
    }
}

impl BuildProgress for StageTimes {
    fn stage(&self, name: &str, _total: u64) {
        self.finish();
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) =
            Some((name.to_string(), Instant::now()));
    }

    fn advance(&self, _done: u64) {}
}

fn sparse(mesh: &TriangleMesh, resolution: u32, band: f64) {
    let options = SparseOptions {
        resolution,
        band_half_width_voxels: band,
        ..SparseOptions::default()
    };
    let stages = StageTimes::new();
    let start = Instant::now();
    let field = SparseField::build(mesh, &options, &stages);
    stages.finish();
    let time = start.elapsed().as_secs_f64();
    let band_nodes = field
        .brick_values()
        .par_iter()
        .filter(|&&v| f64::from(v).abs() < band * haptic_sdf::STEPS_PER_VOXEL)
        .count();
    println!("sparse_dims: {:?}", field.grid().dims);
    println!("sparse_voxel_size: {:.9e} m", field.grid().voxel_size);
    println!("sparse_bricks: {} count", field.brick_count());
    println!("sparse_band_nodes: {band_nodes} count");
    println!(
        "sparse_storage: {:.1} MiB",
        field.storage_bytes() as f64 / MIB
    );
    println!("sparse_build_time: {time:.3} s");
    println!("sparse_peak_rss: {:.1} MiB", peak_rss_bytes() as f64 / MIB);
}

const MIB: f64 = 1024.0 * 1024.0;

/// The process's peak resident set (VmHWM), in bytes.
fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

fn lookups(mesh: &TriangleMesh, resolution: u32) {
    let dense = DenseField::build(
        mesh,
        &DenseOptions {
            resolution,
            ..DenseOptions::default()
        },
        &NoProgress,
    );
    let sparse = SparseField::build(
        mesh,
        &SparseOptions {
            resolution: 4 * resolution,
            ..SparseOptions::default()
        },
        &NoProgress,
    );
    let random = uniform_points(&dense.bounds(), 1_000_000, 3);
    // Coherent: a point walking the surface region in small steps, as a
    // point shell does from one servo tick to the next.
    let mut coherent = Vec::with_capacity(random.len());
    let mut p = dense.bounds().center();
    let step = 0.3 * dense.grid().voxel_size;
    for (i, r) in random.iter().enumerate() {
        let towards = (r - p).normalize();
        p += towards * step;
        if i % 1000 == 999 {
            p = *r;
        }
        coherent.push(p);
    }
    let rate = |field: &dyn DistanceField, points: &[Point3<f64>]| {
        let start = Instant::now();
        let mut sum = 0.0;
        for p in points {
            let (v, g) = field.value_gradient(black_box(p));
            sum += v + g.x;
        }
        black_box(sum);
        points.len() as f64 / start.elapsed().as_secs_f64()
    };
    println!(
        "dense_lookups_random: {:.1} M/s",
        rate(&dense, &random) / 1e6
    );
    println!(
        "dense_lookups_coherent: {:.1} M/s",
        rate(&dense, &coherent) / 1e6
    );
    println!(
        "sparse_lookups_random: {:.1} M/s",
        rate(&sparse, &random) / 1e6
    );
    println!(
        "sparse_lookups_coherent: {:.1} M/s",
        rate(&sparse, &coherent) / 1e6
    );
}

fn point_tree(environment: &TriangleMesh, mut tool: TriangleMesh, points: usize) {
    let field = DenseField::build(
        environment,
        &DenseOptions {
            resolution: 256,
            ..DenseOptions::default()
        },
        &NoProgress,
    );
    let scale = 0.2 * environment.aabb().extents().max() / tool.aabb().extents().max();
    let centre = tool.aabb().center();
    for v in &mut tool.vertices {
        *v = Point3::from((*v - centre) * scale);
    }
    let shell = sample_point_shell(&tool, spacing_for_count(&tool, points), 1);
    let tree = NestedPointTree::new(&shell, 8);
    let mut traversal = PointTreeTraversal::new(&tree);
    let mut tree_contacts = Vec::with_capacity(shell.len());
    let mut brute_contacts = Vec::with_capacity(shell.len());
    let (mut tree_lookups, mut brute_lookups, mut tree_time, mut brute_time) =
        (0u64, 0u64, 0.0, 0.0);
    let mut contacts = 0usize;
    let target = environment.aabb().center();
    let mut poses = 0;
    for i in 0..12 {
        let rotation = UnitQuaternion::from_euler_angles(0.5 * i as f64, 0.3 * i as f64, 0.1);
        let direction = Vector3::new(
            (i as f64).cos(),
            (i as f64).sin(),
            0.3 * ((i % 3) as f64 - 1.0),
        )
        .normalize();
        let mut distance = environment.aabb().extents().max();
        // Approach until about 1 % of the shell is in contact: shallow contact.
        while distance > 0.0 {
            let pose = Isometry3::from_parts(
                Translation3::from(target.coords + direction * distance),
                rotation,
            );
            contacts_brute_force(&shell, &field, &pose, &mut brute_contacts);
            if brute_contacts.len() * 100 >= shell.len() {
                let start = Instant::now();
                brute_lookups += u64::from(contacts_brute_force(
                    &shell,
                    &field,
                    &pose,
                    &mut brute_contacts,
                ));
                brute_time += start.elapsed().as_secs_f64();
                let start = Instant::now();
                let stats = traversal.traverse(
                    &tree,
                    &shell,
                    &field,
                    &pose,
                    TraversalBudget::default(),
                    &mut tree_contacts,
                );
                tree_time += start.elapsed().as_secs_f64();
                tree_lookups += u64::from(stats.lookups);
                assert_eq!(
                    tree_contacts.len(),
                    brute_contacts.len(),
                    "contact sets differ"
                );
                contacts += tree_contacts.len();
                poses += 1;
                break;
            }
            distance -= 0.5 * field.grid().voxel_size;
        }
    }
    println!("point_tree_poses: {poses} count");
    println!(
        "point_tree_mean_contacts: {:.0} count",
        contacts as f64 / poses as f64
    );
    println!(
        "point_tree_lookups: {:.0} per query",
        tree_lookups as f64 / poses as f64
    );
    println!(
        "brute_force_lookups: {:.0} per query",
        brute_lookups as f64 / poses as f64
    );
    println!(
        "point_tree_lookup_reduction: {:.1} x",
        brute_lookups as f64 / tree_lookups as f64
    );
    println!(
        "point_tree_query_time: {:.1} us",
        tree_time / poses as f64 * 1e6
    );
    println!(
        "brute_force_query_time: {:.1} us",
        brute_time / poses as f64 * 1e6
    );
}
