//! What `hapticd prep` and `hapticd inspect` both print: a mesh's solid
//! and its mass properties, point trees, sizes and lengths.

use anyhow::bail;
use haptic_mesh::TriangleMesh;
use haptic_physics::mass_properties;
use haptic_pointshell::NestedPointTree;
use nalgebra::SymmetricEigen;
use std::io::{self, Write};

/// Refuses a density that gives no mass.
pub fn check_density(density: f64) -> anyhow::Result<()> {
    if !(density.is_finite() && density > 0.0) {
        bail!("--density must be finite and positive, got {density}");
    }
    Ok(())
}

/// The solid `mesh` bounds at `density`: volume, mass, centre of mass (the
/// mesh file's frame, which a scene's movable object or tool is moved to:
/// its body frame) and inertia about it; or why it has none.
pub fn describe_solid(out: &mut impl Write, mesh: &TriangleMesh, density: f64) -> io::Result<()> {
    let solid = match mass_properties(mesh, density) {
        Ok(solid) => solid,
        Err(error) => return writeln!(out, "solid:      none: {error}"),
    };
    writeln!(
        out,
        "solid:      volume {:.6e} m³, mass {:.6e} kg at {density} kg/m³",
        solid.volume, solid.mass
    )?;
    let c = &solid.centre_of_mass;
    writeln!(
        out,
        "centre:     ({:.6}, {:.6}, {:.6}) m (centre of mass, the file's frame)",
        c.x, c.y, c.z
    )?;
    let i = &solid.inertia;
    writeln!(
        out,
        "inertia:    about the centre of mass, the file's axes (kg·m²)"
    )?;
    for r in 0..3 {
        writeln!(
            out,
            "            [{:>12.5e} {:>12.5e} {:>12.5e}]",
            i[(r, 0)],
            i[(r, 1)],
            i[(r, 2)]
        )?;
    }
    let mut principal: Vec<f64> = SymmetricEigen::new(*i)
        .eigenvalues
        .iter()
        .copied()
        .collect();
    principal.sort_by(f64::total_cmp);
    writeln!(
        out,
        "principal:  {:.5e}, {:.5e}, {:.5e} kg·m²",
        principal[0], principal[1], principal[2]
    )
}

/// Bytes in MiB, two decimals.
pub fn mib(bytes: u64) -> String {
    format!("{:.2}", bytes as f64 / (1024.0 * 1024.0))
}

/// Metres in millimetres, three decimals.
pub fn millimetres(metres: f64) -> String {
    format!("{:.3}", metres * 1000.0)
}

/// `L levels of N0, N1, … nodes`, coarsest first.
pub fn level_sizes(tree: &NestedPointTree) -> String {
    let sizes: Vec<String> = (0..tree.levels())
        .map(|l| tree.level(l).len().to_string())
        .collect();
    format!("{} levels of {} nodes", tree.levels(), sizes.join(", "))
}
