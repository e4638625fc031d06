use crate::plural::counted;
use crate::{MeshFormat, RepairReport, TopologyReport};
use std::fmt;

/// What loading found in a mesh file and what it repaired.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeshReport {
    pub format: MeshFormat,
    /// Vertices as read (for STL, three per facet).
    pub(crate) source_vertices: usize,
    /// Triangles as read, after fan-triangulating polygons.
    pub(crate) source_triangles: usize,
    pub repair: RepairReport,
    /// Topology of the repaired mesh.
    pub topology: TopologyReport,
}

impl fmt::Display for MeshReport {
    /// One line, e.g. `12 triangles, 8 vertices (STL: 12 triangles, 36 vertices;
    /// 28 vertices welded, 0 degenerate triangles and 0 unused vertices dropped);
    /// closed, 1 component, Euler characteristic 2, genus 0`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}, {} ({}: {}, {}; {} welded, {} and {} dropped); {}",
            counted(self.topology.triangles, "triangle", "triangles"),
            counted(self.topology.vertices, "vertex", "vertices"),
            self.format,
            counted(self.source_triangles, "triangle", "triangles"),
            counted(self.source_vertices, "vertex", "vertices"),
            counted(self.repair.welded_vertices, "vertex", "vertices"),
            counted(
                self.repair.degenerate_triangles,
                "degenerate triangle",
                "degenerate triangles"
            ),
            counted(
                self.repair.unreferenced_vertices,
                "unused vertex",
                "unused vertices"
            ),
            self.topology,
        )
    }
}
