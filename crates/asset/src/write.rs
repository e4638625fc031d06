//! Writing prepared files atomically.

use crate::header::{SectionId, CHECKSUM_OFFSET, FORMAT_VERSION, HEADER_LEN};
use crate::{AssetError, FieldKind, Header, PreparedGeometry, SourceInfo};
use bytemuck::cast_slice;
use haptic_pointshell::{NestedPointTree, PointShell};
use haptic_sdf::{DistanceField, Field};
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use tempfile::NamedTempFile;

/// Writes `geometry` to `path` atomically: into a temporary file in the same
/// directory, synced, then renamed over `path`, and the directory synced. On
/// error the temporary file is removed and whatever was at `path` is untouched.
///
/// The header is derived from the data; of `geometry.header` only `source`
/// is used. Returns the header as written, checksum included.
pub fn write_prepared(path: &Path, geometry: &PreparedGeometry) -> Result<Header, AssetError> {
    check_consistent(geometry).map_err(|reason| AssetError::InvalidGeometry {
        file: path.to_owned(),
        reason,
    })?;
    let payload = payload(&geometry.field, &geometry.shell, &geometry.tree);
    let mut header = describe(
        geometry.header.source,
        &geometry.field,
        &geometry.shell,
        &geometry.tree,
        &payload,
    );
    header.checksum = write_atomic(path, |file| {
        let checksum: [u8; 32] = {
            let mut out = Hashing {
                inner: BufWriter::with_capacity(1 << 20, &mut *file),
                hasher: Sha256::new(),
            };
            out.put(bytemuck::bytes_of(&header.to_raw()))?;
            let mut position = HEADER_LEN as u64;
            for (section, (_, bytes)) in header.sections.iter().zip(&payload) {
                out.put(&[0; 64][..(section.offset - position) as usize])?;
                out.put(bytes)?;
                position = section.offset + section.length;
            }
            out.inner.flush()?;
            out.hasher.finalize().into()
        };
        file.seek(SeekFrom::Start(CHECKSUM_OFFSET as u64))?;
        file.write_all(&checksum)?;
        Ok(checksum)
    })?;
    Ok(header)
}

/// A writer that also hashes what it writes.
struct Hashing<W> {
    inner: W,
    hasher: Sha256,
}

impl<W: Write> Hashing<W> {
    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.hasher.update(bytes);
        self.inner.write_all(bytes)
    }
}

fn check_consistent(geometry: &PreparedGeometry) -> Result<(), String> {
    let shell = &geometry.shell;
    if shell.points.len() != shell.outward_normals.len() {
        return Err(format!(
            "the point shell has {} points but {} normals",
            shell.points.len(),
            shell.outward_normals.len()
        ));
    }
    if geometry.tree.shell_len() != shell.len() {
        return Err(format!(
            "the point tree covers {} points but the shell has {}",
            geometry.tree.shell_len(),
            shell.len()
        ));
    }
    Ok(())
}

/// The bytes of each section, in file order: field samples borrowed, shell
/// converted to little-endian triples.
pub(crate) fn payload<'a>(
    field: &'a Field,
    shell: &PointShell,
    tree: &'a NestedPointTree,
) -> Vec<(SectionId, Cow<'a, [u8]>)> {
    let mut sections: Vec<(SectionId, Cow<[u8]>)> = match field {
        Field::Dense(f) => vec![(SectionId::DenseValues, cast_slice(f.values()).into())],
        Field::Sparse(f) => vec![
            (
                SectionId::CoarseValues,
                cast_slice(f.coarse().values()).into(),
            ),
            (SectionId::BrickIndex, cast_slice(f.brick_index()).into()),
            (SectionId::BrickValues, cast_slice(f.brick_values()).into()),
        ],
    };
    sections.push((
        SectionId::ShellPoints,
        le_triples(shell.points.iter().map(|p| p.coords.into())).into(),
    ));
    sections.push((
        SectionId::ShellNormals,
        le_triples(shell.outward_normals.iter().map(|&n| n.into())).into(),
    ));
    sections.extend([
        (
            SectionId::TreeLevelOffsets,
            cast_slice(tree.level_offsets()).into(),
        ),
        (SectionId::TreeNodePoints, cast_slice(tree.points()).into()),
        (SectionId::TreeRadii, cast_slice(tree.radii()).into()),
        (
            SectionId::TreeFirstChild,
            cast_slice(tree.first_child()).into(),
        ),
    ]);
    sections
}

