//! Wolfe's minimum-norm-point iteration (Wolfe 1976) on a Minkowski sum of
//! polygons `Z = Σ_i B_i P_i` in `R^6`, shared by the real-time solvers.
//!
//! `P_i` is the ℓ-gon of eq 13 (vertices at angles `2πm/ℓ`, vertex radius
//! `ρ_i`, the theorem of eqs 14–26) and `B_i` a 6×2 matrix. The iteration
//! minimises `‖z − g‖` over `z ∈ Z` with only the support function
//! `h_Z(d) = Σ_i max_m ⟨B_iᵀd, ρ_i v_m⟩` (O(kℓ)), keeping the iterate as a
//! convex combination of at most 7 support points ("atoms"). Each atom
//! remembers the vertex it chose at every polygon, so the minimiser's
//! `β_i ∈ P_i` is the same convex combination of those vertices and lies in
//! the polygons exactly. The first atom is `β = 0`. Nothing is allocated
//! after construction.

use haptic_core::{Matrix6, Vector6};
use nalgebra::{Matrix6x2, Vector2};

use crate::problem::SolverError;
use std::time::Instant;

/// Affinely independent points in `R^6`: the most atoms a corral can hold.
const MAX_ATOMS: usize = 7;

/// Wolfe's optimality test: the iterate `x` is the minimum-norm point to
/// working precision once `‖x‖ − ⟨x̂, p⟩ ≤ WOLFE_EPSILON · max ‖p_j‖`.
const WOLFE_EPSILON: f64 = 1e-14;

/// A new atom closer than this (relative to its offset) to the affine hull
/// of the others is numerically dependent.
const DEPENDENCE_EPSILON: f64 = 1e-12;

/// The most sides of a polygon whose maximising vertex is found by its
/// sector ([`Sectors`]) rather than by scanning the vertices.
const MAX_SECTOR_SIDES: usize = 16;

/// Support evaluations an iteration takes even once its deadline has
/// passed. A servo whose every cycle starts late (a host that stalls it
/// cycle after cycle) then still moves each cycle's warm start towards the
/// optimum, so a run of held cycles converges to a decision instead of
/// standing still until the hold expires (docs/rendering.md, "The time
/// budget").
pub const ITERATIONS_PAST_DEADLINE: u32 = 2;

/// The maximising vertex of a regular ℓ-gon with ℓ even, found without a
/// chain of comparisons: `v_m` maximises `⟨a, v⟩` iff `a` lies in the sector
/// between the bisectors of `v_m`'s edges, and the ℓ bisectors lie on ℓ/2
/// lines through the origin. The signs of `⟨a, n_j⟩`, `n_j = v_j − v_{j+1}`
/// (`j < ℓ/2`), name the sector; a table maps them to `m`. On a bisector
/// both vertices maximise; `a = 0` gives `m = 0`, as the scan does.
#[derive(Clone, Copy)]
struct Sectors {
    /// `n_j`, the normals of the bisector lines.
    normals: [Vector2<f64>; MAX_SECTOR_SIDES / 2],
    /// The vertex of each sign pattern, bit `j` set iff `⟨a, n_j⟩ ≥ 0`
    /// (patterns of no sector map to 0).
    vertex: [u16; 1 << (MAX_SECTOR_SIDES / 2)],
    /// `ℓ/2`, or 0 when the polygon is scanned instead (ℓ odd or too large).
    lines: usize,
}

impl Sectors {
    fn new(directions: &[Vector2<f64>]) -> Self {
        let sides = directions.len();
        let mut sectors = Self {
            normals: [Vector2::zeros(); MAX_SECTOR_SIDES / 2],
            vertex: [0; 1 << (MAX_SECTOR_SIDES / 2)],
            lines: 0,
        };
        if !sides.is_multiple_of(2) || sides > MAX_SECTOR_SIDES {
            return sectors;
        }
        sectors.lines = sides / 2;
        for j in 0..sides / 2 {
            sectors.normals[j] = directions[j] - directions[j + 1];
        }
        // Each vertex lies half a step from its sector's bisectors.
        for (m, v) in directions.iter().enumerate() {
            sectors.vertex[sectors.pattern(v)] = m as u16;
        }
        sectors
    }

    #[inline(always)]
    fn pattern(&self, a: &Vector2<f64>) -> usize {
        let mut bits = 0;
        for (j, n) in self.normals[..self.lines].iter().enumerate() {
            bits |= usize::from(a.dot(n) >= 0.0) << j;
        }
        bits
    }

