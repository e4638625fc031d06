//! Malformed volume-mesh files: each gives an error naming the file and
//! the line, byte or element, never a panic.

use haptic_tetmesh::{parse_medit, parse_msh, read_tet_mesh, ReadError, TetMesh};
use proptest::prelude::*;
use std::path::Path;

/// Two tets sharing a face, in two node blocks with non-contiguous tags.
const MSH: &str = "$MeshFormat
4.1 0 8
$EndMeshFormat
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

const MEDIT: &str = "MeshVersionFormatted 2
Dimension 3
Vertices
5
0 0 0 1
1 0 0 1
0 1 0 1
0 0 1 1
1 1 1 1
Tetrahedra
2
1 2 3 4 1
2 5 3 4 1
End
";

/// The error of reading `text` as the file `name` (written to a temporary
/// directory), as text.
fn read_error(name: &str, text: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    let error = read_tet_mesh(&path).expect_err("the file must be refused");
    let message = error.to_string();
    assert!(
        message.starts_with(&path.display().to_string()),
        "{message}"
    );
    message.replace(&format!("{}", dir.path().display()), "DIR")
}

#[test]
fn valid_files_read() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [("a.msh", MSH), ("a.mesh", MEDIT)] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let loaded = read_tet_mesh(&path).unwrap();
        assert!((loaded.mesh.volume() - 0.5).abs() < 1e-12);
    }
}

#[test]
fn wrong_msh_version() {
    let text = MSH.replace("4.1 0 8", "2.2 0 8");
    assert_eq!(
        read_error("old.msh", text.as_bytes()),
        "DIR/old.msh: line 2: MSH version 2.2 is not read: only 4.1 is (write it with Gmsh's -format msh41)"
    );
}

#[test]
fn truncated_msh_names_the_line() {
    let text = &MSH[..MSH.find("2 20 50").unwrap() + 5];
    let message = read_error("cut.msh", text.as_bytes());
    assert!(
        message.starts_with("DIR/cut.msh: line 25: element 2 of type 4 has 1 node tags"),
        "{message}"
    );
    let text = &MSH[..MSH.find("$EndNodes").unwrap()];
    let message = read_error("cut.msh", text.as_bytes());
    assert_eq!(
        message,
        "DIR/cut.msh: line 18: the file ends where $EndNodes was expected"
    );
}

#[test]
fn msh_node_tag_out_of_range() {
    let text = MSH.replace("2 20 50 30 40", "2 20 99 30 40");
    assert_eq!(
        read_error("range.msh", text.as_bytes()),
        "DIR/range.msh: line 25: element 2: node tag 99 is not in $Nodes"
    );
}

#[test]
fn msh_inverted_tet() {
    let text = MSH.replace("2 20 50 30 40", "2 20 50 40 30");
    let message = read_error("inverted.msh", text.as_bytes());
    assert!(
        message.starts_with(
            "DIR/inverted.msh: line 25: element 2: tet 1 is inverted: signed volume -3.333e-1"
        ),
        "{message}"
    );
}

#[test]
fn msh_zero_volume_tet() {
    // Node 50 moved into the plane of nodes 20, 30, 40.
    let text = MSH
        .replace("1 1 1\n", "0.5 0.5 0\n")
        .replace("2 20 50 30 40", "2 20 30 40 50");
    let text = text.replace("0.5 0.5 0\n", "0 0.5 0.5\n");
    let message = read_error("flat.msh", text.as_bytes());
    assert!(
        message.starts_with("DIR/flat.msh: line 25: element 2: tet 1 is degenerate: volume"),
        "{message}"
    );
    // A repeated node.
    let text = MSH.replace("1 10 20 30 40", "1 10 20 20 40");
    let message = read_error("flat.msh", text.as_bytes());
    assert!(
        message
            .starts_with("DIR/flat.msh: line 24: element 1: tet 0 is degenerate: volume 0.000e0"),
        "{message}"
    );
}

