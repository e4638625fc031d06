//! Regular grids of samples and trilinear interpolation with its exact gradient.

use haptic_mesh::Aabb;
use nalgebra::{Matrix3, Point3, Vector3};

/// A regular lattice of nodes: node `(i, j, k)` sits at
/// `origin + voxel_size · (i, j, k)`, for `i < dims[0]` and so on.
/// Samples are stored x-fastest: `i + dims[0]·(j + dims[1]·k)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GridSpec {
    pub origin: Point3<f64>,
    /// Edge length of one cubic voxel (m).
    pub voxel_size: f64,
    /// Nodes per axis (at least 2).
    pub dims: [u32; 3],
}

impl GridSpec {
    /// The grid over `mesh_bounds` grown by `padding_fraction` of its longest
    /// side on every side, with `resolution` nodes along the longest axis and
    /// cubic voxels (so the other axes have fewer nodes).
    pub fn covering(mesh_bounds: &Aabb, resolution: u32, padding_fraction: f64) -> Self {
        assert!(resolution >= 2, "a grid needs at least two nodes per axis");
        let longest = mesh_bounds.extents().max().max(f64::MIN_POSITIVE);
        let padded = mesh_bounds.dilated(longest * padding_fraction);
        let voxel_size = padded.extents().max() / (resolution - 1) as f64;
        let center = padded.center();
        let mut dims = [0u32; 3];
        let mut origin = Point3::origin();
        for axis in 0..3 {
            let cells = (padded.extents()[axis] / voxel_size).ceil().max(1.0) as u32;
            dims[axis] = (cells + 1).min(resolution);
            origin[axis] = center[axis] - 0.5 * voxel_size * (dims[axis] - 1) as f64;
        }
        Self {
            origin,
            voxel_size,
            dims,
        }
    }

    /// Bytes of `bytes_per_node` at every node, saturating rather than
    /// overflowing, so that a grid too large to allocate can be refused
    /// before it is.
    pub fn bytes(&self, bytes_per_node: usize) -> u64 {
        self.dims
            .iter()
            .fold(bytes_per_node as u64, |n, &d| n.saturating_mul(d.into()))
    }

    pub fn node_count(&self) -> usize {
        self.dims.iter().map(|&d| d as usize).product()
    }

    #[inline]
    pub fn index(&self, i: u32, j: u32, k: u32) -> usize {
        i as usize + self.dims[0] as usize * (j as usize + self.dims[1] as usize * k as usize)
    }

    #[inline]
    pub fn node_position(&self, i: u32, j: u32, k: u32) -> Point3<f64> {
        self.origin + Vector3::new(i as f64, j as f64, k as f64) * self.voxel_size
    }

    pub fn bounds(&self) -> Aabb {
        Aabb {
            min: self.origin,
            max: self.node_position(self.dims[0] - 1, self.dims[1] - 1, self.dims[2] - 1),
        }
    }

    /// The cell holding `p` (clamped to the grid) and `p`'s fractional
    /// position inside it, each in `[0, 1]`.
    #[inline]
    pub fn locate(&self, p: &Point3<f64>) -> ([u32; 3], Vector3<f64>) {
        let mut cell = [0u32; 3];
        let mut fraction = Vector3::zeros();
        let per_voxel = 1.0 / self.voxel_size;
        for axis in 0..3 {
            let x = (p[axis] - self.origin[axis]) * per_voxel;
            // Truncation is the floor where it is not clamped to 0.
            let c = (x.max(0.0) as u32).min(self.dims[axis] - 2);
            cell[axis] = c;
            fraction[axis] = (x - c as f64).clamp(0.0, 1.0);
        }
        (cell, fraction)
    }
}

/// A field query that stays conservative outside the sampled box `grid`:
/// `inside(p)` answers within it; beyond it the answer is the larger of the
/// distance to the mesh's box and `inside(c) − |p − c|` for `c` the nearest
/// point of the grid (distance is 1-Lipschitz), which is a lower bound on the
/// true distance and continuous across the grid's boundary.
#[inline]
pub(crate) fn query_with_conservative_outside(
    grid: &Aabb,
    mesh_bounds: &Aabb,
    p: &Point3<f64>,
    inside: impl Fn(&Point3<f64>) -> (f64, Vector3<f64>),
) -> (f64, Vector3<f64>) {
    if grid.contains(p) {
        return inside(p);
    }
    let c = grid.clamp(p);
    let (value_at_c, mut gradient) = inside(&c);
    let offset = p - c;
    let gap = offset.norm();
    for axis in 0..3 {
        if offset[axis] != 0.0 {
            gradient[axis] = 0.0;
        }
    }
    let to_box = mesh_bounds.distance_squared(p).sqrt();
    if to_box > value_at_c - gap {
        (to_box, (p - mesh_bounds.clamp(p)) / to_box)
    } else {
        (value_at_c - gap, gradient - offset / gap)
    }
}

