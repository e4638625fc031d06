//! PLY, ASCII and binary (either byte order), read with `ply-rs-bw`: the
//! `vertex` element's `x`, `y`, `z` (any numeric type) and the `face`
//! element's `vertex_indices` or `vertex_index` list (any integer type),
//! fan-triangulated. Other elements and properties are skipped.

use super::{push_fan, vertex_index};
use crate::{MeshError, TriangleMesh};
use nalgebra::Point3;
use ply_rs_bw::parser::{ParseError, Parser, Reader};
use ply_rs_bw::ply::{
    ElementDef, Encoding, Header, Property, PropertyAccess, PropertyAccessResult, PropertyType,
    ScalarType,
};

/// Longest message from the PLY parser kept in an error (it quotes whole lines).
const MAX_MESSAGE_CHARS: usize = 300;

const FACE_INDEX_PROPERTIES: [&str; 2] = ["vertex_indices", "vertex_index"];

pub(super) fn parse(bytes: &[u8], file: &str) -> Result<TriangleMesh, MeshError> {
    let mut reader = Reader::new(bytes);
    let header = Parser::<SkippedElement>::new()
        .read_header(&mut reader)
        .map_err(|error| parse_error(error, file))?;
    check_header(&header, file)?;
    let ascii = header.encoding == Encoding::Ascii;

    let mut points = Vec::new();
    let mut faces = Vec::new();
    let mut first_face_line = 0;
    for element in header.elements.values() {
        match element.name.as_str() {
            "vertex" => {
                let first_line = reader.line();
                let vertices = read_element::<PlyVertex>(&mut reader, element, &header, file)?;
                points.reserve(vertices.len());
                for (vertex, PlyVertex(position)) in vertices.into_iter().enumerate() {
                    if !position.iter().all(|c| c.is_finite()) {
                        return Err(MeshError::NonFiniteCoordinate {
                            file: file.to_owned(),
                            line: ascii.then_some(first_line + vertex),
                            vertex,
                        });
                    }
                    points.push(Point3::from(position));
                }
            }
            "face" => {
                first_face_line = reader.line();
                faces = read_element::<PlyFace>(&mut reader, element, &header, file)?;
            }
            _ => {
                read_element::<SkippedElement>(&mut reader, element, &header, file)?;
            }
        }
    }

    let mut triangles = Vec::new();
    let mut polygon = Vec::new();
    for (face, PlyFace(indices)) in faces.iter().enumerate() {
        let line = ascii.then_some(first_face_line + face);
        if indices.len() < 3 {
            return Err(MeshError::parse(
                file,
                line,
                format!(
                    "face {face} has {} vertices; at least 3 are needed",
                    indices.len()
                ),
            ));
        }
        polygon.clear();
        for &index in indices {
            match usize::try_from(index) {
                Ok(zero_based) if zero_based < points.len() => {
                    polygon.push(vertex_index(zero_based, file)?);
                }
                _ => {
                    return Err(MeshError::IndexOutOfRange {
                        file: file.to_owned(),
                        line,
                        face,
                        index,
                        vertex_count: points.len(),
                    })
                }
            }
        }
        push_fan(&polygon, &mut triangles);
    }
    Ok(TriangleMesh::new(points, triangles))
}

/// Rejects headers without the properties this reader needs, before reading the payload.
fn check_header(header: &Header, file: &str) -> Result<(), MeshError> {
    let vertex = header
        .elements
        .get("vertex")
        .ok_or_else(|| MeshError::parse(file, None, "no `vertex` element in the header"))?;
    for axis in ["x", "y", "z"] {
        match vertex.properties.get(axis).map(|p| &p.data_type) {
            Some(PropertyType::Scalar(_)) => {}
            _ => {
                return Err(MeshError::parse(
                    file,
                    None,
                    format!("the `vertex` element has no scalar `{axis}` property"),
                ))
            }
        }
    }
    let face = header.elements.get("face").ok_or_else(|| {
        MeshError::empty(file, "no `face` element in the header (a point cloud?)")
    })?;
    let index_lists = FACE_INDEX_PROPERTIES
        .iter()
        .filter_map(|name| face.properties.get(*name))
        .filter(|p| matches!(&p.data_type, PropertyType::List(_, item) if is_integer(item)))
        .count();
    if index_lists != 1 {
        return Err(MeshError::parse(
            file,
            None,
            "the `face` element needs one integer list `vertex_indices` or `vertex_index`",
        ));
    }
    Ok(())
}

fn is_integer(scalar: &ScalarType) -> bool {
    !matches!(scalar, ScalarType::Float | ScalarType::Double)
}

