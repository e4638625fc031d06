//! `hapticd inspect`: what a prepared file holds, or its field at given
//! points; or a mesh as a solid, with its mass properties.

use crate::mesh_source::Source;
use crate::output::Stdout;
use crate::report::{check_density, describe_solid, level_sizes, mib, millimetres};
use anyhow::{bail, Context};
use haptic_asset::{load_prepared, FieldKind, PreparedGeometry};
use haptic_config::DEFAULT_DENSITY_KG_M3;
use haptic_mesh::{LengthUnit, LoadOptions, MeshFormat};
use haptic_sdf::{DistanceField, Field};
use nalgebra::Point3;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct InspectArgs {
    /// A prepared file (.hgeo); or a mesh file (OBJ, STL, PLY or OFF) or
    /// builtin:torus, builtin:sphere or builtin:box, described as a solid
    /// with its mass, centre of mass and inertia.
    file: PathBuf,

    /// Instead of describing a prepared file, print `x,y,z,value,gx,gy,gz`
    /// for each `x,y,z` line of this CSV (metres, in the field's frame;
    /// blank lines and lines starting with # are skipped).
    #[arg(long, value_name = "POINTS.csv")]
    query: Option<PathBuf>,

    /// Unit of a mesh file's coordinates: m, cm, mm or in [default: m].
    #[arg(long)]
    unit: Option<LengthUnit>,

    /// Density of a mesh's solid (kg/m³), for its mass and inertia.
    #[arg(long, value_name = "KG_M3", default_value_t = DEFAULT_DENSITY_KG_M3)]
    density: f64,
}

pub fn run(args: &InspectArgs) -> anyhow::Result<()> {
    let name = args.file.to_string_lossy();
    let extension = args.file.extension().unwrap_or_default().to_string_lossy();
    if name.starts_with("builtin:") || MeshFormat::from_extension(&extension).is_some() {
        if args.query.is_some() {
            bail!("{name}: --query needs a prepared file (hapticd prep), not a mesh");
        }
        check_density(args.density)?;
        let source = Source::read(&name, args.unit)?;
        let loaded = source.load(LoadOptions::default().scale)?;
        let mut out = Stdout::lock();
        writeln!(out, "mesh:       {}: {}", source.name, loaded.report)?;
        let bounds = loaded.mesh.aabb();
        writeln!(
            out,
            "bounds:     {} – {} m",
            point(&bounds.min),
            point(&bounds.max)
        )?;
        describe_solid(&mut out, &loaded.mesh, args.density)?;
        return Ok(());
    }
    let points = args.query.as_deref().map(read_points).transpose()?;
    let geometry = load_prepared(&args.file)?;
    match points {
        Some(points) => query(&mut Stdout::lock(), &geometry.field, &points),
        None => describe(&mut Stdout::lock(), &args.file, &geometry),
    }?;
    Ok(())
}

fn describe(out: &mut impl Write, file: &Path, geometry: &PreparedGeometry) -> io::Result<()> {
    let header = &geometry.header;
    let source = &header.source;
    let grid = &header.grid;
    let [nx, ny, nz] = grid.dims;
    writeln!(out, "file:       {}", file.display())?;
    writeln!(
        out,
        "format:     version {}, {} MiB, checksum verified (SHA-256 {}…)",
        header.version,
        mib(header.file_length),
        hex(&header.checksum[..8])
    )?;
    writeln!(
        out,
        "source:     unit {}, scale {} ({} m per file unit), cache key {}",
        source.unit,
        source.scale,
        source.unit.metres() * source.scale,
        hex(&source.cache_key)
    )?;
    writeln!(
        out,
        "field:      {}, resolution {}, padding {}",
        header.kind, source.resolution, source.padding_fraction
    )?;
    writeln!(out, "dims:       {nx} × {ny} × {nz} nodes")?;
    writeln!(out, "voxel:      {} mm", millimetres(grid.voxel_size))?;
    if let Field::Sparse(sparse) = &geometry.field {
        writeln!(
            out,
            "band:       ±{:.2} voxels ({} mm), {} bricks of 8³ cells",
            header.band_half_width / grid.voxel_size,
            millimetres(header.band_half_width),
            sparse.brick_count()
        )?;
    }
    let bounds = grid.bounds();
    writeln!(
        out,
        "bounds:     mesh {} – {} m\n            grid {} – {} m",
        point(&header.mesh_bounds.min),
        point(&header.mesh_bounds.max),
        point(&bounds.min),
        point(&bounds.max)
    )?;
    write!(
        out,
        "storage:    {} MiB of field samples",
        mib(header.field_bytes())
    )?;
    if header.kind == FieldKind::Sparse {
        write!(out, " ({} MiB dense)", mib(grid.node_count() as u64 * 4))?;
    }
    writeln!(out)?;
    writeln!(out, "lipschitz:  {:.4}", header.lipschitz)?;
    writeln!(out, "shell:      {} points", geometry.shell.len())?;
    writeln!(out, "tree:       {}", level_sizes(&geometry.tree))?;
    writeln!(out, "sections:")?;
    for section in &header.sections {
        writeln!(
            out,
            "  {:<19} {:>10} × {}  at byte {:>10}, {:>9} MiB",
            section.id.name(),
            section.length / section.element().size(),
            section.element(),
            section.offset,
            mib(section.length)
        )?;
    }
    out.flush()
}

/// Value and gradient at each point, as CSV with a header row.
fn query(out: &mut impl Write, field: &Field, points: &[Point3<f64>]) -> io::Result<()> {
    let mut out = BufWriter::new(out);
    writeln!(out, "x,y,z,value,gx,gy,gz")?;
    for p in points {
        let (value, g) = field.value_gradient(p);
        writeln!(
            out,
            "{},{},{},{value},{},{},{}",
            p.x, p.y, p.z, g.x, g.y, g.z
        )?;
    }
    out.flush()
}

/// The `x,y,z` lines of a CSV file, skipping blank lines and `#` comments.
fn read_points(path: &Path) -> anyhow::Result<Vec<Point3<f64>>> {
    let file = path.display();
    let text = std::fs::read_to_string(path).with_context(|| format!("{file}: cannot read"))?;
    let mut points = Vec::new();
    // Spreadsheets may start a CSV with a byte-order mark.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = format!("{file}:{}", index + 1);
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != 3 {
            bail!(
                "{at}: expected x,y,z, found {} fields in {line:?}",
                fields.len()
            );
        }
        let mut xyz = [0.0; 3];
        for (value, field) in xyz.iter_mut().zip(&fields) {
            *value = field
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .with_context(|| format!("{at}: {field:?} is not a finite number"))?;
        }
        points.push(Point3::from(xyz));
    }
    Ok(points)
}

fn point(p: &Point3<f64>) -> String {
    format!("({:.4}, {:.4}, {:.4})", p.x, p.y, p.z)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
