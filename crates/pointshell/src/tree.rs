//! The nested point tree of Barbič & James 2008 (§5): a hierarchy of nested
//! Poisson-disk subsets of the point shell with a bounding sphere per node,
//! stored flat so it can be written to and read from a file.

use crate::grid::PointGrid;
use crate::sampling::PointShell;
use haptic_mesh::Aabb;
use nalgebra::Point3;
use std::ops::Range;

/// Levels `0..L` of nested point sets. Level `L-1` holds every shell point;
/// each coarser level is a Poisson-disk subset of the next finer one. Every
/// node of level `l+1` hangs under its nearest node of level `l`, and a point
/// present in both levels is its own child.
///
/// Nodes are stored breadth first: level `l` is `level_offsets[l]..level_offsets[l+1]`.
/// The children of node `i` are the contiguous range
/// `first_child[i]..first_child[i+1]` of the next level, and the first of them
/// is the node's own point. `radii[i]` is the radius of the sphere centred on
/// the node's point that contains the points of all its descendants, down to
/// the finest level; finest-level nodes have radius 0 and an empty child range.
#[derive(Clone, Debug, PartialEq)]
pub struct NestedPointTree {
    level_offsets: Vec<u32>,
    points: Vec<u32>,
    radii: Vec<f64>,
    first_child: Vec<u32>,
    leaf_counts: Vec<u32>,
}

/// Why [`NestedPointTree::from_parts`] rejected its arrays.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TreeError {
    #[error("a nested point tree needs at least one level (level_offsets of length ≥ 2)")]
    NoLevels,
    #[error("array lengths disagree: {0}")]
    Lengths(String),
    #[error("level offsets must start at 0, never decrease and end at the node count")]
    LevelOffsets,
    #[error("level {level} is empty but the tree is not")]
    EmptyLevel { level: usize },
    #[error("node {node} refers to point {point} but the shell has {shell_len} points")]
    PointOutOfRange {
        node: usize,
        point: u32,
        shell_len: usize,
    },
    #[error("shell point {point} appears twice at the finest level")]
    DuplicateLeaf { point: u32 },
    #[error("first_child is inconsistent at node {node} (level {level}): child ranges must be non-empty above the finest level, in order, and partition the next level")]
    ChildRanges { level: usize, node: usize },
    #[error(
        "node {node} does not have its own point as its first child, so the levels are not nested"
    )]
    NotNested { node: usize },
    #[error("node {node} has radius {radius}, which is negative or not finite")]
    InvalidRadius { node: usize, radius: f64 },
    #[error(
        "node {node} has radius {radius} but its descendant point {point} lies {distance} away"
    )]
    RadiusTooSmall {
        node: usize,
        radius: f64,
        point: u32,
        distance: f64,
    },
}

