//! Zero-allocation JSON reading: check a document once, then look values up in its raw bytes.
//!
//! Decoders only need a handful of fields from each event, so instead of building a tree this module
//! validates the bytes iteratively (a nesting bomb costs a counter, not stack: `validate.rs`). While
//! validating, it records each value's and key's place on a [`Tape`] the caller lends (`TAPE` entries,
//! 1,152 bytes whatever the input; the stream keeps one and reuses it for every event), so lookups (this
//! file: [`Value`] and its iterators) jump from member to member instead of scanning the bytes again. A
//! document with more values than the tape holds is not recorded: its lookups find each value's end by
//! validating it again, in O(size of the value). Strings stay escaped until read (`string.rs`). Every
//! function is total: any input gives an answer, none panics.

mod string;
mod tape;
mod validate;

pub use string::{Str, StrChars};
pub use tape::Tape;
pub use validate::{string_at, MAX_DEPTH};
use tape::Entry;
use validate::{check, skip_ws_loop, validate};

/// A well-formed JSON value as a slice of the document it came from, with its entries on the
/// document's [`Tape`] (none when the document was not recorded: then lookups scan `raw`).
#[derive(Clone, Copy, Debug)]
pub struct Value<'a> {
    raw: &'a [u8],
    tape: &'a [Entry],
}

impl<'a> Value<'a> {
    /// Parses `bytes` as one JSON document (surrounding whitespace allowed), recording its values on
    /// `tape`, and returns its root. The decoders' lookups start here.
    ///
    /// Returns `None` for anything malformed or nested deeper than [`MAX_DEPTH`]. O(n) time, O(1)
    /// memory (the tape's).
    pub fn parse(bytes: &'a [u8], tape: &'a mut Tape) -> Option<Value<'a>> {
        let (start, end, len) = check(bytes, &mut tape.entries)?;
        Some(Value { raw: bytes.get(start..end)?, tape: tape.entries.get(..len).unwrap_or_default() })
    }

    /// The value's bytes exactly as they appear in the document.
    pub fn raw(self) -> &'a [u8] {
        self.raw
    }

    /// The member `key` (ASCII without `\`, as decoders' names are) of an object, the first of that name;
    /// `None` if this is not an object or has no such member.
    ///
    /// Keys are compared after unescaping. O(members) when recorded, else O(size of the object).
    #[inline(never)] // called from many places: one copy keeps the wasm small
    pub fn get(self, key: &str) -> Option<Value<'a>> {
        let mut members = self.members();
        while let Some((name, value)) = members.next() {
            if name.is_key(key) {
                return Some(value);
            }
        }
        None
    }

    /// The members of an object as `(key, value)` pairs, in document order (none if not an object).
    ///
    /// Decoders that want several members read them all in one loop instead of one [`Value::get`] each.
    pub fn members(self) -> Members<'a> {
        Members { inner: self.contents(b'{') }
    }

    /// The elements of an array (none if this is not an array).
    pub fn items(self) -> Items<'a> {
        Items { inner: self.contents(b'[') }
    }

    /// A cursor over this value's contents if it opens with `open`: its tape entries past its own,
    /// or, unrecorded, its bytes past the bracket. Nothing for any other value.
    fn contents(self, open: u8) -> Contents<'a> {
        let base = self.tape.first().map_or(0, |e| e.start);
        let mut contents = Contents { raw: self.raw, base, tape: &[], pos: self.raw.len() };
        if self.raw.first() == Some(&open) {
            match self.tape.split_first() {
                Some((_, tape)) => contents.tape = tape,
                None => contents.pos = skip_ws_loop(self.raw, 1),
            }
        }
        contents
    }

    /// The first element of an array.
    pub fn first(self) -> Option<Value<'a>> {
        self.items().next()
    }

    /// The string this value holds, if it is a string.
    pub fn as_str(self) -> Option<Str<'a>> {
        let [b'"', escaped @ .., _] = self.raw else { return None };
        Some(Str { escaped })
    }

    /// A non-negative integer (`12`, also `12.0`); `None` for other values or above `u64::MAX`.
    pub fn as_u64(self) -> Option<u64> {
        let mut total: u64 = 0;
        let mut digits = 0;
        for (i, &b) in self.raw.iter().enumerate() {
            match b {
                // `total * 10` overflows past this (checked without a wide multiplication, a call in wasm32).
                b'0'..=b'9' if total <= u64::MAX / 10 => {
                    total = (total * 10).checked_add(u64::from(b - b'0'))?;
                    digits += 1;
                }
                b'.' if digits > 0 => {
                    let rest = self.raw.get(i + 1..)?;
                    return rest.iter().all(|&d| d == b'0').then_some(total);
                }
                _ => return None,
            }
        }
        (digits > 0).then_some(total)
    }

    /// Whether this is the literal `true` (decoders only ask that of a flag: `false`, any other value
    /// and its absence all read as not set).
    pub fn is_true(self) -> bool {
        self.raw == b"true"
    }

    /// Whether this is the literal `null`.
    pub fn is_null(self) -> bool {
        self.raw == b"null"
    }

    /// Whether this is an object or array with no members, or an empty string.
    pub fn is_empty(self) -> bool {
        match self.raw.first() {
            Some(&open @ (b'{' | b'[')) => self.contents(open).next().is_none(),
            Some(b'"') => self.raw.len() == 2,
            _ => false,
        }
    }
}

