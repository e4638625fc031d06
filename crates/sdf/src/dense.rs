//! Dense grids of exact signed distance.

use crate::bvh::{MeshBvh, Nearest};
use crate::grid::{cell_gradient_bound, query_with_conservative_outside, trilinear, GridSpec};
use crate::sign::BlockSigner;
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
        let slab_nodes = nx as usize * ny as usize * SIGN_BLOCK as usize;
        let mut values = vec![0f32; grid.node_count()];
        progress.stage("dense field", nz as u64);
        values.par_chunks_mut(slab_nodes).enumerate().for_each_init(
            BlockScratch::default,
            |scratch, (slab, out)| {
                let k0 = slab as u32 * SIGN_BLOCK;
                let k1 = (k0 + SIGN_BLOCK).min(nz);
                for j0 in (0..ny).step_by(SIGN_BLOCK as usize) {
                    for i0 in (0..nx).step_by(SIGN_BLOCK as usize) {
                        let lo = [i0, j0, k0];
                        let hi = [(i0 + SIGN_BLOCK).min(nx), (j0 + SIGN_BLOCK).min(ny), k1];
                        scratch.sample_block(bvh, &grid, lo, hi);
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

/// Per-thread buffers for sampling one block.
#[derive(Default)]
struct BlockScratch {
    lo: [u32; 3],
    dims: [usize; 3],
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

    /// Exact signed distances at the nodes `lo..hi` (exclusive).
    fn sample_block(&mut self, bvh: &MeshBvh, grid: &GridSpec, lo: [u32; 3], hi: [u32; 3]) {
        self.lo = lo;
        self.dims = [0, 1, 2].map(|a| (hi[a] - lo[a]) as usize);
        let n = self.dims.iter().product();
        self.unsigned.clear();
        // Each node starts from the previous node's nearest triangle: its
        // distance bounds the search, so the BVH prunes almost everything.
        let mut hint: Option<Nearest> = None;
        for local in 0..n {
            let [i, j, k] = self.node(local);
            let q = grid.node_position(i, j, k);
            let bound = hint.map_or(f64::INFINITY, |h| {
                bvh.distance_squared_to(&q, &h) * (1.0 + 1e-12)
            });
            let nearest = bvh
                .nearest_within(&q, bound)
                .or_else(|| bvh.nearest(&q))
                .expect("a field is built from a non-empty mesh");
            hint = Some(nearest);
            self.unsigned.push(nearest.distance_squared.sqrt());
        }
        self.inside.clear();
        self.inside.resize(n, false);
        let (lo, dims) = (self.lo, self.dims);
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
