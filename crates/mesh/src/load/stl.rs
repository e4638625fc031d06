//! STL, binary and ASCII. Each facet becomes a triangle with its own three
//! vertices (welding happens in repair); facet normals are ignored, since
//! the corner order already gives the outward side.
//!
//! Binary or ASCII is decided by content, not by the `solid` keyword alone:
//! a file whose size is exactly `84 + 50 × count` is binary even if its
//! header starts with `solid` (common among CAD exporters), and a file is
//! ASCII only if it starts with `solid` and its first 84 bytes hold no NUL
//! (a binary file with fewer than 2^24 facets has one in its count field).

use super::check_vertex_count;
use super::text::{numbered_lines, parse_point, quoted, tokens};
use crate::{MeshError, TriangleMesh};
use nalgebra::Point3;

const BINARY_HEADER_BYTES: usize = 80;
const BINARY_PREAMBLE_BYTES: usize = BINARY_HEADER_BYTES + 4;
/// Normal, three corners (12 `f32`s) and a 2-byte attribute count.
const BINARY_FACET_BYTES: usize = 50;

pub(super) fn parse(bytes: &[u8], file: &str) -> Result<TriangleMesh, MeshError> {
    let declared_facets = bytes
        .get(BINARY_HEADER_BYTES..BINARY_PREAMBLE_BYTES)
        .map(|count| u32::from_le_bytes([count[0], count[1], count[2], count[3]]));
    match declared_facets {
        Some(facets) if binary_size(facets) == bytes.len() as u64 => {
            parse_binary(bytes, facets as usize, file)
        }
        _ if looks_ascii(bytes) => parse_ascii(bytes, file),
        Some(facets) => Err(MeshError::parse(
            file,
            None,
            format!(
                "binary STL header declares {facets} facets, which take {} bytes, \
                 but the file has {} (truncated or padded?)",
                binary_size(facets),
                bytes.len()
            ),
        )),
        None => Err(MeshError::parse(
            file,
            None,
            format!(
                "not STL: no `solid` keyword for ASCII, and {} bytes is shorter than the \
                 {BINARY_PREAMBLE_BYTES}-byte binary header",
                bytes.len()
            ),
        )),
    }
}

/// The size of a binary STL file with `facets` facets.
fn binary_size(facets: u32) -> u64 {
    BINARY_PREAMBLE_BYTES as u64 + BINARY_FACET_BYTES as u64 * u64::from(facets)
}

/// Starts with `solid` (after blanks) and has no NUL in the binary preamble's span.
fn looks_ascii(bytes: &[u8]) -> bool {
    let preamble = &bytes[..bytes.len().min(BINARY_PREAMBLE_BYTES)];
    let first_word = tokens(bytes).next().unwrap_or_default();
    first_word.eq_ignore_ascii_case(b"solid") && !preamble.contains(&0)
}

fn parse_binary(bytes: &[u8], facets: usize, file: &str) -> Result<TriangleMesh, MeshError> {
    check_vertex_count(3 * facets, file)?;
    let mut vertices = Vec::with_capacity(3 * facets);
    for record in bytes[BINARY_PREAMBLE_BYTES..].chunks_exact(BINARY_FACET_BYTES) {
        let float = |at: usize| {
            f32::from_le_bytes([record[at], record[at + 1], record[at + 2], record[at + 3]])
        };
        for corner in 0..3 {
            let at = 12 + 12 * corner;
            let point = Point3::new(float(at), float(at + 4), float(at + 8)).cast::<f64>();
            if !point.iter().all(|c| c.is_finite()) {
                return Err(MeshError::NonFiniteCoordinate {
                    file: file.to_owned(),
                    line: None,
                    vertex: vertices.len(),
                });
            }
            vertices.push(point);
        }
    }
    Ok(soup(vertices))
}

