//! Medit `.mesh` (ASCII, the INRIA/libMeshb layout): `Vertices` and
//! `Tetrahedra` are read; keywords are case-insensitive, `#` starts a
//! comment, and the other sections of the format are skipped by their
//! known entry sizes.

use crate::read_error::{Location, ParsedTetMesh, ReadError};
use crate::TetMesh;
use nalgebra::Point3;
use std::path::Path;

/// Numbers per entry of the sections that are skipped (for dimension 3).
fn entry_size(keyword: &str) -> Option<usize> {
    Some(match keyword {
        "edges" => 3,
        "triangles" => 4,
        "quadrilaterals" => 5,
        "hexahedra" => 9,
        "prisms" => 7,
        "pyramids" => 6,
        "corners"
        | "ridges"
        | "requiredvertices"
        | "requirededges"
        | "requiredtriangles"
        | "requiredquadrilaterals" => 1,
        "normals" | "tangents" => 3,
        "normalatvertices" | "tangentatvertices" => 2,
        "normalattrianglevertices" | "tangentatedges" => 3,
        "normalatquadrilateralvertices" => 3,
        _ => return None,
    })
}

struct Tokens<'a> {
    text: &'a str,
    pos: usize,
    line: usize,
    path: &'a Path,
}

impl<'a> Tokens<'a> {
    /// The next token outside comments, with its line; `None` at the end.
    fn next(&mut self) -> Option<(&'a str, usize)> {
        let bytes = self.text.as_bytes();
        loop {
            while self.pos < bytes.len() && bytes[self.pos].is_ascii_whitespace() {
                if bytes[self.pos] == b'\n' {
                    self.line += 1;
                }
                self.pos += 1;
            }
            if self.pos < bytes.len() && bytes[self.pos] == b'#' {
                while self.pos < bytes.len() && bytes[self.pos] != b'\n' {
                    self.pos += 1;
                }
                continue;
            }
            break;
        }
        if self.pos >= bytes.len() {
            return None;
        }
        let start = self.pos;
        while self.pos < bytes.len()
            && !bytes[self.pos].is_ascii_whitespace()
            && bytes[self.pos] != b'#'
        {
            self.pos += 1;
        }
        Some((&self.text[start..self.pos], self.line))
    }

    fn error(&self, line: usize, message: impl Into<String>) -> ReadError {
        ReadError::syntax(self.path, Some(Location::Line(line)), message)
    }

    fn number<T: std::str::FromStr>(&mut self, what: &str) -> Result<(T, usize), ReadError> {
        let Some((token, line)) = self.next() else {
            return Err(self.error(
                self.line,
                format!("the file ends where {what} was expected"),
            ));
        };
        let value = token.parse().map_err(|_| {
            let short: String = token.chars().take(40).collect();
            self.error(line, format!("expected {what}, found `{short}`"))
        })?;
        Ok((value, line))
    }

    /// A section's entry count, refused when the rest of the file cannot
    /// hold that many entries.
    fn count(&mut self, keyword: &str, per_entry: usize) -> Result<usize, ReadError> {
        let (count, line): (u64, usize) = self.number(&format!("the number of {keyword}"))?;
        // Each number takes at least two bytes (a digit and a separator).
        let room = (self.text.len() - self.pos) / (2 * per_entry.max(1));
        if count > room as u64 + 1 {
            return Err(self.error(
                line,
                format!("{keyword}: {count} entries are more than the rest of the file can hold"),
            ));
        }
        Ok(count as usize)
    }
}

