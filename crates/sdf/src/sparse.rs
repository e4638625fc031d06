//! Sparse narrow-band fields: exact distances in bricks of 8³ cells near the
//! surface, a coarse dense field at brick spacing everywhere else.
//!
//! Only bricks with a node closer to the surface than the band half-width `W`
//! are stored; each holds its 9³ nodes (sharing faces with its neighbours, so a
//! cell's eight corners are always in one brick) as 16-bit fixed-point values.
//! Beyond the band, the answer is a lower bound on the distance:
//! `max(W, |coarse| − e)` with the sign of the brick region, where `e` bounds
//! the coarse field's interpolation error, so the field never claims more
//! clearance than there is.

use crate::bvh::MeshBvh;
use crate::dense::{DenseField, InvalidField, PLANE_TOLERANCE_VOXELS};
use crate::grid::{
    cell_gradient_bound, query_with_conservative_outside, trilinear, trilinear_hessian, GridSpec,
};
use crate::sign::BlockSigner;
use crate::triangle_queries::same_side_of_surface;
use crate::{BuildProgress, DistanceField, Slab};
use haptic_mesh::{Aabb, TriangleMesh};
use nalgebra::{Matrix3, Point3, Vector3};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// Cells per brick edge.
pub const BRICK_CELLS: u32 = 8;
/// Nodes per brick edge (the far face is shared with the next brick).
const BRICK_NODES: usize = BRICK_CELLS as usize + 1;
/// Nodes per brick.
pub(crate) const BRICK_VOLUME: usize = BRICK_NODES * BRICK_NODES * BRICK_NODES;
/// Brick-index entry of a brick region wholly outside the band, outside the object.
pub(crate) const EMPTY_OUTSIDE: u32 = u32::MAX;
/// Brick-index entry of a brick region wholly outside the band, inside the object.
pub(crate) const EMPTY_INSIDE: u32 = u32::MAX - 1;
/// Fixed-point steps per voxel: values span ±64 voxels at 1/512-voxel steps,
/// far finer than the trilinear interpolation error.
pub const STEPS_PER_VOXEL: f64 = 512.0;
/// The widest band the fixed-point range allows with room for the values
/// beyond the band that share a brick with it.
pub const MAX_BAND_HALF_WIDTH_VOXELS: f64 = 32.0;

/// How to sample a sparse field.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SparseOptions {
    /// Nodes along the longest axis of the padded bounding box (the dense
    /// resolution this field is equivalent to).
    pub resolution: u32,
    /// Margin around the mesh on every side, as a fraction of its longest side.
    pub padding_fraction: f64,
    /// Half-width of the band of exact values, in voxels. Three voxels cover
    /// the trilinear stencil of any point within two voxels of the surface.
    pub band_half_width_voxels: f64,
}

impl Default for SparseOptions {
    fn default() -> Self {
        Self {
            resolution: 1024,
            padding_fraction: 0.1,
            band_half_width_voxels: 3.0,
        }
    }
}

#[derive(Clone, Debug)]
pub struct SparseField {
    grid: GridSpec,
    /// `grid.bounds()`, kept for the lookups.
    grid_bounds: Aabb,
    band_half_width: f64,
    coarse: DenseField,
    brick_dims: [u32; 3],
    brick_index: Slab<u32>,
    brick_values: Slab<i16>,
    lipschitz: f64,
}

impl SparseField {
    /// Bytes a sparse field on `grid` takes whatever the surface: its
    /// coarse field and its brick index (the bricks near the surface come
    /// on top, `BRICK_VOLUME` samples each).
    pub fn fixed_bytes_on(grid: &GridSpec) -> u64 {
        let bricks = GridSpec {
            dims: grid.dims.map(|d| (d - 1).div_ceil(BRICK_CELLS)),
            ..*grid
        };
        let coarse = GridSpec {
            dims: bricks.dims.map(|b| b + 1),
            ..*grid
        };
        DenseField::bytes_on(&coarse).saturating_add(bricks.bytes(size_of::<u32>()))
    }