/// Where an iteration over a container's contents is: the rest of its tape entries or, unrecorded,
/// a position in its bytes.
struct Contents<'a> {
    raw: &'a [u8],
    /// The document offset of `raw`, to which the tape's offsets are relative.
    base: u32,
    tape: &'a [Entry],
    pos: usize,
}

impl<'a> Contents<'a> {
    /// The next key or value, with its own entries.
    #[inline(always)] // the recorded case is a few instructions, in every lookup's loop
    fn next(&mut self) -> Option<Value<'a>> {
        let Some(entry) = self.tape.first() else {
            // The end of a recorded container, checked here: the cold path is a call.
            return if self.pos >= self.raw.len() { None } else { self.next_unrecorded() };
        };
        let (tape, rest) = self.tape.split_at_checked(entry.span as usize)?;
        self.tape = rest;
        let at = |offset: u32| offset.wrapping_sub(self.base) as usize;
        Some(Value { raw: self.raw.get(at(entry.start)..at(entry.end))?, tape })
    }

    /// The next key or value of an unrecorded container (or none, past its end): its end is found by
    /// validating it again, and `pos` moves past the `:` or `,` after it.
    #[cold]
    #[inline(never)]
    fn next_unrecorded(&mut self) -> Option<Value<'a>> {
        let start = self.pos;
        // Past the end (a recorded container's, or nothing to iterate) `validate` finds no value.
        let (end, _) = validate(self.raw, start, &mut [])?;
        let after = skip_ws_loop(self.raw, end);
        self.pos = match self.raw.get(after) {
            Some(b',' | b':') => skip_ws_loop(self.raw, after + 1),
            _ => self.raw.len(),
        };
        Some(Value { raw: self.raw.get(start..end)?, tape: &[] })
    }
}

/// Iterator over the members of a JSON object.
pub struct Members<'a> {
    inner: Contents<'a>,
}

impl<'a> Iterator for Members<'a> {
    type Item = (Str<'a>, Value<'a>);

    /// Inlined into its two loops, [`Value::get`]'s and the OpenAI decoder's: the recorded case is a few
    /// instructions, less than a call returning six words through memory.
    #[inline(always)]
    fn next(&mut self) -> Option<(Str<'a>, Value<'a>)> {
        let c = &mut self.inner;
        // Recorded: a key is one entry (its span is 1), its value's entries follow it.
        let [key, value, ..] = c.tape else {
            // A recorded object's contents are pairs: fewer than two entries is its end.
            return if c.pos >= c.raw.len() { None } else { self.next_unrecorded() };
        };
        let at = |offset: u32| offset.wrapping_sub(c.base) as usize;
        let (value_tape, rest) = c.tape[1..].split_at_checked(value.span as usize)?;
        // A key spans its quotes; an end of 0 wraps past any length, and `get` says `None` as `checked_sub` did.
        let escaped = c.raw.get(at(key.start) + 1..at(key.end).wrapping_sub(1))?;
        let raw = c.raw.get(at(value.start)..at(value.end))?;
        c.tape = rest;
        Some((Str { escaped }, Value { raw, tape: value_tape }))
    }
}