/// Parses Medit `.mesh` text; `path` names the file in errors. Vertex and
/// tetrahedron numbers are 1-based in the file. Not validated: see
/// [`ParsedTetMesh::checked`].
pub fn parse_medit(bytes: &[u8], path: &Path) -> Result<ParsedTetMesh, ReadError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = 1 + bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        ReadError::syntax(
            path,
            Some(Location::Line(line)),
            "bytes that are not text (binary .meshb files are not read)",
        )
    })?;
    let mut tokens = Tokens {
        text,
        pos: 0,
        line: 1,
        path,
    };
    let mut version_seen = false;
    let mut dimension = None;
    let mut positions: Option<Vec<Point3<f64>>> = None;
    let mut tets: Option<(Vec<[u32; 4]>, Vec<Location>)> = None;
    let mut pending_tets: Vec<([u64; 4], usize)> = Vec::new();
    while let Some((word, line)) = tokens.next() {
        let keyword = word.to_ascii_lowercase();
        match keyword.as_str() {
            "meshversionformatted" => {
                let (version, line): (u32, usize) = tokens.number("the format version")?;
                if !(1..=4).contains(&version) {
                    return Err(tokens.error(
                        line,
                        format!("MeshVersionFormatted {version}: expected 1 to 4"),
                    ));
                }
                version_seen = true;
            }
            _ if !version_seen => {
                let short: String = word.chars().take(40).collect();
                return Err(tokens.error(
                    line,
                    format!("expected MeshVersionFormatted first, found `{short}`"),
                ));
            }
            "dimension" => {
                let (d, line): (u32, usize) = tokens.number("the dimension")?;
                if d != 3 {
                    return Err(tokens.error(line, format!("Dimension {d}: only 3 is read")));
                }
                dimension = Some(d);
            }
            "vertices" => {
                if dimension.is_none() {
                    return Err(tokens.error(line, "Vertices before Dimension"));
                }
                if positions.is_some() {
                    return Err(tokens.error(line, "a second Vertices section"));
                }
                let count = tokens.count("vertices", 4)?;
                let mut list = Vec::with_capacity(count);
                for _ in 0..count {
                    let (x, _) = tokens.number("a vertex's x")?;
                    let (y, _) = tokens.number("a vertex's y")?;
                    let (z, _) = tokens.number("a vertex's z")?;
                    let _: (i64, usize) = tokens.number("a vertex's reference")?;
                    list.push(Point3::new(x, y, z));
                }
                positions = Some(list);
            }
            "tetrahedra" => {
                if tets.is_some() || !pending_tets.is_empty() {
                    return Err(tokens.error(line, "a second Tetrahedra section"));
                }
                let count = tokens.count("tetrahedra", 5)?;
                for _ in 0..count {
                    let mut tet = [0u64; 4];
                    let mut first_line = 0;
                    for (k, slot) in tet.iter_mut().enumerate() {
                        let (v, line) = tokens.number("a tetrahedron's vertex number")?;
                        if k == 0 {
                            first_line = line;
                        }
                        *slot = v;
                    }
                    let _: (i64, usize) = tokens.number("a tetrahedron's reference")?;
                    pending_tets.push((tet, first_line));
                }
                tets = Some((Vec::new(), Vec::new()));
            }
            "end" => break,
            _ => match entry_size(&keyword) {
                Some(per_entry) => {
                    let count = tokens.count(&keyword, per_entry)?;
                    for _ in 0..count * per_entry {
                        let _: (f64, usize) = tokens.number(&format!("a number of {word}"))?;
                    }
                }
                None => {
                    let short: String = word.chars().take(40).collect();
                    return Err(tokens.error(line, format!("unknown keyword `{short}`")));
                }
            },
        }
    }
    if !version_seen {
        return Err(ReadError::syntax(
            path,
            None,
            "no MeshVersionFormatted: not a Medit mesh",
        ));
    }
    let positions =
        positions.ok_or_else(|| ReadError::syntax(path, None, "no Vertices section"))?;
    if tets.is_none() || pending_tets.is_empty() {
        return Err(ReadError::syntax(
            path,
            None,
            "no tetrahedra (a Tetrahedra section with entries)",
        ));
    }
    let mut list = Vec::with_capacity(pending_tets.len());
    let mut locations = Vec::with_capacity(pending_tets.len());
    for (element, (tet, line)) in pending_tets.iter().enumerate() {
        let mut indices = [0u32; 4];
        for (slot, &v) in indices.iter_mut().zip(tet) {
            if v == 0 || v > positions.len() as u64 {
                return Err(ReadError::syntax(
                    path,
                    Some(Location::Line(*line)),
                    format!(
                        "tetrahedron {}: vertex {v} is out of range (the file has vertices 1 to {})",
                        element + 1,
                        positions.len()
                    ),
                ));
            }
            *slot = (v - 1) as u32;
        }
        list.push(indices);
        locations.push(Location::Line(*line));
    }
    let nodes = positions.len() as u64;
    Ok(ParsedTetMesh {
        mesh: TetMesh::new(positions, list),
        node_numbers: (1..=nodes).collect(),
        element_numbers: (1..=pending_tets.len() as u64).collect(),
        element_locations: locations,
    })
}

/// Reads and parses a Medit `.mesh` file (not validated).
pub fn parse_medit_file(path: &Path) -> Result<ParsedTetMesh, ReadError> {
    let bytes = std::fs::read(path).map_err(|source| ReadError::Io {
        path: path.to_owned(),
        source,
    })?;
    parse_medit(&bytes, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) const TWO_TETS: &str = "# two tets sharing a face
MeshVersionFormatted 2
dimension
3
VERTICES # five of them
5
0 0 0 1
1 0 0 1
0 1 0 1
0 0 1 1
1 1 1 1
Triangles
1
1 2 3 7
Tetrahedra
2
1 2 3 4 1
2 5 3 4 1
End
";

    #[test]
    fn reads_vertices_and_tetrahedra_skipping_the_rest() {
        let parsed = parse_medit(TWO_TETS.as_bytes(), Path::new("two.mesh")).unwrap();
        assert_eq!(parsed.mesh.tets, vec![[0, 1, 2, 3], [1, 4, 2, 3]]);
        assert_eq!(
            parsed.element_locations,
            vec![Location::Line(17), Location::Line(18)]
        );
        let loaded = parsed.checked(Path::new("two.mesh")).unwrap();
        assert!((loaded.mesh.volume() - 0.5).abs() < 1e-12);
    }

    #[test]
    fn out_of_range_vertex_names_line_and_tetrahedron() {
        let text = TWO_TETS.replace("2 5 3 4 1", "2 6 3 4 1");
        let error = parse_medit(text.as_bytes(), Path::new("bad.mesh")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "bad.mesh: line 18: tetrahedron 2: vertex 6 is out of range (the file has vertices 1 to 5)"
        );
    }
}
