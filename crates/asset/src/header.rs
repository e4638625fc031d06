//! The fixed header: its on-disk form ([`RawHeader`]) and its typed view ([`Header`]).

use crate::AssetError;
use bytemuck::{Pod, Zeroable};
use haptic_mesh::{Aabb, LengthUnit};
use haptic_sdf::GridSpec;
use nalgebra::Point3;
use std::fmt;
use std::path::Path;

/// The first eight bytes of every prepared file.
pub(crate) const MAGIC: [u8; 8] = *b"HAPTGEO\0";
/// The format version this build writes and reads.
pub(crate) const FORMAT_VERSION: u32 = 1;
/// Bytes in the fixed header; the first section starts here.
pub(crate) const HEADER_LEN: usize = 576;
/// Every section starts at a multiple of this many bytes.
pub(crate) const SECTION_ALIGN: u64 = 64;
/// Entries in the header's section table.
pub(crate) const MAX_SECTIONS: usize = 12;
/// Byte offset of the checksum inside the header.
pub(crate) const CHECKSUM_OFFSET: usize = std::mem::offset_of!(RawHeader, checksum);

/// The header exactly as stored (little-endian; see the crate docs for the table).
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct RawHeader {
    magic: [u8; 8],
    version: u32,
    unit: u32,
    field_kind: u32,
    resolution: u32,
    scale: f64,
    cache_key: [u8; 32],
    dims: [u32; 3],
    tree_levels: u32,
    section_count: u32,
    reserved0: u32,
    band_half_width: f64,
    padding_fraction: f64,
    voxel_size: f64,
    origin: [f64; 3],
    mesh_min: [f64; 3],
    mesh_max: [f64; 3],
    lipschitz: f64,
    coarse_lipschitz: f64,
    point_count: u64,
    file_length: u64,
    sections: [RawSection; MAX_SECTIONS],
    checksum: [u8; 32],
    reserved1: [u8; 40],
}

#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
struct RawSection {
    id: u32,
    element: u32,
    offset: u64,
    length: u64,
}

// The layout documented in the crate docs.
const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(offset_of!(RawHeader, version) == 8);
    assert!(offset_of!(RawHeader, scale) == 24);
    assert!(offset_of!(RawHeader, cache_key) == 32);
    assert!(offset_of!(RawHeader, dims) == 64);
    assert!(offset_of!(RawHeader, band_half_width) == 88);
    assert!(offset_of!(RawHeader, origin) == 112);
    assert!(offset_of!(RawHeader, lipschitz) == 184);
    assert!(offset_of!(RawHeader, file_length) == 208);
    assert!(offset_of!(RawHeader, sections) == 216);
    assert!(offset_of!(RawHeader, checksum) == 504);
    assert!(size_of::<RawSection>() == 24);
    assert!(size_of::<RawHeader>() == HEADER_LEN);
};
const _: () = assert!((HEADER_LEN as u64).next_multiple_of(SECTION_ALIGN) == HEADER_LEN as u64);
#[cfg(not(target_endian = "little"))]
compile_error!(
    "prepared files are little-endian and mapped in place: big-endian hosts are not supported"
);

/// Which distance field a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    Dense,
    Sparse,
}

impl FieldKind {
    fn code(self) -> u32 {
        match self {
            FieldKind::Dense => 0,
            FieldKind::Sparse => 1,
        }
    }

    /// The sections a file of this kind holds, in file order.
    pub(crate) fn sections(self) -> &'static [SectionId] {
        use SectionId::*;
        match self {
            FieldKind::Dense => &[
                DenseValues,
                ShellPoints,
                ShellNormals,
                TreeLevelOffsets,
                TreeNodePoints,
                TreeRadii,
                TreeFirstChild,
            ],
            FieldKind::Sparse => &[
                CoarseValues,
                BrickIndex,
                BrickValues,
                ShellPoints,
                ShellNormals,
                TreeLevelOffsets,
                TreeNodePoints,
                TreeRadii,
                TreeFirstChild,
            ],
        }
    }
}

