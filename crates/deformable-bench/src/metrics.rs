//! The rulers every engine is judged by, from its nodes' positions alone:
//! edge strain, penetration into a ball and below the ground, and a
//! tetrahedral mesh's volume. Up is `+z`.
//!
//! Signed where a sign means something: a strain is negative for a
//! compressed edge, a penetration negative when every node is clear (then it
//! is minus the nearest node's clearance).

use nalgebra::Point3;
use thiserror::Error;

/// Input a ruler cannot measure.
#[derive(Debug, Error, PartialEq)]
pub enum MetricError {
    #[error("{edges} edges but {rest} rest lengths")]
    RestLengthCount { edges: usize, rest: usize },
    #[error("edge {edge} names node {node}, but there are {nodes} nodes")]
    EdgeNode {
        edge: usize,
        node: usize,
        nodes: usize,
    },
    #[error("edge {edge} has rest length {rest} m (must be finite and positive)")]
    RestLength { edge: usize, rest: f64 },
    #[error("tetrahedron {cell} names node {node}, but there are {nodes} nodes")]
    CellNode {
        cell: usize,
        node: usize,
        nodes: usize,
    },
    #[error("no edges to measure")]
    NoEdges,
    #[error("no nodes to measure")]
    NoNodes,
    #[error("ball radius {0} m (must be finite and positive)")]
    BallRadius(f64),
    #[error("rest volume {0} m³ (must be finite and positive)")]
    RestVolume(f64),
}

/// Checks that `edges` and `rest` describe edges between `nodes` nodes.
fn check_edges(nodes: usize, edges: &[[u32; 2]], rest: &[f64]) -> Result<(), MetricError> {
    if edges.len() != rest.len() {
        return Err(MetricError::RestLengthCount {
            edges: edges.len(),
            rest: rest.len(),
        });
    }
    for (edge, (pair, &length)) in edges.iter().zip(rest).enumerate() {
        if let Some(&node) = pair.iter().find(|&&n| n as usize >= nodes) {
            return Err(MetricError::EdgeNode {
                edge,
                node: node as usize,
                nodes,
            });
        }
        if !(length.is_finite() && length > 0.0) {
            return Err(MetricError::RestLength { edge, rest: length });
        }
    }
    Ok(())
}

/// The strain `(|x_j − x_i| − L) / L` of one edge.
fn strain(positions: &[Point3<f64>], [i, j]: [u32; 2], rest: f64) -> f64 {
    ((positions[j as usize] - positions[i as usize]).norm() - rest) / rest
}

/// `max (|x_j − x_i| − L) / L` over `edges`, with `rest[e]` the rest length
/// `L` of edge `e`.
pub fn max_edge_strain(
    positions: &[Point3<f64>],
    edges: &[[u32; 2]],
    rest: &[f64],
) -> Result<f64, MetricError> {
    max_edge_strain_where(positions, edges, rest, |_| true)?.ok_or(MetricError::NoEdges)
}

/// The strains of the edges whose midpoint `keep` accepts, after checking
/// the edges.
fn strains_where<'a>(
    positions: &'a [Point3<f64>],
    edges: &'a [[u32; 2]],
    rest: &'a [f64],
    keep: impl Fn(&Point3<f64>) -> bool + 'a,
) -> Result<impl Iterator<Item = f64> + 'a, MetricError> {
    check_edges(positions.len(), edges, rest)?;
    Ok(edges
        .iter()
        .zip(rest)
        .filter(move |(&[i, j], _)| {
            keep(&nalgebra::center(
                &positions[i as usize],
                &positions[j as usize],
            ))
        })
        .map(|(&edge, &length)| strain(positions, edge, length)))
}

/// [`max_edge_strain`] over the edges whose midpoint `keep` accepts; `None`
/// if it accepts none.
pub fn max_edge_strain_where(
    positions: &[Point3<f64>],
    edges: &[[u32; 2]],
    rest: &[f64],
    keep: impl Fn(&Point3<f64>) -> bool,
) -> Result<Option<f64>, MetricError> {
    Ok(strains_where(positions, edges, rest, keep)?.reduce(f64::max))
}

/// The mean strain `(|x_j − x_i| − L) / L` over the edges whose midpoint
/// `keep` accepts; `None` if it accepts none.
pub fn mean_edge_strain_where(
    positions: &[Point3<f64>],
    edges: &[[u32; 2]],
    rest: &[f64],
    keep: impl Fn(&Point3<f64>) -> bool,
) -> Result<Option<f64>, MetricError> {
    let (count, sum) = strains_where(positions, edges, rest, keep)?
        .fold((0usize, 0.0), |(n, s), e| (n + 1, s + e));
    Ok((count > 0).then(|| sum / count as f64))
}