    pub fn build(
        mesh: &TriangleMesh,
        options: &SparseOptions,
        progress: &dyn BuildProgress,
    ) -> Self {
        assert!(
            options.band_half_width_voxels > 0.0
                && options.band_half_width_voxels <= MAX_BAND_HALF_WIDTH_VOXELS,
            "band half-width must be in (0, {MAX_BAND_HALF_WIDTH_VOXELS}] voxels"
        );
        let mesh_bounds = mesh.aabb();
        let grid = GridSpec::covering(&mesh_bounds, options.resolution, options.padding_fraction);
        let h = grid.voxel_size;
        let band = options.band_half_width_voxels * h;
        let brick_dims = grid.dims.map(|d| (d - 1).div_ceil(BRICK_CELLS));
        let bvh = MeshBvh::new(mesh);
        let coarse_grid = GridSpec {
            origin: grid.origin,
            voxel_size: h * BRICK_CELLS as f64,
            dims: brick_dims.map(|b| b + 1),
        };
        let coarse = DenseField::build_on_grid(&bvh, mesh_bounds, coarse_grid, progress);

        let candidates = BrickCandidates::gather(mesh, &grid, brick_dims, band);
        let context = BrickContext {
            bvh: &bvh,
            grid: &grid,
            brick_dims,
            band,
            coarse: &coarse,
        };
        progress.stage("narrow band", candidates.bricks.len() as u64);
        let finished = AtomicU64::new(0);
        let (kept_cells, kept): (Vec<(u32, f64)>, Vec<[i16; BRICK_VOLUME]>) = candidates
            .bricks
            .par_iter()
            .map_init(BrickScratch::default, |scratch, &cell| {
                let sampled = scratch
                    .sample(&context, cell, candidates.triangles_of(cell), mesh)
                    .map(|(values, lipschitz)| ((cell, lipschitz), values));
                if finished.fetch_add(1, Ordering::Relaxed) % 256 == 255 {
                    progress.advance(256);
                }
                sampled
            })
            .flatten()
            .unzip();

        let mut brick_index = vec![EMPTY_OUTSIDE; brick_dims.iter().map(|&d| d as usize).product()];
        let coarse_values = coarse.values();
        let coarse_dims = coarse_grid.dims;
        for (cell, entry) in brick_index.iter_mut().enumerate() {
            let b = unflatten(cell, brick_dims);
            // The coarse node farthest from the surface among the region's corners.
            let deepest = (0..8)
                .map(|c| {
                    let node = [0, 1, 2].map(|a| b[a] + ((c >> a) & 1));
                    coarse_values[node[0] as usize
                        + coarse_dims[0] as usize
                            * (node[1] as usize + coarse_dims[1] as usize * node[2] as usize)]
                })
                .max_by(|x, y| x.abs().total_cmp(&y.abs()))
                .unwrap_or(1.0);
            if deepest < 0.0 {
                *entry = EMPTY_INSIDE;
            }
        }
        let mut lipschitz = coarse.lipschitz_bound();
        for (brick, &(cell, brick_lipschitz)) in kept_cells.iter().enumerate() {
            brick_index[cell as usize] = brick as u32;
            lipschitz = lipschitz.max(brick_lipschitz);
        }
        Self {
            grid,
            grid_bounds: grid.bounds(),
            band_half_width: band,
            coarse,
            brick_dims,
            brick_index: Slab::from_vec(brick_index),
            brick_values: Slab::from_vec(bytemuck::allocation::cast_vec(kept)),
            lipschitz,
        }
    }