fn read_element<E: PropertyAccess>(
    reader: &mut Reader<&[u8]>,
    element: &ElementDef,
    header: &Header,
    file: &str,
) -> Result<Vec<E>, MeshError> {
    Parser::<E>::new()
        .read_payload_for_element(reader, element, header)
        .map_err(|error| parse_error(error, file))
}

fn parse_error(error: ParseError, file: &str) -> MeshError {
    let line = error.line();
    let text = error.to_string();
    let message = line
        .and_then(|line| text.strip_prefix(&format!("Line {line}: ")))
        .unwrap_or(&text);
    let message: String = message
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(MAX_MESSAGE_CHARS)
        .collect();
    MeshError::parse(file, line, message)
}

/// A vertex's position; a coordinate the element lacks stays NaN (the header
/// check rules that out).
struct PlyVertex([f64; 3]);

impl PropertyAccess for PlyVertex {
    fn new() -> Self {
        PlyVertex([f64::NAN; 3])
    }

    fn set_property(&mut self, name: &str, property: Property) -> PropertyAccessResult {
        let axis = match name {
            "x" => 0,
            "y" => 1,
            "z" => 2,
            _ => return PropertyAccessResult::Ignored,
        };
        let value = match property {
            Property::Char(v) => f64::from(v),
            Property::UChar(v) => f64::from(v),
            Property::Short(v) => f64::from(v),
            Property::UShort(v) => f64::from(v),
            Property::Int(v) => f64::from(v),
            Property::UInt(v) => f64::from(v),
            Property::Float(v) => f64::from(v),
            Property::Double(v) => v,
            _ => return PropertyAccessResult::UnsupportedType,
        };
        self.0[axis] = value;
        PropertyAccessResult::Set
    }
}

/// A face's vertex indices as written.
struct PlyFace(Vec<i64>);

impl PropertyAccess for PlyFace {
    fn new() -> Self {
        PlyFace(Vec::new())
    }

    fn set_property(&mut self, name: &str, property: Property) -> PropertyAccessResult {
        if !FACE_INDEX_PROPERTIES.contains(&name) {
            return PropertyAccessResult::Ignored;
        }
        self.0 = match property {
            Property::ListChar(list) => list.into_iter().map(i64::from).collect(),
            Property::ListUChar(list) => list.into_iter().map(i64::from).collect(),
            Property::ListShort(list) => list.into_iter().map(i64::from).collect(),
            Property::ListUShort(list) => list.into_iter().map(i64::from).collect(),
            Property::ListInt(list) => list.into_iter().map(i64::from).collect(),
            Property::ListUInt(list) => list.into_iter().map(i64::from).collect(),
            _ => return PropertyAccessResult::UnsupportedType,
        };
        PropertyAccessResult::Set
    }
}

/// An element this reader does not use; parsed only to get past it.
struct SkippedElement;

