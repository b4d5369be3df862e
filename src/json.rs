//! Zero-allocation JSON reading: check a document once, then look values up in its raw bytes.
//!
//! Decoders only need a handful of fields from each event, so instead of building a tree this module
//! validates the bytes iteratively (a nesting bomb costs a counter, not stack) and then finds fields by
//! scanning. The top-level members of an object, where most lookups start, are noted while validating
//! ([`Doc`]), so finding them costs no second scan. Every function is total: any input gives an
//! answer, none panics.

use crate::{scan, utf8};
use core::ops::Range;

/// Deepest nesting accepted; deeper documents are treated as malformed.
pub const MAX_DEPTH: u32 = 64;

/// How many top-level members a [`Doc`] indexes; the rest (rare: events have about ten) are scanned.
const INDEXED: usize = 16;

/// A parsed document: its root value and, if that is an object, its first [`INDEXED`] members, noted
/// while validating. The decoders' lookups start here.
#[derive(Clone, Debug)]
pub struct Doc<'a> {
    root: Value<'a>,
    members: [(Str<'a>, Value<'a>); INDEXED],
    indexed: usize,
    /// Where the members past the index start in `root.raw` (`usize::MAX`, past any end, when none).
    rest: usize,
}

/// A well-formed JSON value as a slice of the document it came from.
#[derive(Clone, Copy, Debug)]
pub struct Value<'a> {
    raw: &'a [u8],
}

/// The contents of a JSON string, still escaped: [`Str::chars`] decodes them lazily.
#[derive(Clone, Copy, Debug)]
pub struct Str<'a> {
    escaped: &'a [u8],
}

impl<'a> Doc<'a> {
    /// Parses `bytes` as one JSON document (surrounding whitespace allowed).
    ///
    /// Returns `None` for anything malformed or nested deeper than [`MAX_DEPTH`]. O(n) time, O(1) memory.
    pub fn parse(bytes: &'a [u8]) -> Option<Doc<'a>> {
        let empty = (Str { escaped: &[] }, Value { raw: &[] });
        let mut doc = Doc { root: empty.1, members: [empty; INDEXED], indexed: 0, rest: usize::MAX };
        let start = skip_ws(bytes, 0);
        let end = validate_value(bytes, start, |key, value| {
            if let Some(slot) = doc.members.get_mut(doc.indexed) {
                *slot = (Str { escaped: bytes.get(key).unwrap_or_default() }, Value { raw: bytes.get(value).unwrap_or_default() });
                doc.indexed += 1;
            } else if doc.rest == usize::MAX {
                doc.rest = key.start - 1 - start; // its opening quote
            }
        })?;
        if skip_ws(bytes, end) != bytes.len() {
            return None;
        }
        doc.root = Value { raw: bytes.get(start..end)? };
        Some(doc)
    }

    /// The root value.
    pub fn root(&self) -> Value<'a> {
        self.root
    }

    /// The top-level members, as [`Value::members`] gives them, without scanning the indexed ones.
    pub fn members(&self) -> Members<'_> {
        Members { noted: self.members.get(..self.indexed).unwrap_or_default(), raw: self.root.raw, pos: self.rest }
    }

    /// The top-level member `key`, as [`Value::get`] finds it. O(members), no scan of the indexed ones.
    #[inline(never)] // called from many places: one copy keeps the wasm small
    pub fn get(&self, key: &str) -> Option<Value<'_>> {
        self.members().get(key)
    }
}

impl<'a> Value<'a> {
    /// Parses `bytes` as one JSON document: the root of [`Doc::parse`].
    pub fn parse(bytes: &'a [u8]) -> Option<Value<'a>> {
        Doc::parse(bytes).map(|doc| doc.root)
    }

    /// The value's bytes exactly as they appear in the document.
    pub fn raw(self) -> &'a [u8] {
        self.raw
    }

