//! Dense grids of exact signed distance.

use crate::bvh::{MeshBvh, Nearest};
use crate::grid::{
    cell_gradient_bound, query_with_conservative_outside, trilinear, trilinear_hessian, GridSpec,
};
use crate::sign::BlockSigner;
use crate::triangle_queries::same_side_of_surface;
use crate::{BuildProgress, DistanceField, Slab};
use haptic_mesh::{Aabb, TriangleMesh};
use nalgebra::{Matrix3, Point3, Vector3};
use rayon::prelude::*;

/// Nodes per block edge when signing; blocks are signed independently.
const SIGN_BLOCK: u32 = 8;

/// How to sample a dense field.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DenseOptions {
    /// Nodes along the longest axis of the padded bounding box.
    pub resolution: u32,
    /// Margin around the mesh on every side, as a fraction of its longest side.
    /// The default 0.1 keeps a tool approaching from outside inside the grid.
    pub padding_fraction: f64,
}

impl Default for DenseOptions {
    fn default() -> Self {
        Self {
            resolution: 128,
            padding_fraction: 0.1,
        }
    }
}

/// Exact signed distances on a regular grid, interpolated trilinearly.
#[derive(Clone, Debug)]
pub struct DenseField {
    grid: GridSpec,
    /// `grid.bounds()`, kept for the lookups.
    grid_bounds: Aabb,
    values: Slab<f32>,
    lipschitz: f64,
    mesh_bounds: Aabb,
}

/// Field parts that fail validation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidField(pub String);

impl std::fmt::Display for InvalidField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidField {}

impl DenseField {
    /// Samples `mesh` on the grid `options` describe.
    pub fn build(
        mesh: &TriangleMesh,
        options: &DenseOptions,
        progress: &dyn BuildProgress,
    ) -> Self {
        let grid = GridSpec::covering(&mesh.aabb(), options.resolution, options.padding_fraction);
        let bvh = MeshBvh::new(mesh);
        Self::build_on_grid(&bvh, mesh.aabb(), grid, progress)
    }

    /// Bytes a dense field on `grid` holds while it is built: its values
    /// and the [`SeedLattice`] of exact nearest triangles, one per 8 nodes.
    pub fn bytes_on(grid: &GridSpec) -> u64 {
        let seeds = GridSpec {
            dims: grid.dims.map(|d| (d - 1) / 2 + 1),
            ..*grid
        };
        grid.bytes(size_of::<f32>())
            .saturating_add(seeds.bytes(size_of::<Nearest>()))
    }

    /// Samples the mesh behind `bvh` on `grid`.
    pub(crate) fn build_on_grid(
        bvh: &MeshBvh,
        mesh_bounds: Aabb,
        grid: GridSpec,
        progress: &dyn BuildProgress,
    ) -> Self {
        let [nx, ny, nz] = grid.dims;
        let seeds = SeedLattice::compute(bvh, &grid, progress);
        progress.stage("dense field", nz as u64);
        let slab_nodes = nx as usize * ny as usize * SIGN_BLOCK as usize;
        let mut values = vec![0f32; grid.node_count()];
        values.par_chunks_mut(slab_nodes).enumerate().for_each_init(
            BlockScratch::default,
            |scratch, (slab, out)| {
                let k0 = slab as u32 * SIGN_BLOCK;
                let k1 = (k0 + SIGN_BLOCK).min(nz);
                for j0 in (0..ny).step_by(SIGN_BLOCK as usize) {
                    for i0 in (0..nx).step_by(SIGN_BLOCK as usize) {
                        let lo = [i0, j0, k0];
                        let hi = [(i0 + SIGN_BLOCK).min(nx), (j0 + SIGN_BLOCK).min(ny), k1];
                        scratch.sample_block(bvh, &grid, &seeds, lo, hi);
                        for (local, &value) in scratch.signed.iter().enumerate() {
                            let [i, j, k] = scratch.node(local);
                            let index = grid.index(i, j, k) - grid.index(0, 0, k0);
                            out[index] = value as f32;
                        }
                    }
                }
                progress.advance((k1 - k0) as u64);
            },
        );
        let lipschitz = dense_lipschitz(&grid, &values);
        Self {
            grid,
            grid_bounds: grid.bounds(),
            values: Slab::from_vec(values),
            lipschitz,
            mesh_bounds,
        }
    }

