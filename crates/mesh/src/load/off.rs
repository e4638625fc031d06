//! Object File Format (OFF), ASCII: an optional `OFF` keyword (also `COFF`,
//! `NOFF`, `STOFF` and combinations; counts may follow it on the same line),
//! `vertex_count face_count [edge_count]`, one vertex per line (extra values
//! such as normals or colours are ignored), then one face per line as
//! `n i1 … in [colour]`, fan-triangulated. `#` starts a comment.

use super::text::{numbered_lines, parse_number, parse_point, quoted, tokens, without_comment};
use super::{push_fan, vertex_index};
use crate::{MeshError, TriangleMesh};

pub(super) fn parse(bytes: &[u8], file: &str) -> Result<TriangleMesh, MeshError> {
    let mut lines = numbered_lines(bytes)
        .map(|(line, text)| (line, without_comment(text)))
        .filter(|(_, text)| tokens(text).next().is_some());
    let (vertex_count, face_count) = parse_header(&mut lines, file)?;

    let mut vertices = Vec::new();
    for vertex in 0..vertex_count {
        let (line, text) = lines.next().ok_or_else(|| {
            MeshError::parse(
                file,
                None,
                format!("file ends after {vertex} of {vertex_count} vertices"),
            )
        })?;
        vertices.push(parse_point(&mut tokens(text), file, line, vertex)?);
    }

    let mut triangles = Vec::new();
    let mut polygon = Vec::new();
    for face in 0..face_count {
        let (line, text) = lines.next().ok_or_else(|| {
            MeshError::parse(
                file,
                None,
                format!("file ends after {face} of {face_count} faces"),
            )
        })?;
        let mut words = tokens(text);
        let corners = words
            .next()
            .and_then(parse_number::<usize>)
            .filter(|&corners| corners >= 3)
            .ok_or_else(|| {
                MeshError::parse(
                    file,
                    Some(line),
                    format!("face {face} must start with its vertex count, at least 3"),
                )
            })?;
        polygon.clear();
        for corner in 0..corners {
            let word = words.next().ok_or_else(|| {
                MeshError::parse(
                    file,
                    Some(line),
                    format!("face {face} lists {corner} of its {corners} vertices"),
                )
            })?;
            let index: i64 = parse_number(word).ok_or_else(|| {
                MeshError::parse(
                    file,
                    Some(line),
                    format!("face {face}: {} is not a vertex index", quoted(word)),
                )
            })?;
            match usize::try_from(index) {
                Ok(zero_based) if zero_based < vertex_count => {
                    polygon.push(vertex_index(zero_based, file)?);
                }
                _ => {
                    return Err(MeshError::IndexOutOfRange {
                        file: file.to_owned(),
                        line: Some(line),
                        face,
                        index,
                        vertex_count,
                    })
                }
            }
        }
        push_fan(&polygon, &mut triangles);
    }

    if let Some((line, _)) = lines.next() {
        return Err(MeshError::parse(
            file,
            Some(line),
            format!("unexpected data after the last of {face_count} faces"),
        ));
    }
    Ok(TriangleMesh::new(vertices, triangles))
}

/// Reads the keyword and counts; returns `(vertex_count, face_count)`.
fn parse_header<'a>(
    lines: &mut impl Iterator<Item = (usize, &'a [u8])>,
    file: &str,
) -> Result<(usize, usize), MeshError> {
    let (mut line, mut text) = lines
        .next()
        .ok_or_else(|| MeshError::parse(file, None, "no OFF header"))?;
    let mut words = tokens(text).peekable();
    if let Some(keyword) = words.next_if(|word| word.ends_with(b"OFF")) {
        if !is_supported_keyword(keyword) {
            return Err(MeshError::parse(
                file,
                Some(line),
                format!(
                    "unsupported OFF variant {}: only 3-D ASCII [ST][C][N]OFF is read",
                    quoted(keyword)
                ),
            ));
        }
        match words.peek() {
            Some(&b"BINARY") => {
                return Err(MeshError::parse(
                    file,
                    Some(line),
                    "binary OFF is not supported",
                ))
            }
            Some(_) => {}
            None => {
                (line, text) = lines
                    .next()
                    .ok_or_else(|| MeshError::parse(file, None, "file ends before the counts"))?;
                words = tokens(text).peekable();
            }
        }
    }
    let counts: Vec<Option<usize>> = words.map(parse_number).collect();
    match counts[..] {
        [Some(vertex_count), Some(face_count)]
        | [Some(vertex_count), Some(face_count), Some(_)] => Ok((vertex_count, face_count)),
        _ => Err(MeshError::parse(
            file,
            Some(line),
            "expected the OFF header: `OFF`, then `vertex_count face_count edge_count`",
        )),
    }
}

