//! `hapticd prep`: mesh → prepared-geometry file, skipped when up to date;
//! with `--tets`, also the tetrahedral mesh of its solid (MSH 4.1).

use crate::memory::MemoryBudget;
use crate::mesh_source::Source;
use crate::output::Stdout;
use crate::progress::Progress;
use crate::report::{check_density, describe_solid, level_sizes, mib, millimetres};
use anyhow::bail;
use haptic_asset::{
    cache_key, load_prepared, read_header, write_prepared, AtomicFile, PreparedGeometry, SourceInfo,
};
use haptic_config::DEFAULT_DENSITY_KG_M3;
use haptic_mesh::{LengthUnit, LoadedMesh, TriangleMesh};
use haptic_pointshell::{
    sample_point_shell, spacing_for_count, NestedPointTree, POISSON_DISK_DENSITY,
};
use haptic_sdf::MAX_BAND_HALF_WIDTH_VOXELS;
use haptic_sdf::{
    BuildProgress, DenseField, DenseOptions, Field, GridSpec, SparseField, SparseOptions,
};
use haptic_tetmesh::{
    check_closed, enclosed_volume, lattice_size, msh_string, stuff_isosurface, StuffingOptions,
    BYTES_PER_LATTICE_NODE,
};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Seed of the point-shell sampling, so that a build is reproducible.
const SHELL_SEED: u64 = 0;

#[derive(clap::Args)]
pub struct PrepArgs {
    /// Mesh file (OBJ, STL, PLY or OFF), or builtin:torus, builtin:sphere or
    /// builtin:box (generated, in metres, about 10 cm across).
    mesh: String,

    /// Grid nodes along the longest axis of the padded bounding box.
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..))]
    resolution: u32,

    /// Build a sparse field with exact values within this many voxels of the
    /// surface, instead of a dense field.
    #[arg(long, value_name = "VOXELS")]
    narrow_band: Option<f64>,

    /// Unit of the mesh file's coordinates: m, cm, mm or in [default: m].
    #[arg(long)]
    unit: Option<LengthUnit>,

    /// Factor applied on top of the unit.
    #[arg(long, default_value_t = 1.0)]
    scale: f64,

    /// Shell points to aim for.
    #[arg(long, default_value_t = 10_000, conflicts_with = "spacing")]
    points: usize,

    /// Distance between shell points instead of a count.
    #[arg(long, value_name = "METRES")]
    spacing: Option<f64>,

    /// Levels of the nested point tree.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=32))]
    levels: u32,

    /// Margin around the mesh on every side, as a fraction of its longest side.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.1)]
    padding: f64,

    /// The prepared file to write (.hgeo).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,

    /// Build even if the file is up to date.
    #[arg(long)]
    force: bool,

    /// Density of the mesh's solid (kg/m³), for the mass and inertia
    /// reported.
    #[arg(long, value_name = "KG_M3", default_value_t = DEFAULT_DENSITY_KG_M3)]
    density: f64,

    /// Refuse a build whose field or shell would need more memory than
    /// this [default: the memory available, /proc/meminfo's MemAvailable].
    #[arg(long, value_name = "GIB")]
    memory_limit: Option<f64>,

    /// Also write the tetrahedral mesh of the solid, filled from the
    /// distance field by isosurface stuffing, as Gmsh MSH 4.1 (written
    /// every run, also when the prepared file is up to date).
    #[arg(long, value_name = "OUT.msh", requires = "tet_spacing")]
    tets: Option<PathBuf>,

    /// Cube size of the tetrahedral mesh's BCC lattice: about the size of
    /// an interior tet.
    #[arg(long, value_name = "METRES", requires = "tets")]
    tet_spacing: Option<f64>,
}

