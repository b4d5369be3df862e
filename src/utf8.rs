//! UTF-8 decoding that never fails: invalid sequences become U+FFFD, as the WHATWG decoder does, and a
//! character split across network chunks is joined by [`Utf8Stream`].

/// Decodes the character at `*pos` and advances past it. Invalid or truncated sequences yield U+FFFD and
/// advance one byte, so the caller always makes progress. `*pos` must be in bounds (else U+FFFD, no move).
///
/// Valid means what `core::str::from_utf8` accepts (no overlong forms, no surrogates, nothing past
/// U+10FFFF), checked by hand: the standard decoder's code is most of this function's size in the wasm.
pub fn decode_at(bytes: &[u8], pos: &mut usize) -> char {
    let Some(&lead) = bytes.get(*pos) else { return char::REPLACEMENT_CHARACTER };
    if lead.is_ascii() {
        // Most text is ASCII.
        *pos += 1;
        return char::from(lead);
    }
    // The continuation bytes the lead claims (an invalid lead claims none), then the value's range: not
    // overlong (three bytes from 2^11, four from 2^16; two-byte leads start at C2, past the overlong C0
    // and C1), not a surrogate nor past U+10FFFF (`char::from_u32`). Smaller in the wasm than the second
    // byte's range for each lead.
    let len = sequence_len(lead);
    let mut code = u32::from(lead) & (0x7F >> len);
    for k in 1..len {
        let b = bytes.get(*pos + k).copied().unwrap_or(0);
        if b & 0xC0 != 0x80 {
            break;
        }
        code = (code << 6) | u32::from(b & 0x3F);
        if k == len - 1 && code >> (5 * len - 4) != 0 {
            if let Some(c) = char::from_u32(code) {
                *pos += len;
                return c;
            }
        }
    }
    *pos += 1;
    char::REPLACEMENT_CHARACTER
}

/// The length a sequence starting with `lead` claims (1 for invalid leads, which then decode as U+FFFD).
fn sequence_len(lead: u8) -> usize {
    match lead {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => 1,
    }
}

/// `c` as UTF-8, in `buf`.
pub fn encode(c: char, buf: &mut [u8; 4]) -> &str {
    c.encode_utf8(buf)
}

/// Decodes a byte stream that arrives in pieces, holding back at most 3 bytes of an unfinished character.
#[derive(Clone, Debug, Default)]
pub struct Utf8Stream {
    pending: [u8; 4],
    pending_len: usize,
}

impl Utf8Stream {
    /// Feeds `bytes`, calling `emit` for each complete character. O(len), no allocation.
    pub fn push(&mut self, bytes: &[u8], mut emit: impl FnMut(char)) {
        let mut rest = bytes;
        while self.pending_len > 0 {
            let Some((&b, tail)) = rest.split_first() else { return };
            let need = sequence_len(self.pending[0]);
            if b & 0xC0 != 0x80 {
                // The pending sequence was cut short: it is invalid; decode `b` afresh.
                self.flush(&mut emit);
                break;
            }
            self.pending[self.pending_len] = b;
            self.pending_len += 1;
            rest = tail;
            if self.pending_len == need {
                self.flush(&mut emit);
            }
        }
        let mut pos = 0;
        while pos < rest.len() {
            let need = rest.get(pos).map_or(1, |&lead| sequence_len(lead));
            if pos + need > rest.len() && rest.get(pos + 1..).is_some_and(|t| t.iter().all(|b| b & 0xC0 == 0x80)) {
                let tail = rest.get(pos..).unwrap_or_default();
                self.pending[..tail.len()].copy_from_slice(tail);
                self.pending_len = tail.len();
                return;
            }
            emit(decode_at(rest, &mut pos));
        }
    }

    /// Emits whatever is held back (an unfinished character becomes U+FFFD per byte), as at end of stream.
    pub fn flush(&mut self, mut emit: impl FnMut(char)) {
        let held = self.pending;
        let len = core::mem::take(&mut self.pending_len);
        let mut pos = 0;
        while pos < len {
            emit(decode_at(&held[..len], &mut pos));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_split(bytes: &[u8], at: usize) -> String {
        let mut out = String::new();
        let mut stream = Utf8Stream::default();
        stream.push(&bytes[..at], |c| out.push(c));
        stream.push(&bytes[at..], |c| out.push(c));
        stream.flush(|c| out.push(c));
        out
    }

    #[test]
    fn joins_characters_split_anywhere() {
        let text = "a😀é中b";
        for at in 0..=text.len() {
            assert_eq!(decode_split(text.as_bytes(), at), text, "split at {at}");
        }
    }

    /// What `decode_at` did with the standard decoder: the reference for the hand-written checks.
    fn reference(bytes: &[u8], pos: &mut usize) -> char {
        let len = sequence_len(bytes[*pos]);
        match bytes.get(*pos..*pos + len).and_then(|seq| core::str::from_utf8(seq).ok()).and_then(|s| s.chars().next()) {
            Some(c) => {
                *pos += len;
                c
            }
            None => {
                *pos += 1;
                char::REPLACEMENT_CHARACTER
            }
        }
    }

    #[test]
    fn decodes_as_the_standard_decoder_does() {
        let check = |seq: &[u8]| {
            for end in 1..=seq.len() {
                let (mut a, mut b) = (0, 0);
                assert_eq!((decode_at(&seq[..end], &mut a), a), (reference(&seq[..end], &mut b), b), "{:x?}", &seq[..end]);
            }
        };
        // Every lead with every second byte, three-byte leads with every third, four-byte leads with edges.
        for lead in 0..=255u8 {
            for second in 0..=255u8 {
                check(&[lead, second, 0x80, 0x80]);
            }
        }
        for lead in 0xE0..=0xEFu8 {
            for second in 0..=255u8 {
                for third in 0..=255u8 {
                    check(&[lead, second, third]);
                }
            }
        }
        let edges = [0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF];
        for lead in 0xF0..=0xF7u8 {
            for second in 0x80..=0xC0u8 {
                for third in edges {
                    for fourth in edges {
                        check(&[lead, second, third, fourth]);
                    }
                }
            }
        }
    }

    #[test]
    fn invalid_bytes_become_replacement_characters() {
        assert_eq!(decode_split(b"a\xFFb\xF0\x9F", 2), "a\u{FFFD}b\u{FFFD}\u{FFFD}");
        assert_eq!(decode_split(b"\xE4\xB8x", 1), "\u{FFFD}\u{FFFD}x");
    }
}
