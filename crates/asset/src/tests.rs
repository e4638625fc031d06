use crate::header::{CHECKSUM_OFFSET, HEADER_LEN, SECTION_ALIGN};
use crate::read::checksum;
use crate::*;
use haptic_mesh::shapes::torus;
use haptic_mesh::{LengthUnit, TriangleMesh};
use haptic_pointshell::{sample_point_shell, spacing_for_count};
use haptic_sdf::{DenseField, DenseOptions, DistanceField, NoProgress, SparseField, SparseOptions};
use nalgebra::Point3;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn mesh() -> &'static TriangleMesh {
    static MESH: OnceLock<TriangleMesh> = OnceLock::new();
    MESH.get_or_init(|| torus(0.04, 0.015, 48, 24))
}

fn source(resolution: u32) -> SourceInfo {
    SourceInfo {
        unit: LengthUnit::Millimetre,
        scale: 1.5,
        cache_key: cache_key(b"mesh bytes", &format!("resolution={resolution}")),
        resolution,
        padding_fraction: 0.1,
    }
}

fn geometry(field: Field, resolution: u32) -> PreparedGeometry {
    let shell = sample_point_shell(mesh(), spacing_for_count(mesh(), 800), 1);
    let tree = NestedPointTree::new(&shell, 5);
    PreparedGeometry::new(source(resolution), field, shell, tree)
}

fn dense() -> &'static PreparedGeometry {
    static DENSE: OnceLock<PreparedGeometry> = OnceLock::new();
    DENSE.get_or_init(|| {
        let options = DenseOptions {
            resolution: 24,
            padding_fraction: 0.1,
        };
        geometry(
            Field::Dense(DenseField::build(mesh(), &options, &NoProgress)),
            24,
        )
    })
}

fn sparse() -> &'static PreparedGeometry {
    static SPARSE: OnceLock<PreparedGeometry> = OnceLock::new();
    SPARSE.get_or_init(|| {
        let options = SparseOptions {
            resolution: 48,
            padding_fraction: 0.1,
            band_half_width_voxels: 3.0,
        };
        geometry(
            Field::Sparse(SparseField::build(mesh(), &options, &NoProgress)),
            48,
        )
    })
}

/// A written copy of `geometry` in a fresh directory.
fn written(geometry: &PreparedGeometry) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shape.hgeo");
    write_prepared(&path, geometry).unwrap();
    (dir, path)
}

/// Points on a lattice through and around the field's box.
fn probes(field: &Field) -> Vec<Point3<f64>> {
    let b = field.bounds().dilated(0.02);
    let n = 9;
    let mut points = Vec::new();
    for i in 0..n {
        for j in 0..n {
            for k in 0..n {
                let t = |c: usize, a: usize| b.min[a] + (b.max[a] - b.min[a]) * c as f64 / 8.3;
                points.push(Point3::new(t(i, 0), t(j, 1), t(k, 2)));
            }
        }
    }
    points
}

fn assert_same_queries(a: &Field, b: &Field) {
    assert_eq!(a.bounds(), b.bounds());
    assert_eq!(a.lipschitz_bound(), b.lipschitz_bound());
    for p in probes(a) {
        assert_eq!(a.value_gradient(&p), b.value_gradient(&p), "at {p}");
    }
}

fn assert_same_shell_and_tree(a: &PreparedGeometry, b: &PreparedGeometry) {
    assert_eq!(a.shell, b.shell);
    assert_eq!(a.tree, b.tree);
}

#[test]
fn dense_round_trip_keeps_values_queries_shell_and_tree() {
    let original = dense();
    let (_dir, path) = written(original);
    let loaded = load_prepared(&path).unwrap();
    let (Field::Dense(a), Field::Dense(b)) = (&original.field, &loaded.field) else {
        panic!("loaded a {:?} field", loaded.header.kind);
    };
    assert_eq!(a.values(), b.values());
    assert_eq!(a.grid(), b.grid());
    assert_eq!(a.mesh_bounds(), b.mesh_bounds());
    assert_same_queries(&original.field, &loaded.field);
    assert_same_shell_and_tree(original, &loaded);
    assert_eq!(loaded.header.source, original.header.source);
    assert_eq!(loaded.header.kind, FieldKind::Dense);
}

#[test]
fn sparse_round_trip_keeps_values_queries_shell_and_tree() {
    let original = sparse();
    let (_dir, path) = written(original);
    let loaded = load_prepared(&path).unwrap();
    let (Field::Sparse(a), Field::Sparse(b)) = (&original.field, &loaded.field) else {
        panic!("loaded a {:?} field", loaded.header.kind);
    };
    assert!(a.brick_count() > 0);
    assert_eq!(a.brick_index(), b.brick_index());
    assert_eq!(a.brick_values(), b.brick_values());
    assert_eq!(a.coarse().values(), b.coarse().values());
    assert_eq!(a.coarse().grid(), b.coarse().grid());
    assert_eq!(a.coarse().lipschitz_bound(), b.coarse().lipschitz_bound());
    assert_eq!(a.band_half_width(), b.band_half_width());
    assert_same_queries(&original.field, &loaded.field);
    assert_same_shell_and_tree(original, &loaded);
    assert_eq!(loaded.header.kind, FieldKind::Sparse);
}

