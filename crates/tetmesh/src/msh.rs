//! Gmsh MSH 4.1, ASCII and binary: the reader takes the 4-node tetrahedra
//! (element type 4) as the volume and ignores every other element; the
//! writer writes ASCII.
//!
//! Layout (Gmsh reference manual, "MSH file format", version 4.1): sections
//! `$Name … $EndName`; `$MeshFormat` gives `4.1 file-type data-size`
//! (binary files follow it with the integer 1 to fix the byte order);
//! `$Nodes` and `$Elements` are lists of entity blocks, each with its own
//! tags. In binary, block headers are three `int`s and a `size_t`, tags are
//! `size_t`, coordinates `double`. Other sections are skipped.

use crate::read_error::{Location, ParsedTetMesh, ReadError};
use crate::TetMesh;
use nalgebra::Point3;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

/// Gmsh's element type of the 4-node tetrahedron.
pub const TETRAHEDRON: i32 = 4;

/// Node count of Gmsh element types (for skipping blocks in binary files).
fn nodes_per_element(element_type: i32) -> Option<usize> {
    Some(match element_type {
        1 => 2,
        2 => 3,
        3 => 4,
        4 => 4,
        5 => 8,
        6 => 6,
        7 => 5,
        8 => 3,
        9 => 6,
        10 => 9,
        11 => 10,
        12 => 27,
        13 => 18,
        14 => 14,
        15 => 1,
        16 => 8,
        17 => 20,
        18 => 15,
        19 => 13,
        20 => 9,
        21 => 10,
        22 => 12,
        23 => 15,
        24 => 15,
        25 => 21,
        26 => 4,
        27 => 5,
        28 => 6,
        29 => 20,
        30 => 35,
        31 => 56,
        92 => 64,
        93 => 125,
        _ => return None,
    })
}

/// Parses MSH 4.1 content; `path` names the file in errors. The mesh is
/// not validated: see [`ParsedTetMesh::checked`].
pub fn parse_msh(bytes: &[u8], path: &Path) -> Result<ParsedTetMesh, ReadError> {
    Parser {
        skipped: Default::default(),
        bytes,
        pos: 0,
        path,
        binary: false,
        big_endian: false,
    }
    .parse()
}

/// A cursor over the file: text tokens, or binary values in the byte order
/// `$MeshFormat` fixed.
struct Parser<'a> {
    /// Elements of other types than the 4-node tet, by type, for the
    /// message when a file holds no tets.
    skipped: std::collections::BTreeMap<i32, usize>,
    bytes: &'a [u8],
    pos: usize,
    path: &'a Path,
    binary: bool,
    big_endian: bool,
}

/// The tets of `$Elements`, their element tags and where each is.
type Tets = (Vec<[u32; 4]>, Vec<u64>, Vec<Location>);

struct Nodes {
    positions: Vec<Point3<f64>>,
    tags: Vec<u64>,
    index: HashMap<u64, u32>,
}

impl<'a> Parser<'a> {
    fn location(&self, pos: usize) -> Location {
        if self.binary {
            Location::Byte(pos)
        } else {
            Location::Line(
                1 + self.bytes[..pos.min(self.bytes.len())]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count(),
            )
        }
    }

    fn error(&self, pos: usize, message: impl Into<String>) -> ReadError {
        ReadError::syntax(self.path, Some(self.location(pos)), message)
    }

