//! Time-critical contact queries of a point shell against a signed distance
//! field through its nested point tree (Barbič & James 2008, §5): breadth
//! first, one field lookup per visited node, a subtree skipped when its
//! bounding sphere provably lies outside, stopping at a coarser level when
//! the budget runs out.

use crate::sampling::PointShell;
use crate::tree::NestedPointTree;
use haptic_sdf::DistanceField;
use nalgebra::{Isometry3, Matrix3, Point3, Vector3};
use std::time::{Duration, Instant};

/// A shell point (or, after an early stop, a tree node) inside the field.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    /// Index of the shell point.
    pub point: u32,
    /// Signed distance of the point in the field (negative: penetration, m).
    pub distance: f64,
    /// Number of finest-level shell points this contact stands for: 1 at the
    /// finest level, the node's leaf count after an early stop.
    pub weight: u32,
}

/// Limits on one traversal; the default has none.
#[derive(Clone, Copy, Debug, Default)]
pub struct TraversalBudget {
    /// The finest level to descend to (levels beyond the tree's are ignored).
    pub max_level: Option<u32>,
    /// A hard cap on field lookups: a level is only started if all of its
    /// lookups fit, so the count never exceeds this.
    pub max_lookups: Option<u32>,
    /// A wall-clock limit (Barbič & James 2008, §5's time-critical
    /// descent): a level of more than [`ALWAYS_AFFORDED_LOOKUPS`] lookups
    /// is only started if they end, at the predicted cost each, before the
    /// deadline.
    pub deadline: Option<LookupDeadline>,
}

/// A level with at most this many lookups runs whatever the deadline, so
/// that a late traversal still answers with the coarse levels' contacts
/// (about a hundred nodes) rather than none, at a bounded cost.
pub const ALWAYS_AFFORDED_LOOKUPS: u32 = 128;

/// When a traversal must be done, and what one of its lookups is expected
/// to cost there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LookupDeadline {
    pub at: Instant,
    /// The predicted cost of one candidate node: its lookup and whatever
    /// the caller does with it if it becomes a contact (ns).
    pub per_lookup_ns: f64,
}

impl LookupDeadline {
    /// Whether `lookups` more, started now, would end after the deadline.
    fn exceeded_by(&self, lookups: u32) -> bool {
        let cost = Duration::from_nanos((f64::from(lookups) * self.per_lookup_ns) as u64);
        Instant::now() + cost > self.at
    }
}

/// What a traversal did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraversalStats {
    /// Field lookups performed.
    pub lookups: u32,
    /// Levels fully processed; the contacts come from level
    /// `levels_completed - 1`. Equal to the tree's level count when the
    /// result is exact (including when no candidates remained early).
    pub(crate) levels_completed: u32,
    /// Whether the budget stopped the descent before the finest level.
    pub stopped_early: bool,
    /// After an early stop, the finest-level points under the last
    /// completed level's candidates that were still within reach of the
    /// surface: the points whose contact state this traversal did not
    /// resolve. The contacts among them are stood for by their coarse
    /// node (its leaf count in [`Contact::weight`]); the rest may hide
    /// contacts. Zero when the result is exact.
    pub unresolved_points: u32,
}

/// A candidate node and its field value (NaN until looked up).
#[derive(Clone, Copy, Debug)]
struct Candidate {
    node: u32,
    value: f64,
}

/// The field values a role's traversals looked up, kept so that the next
/// traversal passes over the nodes still provably outside. A value `v`
/// found when the traversals' summed approach (see
/// [`PointTreeTraversal::traverse_within`]) was `D` is kept as `v + D`:
/// with the sum now `D'`, the node's value is at least `v + D − D'`,
/// however many traversals ago it was looked up.
#[derive(Clone, Debug, Default)]
pub struct NodeBounds {
    /// `(node, v + D)` by node, of the last traversal's visited nodes.
    kept: Vec<(u32, f64)>,
    /// Being filled by the current traversal.
    visiting: Vec<(u32, f64)>,
    /// Where the current traversal is in `kept`.
    cursor: usize,
    /// The summed approach `D` (m).
    approach: f64,
}

impl NodeBounds {
    /// Starts a traversal after the shell's points came at most `approach`
    /// nearer the surface (in value) since the last.
    fn begin(&mut self, approach: f64) {
        self.approach += approach;
        self.cursor = 0;
        self.visiting.clear();
    }