    /// Reassembles a field from stored parts, checking that they agree.
    pub fn from_parts(
        grid: GridSpec,
        band_half_width: f64,
        coarse: DenseField,
        brick_index: Slab<u32>,
        brick_values: Slab<i16>,
        lipschitz: f64,
    ) -> Result<Self, InvalidField> {
        let brick_dims = grid.dims.map(|d| d.saturating_sub(1).div_ceil(BRICK_CELLS));
        let bricks = brick_dims.iter().map(|&d| d as usize).product::<usize>();
        if brick_index.len() != bricks {
            return Err(InvalidField(format!(
                "{} brick-index entries for {brick_dims:?} brick regions",
                brick_index.len()
            )));
        }
        if !brick_values.len().is_multiple_of(BRICK_VOLUME) {
            return Err(InvalidField(format!(
                "{} brick samples is not a whole number of {BRICK_VOLUME}-node bricks",
                brick_values.len()
            )));
        }
        let brick_count = brick_values.len() / BRICK_VOLUME;
        if let Some(bad) = brick_index
            .iter()
            .find(|&&b| b < EMPTY_INSIDE && b as usize >= brick_count)
        {
            return Err(InvalidField(format!(
                "brick index {bad} beyond {brick_count} bricks"
            )));
        }
        let expected_coarse = brick_dims.map(|b| b + 1);
        if coarse.grid().dims != expected_coarse {
            return Err(InvalidField(format!(
                "coarse grid {:?} does not match {expected_coarse:?}",
                coarse.grid().dims
            )));
        }
        if !(band_half_width > 0.0 && band_half_width.is_finite()) {
            return Err(InvalidField(format!(
                "band half-width {band_half_width} is not positive"
            )));
        }
        Ok(Self {
            grid,
            grid_bounds: grid.bounds(),
            band_half_width,
            coarse,
            brick_dims,
            brick_index,
            brick_values,
            lipschitz,
        })
    }

    pub fn grid(&self) -> &GridSpec {
        &self.grid
    }

    /// Half-width of the band of exact values (m).
    pub fn band_half_width(&self) -> f64 {
        self.band_half_width
    }

    /// The dense field at brick spacing answering beyond the band.
    pub fn coarse(&self) -> &DenseField {
        &self.coarse
    }

    /// One entry per brick region: a brick number, `EMPTY_OUTSIDE` (`u32::MAX`)
    /// or `EMPTY_INSIDE` (`u32::MAX - 1`).
    pub fn brick_index(&self) -> &[u32] {
        &self.brick_index
    }

    /// `BRICK_VOLUME` = ([`BRICK_CELLS`] + 1)³ fixed-point samples per brick
    /// ([`STEPS_PER_VOXEL`] per voxel).
    pub fn brick_values(&self) -> &[i16] {
        &self.brick_values
    }

    pub fn brick_count(&self) -> usize {
        self.brick_values.len() / BRICK_VOLUME
    }

    /// Bytes of sample storage: bricks, brick index and coarse field.
    pub fn storage_bytes(&self) -> usize {
        self.brick_values.len() * 2 + self.brick_index.len() * 4 + self.coarse.values().len() * 4
    }

    /// Interpolates inside the grid box.
    #[inline]
    fn interpolate(&self, p: &Point3<f64>) -> (f64, Vector3<f64>) {
        match self.sample(p) {
            Sample::Brick(corners, t) => trilinear(&corners, &t, self.grid.voxel_size),
            Sample::Coarse { side } => {
                let (coarse_value, coarse_gradient) = self.coarse.interpolate(p);
                let clearance = coarse_value.abs() - self.coarse_error();
                if clearance > self.band_half_width {
                    (
                        side * clearance,
                        coarse_gradient * (side * coarse_value.signum()),
                    )
                } else {
                    (side * self.band_half_width, Vector3::zeros())
                }
            }
        }
    }