#[test]
fn msh_non_manifold_boundary_names_the_edge() {
    // Two tets sharing only the edge 10–20.
    let text = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 6 10 60\n3 1 0 6\n10\n20\n30\n40\n50\n60\n\
                0 0 0\n1 0 0\n0 1 0\n0 0 1\n0 -1 0\n0 0 -1\n$EndNodes\n$Elements\n1 2 1 2\n3 1 4 2\n\
                1 10 20 30 40\n2 10 20 50 60\n$EndElements\n";
    assert_eq!(
        read_error("pinched.msh", text.as_bytes()),
        "DIR/pinched.msh: the surface is not manifold: edge (10, 20) bounds 4 triangles"
    );
}

#[test]
fn msh_without_tets() {
    let text = MSH
        .replace("3 1 4 2\n1 10 20 30 40\n2 20 50 30 40\n", "")
        .replace("2 3 1 3\n", "1 1 7 7\n");
    assert_eq!(
        read_error("surface.msh", text.as_bytes()),
        "DIR/surface.msh: no 4-node tetrahedra (element type 4) in $Elements (elements found: \
         1 of type 2; 10-node tetrahedra are type 11)"
    );
}

#[test]
fn medit_errors_name_the_line_or_element() {
    let cases = [
        (MEDIT.replace("Dimension 3", "Dimension 2"), "DIR/a.mesh: line 2: Dimension 2: only 3 is read"),
        (MEDIT.replace("2 5 3 4 1", "2 5 3 9 1"), "DIR/a.mesh: line 13: tetrahedron 2: vertex 9 is out of range (the file has vertices 1 to 5)"),
        (MEDIT.replace("Tetrahedra", "Tetrahedrons"), "DIR/a.mesh: line 10: unknown keyword `Tetrahedrons`"),
        (MEDIT[..MEDIT.find("2 5 3").unwrap()].to_owned(), "DIR/a.mesh: line 13: the file ends where a tetrahedron's vertex number was expected"),
        (MEDIT.replace("1 1 1 1\n", "x 1 1 1\n"), "DIR/a.mesh: line 9: expected a vertex's x, found `x`"),
    ];
    for (text, expected) in cases {
        assert_eq!(read_error("a.mesh", text.as_bytes()), expected);
    }
    let message = read_error("a.mesh", MEDIT.replace("2 5 3 4 1", "2 5 4 3 1").as_bytes());
    assert!(
        message.starts_with("DIR/a.mesh: line 13: element 2: tet 1 is inverted"),
        "{message}"
    );
}

/// The mesh as MSH 4.1 binary, little-endian: one node block, a triangle
/// block that must be skipped, one tet block; tags start at 101.
fn binary_msh(mesh: &TetMesh) -> Vec<u8> {
    let mut out = b"$MeshFormat\n4.1 1 8\n".to_vec();
    out.extend(1i32.to_le_bytes());
    out.extend(b"\n$EndMeshFormat\n$Nodes\n");
    let n = mesh.positions.len() as u64;
    for v in [1u64, n, 101, 100 + n] {
        out.extend(v.to_le_bytes());
    }
    for v in [3i32, 1, 0] {
        out.extend(v.to_le_bytes());
    }
    out.extend(n.to_le_bytes());
    for tag in 101..=100 + n {
        out.extend(tag.to_le_bytes());
    }
    for p in &mesh.positions {
        for c in [p.x, p.y, p.z] {
            out.extend(c.to_le_bytes());
        }
    }
    out.extend(b"\n$EndNodes\n$Elements\n");
    let m = mesh.tets.len() as u64;
    for v in [2u64, m + 1, 1, m + 1] {
        out.extend(v.to_le_bytes());
    }
    for v in [2i32, 1, 2] {
        out.extend(v.to_le_bytes());
    }
    out.extend(1u64.to_le_bytes());
    for v in [m + 1, 101, 102, 103] {
        out.extend(v.to_le_bytes());
    }
    for v in [3i32, 1, 4] {
        out.extend(v.to_le_bytes());
    }
    out.extend(m.to_le_bytes());
    for (i, tet) in mesh.tets.iter().enumerate() {
        out.extend((i as u64 + 1).to_le_bytes());
        for &node in tet {
            out.extend((node as u64 + 101).to_le_bytes());
        }
    }
    out.extend(b"\n$EndElements\n");
    out
}

fn two_tets() -> TetMesh {
    parse_msh(MSH.as_bytes(), Path::new("two.msh"))
        .unwrap()
        .mesh
}

