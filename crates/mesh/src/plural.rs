//! Counts in words, for the reports' one-line summaries.

/// `count` followed by the noun in the right number: `1 vertex`, `2 vertices`.
pub(crate) fn counted(count: usize, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}
