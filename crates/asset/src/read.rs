//! Reading prepared files: the header alone, or everything memory-mapped.

use crate::header::{RawHeader, SectionId, CHECKSUM_OFFSET, FORMAT_VERSION, HEADER_LEN, MAGIC};
use crate::{AssetError, FieldKind, Header, PreparedGeometry};
use bytemuck::Pod;
use haptic_pointshell::{NestedPointTree, PointShell};
use haptic_sdf::{DenseField, Field, GridSpec, InvalidField, Slab, SparseField, BRICK_CELLS};
use memmap2::Mmap;
use nalgebra::{Point3, Vector3};
use sha2::{Digest, Sha256};
use std::any::Any;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::sync::Arc;

/// Reads and checks only the header (magic, version, codes, section table)
/// and that the file is as long as the header says; the checksum is not
/// verified. Cheap whatever the file's size.
pub fn read_header(path: &Path) -> Result<Header, AssetError> {
    let (mut file, length) = open(path)?;
    let mut bytes = Vec::with_capacity(HEADER_LEN);
    (&mut file)
        .take(HEADER_LEN as u64)
        .read_to_end(&mut bytes)
        .map_err(AssetError::io(path))?;
    let header = parse_header(&bytes, path)?;
    check_length(&header, length, path)?;
    Ok(header)
}

/// Maps the file and checks it whole: header, length, checksum, then every
/// part through its `from_parts` constructor. Field samples stay in the map
/// (zero-copy [`Slab`]s that keep it alive); shell and tree are copied.
pub fn load_prepared(path: &Path) -> Result<PreparedGeometry, AssetError> {
    let (file, _) = open(path)?;
    // SAFETY: the map is only ever read. Its contents could still change under
    // us if another process wrote the file in place; `write_prepared` never
    // does (it replaces files by renaming), which is the contract for these files.
    let map = Arc::new(unsafe { Mmap::map(&file) }.map_err(AssetError::io(path))?);
    let header = parse_header(&map, path)?;
    check_length(&header, map.len() as u64, path)?;
    if checksum(&map) != header.checksum {
        return Err(AssetError::ChecksumMismatch {
            file: path.to_owned(),
        });
    }
    let sections = Sections {
        owner: map.clone(),
        bytes: &map,
        header: &header,
        path,
    };
    let field = sections.field()?;
    let shell = sections.shell()?;
    let tree = sections.tree(&shell)?;
    Ok(PreparedGeometry {
        header,
        field,
        shell,
        tree,
    })
}

/// Opens a regular file and returns it with its length.
fn open(path: &Path) -> Result<(File, u64), AssetError> {
    let io_error = AssetError::io;
    let file = File::open(path).map_err(io_error(path))?;
    let metadata = file.metadata().map_err(io_error(path))?;
    if !metadata.is_file() {
        return Err(io_error(path)(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        )));
    }
    Ok((file, metadata.len()))
}

/// SHA-256 of `file` with its checksum field taken as zeros.
pub(crate) fn checksum(file: &[u8]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(&file[..CHECKSUM_OFFSET]);
    hasher.update([0u8; 32]);
    hasher.update(&file[CHECKSUM_OFFSET + 32..]);
    hasher.finalize().into()
}

/// Checks magic, version and size, in that order, on the file's first bytes
/// (all of it if shorter than a header), then decodes the header.
fn parse_header(bytes: &[u8], path: &Path) -> Result<Header, AssetError> {
    let magic = &bytes[..bytes.len().min(MAGIC.len())];
    if magic != &MAGIC[..magic.len()] {
        return Err(AssetError::NotAPreparedFile {
            file: path.to_owned(),
        });
    }
    if let Some(version) = bytes.get(8..12) {
        let found = u32::from_le_bytes(version.try_into().expect("four bytes"));
        if found != FORMAT_VERSION {
            return Err(AssetError::UnsupportedVersion {
                file: path.to_owned(),
                found,
                supported: FORMAT_VERSION,
            });
        }
    }
    if bytes.len() < HEADER_LEN {
        return Err(AssetError::Truncated {
            file: path.to_owned(),
            expected: HEADER_LEN as u64,
            actual: bytes.len() as u64,
        });
    }
    let raw: RawHeader = bytemuck::pod_read_unaligned(&bytes[..HEADER_LEN]);
    Header::from_raw(&raw, path)
}

fn check_length(header: &Header, actual: u64, path: &Path) -> Result<(), AssetError> {
    let expected = header.file_length;
    if actual < expected {
        return Err(AssetError::Truncated {
            file: path.to_owned(),
            expected,
            actual,
        });
    }
    if actual > expected {
        return Err(AssetError::corrupt(
            path,
            format!(
                "{} bytes past the {expected} the header accounts for",
                actual - expected
            ),
        ));
    }
    Ok(())
}