/// Reads `solid … endsolid` blocks (several may follow one another) of
/// `facet normal … / outer loop / vertex ×3 / endloop / endfacet`.
/// Keywords are case-insensitive.
fn parse_ascii(bytes: &[u8], file: &str) -> Result<TriangleMesh, MeshError> {
    let mut lines = AsciiLines {
        lines: numbered_lines(bytes),
        file,
    };
    let mut vertices = Vec::new();
    let (line, words) = lines.expect("`solid`")?;
    check_statement(&words, &["solid"], None, file, line)?;
    loop {
        let (line, words) = lines.expect("`facet` or `endsolid`")?;
        if words[0].eq_ignore_ascii_case(b"endsolid") {
            match lines.next() {
                None => break,
                Some((line, words)) => check_statement(&words, &["solid"], None, file, line)?,
            }
            continue;
        }
        check_statement(&words, &["facet", "normal"], Some(3), file, line)?;
        let (line, words) = lines.expect("`outer loop`")?;
        check_statement(&words, &["outer", "loop"], Some(0), file, line)?;
        for _ in 0..3 {
            let (line, words) = lines.expect("`vertex`")?;
            check_statement(&words, &["vertex"], Some(3), file, line)?;
            let vertex = vertices.len();
            let mut coordinates = words[1..].iter().copied();
            vertices.push(parse_point(&mut coordinates, file, line, vertex)?);
        }
        for keyword in ["endloop", "endfacet"] {
            let (line, words) = lines.expect(keyword)?;
            check_statement(&words, &[keyword], Some(0), file, line)?;
        }
    }
    check_vertex_count(vertices.len(), file)?;
    Ok(soup(vertices))
}

/// Triangles `[0, 1, 2], [3, 4, 5], …` over `vertices`, whose count the
/// caller has checked with [`check_vertex_count`].
fn soup(vertices: Vec<Point3<f64>>) -> TriangleMesh {
    let triangles = (0..vertices.len() as u32 / 3)
        .map(|t| [3 * t, 3 * t + 1, 3 * t + 2])
        .collect();
    TriangleMesh::new(vertices, triangles)
}

/// Checks that `words` are `keywords` (case-insensitively) followed by
/// `values` more words, or by any number when `values` is `None`.
fn check_statement(
    words: &[&[u8]],
    keywords: &[&str],
    values: Option<usize>,
    file: &str,
    line: usize,
) -> Result<(), MeshError> {
    let keywords_match = words.len() >= keywords.len()
        && keywords
            .iter()
            .zip(words)
            .all(|(keyword, word)| word.eq_ignore_ascii_case(keyword.as_bytes()));
    let count_matches = values.is_none_or(|values| words.len() == keywords.len() + values);
    if keywords_match && count_matches {
        return Ok(());
    }
    let expected = match values {
        Some(0) => format!("`{}` alone", keywords.join(" ")),
        Some(values) => format!("`{}` and {values} values", keywords.join(" ")),
        None => format!("`{}`", keywords.join(" ")),
    };
    let found = quoted(&words.join(&b' '));
    Err(MeshError::parse(
        file,
        Some(line),
        format!("expected {expected}, found {found}"),
    ))
}

/// The non-blank lines of an ASCII STL file, split into words.
struct AsciiLines<'a, L> {
    lines: L,
    file: &'a str,
}