    fn skip_whitespace(&mut self) {
        while self.pos < self.bytes.len() && self.bytes[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    /// The next whitespace-delimited token and where it starts.
    fn token(&mut self, what: &str) -> Result<(&'a str, usize), ReadError> {
        self.skip_whitespace();
        let start = self.pos;
        while self.pos < self.bytes.len() && !self.bytes[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
        if start == self.pos {
            return Err(self.error(start, format!("the file ends where {what} was expected")));
        }
        let token = std::str::from_utf8(&self.bytes[start..self.pos]).map_err(|_| {
            self.error(
                start,
                format!("expected {what}, found bytes that are not text"),
            )
        })?;
        Ok((token, start))
    }

    fn number<T: std::str::FromStr>(&mut self, what: &str) -> Result<T, ReadError> {
        let (token, start) = self.token(what)?;
        token.parse().map_err(|_| {
            self.error(
                start,
                format!("expected {what}, found `{}`", shorten(token)),
            )
        })
    }

    /// The tokens of the rest of the current line, and the line's start.
    fn line_tokens(&mut self, what: &str) -> Result<(Vec<&'a str>, usize), ReadError> {
        self.skip_whitespace();
        let start = self.pos;
        if start >= self.bytes.len() {
            return Err(self.error(start, format!("the file ends where {what} was expected")));
        }
        let end = self.bytes[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(self.bytes.len(), |i| start + i);
        self.pos = end;
        let line = std::str::from_utf8(&self.bytes[start..end]).map_err(|_| {
            self.error(
                start,
                format!("expected {what}, found bytes that are not text"),
            )
        })?;
        Ok((line.split_ascii_whitespace().collect(), start))
    }

    fn expect(&mut self, keyword: &str) -> Result<(), ReadError> {
        let (token, start) = self.token(keyword)?;
        if token != keyword {
            return Err(self.error(
                start,
                format!("expected {keyword}, found `{}`", shorten(token)),
            ));
        }
        Ok(())
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], ReadError> {
        if self.bytes.len().saturating_sub(self.pos) < n {
            return Err(self.error(self.pos, format!("the file ends inside {what}")));
        }
        let slice = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(slice)
    }

    fn binary_i32(&mut self, what: &str) -> Result<i32, ReadError> {
        let b: [u8; 4] = self.take(4, what)?.try_into().unwrap_or([0; 4]);
        Ok(if self.big_endian {
            i32::from_be_bytes(b)
        } else {
            i32::from_le_bytes(b)
        })
    }

    fn binary_u64(&mut self, what: &str) -> Result<u64, ReadError> {
        let b: [u8; 8] = self.take(8, what)?.try_into().unwrap_or([0; 8]);
        Ok(if self.big_endian {
            u64::from_be_bytes(b)
        } else {
            u64::from_le_bytes(b)
        })
    }

    fn binary_f64(&mut self, what: &str) -> Result<f64, ReadError> {
        let b: [u8; 8] = self.take(8, what)?.try_into().unwrap_or([0; 8]);
        Ok(if self.big_endian {
            f64::from_be_bytes(b)
        } else {
            f64::from_le_bytes(b)
        })
    }

    /// A `size_t` (binary) or an unsigned integer token (ASCII).
    fn size(&mut self, what: &str) -> Result<u64, ReadError> {
        if self.binary {
            self.binary_u64(what)
        } else {
            self.number(what)
        }
    }

    /// An `int` (binary) or an integer token (ASCII).
    fn int(&mut self, what: &str) -> Result<i32, ReadError> {
        if self.binary {
            self.binary_i32(what)
        } else {
            self.number(what)
        }
    }

    fn float(&mut self, what: &str) -> Result<f64, ReadError> {
        if self.binary {
            self.binary_f64(what)
        } else {
            self.number(what)
        }
    }

    /// A count from the file, refused when the rest of the file cannot
    /// hold that many items of `fields` numbers each (at least 2 bytes a
    /// number in text, 4 in binary), so that a corrupt count allocates
    /// nothing.
    fn count(&mut self, what: &str, fields: usize) -> Result<usize, ReadError> {
        let start = self.pos;
        let count = self.size(what)?;
        let min_bytes = fields.max(1) * if self.binary { 4 } else { 2 };
        let room = self.bytes.len().saturating_sub(self.pos) / min_bytes;
        if count > room as u64 {
            return Err(self.error(
                start,
                format!("{what} is {count}, more than the rest of the file can hold"),
            ));
        }
        Ok(count as usize)
    }

    fn parse(mut self) -> Result<ParsedTetMesh, ReadError> {
        let mut format_seen = false;
        let mut nodes: Option<Nodes> = None;
        let mut tets: Option<Tets> = None;
        loop {
            self.skip_whitespace();
            if self.pos >= self.bytes.len() {
                break;
            }
            let (section, start) = self.token("a section")?;
            // Binary data starts right after the section line's newline.
            if self.binary && self.bytes.get(self.pos) == Some(&b'\n') {
                self.pos += 1;
            }
            match section {
                "$MeshFormat" => {
                    self.mesh_format()?;
                    format_seen = true;
                }
                _ if !format_seen => {
                    return Err(self.error(
                        start,
                        format!("expected $MeshFormat first, found `{}`", shorten(section)),
                    ))
                }
                "$Nodes" => {
                    if nodes.is_some() {
                        return Err(self.error(start, "a second $Nodes section"));
                    }
                    nodes = Some(self.nodes()?);
                    self.expect("$EndNodes")?;
                }
                "$Elements" => {
                    let Some(nodes) = nodes.as_ref() else {
                        return Err(self.error(start, "$Elements comes before $Nodes"));
                    };
                    if tets.is_some() {
                        return Err(self.error(start, "a second $Elements section"));
                    }
                    tets = Some(self.elements(nodes)?);
                    self.expect("$EndElements")?;
                }
                _ if section.starts_with('$') && !section.starts_with("$End") => {
                    self.skip_section(&section[1..], start)?;
                }
                _ => {
                    return Err(self.error(
                        start,
                        format!(
                            "expected a section such as $Nodes, found `{}`",
                            shorten(section)
                        ),
                    ))
                }
            }
        }
        if !format_seen {
            return Err(ReadError::syntax(
                self.path,
                None,
                "no $MeshFormat section: not a Gmsh MSH file",
            ));
        }
        let nodes = nodes.ok_or_else(|| ReadError::syntax(self.path, None, "no $Nodes section"))?;
        let (tets, element_numbers, element_locations) =
            tets.ok_or_else(|| ReadError::syntax(self.path, None, "no $Elements section"))?;
        if tets.is_empty() {
            let found: Vec<String> = self
                .skipped
                .iter()
                .map(|(element_type, count)| format!("{count} of type {element_type}"))
                .collect();
            let found = if found.is_empty() {
                "none".to_owned()
            } else {
                found.join(", ")
            };
            return Err(ReadError::syntax(
                self.path,
                None,
                format!(
                    "no 4-node tetrahedra (element type 4) in $Elements (elements found: {found}; \
                     10-node tetrahedra are type 11)"
                ),
            ));
        }
        Ok(ParsedTetMesh {
            mesh: TetMesh::new(nodes.positions, tets),
            node_numbers: nodes.tags,
            element_numbers,
            element_locations,
        })
    }

    fn mesh_format(&mut self) -> Result<(), ReadError> {
        let (version, start) = self.token("the format version")?;
        if version != "4.1" {
            return Err(self.error(
                start,
                format!(
                    "MSH version {} is not read: only 4.1 is (write it with Gmsh's -format msh41)",
                    shorten(version)
                ),
            ));
        }
        let start = self.pos;
        let file_type: i32 = self.number("the file type (0 ASCII, 1 binary)")?;
        let data_size: i32 = self.number("the data size")?;
        match file_type {
            0 => {}
            1 => {
                // The integer 1 follows the line, in the writer's byte order.
                while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
                    self.pos += 1;
                }
                self.pos = (self.pos + 1).min(self.bytes.len());
                let one = self.take(4, "the byte-order mark")?;
                self.big_endian = match one {
                    [1, 0, 0, 0] => false,
                    [0, 0, 0, 1] => true,
                    _ => {
                        return Err(self.error(
                            self.pos - 4,
                            "the binary byte-order mark is not the integer 1",
                        ))
                    }
                };
                self.binary = true;
            }
            other => {
                return Err(self.error(
                    start,
                    format!("file type {other} is neither 0 (ASCII) nor 1 (binary)"),
                ))
            }
        }
        if data_size != 8 {
            return Err(self.error(
                start,
                format!("data size {data_size} is not read: only 8-byte size_t is"),
            ));
        }
        self.expect("$EndMeshFormat")
    }

    /// Skips `$Name … $EndName`.
    fn skip_section(&mut self, name: &str, start: usize) -> Result<(), ReadError> {
        let end = format!("$End{name}");
        let found = self.bytes[self.pos..]
            .windows(end.len())
            .position(|w| w == end.as_bytes());
        match found {
            Some(offset) => {
                self.pos += offset + end.len();
                Ok(())
            }
            None => Err(self.error(start, format!("section ${name} has no {end}"))),
        }
    }

    fn nodes(&mut self) -> Result<Nodes, ReadError> {
        let blocks = self.count("the number of node blocks", 4)?;
        let count = self.count("the number of nodes", 4)?;
        let _min_tag = self.size("the smallest node tag")?;
        let _max_tag = self.size("the largest node tag")?;
        let mut nodes = Nodes {
            positions: Vec::with_capacity(count),
            tags: Vec::with_capacity(count),
            index: HashMap::with_capacity(count),
        };
        for _ in 0..blocks {
            let block_start = self.pos;
            let dim = self.int("a node block's entity dimension")?;
            let _entity = self.int("a node block's entity tag")?;
            let parametric = self.int("a node block's parametric flag")?;
            let in_block = self.count("a node block's node count", 4)?;
            if !(0..=3).contains(&dim) || !(0..=1).contains(&parametric) {
                return Err(self.error(
                    block_start,
                    format!("node block of entity dimension {dim}, parametric {parametric}: expected 0–3 and 0 or 1"),
                ));
            }
            let params = if parametric == 1 { dim as usize } else { 0 };
            for _ in 0..in_block {
                let start = self.pos;
                let tag = self.size("a node tag")?;
                let index = nodes.tags.len() as u32;
                if nodes.index.insert(tag, index).is_some() {
                    return Err(self.error(start, format!("node tag {tag} is defined twice")));
                }
                nodes.tags.push(tag);
            }
            for _ in 0..in_block {
                let mut xyz = [0.0; 3];
                for (axis, value) in xyz.iter_mut().enumerate() {
                    *value = self.float(["a node's x", "a node's y", "a node's z"][axis])?;
                }
                for _ in 0..params {
                    self.float("a node's parametric coordinate")?;
                }
                nodes.positions.push(Point3::from(xyz));
            }
        }
        if nodes.positions.len() != count {
            return Err(self.error(
                self.pos,
                format!(
                    "$Nodes announces {count} nodes but its blocks hold {}",
                    nodes.positions.len()
                ),
            ));
        }
        Ok(nodes)
    }

    fn elements(&mut self, nodes: &Nodes) -> Result<Tets, ReadError> {
        let blocks = self.count("the number of element blocks", 4)?;
        let count = self.count("the number of elements", 2)?;
        let _min_tag = self.size("the smallest element tag")?;
        let _max_tag = self.size("the largest element tag")?;
        let mut tets = Vec::new();
        let mut tags = Vec::new();
        let mut locations = Vec::new();
        let mut seen = 0usize;
        for _ in 0..blocks {
            let block_start = self.pos;
            let _dim = self.int("an element block's entity dimension")?;
            let _entity = self.int("an element block's entity tag")?;
            let element_type = self.int("an element block's element type")?;
            let in_block = self.count("an element block's element count", 2)?;
            seen += in_block;
            if element_type != TETRAHEDRON && in_block > 0 {
                *self.skipped.entry(element_type).or_default() += in_block;
            }
            let per_element = nodes_per_element(element_type);
            if self.binary {
                let Some(n) = per_element else {
                    return Err(self.error(
                        block_start,
                        format!("element type {element_type} is not a Gmsh element type this reader knows"),
                    ));
                };
                for _ in 0..in_block {
                    let start = self.pos;
                    let tag = self.binary_u64("an element tag")?;
                    if element_type == TETRAHEDRON {
                        let mut tet = [0u32; 4];
                        for slot in &mut tet {
                            let node = self.binary_u64("an element's node tag")?;
                            *slot = self.node_index(nodes, node, tag, start)?;
                        }
                        tets.push(tet);
                        tags.push(tag);
                        locations.push(Location::Byte(start));
                    } else {
                        self.take(8 * n, "an element's node tags")?;
                    }
                }
            } else {
                for _ in 0..in_block {
                    let (tokens, start) = self.line_tokens("an element")?;
                    let tag: u64 = tokens[0].parse().map_err(|_| {
                        self.error(
                            start,
                            format!("expected an element tag, found `{}`", shorten(tokens[0])),
                        )
                    })?;
                    if let Some(n) = per_element {
                        if tokens.len() != 1 + n {
                            return Err(self.error(
                                start,
                                format!(
                                    "element {tag} of type {element_type} has {} node tags, expected {n}",
                                    tokens.len() - 1
                                ),
                            ));
                        }
                    }
                    if element_type == TETRAHEDRON {
                        let mut tet = [0u32; 4];
                        for (slot, token) in tet.iter_mut().zip(&tokens[1..]) {
                            let node: u64 = token.parse().map_err(|_| {
                                self.error(
                                    start,
                                    format!(
                                        "element {tag}: expected a node tag, found `{}`",
                                        shorten(token)
                                    ),
                                )
                            })?;
                            *slot = self.node_index(nodes, node, tag, start)?;
                        }
                        tets.push(tet);
                        tags.push(tag);
                        locations.push(self.location(start));
                    }
                }
            }
        }
        if seen != count {
            return Err(self.error(
                self.pos,
                format!("$Elements announces {count} elements but its blocks hold {seen}"),
            ));
        }
        Ok((tets, tags, locations))
    }

    fn node_index(
        &self,
        nodes: &Nodes,
        node: u64,
        element: u64,
        start: usize,
    ) -> Result<u32, ReadError> {
        nodes.index.get(&node).copied().ok_or_else(|| {
            self.error(
                start,
                format!("element {element}: node tag {node} is not in $Nodes"),
            )
        })
    }
}

/// At most 40 characters of a token, for messages.
fn shorten(token: &str) -> String {
    let mut short: String = token.chars().take(40).collect();
    if short.len() < token.len() {
        short.push('…');
    }
    short
}

/// Reads and parses an MSH 4.1 file (not validated).
pub fn parse_msh_file(path: &Path) -> Result<ParsedTetMesh, ReadError> {
    let bytes = std::fs::read(path).map_err(|source| ReadError::Io {
        path: path.to_owned(),
        source,
    })?;
    parse_msh(&bytes, path)
}

/// The mesh as MSH 4.1 ASCII: one volume entity, one node block (tags
/// 1…N in order) and one block of 4-node tetrahedra (tags 1…M). Coordinates
/// are written with the shortest decimal that reads back to the same
/// `f64`, so a read of the result gives the mesh back exactly.
pub fn msh_string(mesh: &TetMesh) -> String {
    let mut out = String::with_capacity(64 + mesh.positions.len() * 60 + mesh.tets.len() * 40);
    let bounds = haptic_mesh::Aabb::from_points(&mesh.positions);
    let (min, max) = if bounds.is_empty() {
        ([0.0; 3], [0.0; 3])
    } else {
        (
            [bounds.min.x, bounds.min.y, bounds.min.z],
            [bounds.max.x, bounds.max.y, bounds.max.z],
        )
    };
    let n = mesh.positions.len();
    let m = mesh.tets.len();
    let _ = writeln!(out, "$MeshFormat\n4.1 0 8\n$EndMeshFormat");
    let _ = writeln!(
        out,
        "$Entities\n0 0 0 1\n1 {:?} {:?} {:?} {:?} {:?} {:?} 0 0\n$EndEntities",
        min[0], min[1], min[2], max[0], max[1], max[2]
    );
    let _ = writeln!(out, "$Nodes\n1 {n} {} {n}\n3 1 0 {n}", n.min(1));
    for tag in 1..=n {
        let _ = writeln!(out, "{tag}");
    }
    for p in &mesh.positions {
        let _ = writeln!(out, "{:?} {:?} {:?}", p.x, p.y, p.z);
    }
    let _ = writeln!(
        out,
        "$EndNodes\n$Elements\n1 {m} {} {m}\n3 1 {TETRAHEDRON} {m}",
        m.min(1)
    );
    for (i, [a, b, c, d]) in mesh.tets.iter().enumerate() {
        let _ = writeln!(out, "{} {} {} {} {}", i + 1, a + 1, b + 1, c + 1, d + 1);
    }
    out.push_str("$EndElements\n");
    out
}

/// Writes the mesh as MSH 4.1 ASCII ([`msh_string`]), through a temporary
/// file renamed into place so that a reader never sees half a file.
pub fn write_msh(path: &Path, mesh: &TetMesh) -> std::io::Result<()> {
    let text = msh_string(mesh);
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "mesh.msh".to_owned());
    let temporary = path.with_file_name(format!(".{file_name}.tmp"));
    std::fs::write(&temporary, text)?;
    std::fs::rename(&temporary, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-written file: two entity blocks of nodes with non-contiguous
    /// tags, a triangle block that must be ignored, two tets.
    pub(crate) const TWO_TETS: &str = "$MeshFormat
4.1 0 8
$EndMeshFormat
$PhysicalNames
1
3 1 \"jelly\"
$EndPhysicalNames
$Nodes
2 5 10 50
0 1 0 2
10
20
0 0 0
1 0 0
3 1 0 3
30
40
50
0 1 0
0 0 1
1 1 1
$EndNodes
$Elements
2 3 1 3
2 1 2 1
7 10 20 30
3 1 4 2
1 10 20 30 40
2 20 50 30 40
$EndElements
";

    #[test]
    fn reads_blocks_and_maps_tags() {
        let parsed = parse_msh(TWO_TETS.as_bytes(), Path::new("two.msh")).unwrap();
        assert_eq!(parsed.node_numbers, vec![10, 20, 30, 40, 50]);
        assert_eq!(parsed.mesh.tets, vec![[0, 1, 2, 3], [1, 4, 2, 3]]);
        assert_eq!(parsed.element_numbers, vec![1, 2]);
        assert_eq!(parsed.element_locations[1], Location::Line(29));
        let loaded = parsed.checked(Path::new("two.msh")).unwrap();
        assert!((loaded.mesh.volume() - 0.5).abs() < 1e-12);
    }

    #[test]
    fn writes_and_reads_back_exactly() {
        let mut mesh = parse_msh(TWO_TETS.as_bytes(), Path::new("two.msh"))
            .unwrap()
            .mesh;
        mesh.positions[4] = Point3::new(1.0 / 3.0, 0.1 + 0.2, std::f64::consts::PI);
        let text = msh_string(&mesh);
        let back = parse_msh(text.as_bytes(), Path::new("back.msh")).unwrap();
        assert_eq!(back.mesh, mesh);
        assert_eq!(back.node_numbers, vec![1, 2, 3, 4, 5]);
    }
}
