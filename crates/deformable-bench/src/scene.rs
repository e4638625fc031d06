//! The two scenes of Vezzano, Zerbato & Fiorini §5, engine-independent:
//! each engine builds its bodies from the nodes, elements and masses given
//! here, in this node order, so that the rulers read every engine's nodes
//! alike. Up is `+z`; the ground is the plane `z = 0`.
//!
//! - The cloth of Fig. 3: 51 × 51 nodes, 1 m square, flat above a fixed
//!   ball, falling onto it and draping down towards the ground.
//! - The jelly of Fig. 2: a tetrahedralised cylinder of jelly dropped onto
//!   the ground (the dish).

use nalgebra::{Point3, Vector3};
use std::f64::consts::TAU;
use thiserror::Error;

/// Standard gravity (m/s²).
pub const GRAVITY: f64 = 9.81;

/// A scene parameter out of its range.
#[derive(Debug, Error, PartialEq)]
pub enum SceneError {
    #[error("{field} = {value}: {expected}")]
    Parameter {
        field: &'static str,
        value: f64,
        expected: &'static str,
    },
}

fn check(
    field: &'static str,
    value: f64,
    ok: bool,
    expected: &'static str,
) -> Result<(), SceneError> {
    if ok && value.is_finite() {
        Ok(())
    } else {
        Err(SceneError::Parameter {
            field,
            value,
            expected,
        })
    }
}

/// The cloth over a ball (Fig. 3).
#[derive(Clone, Debug, PartialEq)]
pub struct ClothScene {
    /// Nodes along each side (the paper's 51).
    pub nodes_per_side: usize,
    /// Side of the square (m).
    pub side: f64,
    /// The cloth's mass, spread evenly over its nodes (kg): 0.2 kg/m², a
    /// cotton sheet's areal density.
    pub mass: f64,
    /// The fixed ball's radius (m); its bottom touches the ground.
    pub ball_radius: f64,
    /// Height of the flat cloth above the ball's centre at the start (m).
    pub height_above_centre: f64,
    /// Coulomb friction of the cloth on the ball and on the ground.
    pub friction: f64,
}

impl Default for ClothScene {
    fn default() -> Self {
        ClothScene {
            nodes_per_side: 51,
            side: 1.0,
            mass: 0.2,
            ball_radius: 0.25,
            height_above_centre: 0.35,
            friction: 0.5,
        }
    }
}

/// The cloth's structural edges: between neighbours along a row or a
/// column of the grid (no shear diagonals), with their rest lengths.
#[derive(Clone, Debug)]
pub struct Edges {
    pub pairs: Vec<[u32; 2]>,
    pub rest: Vec<f64>,
}

impl ClothScene {
    /// Checks the parameters.
    pub fn validated(self) -> Result<ClothScene, SceneError> {
        let n = self.nodes_per_side as f64;
        check("nodes_per_side", n, self.nodes_per_side >= 2, "at least 2")?;
        check("side", self.side, self.side > 0.0, "positive (m)")?;
        check("mass", self.mass, self.mass > 0.0, "positive (kg)")?;
        check(
            "ball_radius",
            self.ball_radius,
            self.ball_radius > 0.0,
            "positive (m)",
        )?;
        check(
            "height_above_centre",
            self.height_above_centre,
            self.height_above_centre > self.ball_radius,
            "above the ball's top (m from its centre)",
        )?;
        check(
            "friction",
            self.friction,
            self.friction >= 0.0,
            "non-negative",
        )?;
        Ok(self)
    }

    /// The ball's centre: on the vertical through the origin, its bottom on
    /// the ground.
    pub fn ball_centre(&self) -> Point3<f64> {
        Point3::new(0.0, 0.0, self.ball_radius)
    }

    /// The ground plane's height (m).
    pub fn ground_height(&self) -> f64 {
        0.0
    }

    /// Node `(i, j)`'s index: `i` along `x`, `j` along `y`.
    pub fn node(&self, i: usize, j: usize) -> u32 {
        (i * self.nodes_per_side + j) as u32
    }

    /// The grid spacing (m).
    pub fn spacing(&self) -> f64 {
        self.side / (self.nodes_per_side - 1) as f64
    }

    /// Node `(0, 0)`'s position and the steps to the next node along `i`
    /// and along `j`: node `(i, j)` starts at `origin + i du + j dv`.
    pub fn grid(&self) -> (Point3<f64>, Vector3<f64>, Vector3<f64>) {
        let c = self.ball_centre();
        let half = 0.5 * self.side;
        let origin = Point3::new(c.x - half, c.y - half, c.z + self.height_above_centre);
        let d = self.spacing();
        (origin, Vector3::new(d, 0.0, 0.0), Vector3::new(0.0, d, 0.0))
    }

    /// The nodes' starting positions, flat and at rest.
    pub fn initial_positions(&self) -> Vec<Point3<f64>> {
        let (origin, du, dv) = self.grid();
        let n = self.nodes_per_side;
        (0..n)
            .flat_map(|i| (0..n).map(move |j| origin + du * i as f64 + dv * j as f64))
            .collect()
    }