/// Whether `point` lies over a ball of `centre` and `radius`: within its
/// radius of the vertical through its centre, and above its centre. The
/// part of a cloth draped over a ball that the ball carries.
pub fn above_ball(point: &Point3<f64>, centre: &Point3<f64>, radius: f64) -> bool {
    let d = point - centre;
    d.z > 0.0 && d.x * d.x + d.y * d.y <= radius * radius
}

/// `max (r − |x − c|)` over the nodes: the deepest node inside a ball of
/// centre `c` and radius `r` (m).
pub fn max_ball_penetration(
    positions: &[Point3<f64>],
    centre: &Point3<f64>,
    radius: f64,
) -> Result<f64, MetricError> {
    if !(radius.is_finite() && radius > 0.0) {
        return Err(MetricError::BallRadius(radius));
    }
    positions
        .iter()
        .map(|x| radius - (x - centre).norm())
        .reduce(f64::max)
        .ok_or(MetricError::NoNodes)
}

/// `max (h − z)` over the nodes: the deepest node below the ground plane
/// `z = h` (m).
pub fn max_ground_penetration(positions: &[Point3<f64>], height: f64) -> Result<f64, MetricError> {
    positions
        .iter()
        .map(|x| height - x.z)
        .reduce(f64::max)
        .ok_or(MetricError::NoNodes)
}

/// Checks that `cells` are tetrahedra over `nodes` nodes.
pub fn check_cells(nodes: usize, cells: &[[u32; 4]]) -> Result<(), MetricError> {
    for (cell, tet) in cells.iter().enumerate() {
        if let Some(&node) = tet.iter().find(|&&n| n as usize >= nodes) {
            return Err(MetricError::CellNode {
                cell,
                node: node as usize,
                nodes,
            });
        }
    }
    Ok(())
}

/// The signed volume of the tetrahedron `a, b, c, d`: positive when
/// `(b − a, c − a, d − a)` is right-handed (m³).
pub fn tetrahedron_volume(
    a: &Point3<f64>,
    b: &Point3<f64>,
    c: &Point3<f64>,
    d: &Point3<f64>,
) -> f64 {
    (b - a).cross(&(c - a)).dot(&(d - a)) / 6.0
}

/// The sum of the cells' signed volumes (m³).
pub fn mesh_volume(positions: &[Point3<f64>], cells: &[[u32; 4]]) -> Result<f64, MetricError> {
    check_cells(positions.len(), cells)?;
    let x = |i: u32| &positions[i as usize];
    Ok(cells
        .iter()
        .map(|&[a, b, c, d]| tetrahedron_volume(x(a), x(b), x(c), x(d)))
        .sum())
}

