//! What the pile figure is drawn from: side-on silhouettes of every body
//! at a few times, and the total energy and deepest penetration over time,
//! per engine, written as CSV for `scripts/plot-physics-pile`.

use crate::scene::Scene;
use nalgebra::{Isometry3, Point2};
use std::fmt::Write as _;
use std::path::Path;

/// One engine's recording.
pub struct Trace {
    engine: &'static str,
    /// Times (s) of the snapshots still to take, ascending.
    pending: Vec<f64>,
    /// Smallest time between two series rows (s).
    interval: f64,
    last_series: f64,
    snapshots: String,
    series: String,
}

impl Trace {
    pub fn new(engine: &'static str, snapshot_times: &[f64], interval: f64) -> Trace {
        Trace {
            engine,
            pending: snapshot_times.to_vec(),
            interval,
            last_series: f64::NEG_INFINITY,
            snapshots: String::new(),
            series: String::new(),
        }
    }

    /// Records the state at `time`: a snapshot if one is due, and a series
    /// row every `interval`.
    pub fn record(
        &mut self,
        scene: &Scene,
        time: f64,
        poses: &[Isometry3<f64>],
        energy: f64,
        penetration: f64,
    ) {
        if self.pending.first().is_some_and(|&t| time >= t - 1e-12) {
            let due = self.pending.remove(0);
            for (body, pose) in poses.iter().enumerate() {
                let shape = &scene.shapes[scene.body_shapes[body]];
                let projected: Vec<Point2<f64>> = shape
                    .mesh
                    .vertices
                    .iter()
                    .map(|v| {
                        let p = pose * v;
                        Point2::new(p.x, p.z)
                    })
                    .collect();
                for (k, p) in convex_hull(&projected).iter().enumerate() {
                    writeln!(
                        self.snapshots,
                        "{},{due},{body},{},{k},{:.6},{:.6}",
                        self.engine, shape.name, p.x, p.y
                    )
                    .expect("writing to a string");
                }
            }
        }
        if time - self.last_series >= self.interval - 1e-12 {
            self.last_series = time;
            writeln!(
                self.series,
                "{},{time:.6},{energy:.6e},{penetration:.6e}",
                self.engine
            )
            .expect("writing to a string");
        }
    }

    /// Writes the traces into `directory`: `pile-snapshots.csv` (engine,
    /// time, body, shape, vertex, x, z: each body's side-on silhouette, its
    /// projected convex hull) and `pile-series.csv` (engine, time, energy,
    /// penetration).
    pub fn write(traces: &[&Trace], directory: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(directory)?;
        let mut snapshots = String::from("engine,time,body,shape,vertex,x,z\n");
        let mut series = String::from("engine,time,energy,penetration\n");
        for t in traces {
            snapshots.push_str(&t.snapshots);
            series.push_str(&t.series);
        }
        std::fs::write(directory.join("pile-snapshots.csv"), snapshots)?;
        std::fs::write(directory.join("pile-series.csv"), series)
    }
}

/// The convex hull of `points`, counter-clockwise (Andrew's monotone chain).
fn convex_hull(points: &[Point2<f64>]) -> Vec<Point2<f64>> {
    let mut sorted = points.to_vec();
    sorted.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    sorted.dedup();
    if sorted.len() < 3 {
        return sorted;
    }
    let cross = |o: &Point2<f64>, a: &Point2<f64>, b: &Point2<f64>| {
        (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x)
    };
    let mut hull: Vec<Point2<f64>> = Vec::with_capacity(2 * sorted.len());
    for pass in 0..2 {
        let start = hull.len();
        let ordered: Box<dyn Iterator<Item = &Point2<f64>>> = if pass == 0 {
            Box::new(sorted.iter())
        } else {
            Box::new(sorted.iter().rev())
        };
        for p in ordered {
            while hull.len() >= start + 2
                && cross(&hull[hull.len() - 2], &hull[hull.len() - 1], p) <= 0.0
            {
                hull.pop();
            }
            hull.push(*p);
        }
        hull.pop();
    }
    hull
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hull_of_a_square_with_inner_points_is_its_corners() {
        let points: Vec<Point2<f64>> = [
            (0.0, 0.0),
            (1.0, 0.0),
            (1.0, 1.0),
            (0.0, 1.0),
            (0.5, 0.5),
            (0.2, 0.7),
            (0.5, 0.0),
        ]
        .iter()
        .map(|&(x, y)| Point2::new(x, y))
        .collect();
        let hull = convex_hull(&points);
        let expected: Vec<Point2<f64>> = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]
            .iter()
            .map(|&(x, y)| Point2::new(x, y))
            .collect();
        assert_eq!(hull, expected);
    }
}