impl fmt::Display for FieldKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FieldKind::Dense => "dense",
            FieldKind::Sparse => "sparse",
        })
    }
}

/// The type of a section's elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElementType {
    F32,
    U32,
    I16,
    F64,
}

impl ElementType {
    fn code(self) -> u32 {
        match self {
            ElementType::F32 => 1,
            ElementType::U32 => 2,
            ElementType::I16 => 3,
            ElementType::F64 => 4,
        }
    }

    /// Bytes per element.
    pub fn size(self) -> u64 {
        match self {
            ElementType::I16 => 2,
            ElementType::F32 | ElementType::U32 => 4,
            ElementType::F64 => 8,
        }
    }
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ElementType::F32 => "f32",
            ElementType::U32 => "u32",
            ElementType::I16 => "i16",
            ElementType::F64 => "f64",
        })
    }
}

/// What a section holds; the discriminant is the id stored in the section table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum SectionId {
    /// Dense field samples, x fastest.
    DenseValues = 1,
    /// A sparse field's coarse samples at brick spacing, x fastest.
    CoarseValues,
    /// One entry per brick region: brick number or empty-outside/inside marker.
    BrickIndex,
    /// 9³ fixed-point samples per brick.
    BrickValues,
    /// Shell points, x y z per point (m).
    ShellPoints,
    /// Unit outward normals, x y z per point.
    ShellNormals,
    /// Start of each tree level in node order, then the node count.
    TreeLevelOffsets,
    /// The shell point of each tree node.
    TreeNodePoints,
    /// The bounding-sphere radius of each tree node (m).
    TreeRadii,
    /// First child of each tree node, then the node count.
    TreeFirstChild,
}

const ALL_SECTIONS: [SectionId; 10] = [
    SectionId::DenseValues,
    SectionId::CoarseValues,
    SectionId::BrickIndex,
    SectionId::BrickValues,
    SectionId::ShellPoints,
    SectionId::ShellNormals,
    SectionId::TreeLevelOffsets,
    SectionId::TreeNodePoints,
    SectionId::TreeRadii,
    SectionId::TreeFirstChild,
];

impl SectionId {
    /// The id stored in the section table.
    pub(crate) fn code(self) -> u32 {
        self as u32
    }

    fn from_code(code: u32) -> Option<Self> {
        ALL_SECTIONS.into_iter().find(|id| id.code() == code)
    }

    pub fn element(self) -> ElementType {
        match self {
            SectionId::DenseValues | SectionId::CoarseValues => ElementType::F32,
            SectionId::BrickValues => ElementType::I16,
            SectionId::ShellPoints | SectionId::ShellNormals | SectionId::TreeRadii => {
                ElementType::F64
            }
            SectionId::BrickIndex
            | SectionId::TreeLevelOffsets
            | SectionId::TreeNodePoints
            | SectionId::TreeFirstChild => ElementType::U32,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            SectionId::DenseValues => "dense values",
            SectionId::CoarseValues => "coarse values",
            SectionId::BrickIndex => "brick index",
            SectionId::BrickValues => "brick values",
            SectionId::ShellPoints => "shell points",
            SectionId::ShellNormals => "shell normals",
            SectionId::TreeLevelOffsets => "tree level offsets",
            SectionId::TreeNodePoints => "tree node points",
            SectionId::TreeRadii => "tree radii",
            SectionId::TreeFirstChild => "tree first child",
        }
    }

    /// Whether the section holds distance-field samples.
    pub(crate) fn is_field(self) -> bool {
        matches!(
            self,
            SectionId::DenseValues
                | SectionId::CoarseValues
                | SectionId::BrickIndex
                | SectionId::BrickValues
        )
    }
}

/// One entry of the section table: `length` bytes at `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Section {
    pub id: SectionId,
    pub offset: u64,
    pub length: u64,
}

impl Section {
    pub fn element(&self) -> ElementType {
        self.id.element()
    }
}