    /// The maximising vertex for ℓ = 2·`LINES`.
    #[inline(always)]
    fn vertex_of<const LINES: usize>(&self, a: &Vector2<f64>) -> usize {
        let mut bits = 0;
        for (j, n) in self.normals[..LINES].iter().enumerate() {
            bits |= usize::from(a.dot(n) >= 0.0) << j;
        }
        usize::from(self.vertex[bits])
    }
}

/// The iterate of Wolfe's algorithm: `x = Σ_j w_j p_j`, `p_j = z_j − g`.
#[derive(Clone, Copy)]
pub(crate) struct Atoms {
    len: usize,
    point: [Vector6; MAX_ATOMS],
    weight: [f64; MAX_ATOMS],
    /// Row of `choices` holding this atom's vertices; `None` for `β = 0`.
    slot: [Option<usize>; MAX_ATOMS],
    /// The Gram–Schmidt factors of `p_j − p_0`, kept from one minor cycle
    /// to the next.
    factor: Factor,
}

/// Twice-iterated Gram–Schmidt of the offsets `p_{j+1} − p_0` of the atoms:
/// `offset_j = Σ_{i ≤ j} r[i][j] q_i`. Column `j` depends on atoms
/// `0..=j + 1` alone, so it stays valid while those do, and a new atom adds
/// one column instead of refactoring all.
#[derive(Clone, Copy)]
struct Factor {
    q: [Vector6; MAX_ATOMS - 1],
    r: [[f64; MAX_ATOMS - 1]; MAX_ATOMS - 1],
    /// Leading columns computed for the current atoms.
    columns: usize,
}

impl Atoms {
    fn origin(g: &Vector6) -> Self {
        let mut atoms = Self {
            len: 1,
            point: [Vector6::zeros(); MAX_ATOMS],
            weight: [0.0; MAX_ATOMS],
            slot: [None; MAX_ATOMS],
            factor: Factor {
                q: [Vector6::zeros(); MAX_ATOMS - 1],
                r: [[0.0; MAX_ATOMS - 1]; MAX_ATOMS - 1],
                columns: 0,
            },
        };
        atoms.point[0] = -g;
        atoms.weight[0] = 1.0;
        atoms
    }

    fn free_slot(&self) -> usize {
        let used = &self.slot[..self.len];
        (0..MAX_ATOMS)
            .find(|s| !used.contains(&Some(*s)))
            .expect("at most MAX_ATOMS - 1 atoms when a slot is requested")
    }

    fn push(&mut self, point: Vector6, slot: usize) {
        self.point[self.len] = point;
        self.weight[self.len] = 0.0;
        self.slot[self.len] = Some(slot);
        self.len += 1;
    }

    fn remove(&mut self, j: usize) {
        // Atom j is replaced by the last: columns past j − 1 involve it.
        self.factor.columns = self.factor.columns.min(j.saturating_sub(1));
        self.len -= 1;
        self.point.swap(j, self.len);
        self.weight.swap(j, self.len);
        self.slot.swap(j, self.len);
    }

    /// `x = z − g`, the iterate.
    pub(crate) fn iterate(&self) -> Vector6 {
        self.point[..self.len]
            .iter()
            .zip(&self.weight[..self.len])
            .fold(Vector6::zeros(), |x, (p, w)| x + p * *w)
    }

    /// One major step's minor cycles (Wolfe 1976): move to the affine
    /// minimiser of the atoms, stepping back to the hull and dropping atoms
    /// whenever it leaves it. `false` when the atoms are numerically
    /// affinely dependent.
    fn minor_cycles(&mut self) -> bool {
        let mut alpha = [0.0; MAX_ATOMS];
        loop {
            let n = self.len;
            if !affine_minimizer(&self.point[..n], &mut self.factor, &mut alpha[..n]) {
                return false;
            }
            if alpha[..n].iter().all(|&a| a > 0.0) {
                self.weight[..n].copy_from_slice(&alpha[..n]);
                return true;
            }
            // The largest step towards α that keeps every weight ≥ 0.
            let (mut theta, mut leaving) = (f64::INFINITY, 0);
            for (j, (&w, &a)) in self.weight[..n].iter().zip(&alpha[..n]).enumerate() {
                if a <= 0.0 {
                    let t = if w > a { w / (w - a) } else { 0.0 };
                    if t < theta {
                        (theta, leaving) = (t, j);
                    }
                }
            }
            for (w, a) in self.weight[..n].iter_mut().zip(&alpha[..n]) {
                *w = (1.0 - theta) * *w + theta * a;
            }
            self.weight[leaving] = 0.0;
            for j in (0..n).rev() {
                if self.weight[j] <= 0.0 {
                    self.remove(j);
                }
            }
            let total: f64 = self.weight[..self.len].iter().sum();
            self.weight[..self.len].iter_mut().for_each(|w| *w /= total);
        }
    }
}