pub fn run(args: &PrepArgs) -> anyhow::Result<()> {
    args.check()?;
    let source = Source::read(&args.mesh, args.unit)?;
    let key = cache_key(&source.bytes, &args.params_text());
    let mut stdout = Stdout::lock();
    let out = args.out.display();
    if args.out.exists() && !args.force {
        match read_header(&args.out) {
            Ok(header) if header.source.cache_key == key => {
                writeln!(stdout, "up to date: {out}")?;
                if let Some(tets) = &args.tets {
                    let LoadedMesh { mesh, .. } = source.load(args.scale)?;
                    check_closed_for_tets(&mesh, &source.name)?;
                    let geometry = load_prepared(&args.out)?;
                    write_tets(&mut stdout, &geometry.field, &mesh, tets, args)?;
                }
                return Ok(());
            }
            Ok(_) => writeln!(
                stdout,
                "rebuilding {out}: the mesh or the parameters changed"
            )?,
            Err(error) => writeln!(stdout, "rebuilding: {error}")?,
        }
    }

    let started = Instant::now();
    let LoadedMesh { mesh, report } = source.load(args.scale)?;
    writeln!(stdout, "mesh: {}: {report}", source.name)?;
    if args.tets.is_some() {
        check_closed_for_tets(&mesh, &source.name)?;
    }
    describe_solid(&mut stdout, &mesh, args.density)?;
    check_memory(&mesh, args)?;

    let progress = Progress::new();
    let field = build_field(&mesh, args, &progress);
    let spacing = args
        .spacing
        .unwrap_or_else(|| spacing_for_count(&mesh, args.points));
    progress.stage("point shell", 1);
    let shell = sample_point_shell(&mesh, spacing, SHELL_SEED);
    progress.advance(1);
    progress.stage("point tree", 1);
    let tree = NestedPointTree::new(&shell, args.levels as usize);
    progress.advance(1);
    progress.stage("writing", 1);
    let geometry = PreparedGeometry::new(
        SourceInfo {
            unit: source.unit,
            scale: args.scale,
            cache_key: key,
            resolution: args.resolution,
            padding_fraction: args.padding,
        },
        field,
        shell,
        tree,
    );
    let header = write_prepared(&args.out, &geometry)?;
    progress.advance(1);
    let stages = progress.finish();

    let grid = header.grid;
    let [nx, ny, nz] = grid.dims;
    writeln!(
        stdout,
        "field: {} {nx} × {ny} × {nz}, voxel {} mm, {} MiB",
        header.kind,
        millimetres(grid.voxel_size),
        mib(header.field_bytes())
    )?;
    writeln!(
        stdout,
        "shell: {} points, spacing {} mm",
        geometry.shell.len(),
        millimetres(spacing)
    )?;
    writeln!(stdout, "tree: {}", level_sizes(&geometry.tree))?;
    let timing: Vec<String> = stages
        .iter()
        .map(|(name, duration)| format!("{name} {:.2} s", duration.as_secs_f64()))
        .collect();
    writeln!(
        stdout,
        "wrote {out} ({} MiB) in {:.2} s ({})",
        mib(header.file_length),
        started.elapsed().as_secs_f64(),
        timing.join(", ")
    )?;
    if let Some(tets) = &args.tets {
        write_tets(&mut stdout, &geometry.field, &mesh, tets, args)?;
    }
    Ok(())
}

/// Refuses to fill a mesh with tets unless its surface is closed.
fn check_closed_for_tets(mesh: &TriangleMesh, name: &str) -> anyhow::Result<()> {
    check_closed(mesh).map_err(|error| {
        anyhow::anyhow!("--tets: {name}: {error}; a solid is filled from a closed surface")
    })
}

/// Fills the solid with tets from its field, writes them as MSH 4.1 and
/// reports their count, volume against the mesh's and quality.
fn write_tets(
    stdout: &mut Stdout,
    field: &Field,
    mesh: &TriangleMesh,
    path: &Path,
    args: &PrepArgs,
) -> anyhow::Result<()> {
    let spacing = args.tet_spacing.unwrap_or_default();
    let started = Instant::now();
    let progress = Progress::new();
    progress.stage("tets", 1);
    let stuffed = stuff_isosurface(field, &StuffingOptions::new(spacing)).map_err(|error| {
        anyhow::anyhow!(
            "--tets {}: {error} (--tet-spacing {spacing})",
            path.display()
        )
    })?;
    progress.advance(1);
    progress.stage("writing tets", 1);
    AtomicFile::write(path, msh_string(&stuffed.mesh).as_bytes())
        .map_err(|error| anyhow::anyhow!("{}: {error}", path.display()))?;
    progress.advance(1);
    progress.finish();
    let report = &stuffed.report;
    let enclosed = enclosed_volume(mesh);
    writeln!(
        stdout,
        "tets: {} tets, {} nodes, lattice {} mm, volume {:.6e} m³ ({:+.2} % of the mesh's), {}",
        stuffed.mesh.tets.len(),
        stuffed.mesh.positions.len(),
        millimetres(spacing),
        report.volume,
        100.0 * (report.volume / enclosed - 1.0),
        report.quality
    )?;
    writeln!(
        stdout,
        "wrote {} in {:.2} s",
        path.display(),
        started.elapsed().as_secs_f64()
    )?;
    Ok(())
}

/// Bytes per point of the point shell, its point tree and their copy for
/// the file (an upper estimate).
const SHELL_BYTES_PER_POINT: f64 = 160.0;

