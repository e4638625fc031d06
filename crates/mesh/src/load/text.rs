//! Line and token scanning shared by the text formats. Works on bytes, so a
//! file need not be valid UTF-8 outside the numbers that are read.

use crate::MeshError;
use nalgebra::Point3;
use std::str::FromStr;

/// Longest piece of file text quoted in an error message.
const MAX_QUOTED_CHARS: usize = 40;

/// The lines of `bytes` with their 1-based numbers, without `\n` or `\r\n`.
pub(super) fn numbered_lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .map(|(index, line)| {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            (index + 1, line)
        })
}

/// `line` up to its first `#`.
pub(super) fn without_comment(line: &[u8]) -> &[u8] {
    match line.iter().position(|&b| b == b'#') {
        Some(hash) => &line[..hash],
        None => line,
    }
}

/// The whitespace-separated tokens of `line`.
pub(super) fn tokens(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(u8::is_ascii_whitespace)
        .filter(|token| !token.is_empty())
}

/// `token` parsed as a number, if it is one.
pub(super) fn parse_number<T: FromStr>(token: &[u8]) -> Option<T> {
    std::str::from_utf8(token).ok()?.parse().ok()
}

/// `token` for an error message: lossily decoded, quoted and shortened.
pub(super) fn quoted(token: &[u8]) -> String {
    let text = String::from_utf8_lossy(token);
    if text.chars().count() > MAX_QUOTED_CHARS {
        let head: String = text.chars().take(MAX_QUOTED_CHARS).collect();
        format!("{head:?}…")
    } else {
        format!("{text:?}")
    }
}

/// Reads the next three tokens as the coordinates of vertex `vertex` on `line`.
pub(super) fn parse_point<'a>(
    tokens: &mut impl Iterator<Item = &'a [u8]>,
    file: &str,
    line: usize,
    vertex: usize,
) -> Result<Point3<f64>, MeshError> {
    let mut point = Point3::origin();
    for axis in 0..3 {
        let token = tokens.next().ok_or_else(|| {
            MeshError::parse(
                file,
                Some(line),
                format!("vertex {vertex} has {axis} coordinates; 3 are needed"),
            )
        })?;
        let value: f64 = parse_number(token).ok_or_else(|| {
            MeshError::parse(
                file,
                Some(line),
                format!("vertex {vertex}: {} is not a number", quoted(token)),
            )
        })?;
        if !value.is_finite() {
            return Err(MeshError::NonFiniteCoordinate {
                file: file.to_owned(),
                line: Some(line),
                vertex,
            });
        }
        point[axis] = value;
    }
    Ok(point)
}