/// Trilinear interpolation of the eight corner values `c[dx + 2dy + 4dz]` at
/// fractional position `t`, and the gradient of the interpolant in world
/// units (divided by the voxel size `h`).
#[inline]
pub fn trilinear(c: &[f32; 8], t: &Vector3<f64>, h: f64) -> (f64, Vector3<f64>) {
    let v = c.map(f64::from);
    let (x, y, z) = (t.x, t.y, t.z);
    // Interpolate along x on the four x-edges, then y, then z.
    let e00 = v[0] + (v[1] - v[0]) * x;
    let e10 = v[2] + (v[3] - v[2]) * x;
    let e01 = v[4] + (v[5] - v[4]) * x;
    let e11 = v[6] + (v[7] - v[6]) * x;
    let f0 = e00 + (e10 - e00) * y;
    let f1 = e01 + (e11 - e01) * y;
    let value = f0 + (f1 - f0) * z;

    let dx00 = v[1] - v[0];
    let dx10 = v[3] - v[2];
    let dx01 = v[5] - v[4];
    let dx11 = v[7] - v[6];
    let dx0 = dx00 + (dx10 - dx00) * y;
    let dx1 = dx01 + (dx11 - dx01) * y;
    let dvdx = dx0 + (dx1 - dx0) * z;
    let dvdy = (e10 - e00) + ((e11 - e01) - (e10 - e00)) * z;
    let dvdz = f1 - f0;
    (value, Vector3::new(dvdx, dvdy, dvdz) * (1.0 / h))
}

/// The Hessian of the trilinear interpolant of [`trilinear`] at `t`, in world
/// units (divided by `h²`): inside a cell it is linear along each axis, so
/// only the mixed second derivatives are non-zero.
#[inline]
pub fn trilinear_hessian(c: &[f32; 8], t: &Vector3<f64>, h: f64) -> Matrix3<f64> {
    let v = c.map(f64::from);
    let (x, y, z) = (t.x, t.y, t.z);
    // Each mixed derivative is the blend, along the third axis, of the
    // two faces' cross differences.
    let xy = |a: usize| v[a + 3] - v[a + 2] - v[a + 1] + v[a];
    let dxy = xy(0) + (xy(4) - xy(0)) * z;
    let xz = |b: usize| v[b + 5] - v[b + 4] - v[b + 1] + v[b];
    let dxz = xz(0) + (xz(2) - xz(0)) * y;
    let yz = |a: usize| v[a + 6] - v[a + 4] - v[a + 2] + v[a];
    let dyz = yz(0) + (yz(1) - yz(0)) * x;
    Matrix3::new(0.0, dxy, dxz, dxy, 0.0, dyz, dxz, dyz, 0.0) * (1.0 / (h * h))
}

/// An upper bound on the gradient norm of the trilinear interpolant inside a
/// cell: each gradient component is a blend of that axis' four edge differences.
pub fn cell_gradient_bound(c: &[f32; 8], h: f64) -> f64 {
    let edge_max = |pairs: [(usize, usize); 4]| {
        pairs
            .iter()
            .map(|&(a, b)| (f64::from(c[b]) - f64::from(c[a])).abs())
            .fold(0.0, f64::max)
    };
    let gx = edge_max([(0, 1), (2, 3), (4, 5), (6, 7)]);
    let gy = edge_max([(0, 2), (1, 3), (4, 6), (5, 7)]);
    let gz = edge_max([(0, 4), (1, 5), (2, 6), (3, 7)]);
    (gx * gx + gy * gy + gz * gz).sqrt() / h
}

#[cfg(test)]
mod tests {
    use super::*;
    use haptic_testkit::jacobian_check::{central_differences, compare, Tolerance};
    use nalgebra::{DMatrix, DVector};