    /// [`interpolate`](Self::interpolate) with its Hessian.
    fn interpolate_hessian(&self, p: &Point3<f64>) -> (f64, Vector3<f64>, Matrix3<f64>) {
        match self.sample(p) {
            Sample::Brick(corners, t) => {
                let h = self.grid.voxel_size;
                let (value, gradient) = trilinear(&corners, &t, h);
                (value, gradient, trilinear_hessian(&corners, &t, h))
            }
            Sample::Coarse { side } => {
                let (coarse_value, coarse_gradient, coarse_hessian) =
                    self.coarse.interpolate_hessian(p);
                let clearance = coarse_value.abs() - self.coarse_error();
                if clearance > self.band_half_width {
                    let sign = side * coarse_value.signum();
                    (
                        side * clearance,
                        coarse_gradient * sign,
                        coarse_hessian * sign,
                    )
                } else {
                    (
                        side * self.band_half_width,
                        Vector3::zeros(),
                        Matrix3::zeros(),
                    )
                }
            }
        }
    }

    /// Where the interpolant at `p` comes from: its brick's cell, or the
    /// coarse field in an empty brick.
    #[inline]
    fn sample(&self, p: &Point3<f64>) -> Sample {
        let ([i, j, k], t) = self.grid.locate(p);
        let b = [i / BRICK_CELLS, j / BRICK_CELLS, k / BRICK_CELLS];
        let cell = b[0] as usize
            + self.brick_dims[0] as usize
                * (b[1] as usize + self.brick_dims[1] as usize * b[2] as usize);
        match self.brick_index[cell] {
            entry @ (EMPTY_OUTSIDE | EMPTY_INSIDE) => Sample::Coarse {
                side: if entry == EMPTY_INSIDE { -1.0 } else { 1.0 },
            },
            brick => {
                let local = [i % BRICK_CELLS, j % BRICK_CELLS, k % BRICK_CELLS].map(|x| x as usize);
                let base = brick as usize * BRICK_VOLUME
                    + local[0]
                    + BRICK_NODES * (local[1] + BRICK_NODES * local[2]);
                const SY: usize = BRICK_NODES;
                const SZ: usize = BRICK_NODES * BRICK_NODES;
                let v = &self.brick_values[base..base + SZ + SY + 2];
                let step = (self.grid.voxel_size / STEPS_PER_VOXEL) as f32;
                let corners = [0, 1, SY, SY + 1, SZ, SZ + 1, SZ + SY, SZ + SY + 1]
                    .map(|offset| f32::from(v[offset]) * step);
                Sample::Brick(corners, t)
            }
        }
    }

    /// Bound on the coarse field's interpolation error: a trilinear blend of a
    /// 1-Lipschitz function errs by at most half a coarse cell's diagonal.
    fn coarse_error(&self) -> f64 {
        0.5 * 3f64.sqrt() * self.coarse.grid().voxel_size
    }
}

/// Where a sparse field's interpolant at a point comes from.
enum Sample {
    /// A brick's cell: its corner values and the point's place in it.
    Brick([f32; 8], Vector3<f64>),
    /// The coarse field, in an empty brick inside (`side` −1) or outside (+1).
    Coarse { side: f64 },
}

impl DistanceField for SparseField {
    #[inline]
    fn value(&self, p: &Point3<f64>) -> f64 {
        self.value_gradient(p).0
    }

    #[inline]
    fn value_gradient(&self, p: &Point3<f64>) -> (f64, Vector3<f64>) {
        query_with_conservative_outside(&self.grid_bounds, &self.coarse.mesh_bounds(), p, |q| {
            self.interpolate(q)
        })
    }

