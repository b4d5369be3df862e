//! A JSON string as it sits in the document, still escaped, and its characters decoded lazily.

use crate::utf8;

/// The contents of a JSON string, still escaped: [`Str::chars`] decodes them lazily.
#[derive(Clone, Copy, Debug)]
pub struct Str<'a> {
    pub(super) escaped: &'a [u8],
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

    /// Calls `f` with each decoded character, as [`Str::chars`] yields them. ASCII without escapes, most
    /// text, goes straight through without decoding. O(len).
    pub fn for_each_char(self, mut f: impl FnMut(char)) {
        let mut chars = self.chars();
        while let Some(&b) = chars.escaped.get(chars.pos) {
            if b.is_ascii() && b != b'\\' {
                chars.pos += 1;
                f(char::from(b));
            } else if let Some(c) = chars.next() {
                f(c);
            }
        }
    }

    /// Whether the decoded string equals `text`. O(len).
    ///
    /// Character by character, `text` decoded by the same decoder, without a first scan for escapes: the
    /// callers compare escaped bytes first ([`Str::is_key`], the stored model name), so this is the cold path.
    pub fn eq_str(self, text: &str) -> bool {
        let (text, mut at) = (text.as_bytes(), 0);
        self.chars().all(|c| at < text.len() && utf8::decode_at(text, &mut at) == c) && at == text.len()
    }

    /// Whether the decoded string is `key`, which is ASCII without `\` (as member names in decoders are):
    /// [`Str::eq_str`]'s answer, cheaper. An escape takes more bytes than the ASCII character it stands for,
    /// and a non-ASCII byte never decodes to ASCII, so a string as long as `key` is compared as bytes and
    /// only a longer one with a `\` is decoded. O(len).
    #[inline(always)] // in `get`'s loop; elsewhere through `eq_plain`, one copy
    pub(super) fn is_key(self, key: &str) -> bool {
        match self.escaped.len().cmp(&key.len()) {
            core::cmp::Ordering::Equal => self.escaped == key.as_bytes(),
            core::cmp::Ordering::Greater => has_backslash(self.escaped) && self.eq_str(key),
            core::cmp::Ordering::Less => false,
        }
    }

    /// Whether the decoded string is `text`, ASCII without `\` (as the JSON `type` values decoders match are):
    /// [`Str::is_key`], out of line. No scan for escapes in a string as long as `text` or shorter.
    #[inline(never)]
    pub fn eq_plain(self, text: &str) -> bool {
        self.is_key(text)
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

/// Whether `bytes` hold a `\`. A loop, not `contains` (which calls `memchr`, large in the wasm): the
/// strings searched are keys and short values.
fn has_backslash(bytes: &[u8]) -> bool {
    bytes.iter().any(|&b| b == b'\\')
}

pub(super) fn hex4(bytes: &[u8], pos: usize) -> Option<u32> {
    bytes.get(pos..pos + 4)?.iter().try_fold(0u32, |acc, &b| Some(acc * 16 + char::from(b).to_digit(16)?))
}
