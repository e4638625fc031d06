//! What makes a [`TetMesh`] usable by a simulation: indices in range,
//! finite positions, every tet positively oriented and not degenerate.

use crate::tet_mesh::TetMesh;
use thiserror::Error;

/// A tet whose volume is below this fraction of the mesh's mean tet volume
/// is refused as degenerate by [`TetMesh::validate`]: its stiffness matrix
/// would be singular for any solver built on it.
pub const DEGENERATE_RELATIVE_VOLUME: f64 = 1e-6;

/// Why a [`TetMesh`] was refused.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum TetMeshError {
    #[error("the mesh has no tets")]
    NoTets,
    #[error("node {node} has a non-finite position ({x}, {y}, {z})")]
    NonFinitePosition { node: usize, x: f64, y: f64, z: f64 },
    #[error("tet {tet}: node index {index} is out of range (the mesh has {nodes} nodes)")]
    IndexOutOfRange {
        tet: usize,
        index: u32,
        nodes: usize,
    },
    #[error("tet {tet} is inverted: signed volume {volume:.3e} m³")]
    Inverted { tet: usize, volume: f64 },
    #[error(
        "tet {tet} is degenerate: volume {volume:.3e} m³ is below {relative:e} of the mean tet \
         volume {mean:.3e} m³"
    )]
    Degenerate {
        tet: usize,
        volume: f64,
        relative: f64,
        mean: f64,
    },
}

impl TetMeshError {
    /// The tet the error is about, if it is about one.
    pub fn tet(&self) -> Option<usize> {
        match self {
            TetMeshError::IndexOutOfRange { tet, .. }
            | TetMeshError::Inverted { tet, .. }
            | TetMeshError::Degenerate { tet, .. } => Some(*tet),
            TetMeshError::NoTets | TetMeshError::NonFinitePosition { .. } => None,
        }
    }
}

/// What [`TetMesh::validate`] found on a mesh it accepted.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidationReport {
    /// Nodes no tet uses (allowed: they get no mass and no force).
    pub unreferenced_nodes: Vec<u32>,
    /// Total volume (m³).
    pub volume: f64,
    /// Smallest and mean tet volume (m³).
    pub min_tet_volume: f64,
    pub mean_tet_volume: f64,
}

impl TetMesh {
    /// Checks the mesh with the default degeneracy threshold,
    /// [`DEGENERATE_RELATIVE_VOLUME`].
    pub fn validate(&self) -> Result<ValidationReport, TetMeshError> {
        self.validate_with(DEGENERATE_RELATIVE_VOLUME)
    }

    /// Refuses indices out of range, non-finite positions, inverted tets
    /// and tets whose volume is at most `relative_volume` times the mean tet
    /// volume; reports the nodes no tet uses. The first offending element is
    /// named.
    pub fn validate_with(&self, relative_volume: f64) -> Result<ValidationReport, TetMeshError> {
        if self.tets.is_empty() {
            return Err(TetMeshError::NoTets);
        }
        let nodes = self.positions.len();
        for (tet, indices) in self.tets.iter().enumerate() {
            if let Some(&index) = indices.iter().find(|&&n| n as usize >= nodes) {
                return Err(TetMeshError::IndexOutOfRange { tet, index, nodes });
            }
        }
        for (node, p) in self.positions.iter().enumerate() {
            if !(p.x.is_finite() && p.y.is_finite() && p.z.is_finite()) {
                return Err(TetMeshError::NonFinitePosition {
                    node,
                    x: p.x,
                    y: p.y,
                    z: p.z,
                });
            }
        }
        let volumes: Vec<f64> = (0..self.tets.len()).map(|t| self.tet_volume(t)).collect();
        let volume: f64 = volumes.iter().sum();
        let mean = volumes.iter().map(|v| v.abs()).sum::<f64>() / volumes.len() as f64;
        let threshold = relative_volume * mean;
        for (tet, &v) in volumes.iter().enumerate() {
            // A tet flat to rounding is degenerate whatever its sign.
            if v.abs() <= threshold || v == 0.0 {
                return Err(TetMeshError::Degenerate {
                    tet,
                    volume: v,
                    relative: relative_volume,
                    mean,
                });
            }
            if v < 0.0 {
                return Err(TetMeshError::Inverted { tet, volume: v });
            }
        }
        Ok(ValidationReport {
            unreferenced_nodes: self.unreferenced_nodes(),
            volume,
            min_tet_volume: volumes.iter().copied().fold(f64::INFINITY, f64::min),
            mean_tet_volume: mean,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Point3;

    fn two_tets() -> TetMesh {
        TetMesh::new(
            vec![
                Point3::new(0.0, 0.0, 0.0),
                Point3::new(1.0, 0.0, 0.0),
                Point3::new(0.0, 1.0, 0.0),
                Point3::new(0.0, 0.0, 1.0),
                Point3::new(1.0, 1.0, 1.0),
                Point3::new(5.0, 5.0, 5.0),
            ],
            vec![[0, 1, 2, 3], [1, 2, 3, 4]],
        )
    }

    #[test]
    fn accepts_and_reports_unreferenced_nodes() {
        let mut mesh = two_tets();
        // Orient the second tet.
        if mesh.tet_volume(1) < 0.0 {
            mesh.tets[1].swap(0, 1);
        }
        let report = mesh.validate().unwrap();
        assert_eq!(report.unreferenced_nodes, vec![5]);
        assert!((report.volume - (1.0 / 6.0 + 1.0 / 3.0)).abs() < 1e-12);
    }

    #[test]
    fn refuses_index_out_of_range_inverted_and_flat() {
        let mut mesh = two_tets();
        if mesh.tet_volume(1) < 0.0 {
            mesh.tets[1].swap(0, 1);
        }
        let mut bad = mesh.clone();
        bad.tets[1][2] = 6;
        assert_eq!(
            bad.validate(),
            Err(TetMeshError::IndexOutOfRange {
                tet: 1,
                index: 6,
                nodes: 6
            })
        );
        let mut inverted = mesh.clone();
        inverted.tets[1].swap(2, 3);
        assert!(matches!(
            inverted.validate(),
            Err(TetMeshError::Inverted { tet: 1, .. })
        ));
        let mut flat = mesh.clone();
        flat.positions[4] = Point3::new(0.5, 0.5, 1e-9);
        flat.tets[1] = [0, 1, 2, 4];
        let error = flat.validate().unwrap_err();
        assert!(matches!(error, TetMeshError::Degenerate { tet: 1, .. }));
        assert!(error.to_string().contains("tet 1 is degenerate"), "{error}");
        let mut repeated = mesh;
        repeated.tets[0] = [0, 1, 1, 3];
        assert!(matches!(
            repeated.validate(),
            Err(TetMeshError::Degenerate { tet: 0, .. })
        ));
    }
}