/// Refuses a field or point shell that cannot fit in memory, before any
/// of it is allocated, saying what would fit instead.
fn check_memory(mesh: &TriangleMesh, args: &PrepArgs) -> anyhow::Result<()> {
    let budget = MemoryBudget::new(args.memory_limit)?;
    let bounds = mesh.aabb();
    let grid = |resolution| GridSpec::covering(&bounds, resolution, args.padding);
    let [nx, ny, nz] = grid(args.resolution).dims;
    match args.narrow_band {
        None => budget.check(
            format_args!("a {nx} × {ny} × {nz} dense field"),
            DenseField::bytes_on(&grid(args.resolution)),
            || {
                // The finest grid that fits, by bisection: grids grow with
                // the resolution.
                let fits = |r| budget.fits(DenseField::bytes_on(&grid(r)));
                let (mut fitting, mut too_big) = (2, args.resolution);
                while too_big - fitting > 1 {
                    let middle = fitting + (too_big - fitting) / 2;
                    if fits(middle) {
                        fitting = middle;
                    } else {
                        too_big = middle;
                    }
                }
                format!("use --narrow-band, or --resolution ≤ {fitting}")
            },
        )?,
        Some(_) => budget.check(
            format_args!("a {nx} × {ny} × {nz} narrow-band field's coarse field and brick index"),
            SparseField::fixed_bytes_on(&grid(args.resolution)),
            || "use a lower --resolution".to_owned(),
        )?,
    }
    if let Some(spacing) = args.tet_spacing {
        // The field's grid bounds the lattice.
        let grid = grid(args.resolution);
        let [nx, ny, nz] = grid.dims;
        let bounds = haptic_mesh::Aabb {
            min: grid.origin,
            max: grid.origin
                + grid.voxel_size * nalgebra::Vector3::new(nx as f64, ny as f64, nz as f64),
        };
        let (cubes, nodes) = lattice_size(&bounds, spacing);
        let limit = StuffingOptions::new(spacing).max_lattice_nodes;
        if nodes > limit {
            bail!(
                "--tet-spacing {spacing}: a lattice of {cubes:?} cubes has {nodes} nodes, more than \
                 the limit of {limit}: use a larger --tet-spacing"
            );
        }
        budget.check(
            format_args!("a tetrahedral lattice of {nodes} nodes"),
            nodes.saturating_mul(BYTES_PER_LATTICE_NODE) as u64,
            || "use a larger --tet-spacing".to_owned(),
        )?;
    }
    let points = match args.spacing {
        Some(spacing) => POISSON_DISK_DENSITY * mesh.surface_area() / (spacing * spacing),
        None => args.points as f64,
    };
    budget.check(
        format_args!("a point shell of about {points:.0} points"),
        (points * SHELL_BYTES_PER_POINT) as u64,
        || "use fewer --points or a larger --spacing".to_owned(),
    )
}

fn build_field(mesh: &TriangleMesh, args: &PrepArgs, progress: &dyn BuildProgress) -> Field {
    match args.narrow_band {
        None => Field::Dense(DenseField::build(
            mesh,
            &DenseOptions {
                resolution: args.resolution,
                padding_fraction: args.padding,
            },
            progress,
        )),
        Some(band) => Field::Sparse(SparseField::build(
            mesh,
            &SparseOptions {
                resolution: args.resolution,
                padding_fraction: args.padding,
                band_half_width_voxels: band,
            },
            progress,
        )),
    }
}

impl PrepArgs {
    /// Rejects values the builders would panic on, and an output directory
    /// that does not exist, before any work is done.
    fn check(&self) -> anyhow::Result<()> {
        check_density(self.density)?;
        if let Some(band) = self.narrow_band {
            if !(band > 0.0 && band <= MAX_BAND_HALF_WIDTH_VOXELS) {
                bail!(
                    "--narrow-band must be in (0, {MAX_BAND_HALF_WIDTH_VOXELS}] voxels, got {band}"
                );
            }
        }
        if !(self.scale.is_finite() && self.scale > 0.0) {
            bail!("--scale must be finite and positive, got {}", self.scale);
        }
        if self.points == 0 {
            bail!("--points must be at least 1");
        }
        if let Some(spacing) = self.spacing {
            if !(spacing.is_finite() && spacing > 0.0) {
                bail!("--spacing must be finite and positive, got {spacing}");
            }
        }
        if let Some(dir) = self.out.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.is_dir() {
                bail!(
                    "{}: the directory {} does not exist",
                    self.out.display(),
                    dir.display()
                );
            }
        }
        if let Some(spacing) = self.tet_spacing {
            if !(spacing.is_finite() && spacing > 0.0) {
                bail!("--tet-spacing must be finite and positive, got {spacing}");
            }
        }
        if let Some(tets) = &self.tets {
            if let Some(dir) = tets.parent().filter(|d| !d.as_os_str().is_empty()) {
                if !dir.is_dir() {
                    bail!(
                        "{}: the directory {} does not exist",
                        tets.display(),
                        dir.display()
                    );
                }
            }
        }
        if !(self.padding.is_finite() && self.padding >= 0.0) {
            bail!(
                "--padding must be finite and non-negative, got {}",
                self.padding
            );
        }
        Ok(())
    }

    /// Every build parameter, one `key=value` per line; floats print exactly.
    fn params_text(&self) -> String {
        let field = match self.narrow_band {
            None => "field=dense".to_owned(),
            Some(band) => format!("field=sparse\nnarrow_band_voxels={band}"),
        };
        let shell = match self.spacing {
            Some(spacing) => format!("shell_spacing={spacing}"),
            None => format!("shell_points={}", self.points),
        };
        format!(
            "builder=hapticd {}\nunit={}\nscale={}\nresolution={}\npadding={}\n{field}\n{shell}\nshell_seed={SHELL_SEED}\ntree_levels={}\n",
            env!("CARGO_PKG_VERSION"),
            self.unit.unwrap_or_default(),
            self.scale,
            self.resolution,
            self.padding,
            self.levels
        )
    }
}
