//! The tetrahedral mesh: nodes, elements, volumes, edges and lumped masses.

use nalgebra::Point3;

/// Outward faces of a positively oriented tet `[a, b, c, d]`, as local node
/// indices; face `i` is the one opposite node `i`, wound counter-clockwise
/// seen from outside.
pub const OUTWARD_FACES: [[usize; 3]; 4] = [[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]];

/// The six edges of a tet, as local node indices.
pub const TET_EDGES: [[usize; 2]; 6] = [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]];

/// A tetrahedral volume mesh.
///
/// Every tet `[a, b, c, d]` is positively oriented:
/// `(b − a) · ((c − a) × (d − a)) / 6 > 0`. Positions are in metres.
/// [`TetMesh::validate`] checks this and the indices; the other methods
/// assume a mesh that passed it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TetMesh {
    pub positions: Vec<Point3<f64>>,
    pub tets: Vec<[u32; 4]>,
}

impl TetMesh {
    pub fn new(positions: Vec<Point3<f64>>, tets: Vec<[u32; 4]>) -> Self {
        Self { positions, tets }
    }

    /// The corner positions of tet `t`.
    #[inline]
    pub fn corners(&self, t: usize) -> [Point3<f64>; 4] {
        self.tets[t].map(|n| self.positions[n as usize])
    }

    /// Signed volume of tet `t` (m³), positive when correctly oriented.
    #[inline]
    pub fn tet_volume(&self, t: usize) -> f64 {
        let [a, b, c, d] = self.corners(t);
        signed_volume(&a, &b, &c, &d)
    }

    /// Total volume (m³): the sum of the tets' signed volumes.
    pub fn volume(&self) -> f64 {
        (0..self.tets.len()).map(|t| self.tet_volume(t)).sum()
    }

    /// Every edge once, as `[low, high]` node pairs in ascending order.
    pub fn edges(&self) -> Vec<[u32; 2]> {
        let mut edges: Vec<[u32; 2]> = self
            .tets
            .iter()
            .flat_map(|tet| {
                TET_EDGES.map(|[i, j]| {
                    let (a, b) = (tet[i], tet[j]);
                    [a.min(b), a.max(b)]
                })
            })
            .collect();
        edges.sort_unstable();
        edges.dedup();
        edges
    }

    /// Lumped node masses (kg) for a uniform `density` (kg/m³): each tet's
    /// mass `ρ V` split equally over its four nodes. Unreferenced nodes get 0.
    pub fn lumped_masses(&self, density: f64) -> Vec<f64> {
        let mut masses = vec![0.0; self.positions.len()];
        for t in 0..self.tets.len() {
            let quarter = 0.25 * density * self.tet_volume(t);
            for &n in &self.tets[t] {
                masses[n as usize] += quarter;
            }
        }
        masses
    }

    /// Nodes that no tet uses, in ascending order.
    pub fn unreferenced_nodes(&self) -> Vec<u32> {
        let mut used = vec![false; self.positions.len()];
        for &n in self.tets.iter().flatten() {
            if let Some(u) = used.get_mut(n as usize) {
                *u = true;
            }
        }
        (0..self.positions.len() as u32)
            .filter(|&n| !used[n as usize])
            .collect()
    }

    /// Element quality: dihedral angles and volumes over every tet.
    pub fn quality(&self) -> Quality {
        let mut quality = Quality {
            min_dihedral_deg: f64::INFINITY,
            max_dihedral_deg: f64::NEG_INFINITY,
            min_volume: f64::INFINITY,
            max_volume: f64::NEG_INFINITY,
            mean_volume: 0.0,
        };
        if self.tets.is_empty() {
            return Quality {
                min_dihedral_deg: f64::NAN,
                max_dihedral_deg: f64::NAN,
                min_volume: f64::NAN,
                max_volume: f64::NAN,
                mean_volume: f64::NAN,
            };
        }
        for t in 0..self.tets.len() {
            let [a, b, c, d] = self.corners(t);
            for angle in dihedral_angles(&a, &b, &c, &d) {
                quality.min_dihedral_deg = quality.min_dihedral_deg.min(angle.to_degrees());
                quality.max_dihedral_deg = quality.max_dihedral_deg.max(angle.to_degrees());
            }
            let v = self.tet_volume(t);
            quality.min_volume = quality.min_volume.min(v);
            quality.max_volume = quality.max_volume.max(v);
            quality.mean_volume += v;
        }
        quality.mean_volume /= self.tets.len() as f64;
        quality
    }
}

/// Element quality figures of a [`TetMesh`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quality {
    /// Smallest interior dihedral angle of any tet (degrees).
    pub min_dihedral_deg: f64,
    /// Largest interior dihedral angle of any tet (degrees).
    pub max_dihedral_deg: f64,
    /// Smallest, largest and mean tet volume (m³).
    pub min_volume: f64,
    pub max_volume: f64,
    pub mean_volume: f64,
}

