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

/// Flags the bytes of `word` below `n` (`n` at most 0x80).
#[inline(always)]
pub fn below(word: u64, n: u8) -> u64 {
    word.wrapping_sub(ONES * u64::from(n)) & !word & HIGHS
}

/// Flags the bytes of `word` equal to `byte`.
#[inline(always)]
pub fn equal(word: u64, byte: u8) -> u64 {
    below(word ^ (ONES * u64::from(byte)), 1)
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
                let found = find(slice, from, |w| equal(w, b'"') | equal(w, b'\\') | below(w, 0x20));
                assert_eq!(found, expected, "from {from} end {end}");
            }
        }
        assert_eq!(find(b"ab", 3, |w| equal(w, b'a')), None);
    }

    #[test]
    fn borrows_do_not_hide_or_invent_the_first_match() {
        // 0x01 above a 0x00 is a false flag of the zero test: it must not come first.
        assert_eq!(find(&[5, 0, 1, 9, 9, 9, 9, 9, 9], 0, |w| equal(w, 0)), Some(1));
        assert_eq!(find(&[1, 0, 0, 0, 0, 0, 0, 0, 0], 0, |w| equal(w, 0)), Some(1));
        assert_eq!(find(&[0x80, 0xFF, 0x21, 0x20, 0x1F, 9, 9, 9, 9], 0, |w| below(w, 0x20)), Some(4));
        assert_eq!(find(&[0x80, 0xFF, 0x21, 0x20, 0x1F], 0, |w| below(w, 0x20)), Some(4));
    }
}