    /// The member `key` of an object; `None` if this is not an object or has no such member.
    ///
    /// Keys are compared after unescaping. O(size of the object).
    pub fn get(self, key: &str) -> Option<Value<'a>> {
        self.members().get(key)
    }

    /// The members of an object as `(key, value)` pairs, in document order (none if not an object).
    ///
    /// One pass over the object: decoders that want several members read them all in one loop
    /// instead of one scan per [`Value::get`]. O(size of the object) in all.
    pub fn members(self) -> Members<'a> {
        let pos = if self.raw.first() == Some(&b'{') { skip_ws(self.raw, 1) } else { self.raw.len() };
        Members { noted: &[], raw: self.raw, pos }
    }

    /// Follows a chain of object members: `v.path(&["a", "b"])` is `v.get("a")?.get("b")`.
    pub fn path(self, keys: &[&str]) -> Option<Value<'a>> {
        keys.iter().try_fold(self, |value, key| value.get(key))
    }

    /// The elements of an array (none if this is not an array).
    pub fn items(self) -> Items<'a> {
        let pos = if self.raw.first() == Some(&b'[') { skip_ws(self.raw, 1) } else { self.raw.len() };
        Items { raw: self.raw, pos }
    }

    /// The first element of an array.
    pub fn first(self) -> Option<Value<'a>> {
        self.items().next()
    }

    /// The string this value holds, if it is a string.
    pub fn as_str(self) -> Option<Str<'a>> {
        if self.raw.first() != Some(&b'"') || self.raw.len() < 2 {
            return None;
        }
        Some(Str { escaped: self.raw.get(1..self.raw.len() - 1)? })
    }

    /// A non-negative integer (`12`, also `12.0`); `None` for other values or above `u64::MAX`.
    pub fn as_u64(self) -> Option<u64> {
        let mut total: u64 = 0;
        let mut digits = 0;
        for (i, &b) in self.raw.iter().enumerate() {
            match b {
                b'0'..=b'9' => {
                    total = total.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
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

    /// `Some(true)` / `Some(false)` for the JSON literals, `None` otherwise.
    pub fn as_bool(self) -> Option<bool> {
        match self.raw {
            b"true" => Some(true),
            b"false" => Some(false),
            _ => None,
        }
    }

    /// Whether this is the literal `null`.
    pub fn is_null(self) -> bool {
        self.raw == b"null"
    }

    /// Whether this is an object or array with no members, or an empty string.
    pub fn is_empty(self) -> bool {
        match self.raw.first() {
            Some(b'{') => self.raw.get(1..).is_some_and(|r| skip_ws(r, 0) == r.len() - 1),
            Some(b'[') => self.items().next().is_none(),
            Some(b'"') => self.raw.len() == 2,
            _ => false,
        }
    }
}

/// Iterator over the members of a JSON object: those a [`Doc`] noted, then the rest, found by scanning.
pub struct Members<'a> {
    noted: &'a [(Str<'a>, Value<'a>)],
    raw: &'a [u8],
    pos: usize,
}

impl<'a> Members<'a> {
    /// The value of the first member named `key`. One function for every lookup keeps the wasm small.
    fn get(mut self, key: &str) -> Option<Value<'a>> {
        self.find(|(name, _)| name.eq_str(key)).map(|(_, value)| value)
    }
}

impl<'a> Iterator for Members<'a> {
    type Item = (Str<'a>, Value<'a>);

    fn next(&mut self) -> Option<(Str<'a>, Value<'a>)> {
        if let Some((&first, rest)) = self.noted.split_first() {
            self.noted = rest;
            return Some(first);
        }
        if self.raw.get(self.pos) != Some(&b'"') {
            return None;
        }
        let key_end = skip_string(self.raw, self.pos)?;
        let key = Str { escaped: self.raw.get(self.pos + 1..key_end - 1)? };
        let value_start = skip_ws(self.raw, skip_ws(self.raw, key_end) + 1);
        let value_end = skip_value(self.raw, value_start)?;
        let after = skip_ws(self.raw, value_end);
        self.pos = if self.raw.get(after) == Some(&b',') { skip_ws(self.raw, after + 1) } else { self.raw.len() };
        Some((key, Value { raw: self.raw.get(value_start..value_end)? }))
    }
}

/// Iterator over the elements of a JSON array.
pub struct Items<'a> {
    raw: &'a [u8],
    pos: usize,
}

impl<'a> Iterator for Items<'a> {
    type Item = Value<'a>;

