//! The prepared-geometry file (`.hgeo`): a signed distance field, a point
//! shell and its nested point tree, built once from a mesh and then
//! memory-mapped by the server, field samples queried in place.
//!
//! - [`write_prepared`] writes atomically (temporary file, fsync, rename,
//!   directory fsync): a reader sees the old file or the new one, never a mix.
//! - [`load_prepared`] maps the file, checks it whole and reassembles the parts.
//! - [`read_header`] reads only the header, for inspection and cache checks.
//! - [`cache_key`] fingerprints a source mesh and its build parameters.
//!
//! # Layout (format version 1)
//!
//! Little-endian throughout. A fixed 576-byte header, then the sections, each
//! starting at a multiple of 64 bytes with zero padding between them; the file
//! ends with the last section. Positions and lengths are in metres.
//!
//! | offset | type | content |
//! |---:|---|---|
//! | 0 | `[u8; 8]` | magic `b"HAPTGEO\0"` |
//! | 8 | u32 | format version, 1 |
//! | 12 | u32 | length unit of the source: 0 m, 1 cm, 2 mm, 3 in |
//! | 16 | u32 | field kind: 0 dense, 1 sparse |
//! | 20 | u32 | requested resolution (nodes along the longest axis) |
//! | 24 | f64 | scale applied on top of the unit |
//! | 32 | `[u8; 32]` | cache key ([`cache_key`]) |
//! | 64 | `[u32; 3]` | grid dims (nodes per axis) |
//! | 76 | u32 | tree levels |
//! | 80 | u32 | sections in use (at most 12) |
//! | 84 | u32 | reserved, 0 |
//! | 88 | f64 | band half-width (sparse; 0 when dense) |
//! | 96 | f64 | padding around the mesh, fraction of its longest side |
//! | 104 | f64 | voxel size |
//! | 112 | `[f64; 3]` | grid origin |
//! | 136 | `[f64; 3]` | mesh bounds, min |
//! | 160 | `[f64; 3]` | mesh bounds, max |
//! | 184 | f64 | Lipschitz bound of the field |
//! | 192 | f64 | Lipschitz bound of a sparse field's coarse field (0 when dense) |
//! | 200 | u64 | shell point count |
//! | 208 | u64 | file length in bytes |
//! | 216 | 12 × 24 bytes | section table: u32 id, u32 element type, u64 byte offset, u64 byte length; unused entries zero |
//! | 504 | `[u8; 32]` | checksum |
//! | 536 | `[u8; 40]` | reserved, 0 |
//!
//! Element types: 1 f32, 2 u32, 3 i16, 4 f64. Sections, in file order (a
//! dense file holds 1 and 5–10, a sparse one 2–10):
//!
//! | id | section | type | elements |
//! |---:|---|---|---|
//! | 1 | dense values | f32 | one per grid node, x fastest |
//! | 2 | coarse values | f32 | one per brick corner, x fastest: a grid with the same origin, 8 × the voxel size and `ceil((dims − 1) / 8) + 1` nodes per axis |
//! | 3 | brick index | u32 | one per brick region: brick number, `u32::MAX` (empty, outside) or `u32::MAX − 1` (empty, inside) |
//! | 4 | brick values | i16 | 9³ per brick, x fastest, 512 steps per voxel |
//! | 5 | shell points | f64 | x, y, z per point |
//! | 6 | shell normals | f64 | unit outward x, y, z per point |
//! | 7 | tree level offsets | u32 | levels + 1 |
//! | 8 | tree node points | u32 | one per node: its shell point |
//! | 9 | tree radii | f64 | one per node |
//! | 10 | tree first child | u32 | nodes + 1 |
//!
//! The checksum is SHA-256 over the whole file with the checksum field read as
//! zeros. The cache key is SHA-256 over the magic, the format version (u32),
//! the source's length (u64) and bytes, then the parameter text (UTF-8).
//!
//! Loading checks, in order: magic, version, header length, the header's codes
//! and section table (alignment, bounds, element types), the file length, the
//! checksum, then the parts' own invariants through their `from_parts`
//! constructors. Files are mapped in place, so only little-endian hosts are
//! supported.

mod error;
mod header;
mod read;
mod write;

#[cfg(test)]
mod tests;

pub use error::AssetError;
pub use header::{ElementType, FieldKind, Header, Section, SectionId, SourceInfo};
pub use read::{load_prepared, read_header};
pub use write::{write_prepared, AtomicFile};

use haptic_pointshell::{NestedPointTree, PointShell};
use haptic_sdf::Field;
use header::{FORMAT_VERSION, MAGIC};
use sha2::{Digest, Sha256};

/// Everything a prepared file holds.
#[derive(Clone, Debug)]
pub struct PreparedGeometry {
    pub header: Header,
    pub field: Field,
    pub shell: PointShell,
    pub tree: NestedPointTree,
}

impl PreparedGeometry {
    /// Puts the parts together under a header that describes them, its
    /// checksum zero until written.
    pub fn new(source: SourceInfo, field: Field, shell: PointShell, tree: NestedPointTree) -> Self {
        let header = write::describe(
            source,
            &field,
            &shell,
            &tree,
            &write::payload(&field, &shell, &tree),
        );
        Self {
            header,
            field,
            shell,
            tree,
        }
    }
}

/// The key under which a build is cached: SHA-256 over the source mesh's
/// bytes, a canonical text of every build parameter, and the format version.
pub fn cache_key(source_bytes: &[u8], params_text: &str) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(MAGIC);
    hasher.update(FORMAT_VERSION.to_le_bytes());
    hasher.update((source_bytes.len() as u64).to_le_bytes());
    hasher.update(source_bytes);
    hasher.update(params_text.as_bytes());
    hasher.finalize().into()
}