    /// The structural edges: `2 n (n − 1)` of them.
    pub fn structural_edges(&self) -> Edges {
        let n = self.nodes_per_side;
        let mut pairs = Vec::with_capacity(2 * n * (n - 1));
        for i in 0..n {
            for j in 0..n {
                if i + 1 < n {
                    pairs.push([self.node(i, j), self.node(i + 1, j)]);
                }
                if j + 1 < n {
                    pairs.push([self.node(i, j), self.node(i, j + 1)]);
                }
            }
        }
        let rest = vec![self.spacing(); pairs.len()];
        Edges { pairs, rest }
    }
}

/// The jelly drop (Fig. 2): a cylinder of jelly, its axis vertical, dropped
/// from rest onto the ground.
#[derive(Clone, Debug, PartialEq)]
pub struct JellyScene {
    /// m.
    pub radius: f64,
    /// m.
    pub height: f64,
    /// Rings of nodes around the axis in each layer: ring `k` has `6k`
    /// nodes at radius `k r / rings`.
    pub rings: usize,
    /// Layers of nodes along the axis.
    pub layers: usize,
    /// Gap between the jelly's bottom and the ground at the start (m).
    pub drop_height: f64,
    /// kg/m³.
    pub density: f64,
    /// Young's modulus (Pa): a soft gelatin's.
    pub young_modulus: f64,
    /// Poisson's ratio: nearly incompressible, as a gel is.
    pub poisson_ratio: f64,
    /// Coulomb friction of the jelly on the ground.
    pub friction: f64,
}

impl Default for JellyScene {
    fn default() -> Self {
        JellyScene {
            radius: 0.05,
            height: 0.1,
            rings: 4,
            layers: 9,
            drop_height: 0.05,
            density: 1000.0,
            young_modulus: 1.0e4,
            poisson_ratio: 0.45,
            friction: 0.5,
        }
    }
}

/// A tetrahedral mesh with lumped node masses.
#[derive(Clone, Debug)]
pub struct TetMesh {
    pub positions: Vec<Point3<f64>>,
    /// Positively oriented tetrahedra.
    pub cells: Vec<[u32; 4]>,
    /// Each node's mass: a quarter of each adjacent cell's (kg).
    pub masses: Vec<f64>,
    /// The sum of the cells' volumes (m³).
    pub volume: f64,
}

impl JellyScene {
    /// Checks the parameters.
    pub fn validated(self) -> Result<JellyScene, SceneError> {
        check("radius", self.radius, self.radius > 0.0, "positive (m)")?;
        check("height", self.height, self.height > 0.0, "positive (m)")?;
        check("rings", self.rings as f64, self.rings >= 1, "at least 1")?;
        check("layers", self.layers as f64, self.layers >= 2, "at least 2")?;
        check(
            "drop_height",
            self.drop_height,
            self.drop_height >= 0.0,
            "non-negative (m)",
        )?;
        check(
            "density",
            self.density,
            self.density > 0.0,
            "positive (kg/m³)",
        )?;
        check(
            "young_modulus",
            self.young_modulus,
            self.young_modulus > 0.0,
            "positive (Pa)",
        )?;
        check(
            "poisson_ratio",
            self.poisson_ratio,
            (0.0..0.5).contains(&self.poisson_ratio),
            "in [0, 0.5)",
        )?;
        check(
            "friction",
            self.friction,
            self.friction >= 0.0,
            "non-negative",
        )?;
        Ok(self)
    }

    /// The ground plane's height (m).
    pub fn ground_height(&self) -> f64 {
        0.0
    }

    /// The nodes of one layer in the plane, ring by ring (centre first), and
    /// the disc's triangles over them.
    fn disc(&self) -> (Vec<[f64; 2]>, Vec<[u32; 3]>) {
        let mut points = vec![[0.0, 0.0]];
        let mut triangles = Vec::new();
        let mut inner: Vec<u32> = vec![0];
        for k in 1..=self.rings {
            let count = 6 * k;
            let r = self.radius * k as f64 / self.rings as f64;
            let first = points.len() as u32;
            let outer: Vec<u32> = (0..count as u32).map(|m| first + m).collect();
            for m in 0..count {
                let a = TAU * m as f64 / count as f64;
                points.push([r * a.cos(), r * a.sin()]);
            }
            // Walk both rings by angle, each triangle advancing one of them.
            let (ni, no) = (inner.len(), outer.len());
            let (mut a, mut b) = (0, 0);
            while a < ni || b < no {
                let next_inner = (a + 1) as f64 / ni as f64;
                let next_outer = (b + 1) as f64 / no as f64;
                if ni > 1 && a < ni && (b == no || next_inner < next_outer) {
                    triangles.push([inner[a], inner[(a + 1) % ni], outer[b % no]]);
                    a += 1;
                } else {
                    triangles.push([inner[a % ni], outer[b], outer[(b + 1) % no]]);
                    b += 1;
                    if ni == 1 {
                        a = 1;
                    }
                }
            }
            inner = outer;
        }
        (points, triangles)
    }