/// How the geometry was made: what the writer is told rather than derives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SourceInfo {
    /// The unit the source mesh's coordinates were given in.
    pub unit: LengthUnit,
    /// The extra factor applied on top of `unit`; positions are in metres.
    pub scale: f64,
    /// [`cache_key`](crate::cache_key) of the source and build parameters.
    pub cache_key: [u8; 32],
    /// Requested nodes along the longest axis of the padded box.
    pub resolution: u32,
    /// Requested margin around the mesh, as a fraction of its longest side.
    pub padding_fraction: f64,
}

/// What a prepared file's header says.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    pub version: u32,
    pub source: SourceInfo,
    pub kind: FieldKind,
    /// Half-width of a sparse field's band of exact values (m); 0 when dense.
    pub band_half_width: f64,
    pub grid: GridSpec,
    pub mesh_bounds: Aabb,
    pub lipschitz: f64,
    /// The Lipschitz bound of a sparse field's coarse field; 0 when dense.
    pub(crate) coarse_lipschitz: f64,
    pub(crate) point_count: u64,
    pub tree_levels: u32,
    /// Total bytes in the file.
    pub file_length: u64,
    /// In file order.
    pub sections: Vec<Section>,
    /// SHA-256 over the header with this field zeroed, then the rest of the file.
    pub checksum: [u8; 32],
}

impl Header {
    pub(crate) fn section(&self, id: SectionId) -> Option<&Section> {
        self.sections.iter().find(|s| s.id == id)
    }

    /// Bytes of the sections holding field samples.
    pub fn field_bytes(&self) -> u64 {
        self.sections
            .iter()
            .filter(|s| s.id.is_field())
            .map(|s| s.length)
            .sum()
    }

    /// Lays out sections of the given byte lengths after the header, each
    /// aligned to `SECTION_ALIGN`, and sets `file_length` to match.
    pub(crate) fn lay_out(&mut self, lengths: impl IntoIterator<Item = (SectionId, u64)>) {
        let mut end = HEADER_LEN as u64;
        self.sections = lengths
            .into_iter()
            .map(|(id, length)| {
                let offset = end.next_multiple_of(SECTION_ALIGN);
                end = offset + length;
                Section { id, offset, length }
            })
            .collect();
        self.file_length = end;
    }

    pub(crate) fn to_raw(&self) -> RawHeader {
        let mut sections = [RawSection::zeroed(); MAX_SECTIONS];
        for (raw, section) in sections.iter_mut().zip(&self.sections) {
            *raw = RawSection {
                id: section.id.code(),
                element: section.element().code(),
                offset: section.offset,
                length: section.length,
            };
        }
        RawHeader {
            magic: MAGIC,
            version: self.version,
            unit: unit_code(self.source.unit),
            field_kind: self.kind.code(),
            resolution: self.source.resolution,
            scale: self.source.scale,
            cache_key: self.source.cache_key,
            dims: self.grid.dims,
            tree_levels: self.tree_levels,
            section_count: self.sections.len() as u32,
            reserved0: 0,
            band_half_width: self.band_half_width,
            padding_fraction: self.source.padding_fraction,
            voxel_size: self.grid.voxel_size,
            origin: self.grid.origin.coords.into(),
            mesh_min: self.mesh_bounds.min.coords.into(),
            mesh_max: self.mesh_bounds.max.coords.into(),
            lipschitz: self.lipschitz,
            coarse_lipschitz: self.coarse_lipschitz,
            point_count: self.point_count,
            file_length: self.file_length,
            sections,
            checksum: self.checksum,
            reserved1: [0; 40],
        }
    }