    /// The interpolant's own Hessian inside the grid (the coarse field's
    /// in an empty brick, zero in its flat band); beyond the grid, zero.
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

fn unflatten(cell: usize, dims: [u32; 3]) -> [u32; 3] {
    let (nx, ny) = (dims[0] as usize, dims[1] as usize);
    [
        (cell % nx) as u32,
        ((cell / nx) % ny) as u32,
        (cell / (nx * ny)) as u32,
    ]
}

/// For each brick region, the triangles whose box, grown by the band, reaches it.
struct BrickCandidates {
    /// Brick regions with at least one candidate, ascending.
    bricks: Vec<u32>,
    /// `offsets[cell]..offsets[cell + 1]` indexes `triangles` for brick region `cell`.
    offsets: Vec<u32>,
    triangles: Vec<u32>,
}

impl BrickCandidates {
    fn gather(mesh: &TriangleMesh, grid: &GridSpec, brick_dims: [u32; 3], band: f64) -> Self {
        let brick_size = grid.voxel_size * BRICK_CELLS as f64;
        let region_range = |t: usize| -> [std::ops::RangeInclusive<u32>; 3] {
            let corners = mesh.corners(t);
            let aabb = Aabb::from_points(&corners).dilated(band);
            [0, 1, 2].map(|a| {
                let to_region = |x: f64| {
                    ((x - grid.origin[a]) / brick_size)
                        .floor()
                        .clamp(0.0, (brick_dims[a] - 1) as f64) as u32
                };
                to_region(aabb.min[a])..=to_region(aabb.max[a])
            })
        };
        let cell_of = |b: [u32; 3]| {
            b[0] as usize
                + brick_dims[0] as usize * (b[1] as usize + brick_dims[1] as usize * b[2] as usize)
        };
        let regions = brick_dims.iter().map(|&d| d as usize).product::<usize>();
        let mut counts = vec![0u32; regions + 1];
        let for_each_region = |t: usize, f: &mut dyn FnMut(usize)| {
            let [rx, ry, rz] = region_range(t);
            for z in rz {
                for y in ry.clone() {
                    for x in rx.clone() {
                        f(cell_of([x, y, z]));
                    }
                }
            }
        };
        for t in 0..mesh.triangles.len() {
            for_each_region(t, &mut |cell| counts[cell + 1] += 1);
        }
        for cell in 0..regions {
            counts[cell + 1] += counts[cell];
        }
        let offsets = counts;
        let mut cursor = offsets.clone();
        let mut triangles = vec![0u32; offsets[regions] as usize];
        for t in 0..mesh.triangles.len() {
            for_each_region(t, &mut |cell| {
                triangles[cursor[cell] as usize] = t as u32;
                cursor[cell] += 1;
            });
        }
        let bricks = (0..regions as u32)
            .filter(|&c| offsets[c as usize + 1] > offsets[c as usize])
            .collect();
        Self {
            bricks,
            offsets,
            triangles,
        }
    }

    fn triangles_of(&self, cell: u32) -> &[u32] {
        &self.triangles
            [self.offsets[cell as usize] as usize..self.offsets[cell as usize + 1] as usize]
    }
}

/// What every brick's sampling reads.
struct BrickContext<'a> {
    bvh: &'a MeshBvh,
    grid: &'a GridSpec,
    brick_dims: [u32; 3],
    band: f64,
    coarse: &'a DenseField,
}

#[derive(Default)]
struct BrickScratch {
    distance_squared: Vec<f64>,
    /// Nearest candidate triangle per node; `u32::MAX` beyond the band.
    nearest_triangle: Vec<u32>,
    unsigned: Vec<f64>,
    inside: Vec<bool>,
    signer: BlockSigner,
}