/// `(V − V₀) / V₀` of the cells at `positions` against the rest volume `V₀`.
pub fn relative_volume_change(
    positions: &[Point3<f64>],
    cells: &[[u32; 4]],
    rest_volume: f64,
) -> Result<f64, MetricError> {
    if !(rest_volume.is_finite() && rest_volume > 0.0) {
        return Err(MetricError::RestVolume(rest_volume));
    }
    Ok((mesh_volume(positions, cells)? - rest_volume) / rest_volume)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(x: f64, y: f64, z: f64) -> Point3<f64> {
        Point3::new(x, y, z)
    }

    #[test]
    fn a_stretched_edge_gives_its_strain_exactly() {
        let positions = [p(0.0, 0.0, 0.0), p(3.0, 0.0, 4.0), p(0.0, 2.0, 0.0)];
        // Edge 0 is 5 m long at rest 4 m: 25 % stretched; edge 1 is 2 m
        // long at rest 2.5 m: 20 % compressed.
        let edges = [[0, 1], [0, 2]];
        assert_eq!(max_edge_strain(&positions, &edges, &[4.0, 2.5]), Ok(0.25));
        assert_eq!(max_edge_strain(&positions, &edges[1..], &[2.5]), Ok(-0.2));
    }

    #[test]
    fn a_selection_measures_only_the_edges_it_keeps() {
        let positions = [
            p(0.0, 0.0, 1.0),
            p(0.1, 0.0, 1.0),
            p(2.0, 0.0, 1.0),
            p(2.3, 0.0, 1.0),
        ];
        let edges = [[0, 1], [2, 3]];
        let rest = [0.05, 0.1];
        let centre = p(0.0, 0.0, 0.0);
        let over =
            max_edge_strain_where(&positions, &edges, &rest, |m| above_ball(m, &centre, 0.5));
        assert_eq!(over, Ok(Some(1.0)));
        assert!((max_edge_strain(&positions, &edges, &rest).unwrap() - 2.0).abs() < 1e-12);
        let none = max_edge_strain_where(&positions, &edges, &rest, |_| false);
        assert_eq!(none, Ok(None));
        let mean = mean_edge_strain_where(&positions, &edges, &rest, |_| true).unwrap();
        assert!((mean.unwrap() - 1.5).abs() < 1e-12, "{mean:?}");
        assert_eq!(
            mean_edge_strain_where(&positions, &edges, &rest, |_| false),
            Ok(None)
        );
    }

    #[test]
    fn above_the_ball_means_within_its_radius_of_its_axis_and_above_its_centre() {
        let c = p(1.0, 2.0, 3.0);
        assert!(above_ball(&p(1.2, 2.0, 3.5), &c, 0.25));
        assert!(!above_ball(&p(1.3, 2.0, 3.5), &c, 0.25));
        assert!(!above_ball(&p(1.0, 2.0, 2.9), &c, 0.25));
    }

    #[test]
    fn penetration_is_the_deepest_node_and_negative_when_all_are_clear() {
        let c = p(0.0, 0.0, 0.25);
        let inside = [p(0.0, 0.0, 0.45), p(0.0, 0.0, 0.6), p(0.5, 0.0, -0.01)];
        assert!((max_ball_penetration(&inside, &c, 0.25).unwrap() - 0.05).abs() < 1e-12);
        assert!((max_ground_penetration(&inside, 0.0).unwrap() - 0.01).abs() < 1e-12);
        let clear = [p(0.0, 0.0, 0.6), p(0.0, 0.0, 0.52)];
        assert!((max_ball_penetration(&clear, &c, 0.25).unwrap() + 0.02).abs() < 1e-12);
        assert!((max_ground_penetration(&clear, 0.0).unwrap() + 0.52).abs() < 1e-12);
    }

    #[test]
    fn a_unit_corner_tetrahedron_has_a_sixth_and_a_scaled_mesh_changes_by_the_cube() {
        let mut x = vec![
            p(0.0, 0.0, 0.0),
            p(1.0, 0.0, 0.0),
            p(0.0, 1.0, 0.0),
            p(0.0, 0.0, 1.0),
        ];
        let cells = [[0, 1, 2, 3]];
        assert!((mesh_volume(&x, &cells).unwrap() - 1.0 / 6.0).abs() < 1e-15);
        assert!((mesh_volume(&x, &[[0, 2, 1, 3]]).unwrap() + 1.0 / 6.0).abs() < 1e-15);
        for point in &mut x {
            *point = Point3::from(point.coords * 1.1);
        }
        let change = relative_volume_change(&x, &cells, 1.0 / 6.0).unwrap();
        assert!((change - (1.1f64.powi(3) - 1.0)).abs() < 1e-12, "{change}");
    }

    #[test]
    fn bad_input_is_named() {
        let x = [p(0.0, 0.0, 0.0), p(1.0, 0.0, 0.0)];
        assert_eq!(
            max_edge_strain(&x, &[[0, 1], [1, 2]], &[1.0, 1.0]),
            Err(MetricError::EdgeNode {
                edge: 1,
                node: 2,
                nodes: 2
            })
        );
        assert_eq!(
            max_edge_strain(&x, &[[0, 1]], &[1.0, 1.0]),
            Err(MetricError::RestLengthCount { edges: 1, rest: 2 })
        );
        assert_eq!(
            max_edge_strain(&x, &[[0, 1]], &[0.0]),
            Err(MetricError::RestLength { edge: 0, rest: 0.0 })
        );
        assert_eq!(max_edge_strain(&x, &[], &[]), Err(MetricError::NoEdges));
        assert_eq!(
            max_ball_penetration(&[], &x[0], 1.0),
            Err(MetricError::NoNodes)
        );
        assert_eq!(
            max_ball_penetration(&x, &x[0], -1.0),
            Err(MetricError::BallRadius(-1.0))
        );
        assert_eq!(
            mesh_volume(&x, &[[0, 1, 1, 7]]),
            Err(MetricError::CellNode {
                cell: 0,
                node: 7,
                nodes: 2
            })
        );
        assert_eq!(
            relative_volume_change(&x, &[], 0.0),
            Err(MetricError::RestVolume(0.0))
        );
    }
}
