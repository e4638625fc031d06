//! A uniform hash grid over a growing set of points, for Poisson-disk
//! acceptance and nearest-neighbour queries within one cell size.

use nalgebra::Point3;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

const NONE: u32 = u32::MAX;

/// Points bucketed by cubic cells of edge `cell`. Queries look at the 27
/// cells around a position, so they see every stored point closer than `cell`.
pub(crate) struct PointGrid {
    inv_cell: f64,
    /// First stored point of each occupied cell; the rest follow via `next`.
    heads: HashMap<u64, u32, BuildHasherDefault<CellHasher>>,
    next: Vec<u32>,
    points: Vec<Point3<f64>>,
    ids: Vec<u32>,
}

impl PointGrid {
    pub(crate) fn new(cell: f64, capacity: usize) -> Self {
        assert!(cell > 0.0 && cell.is_finite(), "grid cell must be positive");
        Self {
            inv_cell: 1.0 / cell,
            heads: HashMap::with_capacity_and_hasher(capacity, Default::default()),
            next: Vec::with_capacity(capacity),
            points: Vec::with_capacity(capacity),
            ids: Vec::with_capacity(capacity),
        }
    }

    fn cell_of(&self, p: &Point3<f64>) -> [i64; 3] {
        [0, 1, 2].map(|a| (p[a] * self.inv_cell).floor() as i64)
    }

    /// Packs 21 bits per axis; distant cells that collide only share a list.
    fn key([x, y, z]: [i64; 3]) -> u64 {
        const MASK: u64 = (1 << 21) - 1;
        ((x as u64 & MASK) << 42) | ((y as u64 & MASK) << 21) | (z as u64 & MASK)
    }

    pub(crate) fn insert(&mut self, p: Point3<f64>, id: u32) {
        let slot = self.points.len() as u32;
        let head = self
            .heads
            .entry(Self::key(self.cell_of(&p)))
            .or_insert(NONE);
        self.next.push(*head);
        *head = slot;
        self.points.push(p);
        self.ids.push(id);
    }

    /// Calls `visit(id, squared distance)` for stored points in the 27 cells
    /// around `p` until it returns `false`.
    fn visit_near(&self, p: &Point3<f64>, mut visit: impl FnMut(u32, f64) -> bool) {
        let [cx, cy, cz] = self.cell_of(p);
        for x in cx - 1..=cx + 1 {
            for y in cy - 1..=cy + 1 {
                for z in cz - 1..=cz + 1 {
                    let Some(&head) = self.heads.get(&Self::key([x, y, z])) else {
                        continue;
                    };
                    let mut slot = head;
                    while slot != NONE {
                        let s = slot as usize;
                        if !visit(self.ids[s], (self.points[s] - p).norm_squared()) {
                            return;
                        }
                        slot = self.next[s];
                    }
                }
            }
        }
    }

    /// Whether a stored point lies strictly closer than `radius` (≤ cell) to `p`.
    pub(crate) fn any_closer_than(&self, p: &Point3<f64>, radius: f64) -> bool {
        let r2 = radius * radius;
        let mut found = false;
        self.visit_near(p, |_, d2| {
            found = d2 < r2;
            !found
        });
        found
    }

    /// The id of the stored point nearest to `p` among the 27 surrounding
    /// cells: the true nearest whenever it lies within one cell size.
    pub(crate) fn nearest(&self, p: &Point3<f64>) -> Option<u32> {
        let mut best: Option<(f64, u32)> = None;
        self.visit_near(p, |id, d2| {
            if best.is_none_or(|(b, _)| d2 < b) {
                best = Some((d2, id));
            }
            true
        });
        best.map(|(_, id)| id)
    }
}

/// A multiplicative hash for packed cell keys (SipHash is several times slower
/// and its flooding resistance buys nothing here).
#[derive(Default)]
pub(crate) struct CellHasher(u64);

impl Hasher for CellHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, key: u64) {
        let h = (self.0 ^ key).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 29);
    }
}