/// The sections of a mapped file whose header, length and checksum are checked.
struct Sections<'a> {
    owner: Arc<Mmap>,
    bytes: &'a [u8],
    header: &'a Header,
    path: &'a Path,
}

impl<'a> Sections<'a> {
    fn corrupt(&self, reason: String) -> AssetError {
        AssetError::corrupt(self.path, reason)
    }

    fn slice<T: Pod>(&self, id: SectionId) -> Result<&'a [T], AssetError> {
        let section = self
            .header
            .section(id)
            .ok_or_else(|| self.corrupt(format!("no {} section", id.name())))?;
        // In bounds: `Header::from_raw` checked the section against the file
        // length, which `check_length` checked against the map.
        let bytes =
            &self.bytes[section.offset as usize..(section.offset + section.length) as usize];
        bytemuck::try_cast_slice(bytes)
            .map_err(|e| self.corrupt(format!("{} section: {e}", id.name())))
    }

    /// A zero-copy view of a section that keeps the map alive.
    fn slab<T: Pod>(&self, id: SectionId) -> Result<Slab<T>, AssetError> {
        let values = self.slice::<T>(id)?;
        let owner: Arc<dyn Any + Send + Sync> = self.owner.clone();
        // SAFETY: `values` points into the read-only map that `owner` keeps alive.
        Ok(unsafe { Slab::from_owner(values, owner) })
    }

    fn field(&self) -> Result<Field, AssetError> {
        let h = self.header;
        let invalid = |what: &str, e: InvalidField| self.corrupt(format!("{what}: {e}"));
        match h.kind {
            FieldKind::Dense => Ok(Field::Dense(
                DenseField::from_parts(
                    h.grid,
                    self.slab(SectionId::DenseValues)?,
                    h.lipschitz,
                    h.mesh_bounds,
                )
                .map_err(|e| invalid("dense field", e))?,
            )),
            FieldKind::Sparse => {
                // The coarse grid is implied: one node per brick corner.
                let coarse_grid = GridSpec {
                    origin: h.grid.origin,
                    voxel_size: h.grid.voxel_size * BRICK_CELLS as f64,
                    dims: h
                        .grid
                        .dims
                        .map(|d| d.saturating_sub(1).div_ceil(BRICK_CELLS) + 1),
                };
                let coarse = DenseField::from_parts(
                    coarse_grid,
                    self.slab(SectionId::CoarseValues)?,
                    h.coarse_lipschitz,
                    h.mesh_bounds,
                )
                .map_err(|e| invalid("coarse field", e))?;
                Ok(Field::Sparse(
                    SparseField::from_parts(
                        h.grid,
                        h.band_half_width,
                        coarse,
                        self.slab(SectionId::BrickIndex)?,
                        self.slab(SectionId::BrickValues)?,
                        h.lipschitz,
                    )
                    .map_err(|e| invalid("sparse field", e))?,
                ))
            }
        }
    }

    fn triples(&self, id: SectionId) -> Result<impl Iterator<Item = [f64; 3]> + 'a, AssetError> {
        let flat = self.slice::<f64>(id)?;
        let expected = self.header.point_count.checked_mul(3);
        if expected != Some(flat.len() as u64) {
            return Err(self.corrupt(format!(
                "{} section holds {} values for {} points",
                id.name(),
                flat.len(),
                self.header.point_count
            )));
        }
        Ok(flat.chunks_exact(3).map(|c| [c[0], c[1], c[2]]))
    }

    fn shell(&self) -> Result<PointShell, AssetError> {
        Ok(PointShell {
            points: self
                .triples(SectionId::ShellPoints)?
                .map(Point3::from)
                .collect(),
            outward_normals: self
                .triples(SectionId::ShellNormals)?
                .map(Vector3::from)
                .collect(),
        })
    }

    fn tree(&self, shell: &PointShell) -> Result<NestedPointTree, AssetError> {
        let level_offsets = self.slice::<u32>(SectionId::TreeLevelOffsets)?.to_vec();
        if level_offsets.len() != self.header.tree_levels as usize + 1 {
            return Err(self.corrupt(format!(
                "{} tree level offsets for {} levels",
                level_offsets.len(),
                self.header.tree_levels
            )));
        }
        NestedPointTree::from_parts(
            shell,
            level_offsets,
            self.slice(SectionId::TreeNodePoints)?.to_vec(),
            self.slice(SectionId::TreeRadii)?.to_vec(),
            self.slice(SectionId::TreeFirstChild)?.to_vec(),
        )
        .map_err(|e| self.corrupt(format!("point tree: {e}")))
    }
}