    /// Reassembles a field from stored parts, checking that they agree.
    pub fn from_parts(
        grid: GridSpec,
        values: Slab<f32>,
        lipschitz: f64,
        mesh_bounds: Aabb,
    ) -> Result<Self, InvalidField> {
        if grid.dims.iter().any(|&d| d < 2) {
            return Err(InvalidField(format!(
                "grid dims {:?}: need at least 2 per axis",
                grid.dims
            )));
        }
        if !(grid.voxel_size.is_finite() && grid.voxel_size > 0.0) {
            return Err(InvalidField(format!(
                "voxel size {} is not positive",
                grid.voxel_size
            )));
        }
        if values.len() != grid.node_count() {
            return Err(InvalidField(format!(
                "{} samples for a {:?} grid of {} nodes",
                values.len(),
                grid.dims,
                grid.node_count()
            )));
        }
        if !(lipschitz.is_finite() && lipschitz > 0.0) {
            return Err(InvalidField(format!(
                "Lipschitz bound {lipschitz} is not positive"
            )));
        }
        Ok(Self {
            grid,
            grid_bounds: grid.bounds(),
            values,
            lipschitz,
            mesh_bounds,
        })
    }

    pub fn grid(&self) -> &GridSpec {
        &self.grid
    }

    /// Samples, x fastest.
    pub fn values(&self) -> &[f32] {
        &self.values
    }

    pub fn mesh_bounds(&self) -> Aabb {
        self.mesh_bounds
    }

    /// Value and gradient inside the grid box.
    #[inline]
    pub(crate) fn interpolate(&self, p: &Point3<f64>) -> (f64, Vector3<f64>) {
        let (corners, t) = self.cell(p);
        trilinear(&corners, &t, self.grid.voxel_size)
    }

    /// Value, gradient and Hessian of the interpolant inside the grid box.
    pub(crate) fn interpolate_hessian(&self, p: &Point3<f64>) -> (f64, Vector3<f64>, Matrix3<f64>) {
        let (corners, t) = self.cell(p);
        let h = self.grid.voxel_size;
        let (value, gradient) = trilinear(&corners, &t, h);
        (value, gradient, trilinear_hessian(&corners, &t, h))
    }

    /// The corner values of the cell holding `p` and `p`'s place in it.
    #[inline]
    fn cell(&self, p: &Point3<f64>) -> ([f32; 8], Vector3<f64>) {
        let ([i, j, k], t) = self.grid.locate(p);
        let base = self.grid.index(i, j, k);
        let sx = 1;
        let sy = self.grid.dims[0] as usize;
        let sz = sy * self.grid.dims[1] as usize;
        let v = &self.values;
        let corners = [
            v[base],
            v[base + sx],
            v[base + sy],
            v[base + sx + sy],
            v[base + sz],
            v[base + sx + sz],
            v[base + sy + sz],
            v[base + sx + sy + sz],
        ];
        (corners, t)
    }
}

impl DistanceField for DenseField {
    #[inline]
    fn value(&self, p: &Point3<f64>) -> f64 {
        self.value_gradient(p).0
    }

    /// The trilinear interpolant inside the grid, a conservative bound outside
    /// (`query_with_conservative_outside`).
    #[inline]
    fn value_gradient(&self, p: &Point3<f64>) -> (f64, Vector3<f64>) {
        query_with_conservative_outside(&self.grid_bounds, &self.mesh_bounds, p, |q| {
            self.interpolate(q)
        })
    }

    /// The interpolant's own Hessian inside the grid; beyond it, zero.
    fn value_gradient_hessian(&self, p: &Point3<f64>) -> (f64, Vector3<f64>, Matrix3<f64>) {
        if self.grid_bounds.contains(p) {
            return self.interpolate_hessian(p);
        }
        let (value, gradient) = self.value_gradient(p);
        (value, gradient, Matrix3::zeros())
    }

    fn bounds(&self) -> Aabb {
        self.grid_bounds
    }

    fn lipschitz_bound(&self) -> f64 {
        self.lipschitz
    }