    fn next(&mut self) -> Option<Value<'a>> {
        let start = self.pos;
        if matches!(self.raw.get(start), None | Some(b']')) {
            return None;
        }
        let end = skip_value(self.raw, start)?;
        let after = skip_ws(self.raw, end);
        self.pos = if self.raw.get(after) == Some(&b',') { skip_ws(self.raw, after + 1) } else { self.raw.len() };
        Some(Value { raw: self.raw.get(start..end)? })
    }
}

impl<'a> Str<'a> {
    /// Whether the string has no characters.
    pub fn is_empty(self) -> bool {
        self.escaped.is_empty()
    }

    /// The decoded characters. Invalid UTF-8 and lone surrogates come out as U+FFFD.
    pub fn chars(self) -> StrChars<'a> {
        StrChars { escaped: self.escaped, pos: 0 }
    }

    /// Whether the decoded string equals `text`. O(len).
    pub fn eq_str(self, text: &str) -> bool {
        if !self.escaped.contains(&b'\\') {
            return self.escaped == text.as_bytes();
        }
        self.chars().eq(text.chars())
    }

    /// The still-escaped bytes between the quotes.
    pub fn escaped(self) -> &'a [u8] {
        self.escaped
    }
}

/// Iterator over the decoded characters of a JSON string.
pub struct StrChars<'a> {
    escaped: &'a [u8],
    pos: usize,
}

impl Iterator for StrChars<'_> {
    type Item = char;

    fn next(&mut self) -> Option<char> {
        let b = *self.escaped.get(self.pos)?;
        if b != b'\\' {
            return Some(utf8::decode_at(self.escaped, &mut self.pos));
        }
        let code = *self.escaped.get(self.pos + 1)?;
        self.pos += 2;
        Some(match code {
            b'n' => '\n',
            b't' => '\t',
            b'r' => '\r',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'u' => self.unicode_escape(),
            other => char::from(other),
        })
    }
}

impl StrChars<'_> {
    /// Decodes the `XXXX` of `\uXXXX` (cursor just after the `u`), joining a surrogate pair.
    fn unicode_escape(&mut self) -> char {
        let Some(high) = hex4(self.escaped, self.pos) else { return char::REPLACEMENT_CHARACTER };
        self.pos += 4;
        if (0xD800..0xDC00).contains(&high) && self.escaped.get(self.pos..self.pos + 2) == Some(b"\\u") {
            if let Some(low @ 0xDC00..=0xDFFF) = hex4(self.escaped, self.pos + 2) {
                self.pos += 6;
                return char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
                    .unwrap_or(char::REPLACEMENT_CHARACTER);
            }
        }
        char::from_u32(high).unwrap_or(char::REPLACEMENT_CHARACTER)
    }
}

fn hex4(bytes: &[u8], pos: usize) -> Option<u32> {
    bytes.get(pos..pos + 4)?.iter().try_fold(0u32, |acc, &b| Some(acc * 16 + char::from(b).to_digit(16)?))
}

fn skip_ws(bytes: &[u8], mut pos: usize) -> usize {
    while matches!(bytes.get(pos), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        pos += 1;
    }
    pos
}