/// `OFF` with the optional prefixes `ST` (texture), `C` (colour), `N` (normal), in that order.
fn is_supported_keyword(keyword: &[u8]) -> bool {
    let prefix = keyword.strip_suffix(b"OFF").unwrap_or(keyword);
    let prefix = prefix.strip_prefix(b"ST").unwrap_or(prefix);
    let prefix = prefix.strip_prefix(b"C").unwrap_or(prefix);
    let prefix = prefix.strip_prefix(b"N").unwrap_or(prefix);
    prefix.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_meshes::{cube_off, cube_triangles};
    use nalgebra::Point3;

    fn parse_text(text: &str) -> Result<TriangleMesh, MeshError> {
        parse(text.as_bytes(), "test.off")
    }

    #[test]
    fn cube_reads_as_twelve_triangles() {
        let mesh = parse_text(&cube_off()).unwrap();
        assert_eq!(mesh.vertices.len(), 8);
        assert_eq!(mesh.triangles, cube_triangles());
    }

    #[test]
    fn header_variants_comments_and_extra_values_are_accepted() {
        let body =
            "0 0 0 255 0 0 255\n1 0 0 255 0 0 255 # red\n0 1 0 0 0 1 1\n\n3 0 1 2 0.5 0.5 0.5\n";
        for header in [
            "OFF\n3 1 0\n",
            "OFF 3 1 0\n",
            "# c\nCOFF\n\n3 1\n",
            "NOFF 3 1 3\n",
            "STCNOFF\n3 1 0\n",
            "3 1 0\n",
        ] {
            let mesh = parse_text(&format!("{header}{body}")).unwrap();
            assert_eq!(mesh.triangles, vec![[0, 1, 2]], "{header:?}");
            assert_eq!(mesh.vertices[1], Point3::new(1.0, 0.0, 0.0));
        }
    }

    #[test]
    fn out_of_range_indices_name_line_face_index_and_vertex_count() {
        for (bad, index) in [("3", 3), ("-1", -1)] {
            let text = format!("OFF\n3 2 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n3 0 1 {bad}\n");
            match parse_text(&text) {
                Err(MeshError::IndexOutOfRange {
                    line: Some(7),
                    face: 1,
                    index: i,
                    vertex_count: 3,
                    ..
                }) => assert_eq!(i, index),
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn non_finite_coordinates_name_vertex_and_line() {
        match parse_text("OFF\n3 1 0\n0 0 0\n1 nan 0\n0 1 0\n3 0 1 2\n") {
            Err(MeshError::NonFiniteCoordinate {
                line: Some(4),
                vertex: 1,
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn malformed_files_are_parse_errors() {
        let cases = [
            ("4OFF\n3 1 0\n", Some(1)),
            ("OFF BINARY\n", Some(1)),
            ("OFF\nthree 1 0\n", Some(2)),
            ("OFF\n", None),
            ("hello world\n", Some(1)),
            ("OFF\n3 1 0\n0 0 0\n1 0 0\n", None),
            ("OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n", None),
            ("OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n2 0 1\n", Some(6)),
            ("OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1\n", Some(6)),
            ("OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 x\n", Some(6)),
            (
                "OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n3 0 1 2\n",
                Some(7),
            ),
            ("OFF\n4000000000 4000000000 0\n0 0 0\n", None),
        ];
        for (text, line) in cases {
            match parse_text(text) {
                Err(MeshError::Parse { line: l, .. }) => assert_eq!(l, line, "{text:?}"),
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }
}