    /// The grid's box: beyond it a value is at least the distance to the
    /// mesh's box inside it (`query_with_conservative_outside`).
    fn positive_beyond(&self) -> Option<Aabb> {
        Some(self.grid_bounds)
    }
}

/// The largest gradient bound over all cells, at least 1 (the true distance's).
fn dense_lipschitz(grid: &GridSpec, values: &[f32]) -> f64 {
    let [nx, ny, nz] = grid.dims;
    let (sy, sz) = (nx as usize, nx as usize * ny as usize);
    (0..nz - 1)
        .into_par_iter()
        .map(|k| {
            let mut bound = 1.0f64;
            for j in 0..ny - 1 {
                for i in 0..nx - 1 {
                    let b = grid.index(i, j, k);
                    let corners = [
                        values[b],
                        values[b + 1],
                        values[b + sy],
                        values[b + 1 + sy],
                        values[b + sz],
                        values[b + 1 + sz],
                        values[b + sy + sz],
                        values[b + 1 + sy + sz],
                    ];
                    bound = bound.max(cell_gradient_bound(&corners, grid.voxel_size));
                }
            }
            bound
        })
        .reduce(|| 1.0, f64::max)
}

/// Nodes closer to the surface than this many voxels get an exact query.
const EXACT_BAND_VOXELS: f64 = 4.0;
/// The plane of a node's nearest triangle decides its side only where it
/// explains both nodes' distances to within this many voxels.
pub(crate) const PLANE_TOLERANCE_VOXELS: f64 = 0.05;
/// A propagated distance this many voxels above the blend of the exact seeds
/// around it marks a medial-axis kink and earns an exact query.
const KINK_VOXELS: f64 = 0.1;

/// Exact nearest triangles at every node whose coordinates are all even.
///
/// Far from the surface an exact query costs tens of triangle tests (the
/// query ball grazes many leaf boxes), so only one node in eight pays it; the
/// others take the best of their surrounding seeds' triangles, which is exact
/// wherever the nearest feature does not change within two voxels.
struct SeedLattice {
    dims: [u32; 3],
    nearest: Vec<Nearest>,
}

impl SeedLattice {
    fn compute(bvh: &MeshBvh, grid: &GridSpec, progress: &dyn BuildProgress) -> Self {
        let dims = grid.dims.map(|d| (d - 1) / 2 + 1);
        progress.stage("seed lattice", dims[2] as u64);
        let row = dims[0] as usize;
        let mut nearest = vec![Nearest::NONE; dims.iter().map(|&d| d as usize).product()];
        nearest
            .par_chunks_mut(row * dims[1] as usize)
            .enumerate()
            .for_each(|(k, layer)| {
                for j in 0..dims[1] as usize {
                    // Along a row, each seed's query is bounded by the distance
                    // to the previous seed's triangle.
                    let mut hint: Option<Nearest> = None;
                    for i in 0..row {
                        let q = grid.node_position(2 * i as u32, 2 * j as u32, 2 * k as u32);
                        let bound = hint.map_or(f64::INFINITY, |h| {
                            bvh.distance_squared_to(&q, &h) * (1.0 + 1e-12)
                        });
                        let found = bvh
                            .nearest_within(&q, bound)
                            .or_else(|| hint.map(|h| h.seen_at(bvh.distance_squared_to(&q, &h))))
                            .expect("a field is built from a non-empty mesh");
                        layer[i + row * j] = found;
                        hint = Some(found);
                    }
                }
                progress.advance(1);
            });
        Self { dims, nearest }
    }

    /// Calls `visit(seed index, weight, seed position)` for the seeds at the
    /// corners of the seed cell holding grid node `node`, with their
    /// trilinear weights (a node on a seed-lattice face or edge has fewer).
    #[inline]
    fn for_each_cell_seed(
        &self,
        grid: &GridSpec,
        node: [u32; 3],
        mut visit: impl FnMut(usize, f64, Point3<f64>),
    ) {
        for corner in 0..8u32 {
            let mut s = [0u32; 3];
            let mut weight = 1.0;
            for axis in 0..3 {
                let (low, odd) = (node[axis] / 2, node[axis] % 2);
                let upper = (corner >> axis) & 1;
                if odd == 0 && upper == 1 {
                    weight = 0.0;
                }
                s[axis] = low + upper;
                weight *= if odd == 1 { 0.5 } else { 1.0 };
            }
            if weight == 0.0 || (0..3).any(|a| s[a] >= self.dims[a]) {
                continue;
            }
            let index = s[0] as usize
                + self.dims[0] as usize * (s[1] as usize + self.dims[1] as usize * s[2] as usize);
            visit(
                index,
                weight,
                grid.node_position(2 * s[0], 2 * s[1], 2 * s[2]),
            );
        }
    }