/// End of an already validated value starting at `pos`.
fn skip_value(bytes: &[u8], pos: usize) -> Option<usize> {
    match *bytes.get(pos)? {
        b'"' => skip_string(bytes, pos),
        b'{' | b'[' => {
            let mut depth = 0u32;
            let mut i = pos;
            loop {
                match *bytes.get(i)? {
                    b'"' => {
                        i = skip_string(bytes, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let len = bytes.get(pos..)?.iter().position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'));
            Some(pos + len.unwrap_or(bytes.len() - pos))
        }
    }
}

/// Checks the value starting at `pos` and returns its end. If it is an object, `on_member` gets the
/// position of each member's key (between the quotes) and value as it is checked. Iterative: containers
/// are tracked with a bit stack (1 = object), so depth costs one bit, not a stack frame.
fn validate_value(bytes: &[u8], pos: usize, mut on_member: impl FnMut(Range<usize>, Range<usize>)) -> Option<usize> {
    let mut containers: u64 = 0;
    let mut depth: u32 = 0;
    let mut i = pos;
    let mut at_key = false;
    // The top-level member being checked.
    let mut key = 0..0;
    let mut value_start = 0;
    loop {
        i = skip_ws(bytes, i);
        if at_key {
            // `"key" :` before a member's value.
            if bytes.get(i) != Some(&b'"') {
                return None;
            }
            let key_end = validate_string(bytes, i)?;
            let colon = skip_ws(bytes, key_end);
            if bytes.get(colon) != Some(&b':') {
                return None;
            }
            if depth == 1 {
                key = i + 1..key_end - 1;
            }
            i = skip_ws(bytes, colon + 1);
        }
        // At a value.
        if depth == 1 {
            value_start = i;
        }
        match *bytes.get(i)? {
            open @ (b'{' | b'[') => {
                if depth == MAX_DEPTH {
                    return None;
                }
                containers = (containers << 1) | u64::from(open == b'{');
                depth += 1;
                i = skip_ws(bytes, i + 1);
                let close = if open == b'{' { b'}' } else { b']' };
                if bytes.get(i) != Some(&close) {
                    at_key = open == b'{';
                    continue;
                }
                depth -= 1;
                containers >>= 1;
                i += 1;
            }
            b'"' => i = validate_string(bytes, i)?,
            b't' => i = literal(bytes, i, b"true")?,
            b'f' => i = literal(bytes, i, b"false")?,
            b'n' => i = literal(bytes, i, b"null")?,
            _ => i = validate_number(bytes, i)?,
        }
        // After a value: close containers or move to the next member.
        loop {
            if depth == 1 && containers & 1 == 1 {
                on_member(key.clone(), value_start..i);
            }
            if depth == 0 {
                return Some(i);
            }
            i = skip_ws(bytes, i);
            let in_object = containers & 1 == 1;
            match *bytes.get(i)? {
                b',' => {
                    i += 1;
                    at_key = in_object;
                    break;
                }
                b'}' if in_object => {}
                b']' if !in_object => {}
                _ => return None,
            }
            depth -= 1;
            containers >>= 1;
            i += 1;
        }
    }
}

/// End of the string starting at `pos` (which holds `"`), just past the closing quote, in checked input.
fn skip_string(bytes: &[u8], pos: usize) -> Option<usize> {
    let mut i = pos + 1;
    loop {
        // Strings are most of an event's bytes: jump to the next quote or backslash a word at a time.
        i = scan::find(bytes, i, |w| scan::equal(w, b'"') | scan::equal(w, b'\\'))?;
        if bytes.get(i) == Some(&b'"') {
            return Some(i + 1);
        }
        i += 2;
    }
}

/// End of the string starting at `pos` (which holds `"`), just past the closing quote, if it is well
/// formed.
fn validate_string(bytes: &[u8], pos: usize) -> Option<usize> {
    let mut i = pos + 1;
    loop {
        i = scan::find(bytes, i, |w| scan::equal(w, b'"') | scan::equal(w, b'\\') | scan::below(w, 0x20))?;
        match *bytes.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => match *bytes.get(i + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                b'u' => {
                    hex4(bytes, i + 2)?;
                    i += 6;
                }
                _ => return None,
            },
            _ => return None, // a control character
        }
    }
}

fn literal(bytes: &[u8], pos: usize, word: &[u8]) -> Option<usize> {
    (bytes.get(pos..pos + word.len())? == word).then_some(pos + word.len())
}

fn validate_number(bytes: &[u8], pos: usize) -> Option<usize> {
    let digits = |i: usize| bytes.get(i..).map_or(0, |r| r.iter().take_while(|b| b.is_ascii_digit()).count());
    let mut i = pos + usize::from(bytes.get(pos) == Some(&b'-'));
    let int = digits(i);
    if int == 0 || (int > 1 && bytes.get(i) == Some(&b'0')) {
        return None;
    }
    i += int;
    if bytes.get(i) == Some(&b'.') {
        let frac = digits(i + 1);
        if frac == 0 {
            return None;
        }
        i += 1 + frac;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exp = digits(i);
        if exp == 0 {
            return None;
        }
        i += exp;
    }
    Some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(v: Value) -> String {
        v.as_str().unwrap().chars().collect()
    }

    #[test]
    fn accepts_and_rejects() {
        for good in [r#"{"a":[1,2.5e3,-0.1,true,false,null,"x"]}"#, "[]", "{}", " 0 ", r#""\u00e9""#, "[[[]]]"] {
            assert!(Value::parse(good.as_bytes()).is_some(), "{good}");
        }
        for bad in ["", "{", "[1,]", r#"{"a"}"#, r#"{"a":1,}"#, "01", "1.", "tru", "[1] x", "\"\u{1}\"", r#""\x""#, "{]"] {
            assert!(Value::parse(bad.as_bytes()).is_none(), "{bad}");
        }
    }

    #[test]
    fn nesting_bomb_is_rejected_without_recursion() {
        let bomb = "[".repeat(1_000_000);
        assert!(Value::parse(bomb.as_bytes()).is_none());
        let deep = "[".repeat(MAX_DEPTH as usize) + &"]".repeat(MAX_DEPTH as usize);
        assert!(Value::parse(deep.as_bytes()).is_some());
    }

    #[test]
    fn looks_up_paths_and_items() {
        let doc = r#"{"choices":[{"delta":{"content":"Hi \"you\" \ud83d\ude00 \u00e9"}},{"x":1}],"usage":{"n":12.0},"k\u0041":2}"#;
        let v = Value::parse(doc.as_bytes()).unwrap();
        let first = v.get("choices").unwrap().first().unwrap();
        assert_eq!(text(first.path(&["delta", "content"]).unwrap()), "Hi \"you\" 😀 é");
        assert_eq!(v.get("choices").unwrap().items().count(), 2);
        assert_eq!(v.path(&["usage", "n"]).unwrap().as_u64(), Some(12));
        assert_eq!(v.get("kA").unwrap().as_u64(), Some(2));
        assert!(v.get("missing").is_none());
    }

    #[test]
    fn members_in_one_pass() {
        let v = Value::parse(br#"{"a":1, "b" : {"c":[2]}, "d\u0065":"x"}"#).unwrap();
        let keys: Vec<String> = v.members().map(|(k, _)| k.chars().collect()).collect();
        assert_eq!(keys, ["a", "b", "de"]);
        assert_eq!(v.members().nth(1).unwrap().1.raw(), br#"{"c":[2]}"#);
        assert_eq!(Value::parse(b"[1]").unwrap().members().count(), 0);
    }

    #[test]
    fn doc_members_are_what_a_scan_finds() {
        let many: Vec<String> = (0..40).map(|i| format!("\"k{i}\" : [{i}]")).collect();
        let many = format!("{{{}}}", many.join(" ,\n"));
        for text in [many.as_str(), r#"{"a":1,"a":{"b":2}}"#, "{}", " { } ", "[1]", "\"s\"", r#" {"x\u0041" : "y" } "#] {
            let doc = Doc::parse(text.as_bytes()).unwrap();
            let pairs = |members: &mut dyn Iterator<Item = (Str, Value)>| members.map(|(k, v)| (k.escaped().to_vec(), v.raw().to_vec())).collect::<Vec<_>>();
            assert_eq!(pairs(&mut doc.members()), pairs(&mut doc.root().members()), "{text}");
        }
        let doc = Doc::parse(many.as_bytes()).unwrap();
        assert_eq!(doc.members().count(), 40);
        assert_eq!(doc.get("k39").unwrap().raw(), b"[39]");
        assert!(doc.get("a").is_none());
    }

    #[test]
    fn an_object_root_counts_toward_the_depth_limit() {
        let nest = |n: usize| format!("{{\"a\":{}{}}}", "[".repeat(n - 1), "]".repeat(n - 1));
        assert!(Value::parse(nest(MAX_DEPTH as usize).as_bytes()).is_some());
        assert!(Value::parse(nest(MAX_DEPTH as usize + 1).as_bytes()).is_none());
    }

    #[test]
    fn numbers_out_of_range_are_none() {
        assert_eq!(Value::parse(b"99999999999999999999999").unwrap().as_u64(), None);
        assert_eq!(Value::parse(b"-1").unwrap().as_u64(), None);
        assert_eq!(Value::parse(b"1.5").unwrap().as_u64(), None);
    }

    #[test]
    fn lone_surrogate_becomes_replacement() {
        assert_eq!(text(Value::parse(br#""\ud800x""#).unwrap()), "\u{FFFD}x");
    }
}