    /// A lower bound on `node`'s value now, if a traversal looked it up;
    /// nodes are asked for in increasing order.
    fn lower_bound(&mut self, node: u32) -> Option<f64> {
        while self.kept.get(self.cursor).is_some_and(|&(n, _)| n < node) {
            self.cursor += 1;
        }
        match self.kept.get(self.cursor) {
            Some(&(n, key)) if n == node => Some(key - self.approach),
            _ => None,
        }
    }

    /// Keeps `node`'s `value` (or lower bound) for the next traversal.
    fn keep(&mut self, node: u32, value: f64) {
        self.visiting.push((node, value + self.approach));
    }

    fn end(&mut self) {
        std::mem::swap(&mut self.kept, &mut self.visiting);
    }
}

/// `field_from_shell` as a matrix and a vector: cheaper per point than the
/// quaternion, and shared with [`contacts_brute_force`] so both compute
/// bit-identical distances.
struct RigidMap {
    rotation: Matrix3<f64>,
    translation: Vector3<f64>,
}

impl RigidMap {
    fn new(pose: &Isometry3<f64>) -> Self {
        Self {
            rotation: *pose.rotation.to_rotation_matrix().matrix(),
            translation: pose.translation.vector,
        }
    }

    #[inline]
    fn apply(&self, p: &Point3<f64>) -> Point3<f64> {
        Point3::from(self.rotation * p.coords + self.translation)
    }
}

/// Reusable frontier buffers for [`PointTreeTraversal::traverse`], sized once
/// for a tree so that traversals never allocate.
#[derive(Clone, Debug)]
pub struct PointTreeTraversal {
    current: Vec<Candidate>,
    next: Vec<Candidate>,
}

impl PointTreeTraversal {
    /// Buffers for `tree`: each holds one full level, at most the shell size.
    pub fn new(tree: &NestedPointTree) -> Self {
        let widest = (0..tree.levels())
            .map(|l| tree.level(l).len())
            .max()
            .unwrap_or(0);
        Self {
            current: Vec::with_capacity(widest),
            next: Vec::with_capacity(widest),
        }
    }

    /// Finds the shell points inside `field`, the shell placed in the field's
    /// frame by `field_from_shell`. Level by level, each candidate node's
    /// point is looked up once (a node's own point, its first child, inherits
    /// the value); a node whose value exceeds `L·radius`, `L` the field's
    /// Lipschitz bound, has its whole subtree outside and is dropped. At the
    /// finest level every point with a negative value is a contact, exactly
    /// as [`contacts_brute_force`] finds them. If `budget` stops the descent
    /// earlier, the candidates of the last completed level with negative
    /// values are returned instead, each weighted by its leaf count.
    ///
    /// `contacts` is cleared first and receives at most one contact per shell
    /// point: reserve `shell.len()` once and it never reallocates. Nor does
    /// this call allocate when the buffers were made for `tree`.
    ///
    /// # Panics
    /// If `shell` does not have the tree's number of points.
    pub fn traverse<F: DistanceField + ?Sized>(
        &mut self,
        tree: &NestedPointTree,
        shell: &PointShell,
        field: &F,
        field_from_shell: &Isometry3<f64>,
        budget: TraversalBudget,
        contacts: &mut Vec<Contact>,
    ) -> TraversalStats {
        self.traverse_within(
            tree,
            shell,
            field,
            field_from_shell,
            0.0,
            budget,
            None,
            contacts,
        )
    }