#[test]
fn binary_msh_reads_and_errors_name_the_byte() {
    let mesh = two_tets();
    let bytes = binary_msh(&mesh);
    let parsed = parse_msh(&bytes, Path::new("b.msh")).unwrap();
    assert_eq!(parsed.mesh, mesh);
    assert_eq!(parsed.node_numbers, vec![101, 102, 103, 104, 105]);
    // Truncated inside the tet block.
    let cut = &bytes[..bytes.len() - 30];
    let message = parse_msh(cut, Path::new("b.msh")).unwrap_err().to_string();
    assert!(message.starts_with("b.msh: byte "), "{message}");
    assert!(message.contains("the file ends inside"), "{message}");
    // A node tag that is not defined.
    let mut bad = bytes.clone();
    let last = bad.len() - b"\n$EndElements\n".len() - 8;
    bad[last..last + 8].copy_from_slice(&999u64.to_le_bytes());
    let message = parse_msh(&bad, Path::new("b.msh")).unwrap_err().to_string();
    assert!(
        message.contains("element 2: node tag 999 is not in $Nodes"),
        "{message}"
    );
    // An inverted tet, named by its element tag.
    let mut inverted = mesh.clone();
    inverted.tets[1].swap(0, 1);
    let error = parse_msh(&binary_msh(&inverted), Path::new("b.msh"))
        .unwrap()
        .checked(Path::new("b.msh"))
        .unwrap_err();
    assert!(
        matches!(error, ReadError::InvalidElement { element: 2, .. }),
        "{error}"
    );
    assert!(error.to_string().starts_with("b.msh: byte "), "{error}");
}

#[test]
fn a_huge_count_allocates_nothing() {
    let text = MSH.replace("2 5 10 50", "2 99999999999999 10 50");
    let message = read_error("huge.msh", text.as_bytes());
    assert_eq!(
        message,
        "DIR/huge.msh: line 5: the number of nodes is 99999999999999, more than the rest of the file can hold"
    );
    let text = MEDIT.replace("Vertices\n5", "Vertices\n99999999999");
    let message = read_error("huge.mesh", text.as_bytes());
    assert!(
        message.starts_with("DIR/huge.mesh: line 4: vertices: 99999999999 entries"),
        "{message}"
    );
}

/// Reading any mutation of a valid file gives a mesh or an error that
/// names the file; it never panics.
fn check_mutation(
    parse: fn(&[u8], &Path) -> Result<haptic_tetmesh::ParsedTetMesh, ReadError>,
    bytes: &[u8],
) {
    let path = Path::new("mutated.file");
    match parse(bytes, path) {
        Ok(parsed) => {
            if let Err(error) = parsed.checked(path) {
                assert!(error.to_string().starts_with("mutated.file"), "{error}");
            }
        }
        Err(error) => assert!(error.to_string().starts_with("mutated.file"), "{error}"),
    }
}

fn mutate(base: &[u8], edits: &[(usize, u8)], cut: usize) -> Vec<u8> {
    let mut bytes = base.to_vec();
    for &(at, byte) in edits {
        let at = at % bytes.len();
        bytes[at] = byte;
    }
    bytes.truncate(cut % (bytes.len() + 1));
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn mutated_ascii_msh_never_panics(edits in prop::collection::vec((any::<usize>(), prop::sample::select(b"0123456789 .-\n$eE".to_vec())), 1..6), cut in any::<usize>()) {
        check_mutation(parse_msh, &mutate(MSH.as_bytes(), &edits, cut));
    }

    #[test]
    fn mutated_binary_msh_never_panics(edits in prop::collection::vec((any::<usize>(), any::<u8>()), 1..6), cut in any::<usize>()) {
        check_mutation(parse_msh, &mutate(&binary_msh(&two_tets()), &edits, cut));
    }

    #[test]
    fn mutated_medit_never_panics(edits in prop::collection::vec((any::<usize>(), prop::sample::select(b"0123456789 .-\n#eE".to_vec())), 1..6), cut in any::<usize>()) {
        check_mutation(parse_medit, &mutate(MEDIT.as_bytes(), &edits, cut));
    }
}