#[test]
fn written_header_is_what_read_header_and_load_return() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shape.hgeo");
    let header = write_prepared(&path, sparse()).unwrap();
    assert_ne!(header.checksum, [0; 32]);
    assert_eq!(
        Header {
            checksum: [0; 32],
            ..header.clone()
        },
        sparse().header
    );
    assert_eq!(read_header(&path).unwrap(), header);
    assert_eq!(load_prepared(&path).unwrap().header, header);
    assert_eq!(fs::metadata(&path).unwrap().len(), header.file_length);
    for section in &header.sections {
        assert_eq!(section.offset % SECTION_ALIGN, 0, "{section:?}");
    }
}

/// Rewrites the file with `edit` applied to its bytes.
fn edit(path: &Path, edit: impl FnOnce(&mut Vec<u8>)) {
    let mut bytes = fs::read(path).unwrap();
    edit(&mut bytes);
    fs::write(path, bytes).unwrap();
}

/// Recomputes the checksum, so that only deeper checks can object.
fn reseal(bytes: &mut [u8]) {
    let sum = checksum(bytes);
    bytes[CHECKSUM_OFFSET..CHECKSUM_OFFSET + 32].copy_from_slice(&sum);
}

fn assert_names_file(error: &AssetError, path: &Path) {
    assert_eq!(error.file(), path);
    let message = error.to_string();
    assert!(message.contains(&path.display().to_string()), "{message}");
}

#[test]
fn truncated_file_is_reported_with_both_lengths() {
    let (_dir, path) = written(dense());
    let full = fs::metadata(&path).unwrap().len();
    edit(&path, |b| b.truncate(b.len() - 100));
    for result in [
        load_prepared(&path).map(|_| ()),
        read_header(&path).map(|_| ()),
    ] {
        let error = result.unwrap_err();
        assert!(
            matches!(error, AssetError::Truncated { expected, actual, .. }
                if expected == full && actual == full - 100),
            "{error}"
        );
        assert_names_file(&error, &path);
    }
    edit(&path, |b| b.truncate(100));
    assert!(matches!(
        load_prepared(&path),
        Err(AssetError::Truncated { expected, actual: 100, .. }) if expected == HEADER_LEN as u64
    ));
    edit(&path, |b| b.clear());
    assert!(matches!(
        load_prepared(&path),
        Err(AssetError::Truncated { actual: 0, .. })
    ));
}

#[test]
fn flipped_byte_fails_the_checksum() {
    let (_dir, path) = written(sparse());
    let header = read_header(&path).unwrap();
    let brick_values = header.section(SectionId::BrickValues).unwrap();
    let body = brick_values.offset as usize + 7;
    // A byte in the field samples, and one in the header's Lipschitz bound.
    for at in [body, 190] {
        edit(&path, |b| b[at] ^= 0x10);
        let error = load_prepared(&path).unwrap_err();
        assert!(
            matches!(error, AssetError::ChecksumMismatch { .. }),
            "{error}"
        );
        assert_names_file(&error, &path);
        edit(&path, |b| b[at] ^= 0x10);
        load_prepared(&path).unwrap();
    }
}

#[test]
fn wrong_magic_is_not_a_prepared_file() {
    let (_dir, path) = written(dense());
    edit(&path, |b| b[0] = b'X');
    for result in [
        load_prepared(&path).map(|_| ()),
        read_header(&path).map(|_| ()),
    ] {
        let error = result.unwrap_err();
        assert!(
            matches!(error, AssetError::NotAPreparedFile { .. }),
            "{error}"
        );
        assert_names_file(&error, &path);
    }
    fs::write(&path, "v 0 0 0\nf 1 1 1\n").unwrap();
    assert!(matches!(
        load_prepared(&path),
        Err(AssetError::NotAPreparedFile { .. })
    ));
}

#[test]
fn version_2_is_unsupported() {
    let (_dir, path) = written(dense());
    edit(&path, |b| {
        b[8..12].copy_from_slice(&2u32.to_le_bytes());
        reseal(b);
    });
    for result in [
        load_prepared(&path).map(|_| ()),
        read_header(&path).map(|_| ()),
    ] {
        let error = result.unwrap_err();
        assert!(
            matches!(
                error,
                AssetError::UnsupportedVersion {
                    found: 2,
                    supported: 1,
                    ..
                }
            ),
            "{error}"
        );
        assert_names_file(&error, &path);
    }
}

