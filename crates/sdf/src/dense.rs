//! Dense grids of exact signed distance.

use crate::bvh::{MeshBvh, Nearest};
use crate::grid::{cell_gradient_bound, query_with_conservative_outside, trilinear, GridSpec};
use crate::sign::BlockSigner;
use crate::triangle_queries::same_side_of_plane;
use crate::{BuildProgress, DistanceField, Slab};
use haptic_mesh::{Aabb, TriangleMesh};
use nalgebra::{Point3, Vector3};
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

    /// Samples the mesh behind `bvh` on `grid`.
    pub fn build_on_grid(
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
        trilinear(&corners, &t, self.grid.voxel_size)
    }
}

impl DistanceField for DenseField {
    #[inline]
    fn value(&self, p: &Point3<f64>) -> f64 {
        self.value_gradient(p).0
    }

    /// The trilinear interpolant inside the grid, a conservative bound outside
    /// ([`query_with_conservative_outside`]).
    #[inline]
    fn value_gradient(&self, p: &Point3<f64>) -> (f64, Vector3<f64>) {
        query_with_conservative_outside(&self.grid.bounds(), &self.mesh_bounds, p, |q| {
            self.interpolate(q)
        })
    }

    fn bounds(&self) -> Aabb {
        self.grid.bounds()
    }

    fn lipschitz_bound(&self) -> f64 {
        self.lipschitz
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
        let exact_band_squared = (EXACT_BAND_VOXELS * grid.voxel_size).powi(2);
        self.nearest.clear();
        for local in 0..n {
            let node = self.node(local);
            let q = grid.node_position(node[0], node[1], node[2]);
            let best = seeds.best_candidate(bvh, &q, node);
            let nearest = if best.distance_squared < exact_band_squared {
                bvh.nearest_within(&q, best.distance_squared * (1.0 + 1e-12))
                    .unwrap_or(best)
            } else {
                best
            };
            self.nearest.push(nearest);
        }
        self.unsigned.clear();
        self.unsigned
            .extend(self.nearest.iter().map(|n| n.distance_squared.sqrt()));
        self.inside.clear();
        self.inside.resize(n, false);
        let (lo, dims, nearest) = (self.lo, self.dims, &self.nearest);
        let tolerance = 1e-6 * grid.voxel_size;
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
                let corners = bvh.corners_of(&nearest[local]);
                same_side_of_plane(corners, &position(local), &position(other), tolerance)
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
