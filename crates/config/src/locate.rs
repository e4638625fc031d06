//! Where a field sits in a TOML text: byte spans to line and column, and
//! dotted field paths (`objects[1].shape.radius_m`) to spans and back.

use std::ops::Range;
use toml_edit::{ImDocument, Item, Table, Value};

/// A 1-based line and column (in characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    pub line: usize,
    pub column: usize,
}

impl Location {
    /// The line and column of byte `offset` in `text`.
    pub fn of(text: &str, offset: usize) -> Self {
        let before = &text[..floor_char_boundary(text, offset)];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Self {
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
        }
    }
}

fn floor_char_boundary(text: &str, offset: usize) -> usize {
    let mut i = offset.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Every key, value and table header of a document with its field path.
pub struct FieldSpans(Vec<(String, Range<usize>)>);

impl FieldSpans {
    /// The spans of `text`'s fields; none when it is not valid TOML.
    pub fn of(text: &str) -> Self {
        let mut spans = Vec::new();
        if let Ok(document) = ImDocument::parse(text) {
            table(&document, "", &mut spans);
        }
        Self(spans)
    }

    /// The path of the innermost field whose span holds `offset`.
    pub fn path_at(&self, offset: usize) -> Option<&str> {
        self.0
            .iter()
            .filter(|(_, span)| span.contains(&offset))
            .min_by_key(|(_, span)| span.len())
            .map(|(path, _)| path.as_str())
    }

    /// Where field `path` (or an array's first element) starts, or its
    /// nearest written ancestor.
    pub fn start_of(&self, path: &str) -> Option<usize> {
        let mut path = path;
        loop {
            let element = format!("{path}[");
            let found = self
                .0
                .iter()
                .filter(|(p, _)| p == path || p.starts_with(&element))
                .map(|(_, span)| span.start)
                .min();
            if found.is_some() {
                return found;
            }
            path = &path[..path.rfind(['.', '['])?];
        }
    }
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_owned()
    } else {
        format!("{prefix}.{key}")
    }
}

fn table(t: &Table, prefix: &str, spans: &mut Vec<(String, Range<usize>)>) {
    if let Some(span) = t.span() {
        spans.push((prefix.to_owned(), span));
    }
    for (key, value) in t.iter() {
        let path = join(prefix, key);
        let key_span = t.key(key).and_then(|k| k.span());
        item(value, &path, key_span, spans);
    }
}

fn item(
    value: &Item,
    path: &str,
    key_span: Option<Range<usize>>,
    spans: &mut Vec<(String, Range<usize>)>,
) {
    match value {
        Item::None => {}
        Item::Table(t) => table(t, path, spans),
        Item::ArrayOfTables(array) => {
            for (i, t) in array.iter().enumerate() {
                table(t, &format!("{path}[{i}]"), spans);
            }
        }
        Item::Value(v) => self::value(v, path, key_span, spans),
    }
}

/// Records `v` at `path`, and what it holds; a key-value pair spans from
/// its key to the end of its value.
fn value(
    v: &Value,
    path: &str,
    key_span: Option<Range<usize>>,
    spans: &mut Vec<(String, Range<usize>)>,
) {
    let span = match (key_span, v.span()) {
        (Some(k), Some(v)) => Some(k.start..v.end),
        (_, v) => v,
    };
    if let Some(span) = span {
        spans.push((path.to_owned(), span));
    }
    match v {
        Value::InlineTable(t) => {
            for (key, inner) in t.iter() {
                let key_span = t.key(key).and_then(|k| k.span());
                value(inner, &join(path, key), key_span, spans);
            }
        }
        Value::Array(array) => {
            for (i, inner) in array.iter().enumerate() {
                value(inner, &format!("{path}[{i}]"), None, spans);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "a = 1\n[b]\nc = { d = [1, 2] }\n[[e]]\nf = \"x\"\n[[e]]\ng = 2\n";

    #[test]
    fn offsets_become_lines_and_columns() {
        assert_eq!(Location::of(TEXT, 0), Location { line: 1, column: 1 });
        let g = TEXT.find("g =").unwrap();
        assert_eq!(Location::of(TEXT, g), Location { line: 7, column: 1 });
        assert_eq!(Location::of("é = 1", 2), Location { line: 1, column: 2 });
    }

    #[test]
    fn paths_and_spans_map_both_ways() {
        let spans = FieldSpans::of(TEXT);
        let at = |s: &str| TEXT.find(s).unwrap();
        assert_eq!(spans.path_at(at("2]")), Some("b.c.d[1]"));
        assert_eq!(spans.path_at(at("d =")), Some("b.c.d"));
        assert_eq!(spans.path_at(at("g =")), Some("e[1].g"));
        assert_eq!(spans.start_of("e[0].f"), Some(at("f =")));
        assert_eq!(spans.start_of("e[1].missing"), Some(at("[[e]]\ng")));
        assert_eq!(spans.start_of("e"), Some(at("[[e]]")));
    }
}