impl NestedPointTree {
    /// Builds a tree of `levels` levels over `shell`. Level `l` aims at
    /// `N^((l+1)/levels)` points (a branching factor of `N^(1/levels)`, so
    /// level 0 has a handful of points); each is a greedy Poisson-disk subset
    /// of the next finer level, with the spacing searched to hit that count.
    /// Zhao, Li & Barbič §5 use 6 levels for 672 points and 8 for 7,772–30,017.
    ///
    /// # Panics
    /// If `levels` is 0, or `levels` times the shell size does not fit a `u32`
    /// (a bound on the node count).
    pub fn new(shell: &PointShell, levels: usize) -> Self {
        assert!(levels >= 1, "a nested point tree needs at least one level");
        let n = shell.len();
        assert!(
            n.saturating_mul(levels) <= u32::MAX as usize,
            "point shell too large for u32 node indices"
        );
        if n == 0 {
            return Self {
                level_offsets: vec![0; levels + 1],
                points: Vec::new(),
                radii: Vec::new(),
                first_child: vec![0],
                leaf_counts: Vec::new(),
            };
        }

        // members[l]: the shell points of level l; parent[l][k]: the position in
        // members[l-1] of the parent of members[l][k].
        let mut members: Vec<Vec<u32>> = vec![Vec::new(); levels];
        let mut parent: Vec<Vec<u32>> = vec![Vec::new(); levels];
        members[levels - 1] = (0..n as u32).collect();
        for l in (0..levels - 1).rev() {
            let target = (n as f64).powf((l + 1) as f64 / levels as f64).round() as usize;
            let (subset, spacing) = poisson_subset(&shell.points, &members[l + 1], target.max(1));
            let mut grid = PointGrid::new(spacing, subset.len());
            let mut position = vec![u32::MAX; n];
            for (k, &p) in subset.iter().enumerate() {
                grid.insert(shell.points[p as usize], k as u32);
                position[p as usize] = k as u32;
            }
            parent[l + 1] = members[l + 1]
                .iter()
                .map(|&p| match position[p as usize] {
                    u32::MAX => grid
                        .nearest(&shell.points[p as usize])
                        .expect("a rejected point lies within the spacing of an accepted one"),
                    k => k,
                })
                .collect();
            members[l] = subset;
        }

        // Breadth-first order: level 0 as selected; each finer level grouped by
        // parent node, the parent's own point first.
        let mut level_offsets = vec![0u32, members[0].len() as u32];
        let mut points = members[0].clone();
        let mut parent_node = vec![u32::MAX; members[0].len()];
        let mut node_of: Vec<u32> = (0..members[0].len() as u32).collect();
        for l in 1..levels {
            let mut order: Vec<u32> = (0..members[l].len() as u32).collect();
            order.sort_unstable_by_key(|&k| {
                let up = parent[l][k as usize] as usize;
                (node_of[up], members[l - 1][up] != members[l][k as usize], k)
            });
            let mut next_node_of = vec![0; members[l].len()];
            for &k in &order {
                next_node_of[k as usize] = points.len() as u32;
                points.push(members[l][k as usize]);
                parent_node.push(node_of[parent[l][k as usize] as usize]);
            }
            node_of = next_node_of;
            level_offsets.push(points.len() as u32);
        }

        let node_count = points.len();
        let finest = level_offsets[levels - 1] as usize;
        let mut first_child = vec![node_count as u32; node_count + 1];
        if levels > 1 {
            let mut child_counts = vec![0u32; finest];
            for &p in &parent_node[level_offsets[1] as usize..] {
                child_counts[p as usize] += 1;
            }
            first_child[0] = level_offsets[1];
            for i in 0..finest {
                first_child[i + 1] = first_child[i] + child_counts[i];
            }
        }

        let mut radii = vec![0.0f64; node_count];
        for leaf in finest..node_count {
            let p = shell.points[points[leaf] as usize];
            let mut up = parent_node[leaf];
            while up != u32::MAX {
                let distance = (shell.points[points[up as usize] as usize] - p).norm();
                radii[up as usize] = radii[up as usize].max(distance);
                up = parent_node[up as usize];
            }
        }
        Self::from_parts(shell, level_offsets, points, radii, first_child)
            .expect("a constructed nested point tree satisfies its invariants")
    }