    /// The trilinear blend of the exact distances at the seeds around `node`.
    #[inline]
    fn blended_distance(&self, grid: &GridSpec, node: [u32; 3]) -> f64 {
        let (mut sum, mut total) = (0.0, 0.0);
        self.for_each_cell_seed(grid, node, |index, weight, _| {
            sum += weight * self.nearest[index].distance_squared.sqrt();
            total += weight;
        });
        sum / total
    }

    /// A lower bound on the distance at `q` (grid node `node`): distance is
    /// 1-Lipschitz, so it is at least `d(s) − |s − q|` for each seed `s`.
    #[inline]
    fn distance_lower_bound(&self, grid: &GridSpec, node: [u32; 3], q: &Point3<f64>) -> f64 {
        let mut bound = 0.0f64;
        self.for_each_cell_seed(grid, node, |index, _, seed| {
            bound = bound.max(self.nearest[index].distance_squared.sqrt() - (seed - q).norm());
        });
        bound
    }

    /// The nearest of the seeds' triangles around grid node `node`.
    #[inline]
    fn best_candidate(&self, bvh: &MeshBvh, q: &Point3<f64>, node: [u32; 3]) -> Nearest {
        // The seeds within two voxels of the node along each axis.
        let range = node.map(|c| {
            (
                c.saturating_sub(2) / 2,
                (c + 2) / 2 - c.saturating_sub(2) / 2,
            )
        });
        let mut best = Nearest::NONE;
        let mut tried = [u32::MAX; 27];
        let mut tried_count = 0;
        for dz in 0..=range[2].1 {
            for dy in 0..=range[1].1 {
                for dx in 0..=range[0].1 {
                    let s = [range[0].0 + dx, range[1].0 + dy, range[2].0 + dz];
                    if (0..3).any(|a| s[a] >= self.dims[a]) {
                        continue;
                    }
                    let index = s[0] as usize
                        + self.dims[0] as usize
                            * (s[1] as usize + self.dims[1] as usize * s[2] as usize);
                    let candidate = self.nearest[index];
                    if tried[..tried_count].contains(&candidate.triangle) {
                        continue;
                    }
                    tried[tried_count] = candidate.triangle;
                    tried_count += 1;
                    let d = bvh.distance_squared_to(q, &candidate);
                    if d < best.distance_squared {
                        best = candidate.seen_at(d);
                    }
                }
            }
        }
        best
    }
}

/// Per-thread buffers for sampling one block.
#[derive(Default)]
struct BlockScratch {
    lo: [u32; 3],
    dims: [usize; 3],
    nearest: Vec<Nearest>,
    /// Whether a node's nearest triangle came from an exact query.
    exact: Vec<bool>,
    unsigned: Vec<f64>,
    inside: Vec<bool>,
    signed: Vec<f64>,
    signer: BlockSigner,
}

impl BlockScratch {
    fn node(&self, local: usize) -> [u32; 3] {
        let i = local % self.dims[0];
        let j = (local / self.dims[0]) % self.dims[1];
        let k = local / (self.dims[0] * self.dims[1]);
        [
            self.lo[0] + i as u32,
            self.lo[1] + j as u32,
            self.lo[2] + k as u32,
        ]
    }