impl<'a> Members<'a> {
    /// The next member of an unrecorded object.
    #[cold]
    #[inline(never)]
    fn next_unrecorded(&mut self) -> Option<(Str<'a>, Value<'a>)> {
        let key = self.inner.next_unrecorded()?.as_str()?;
        Some((key, self.inner.next_unrecorded()?))
    }
}

/// Iterator over the elements of a JSON array.
pub struct Items<'a> {
    inner: Contents<'a>,
}

impl<'a> Iterator for Items<'a> {
    type Item = Value<'a>;

    fn next(&mut self) -> Option<Value<'a>> {
        self.inner.next()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses `text` as the decoders do, on a tape of its own.
    fn parse(text: &[u8]) -> Option<Value<'_>> {
        Value::parse(text, Box::leak(Box::default()))
    }

    /// Checks `text` without recording it: lookups into it find values' ends by validating again.
    fn unrecorded(text: &[u8]) -> Option<Value<'_>> {
        let (start, end, _) = check(text, &mut [])?;
        Some(Value { raw: &text[start..end], tape: &[] })
    }

    fn text(v: Value) -> String {
        v.as_str().unwrap().chars().collect()
    }

    #[test]
    fn for_each_char_yields_what_chars_yields() {
        let doc: &[u8] = b"[\"plain ascii\", \"tab\\there \\\"q\\\" \\u00e9\\ud83d\\ude80\", \"\xe6\xb5\x81\xff end\", \"\\ud800 lone\", \"\"]";
        let v = parse(doc).unwrap();
        assert_eq!(v.items().count(), 5);
        for item in v.items() {
            let s = item.as_str().unwrap();
            let mut fed = String::new();
            s.for_each_char(|c| fed.push(c));
            assert_eq!(fed, s.chars().collect::<String>(), "{:?}", String::from_utf8_lossy(item.raw()));
        }
    }

    #[test]
    fn accepts_and_rejects() {
        for good in [r#"{"a":[1,2.5e3,-0.1,true,false,null,"x"]}"#, "[]", "{}", " 0 ", r#""\u00e9""#, "[[[]]]"] {
            assert!(parse(good.as_bytes()).is_some(), "{good}");
        }
        for bad in ["", "{", "[1,]", r#"{"a"}"#, r#"{"a":1,}"#, "01", "1.", "tru", "[1] x", "\"\u{1}\"", r#""\x""#, "{]"] {
            assert!(parse(bad.as_bytes()).is_none(), "{bad}");
        }
    }

    #[test]
    fn nesting_bomb_is_rejected_without_recursion() {
        let bomb = "[".repeat(1_000_000);
        assert!(parse(bomb.as_bytes()).is_none());
        let deep = "[".repeat(MAX_DEPTH as usize) + &"]".repeat(MAX_DEPTH as usize);
        assert!(parse(deep.as_bytes()).is_some());
    }

    #[test]
    fn looks_up_paths_and_items() {
        let doc = r#"{"choices":[{"delta":{"content":"Hi \"you\" \ud83d\ude00 \u00e9"}},{"x":1}],"usage":{"n":12.0},"k\u0041":2}"#;
        let v = parse(doc.as_bytes()).unwrap();
        let first = v.get("choices").unwrap().first().unwrap();
        assert_eq!(text(first.get("delta").unwrap().get("content").unwrap()), "Hi \"you\" 😀 é");
        assert_eq!(v.get("choices").unwrap().items().count(), 2);
        assert_eq!(v.get("usage").unwrap().get("n").unwrap().as_u64(), Some(12));
        assert_eq!(v.get("kA").unwrap().as_u64(), Some(2));
        assert!(v.get("missing").is_none());
    }

    #[test]
    fn is_key_answers_as_eq_str() {
        let doc: &[u8] = b"[\"model\", \"mode\", \"models\", \"mod\\u0065l\", \"mod\\u0065\", \"m\\u00e9\", \"\\u006d\", \"\\\\m\", \"\\n\", \"\", \"\xffodel\", \"mo\\\"el\"]";
        for item in parse(doc).unwrap().items() {
            let s = item.as_str().unwrap();
            for key in ["model", "mode", "m", "", "mo\"el", "\n"] {
                assert_eq!(s.is_key(key), s.eq_str(key), "{:?} {key:?}", String::from_utf8_lossy(item.raw()));
            }
        }
    }

    #[test]
    fn members_in_one_pass() {
        let v = parse(br#"{"a":1, "b" : {"c":[2]}, "d\u0065":"x"}"#).unwrap();
        let keys: Vec<String> = v.members().map(|(k, _)| k.chars().collect()).collect();
        assert_eq!(keys, ["a", "b", "de"]);
        assert_eq!(v.members().nth(1).unwrap().1.raw(), br#"{"c":[2]}"#);
        assert_eq!(parse(b"[1]").unwrap().members().count(), 0);
    }

    /// Everything lookups see of `v`, depth first: recorded and scanned values must agree.
    fn walk(v: Value, out: &mut Vec<Vec<u8>>) {
        out.push(v.raw().to_vec());
        for (key, member) in v.members() {
            out.push(key.escaped().to_vec());
            walk(member, out);
        }
        v.items().for_each(|item| walk(item, out));
    }

    #[test]
    fn recorded_lookups_are_what_a_scan_finds() {
        let members = |n: usize| (0..n).map(|i| format!("\"k{i}\" : [{i}, {{\"x\":[]}}]")).collect::<Vec<_>>().join(" ,\n");
        // Tapes that hold the document, that run out inside it, or that run out inside its first member.
        let (fits, overflows) = (format!("{{{}}}", members(10)), format!("{{{}}}", members(40)));
        let deep = format!("[{}1{}, 2]", "[".repeat(60), "]".repeat(60));
        let wide = format!("[[{}], {{\"a\\\"b\" : \"c\\\\\", \"d\": [ ] }} ]", vec!["0"; 200].join(","));
        for text in [&fits, &overflows, &deep, &wide, r#"{"a":1,"a":{"b":2}}"#, "{}", " { } ", "[1]", "\"s\"", r#" {"x\u0041" : "y" } "#] {
            let (mut recorded, mut scanned) = (Vec::new(), Vec::new());
            walk(parse(text.as_bytes()).unwrap(), &mut recorded);
            walk(unrecorded(text.as_bytes()).unwrap(), &mut scanned);
            assert_eq!(recorded, scanned, "{text}");
        }
        let doc = parse(fits.as_bytes()).unwrap();
        assert!(!doc.tape.is_empty());
        assert_eq!(doc.members().count(), 10);
        assert_eq!(doc.get("k9").unwrap().raw(), br#"[9, {"x":[]}]"#);
        assert!(doc.get("a").is_none());
        assert!(parse(overflows.as_bytes()).unwrap().tape.is_empty());
        assert!(parse(wide.as_bytes()).unwrap().tape.is_empty());
        // The tape is reused: a document recorded after a bigger one sees only its own entries.
        let mut tape = Tape::default();
        assert!(Value::parse(fits.as_bytes(), &mut tape).is_some());
        let small = Value::parse(br#"{"k0":[5]}"#, &mut tape).unwrap();
        assert_eq!((small.tape.len(), small.members().count()), (4, 1));
        assert_eq!(small.get("k0").unwrap().first().unwrap().raw(), b"5");
    }

    #[test]
    fn an_object_root_counts_toward_the_depth_limit() {
        let nest = |n: usize| format!("{{\"a\":{}{}}}", "[".repeat(n - 1), "]".repeat(n - 1));
        assert!(parse(nest(MAX_DEPTH as usize).as_bytes()).is_some());
        assert!(parse(nest(MAX_DEPTH as usize + 1).as_bytes()).is_none());
    }

    #[test]
    fn numbers_out_of_range_are_none() {
        assert_eq!(parse(b"99999999999999999999999").unwrap().as_u64(), None);
        assert_eq!(parse(b"-1").unwrap().as_u64(), None);
        assert_eq!(parse(b"1.5").unwrap().as_u64(), None);
    }

    #[test]
    fn lone_surrogate_becomes_replacement() {
        assert_eq!(text(parse(br#""\ud800x""#).unwrap()), "\u{FFFD}x");
    }
}

