//! The validator: checks a document's bytes iteratively, recording its values on a tape as it goes.

use super::string::{hex4, Str};
use super::tape::Entry;
use crate::scan;

/// Deepest nesting accepted; deeper documents are treated as malformed.
pub const MAX_DEPTH: u32 = 64;

/// Past the whitespace at `pos`. Inlined in the validator, the usual case (none: compact JSON) is one
/// comparison; the loop is one copy for its four sites. Where speed matters less (once a document, an
/// unrecorded container's lookups) the loop is called directly.
#[inline(always)]
fn skip_ws(bytes: &[u8], pos: usize) -> usize {
    if bytes.get(pos).is_some_and(|&b| b > b' ') {
        return pos;
    }
    skip_ws_loop(bytes, pos)
}

#[inline(never)]
pub(super) fn skip_ws_loop(bytes: &[u8], mut pos: usize) -> usize {
    while matches!(bytes.get(pos), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        pos += 1;
    }
    pos
}

/// Checks `bytes` as one JSON document, recording its values on `tape`. Returns where its root starts and
/// ends and how many entries it filled.
pub(super) fn check(bytes: &[u8], tape: &mut [Entry]) -> Option<(usize, usize, usize)> {
    // Offsets are u32: a longer document (never an event, which the framer caps) is not recorded.
    let room = if u32::try_from(bytes.len()).is_ok() { tape.len() } else { 0 };
    // Once a document: the whitespace loop without `skip_ws`'s inline test.
    let start = skip_ws_loop(bytes, 0);
    let (end, len) = validate(bytes, start, tape.get_mut(..room).unwrap_or_default())?;
    (skip_ws_loop(bytes, end) == bytes.len()).then_some((start, end, len))
}

/// The JSON string that opens at `at` in `bytes` (with its `"`), checked, and where it ends (past its
/// closing `"`); `None` when none does. O(its length).
pub fn string_at(bytes: &[u8], at: usize) -> Option<(Str<'_>, usize)> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let (end, _) = validate(bytes, at, &mut [])?;
    Some((Str { escaped: bytes.get(at + 1..end - 1)? }, end))
}

/// Checks that a JSON value starts at `from` and returns where it ends and how many entries of `tape` it
/// filled: all its values and keys in document order, or none if they do not all fit.
/// Iterative: containers are tracked with a bit stack (1 = object), so depth costs one bit, not a
/// stack frame.
#[inline(never)] // parsing, and finding values' ends in unrecorded documents, share one copy
pub(super) fn validate(bytes: &[u8], from: usize, tape: &mut [Entry]) -> Option<(usize, usize)> {
    let (mut i, mut containers, mut depth, mut at_key) = (from, 0u64, 0u32, false);
    let mut tape = Recorder { tape, len: 0, open: 0 };
    loop {
        i = skip_ws(bytes, i);
        let start = i;
        match *bytes.get(i)? {
            // Keys and string values share this one site, so that the string check is inlined once.
            b'"' => {
                i = validate_string(bytes, i)?;
                tape.push(start, i);
                if at_key {
                    // `"key" :` before a member's value.
                    i = skip_ws(bytes, i);
                    if bytes.get(i) != Some(&b':') {
                        return None;
                    }
                    i += 1;
                    at_key = false;
                    continue;
                }
            }
            _ if at_key => return None,
            open @ (b'{' | b'[') => {
                if depth == MAX_DEPTH {
                    return None;
                }
                containers = (containers << 1) | u64::from(open == b'{');
                depth += 1;
                tape.open(i);
                i = skip_ws(bytes, i + 1);
                // Empty: the loop below closes it (and rejects `{]` and `[}`), as after a last value.
                if !matches!(bytes.get(i), Some(b'}' | b']')) {
                    at_key = open == b'{';
                    continue;
                }
            }
            first => {
                i = match first {
                    b't' => literal(bytes, i, b"true")?,
                    b'f' => literal(bytes, i, b"false")?,
                    b'n' => literal(bytes, i, b"null")?,
                    _ => validate_number(bytes, i)?,
                };
                tape.push(start, i);
            }
        }
        // After a value: close containers or move to the next member.
        loop {
            if depth == 0 {
                return Some((i, tape.filled()));
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
            tape.close(i);
        }
    }
}

/// Fills a tape while [`validate`] checks: values and keys in document order. When one does not fit,
/// `len` passes the tape's length and the tape is not used (entries from then on are not kept right).
struct Recorder<'t> {
    tape: &'t mut [Entry],
    len: usize,
    /// The innermost open container; its entry's `span` holds the next one out until it closes.
    open: usize,
}

impl Recorder<'_> {
    /// Records a value or key at `start..end` that has no contents.
    #[inline(always)]
    fn push(&mut self, start: usize, end: usize) {
        if let Some(slot) = self.tape.get_mut(self.len) {
            // Offsets fit in u32: `parse_into` gives no tape for longer documents.
            *slot = Entry { start: start as u32, end: end as u32, span: 1 };
        }
        self.len += 1;
    }

    /// A container opens at `start`.
    fn open(&mut self, start: usize) {
        let outer = self.open;
        self.open = self.len;
        self.push(start, start);
        if let Some(entry) = self.tape.get_mut(self.open) {
            entry.span = outer as u32;
        }
    }

    /// The innermost open container closes, just before `end`.
    fn close(&mut self, end: usize) {
        let at = self.open;
        if let Some(entry) = self.tape.get_mut(at) {
            self.open = entry.span as usize;
            *entry = Entry { start: entry.start, end: end as u32, span: (self.len - at) as u32 };
        }
    }

    /// How many entries the tape holds: all that were recorded, or none if some did not fit.
    fn filled(&self) -> usize {
        if self.len <= self.tape.len() { self.len } else { 0 }
    }
}

/// End of the string starting at `pos` (which holds `"`), just past the closing quote, if it is well
/// formed.
#[inline(always)] // one call site, in the validator's loop: saves a call per string
fn validate_string(bytes: &[u8], pos: usize) -> Option<usize> {
    let mut i = pos + 1;
    loop {
        i = scan::find(bytes, i, scan::string_stop)?;
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
    // Where the digits from `i` end, if there is at least one.
    let digits = |i: usize| {
        let mut end = i;
        while bytes.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
        (end > i).then_some(end)
    };
    let int = pos + usize::from(bytes.get(pos) == Some(&b'-'));
    let mut i = digits(int)?;
    if i - int > 1 && bytes.get(int) == Some(&b'0') {
        return None;
    }
    if bytes.get(i) == Some(&b'.') {
        i = digits(i + 1)?;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i = digits(i + 1 + usize::from(matches!(bytes.get(i + 1), Some(b'+' | b'-'))))?;
    }
    Some(i)
}
