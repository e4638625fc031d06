//! Wavefront OBJ: `v` positions and `f` polygons (fan-triangulated); all
//! objects and groups are merged, and every other statement is ignored.

use super::push_fan;
use super::text::{numbered_lines, parse_number, parse_point, quoted, tokens, without_comment};
use crate::{MeshError, TriangleMesh};

/// A face corner naming a vertex not yet defined on its line; legal if the
/// vertex is defined later in the file.
struct ForwardReference {
    line: usize,
    face: usize,
    /// 1-based, as written.
    index: i64,
}

pub(super) fn parse(bytes: &[u8], file: &str) -> Result<TriangleMesh, MeshError> {
    let mut vertices = Vec::new();
    let mut triangles = Vec::new();
    let mut face = 0;
    let mut polygon = Vec::new();
    let mut furthest_forward: Option<ForwardReference> = None;
    for (line, text) in numbered_lines(bytes) {
        let mut words = tokens(without_comment(text));
        match words.next() {
            Some(b"v") => {
                let vertex = vertices.len();
                vertices.push(parse_point(&mut words, file, line, vertex)?);
            }
            Some(b"f") => {
                polygon.clear();
                for word in words {
                    let index = parse_corner(word, file, line, face)?;
                    let vertex = resolve_index(index, vertices.len()).ok_or_else(|| {
                        MeshError::IndexOutOfRange {
                            file: file.to_owned(),
                            line: Some(line),
                            face,
                            index,
                            vertex_count: vertices.len(),
                        }
                    })?;
                    if vertex as usize >= vertices.len()
                        && furthest_forward.as_ref().is_none_or(|f| index > f.index)
                    {
                        furthest_forward = Some(ForwardReference { line, face, index });
                    }
                    polygon.push(vertex);
                }
                if polygon.len() < 3 {
                    return Err(MeshError::parse(
                        file,
                        Some(line),
                        format!(
                            "face {face} has {} vertices; at least 3 are needed",
                            polygon.len()
                        ),
                    ));
                }
                push_fan(&polygon, &mut triangles);
                face += 1;
            }
            _ => {}
        }
    }
    if let Some(forward) = furthest_forward {
        if forward.index > vertices.len() as i64 {
            return Err(MeshError::IndexOutOfRange {
                file: file.to_owned(),
                line: Some(forward.line),
                face: forward.face,
                index: forward.index,
                vertex_count: vertices.len(),
            });
        }
    }
    Ok(TriangleMesh::new(vertices, triangles))
}

/// The 0-based vertex that OBJ index `index` names when `defined` vertices
/// precede it: 1-based if positive, counted back from the latest if negative.
/// `None` if no later vertex could make it valid.
fn resolve_index(index: i64, defined: usize) -> Option<u32> {
    let zero_based = match index {
        0 => return None,
        1.. => index - 1,
        _ => i64::try_from(defined).ok()? + index,
    };
    u32::try_from(zero_based).ok()
}

/// The position index of a face corner `v`, `v/vt`, `v//vn` or `v/vt/vn`.
fn parse_corner(word: &[u8], file: &str, line: usize, face: usize) -> Result<i64, MeshError> {
    let position = word.split(|&b| b == b'/').next().unwrap_or(word);
    parse_number(position).ok_or_else(|| {
        MeshError::parse(
            file,
            Some(line),
            format!("face {face}: {} is not a vertex index", quoted(word)),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_meshes::{cube_obj, cube_triangles};

    fn parse_text(text: &str) -> Result<TriangleMesh, MeshError> {
        parse(text.as_bytes(), "test.obj")
    }

    #[test]
    fn cube_with_quads_texcoords_and_normals_reads_as_twelve_triangles() {
        let mesh = parse_text(&cube_obj()).unwrap();
        assert_eq!(mesh.vertices.len(), 8);
        assert_eq!(mesh.triangles, cube_triangles());
    }

    #[test]
    fn polygons_are_fans_and_objects_merge() {
        let text = "o a\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 2 0\nf 1 2 3 4 5\n\
                    o b\nv 5 5 5\nv 6 5 5\nv 5 6 5\nf 6 7 8\n";
        let mesh = parse_text(text).unwrap();
        assert_eq!(
            mesh.triangles,
            vec![[0, 1, 2], [0, 2, 3], [0, 3, 4], [5, 6, 7]]
        );
    }

    #[test]
    fn negative_indices_count_back_from_the_latest_vertex() {
        let mesh = parse_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf -3 -2 -1\n").unwrap();
        assert_eq!(mesh.triangles, vec![[0, 1, 2]]);
    }

    #[test]
    fn vertices_may_follow_the_faces_using_them() {
        let mesh = parse_text("f 1 2 3\nv 0 0 0\nv 1 0 0\nv 0 1 0\n").unwrap();
        assert_eq!(mesh.triangles, vec![[0, 1, 2]]);
    }

    #[test]
    fn out_of_range_indices_name_line_face_index_and_vertex_count() {
        let cases = [
            ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 2 9\n", 5, 1, 9, 3),
            ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 0\n", 4, 0, 0, 3),
            ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 -4\n", 4, 0, -4, 3),
            (
                "v 0 0 0\nf 1 2 99999999999\nv 1 0 0\n",
                2,
                0,
                99_999_999_999,
                1,
            ),
            ("f 1 2 4\nv 0 0 0\nv 1 0 0\nv 0 1 0\n", 1, 0, 4, 3),
        ];
        for (text, line, face, index, vertex_count) in cases {
            match parse_text(text) {
                Err(MeshError::IndexOutOfRange {
                    line: Some(l),
                    face: f,
                    index: i,
                    vertex_count: n,
                    ..
                }) => assert_eq!((l, f, i, n), (line, face, index, vertex_count), "{text:?}"),
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn non_finite_coordinates_name_vertex_and_line() {
        for bad in ["nan", "NaN", "inf", "-infinity", "1e999"] {
            let text = format!("v 0 0 0\n\nv 1 {bad} 0\nv 0 1 0\nf 1 2 3\n");
            match parse_text(&text) {
                Err(MeshError::NonFiniteCoordinate {
                    line: Some(3),
                    vertex: 1,
                    ..
                }) => {}
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn malformed_statements_are_parse_errors_on_their_line() {
        for (text, line) in [
            ("v 0 0\n", 1),
            ("v 0 zero 0\n", 1),
            ("v 0 0 0\nv 1 0 0\nf 1 2\n", 3),
            ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 two 3\n", 4),
            ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 /2 3\n", 4),
        ] {
            match parse_text(text) {
                Err(MeshError::Parse { line: Some(l), .. }) => assert_eq!(l, line, "{text:?}"),
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn windows_line_endings_and_non_utf8_comments_are_fine() {
        let mut bytes = b"# caf\xe9\r\nv 0 0 0\r\nv 1 0 0\r\nv 0 1 0\r\nf 1 2 3\r\n".to_vec();
        bytes.extend_from_slice(b"g \xff\xfe\n");
        let mesh = parse(&bytes, "test.obj").unwrap();
        assert_eq!(mesh.triangles, vec![[0, 1, 2]]);
    }
}
