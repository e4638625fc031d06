//! Reading mesh files into clean, metre-scaled [`TriangleMesh`]es.

mod obj;
mod off;
mod ply;
mod stl;
mod text;

use crate::format::MeshFormat;
use crate::repair::clean;
use crate::topology::analyze_topology;
use crate::{Aabb, LengthUnit, MeshError, MeshReport, TriangleMesh};
use std::path::Path;

/// Default weld tolerance as a fraction of the bounding-box diagonal.
const DEFAULT_RELATIVE_WELD_TOLERANCE: f64 = 1e-9;

/// How to turn file coordinates into metres, and how closely to weld.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoadOptions {
    /// The unit the file's coordinates are in.
    pub unit: LengthUnit,
    /// Extra factor applied on top of `unit`; must be finite and positive.
    pub scale: f64,
    /// Vertices closer than this many metres (after scaling) are merged.
    /// `None`: 1e-9 × the diagonal of the box
    /// around the vertices that faces use.
    pub weld_tolerance: Option<f64>,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            unit: LengthUnit::Metre,
            scale: 1.0,
            weld_tolerance: None,
        }
    }
}

impl LoadOptions {
    /// Metres per file coordinate unit: `unit` × `scale`.
    fn metres_per_file_unit(&self) -> f64 {
        self.unit.metres() * self.scale
    }
}

/// A repaired mesh in metres and what was found and fixed on the way.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedMesh {
    pub mesh: TriangleMesh,
    pub report: MeshReport,
}

/// Loads an OBJ, STL, PLY or OFF file, chosen by extension (case-insensitive),
/// scales it to metres, then welds and cleans it (see `clean`).
pub fn load_mesh(path: &Path, options: &LoadOptions) -> Result<LoadedMesh, MeshError> {
    let file = path.display().to_string();
    let extension = path
        .extension()
        .map(|extension| extension.to_string_lossy().into_owned())
        .unwrap_or_default();
    let format =
        MeshFormat::from_extension(&extension).ok_or_else(|| MeshError::UnsupportedExtension {
            file: file.clone(),
            extension,
        })?;
    let bytes = std::fs::read(path).map_err(|source| MeshError::Io {
        file: file.clone(),
        source,
    })?;
    load_mesh_from_bytes(&bytes, format, &file, options)
}

/// Like [`load_mesh`] for a file already in memory; `name` stands for the
/// file in errors.
pub fn load_mesh_from_bytes(
    bytes: &[u8],
    format: MeshFormat,
    name: &str,
    options: &LoadOptions,
) -> Result<LoadedMesh, MeshError> {
    let metres_per_unit = options.metres_per_file_unit();
    if !(metres_per_unit.is_finite() && metres_per_unit > 0.0) {
        return Err(MeshError::InvalidOptions {
            file: name.to_owned(),
            message: format!("scale must be finite and positive, got {}", options.scale),
        });
    }
    if let Some(tolerance) = options.weld_tolerance {
        if !(tolerance.is_finite() && tolerance >= 0.0) {
            return Err(MeshError::InvalidOptions {
                file: name.to_owned(),
                message: format!("weld tolerance must be finite and non-negative, got {tolerance}"),
            });
        }
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(MeshError::empty(name, "the file is empty or blank"));
    }

    let mut source = match format {
        MeshFormat::Obj => obj::parse(bytes, name),
        MeshFormat::Stl => stl::parse(bytes, name),
        MeshFormat::Ply => ply::parse(bytes, name),
        MeshFormat::Off => off::parse(bytes, name),
    }?;
    check_vertex_count(source.vertices.len(), name)?;
    if source.triangles.is_empty() {
        return Err(MeshError::empty(name, "the file has no faces"));
    }
    for (vertex, point) in source.vertices.iter_mut().enumerate() {
        *point *= metres_per_unit;
        if !point.iter().all(|c| c.is_finite()) {
            return Err(MeshError::NonFiniteCoordinate {
                file: name.to_owned(),
                line: None,
                vertex,
            });
        }
    }

    let tolerance = options.weld_tolerance.unwrap_or_else(|| {
        let used = source.triangles.iter().flatten();
        let bounds = Aabb::from_points(used.map(|&v| &source.vertices[v as usize]));
        DEFAULT_RELATIVE_WELD_TOLERANCE * bounds.extents().norm()
    });
    let (mesh, repair) = clean(&source, tolerance);
    if mesh.triangles.is_empty() {
        return Err(MeshError::empty(
            name,
            format!(
                "all {} triangles are degenerate (zero area or repeated vertex)",
                source.triangles.len()
            ),
        ));
    }
    let topology = analyze_topology(&mesh);
    Ok(LoadedMesh {
        mesh,
        report: MeshReport {
            format,
            source_vertices: source.vertices.len(),
            source_triangles: source.triangles.len(),
            repair,
            topology,
        },
    })
}