/// Weights `α` (`Σα = 1`) of the point of `aff{p_j}` nearest the origin, by
/// twice-iterated Gram–Schmidt on `p_j − p_0`, extending `factor` from its
/// valid columns; `false` when the points are numerically affinely
/// dependent.
fn affine_minimizer(points: &[Vector6], factor: &mut Factor, alpha: &mut [f64]) -> bool {
    let base = points[0];
    let m = points.len() - 1;
    let Factor { q, r, columns } = factor;
    for j in *columns..m {
        *columns = j;
        for row in r[..j].iter_mut() {
            row[j] = 0.0;
        }
        let mut v = points[j + 1] - base;
        let offset = v.norm();
        for _ in 0..2 {
            for i in 0..j {
                let c = q[i].dot(&v);
                r[i][j] += c;
                v -= q[i] * c;
            }
        }
        let height = v.norm();
        if height.is_nan() || height <= DEPENDENCE_EPSILON * offset {
            return false;
        }
        r[j][j] = height;
        q[j] = v / height;
    }
    *columns = m;
    // Minimise ‖base + Σ c_j (p_{j+1} − base)‖: R c = −Qᵀ base.
    let mut c = [0.0; MAX_ATOMS - 1];
    for j in (0..m).rev() {
        let tail: f64 = (j + 1..m).map(|i| r[j][i] * c[i]).sum();
        c[j] = (-q[j].dot(&base) - tail) / r[j][j];
    }
    alpha[0] = 1.0 - c[..m].iter().sum::<f64>();
    alpha[1..].copy_from_slice(&c[..m]);
    true
}

/// How an iteration ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// `‖x‖ ≤ tolerance`: `g ∈ Z` up to the tolerance.
    Reached,
    /// A support point certified `dist(g, Z) > tolerance` (only when asked
    /// to stop there).
    Separated,
    /// Wolfe's optimality test holds: `x` is the minimum-norm point of
    /// `Z − g` to working precision.
    Optimal,
    /// Rounding stopped progress (dependent atoms, a non-decreasing norm or
    /// NaN) before the optimality test held.
    Stalled,
    /// The iteration cap, or a full corral of `rank + 1` atoms.
    Capped,
    /// The query's deadline passed.
    OutOfTime,
}

/// What [`PolygonSum::nearest`] is asked.
#[derive(Clone, Copy)]
pub(crate) struct Query<'a> {
    /// Polygons of the sum to use, the first `k`.
    pub(crate) k: usize,
    /// Affine dimension of the sum: a corral of `rank + 1` atoms is full.
    pub(crate) rank: usize,
    /// `g`.
    pub(crate) target: &'a Vector6,
    pub(crate) tolerance: f64,
    pub(crate) max_iterations: u32,
    pub(crate) stop_on_separation: bool,
    pub(crate) warm: bool,
    /// Checked before each support evaluation.
    pub(crate) deadline: Option<Instant>,
}

/// Where an iteration ended.
#[derive(Clone, Copy)]
pub(crate) struct Outcome {
    pub(crate) end: End,
    pub(crate) atoms: Atoms,
    /// Support-function evaluations.
    pub(crate) iterations: u32,
    /// `‖x‖` of the final iterate.
    pub(crate) residual: f64,
    /// The best certified lower bound on `dist(g, Z)` (negative infinity
    /// when none was found).
    pub(crate) separation: f64,
}

/// `Z = Σ_i B_i P_i` for up to `max_contacts` polygons of up to `max_sides`
/// sides, with every buffer sized at construction.
pub(crate) struct PolygonSum {
    max_contacts: usize,
    /// `B_i`.
    pub(crate) bases: Vec<Matrix6x2<f64>>,
    /// `M`, when set: the sum is `Z = M Σ_i B_i P_i`, so that a solver need
    /// not form each `M B_i` (support and points are found in the `B_i`'s
    /// space and mapped once).
    pub(crate) image: Option<Matrix6>,
    /// `ρ_i`, the vertex radius of `P_i`.
    pub(crate) radii: Vec<f64>,
    /// `(cos 2πm/ℓ, sin 2πm/ℓ)`: the ℓ-gon's vertex directions (eqs 14–16).
    vertex_directions: Vec<Vector2<f64>>,
    /// The ℓ `vertex_directions` currently holds (0 before the first use).
    sides: usize,
    /// The sectors of the current ℓ-gon's vertices.
    sectors: Sectors,
    /// `choices[a · max_contacts + i]`: the vertex of `P_i` in atom slot `a`.
    choices: Vec<u16>,
    /// The slots of the last iteration's final atoms, the warm start of the
    /// next ([`nearest`](Self::nearest) with `warm`).
    last: [Option<usize>; MAX_ATOMS],
}

