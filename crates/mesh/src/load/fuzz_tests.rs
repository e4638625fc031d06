//! Loading must return, never panic, whatever the bytes: random bytes,
//! random keyword soups, damaged and truncated versions of valid files.

use super::{load_mesh_from_bytes, LoadOptions, MeshFormat};
use crate::test_meshes::{
    cube_ascii_ply, cube_ascii_stl, cube_binary_ply, cube_binary_stl, cube_obj, cube_off,
};
use crate::MeshError;
use proptest::prelude::*;
use proptest::sample::{select, Index};

const FORMATS: [MeshFormat; 4] = [
    MeshFormat::Obj,
    MeshFormat::Stl,
    MeshFormat::Ply,
    MeshFormat::Off,
];

/// Numbers that probe limits: zero, signs, overflow of every integer width, non-finite floats.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "4",
    "8",
    "-1",
    "-2",
    "-4",
    "0.5",
    "-0",
    "1e-320",
    "1e39",
    "1e999",
    "nan",
    "inf",
    "-inf",
    "255",
    "256",
    "65536",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "99999999999999999999",
];

fn keywords(format: MeshFormat) -> &'static [&'static str] {
    match format {
        MeshFormat::Obj => &[
            "v", "f", "vt", "vn", "l", "p", "o", "g", "s", "usemtl", "mtllib", "#", "1/2/3",
            "1//2", "-1/-1", "/", "//", "2/", "\\",
        ],
        MeshFormat::Stl => &[
            "solid", "endsolid", "facet", "normal", "outer", "loop", "vertex", "endloop",
            "endfacet", "SOLID", "\0",
        ],
        MeshFormat::Ply => &[
            "ply",
            "format",
            "ascii",
            "binary_little_endian",
            "binary_big_endian",
            "1.0",
            "element",
            "vertex",
            "face",
            "edge",
            "property",
            "list",
            "char",
            "uchar",
            "short",
            "ushort",
            "int",
            "uint",
            "float",
            "double",
            "x",
            "y",
            "z",
            "vertex_indices",
            "vertex_index",
            "end_header",
            "comment",
            "obj_info",
        ],
        MeshFormat::Off => &[
            "OFF", "COFF", "NOFF", "STOFF", "4OFF", "nOFF", "BINARY", "#",
        ],
    }
}

fn cubes() -> Vec<(MeshFormat, Vec<u8>)> {
    vec![
        (MeshFormat::Obj, cube_obj().into_bytes()),
        (MeshFormat::Stl, cube_ascii_stl().into_bytes()),
        (MeshFormat::Stl, cube_binary_stl()),
        (MeshFormat::Ply, cube_ascii_ply().into_bytes()),
        (MeshFormat::Ply, cube_binary_ply()),
        (MeshFormat::Off, cube_off().into_bytes()),
    ]
}

fn load(bytes: &[u8], format: MeshFormat) -> Result<usize, MeshError> {
    load_mesh_from_bytes(bytes, format, "fuzz", &LoadOptions::default())
        .map(|loaded| loaded.mesh.triangles.len())
}

/// Words drawn from `format`'s keywords and the limit numbers, joined by
/// spaces and newlines.
fn keyword_soup(format: MeshFormat) -> impl Strategy<Value = String> {
    let word = prop_oneof![select(keywords(format)), select(NUMBERS)];
    prop::collection::vec((word, prop::bool::weighted(0.25)), 0..150).prop_map(|words| {
        words
            .into_iter()
            .map(|(word, line_break)| format!("{word}{}", if line_break { "\n" } else { " " }))
            .collect()
    })
}

/// Limit numbers, mostly small indices, joined by spaces and newlines.
fn number_soup() -> impl Strategy<Value = String> {
    let number = prop_oneof![4 => (0..4u8).prop_map(|n| n.to_string()), 1 => select(NUMBERS).prop_map(str::to_owned)];
    prop::collection::vec((number, prop::bool::weighted(0.3)), 0..80).prop_map(|words| {
        words
            .into_iter()
            .map(|(word, line_break)| format!("{word}{}", if line_break { "\n" } else { " " }))
            .collect()
    })
}