    /// Signed distances at the nodes `lo..hi` (exclusive).
    ///
    /// A node takes the nearest of the triangles nearest to the (up to eight)
    /// seeds around it; within [`EXACT_BAND_VOXELS`] of the surface that
    /// distance only bounds an exact BVH query.
    fn sample_block(
        &mut self,
        bvh: &MeshBvh,
        grid: &GridSpec,
        seeds: &SeedLattice,
        lo: [u32; 3],
        hi: [u32; 3],
    ) {
        self.lo = lo;
        self.dims = [0, 1, 2].map(|a| (hi[a] - lo[a]) as usize);
        let n: usize = self.dims.iter().product();
        let exact_band = EXACT_BAND_VOXELS * grid.voxel_size;
        self.nearest.clear();
        self.exact.clear();
        for local in 0..n {
            let node = self.node(local);
            let q = grid.node_position(node[0], node[1], node[2]);
            let best = seeds.best_candidate(bvh, &q, node);
            // Decided on a lower bound: the candidate's distance may overstate
            // the truth, and a node near the surface must not miss its query.
            let exact = seeds.distance_lower_bound(grid, node, &q) < exact_band;
            self.nearest.push(if exact {
                bvh.nearest_within(&q, best.distance_squared * (1.0 + 1e-12))
                    .unwrap_or(best)
            } else {
                best
            });
            self.exact.push(exact);
        }
        // Sweep the block forwards and backwards: a node also tries its
        // neighbours' triangles, which carries a nearest triangle that no seed
        // around a node found into it from the nodes that did.
        let strides = [1, self.dims[0], self.dims[0] * self.dims[1]];
        for forward in [true, false] {
            for step in 0..n {
                let local = if forward { step } else { n - 1 - step };
                if self.exact[local] {
                    continue;
                }
                let node = self.node(local);
                let q = grid.node_position(node[0], node[1], node[2]);
                for axis in 0..3 {
                    let offset = (node[axis] - lo[axis]) as usize;
                    let neighbour = if forward {
                        (offset > 0).then(|| local - strides[axis])
                    } else {
                        (offset + 1 < self.dims[axis]).then(|| local + strides[axis])
                    };
                    if let Some(neighbour) = neighbour {
                        let candidate = self.nearest[neighbour];
                        if candidate.triangle != self.nearest[local].triangle {
                            let d = bvh.distance_squared_to(&q, &candidate);
                            if d < self.nearest[local].distance_squared {
                                self.nearest[local] = candidate.seen_at(d);
                            }
                        }
                    }
                }
            }
        }
        // Where the propagated distance stands clearly above the blend of the
        // exact seeds around it, the distance has a concave kink nearby (a
        // medial axis): the nearest feature changes there and propagation may
        // have missed it, so the node gets an exact query after all.
        let kink = KINK_VOXELS * grid.voxel_size;
        for local in 0..n {
            if self.exact[local] {
                continue;
            }
            let node = self.node(local);
            let propagated = self.nearest[local].distance_squared.sqrt();
            if propagated - seeds.blended_distance(grid, node) > kink {
                let q = grid.node_position(node[0], node[1], node[2]);
                let bound = self.nearest[local].distance_squared * (1.0 + 1e-12);
                if let Some(found) = bvh.nearest_within(&q, bound) {
                    self.nearest[local] = found;
                }
            }
        }
        self.unsigned.clear();
        self.unsigned
            .extend(self.nearest.iter().map(|n| n.distance_squared.sqrt()));
        self.inside.clear();
        self.inside.resize(n, false);
        let (lo, dims, nearest) = (self.lo, self.dims, &self.nearest);
        let unsigned = &self.unsigned;
        let tolerance = PLANE_TOLERANCE_VOXELS * grid.voxel_size;
        let position = |local: usize| {
            let i = local % dims[0];
            let j = (local / dims[0]) % dims[1];
            let k = local / (dims[0] * dims[1]);
            grid.node_position(lo[0] + i as u32, lo[1] + j as u32, lo[2] + k as u32)
        };
        self.signer.sign(
            self.dims,
            &self.unsigned,
            grid.voxel_size,
            |local| bvh.winding_number(&position(local)),
            |local, other| {
                same_side_of_surface(
                    (
                        &position(local),
                        unsigned[local],
                        bvh.corners_of(&nearest[local]),
                    ),
                    (
                        &position(other),
                        unsigned[other],
                        bvh.corners_of(&nearest[other]),
                    ),
                    tolerance,
                )
            },
            &mut self.inside,
        );
        self.signed.clear();
        self.signed.extend(
            self.unsigned
                .iter()
                .zip(&self.inside)
                .map(|(&d, &inside)| if inside { -d } else { d }),
        );
    }
}
