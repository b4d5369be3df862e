//! Word-at-a-time byte search: eight bytes per step with plain 64-bit integer arithmetic ("SWAR"),
//! which wasm32 has natively, so no SIMD is needed. The hot loops of framing and JSON are searches for
//! the next of a few bytes (a line end, a quote or backslash); this costs about a quarter of the
//! instructions of a byte-by-byte loop.
//!
//! A mask function maps a little-endian word to the high bit of every byte that matches. The masks
//! below are exact for the lowest matching byte (a borrow can only flag bytes above it), and that is
//! the only one [`find`] reads; OR-ing masks keeps this.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Flags the bytes that stop a scan through a JSON string: `"`, `\` and control bytes (below 0x20).
/// `"` and the controls are one test: a byte XOR 2 is below 0x21 exactly for them (`"` becomes 0x20).
#[inline(always)]
pub fn string_stop(word: u64) -> u64 {
    ((word ^ (ONES * 2)).wrapping_sub(ONES * 0x21) | (word ^ (ONES * u64::from(b'\\'))).wrapping_sub(ONES)) & !word & HIGHS
}

/// Flags the bytes below 0x0E, which `\n` (0x0A) and `\r` (0x0D) are: one borrow test, where two targets
/// take two. The other bytes it flags (tabs, other controls) are rare in a line and checked by [`line_end`].
#[inline(always)]
fn below_cr(word: u64) -> u64 {
    word.wrapping_sub(ONES * 0x0E) & !word & HIGHS
}

/// Position of the first `\n` or `\r` in `bytes`, if any. O(length / 8).
#[inline(always)]
pub fn line_end(bytes: &[u8]) -> Option<usize> {
    let mut from = 0;
    loop {
        let at = find(bytes, from, below_cr)?;
        if matches!(bytes.get(at), Some(b'\n' | b'\r')) {
            return Some(at);
        }
        from = at + 1;
    }
}

/// Position of the first byte at or after `from` that `mask` flags, if any. O(distance / 8).
///
/// Inlined: with the mask's constants folded in, the loop is a dozen instructions per word.
#[inline(always)]
pub fn find(bytes: &[u8], from: usize, mask: impl Fn(u64) -> u64) -> Option<usize> {
    let mut at = from;
    let mut words = bytes.get(from..)?.chunks_exact(8);
    for word in &mut words {
        let flags = mask(u64::from_le_bytes(word.try_into().unwrap_or_default()));
        if flags != 0 {
            return Some(at + (flags.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    // The last 0–7 bytes one at a time, each as a word of its own (its byte 0).
    Some(at + words.remainder().iter().position(|&b| mask(u64::from(b)) & 0x80 != 0)?)
}

/// How many first bytes `a` and `b` have in common, counted in whole words: where the shorter one's last
/// 1–7 bytes are all that is left, they are not compared ([`same`] compares them as a word of their own).
/// O(that / 8).
pub fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let word = |bytes: &[u8]| u64::from_le_bytes(bytes.try_into().unwrap_or_default());
    let mut at = 0;
    // Thirty-two bytes a step while they last, one branch for the four words (the loop's own instructions
    // were half the cost at eight), then eight.
    let differ = |x: &[u8], y: &[u8], i: usize| word(&x[i..i + 8]) ^ word(&y[i..i + 8]);
    while let (Some(x), Some(y)) = (a.get(at..at + 32), b.get(at..at + 32)) {
        if differ(x, y, 0) | differ(x, y, 8) | differ(x, y, 16) | differ(x, y, 24) != 0 {
            break;
        }
        at += 32;
    }
    while let (Some(x), Some(y)) = (a.get(at..at + 8), b.get(at..at + 8)) {
        let differ = word(x) ^ word(y);
        if differ != 0 {
            return at + (differ.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    at
}

/// Whether `a` and `b` are the same bytes, compared a word at a time ([`common_prefix`], then the last
/// word, which may overlap the one before): `==` on slices is a call to a byte loop in the wasm. O(len / 8).
#[inline(never)] // two call sites: one copy
pub fn same(a: &[u8], b: &[u8]) -> bool {
    let len = a.len();
    match (a.get(len.wrapping_sub(8)..), b.get(len.wrapping_sub(8)..)) {
        (Some(x), Some(y)) if b.len() == len => common_prefix(a, b) + 8 > len && x == y,
        _ => a.iter().eq(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_match_at_any_offset_and_length() {
        let text = b"abc\x01d\"ef\\ghijklmnopqr\"stuvwxyz\n";
        let hit = |b: u8| b == b'"' || b == b'\\' || b < 0x20;
        for from in 0..=text.len() {
            for end in from..=text.len() {
                let slice = &text[..end];
                let expected = slice[from..].iter().position(|&b| hit(b)).map(|p| p + from);
                assert_eq!(find(slice, from, string_stop), expected, "from {from} end {end}");
                let line_end = slice[from..].iter().position(|&b| b == b'\n' || b == b'\r').map(|p| p + from);
                assert_eq!(super::line_end(&slice[from..]).map(|p| p + from), line_end, "from {from} end {end}");
            }
        }
        assert_eq!(find(b"ab", 3, string_stop), None);
        for (a, b) in [(&b"abcdefghijk"[..], &b"abcdefghijk"[..]), (b"abcdefghijk", b"abcdefghiXk"), (b"abcdefgh", b"abcdefghij"), (b"abcXefghij", b"abcdefghij"), (b"", b"a")] {
            let whole_words = a.len().min(b.len()) / 8 * 8;
            let expected = a.iter().zip(b).take_while(|(x, y)| x == y).count().min(whole_words);
            assert_eq!((common_prefix(a, b), common_prefix(b, a)), (expected, expected));
        }
        let text = b"abcdefghijklmnopqrstuvwxyz0123";
        for len in 0..=text.len() {
            for at in 0..len {
                let mut other = text[..len].to_vec();
                other[at] ^= 1;
                assert!(!same(&text[..len], &other) && !same(&other, &text[..len]), "{len} {at}");
            }
            assert!(same(&text[..len], &text[..len]) && (len == 0 || !same(&text[..len], &text[..len - 1])));
        }
    }

    #[test]
    fn borrows_do_not_hide_or_invent_the_first_match() {
        // A byte just above a match can be flagged by the borrow (0x0B after 0x0A, 0x21 after 0x00): it
        // must not come first.
        assert_eq!(line_end(&[5, b'\n', 0x0B, 9, 9, 9, 9, 9, 9]), Some(1));
        assert_eq!(find(&[0x41, 0, 0x21, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41], 0, string_stop), Some(1));
        assert_eq!(find(&[0x80, 0xFF, 0x21, 0x20, 0x1F, 9, 9, 9, 9], 0, string_stop), Some(4));
        assert_eq!(find(&[0x80, 0xFF, 0x21, 0x20, 0x1F], 0, string_stop), Some(4));
        // Every byte value, alone and after each other: the combined masks flag exactly their bytes.
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                let word = u64::from_le_bytes([a, b, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41]);
                let stop = |x: u8| x == b'"' || x == b'\\' || x < 0x20;
                let first = if stop(a) { Some(0) } else if stop(b) { Some(1) } else { None };
                assert_eq!(find(&word.to_le_bytes(), 0, string_stop), first, "{a:#x} {b:#x}");
                let eol = |x: u8| x == b'\n' || x == b'\r';
                let first = if eol(a) { Some(0) } else if eol(b) { Some(1) } else { None };
                assert_eq!(line_end(&word.to_le_bytes()), first, "{a:#x} {b:#x}");
            }
        }
    }
}