#[test]
fn every_truncation_of_every_cube_is_an_error_or_a_mesh() {
    for (format, bytes) in cubes() {
        for cut in 0..bytes.len() {
            if let Ok(triangles) = load(&bytes[..cut], format) {
                assert!(triangles <= 12, "{format} cut at {cut}");
            }
        }
    }
}

#[test]
fn huge_declared_counts_fail_fast() {
    let cases: [(MeshFormat, &[u8]); 4] = [
        (MeshFormat::Off, b"OFF\n4294967295 4294967295 0\n0 0 0\n"),
        (
            MeshFormat::Ply,
            b"ply\nformat binary_little_endian 1.0\nelement vertex 4294967295\nproperty float x\n\
              property float y\nproperty float z\nelement face 4294967295\n\
              property list uint uint vertex_indices\nend_header\n\0\0\0\0",
        ),
        (
            MeshFormat::Ply,
            b"ply\nformat binary_little_endian 1.0\nelement vertex 0\nproperty float x\n\
              property float y\nproperty float z\nelement face 1\n\
              property list uint uint vertex_indices\nend_header\n\xff\xff\xff\xff\0\0\0\0",
        ),
        (MeshFormat::Stl, &[0xff; 84]),
    ];
    for (format, bytes) in cases {
        assert!(
            matches!(load(bytes, format), Err(MeshError::Parse { .. })),
            "{format}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_bytes_never_panic(
        bytes in prop::collection::vec(any::<u8>(), 0..700),
        format in select(&FORMATS[..]),
    ) {
        let _ = load(&bytes, format);
    }

    #[test]
    fn keyword_soups_never_panic(
        (format, text) in select(&FORMATS[..]).prop_flat_map(|format| (Just(format), keyword_soup(format))),
    ) {
        let _ = load(text.as_bytes(), format);
    }

    #[test]
    fn damaged_cubes_never_panic(
        cube in 0..6usize,
        edits in prop::collection::vec((any::<Index>(), any::<u8>()), 1..6),
    ) {
        let (format, mut bytes) = cubes().swap_remove(cube);
        for (at, byte) in edits {
            let at = at.index(bytes.len());
            bytes[at] = byte;
        }
        let _ = load(&bytes, format);
    }

    #[test]
    fn cubes_with_spliced_keywords_never_panic(
        cube in 0..6usize,
        at in any::<Index>(),
        word in select(NUMBERS),
    ) {
        let (format, mut bytes) = cubes().swap_remove(cube);
        let at = at.index(bytes.len());
        bytes.splice(at..at, format!(" {word} ").into_bytes());
        let _ = load(&bytes, format);
    }

    #[test]
    fn ascii_payloads_after_valid_headers_never_panic(
        (format, header, numbers) in prop_oneof![
            Just((MeshFormat::Off, "OFF\n")),
            Just((MeshFormat::Off, "COFF 3 2 0\n")),
            Just((
                MeshFormat::Ply,
                "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n\
                 property float z\nelement face 2\nproperty list uchar int vertex_indices\nend_header\n",
            )),
        ]
        .prop_flat_map(|(format, header)| (Just(format), Just(header), number_soup())),
    ) {
        let _ = load(format!("{header}{numbers}").as_bytes(), format);
    }

    #[test]
    fn binary_ply_payloads_never_panic(
        payload in prop::collection::vec(any::<u8>(), 0..400),
        big_endian in any::<bool>(),
        list_count in select(&["uchar", "ushort", "uint", "char", "int"][..]),
    ) {
        let format = if big_endian { "binary_big_endian" } else { "binary_little_endian" };
        let mut bytes = format!(
            "ply\nformat {format} 1.0\nelement vertex 4\nproperty float x\nproperty double y\n\
             property short z\nelement face 3\nproperty list {list_count} int vertex_indices\n\
             element other 2\nproperty list uchar float values\nend_header\n"
        )
        .into_bytes();
        bytes.extend_from_slice(&payload);
        let _ = load(&bytes, MeshFormat::Ply);
    }
}