impl BrickScratch {
    /// The brick's fixed-point samples and its cells' gradient bound, or
    /// `None` when no node lies within the band.
    fn sample(
        &mut self,
        context: &BrickContext,
        cell: u32,
        candidates: &[u32],
        mesh: &TriangleMesh,
    ) -> Option<([i16; BRICK_VOLUME], f64)> {
        let grid = context.grid;
        let h = grid.voxel_size;
        let band_squared = context.band * context.band;
        let b = unflatten(cell as usize, context.brick_dims);
        let first_node = b.map(|x| x * BRICK_CELLS);
        let brick_origin = grid.node_position(first_node[0], first_node[1], first_node[2]);
        let position = |local: usize| {
            let i = local % BRICK_NODES;
            let j = (local / BRICK_NODES) % BRICK_NODES;
            let k = local / (BRICK_NODES * BRICK_NODES);
            brick_origin + Vector3::new(i as f64, j as f64, k as f64) * h
        };

        self.distance_squared.clear();
        self.distance_squared.resize(BRICK_VOLUME, band_squared);
        self.nearest_triangle.clear();
        self.nearest_triangle.resize(BRICK_VOLUME, u32::MAX);
        for &t in candidates {
            let [a, bb, c] = mesh.corners(t as usize);
            let reach = Aabb::from_points(&[a, bb, c]).dilated(context.band);
            let range = [0, 1, 2].map(|axis| {
                let lo = ((reach.min[axis] - brick_origin[axis]) / h).ceil().max(0.0) as usize;
                let hi = ((reach.max[axis] - brick_origin[axis]) / h)
                    .floor()
                    .min((BRICK_NODES - 1) as f64);
                (lo, hi)
            });
            if range.iter().any(|&(lo, hi)| hi < 0.0 || lo as f64 > hi) {
                continue;
            }
            for k in range[2].0..=range[2].1 as usize {
                for j in range[1].0..=range[1].1 as usize {
                    for i in range[0].0..=range[0].1 as usize {
                        let local = i + BRICK_NODES * (j + BRICK_NODES * k);
                        let d = crate::triangle_queries::point_triangle_distance_squared(
                            &position(local),
                            &a,
                            &bb,
                            &c,
                        );
                        if d < self.distance_squared[local] {
                            self.distance_squared[local] = d;
                            self.nearest_triangle[local] = t;
                        }
                    }
                }
            }
        }
        if self.distance_squared.iter().all(|&d| d >= band_squared) {
            return None;
        }
        self.unsigned.clear();
        self.unsigned
            .extend(self.distance_squared.iter().map(|d| d.sqrt()));
        self.inside.clear();
        self.inside.resize(BRICK_VOLUME, false);
        let (nearest_triangle, unsigned) = (&self.nearest_triangle, &self.unsigned);
        self.signer.sign(
            [BRICK_NODES; 3],
            &self.unsigned,
            h,
            |local| context.bvh.winding_number(&position(local)),
            |local, other| {
                let (t_local, t_other) = (nearest_triangle[local], nearest_triangle[other]);
                if t_local == u32::MAX || t_other == u32::MAX {
                    return None;
                }
                same_side_of_surface(
                    (
                        &position(local),
                        unsigned[local],
                        &mesh.corners(t_local as usize),
                    ),
                    (
                        &position(other),
                        unsigned[other],
                        &mesh.corners(t_other as usize),
                    ),
                    PLANE_TOLERANCE_VOXELS * h,
                )
            },
            &mut self.inside,
        );
        let coarse_error = 0.5 * 3f64.sqrt() * context.coarse.grid().voxel_size;
        let step = h / STEPS_PER_VOXEL;
        let mut values = [0i16; BRICK_VOLUME];
        let mut signed = [0f32; BRICK_VOLUME];
        for local in 0..BRICK_VOLUME {
            let d = self.unsigned[local];
            let magnitude = if d < context.band {
                d
            } else {
                let coarse = context.coarse.interpolate(&position(local)).0.abs();
                (coarse - coarse_error).max(context.band)
            };
            let value = if self.inside[local] {
                -magnitude
            } else {
                magnitude
            };
            let quantised = (value / step)
                .round()
                .clamp(-(i16::MAX as f64), i16::MAX as f64) as i16;
            values[local] = quantised;
            signed[local] = (f64::from(quantised) * step) as f32;
        }
        let mut lipschitz = 1.0f64;
        for k in 0..BRICK_NODES - 1 {
            for j in 0..BRICK_NODES - 1 {
                for i in 0..BRICK_NODES - 1 {
                    let base = i + BRICK_NODES * (j + BRICK_NODES * k);
                    const SY: usize = BRICK_NODES;
                    const SZ: usize = BRICK_NODES * BRICK_NODES;
                    let corners = [0, 1, SY, SY + 1, SZ, SZ + 1, SZ + SY, SZ + SY + 1]
                        .map(|offset| signed[base + offset]);
                    lipschitz = lipschitz.max(cell_gradient_bound(&corners, h));
                }
            }
        }
        Some((values, lipschitz))
    }
}