    /// The jelly's mesh at its starting height: the disc extruded into
    /// prisms between layers, each prism split into three tetrahedra by the
    /// rule "a side's diagonal joins its higher-numbered bottom node to its
    /// lower-numbered top node", which neighbouring prisms share, so the
    /// mesh is conforming.
    pub fn mesh(&self) -> TetMesh {
        let (disc, triangles) = self.disc();
        let per_layer = disc.len() as u32;
        let dz = self.height / (self.layers - 1) as f64;
        let bottom = self.ground_height() + self.drop_height;
        let positions: Vec<Point3<f64>> = (0..self.layers)
            .flat_map(|l| {
                disc.iter()
                    .map(move |&[x, y]| Point3::new(x, y, bottom + dz * l as f64))
            })
            .collect();
        let mut cells = Vec::with_capacity(3 * triangles.len() * (self.layers - 1));
        for l in 0..self.layers as u32 - 1 {
            for t in &triangles {
                let mut s = *t;
                s.sort_unstable();
                let low = |v: u32| l * per_layer + v;
                let high = |v: u32| (l + 1) * per_layer + v;
                let [a, b, c] = s;
                for tet in [
                    [low(a), low(b), low(c), high(a)],
                    [low(b), low(c), high(a), high(b)],
                    [low(c), high(a), high(b), high(c)],
                ] {
                    cells.push(tet);
                }
            }
        }
        let mut masses = vec![0.0; positions.len()];
        let mut volume = 0.0;
        for cell in &mut cells {
            let x = |i: u32| &positions[i as usize];
            let mut v =
                crate::metrics::tetrahedron_volume(x(cell[0]), x(cell[1]), x(cell[2]), x(cell[3]));
            if v < 0.0 {
                cell.swap(1, 2);
                v = -v;
            }
            volume += v;
            for &i in cell.iter() {
                masses[i as usize] += 0.25 * v * self.density;
            }
        }
        TetMesh {
            positions,
            cells,
            masses,
            volume,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn the_cloth_has_the_papers_node_count_and_its_structural_edges_are_at_rest() {
        let scene = ClothScene::default();
        let x = scene.initial_positions();
        assert_eq!(x.len(), 51 * 51);
        let edges = scene.structural_edges();
        assert_eq!(edges.pairs.len(), 2 * 51 * 50);
        let strain = crate::metrics::max_edge_strain(&x, &edges.pairs, &edges.rest).unwrap();
        assert!(strain.abs() < 1e-12, "{strain}");
        let top = x.iter().map(|p| p.z).fold(f64::MIN, f64::max);
        assert!((top - 0.6).abs() < 1e-15);
        let centre = scene.ball_centre();
        let middle = x[scene.node(25, 25) as usize];
        assert!((middle - centre).norm() - 0.35 < 1e-12);
    }

    #[test]
    fn the_jelly_mesh_is_a_conforming_cylinder_of_the_right_volume_and_mass() {
        let scene = JellyScene::default();
        let mesh = scene.mesh();
        assert_eq!(mesh.positions.len(), 61 * 9);
        assert!(mesh.cells.iter().all(|c| {
            let x = |i: u32| &mesh.positions[i as usize];
            crate::metrics::tetrahedron_volume(x(c[0]), x(c[1]), x(c[2]), x(c[3])) > 0.0
        }));
        // The disc is a regular 24-gon's inscribed polygon rings: its area is
        // the outer ring's polygon, a little under the circle's.
        let polygon = 0.5 * 24.0 * 0.05f64.powi(2) * (TAU / 24.0).sin();
        assert!(
            (mesh.volume - polygon * 0.1).abs() < 1e-12,
            "{}",
            mesh.volume
        );
        let mass: f64 = mesh.masses.iter().sum();
        assert!((mass - mesh.volume * 1000.0).abs() < 1e-12);
        // Conforming: every interior face is shared by exactly two cells and
        // the boundary faces are the cylinder's: 2 × 96 caps + 8 × 24 × 2 sides.
        let mut faces: HashMap<[u32; 3], usize> = HashMap::new();
        for c in &mesh.cells {
            for skip in 0..4 {
                let mut f: Vec<u32> = (0..4).filter(|&k| k != skip).map(|k| c[k]).collect();
                f.sort_unstable();
                *faces.entry([f[0], f[1], f[2]]).or_default() += 1;
            }
        }
        assert!(faces.values().all(|&n| n <= 2));
        let boundary = faces.values().filter(|&&n| n == 1).count();
        assert_eq!(boundary, 2 * 96 + 8 * 24 * 2);
    }

    #[test]
    fn a_bad_parameter_is_named() {
        let scene = JellyScene {
            poisson_ratio: 0.5,
            ..JellyScene::default()
        };
        assert_eq!(
            scene.validated(),
            Err(SceneError::Parameter {
                field: "poisson_ratio",
                value: 0.5,
                expected: "in [0, 0.5)"
            })
        );
        let cloth = ClothScene {
            height_above_centre: 0.2,
            ..ClothScene::default()
        };
        assert!(matches!(
            cloth.validated(),
            Err(SceneError::Parameter {
                field: "height_above_centre",
                ..
            })
        ));
    }
}