impl PolygonSum {
    pub(crate) fn new(max_contacts: usize, max_sides: usize) -> Self {
        assert!(
            max_sides <= usize::from(u16::MAX),
            "pyramids of at most 65535 sides"
        );
        Self {
            max_contacts,
            bases: vec![Matrix6x2::zeros(); max_contacts],
            image: None,
            radii: vec![0.0; max_contacts],
            vertex_directions: vec![Vector2::zeros(); max_sides],
            sides: 0,
            sectors: Sectors::new(&[]),
            choices: vec![0; MAX_ATOMS * max_contacts],
            last: [None; MAX_ATOMS],
        }
    }

    /// Checks `k` contacts of `sides`-gons against the capacity and sets the
    /// vertex directions.
    pub(crate) fn prepare(&mut self, k: usize, sides: usize) -> Result<(), SolverError> {
        if k > self.max_contacts {
            return Err(SolverError::Backend(format!(
                "{k} contacts exceed the capacity of {}",
                self.max_contacts
            )));
        }
        if sides < 3 || sides > self.vertex_directions.len() {
            return Err(SolverError::Backend(format!(
                "pyramid of {sides} sides outside 3..={}",
                self.vertex_directions.len()
            )));
        }
        if sides != self.sides {
            // Rows hold choices beyond the last `k` from older iterations,
            // which a warm start with more contacts reads: none may name a
            // vertex of the old polygon.
            self.last = [None; MAX_ATOMS];
            self.choices.fill(0);
            let step = std::f64::consts::TAU / sides as f64;
            for (m, v) in self.vertex_directions[..sides].iter_mut().enumerate() {
                let (sin, cos) = (step * m as f64).sin_cos();
                *v = Vector2::new(cos, sin);
            }
            self.sides = sides;
            self.sectors = Sectors::new(&self.vertex_directions[..sides]);
        }
        Ok(())
    }

    pub(crate) fn sides(&self) -> usize {
        self.sides
    }

    /// The support point of `Z` (first `k` polygons) in direction `d`,
    /// recording each polygon's maximising vertex in row `slot` of `choices`.
    fn support(&mut self, k: usize, d: &Vector6, slot: usize) -> Vector6 {
        match self.image {
            // ⟨d, M z⟩ = ⟨Mᵀd, z⟩.
            Some(map) => map * self.support_of(k, &map.tr_mul(d), slot),
            None => self.support_of(k, d, slot),
        }
    }

    /// The support point of `Σ_i B_i P_i` in direction `d`, with the
    /// choices as [`support`](Self::support) records them.
    fn support_of(&mut self, k: usize, d: &Vector6, slot: usize) -> Vector6 {
        match self.sectors.lines {
            2 => self.support_with(k, d, slot, |s, _, a| s.vertex_of::<2>(a)),
            4 => self.support_with(k, d, slot, |s, _, a| s.vertex_of::<4>(a)),
            0 => self.support_with(k, d, slot, |_, directions, a| {
                let (mut best, mut best_value) = (0, f64::NEG_INFINITY);
                for (m, v) in directions.iter().enumerate() {
                    let value = a.dot(v);
                    if value > best_value {
                        (best, best_value) = (m, value);
                    }
                }
                best
            }),
            _ => self.support_with(k, d, slot, |s, _, a| usize::from(s.vertex[s.pattern(a)])),
        }
    }

    /// [`support`](Self::support) with `best(sectors, directions, a)` the
    /// vertex maximising `⟨a, v_m⟩`.
    #[inline(always)]
    fn support_with(
        &mut self,
        k: usize,
        d: &Vector6,
        slot: usize,
        best: impl Fn(&Sectors, &[Vector2<f64>], &Vector2<f64>) -> usize,
    ) -> Vector6 {
        let directions = &self.vertex_directions[..self.sides];
        let row = &mut self.choices[slot * self.max_contacts..][..k];
        let mut z = Vector6::zeros();
        for ((w, &radius), choice) in self.bases[..k].iter().zip(&self.radii[..k]).zip(row) {
            if radius == 0.0 {
                *choice = 0;
                continue;
            }
            let m = best(&self.sectors, directions, &w.tr_mul(d));
            *choice = m as u16;
            z += w * (directions[m] * radius);
        }
        z
    }