impl PropertyAccess for SkippedElement {
    fn new() -> Self {
        SkippedElement
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_meshes::{cube_ascii_ply, cube_binary_ply, cube_triangles};

    fn parse_bytes(bytes: &[u8]) -> Result<TriangleMesh, MeshError> {
        parse(bytes, "test.ply")
    }

    /// A header for `vertices` float vertices and `faces` faces whose index list has
    /// `count` counts and `index` entries, in `format`.
    fn header(format: &str, vertices: usize, faces: usize, count: &str, index: &str) -> String {
        format!(
            "ply\nformat {format} 1.0\nelement vertex {vertices}\nproperty float x\n\
             property float y\nproperty float z\nelement face {faces}\n\
             property list {count} {index} vertex_indices\nend_header\n"
        )
    }

    #[test]
    fn ascii_and_binary_cubes_read_as_twelve_triangles() {
        for bytes in [cube_ascii_ply().into_bytes(), cube_binary_ply()] {
            let mesh = parse_bytes(&bytes).unwrap();
            assert_eq!(mesh.vertices.len(), 8);
            assert_eq!(mesh.vertices[7], Point3::new(1.0, 1.0, 1.0));
            assert_eq!(mesh.triangles, cube_triangles());
        }
    }

    #[test]
    fn big_endian_with_integer_coordinates_and_short_indices_reads() {
        let mut bytes = b"ply\nformat binary_big_endian 1.0\nelement vertex 3\n\
            property int x\nproperty short y\nproperty uchar z\nelement face 1\n\
            property list uint ushort vertex_indices\nend_header\n"
            .to_vec();
        for (x, y, z) in [(0, 0, 0u8), (1, 0, 0), (0, 1, 0)] {
            bytes.extend_from_slice(&i32::to_be_bytes(x));
            bytes.extend_from_slice(&i16::to_be_bytes(y));
            bytes.push(z);
        }
        bytes.extend_from_slice(&3u32.to_be_bytes());
        for v in [0u16, 1, 2] {
            bytes.extend_from_slice(&v.to_be_bytes());
        }
        let mesh = parse_bytes(&bytes).unwrap();
        assert_eq!(mesh.triangles, vec![[0, 1, 2]]);
        assert_eq!(mesh.vertices[2], Point3::new(0.0, 1.0, 0.0));
    }

    #[test]
    fn out_of_range_indices_name_face_index_and_vertex_count() {
        let ascii = cube_ascii_ply().replace("4 0 1 5 4", "4 0 1 5 8");
        match parse_bytes(ascii.as_bytes()) {
            Err(MeshError::IndexOutOfRange {
                line: Some(21),
                face: 2,
                index: 8,
                vertex_count: 8,
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
        let mut binary = header("binary_little_endian", 3, 1, "uchar", "int").into_bytes();
        binary.extend_from_slice(&[0; 36]);
        binary.push(3);
        for v in [0i32, 1, -1] {
            binary.extend_from_slice(&v.to_le_bytes());
        }
        match parse_bytes(&binary) {
            Err(MeshError::IndexOutOfRange {
                line: None,
                face: 0,
                index: -1,
                vertex_count: 3,
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn non_finite_coordinates_name_vertex_and_line() {
        // 1e39 overflows the declared `float` to infinity.
        let ascii = cube_ascii_ply().replacen("1 0 0\n", "1 1e39 0\n", 1);
        match parse_bytes(ascii.as_bytes()) {
            Err(MeshError::NonFiniteCoordinate {
                line: Some(12),
                vertex: 1,
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
        let mut binary = header("binary_little_endian", 3, 1, "uchar", "int").into_bytes();
        for c in [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, f32::NAN, 0.0] {
            binary.extend_from_slice(&f32::to_le_bytes(c));
        }
        binary.push(3);
        for v in [0i32, 1, 2] {
            binary.extend_from_slice(&v.to_le_bytes());
        }
        match parse_bytes(&binary) {
            Err(MeshError::NonFiniteCoordinate {
                line: None,
                vertex: 2,
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn nan_text_in_ascii_is_a_parse_error_on_its_line() {
        // The PLY grammar has no spelling for NaN.
        let ascii = cube_ascii_ply().replacen("1 0 0\n", "1 nan 0\n", 1);
        assert!(matches!(
            parse_bytes(ascii.as_bytes()),
            Err(MeshError::Parse { line: Some(12), .. })
        ));
    }

    #[test]
    fn point_cloud_is_an_empty_mesh() {
        let text = "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\n\
                    property float y\nproperty float z\nend_header\n0 0 0\n";
        assert!(matches!(
            parse_bytes(text.as_bytes()),
            Err(MeshError::EmptyMesh { .. })
        ));
    }

    #[test]
    fn malformed_files_are_parse_errors() {
        let cube = cube_ascii_ply();
        let cases = [
            cube.replace("property float y\n", ""),
            cube.replace("vertex_indices", "corners"),
            cube.replace("list uchar int", "list uchar float"),
            cube.replace("element vertex 8", "element vertex 9"),
            cube.replace("4 0 1 5 4", "4 0 1 5"),
            cube.replace("4 0 1 5 4", "2 0 1"),
            cube.replace("1 1 1\n", "1 one 1\n"),
            cube.replace("format ascii", "format base64"),
            "garbage\nmore garbage\n".to_owned(),
        ];
        for text in cases {
            match parse_bytes(text.as_bytes()) {
                Err(MeshError::Parse { .. }) => {}
                other => panic!("{text:?}: {other:?}"),
            }
        }
        let binary = cube_binary_ply();
        for cut in [binary.len() - 1, binary.len() - 20, 250] {
            assert!(
                matches!(parse_bytes(&binary[..cut]), Err(MeshError::Parse { .. })),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn parse_errors_carry_the_line_of_ascii_payload() {
        let text = cube_ascii_ply().replace("1 1 1\n", "1 one 1\n");
        match parse_bytes(text.as_bytes()) {
            Err(MeshError::Parse {
                line: Some(18),
                message,
                ..
            }) => assert!(!message.starts_with("Line"), "{message}"),
            other => panic!("{other:?}"),
        }
    }
}