fn le_triples(vectors: impl Iterator<Item = [f64; 3]>) -> Vec<u8> {
    vectors.flatten().flat_map(f64::to_le_bytes).collect()
}

/// The header for these parts laid out as `payload`, checksum zero.
pub(crate) fn describe(
    source: SourceInfo,
    field: &Field,
    shell: &PointShell,
    tree: &NestedPointTree,
    payload: &[(SectionId, Cow<[u8]>)],
) -> Header {
    let (kind, grid, band_half_width, mesh_bounds, coarse_lipschitz) = match field {
        Field::Dense(f) => (FieldKind::Dense, *f.grid(), 0.0, f.mesh_bounds(), 0.0),
        Field::Sparse(f) => (
            FieldKind::Sparse,
            *f.grid(),
            f.band_half_width(),
            f.coarse().mesh_bounds(),
            f.coarse().lipschitz_bound(),
        ),
    };
    let mut header = Header {
        version: FORMAT_VERSION,
        source,
        kind,
        band_half_width,
        grid,
        mesh_bounds,
        lipschitz: field.lipschitz_bound(),
        coarse_lipschitz,
        point_count: shell.len() as u64,
        tree_levels: tree.levels() as u32,
        file_length: 0,
        sections: Vec::new(),
        checksum: [0; 32],
    };
    header.lay_out(payload.iter().map(|(id, bytes)| (*id, bytes.len() as u64)));
    header
}

/// Runs `write` on an [`AtomicFile`] for `path`, then commits it. The
/// temporary file is removed on error.
pub(crate) fn write_atomic<T>(
    path: &Path,
    write: impl FnOnce(&mut File) -> io::Result<T>,
) -> Result<T, AssetError> {
    let io_error = |source| AssetError::Io {
        file: path.to_owned(),
        source,
    };
    let mut file = AtomicFile::create(path).map_err(io_error)?;
    let written = write(file.file_mut()).map_err(io_error)?;
    file.commit().map_err(io_error)?;
    Ok(written)
}

/// A file that appears at its path only once complete: written as a
/// hidden temporary file (mode 0644) in the same directory, then synced,
/// renamed into place and the rename synced by [`commit`](Self::commit).
/// Dropped uncommitted, it is removed and nothing appears at the path.
pub struct AtomicFile {
    path: PathBuf,
    temp: NamedTempFile,
}

impl AtomicFile {
    /// Creates the temporary file beside `path`.
    pub fn create(path: &Path) -> io::Result<AtomicFile> {
        let name = path.file_name().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "the path does not name a file")
        })?;
        let mut prefix = OsString::from(".");
        prefix.push(name);
        prefix.push(".");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // Temporary files default to 0600; these are ordinary data.
            builder.permissions(std::fs::Permissions::from_mode(0o644));
        }
        let temp = builder.tempfile_in(directory(path))?;
        Ok(AtomicFile {
            path: path.to_owned(),
            temp,
        })
    }

    /// Creates `path` holding `bytes`, atomically.
    pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
        let mut file = AtomicFile::create(path)?;
        file.file_mut().write_all(bytes)?;
        file.commit()
    }

    /// The temporary file, to write.
    pub fn file_mut(&mut self) -> &mut File {
        self.temp.as_file_mut()
    }

    /// Syncs the file, renames it to its path and syncs the directory.
    pub fn commit(self) -> io::Result<()> {
        self.temp.as_file().sync_all()?;
        self.temp.persist(&self.path).map_err(|e| e.error)?;
        sync_dir(directory(&self.path))
    }
}

impl Write for AtomicFile {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.temp.write(bytes)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.temp.flush()
    }
}

impl Seek for AtomicFile {
    fn seek(&mut self, position: SeekFrom) -> io::Result<u64> {
        self.temp.seek(position)
    }
}

/// The directory `path` is in.
fn directory(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// Makes a rename durable: on POSIX it is on disk once its directory is synced.
#[cfg(unix)]
fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}