    #[test]
    fn trilinear_reproduces_affine_functions_and_their_gradient() {
        let h = 0.5;
        let f = |x: f64, y: f64, z: f64| 0.3 + 1.5 * x - 2.0 * y + 0.25 * z;
        let corners: [f32; 8] = std::array::from_fn(|i| {
            f(
                (i & 1) as f64 * h,
                ((i >> 1) & 1) as f64 * h,
                ((i >> 2) & 1) as f64 * h,
            ) as f32
        });
        let t = Vector3::new(0.3, 0.7, 0.1);
        let (value, gradient) = trilinear(&corners, &t, h);
        assert!((value - f(0.15, 0.35, 0.05)).abs() < 1e-6);
        assert!((gradient - Vector3::new(1.5, -2.0, 0.25)).norm() < 1e-5);
        assert!(cell_gradient_bound(&corners, h) >= gradient.norm() - 1e-6);
    }

    #[test]
    fn locate_finds_the_cell_and_clamps_outside_the_grid() {
        let grid = GridSpec {
            origin: Point3::new(-1.0, 0.0, 2.0),
            voxel_size: 0.5,
            dims: [5, 3, 4],
        };
        let (cell, t) = grid.locate(&Point3::new(-0.2, 0.6, 3.25));
        assert_eq!(cell, [1, 1, 2]);
        assert!((t - Vector3::new(0.6, 0.2, 0.5)).norm() < 1e-12);
        // Below the origin and beyond the last node: the first and last
        // cells, at their near and far faces.
        let (cell, t) = grid.locate(&Point3::new(-3.0, 7.0, 2.0 - 1e-9));
        assert_eq!(cell, [0, 1, 0]);
        assert_eq!(t, Vector3::new(0.0, 1.0, 0.0));
        // On the last node itself.
        let (cell, t) = grid.locate(&Point3::new(1.0, 1.0, 3.5));
        assert_eq!(cell, [3, 1, 2]);
        assert_eq!(t, Vector3::new(1.0, 1.0, 1.0));
    }

    #[test]
    fn gradient_matches_central_differences_inside_a_cell() {
        let corners = [0.1f32, -0.4, 0.7, 0.2, -0.3, 0.9, 0.5, -0.8];
        let h = 0.01;
        let t = Vector3::new(0.42, 0.37, 0.61);
        let (_, gradient) = trilinear(&corners, &t, h);
        // In the cell's coordinates `t`, then per metre.
        let fd = central_differences(&[1e-6; 3], |dt| {
            let at = t + Vector3::new(dt[0], dt[1], dt[2]);
            Some(DVector::from_element(1, trilinear(&corners, &at, h).0))
        })
        .unwrap()
            / h;
        let analytic = DMatrix::from_row_slice(1, 3, gradient.as_slice());
        let relative = Tolerance::Relative {
            bound: 1e-6,
            floor: 1.0,
        };
        compare(&analytic, &fd, (1, 1), relative).assert_passes("trilinear gradient");
    }

    #[test]
    fn hessian_matches_central_differences_of_the_gradient_inside_a_cell() {
        let corners = [0.1f32, -0.4, 0.7, 0.2, -0.3, 0.9, 0.5, -0.8];
        let h = 0.01;
        for t in [Vector3::new(0.42, 0.37, 0.61), Vector3::new(0.05, 0.9, 0.3)] {
            let fd = central_differences(&[1e-6; 3], |dt| {
                let at = t + Vector3::new(dt[0], dt[1], dt[2]);
                let g = trilinear(&corners, &at, h).1;
                Some(DVector::from_column_slice(g.as_slice()))
            })
            .unwrap()
                / h;
            let hessian = trilinear_hessian(&corners, &t, h);
            let analytic = DMatrix::from_column_slice(3, 3, hessian.as_slice());
            let relative = Tolerance::Relative {
                bound: 1e-6,
                floor: 1.0 / h,
            };
            compare(&analytic, &fd, (3, 3), relative).assert_passes("trilinear Hessian");
            assert!(hessian.diagonal().iter().all(|&v| v == 0.0));
        }
    }

    #[test]
    fn covering_grid_has_cubic_voxels_and_contains_the_box() {
        let b = Aabb {
            min: Point3::new(0.0, 0.0, 0.0),
            max: Point3::new(2.0, 1.0, 0.5),
        };
        let g = GridSpec::covering(&b, 65, 0.1);
        assert_eq!(g.dims[0], 65);
        assert!(g.dims[1] < 65 && g.dims[2] < g.dims[1]);
        let bounds = g.bounds();
        assert!(bounds.contains(&b.min) && bounds.contains(&b.max));
    }
}