    /// Rebuilds a tree from arrays saved with the accessors, checking every
    /// invariant: level layout, the finest level being a permutation of the
    /// shell, children forming in-order contiguous ranges that partition the
    /// next level, nesting (each node's first child is its own point) and
    /// radii that reach every descendant. Leaf counts are recomputed.
    pub fn from_parts(
        shell: &PointShell,
        level_offsets: Vec<u32>,
        points: Vec<u32>,
        radii: Vec<f64>,
        first_child: Vec<u32>,
    ) -> Result<Self, TreeError> {
        if level_offsets.len() < 2 {
            return Err(TreeError::NoLevels);
        }
        let levels = level_offsets.len() - 1;
        let node_count = points.len();
        if radii.len() != node_count || first_child.len() != node_count + 1 {
            return Err(TreeError::Lengths(format!(
                "{node_count} points, {} radii, {} first_child entries (need points + 1)",
                radii.len(),
                first_child.len()
            )));
        }
        if level_offsets[0] != 0
            || level_offsets.windows(2).any(|w| w[0] > w[1])
            || level_offsets[levels] as usize != node_count
        {
            return Err(TreeError::LevelOffsets);
        }
        let finest = level_offsets[levels - 1] as usize;
        if node_count - finest != shell.len() {
            return Err(TreeError::Lengths(format!(
                "the finest level has {} nodes but the shell has {} points",
                node_count - finest,
                shell.len()
            )));
        }
        if node_count > 0 {
            if let Some(level) = (0..levels).find(|&l| level_offsets[l] == level_offsets[l + 1]) {
                return Err(TreeError::EmptyLevel { level });
            }
        }
        if let Some(node) = points.iter().position(|&p| p as usize >= shell.len()) {
            return Err(TreeError::PointOutOfRange {
                node,
                point: points[node],
                shell_len: shell.len(),
            });
        }
        let mut seen = vec![false; shell.len()];
        for &p in &points[finest..] {
            if std::mem::replace(&mut seen[p as usize], true) {
                return Err(TreeError::DuplicateLeaf { point: p });
            }
        }

        // Child ranges: in order, each level's starting at the next level's
        // offset (the finest level's all empty at the end), none empty above
        // the finest level, each starting with the node's own point.
        let level_of = |node: usize| level_offsets.partition_point(|&o| o as usize <= node) - 1;
        if let Some(node) = first_child.windows(2).position(|w| w[0] > w[1]) {
            return Err(TreeError::ChildRanges {
                level: level_of(node),
                node,
            });
        }
        if first_child[node_count] as usize != node_count {
            return Err(TreeError::ChildRanges {
                level: levels,
                node: node_count,
            });
        }
        if node_count > 0 {
            for level in 0..levels {
                let node = level_offsets[level] as usize;
                let expected = if level + 1 < levels {
                    level_offsets[level + 1]
                } else {
                    node_count as u32
                };
                if first_child[node] != expected {
                    return Err(TreeError::ChildRanges { level, node });
                }
            }
        }
        for node in 0..finest {
            let first = first_child[node] as usize;
            if first == first_child[node + 1] as usize {
                return Err(TreeError::ChildRanges {
                    level: level_of(node),
                    node,
                });
            }
            if points[first] != points[node] {
                return Err(TreeError::NotNested { node });
            }
        }

        if let Some(node) = radii.iter().position(|r| !(r.is_finite() && *r >= 0.0)) {
            return Err(TreeError::InvalidRadius {
                node,
                radius: radii[node],
            });
        }
        let mut parent = vec![u32::MAX; node_count];
        for node in 0..finest {
            for child in first_child[node]..first_child[node + 1] {
                parent[child as usize] = node as u32;
            }
        }
        for leaf in finest..node_count {
            let p = shell.points[points[leaf] as usize];
            let mut up = parent[leaf];
            while up != u32::MAX {
                let node = up as usize;
                let distance = (shell.points[points[node] as usize] - p).norm();
                if distance > radii[node] {
                    return Err(TreeError::RadiusTooSmall {
                        node,
                        radius: radii[node],
                        point: points[leaf],
                        distance,
                    });
                }
                up = parent[node];
            }
        }

        let mut leaf_counts = vec![1u32; node_count];
        for node in (0..finest).rev() {
            leaf_counts[node] = (first_child[node]..first_child[node + 1])
                .map(|c| leaf_counts[c as usize])
                .sum();
        }
        Ok(Self {
            level_offsets,
            points,
            radii,
            first_child,
            leaf_counts,
        })
    }

    /// Number of levels `L`.
    pub fn levels(&self) -> usize {
        self.level_offsets.len() - 1
    }

    pub fn node_count(&self) -> usize {
        self.points.len()
    }

    /// Number of shell points (nodes at the finest level).
    pub fn shell_len(&self) -> usize {
        self.node_count() - self.level_offsets[self.levels() - 1] as usize
    }

    /// The node indices of level `level`.
    pub fn level(&self, level: usize) -> Range<usize> {
        self.level_offsets[level] as usize..self.level_offsets[level + 1] as usize
    }

    /// The node indices of the children of `node` (empty at the finest level).
    #[cfg(test)]
    pub(crate) fn children(&self, node: usize) -> Range<usize> {
        self.first_child[node] as usize..self.first_child[node + 1] as usize
    }