    /// As [`traverse`](Self::traverse), but finds the points whose value is
    /// below `margin` (m, ≥ 0) rather than below 0: a subtree is dropped
    /// when its node's value exceeds `L·radius + margin`. The points found,
    /// in the same order, are a superset of `traverse`'s.
    ///
    /// With `known`: the bounds of this shell's earlier traversals in this
    /// field, and `approach`, how far in value (`L` times the distance) any
    /// shell point may have come towards the surface since the last of
    /// them. A node whose value was then so high that it still exceeds
    /// `L·radius + margin` is dropped without a lookup; the points found
    /// are the same. New bounds look up every node visited.
    #[allow(clippy::too_many_arguments)]
    pub fn traverse_within<F: DistanceField + ?Sized>(
        &mut self,
        tree: &NestedPointTree,
        shell: &PointShell,
        field: &F,
        field_from_shell: &Isometry3<f64>,
        margin: f64,
        budget: TraversalBudget,
        known: Option<(&mut NodeBounds, f64)>,
        contacts: &mut Vec<Contact>,
    ) -> TraversalStats {
        let mut known = known.map(|(bounds, approach)| {
            bounds.begin(approach);
            bounds
        });
        assert_eq!(shell.len(), tree.shell_len(), "shell and tree disagree");
        contacts.clear();
        let levels = tree.levels();
        let mut stats = TraversalStats::default();
        let last_level = budget
            .max_level
            .map_or(levels - 1, |m| (m as usize).min(levels - 1));
        let map = RigidMap::new(field_from_shell);
        let lipschitz = field.lipschitz_bound();
        let positive_beyond = field.positive_beyond();
        let (points, radii, first_child) = (tree.points(), tree.radii(), tree.first_child());
        let leaf_counts = tree.leaf_counts();

        self.current.clear();
        self.current.extend(tree.level(0).map(|node| Candidate {
            node: node as u32,
            value: f64::NAN,
        }));
        let mut pending_lookups = self.current.len() as u32;
        for level in 0..levels {
            if self.current.is_empty() {
                stats.levels_completed = levels as u32;
                break;
            }
            let out_of_lookups = budget
                .max_lookups
                .is_some_and(|max| stats.lookups + pending_lookups > max);
            let out_of_time = pending_lookups > ALWAYS_AFFORDED_LOOKUPS
                && budget
                    .deadline
                    .is_some_and(|deadline| deadline.exceeded_by(pending_lookups));
            if out_of_lookups || out_of_time {
                // Level `level` does not fit: answer from the previous one,
                // whose candidates are still in `next` (none before level 0).
                if level == 0 {
                    self.current.clear();
                } else {
                    std::mem::swap(&mut self.current, &mut self.next);
                }
                stats.stopped_early = true;
                break;
            }
            self.next.clear();
            pending_lookups = 0;
            stats.unresolved_points = 0;
            let expand = level < last_level;
            for candidate in &mut self.current {
                let node = candidate.node as usize;
                let reach = lipschitz * radii[node] + margin;
                if candidate.value.is_nan() {
                    let q = map.apply(&shell.points[points[node] as usize]);
                    // Beyond the field's positive box the value is at least
                    // the distance to it: a node that far is passed over
                    // (its value stays NaN, never a contact) unlooked-up.
                    if positive_beyond.is_some_and(|b| b.distance_squared(&q) > reach * reach) {
                        continue;
                    }
                    if let Some(bounds) = known.as_deref_mut() {
                        // Still provably beyond reach: passed over, its
                        // bound kept (its value stays NaN, never a contact).
                        if let Some(lower) = bounds.lower_bound(candidate.node) {
                            if lower > reach {
                                bounds.keep(candidate.node, lower);
                                continue;
                            }
                        }
                    }
                    candidate.value = field.value(&q);
                    stats.lookups += 1;
                    if let Some(bounds) = known.as_deref_mut() {
                        bounds.keep(candidate.node, candidate.value);
                    }
                }
                if candidate.value > reach {
                    continue;
                }
                stats.unresolved_points += leaf_counts[node] - 1;
                if !expand {
                    continue;
                }
                let (first, end) = (first_child[node], first_child[node + 1]);
                self.next.push(Candidate {
                    node: first,
                    value: candidate.value,
                });
                self.next.extend((first + 1..end).map(|child| Candidate {
                    node: child,
                    value: f64::NAN,
                }));
                pending_lookups += end - first - 1;
            }
            stats.levels_completed = level as u32 + 1;
            if level == levels - 1 {
                break;
            }
            if level == last_level {
                stats.stopped_early = true;
                break;
            }
            std::mem::swap(&mut self.current, &mut self.next);
        }

        if !stats.stopped_early {
            stats.unresolved_points = 0;
        }
        contacts.extend(
            self.current
                .iter()
                .filter(|c| c.value < margin)
                .map(|c| Contact {
                    point: points[c.node as usize],
                    distance: c.value,
                    weight: leaf_counts[c.node as usize],
                }),
        );
        if let Some(bounds) = known {
            bounds.end();
        }
        stats
    }
}