impl std::fmt::Display for Quality {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "dihedral angles {:.1}°–{:.1}°, tet volume {:.3e}–{:.3e} m³ (mean {:.3e})",
            self.min_dihedral_deg,
            self.max_dihedral_deg,
            self.min_volume,
            self.max_volume,
            self.mean_volume
        )
    }
}

/// `(b − a) · ((c − a) × (d − a)) / 6`.
#[inline]
pub fn signed_volume(a: &Point3<f64>, b: &Point3<f64>, c: &Point3<f64>, d: &Point3<f64>) -> f64 {
    (b - a).dot(&(c - a).cross(&(d - a))) / 6.0
}

/// The six interior dihedral angles (radians) of the tet `a b c d`, in the
/// order of [`TET_EDGES`]. At edge `(i, j)` the angle is π minus the angle
/// between the outward normals of the two faces that share the edge (the
/// faces opposite the other two nodes). A degenerate face gives NaN.
pub fn dihedral_angles(
    a: &Point3<f64>,
    b: &Point3<f64>,
    c: &Point3<f64>,
    d: &Point3<f64>,
) -> [f64; 6] {
    let p = [a, b, c, d];
    // Normals of the faces opposite each node, pointing away from that node.
    let normals = [0, 1, 2, 3].map(|i| {
        let [j, k, l] = OUTWARD_FACES[i];
        let n = (p[k] - p[j]).cross(&(p[l] - p[j]));
        let n = if n.dot(&(p[j] - p[i])) < 0.0 { -n } else { n };
        n / n.norm()
    });
    TET_EDGES.map(|[i, j]| {
        // The faces sharing edge (i, j) are those opposite the other two nodes.
        let [k, l] = other_two(i, j);
        let cos = normals[k].dot(&normals[l]).clamp(-1.0, 1.0);
        std::f64::consts::PI - cos.acos()
    })
}

/// The two local node indices of a tet other than `i` and `j`.
fn other_two(i: usize, j: usize) -> [usize; 2] {
    let mut rest = (0..4).filter(|&m| m != i && m != j);
    [rest.next().unwrap_or(0), rest.next().unwrap_or(0)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit() -> TetMesh {
        TetMesh::new(
            vec![
                Point3::new(0.0, 0.0, 0.0),
                Point3::new(1.0, 0.0, 0.0),
                Point3::new(0.0, 1.0, 0.0),
                Point3::new(0.0, 0.0, 1.0),
            ],
            vec![[0, 1, 2, 3]],
        )
    }

    #[test]
    fn unit_tet_volume_edges_masses() {
        let mesh = unit();
        assert!((mesh.volume() - 1.0 / 6.0).abs() < 1e-15);
        assert_eq!(
            mesh.edges(),
            vec![[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]
        );
        let masses = mesh.lumped_masses(600.0);
        assert!(masses.iter().all(|m| (m - 25.0).abs() < 1e-12));
    }

    #[test]
    fn regular_tet_dihedral_angles() {
        let s = 1.0 / 2f64.sqrt();
        let [a, b, c, d] = [
            Point3::new(1.0, 0.0, -s),
            Point3::new(-1.0, 0.0, -s),
            Point3::new(0.0, 1.0, s),
            Point3::new(0.0, -1.0, s),
        ];
        let expected = (1.0f64 / 3.0).acos();
        for angle in dihedral_angles(&a, &b, &c, &d) {
            assert!((angle - expected).abs() < 1e-12, "{angle}");
        }
    }

    #[test]
    fn right_corner_dihedral_angles() {
        let mesh = unit();
        let [a, b, c, d] = mesh.corners(0);
        let angles = dihedral_angles(&a, &b, &c, &d).map(f64::to_degrees);
        // Edges at the right corner (0-1, 0-2, 0-3) are 90°, the others
        // arccos(1/√3)... between a coordinate plane and the slanted face.
        for angle in &angles[..3] {
            assert!((angle - 90.0).abs() < 1e-9, "{angles:?}");
        }
        let slanted = (1.0f64 / 3f64.sqrt()).acos().to_degrees();
        for angle in &angles[3..] {
            assert!((angle - slanted).abs() < 1e-9, "{angles:?}");
        }
    }

    #[test]
    fn outward_faces_point_away_from_the_opposite_node() {
        let mesh = unit();
        let p = mesh.corners(0);
        for (opposite, [i, j, k]) in OUTWARD_FACES.iter().enumerate() {
            let n = (p[*j] - p[*i]).cross(&(p[*k] - p[*i]));
            assert!(n.dot(&(p[*i] - p[opposite])) > 0.0);
        }
    }
}