    /// Start of each level in node order, then the node count (length `L + 1`).
    pub fn level_offsets(&self) -> &[u32] {
        &self.level_offsets
    }

    /// The shell point index of each node.
    pub fn points(&self) -> &[u32] {
        &self.points
    }

    /// The bounding-sphere radius of each node (m), centred on its point.
    pub fn radii(&self) -> &[f64] {
        &self.radii
    }

    /// Children of node `i` are `first_child[i]..first_child[i+1]` (length node count + 1).
    pub fn first_child(&self) -> &[u32] {
        &self.first_child
    }

    /// The number of finest-level points under each node (1 at the finest level).
    pub(crate) fn leaf_counts(&self) -> &[u32] {
        &self.leaf_counts
    }
}

/// A greedy Poisson-disk subset of `candidates` (in their order) with about
/// `target` points, and the spacing that produced it. The spacing is found by
/// bracketing it and stepping by `sqrt(count / target)`, since the count of a
/// surface sampling goes as `spacing⁻²`.
fn poisson_subset(points: &[Point3<f64>], candidates: &[u32], target: usize) -> (Vec<u32>, f64) {
    let select = |spacing: f64| {
        let mut grid = PointGrid::new(spacing, target);
        let mut subset = Vec::with_capacity(target);
        for &c in candidates {
            let p = points[c as usize];
            if !grid.any_closer_than(&p, spacing) {
                grid.insert(p, c);
                subset.push(c);
            }
        }
        subset
    };
    let diagonal = Aabb::from_points(candidates.iter().map(|&c| &points[c as usize]))
        .extents()
        .norm();
    if target >= candidates.len() {
        // Every point is its own parent; the spacing only sizes the grid cells.
        return (
            candidates.to_vec(),
            if diagonal > 0.0 { diagonal } else { 1.0 },
        );
    }
    if diagonal == 0.0 {
        return (select(1.0), 1.0);
    }
    let tolerance = (target / 20).max(1);
    let (mut low, mut high) = (0.0, diagonal * 1.01);
    let mut spacing = diagonal / (target as f64).sqrt();
    let mut best: Option<(usize, Vec<u32>, f64)> = None;
    for _ in 0..32 {
        let subset = select(spacing);
        let count = subset.len();
        let error = count.abs_diff(target);
        if best.as_ref().is_none_or(|(e, _, _)| error < *e) {
            best = Some((error, subset, spacing));
        }
        if error <= tolerance {
            break;
        }
        if count > target {
            low = spacing;
        } else {
            high = spacing;
        }
        let step = spacing * (count as f64 / target as f64).sqrt();
        spacing = if step > low && step < high {
            step
        } else {
            0.5 * (low + high)
        };
    }
    let (_, subset, spacing) = best.expect("at least one spacing was tried");
    (subset, spacing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampling::{sample_point_shell, spacing_for_count};
    use haptic_mesh::shapes::{box_mesh, icosphere};
    use nalgebra::Vector3;
    use std::collections::HashSet;

    fn shell(count: usize) -> PointShell {
        let mesh = icosphere(0.05, 5);
        sample_point_shell(&mesh, spacing_for_count(&mesh, count), 1)
    }

    /// The arrays a file would hold.
    struct Parts {
        offsets: Vec<u32>,
        points: Vec<u32>,
        radii: Vec<f64>,
        first_child: Vec<u32>,
    }

    impl Parts {
        fn of(tree: &NestedPointTree) -> Self {
            Self {
                offsets: tree.level_offsets().to_vec(),
                points: tree.points().to_vec(),
                radii: tree.radii().to_vec(),
                first_child: tree.first_child().to_vec(),
            }
        }

        fn rebuild(self, shell: &PointShell) -> Result<NestedPointTree, TreeError> {
            NestedPointTree::from_parts(
                shell,
                self.offsets,
                self.points,
                self.radii,
                self.first_child,
            )
        }
    }

    /// All finest-level nodes under `node`.
    fn leaves(tree: &NestedPointTree, node: usize) -> Vec<usize> {
        let children = tree.children(node);
        if children.is_empty() {
            return vec![node];
        }
        children.flat_map(|c| leaves(tree, c)).collect()
    }

    fn assert_invariants(shell: &PointShell, tree: &NestedPointTree) {
        let levels = tree.levels();
        let finest: Vec<u32> = tree.level(levels - 1).map(|i| tree.points()[i]).collect();
        let mut sorted = finest.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            (0..shell.len() as u32).collect::<Vec<_>>(),
            "one leaf per point"
        );
        for l in 0..levels - 1 {
            let coarse: HashSet<u32> = tree.level(l).map(|i| tree.points()[i]).collect();
            let fine: HashSet<u32> = tree.level(l + 1).map(|i| tree.points()[i]).collect();
            assert_eq!(
                coarse.len(),
                tree.level(l).len(),
                "distinct points at level {l}"
            );
            assert!(
                coarse.is_subset(&fine),
                "level {l} is nested in level {}",
                l + 1
            );
            assert_eq!(
                tree.level(l).map(|i| tree.children(i).len()).sum::<usize>(),
                tree.level(l + 1).len(),
                "level {l}'s children cover level {}",
                l + 1
            );
        }
        for l in 0..levels {
            let total: u32 = tree.level(l).map(|i| tree.leaf_counts()[i]).sum();
            assert_eq!(total as usize, shell.len(), "leaf counts of level {l}");
        }
        for node in 0..tree.node_count() {
            let centre = shell.points[tree.points()[node] as usize];
            let under = leaves(tree, node);
            assert_eq!(under.len() as u32, tree.leaf_counts()[node]);
            let farthest = under
                .iter()
                .map(|&leaf| (shell.points[tree.points()[leaf] as usize] - centre).norm())
                .fold(0.0, f64::max);
            assert_eq!(
                tree.radii()[node],
                farthest,
                "radius of node {node} is the tight bound"
            );
        }
    }

    #[test]
    fn tree_over_10k_points_satisfies_the_invariants() {
        let shell = shell(10_000);
        let tree = NestedPointTree::new(&shell, 8);
        assert_eq!(tree.levels(), 8);
        let sizes: Vec<usize> = (0..8).map(|l| tree.level(l).len()).collect();
        println!("level sizes {sizes:?}");
        assert!((2..=6).contains(&sizes[0]), "a handful of roots: {sizes:?}");
        assert!(sizes.windows(2).all(|w| w[0] < w[1]), "{sizes:?}");
        assert_invariants(&shell, &tree);
    }

    #[test]
    fn children_hang_under_their_nearest_parent() {
        let shell = shell(2000);
        let tree = NestedPointTree::new(&shell, 6);
        let at = |node: usize| shell.points[tree.points()[node] as usize];
        for l in 0..tree.levels() - 1 {
            for parent in tree.level(l) {
                for child in tree.children(parent) {
                    let own = (at(child) - at(parent)).norm();
                    let nearest = tree
                        .level(l)
                        .map(|other| (at(child) - at(other)).norm())
                        .fold(f64::INFINITY, f64::min);
                    assert_eq!(own, nearest, "child {child} of {parent} at level {l}");
                }
            }
        }
    }

    #[test]
    fn coarser_levels_are_sparser_poisson_disk_sets() {
        let shell = shell(3000);
        let tree = NestedPointTree::new(&shell, 6);
        let closest: Vec<f64> = (0..tree.levels())
            .map(|l| {
                let pts: Vec<_> = tree
                    .level(l)
                    .map(|i| shell.points[tree.points()[i] as usize])
                    .collect();
                let mut best = f64::INFINITY;
                for (i, p) in pts.iter().enumerate() {
                    for q in &pts[i + 1..] {
                        best = best.min((p - q).norm());
                    }
                }
                best
            })
            .collect();
        assert!(closest.windows(2).all(|w| w[0] > w[1]), "{closest:?}");
    }

    #[test]
    fn small_and_empty_shells_give_valid_trees() {
        let mesh = box_mesh(Vector3::new(0.01, 0.02, 0.03));
        for count in [1, 2, 5, 40] {
            let shell = sample_point_shell(&mesh, spacing_for_count(&mesh, count), 2);
            for levels in [1, 2, 3, 8] {
                let tree = NestedPointTree::new(&shell, levels);
                assert_eq!(tree.levels(), levels);
                assert_invariants(&shell, &tree);
            }
        }
        let empty = NestedPointTree::new(&PointShell::default(), 4);
        assert_eq!(
            (empty.levels(), empty.node_count(), empty.shell_len()),
            (4, 0, 0)
        );
        assert_eq!(Parts::of(&empty).rebuild(&PointShell::default()), Ok(empty));
    }

    #[test]
    fn construction_is_deterministic_and_round_trips_through_parts() {
        let shell = shell(3000);
        let tree = NestedPointTree::new(&shell, 7);
        assert_eq!(tree, NestedPointTree::new(&shell, 7));
        assert_eq!(Parts::of(&tree).rebuild(&shell), Ok(tree));
    }

    #[test]
    fn from_parts_rejects_corrupted_arrays() {
        let shell = shell(1000);
        let tree = NestedPointTree::new(&shell, 5);
        let finest = tree.level(4).start;
        let second_child = tree.children(0).start + 1;
        let reject =
            |name: &str, corrupt: &dyn Fn(&mut Parts), expected: fn(&TreeError) -> bool| {
                let mut parts = Parts::of(&tree);
                corrupt(&mut parts);
                match parts.rebuild(&shell) {
                    Ok(_) => panic!("{name}: accepted"),
                    Err(e) => assert!(expected(&e), "{name}: unexpected error {e}"),
                }
            };
        reject("no levels", &|p| p.offsets.truncate(1), |e| {
            matches!(e, TreeError::NoLevels)
        });
        reject(
            "short radii",
            &|p| p.radii.truncate(p.radii.len() - 1),
            |e| matches!(e, TreeError::Lengths(_)),
        );
        reject(
            "offsets past the end",
            &|p| *p.offsets.last_mut().unwrap() += 1,
            |e| matches!(e, TreeError::LevelOffsets),
        );
        reject("decreasing offsets", &|p| p.offsets.swap(1, 2), |e| {
            matches!(e, TreeError::LevelOffsets)
        });
        reject("empty level", &|p| p.offsets[1] = 0, |e| {
            matches!(e, TreeError::EmptyLevel { level: 0 })
        });
        reject("point out of range", &|p| p.points[3] = 5000, |e| {
            matches!(e, TreeError::PointOutOfRange { node: 3, .. })
        });
        reject(
            "duplicate leaf",
            &|p| p.points[finest + 1] = p.points[finest],
            |e| matches!(e, TreeError::DuplicateLeaf { .. }),
        );
        reject("swapped child ranges", &|p| p.first_child.swap(1, 2), |e| {
            matches!(e, TreeError::ChildRanges { .. })
        });
        reject(
            "children not at the next level",
            &|p| p.first_child[0] -= 1,
            |e| matches!(e, TreeError::ChildRanges { .. }),
        );
        reject(
            "finest node with children",
            &|p| {
                let last = p.first_child.len() - 2;
                p.first_child[last] -= 1;
            },
            |e| matches!(e, TreeError::ChildRanges { .. }),
        );
        reject(
            "not nested",
            &|p| p.points.swap(second_child - 1, second_child),
            |e| matches!(e, TreeError::NotNested { .. }),
        );
        reject("negative radius", &|p| p.radii[2] = -1e-3, |e| {
            matches!(e, TreeError::InvalidRadius { node: 2, .. })
        });
        reject("NaN radius", &|p| p.radii[0] = f64::NAN, |e| {
            matches!(e, TreeError::InvalidRadius { node: 0, .. })
        });
        reject("shrunken radius", &|p| p.radii[0] *= 0.99, |e| {
            matches!(e, TreeError::RadiusTooSmall { node: 0, .. })
        });
        let smaller = PointShell {
            points: shell.points[1..].to_vec(),
            outward_normals: shell.outward_normals[1..].to_vec(),
        };
        assert!(matches!(
            Parts::of(&tree).rebuild(&smaller),
            Err(TreeError::Lengths(_))
        ));
    }
}