    /// Checks a header whose magic and version are already known to be right:
    /// codes, the section set of its field kind, and section alignment and
    /// bounds against `file_length`.
    pub(crate) fn from_raw(raw: &RawHeader, file: &Path) -> Result<Self, AssetError> {
        let corrupt = |reason: String| AssetError::corrupt(file, reason);
        let unit = unit_from_code(raw.unit)
            .ok_or_else(|| corrupt(format!("unknown length unit code {}", raw.unit)))?;
        let kind = match raw.field_kind {
            0 => FieldKind::Dense,
            1 => FieldKind::Sparse,
            code => return Err(corrupt(format!("unknown field kind code {code}"))),
        };
        let count = raw.section_count as usize;
        if count > MAX_SECTIONS {
            return Err(corrupt(format!(
                "{count} sections, at most {MAX_SECTIONS} fit the table"
            )));
        }
        let mut sections = Vec::with_capacity(count);
        for (index, entry) in raw.sections[..count].iter().enumerate() {
            let id = SectionId::from_code(entry.id)
                .ok_or_else(|| corrupt(format!("section {index} has unknown id {}", entry.id)))?;
            let name = id.name();
            if !kind.sections().contains(&id) {
                return Err(corrupt(format!("a {kind} field file has a {name} section")));
            }
            if sections.iter().any(|s: &Section| s.id == id) {
                return Err(corrupt(format!("two {name} sections")));
            }
            if entry.element != id.element().code() {
                return Err(corrupt(format!(
                    "{name} section has element type code {}, expected {}",
                    entry.element,
                    id.element()
                )));
            }
            if entry.offset % SECTION_ALIGN != 0 || entry.offset < HEADER_LEN as u64 {
                return Err(corrupt(format!(
                    "{name} section at offset {} is not {SECTION_ALIGN}-byte aligned after the header",
                    entry.offset
                )));
            }
            if entry
                .offset
                .checked_add(entry.length)
                .is_none_or(|end| end > raw.file_length)
            {
                return Err(corrupt(format!(
                    "{name} section ({} bytes at {}) runs past the end of the file ({} bytes)",
                    entry.length, entry.offset, raw.file_length
                )));
            }
            if entry.length % id.element().size() != 0 {
                return Err(corrupt(format!(
                    "{name} section length {} is not a whole number of {} elements",
                    entry.length,
                    id.element()
                )));
            }
            sections.push(Section {
                id,
                offset: entry.offset,
                length: entry.length,
            });
        }
        if raw
            .dims
            .iter()
            .try_fold(1usize, |nodes, &d| nodes.checked_mul(d as usize))
            .is_none()
        {
            return Err(corrupt(format!("grid dims {:?} overflow", raw.dims)));
        }
        if !(raw.lipschitz.is_finite() && raw.lipschitz > 0.0) {
            return Err(corrupt(format!(
                "Lipschitz bound {} is not positive",
                raw.lipschitz
            )));
        }
        Ok(Header {
            version: raw.version,
            source: SourceInfo {
                unit,
                scale: raw.scale,
                cache_key: raw.cache_key,
                resolution: raw.resolution,
                padding_fraction: raw.padding_fraction,
            },
            kind,
            band_half_width: raw.band_half_width,
            grid: GridSpec {
                origin: Point3::from(raw.origin),
                voxel_size: raw.voxel_size,
                dims: raw.dims,
            },
            mesh_bounds: Aabb {
                min: Point3::from(raw.mesh_min),
                max: Point3::from(raw.mesh_max),
            },
            lipschitz: raw.lipschitz,
            coarse_lipschitz: raw.coarse_lipschitz,
            point_count: raw.point_count,
            tree_levels: raw.tree_levels,
            file_length: raw.file_length,
            sections,
            checksum: raw.checksum,
        })
    }
}

fn unit_code(unit: LengthUnit) -> u32 {
    match unit {
        LengthUnit::Metre => 0,
        LengthUnit::Centimetre => 1,
        LengthUnit::Millimetre => 2,
        LengthUnit::Inch => 3,
    }
}

fn unit_from_code(code: u32) -> Option<LengthUnit> {
    [
        LengthUnit::Metre,
        LengthUnit::Centimetre,
        LengthUnit::Millimetre,
        LengthUnit::Inch,
    ]
    .into_iter()
    .find(|&unit| unit_code(unit) == code)
}