/// Every shell point inside `field`, one lookup per point (the reference the
/// tree traversal must match). Clears `contacts`; returns the lookup count.
pub fn contacts_brute_force<F: DistanceField + ?Sized>(
    shell: &PointShell,
    field: &F,
    field_from_shell: &Isometry3<f64>,
    contacts: &mut Vec<Contact>,
) -> u32 {
    contacts.clear();
    let map = RigidMap::new(field_from_shell);
    for (i, p) in shell.points.iter().enumerate() {
        let distance = field.value(&map.apply(p));
        if distance < 0.0 {
            contacts.push(Contact {
                point: i as u32,
                distance,
                weight: 1,
            });
        }
    }
    shell.len() as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampling::{sample_point_shell, spacing_for_count};
    use haptic_mesh::shapes::{box_mesh, icosphere};
    use haptic_mesh::{Aabb, TriangleMesh};
    use haptic_testkit::fields::{BoxField, HalfSpaceField, SphereField};
    use nalgebra::UnitQuaternion;
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    const RADIUS: f64 = 0.05;

    /// A field `scale` times another, with the Lipschitz bound scaled to match:
    /// culling must use the bound, not assume unit gradients.
    struct Scaled<F>(F, f64);

    impl<F: DistanceField> DistanceField for Scaled<F> {
        fn value(&self, p: &Point3<f64>) -> f64 {
            self.1 * self.0.value(p)
        }
        fn value_gradient(&self, p: &Point3<f64>) -> (f64, Vector3<f64>) {
            let (v, g) = self.0.value_gradient(p);
            (self.1 * v, self.1 * g)
        }
        fn bounds(&self) -> Aabb {
            self.0.bounds()
        }
        fn lipschitz_bound(&self) -> f64 {
            self.1 * self.0.lipschitz_bound()
        }
    }

    struct Setup {
        shell: PointShell,
        tree: NestedPointTree,
        traversal: PointTreeTraversal,
    }

    impl Setup {
        fn new(mesh: &TriangleMesh, count: usize, levels: usize) -> Self {
            let shell = sample_point_shell(mesh, spacing_for_count(mesh, count), 4);
            let tree = NestedPointTree::new(&shell, levels);
            let traversal = PointTreeTraversal::new(&tree);
            Self {
                shell,
                tree,
                traversal,
            }
        }

        fn tree_contacts<F: DistanceField + ?Sized>(
            &mut self,
            field: &F,
            pose: &Isometry3<f64>,
            budget: TraversalBudget,
        ) -> (Vec<Contact>, TraversalStats) {
            let mut contacts = Vec::with_capacity(self.shell.len());
            let stats = self.traversal.traverse(
                &self.tree,
                &self.shell,
                field,
                pose,
                budget,
                &mut contacts,
            );
            assert_eq!(contacts.capacity(), self.shell.len(), "contacts never grow");
            contacts.sort_by_key(|c| c.point);
            (contacts, stats)
        }

        /// The points within `margin`, in traversal order, with `known`
        /// bounds if given.
        fn within<F: DistanceField + ?Sized>(
            &mut self,
            field: &F,
            pose: &Isometry3<f64>,
            margin: f64,
            known: Option<(&mut NodeBounds, f64)>,
        ) -> (Vec<Contact>, TraversalStats) {
            let mut found = Vec::new();
            let stats = self.traversal.traverse_within(
                &self.tree,
                &self.shell,
                field,
                pose,
                margin,
                TraversalBudget::default(),
                known,
                &mut found,
            );
            (found, stats)
        }

        fn brute_contacts<F: DistanceField + ?Sized>(
            &self,
            field: &F,
            pose: &Isometry3<f64>,
        ) -> Vec<Contact> {
            let mut contacts = Vec::new();
            let lookups = contacts_brute_force(&self.shell, field, pose, &mut contacts);
            assert_eq!(lookups as usize, self.shell.len());
            contacts
        }
    }

    fn random_rotation(rng: &mut Pcg64) -> UnitQuaternion<f64> {
        let axis = Vector3::new(rng.gen(), rng.gen(), rng.gen()) * 2.0 - Vector3::repeat(1.0);
        UnitQuaternion::from_scaled_axis(axis * std::f64::consts::PI)
    }

    fn random_direction(rng: &mut Pcg64) -> Vector3<f64> {
        random_rotation(rng) * Vector3::z()
    }

    /// Poses putting the ball-like shell (radius `RADIUS` about its origin) at
    /// distance `RADIUS - depth` from the field's surface along a random
    /// direction, found by bisection on the field value.
    fn shallow_poses<F: DistanceField + ?Sized>(
        field: &F,
        rng: &mut Pcg64,
        max_depth: f64,
    ) -> Vec<Isometry3<f64>> {
        (0..40)
            .map(|_| {
                let direction = random_direction(rng);
                let target = RADIUS - rng.gen_range(0.0..max_depth);
                let (mut near, mut far) = (0.0, 10.0);
                for _ in 0..80 {
                    let mid = 0.5 * (near + far);
                    if field.value(&Point3::from(direction * mid)) < target {
                        near = mid;
                    } else {
                        far = mid;
                    }
                }
                Isometry3::from_parts((direction * near).into(), random_rotation(rng))
            })
            .collect()
    }

    #[test]
    fn tree_finds_exactly_the_brute_force_contacts() {
        let mut rng = Pcg64::seed_from_u64(17);
        let mut sphere_shell = Setup::new(&icosphere(RADIUS, 5), 10_000, 8);
        let ball = SphereField {
            center: Point3::origin(),
            radius: 0.2,
        };
        let plane = HalfSpaceField {
            normal: Vector3::new(1.0, 2.0, -2.0) / 3.0,
            offset: 0.01,
        };
        let block = BoxField {
            half_extents: Vector3::new(0.1, 0.07, 0.04),
        };
        let steep = Scaled(ball, 3.0);
        let mut checked = 0;
        let fields: [(&str, &dyn DistanceField); 4] = [
            ("ball", &ball),
            ("plane", &plane),
            ("box", &block),
            ("steep ball", &steep),
        ];
        for (name, field) in fields {
            for pose in shallow_poses(field, &mut rng, 0.01) {
                let expected = sphere_shell.brute_contacts(field, &pose);
                let (found, stats) =
                    sphere_shell.tree_contacts(field, &pose, TraversalBudget::default());
                assert_eq!(found, expected, "{name} at {pose}");
                assert!(
                    !stats.stopped_early && stats.levels_completed == 8,
                    "{stats:?}"
                );
                checked += expected.len();
            }
        }
        assert!(
            checked > 10_000,
            "the poses produced real contact ({checked})"
        );

        // A box-shaped shell: flat faces and sharp edges against a plane.
        let mut box_shell = Setup::new(&box_mesh(Vector3::new(0.03, 0.02, 0.01)), 10_000, 8);
        for _ in 0..40 {
            let rotation = random_rotation(&mut rng);
            let lowest = box_shell
                .shell
                .points
                .iter()
                .map(|p| (rotation * p).z)
                .fold(f64::INFINITY, f64::min);
            let lift = -lowest - rng.gen_range(0.0..0.004);
            let pose = Isometry3::from_parts(Vector3::new(0.0, 0.0, lift).into(), rotation);
            let floor = HalfSpaceField {
                normal: Vector3::z(),
                offset: 0.0,
            };
            let expected = box_shell.brute_contacts(&floor, &pose);
            assert_eq!(
                box_shell
                    .tree_contacts(&floor, &pose, TraversalBudget::default())
                    .0,
                expected
            );
        }
    }

    /// A field without its positive box, to compare against.
    struct WithoutBox<'a>(&'a haptic_sdf::DenseField);

    impl DistanceField for WithoutBox<'_> {
        fn value(&self, p: &Point3<f64>) -> f64 {
            self.0.value(p)
        }
        fn value_gradient(&self, p: &Point3<f64>) -> (f64, Vector3<f64>) {
            self.0.value_gradient(p)
        }
        fn bounds(&self) -> Aabb {
            self.0.bounds()
        }
        fn lipschitz_bound(&self) -> f64 {
            self.0.lipschitz_bound()
        }
    }

    /// Nodes beyond a dense field's positive box are passed over without a
    /// lookup, and the contacts (with and without a margin) are still
    /// exactly the brute force's.
    #[test]
    fn tree_passes_over_nodes_beyond_a_dense_fields_box() {
        use haptic_sdf::{DenseField, DenseOptions, NoProgress};
        let mut rng = Pcg64::seed_from_u64(29);
        let mut setup = Setup::new(&icosphere(RADIUS, 5), 10_000, 8);
        let field = DenseField::build(
            &box_mesh(Vector3::new(0.06, 0.04, 0.03)),
            &DenseOptions {
                resolution: 40,
                padding_fraction: 0.1,
            },
            &NoProgress,
        );
        let (mut with, mut without) = (0, 0);
        let mut contacts = 0;
        for pose in shallow_poses(&field, &mut rng, 0.01) {
            for margin in [0.0, 0.003] {
                let map = RigidMap::new(&pose);
                let expected: Vec<u32> = (0..setup.shell.len() as u32)
                    .filter(|&i| field.value(&map.apply(&setup.shell.points[i as usize])) < margin)
                    .collect();
                let (found, stats) = setup.within(&field, &pose, margin, None);
                let mut points: Vec<u32> = found.iter().map(|c| c.point).collect();
                points.sort_unstable();
                assert_eq!(points, expected);
                contacts += points.len();
                with += stats.lookups;
                let (plain, plain_stats) = setup.within(&WithoutBox(&field), &pose, margin, None);
                without += plain_stats.lookups;
                assert_eq!(plain, found);
            }
        }
        assert!(contacts > 10_000, "{contacts}");
        println!("{with} lookups with the box, {without} without");
        assert!(
            with < without,
            "{with} lookups with the box, {without} without"
        );
    }

    /// A sphere's 10,000-point shell in 8 levels, and a box's field.
    fn sphere_and_block() -> (Setup, BoxField) {
        let block = BoxField {
            half_extents: Vector3::new(0.1, 0.07, 0.04),
        };
        (Setup::new(&icosphere(RADIUS, 5), 10_000, 8), block)
    }

    /// With a margin the traversal finds exactly the points within it, in
    /// an order whose points below 0 are the plain traversal's, in its order.
    #[test]
    fn tree_with_a_margin_finds_exactly_the_points_within_it() {
        let mut rng = Pcg64::seed_from_u64(23);
        let (mut setup, block) = sphere_and_block();
        let margin = 0.004;
        let mut near_points = 0;
        for pose in shallow_poses(&block, &mut rng, 0.01) {
            let map = RigidMap::new(&pose);
            let expected: Vec<u32> = (0..setup.shell.len() as u32)
                .filter(|&i| block.value(&map.apply(&setup.shell.points[i as usize])) < margin)
                .collect();
            let (near, _) = setup.within(&block, &pose, margin, None);
            let mut plain = Vec::new();
            setup.traversal.traverse(
                &setup.tree,
                &setup.shell,
                &block,
                &pose,
                TraversalBudget::default(),
                &mut plain,
            );
            let inside: Vec<Contact> = near.iter().copied().filter(|c| c.distance < 0.0).collect();
            assert_eq!(inside, plain);
            let mut found: Vec<u32> = near.iter().map(|c| c.point).collect();
            found.sort_unstable();
            assert_eq!(found, expected);
            near_points += found.len() - plain.len();
        }
        assert!(
            near_points > 1000,
            "the margin added points ({near_points})"
        );
    }

    /// A shell sliding over a box with a wobble, traversed whenever its
    /// points may have come a margin nearer since the last traversal, with
    /// the bounds of its earlier traversals: the points within the margin
    /// are exactly a fresh traversal's, in the same order, with fewer
    /// lookups.
    #[test]
    fn kept_bounds_pass_over_nodes_and_find_the_same_points() {
        let mut rng = Pcg64::seed_from_u64(31);
        let (mut setup, block) = sphere_and_block();
        let (margin, lipschitz) = (0.003, block.lipschitz_bound());
        let mut bounds = NodeBounds::default();
        let (mut with, mut without, mut traversals, mut found_points) = (0, 0, 0, 0);
        let mut pose = Isometry3::translation(-0.08, 0.0, 0.04 + RADIUS - 0.004);
        let mut last: Option<Isometry3<f64>> = None;
        for _ in 0..400 {
            // Up to 1 mm and 0.009 rad a step.
            let step = Isometry3::new(
                Vector3::new(
                    rng.gen_range(0.0..0.001),
                    rng.gen_range(-0.0005..0.0005),
                    rng.gen_range(-0.0003..0.0003),
                ),
                Vector3::from_fn(|_, _| rng.gen_range(-0.005..0.005)),
            );
            pose = step * pose;
            // How far, times L, any shell point came since the last traversal.
            let approach = last.map_or(0.0, |before| {
                let angle = before.rotation.angle_to(&pose.rotation);
                lipschitz
                    * ((pose.translation.vector - before.translation.vector).norm()
                        + angle * RADIUS * 1.01)
            });
            if last.is_some() && approach < margin {
                continue;
            }
            last = Some(pose);
            let (kept, kept_stats) =
                setup.within(&block, &pose, margin, Some((&mut bounds, approach)));
            let (fresh, fresh_stats) = setup.within(&block, &pose, margin, None);
            assert_eq!(kept, fresh);
            traversals += 1;
            found_points += kept.len();
            with += kept_stats.lookups;
            without += fresh_stats.lookups;
        }
        println!(
            "{traversals} traversals: {with} lookups with kept bounds, {without} without, {found_points} points"
        );
        assert!(
            traversals > 50 && found_points > 10_000,
            "{traversals}, {found_points}"
        );
        assert!(
            with < without,
            "{with} lookups with kept bounds, {without} without"
        );
    }

    #[test]
    fn tree_needs_ten_times_fewer_lookups_in_shallow_contact() {
        let mut setup = Setup::new(&icosphere(RADIUS, 5), 10_000, 8);
        let plane = HalfSpaceField {
            normal: Vector3::z(),
            offset: 0.0,
        };
        let mut rng = Pcg64::seed_from_u64(5);
        let (mut tree_lookups, mut brute_lookups, mut in_contact) = (0u64, 0u64, 0usize);
        for _ in 0..20 {
            // 2.5 mm into the plane: 2.5 % of the shell.
            let pose = Isometry3::from_parts(
                Vector3::new(0.0, 0.0, RADIUS - 0.0025).into(),
                random_rotation(&mut rng),
            );
            let (contacts, stats) = setup.tree_contacts(&plane, &pose, TraversalBudget::default());
            in_contact += contacts.len();
            tree_lookups += u64::from(stats.lookups);
            brute_lookups += setup.shell.len() as u64;
        }
        let ratio = brute_lookups as f64 / tree_lookups as f64;
        let fraction = in_contact as f64 / brute_lookups as f64;
        println!(
            "{:.1} % of points in contact: tree {} lookups per query, brute force {}, ratio {ratio:.1}",
            100.0 * fraction,
            tree_lookups / 20,
            brute_lookups / 20
        );
        assert!((0.01..0.05).contains(&fraction), "{fraction}");
        assert!(ratio >= 10.0, "only {ratio:.1}× fewer lookups");
    }

    #[test]
    fn level_cap_gives_weighted_coarse_contacts() {
        let mut setup = Setup::new(&icosphere(RADIUS, 5), 10_000, 8);
        let plane = HalfSpaceField {
            normal: Vector3::z(),
            offset: 0.0,
        };
        let pose = Isometry3::new(
            Vector3::new(0.0, 0.0, RADIUS - 0.012),
            Vector3::new(0.4, 0.1, -0.3),
        );
        let exact = setup.brute_contacts(&plane, &pose).len() as f64;
        for (max_level, tolerance) in [(6, 0.1), (5, 0.15), (4, 0.25)] {
            let budget = TraversalBudget {
                max_level: Some(max_level),
                ..Default::default()
            };
            let (contacts, stats) = setup.tree_contacts(&plane, &pose, budget);
            assert_eq!(stats.levels_completed, max_level + 1);
            assert!(stats.stopped_early);
            let level = setup.tree.level(max_level as usize);
            let weight: u32 = contacts.iter().map(|c| c.weight).sum();
            println!(
                "level {max_level}: {} contacts of total weight {weight} for {exact} points",
                contacts.len()
            );
            for c in &contacts {
                let node = level
                    .clone()
                    .find(|&n| setup.tree.points()[n] == c.point)
                    .unwrap();
                assert_eq!(c.weight, setup.tree.leaf_counts()[node]);
                assert!(c.distance < 0.0);
            }
            assert!(
                (weight as f64 / exact - 1.0).abs() < tolerance,
                "level {max_level}: {weight} vs {exact}"
            );
        }
        let uncapped = TraversalBudget {
            max_level: Some(100),
            ..Default::default()
        };
        assert_eq!(
            setup.tree_contacts(&plane, &pose, uncapped),
            setup.tree_contacts(&plane, &pose, TraversalBudget::default())
        );
    }

    /// A 3,000-point sphere shell, 7 levels, 10 mm into the floor `z = 0`.
    fn sphere_10_mm_into_a_floor() -> (Setup, HalfSpaceField, Isometry3<f64>) {
        let setup = Setup::new(&icosphere(RADIUS, 4), 3000, 7);
        let plane = HalfSpaceField {
            normal: Vector3::z(),
            offset: 0.0,
        };
        (
            setup,
            plane,
            Isometry3::translation(0.0, 0.0, RADIUS - 0.01),
        )
    }

    #[test]
    fn lookup_cap_stops_between_levels() {
        let (mut setup, plane, pose) = sphere_10_mm_into_a_floor();
        let (exact, full) = setup.tree_contacts(&plane, &pose, TraversalBudget::default());
        for cap in [0, 1, 10, 50, 100, 200, full.lookups - 1, full.lookups] {
            let budget = TraversalBudget {
                max_lookups: Some(cap),
                ..Default::default()
            };
            let (contacts, stats) = setup.tree_contacts(&plane, &pose, budget);
            assert!(stats.lookups <= cap, "{stats:?} over {cap}");
            assert_eq!(
                stats.stopped_early,
                cap < full.lookups,
                "cap {cap}: {stats:?}"
            );
            if stats.stopped_early {
                assert!(stats.levels_completed < 7);
                let last = setup.tree.level(stats.levels_completed.max(1) as usize - 1);
                assert!(contacts
                    .iter()
                    .all(|c| last.clone().any(|n| setup.tree.points()[n] == c.point)));
            } else {
                assert_eq!(contacts, exact);
            }
        }
    }

    /// The points a stopped traversal left unresolved are those under its
    /// reachable coarse candidates that the exact answer would have looked
    /// at: every exact contact is one of them or stood for by a contact.
    #[test]
    fn an_early_stop_counts_the_points_it_did_not_resolve() {
        let (mut setup, plane, pose) = sphere_10_mm_into_a_floor();
        let (exact, full) = setup.tree_contacts(&plane, &pose, TraversalBudget::default());
        assert_eq!(full.unresolved_points, 0);
        let mut previous = u32::MAX;
        for max_level in 2..6 {
            let budget = TraversalBudget {
                max_level: Some(max_level),
                ..Default::default()
            };
            let (contacts, stats) = setup.tree_contacts(&plane, &pose, budget);
            let weight: u32 = contacts.iter().map(|c| c.weight).sum();
            let unresolved = stats.unresolved_points;
            // Each contact's node stands for its own point and `weight − 1`
            // unresolved ones.
            assert!(unresolved >= weight - contacts.len() as u32, "{stats:?}");
            assert!(
                unresolved as usize + contacts.len() >= exact.len(),
                "level {max_level}: {unresolved} unresolved, {} exact contacts",
                exact.len()
            );
            assert!(unresolved < previous, "finer levels resolve more");
            previous = unresolved;
        }
    }

    #[test]
    fn a_deadline_stops_before_the_first_costly_level_and_a_far_one_changes_nothing() {
        let (mut setup, plane, pose) = sphere_10_mm_into_a_floor();
        let exact = setup.tree_contacts(&plane, &pose, TraversalBudget::default());
        let at = |from_now| LookupDeadline {
            at: Instant::now() + from_now,
            per_lookup_ns: 50.0,
        };
        let far = TraversalBudget {
            deadline: Some(at(Duration::from_secs(3600))),
            ..Default::default()
        };
        assert_eq!(setup.tree_contacts(&plane, &pose, far), exact);

        // Passed already, or a cost so high that nothing fits in a second:
        // the levels of few lookups still run, so the tool keeps a coarse
        // contact set rather than none.
        let past = TraversalBudget {
            deadline: Some(at(Duration::ZERO)),
            ..Default::default()
        };
        let costly = TraversalBudget {
            deadline: Some(LookupDeadline {
                at: Instant::now() + Duration::from_secs(1),
                per_lookup_ns: 1e9,
            }),
            ..Default::default()
        };
        for budget in [past, costly] {
            let (contacts, stats) = setup.tree_contacts(&plane, &pose, budget);
            assert!(stats.stopped_early, "{stats:?}");
            assert!(stats.levels_completed >= 2, "{stats:?}");
            assert!(!contacts.is_empty());
            assert!(stats.lookups <= ALWAYS_AFFORDED_LOOKUPS * stats.levels_completed);
            assert!(stats.unresolved_points > 0);
        }
    }

    #[test]
    fn no_contact_ends_early_with_an_exact_empty_answer() {
        let mut setup = Setup::new(&icosphere(RADIUS, 4), 3000, 7);
        let ball = SphereField {
            center: Point3::origin(),
            radius: 0.1,
        };
        let (contacts, stats) = setup.tree_contacts(
            &ball,
            &Isometry3::translation(0.5, 0.0, 0.0),
            TraversalBudget::default(),
        );
        assert!(contacts.is_empty());
        assert_eq!((stats.levels_completed, stats.stopped_early), (7, false));
        assert_eq!(stats.lookups as usize, setup.tree.level(0).len());
    }
}
