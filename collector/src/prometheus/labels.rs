//! Label values: a record's `model`, `scenario` and `variant` as `/metrics` writes them, and their
//! escaping.
//!
//! The values come from beacons, which anyone can send: any UTF-8 text of up to 256 characters
//! (the validator's bound; JSON cannot carry invalid UTF-8, and the ingest refuses it), quotes,
//! backslashes, newlines and control characters included. A label set is keyed by the values as
//! written, so two records that would write the same labels share one series: a null and `""` both
//! write `""` (Prometheus's "no such label"), and values cut to [`MAX_VALUE_BYTES`] that begin alike
//! are one series. Escaping (`\\`, `\"`, `\n`, the only escapes both exposition formats know) keeps a
//! hostile value inside its quotes.

use crate::validate::Record;

/// The longest label value written, in bytes (cut at a character boundary): model names are far
/// shorter, and it bounds every line of `/metrics`.
pub const MAX_VALUE_BYTES: usize = 128;

/// The label names of a label set, in the order they are written.
pub const NAMES: [&str; 3] = ["model", "scenario", "variant"];

/// The value of every label of the label set that folded records are counted under.
pub const OTHER: &str = "other";

/// `model`, `scenario` and `variant` as written.
pub type LabelSet = [String; 3];

/// The label set of a record. O(value lengths).
pub fn of(r: &Record) -> LabelSet {
    [&r.model, &r.scenario, &r.variant].map(|value| cut(value.as_deref().unwrap_or("")).to_owned())
}

/// The label set folded records are counted under.
pub fn other() -> LabelSet {
    [OTHER; 3].map(str::to_owned)
}

/// `value` up to [`MAX_VALUE_BYTES`], cut at a character boundary.
fn cut(value: &str) -> &str {
    if value.len() <= MAX_VALUE_BYTES {
        return value;
    }
    let end = (0..=MAX_VALUE_BYTES).rev().find(|&i| value.is_char_boundary(i)).unwrap_or(0);
    &value[..end]
}

/// Appends `value` to `out` escaped for inside a label value's double quotes. O(value length).
pub fn escape_into(out: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escaped(value: &str) -> String {
        let mut out = String::new();
        escape_into(&mut out, value);
        out
    }

    #[test]
    fn quotes_backslashes_and_newlines_are_escaped_the_rest_kept() {
        assert_eq!(escaped(r#"a"b\c"#), r#"a\"b\\c"#);
        assert_eq!(escaped("line\nbreak\r\ttab\u{0}"), "line\\nbreak\r\ttab\u{0}");
        assert_eq!(escaped("模型 🚀 \\n"), "模型 🚀 \\\\n", "a backslash before n stays two characters");
        assert_eq!(escaped(""), "");
    }

    #[test]
    fn long_values_are_cut_at_a_character_boundary() {
        assert_eq!(cut(&"a".repeat(300)).len(), MAX_VALUE_BYTES);
        let emoji = "🚀".repeat(40); // 4 bytes each: 128 falls on a boundary
        assert_eq!(cut(&emoji), &emoji[..128]);
        let shifted = format!("x{emoji}");
        assert_eq!(cut(&shifted), &shifted[..125], "cut before the character that crosses the limit");
        assert_eq!(cut("short"), "short");
    }
}