#[test]
fn inconsistent_contents_under_a_valid_checksum_are_corrupt() {
    let (_dir, path) = written(dense());
    let pristine = fs::read(&path).unwrap();
    let radii = read_header(&path).unwrap();
    let radii = radii.section(SectionId::TreeRadii).unwrap().offset as usize;
    let corrupt = |change: &dyn Fn(&mut Vec<u8>), expected: &str| {
        let mut bytes = pristine.clone();
        change(&mut bytes);
        reseal(&mut bytes);
        fs::write(&path, bytes).unwrap();
        match load_prepared(&path) {
            Err(error @ AssetError::Corrupt { .. }) => {
                let message = error.to_string();
                assert!(message.contains(expected), "{message}");
                assert_names_file(&error, &path);
            }
            other => panic!("expected Corrupt ({expected}), got {other:?}"),
        }
    };
    // One more node along x than the dense values hold.
    corrupt(&|b| b[64] += 1, "dense field");
    // The first section moved off its 64-byte alignment.
    corrupt(&|b| b[216 + 8] += 8, "aligned");
    // A section running past the end of the file.
    corrupt(
        &|b| b[216 + 16..216 + 24].copy_from_slice(&u64::MAX.to_le_bytes()),
        "past the end",
    );
    corrupt(&|b| b[12] = 9, "length unit");
    corrupt(&|b| b.extend_from_slice(&[0; 64]), "bytes past");
    // The root's bounding radius shrunk to zero.
    corrupt(
        &|b| b[radii..radii + 8].copy_from_slice(&0f64.to_le_bytes()),
        "point tree",
    );
}

#[test]
fn writing_leaves_no_temporary_file_and_replaces_the_old_one() {
    let (dir, path) = written(dense());
    write_prepared(&path, sparse()).unwrap();
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["shape.hgeo"]);
    assert_eq!(read_header(&path).unwrap().kind, FieldKind::Sparse);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o644, 0o644, "mode {mode:o}");
    }
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut names: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    names
}

#[test]
fn a_failed_write_keeps_the_old_file_and_removes_the_temporary_one() {
    let (dir, path) = written(dense());
    let old = fs::read(&path).unwrap();
    let result = write::write_atomic(&path, |file| {
        use std::io::Write;
        file.write_all(b"HAPTGEO\0 half a file")?;
        Err::<(), _>(std::io::Error::other("disk full"))
    });
    let error = result.unwrap_err();
    assert!(matches!(error, AssetError::Io { .. }), "{error}");
    assert_names_file(&error, &path);
    assert_eq!(fs::read(&path).unwrap(), old);
    assert_eq!(entries(dir.path()), [path]);
}

#[test]
fn a_failed_rename_removes_the_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    // A non-empty directory where the file should go: even root cannot rename over it.
    let target = dir.path().join("shape.hgeo");
    fs::create_dir(&target).unwrap();
    fs::write(target.join("keep"), "old").unwrap();
    let error = write_prepared(&target, dense()).unwrap_err();
    assert!(matches!(error, AssetError::Io { .. }), "{error}");
    assert_eq!(entries(dir.path()), std::slice::from_ref(&target));
    assert_eq!(fs::read_to_string(target.join("keep")).unwrap(), "old");
}

#[cfg(unix)]
#[test]
fn writing_into_a_read_only_directory_fails_and_keeps_the_old_file() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, path) = written(dense());
    let old = fs::read(&path).unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o555)).unwrap();
    let probe = dir.path().join("probe");
    let enforced = fs::write(&probe, "").is_err();
    let result = write_prepared(&path, sparse());
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    if !enforced {
        // Running as root: permissions are not enforced, and the write went through.
        fs::remove_file(&probe).unwrap();
        result.unwrap();
        return;
    }
    let error = result.unwrap_err();
    assert!(matches!(error, AssetError::Io { .. }), "{error}");
    assert_names_file(&error, &path);
    assert_eq!(fs::read(&path).unwrap(), old);
    assert_eq!(entries(dir.path()), [path]);
}

#[test]
fn mismatched_shell_and_tree_are_refused_before_writing() {
    let mut geometry = dense().clone();
    geometry.shell.points.pop();
    geometry.shell.outward_normals.pop();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shape.hgeo");
    let error = write_prepared(&path, &geometry).unwrap_err();
    assert!(
        matches!(error, AssetError::InvalidGeometry { .. }),
        "{error}"
    );
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn cache_key_separates_source_from_parameters() {
    let key = cache_key(b"abc", "resolution=64");
    assert_eq!(key, cache_key(b"abc", "resolution=64"));
    assert_ne!(key, cache_key(b"abd", "resolution=64"));
    assert_ne!(key, cache_key(b"abc", "resolution=65"));
    assert_ne!(cache_key(b"ab", "c"), cache_key(b"a", "bc"));
}