impl<'a, L: Iterator<Item = (usize, &'a [u8])>> AsciiLines<'a, L> {
    /// The next non-blank line and its words (at least one).
    fn next(&mut self) -> Option<(usize, Vec<&'a [u8]>)> {
        self.lines.find_map(|(line, text)| {
            let words: Vec<&[u8]> = tokens(text).collect();
            (!words.is_empty()).then_some((line, words))
        })
    }

    /// Like `next`, but the end of the file is an error naming what was `expected`.
    fn expect(&mut self, expected: &str) -> Result<(usize, Vec<&'a [u8]>), MeshError> {
        self.next().ok_or_else(|| {
            MeshError::parse(
                self.file,
                None,
                format!("file ends where {expected} was expected (truncated?)"),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_meshes::{binary_stl, cube_ascii_stl, cube_binary_stl};

    fn parse_bytes(bytes: &[u8]) -> Result<TriangleMesh, MeshError> {
        parse(bytes, "test.stl")
    }

    fn facet(corners: [&str; 3]) -> String {
        let vertices: String = corners.iter().map(|c| format!("vertex {c}\n")).collect();
        format!("facet normal 0 0 1\nouter loop\n{vertices}endloop\nendfacet\n")
    }

    #[test]
    fn ascii_and_binary_cubes_read_as_triangle_soups() {
        for bytes in [cube_ascii_stl().into_bytes(), cube_binary_stl()] {
            let mesh = parse_bytes(&bytes).unwrap();
            assert_eq!(mesh.vertices.len(), 36);
            assert_eq!(mesh.triangles.len(), 12);
            assert_eq!(mesh.triangles[11], [33, 34, 35]);
        }
    }

    #[test]
    fn binary_with_a_solid_header_is_detected_by_its_size() {
        let bytes = cube_binary_stl();
        assert!(bytes.starts_with(b"solid "));
        assert_eq!(parse_bytes(&bytes).unwrap().triangles.len(), 12);
    }

    #[test]
    fn ascii_keywords_are_case_insensitive_and_solids_may_repeat() {
        let text = format!(
            "SOLID\n{}ENDSOLID\nsolid second one\n{}endsolid second one\n",
            facet(["0 0 0", "1 0 0", "0 1 0"]).to_uppercase(),
            facet(["0 0 1", "1 0 1", "0 1 1"])
        );
        let mesh = parse_bytes(text.as_bytes()).unwrap();
        assert_eq!(mesh.triangles.len(), 2);
        assert_eq!(mesh.vertices[3], Point3::new(0.0, 0.0, 1.0));
    }

    #[test]
    fn truncated_binary_is_a_parse_error_naming_the_sizes() {
        let bytes = cube_binary_stl();
        for cut in [bytes.len() - 1, 84 + 50 * 5 + 7, 84] {
            match parse_bytes(&bytes[..cut]) {
                Err(MeshError::Parse {
                    line: None,
                    message,
                    ..
                }) => {
                    assert!(message.contains("12 facets"), "{message}");
                    assert!(message.contains(&cut.to_string()), "{message}");
                }
                other => panic!("cut at {cut}: {other:?}"),
            }
        }
    }

    #[test]
    fn too_short_for_either_kind_is_a_parse_error() {
        for bytes in [&b"\x01\x02\x03"[..], b"not an stl file", b"sol"] {
            assert!(
                matches!(parse_bytes(bytes), Err(MeshError::Parse { .. })),
                "{bytes:?}"
            );
        }
    }

    #[test]
    fn non_finite_coordinates_are_reported_with_line_or_vertex() {
        for bad in ["nan", "-inf", "1e39"] {
            let corner = format!("0 {bad} 0");
            let text = format!("solid s\n{}endsolid\n", facet(["0 0 0", "1 0 0", &corner]));
            match parse_bytes(text.as_bytes()) {
                Err(MeshError::NonFiniteCoordinate {
                    line: Some(6),
                    vertex: 2,
                    ..
                }) if bad != "1e39" => {}
                // 1e39 is finite as f64: ASCII STL is read at full precision.
                Ok(_) if bad == "1e39" => {}
                other => panic!("{bad}: {other:?}"),
            }
        }
        let corners = [[0.0, 0.0, 0.0], [1.0, f64::NAN, 0.0], [0.0, 1.0, 0.0]];
        match parse_bytes(&binary_stl(&corners, &[[0, 1, 2]])) {
            Err(MeshError::NonFiniteCoordinate {
                line: None,
                vertex: 1,
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn malformed_ascii_is_a_parse_error_on_its_line() {
        let good = facet(["0 0 0", "1 0 0", "0 1 0"]);
        let cases = [
            (format!("solid s\n{good}endsolid s\n"), None),
            (
                format!("solid s\n{}endsolid\n", good.replace("outer loop", "outer")),
                Some(3),
            ),
            (
                format!(
                    "solid s\n{}endsolid\n",
                    good.replace("vertex 1 0 0", "vertex 1 0")
                ),
                Some(5),
            ),
            (
                format!(
                    "solid s\n{}endsolid\n",
                    good.replace("vertex 1 0 0", "vertex 1 x 0")
                ),
                Some(5),
            ),
            (
                format!(
                    "solid s\n{}endsolid\n",
                    good.replace("endloop", "endloop foo")
                ),
                Some(7),
            ),
            (format!("solid s\n{good}facet\nendsolid\n"), Some(9)),
            (format!("solid s\n{good}garbage\n"), Some(9)),
            (format!("solid s\n{good}endsolid\ntrailing\n"), Some(10)),
            (format!("solid s\n{good}"), None),
        ];
        for (index, (text, line)) in cases.iter().enumerate() {
            let result = parse_bytes(text.as_bytes());
            match (index, result) {
                (0, Ok(mesh)) => assert_eq!(mesh.triangles.len(), 1),
                (_, Err(MeshError::Parse { line: l, .. })) => assert_eq!(l, *line, "{text:?}"),
                (_, other) => panic!("{text:?}: {other:?}"),
            }
        }
    }
}
