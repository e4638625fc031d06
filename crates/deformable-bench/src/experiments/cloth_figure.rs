//! `cloth-figure`: the Fig. 3 cloth falling on the ball over time, for
//! every cloth set-up of `scenes`, written as CSV for `scripts/plot-cloth`:
//! each engine's node positions at a few instants (`cloth-snapshots.csv`:
//! engine, time, row, column, x, y, z) and, after every step, the largest
//! structural-edge strain and the deepest node in the ball
//! (`cloth-series.csv`: engine, time, strain, ball_penetration).

use super::print_cloth_scene;
use super::scenes::cloth_contenders;
use crate::cli::ClothArgs;
use crate::metrics;
use crate::rapier_soft::RapierSoftSettings;
use nalgebra::Point3;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// The instants of the snapshots (s): the fall, the first touch, the drape.
pub const SNAPSHOT_TIMES: [f64; 6] = [0.0, 0.2, 0.3, 0.4, 0.6, 2.0];

pub fn cloth_figure(
    args: &ClothArgs,
    stiff: RapierSoftSettings,
    directory: &Path,
) -> Result<(), String> {
    let scene = args.scene()?;
    let stiff = stiff
        .awake()
        .validated()
        .map_err(|e| format!("--stiff-substeps/--stiff-edge-factor: {e}"))?;
    print_cloth_scene(&scene, args.step, args.cloth_duration);
    std::fs::create_dir_all(directory)
        .map_err(|e| format!("{}: cannot create: {e}", directory.display()))?;
    let create = |name: &str| {
        let path = directory.join(name);
        File::create(&path)
            .map(BufWriter::new)
            .map_err(|e| format!("{}: {e}", path.display()))
    };
    let (mut snapshots, mut series) = (create("cloth-snapshots.csv")?, create("cloth-series.csv")?);
    let io = |e: std::io::Error| format!("{}: {e}", directory.display());
    writeln!(snapshots, "engine,time,row,column,x,y,z").map_err(io)?;
    writeln!(series, "engine,time,strain,ball_penetration").map_err(io)?;
    let edges = scene.structural_edges();
    let (centre, radius, n) = (scene.ball_centre(), scene.ball_radius, scene.nodes_per_side);
    let steps = (args.cloth_duration / args.step).round() as usize;
    let snapshot_steps: Vec<usize> = SNAPSHOT_TIMES
        .iter()
        .map(|t| (t / args.step).round() as usize)
        .filter(|&k| k <= steps)
        .collect();
    for contender in cloth_contenders(&scene, stiff, false) {
        println!("{}: {}", contender.name, contender.settings);
        let mut engine = (contender.build)()?;
        let mut positions: Vec<Point3<f64>> = Vec::new();
        for k in 0..=steps {
            if k > 0 {
                engine.step(args.step);
            }
            engine.positions(&mut positions);
            if engine.failed() {
                return Err(format!(
                    "{}: failed at {:.2} s",
                    contender.name,
                    k as f64 * args.step
                ));
            }
            let time = k as f64 * args.step;
            let strain = metrics::max_edge_strain(&positions, &edges.pairs, &edges.rest)
                .map_err(|e| e.to_string())?;
            let penetration = metrics::max_ball_penetration(&positions, &centre, radius)
                .map_err(|e| e.to_string())?;
            writeln!(
                series,
                "{},{time:.4},{strain:.6},{penetration:.6}",
                contender.name
            )
            .map_err(io)?;
            if snapshot_steps.contains(&k) {
                for (index, x) in positions.iter().enumerate() {
                    writeln!(
                        snapshots,
                        "{},{time:.4},{},{},{:.5},{:.5},{:.5}",
                        contender.name,
                        index / n,
                        index % n,
                        x.x,
                        x.y,
                        x.z
                    )
                    .map_err(io)?;
                }
            }
        }
        println!("  {}: {steps} steps", contender.name);
    }
    snapshots.flush().map_err(io)?;
    series.flush().map_err(io)?;
    println!("wrote {}", directory.display());
    Ok(())
}
