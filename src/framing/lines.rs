//! Newline-delimited framing, for NDJSON (Ollama) and the AI SDK v4 `TYPE:JSON` data stream.
//!
//! Lines end with LF; a CR before it is dropped, blank lines are skipped. A final line without its LF
//! is taken by [`LineSplitter::finish`]. O(n) in the bytes pushed; lines inside one chunk are not copied.

use super::{CappedBuf, DEFAULT_CAP};

/// Incremental line splitter. Memory is bounded by its cap.
#[derive(Clone, Debug)]
pub struct LineSplitter {
    line: CappedBuf,
    oversize_dropped: u32,
}

impl Default for LineSplitter {
    fn default() -> Self {
        Self::with_cap(DEFAULT_CAP)
    }
}

impl LineSplitter {
    /// A splitter that drops any line larger than `cap` bytes.
    pub fn with_cap(cap: usize) -> Self {
        LineSplitter { line: CappedBuf::new(cap), oversize_dropped: 0 }
    }

    /// Feeds the next chunk, calling `on_line` for every complete, non-blank line.
    pub fn push(&mut self, chunk: &[u8], on_line: &mut impl FnMut(&[u8])) {
        let mut rest = chunk;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            let (line, tail) = rest.split_at(end);
            if self.line.is_empty() {
                emit(line, on_line);
            } else {
                self.line.extend(line);
                self.take_buffered(on_line);
            }
            rest = tail.get(1..).unwrap_or_default();
        }
        self.line.extend(rest);
    }

    /// Ends the stream; a last line without its LF is emitted, as if the stream had ended with one.
    /// Returns whether there was one (an oversize one is dropped and counted instead). `stream::Framer`
    /// ends its splitter the same way.
    pub fn finish(&mut self, on_line: &mut impl FnMut(&[u8])) -> bool {
        let mut emitted = false;
        self.push(b"\n", &mut |line| {
            emitted = true;
            on_line(line);
        });
        emitted
    }

    /// How many lines were dropped for being larger than the cap.
    pub fn oversize_dropped(&self) -> u32 {
        self.oversize_dropped
    }

    fn take_buffered(&mut self, on_line: &mut impl FnMut(&[u8])) {
        if self.line.overflowed() {
            self.oversize_dropped = self.oversize_dropped.saturating_add(1);
        } else {
            emit(self.line.as_slice(), on_line);
        }
        self.line.clear();
    }
}

fn emit(line: &[u8], on_line: &mut impl FnMut(&[u8])) {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if !is_blank(line) {
        on_line(line);
    }
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_lines_across_chunks_and_skips_blank_ones() {
        let mut splitter = LineSplitter::default();
        let mut lines = Vec::new();
        let mut collect = |l: &[u8]| lines.push(l.to_vec());
        splitter.push(b"{\"a\":1}\r\n\n{\"b\"", &mut collect);
        splitter.push(b":2}\n{\"c\":3}", &mut collect);
        assert!(splitter.finish(&mut collect));
        assert_eq!(lines, vec![b"{\"a\":1}".to_vec(), b"{\"b\":2}".to_vec(), b"{\"c\":3}".to_vec()]);
    }

    #[test]
    fn oversize_lines_are_dropped_and_counted() {
        let mut splitter = LineSplitter::with_cap(4);
        let mut lines = Vec::new();
        let mut collect = |l: &[u8]| lines.push(l.to_vec());
        splitter.push(b"ab\n1234", &mut collect);
        splitter.push(b"5678\ncd\n", &mut collect);
        assert!(!splitter.finish(&mut collect));
        assert_eq!(lines, vec![b"ab".to_vec(), b"cd".to_vec()]);
        assert_eq!(splitter.oversize_dropped(), 1);
    }
}