    /// The point of `Z` whose vertex choices row `slot` holds.
    fn point_of(&self, k: usize, slot: usize) -> Vector6 {
        let directions = &self.vertex_directions[..self.sides];
        let row = &self.choices[slot * self.max_contacts..][..k];
        let mut z = Vector6::zeros();
        for ((w, &radius), &choice) in self.bases[..k].iter().zip(&self.radii[..k]).zip(row) {
            z += w * (directions[usize::from(choice)] * radius);
        }
        match self.image {
            Some(map) => map * z,
            None => z,
        }
    }

    /// Wolfe's iteration on `Z − g` (the first `k` polygons), from the atom
    /// `β = 0` and, if `warm`, the vertex choices of the last iteration's
    /// final atoms re-evaluated in this `Z` (any choice of vertices is a
    /// point of `Z`; one that does not bring the iterate closer is dropped).
    /// It stops when `‖x‖ ≤ tolerance`, at optimality, when it stalls, after
    /// `max_iterations` support evaluations, with `rank + 1` atoms or once
    /// the deadline passed (each iterate is a point of `Z`); and,
    /// if `stop_on_separation`, as soon as a support point certifies
    /// `dist(g, Z) > tolerance`. Its final atoms are the next warm start.
    pub(crate) fn nearest(&mut self, query: &Query) -> Outcome {
        let out = self.iterate(query);
        self.last = [None; MAX_ATOMS];
        self.last[..out.atoms.len].copy_from_slice(&out.atoms.slot[..out.atoms.len]);
        out
    }

    fn iterate(&mut self, query: &Query) -> Outcome {
        let Query {
            k,
            rank,
            target: g,
            tolerance,
            max_iterations,
            stop_on_separation,
            warm,
            deadline,
        } = *query;
        let mut out = Outcome {
            end: End::Capped,
            atoms: Atoms::origin(g),
            iterations: 0,
            residual: g.norm(),
            separation: f64::NEG_INFINITY,
        };
        let mut x = -g;
        let mut largest = x.norm();
        if warm {
            for slot in self.last.into_iter().flatten() {
                if out.atoms.len > rank {
                    break;
                }
                let point = self.point_of(k, slot) - g;
                if x.dot(&point) >= x.norm_squared() {
                    continue;
                }
                largest = largest.max(point.norm());
                let before = out.atoms;
                out.atoms.push(point, slot);
                let next = if out.atoms.minor_cycles() {
                    out.atoms.iterate()
                } else {
                    x
                };
                if next.norm().is_nan() || next.norm() >= x.norm() {
                    out.atoms = before;
                } else {
                    x = next;
                }
            }
        }
        loop {
            let norm = x.norm();
            out.residual = norm;
            if norm <= tolerance {
                out.end = End::Reached;
                return out;
            }
            if out.iterations >= max_iterations || out.atoms.len > rank {
                out.end = End::Capped;
                return out;
            }
            if out.iterations >= ITERATIONS_PAST_DEADLINE
                && deadline.is_some_and(|d| Instant::now() >= d)
            {
                out.end = End::OutOfTime;
                return out;
            }
            out.iterations += 1;
            let slot = out.atoms.free_slot();
            let point = self.support(k, &-x, slot) - g;
            let lower = x.dot(&point) / norm;
            out.separation = out.separation.max(lower);
            if stop_on_separation && lower > tolerance {
                out.end = End::Separated;
                return out;
            }
            largest = largest.max(point.norm());
            if norm - lower <= WOLFE_EPSILON * largest {
                out.end = End::Optimal;
                return out;
            }
            let before = out.atoms;
            out.atoms.push(point, slot);
            let next = if out.atoms.minor_cycles() {
                out.atoms.iterate()
            } else {
                x
            };
            // Wolfe's iterates strictly decrease in norm; anything else is
            // rounding (or NaN).
            if next.norm().is_nan() || next.norm() >= norm {
                out.atoms = before;
                out.end = End::Stalled;
                return out;
            }
            x = next;
        }
    }

    /// `β_i = scale · Σ_a w_a ρ_i v_{m(a, i)}` of the atoms, for the first
    /// `k` polygons, appended to `beta`.
    pub(crate) fn write_beta(&self, atoms: &Atoms, k: usize, scale: f64, beta: &mut Vec<[f64; 2]>) {
        let directions = &self.vertex_directions[..self.sides];
        for (i, radius) in self.radii[..k].iter().enumerate() {
            let mut b = Vector2::zeros();
            for (slot, weight) in atoms.slot[..atoms.len].iter().zip(&atoms.weight) {
                if let Some(slot) = slot {
                    let m = self.choices[slot * self.max_contacts + i];
                    b += directions[usize::from(m)] * (weight * radius);
                }
            }
            beta.push([b.x * scale, b.y * scale]);
        }
    }
}