/// `index` as a triangle index, if it fits 32 bits.
fn vertex_index(index: usize, file: &str) -> Result<u32, MeshError> {
    u32::try_from(index).map_err(|_| too_many_vertices(index.saturating_add(1), file))
}

/// Fails if `vertex_count` does not fit 32 bits.
fn check_vertex_count(vertex_count: usize, file: &str) -> Result<(), MeshError> {
    match u32::try_from(vertex_count) {
        Ok(_) => Ok(()),
        Err(_) => Err(too_many_vertices(vertex_count, file)),
    }
}

fn too_many_vertices(vertex_count: usize, file: &str) -> MeshError {
    MeshError::TooManyVertices {
        file: file.to_owned(),
        vertex_count,
    }
}

/// Appends the fan `[p0, p(i), p(i+1)]` triangulating the polygon `polygon`.
fn push_fan(polygon: &[u32], triangles: &mut Vec<[u32; 3]>) {
    if let Some((&first, rest)) = polygon.split_first() {
        triangles.extend(rest.windows(2).map(|pair| [first, pair[0], pair[1]]));
    }
}

#[cfg(test)]
mod fuzz_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_meshes::{
        binary_stl, cube_ascii_ply, cube_ascii_stl, cube_binary_ply, cube_binary_stl, cube_obj,
        cube_off, signed_volume,
    };
    use nalgebra::Point3;

    fn load(bytes: &[u8], format: MeshFormat) -> Result<LoadedMesh, MeshError> {
        load_mesh_from_bytes(bytes, format, "test", &LoadOptions::default())
    }

    fn cubes() -> [(MeshFormat, Vec<u8>); 6] {
        [
            (MeshFormat::Obj, cube_obj().into_bytes()),
            (MeshFormat::Stl, cube_ascii_stl().into_bytes()),
            (MeshFormat::Stl, cube_binary_stl()),
            (MeshFormat::Ply, cube_ascii_ply().into_bytes()),
            (MeshFormat::Ply, cube_binary_ply()),
            (MeshFormat::Off, cube_off().into_bytes()),
        ]
    }

    #[test]
    fn every_format_loads_the_cube_closed_and_outward() {
        for (format, bytes) in cubes() {
            let loaded = load(&bytes, format).unwrap();
            let (mesh, report) = (&loaded.mesh, &loaded.report);
            assert_eq!(
                (mesh.vertices.len(), mesh.triangles.len()),
                (8, 12),
                "{format}"
            );
            assert!((signed_volume(mesh) - 1.0).abs() < 1e-12, "{format}");
            assert!(report.topology.is_watertight(), "{format}: {report}");
            assert_eq!(report.topology.components, 1);
            assert_eq!(report.topology.genus, Some(0));
            assert_eq!(report.source_triangles, 12);
            assert_eq!(report.repair.degenerate_triangles, 0);
        }
    }

    #[test]
    fn stl_cube_welds_to_eight_vertices() {
        let report = load(&cube_binary_stl(), MeshFormat::Stl).unwrap().report;
        assert_eq!(report.source_vertices, 36);
        assert_eq!(report.repair.welded_vertices, 28);
        assert_eq!(
            report.to_string(),
            "12 triangles, 8 vertices (STL: 12 triangles, 36 vertices; 28 vertices welded, \
             0 degenerate triangles and 0 unused vertices dropped); closed, 1 component, \
             Euler characteristic 2, genus 0"
        );
    }

    #[test]
    fn icosphere_soup_welds_back_to_a_genus_zero_sphere() {
        let sphere = crate::shapes::icosphere(0.05, 3);
        let corners: Vec<[f64; 3]> = sphere.vertices.iter().map(|p| p.coords.into()).collect();
        let stl = binary_stl(&corners, &sphere.triangles);
        let loaded = load(&stl, MeshFormat::Stl).unwrap();
        assert_eq!(loaded.mesh.vertices.len(), sphere.vertices.len());
        assert_eq!(loaded.mesh.triangles.len(), sphere.triangles.len());
        assert!(loaded.report.topology.is_watertight());
        assert_eq!(loaded.report.topology.genus, Some(0));
    }

    #[test]
    fn unit_and_scale_multiply_coordinates() {
        for (unit, scale, metres) in [
            (LengthUnit::Metre, 1.0, 1.0),
            (LengthUnit::Millimetre, 1.0, 0.001),
            (LengthUnit::Centimetre, 3.0, 0.03),
            (LengthUnit::Inch, 2.0, 0.0508),
        ] {
            let options = LoadOptions {
                unit,
                scale,
                ..LoadOptions::default()
            };
            let loaded =
                load_mesh_from_bytes(cube_off().as_bytes(), MeshFormat::Off, "cube.off", &options)
                    .unwrap();
            let far_corner = loaded.mesh.aabb().max;
            assert!(
                (far_corner - Point3::new(metres, metres, metres)).norm() < 1e-15,
                "{unit}"
            );
            let tolerance = loaded.report.repair.weld_tolerance;
            assert!(
                (tolerance - DEFAULT_RELATIVE_WELD_TOLERANCE * metres * 3f64.sqrt()).abs() < 1e-20
            );
        }
    }

    #[test]
    fn invalid_options_are_rejected() {
        for options in [
            LoadOptions {
                scale: 0.0,
                ..LoadOptions::default()
            },
            LoadOptions {
                scale: -1.0,
                ..LoadOptions::default()
            },
            LoadOptions {
                scale: f64::NAN,
                ..LoadOptions::default()
            },
            LoadOptions {
                weld_tolerance: Some(-1.0),
                ..LoadOptions::default()
            },
            LoadOptions {
                weld_tolerance: Some(f64::INFINITY),
                ..LoadOptions::default()
            },
        ] {
            let result =
                load_mesh_from_bytes(cube_off().as_bytes(), MeshFormat::Off, "c.off", &options);
            assert!(
                matches!(result, Err(MeshError::InvalidOptions { .. })),
                "{options:?}"
            );
        }
    }

    #[test]
    fn scaling_past_the_largest_float_is_a_non_finite_coordinate() {
        let text = "OFF\n3 1 0\n0 0 0\n1e300 0 0\n0 1 0\n3 0 1 2\n";
        let options = LoadOptions {
            scale: 1e10,
            ..LoadOptions::default()
        };
        match load_mesh_from_bytes(text.as_bytes(), MeshFormat::Off, "big.off", &options) {
            Err(MeshError::NonFiniteCoordinate {
                vertex: 1,
                line: None,
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn weld_tolerance_option_closes_small_gaps() {
        // Two triangles whose shared edge is 1e-6 apart in the file.
        let text = "OFF\n6 2 0\n0 0 0\n1 0 0\n0 1 0\n0 1.000001 0\n1.000001 0 0\n1 1 0\n3 0 1 2\n3 3 4 5\n";
        let default = load(text.as_bytes(), MeshFormat::Off).unwrap().report;
        assert_eq!(
            (default.repair.welded_vertices, default.topology.open_edges),
            (0, 6)
        );
        let options = LoadOptions {
            weld_tolerance: Some(1e-5),
            ..LoadOptions::default()
        };
        let welded = load_mesh_from_bytes(text.as_bytes(), MeshFormat::Off, "gap.off", &options)
            .unwrap()
            .report;
        assert_eq!(welded.repair.welded_vertices, 2);
        assert_eq!(
            (welded.topology.vertices, welded.topology.open_edges),
            (4, 4)
        );
    }

    #[test]
    fn degenerate_triangles_are_dropped_and_reported() {
        let text = format!("{}v 0.5 0 0\nf 1 2 9\nf 1 1 2\n", cube_obj());
        let loaded = load(text.as_bytes(), MeshFormat::Obj).unwrap();
        assert_eq!(loaded.report.source_triangles, 14);
        assert_eq!(loaded.report.repair.degenerate_triangles, 2);
        assert_eq!(loaded.report.repair.unreferenced_vertices, 1);
        assert!(loaded.report.topology.is_watertight());
    }

    #[test]
    fn only_degenerate_triangles_is_an_empty_mesh() {
        let text = "v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\nf 1 1 3\n";
        match load(text.as_bytes(), MeshFormat::Obj) {
            Err(MeshError::EmptyMesh { reason, file }) => {
                assert_eq!(file, "test");
                assert!(reason.contains("all 2 triangles"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn empty_and_faceless_files_are_empty_meshes() {
        let formats = [
            MeshFormat::Obj,
            MeshFormat::Stl,
            MeshFormat::Ply,
            MeshFormat::Off,
        ];
        for format in formats {
            for bytes in [&b""[..], b" \n\r\n\t"] {
                assert!(
                    matches!(load(bytes, format), Err(MeshError::EmptyMesh { .. })),
                    "{format}"
                );
            }
        }
        for (format, text) in [
            (MeshFormat::Obj, "# nothing\nv 0 0 0\n"),
            (MeshFormat::Obj, "this is not\na mesh file\n"),
            (MeshFormat::Stl, "solid empty\nendsolid empty\n"),
            (MeshFormat::Off, "OFF\n0 0 0\n"),
        ] {
            assert!(
                matches!(
                    load(text.as_bytes(), format),
                    Err(MeshError::EmptyMesh { .. })
                ),
                "{text:?}"
            );
        }
        let header_only = cube_binary_stl()[..80]
            .iter()
            .copied()
            .chain([0; 4])
            .collect::<Vec<_>>();
        assert!(matches!(
            load(&header_only, MeshFormat::Stl),
            Err(MeshError::EmptyMesh { .. })
        ));
    }

    #[test]
    fn load_mesh_reads_files_by_extension_case_insensitively() {
        let directory = tempfile::tempdir().unwrap();
        for (name, bytes) in [
            ("cube.OBJ", cube_obj().into_bytes()),
            ("cube.Stl", cube_binary_stl()),
            ("cube.ply", cube_ascii_ply().into_bytes()),
            ("cube.off", cube_off().into_bytes()),
        ] {
            let path = directory.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            let loaded = load_mesh(&path, &LoadOptions::default()).unwrap();
            assert_eq!(loaded.mesh.triangles.len(), 12, "{name}");
        }
    }

    #[test]
    fn unknown_extensions_and_missing_files_are_errors_naming_the_file() {
        let directory = tempfile::tempdir().unwrap();
        for name in ["cube.3ds", "cube", "cube.stl.gz"] {
            let path = directory.path().join(name);
            std::fs::write(&path, cube_ascii_stl()).unwrap();
            let error = load_mesh(&path, &LoadOptions::default()).unwrap_err();
            assert!(
                matches!(error, MeshError::UnsupportedExtension { .. }),
                "{error}"
            );
            assert_eq!(error.file(), path.display().to_string());
        }
        let missing = directory.path().join("missing.obj");
        let error = load_mesh(&missing, &LoadOptions::default()).unwrap_err();
        assert!(matches!(error, MeshError::Io { .. }), "{error}");
        assert!(error
            .to_string()
            .starts_with(&missing.display().to_string()));
    }

    #[test]
    fn errors_display_file_and_line() {
        let error = load(b"v 0 0 0\nv 1 nan 0\n", MeshFormat::Obj).unwrap_err();
        assert_eq!(
            error.to_string(),
            "test:2: vertex 1 has a non-finite coordinate"
        );
        assert_eq!(error.line(), Some(2));
        let error = load(b"v 0 0 0\nf 1 2 3\n", MeshFormat::Obj).unwrap_err();
        assert_eq!(
            error.to_string(),
            "test:2: face 0 refers to vertex 3, but the file has 1 vertices"
        );
    }
}
