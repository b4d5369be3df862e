//! An incremental server-sent events parser that follows the WHATWG rules byte by byte.
//!
//! One leading UTF-8 BOM is stripped; lines end with CR, LF or CRLF (a CRLF split across chunks is one
//! line end); `:` lines are comments; a field without a colon has an empty value; one space after the
//! colon is removed; `data` lines are joined with `\n`; an event with an empty data buffer is not
//! dispatched. `id` and `retry` fields are ignored: they serve reconnection, which the meter never does
//! (keeping them was wasm code for nothing). Unlike the spec (which discards it), a final event without
//! the closing blank line is dispatched by [`SseParser::finish`], because LLM servers often omit that line.
//!
//! Bytes are never decoded here: fields are byte slices, so a UTF-8 character split across chunks is
//! rejoined for free. Cost is O(n) in the bytes pushed; complete lines inside one chunk are not copied.

use super::{CappedBuf, DEFAULT_CAP};
use crate::scan;

const BOM: &[u8; 3] = b"\xEF\xBB\xBF";

/// One dispatched event. An empty `event_type` means the default type, `message`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SseEvent<'a> {
    pub event_type: &'a [u8],
    pub data: &'a [u8],
}

/// Incremental SSE parser. Memory is bounded by about three times its cap.
#[derive(Clone, Debug)]
pub struct SseParser {
    line: CappedBuf,
    fields: EventFields,
    after_cr: bool,
    /// The BOM's bytes matched so far; its length once the BOM was matched or ruled out.
    bom_matched: usize,
}

/// The buffers of the event being built, kept apart from the line buffer so both can be borrowed.
#[derive(Clone, Debug)]
struct EventFields {
    data: CappedBuf,
    event_type: CappedBuf,
    oversize_dropped: u32,
}

impl Default for SseParser {
    fn default() -> Self {
        Self::with_cap(DEFAULT_CAP)
    }
}

impl SseParser {
    /// A parser that drops any line or event larger than `cap` bytes.
    pub fn with_cap(cap: usize) -> Self {
        SseParser {
            line: CappedBuf::new(cap),
            fields: EventFields {
                data: CappedBuf::new(cap),
                event_type: CappedBuf::new(cap),
                oversize_dropped: 0,
            },
            after_cr: false,
            bom_matched: 0,
        }
    }

    /// Feeds the next chunk, calling `on_event` for every event it completes. O(chunk length).
    pub fn push(&mut self, chunk: &[u8], on_event: &mut impl FnMut(SseEvent)) {
        let mut chunk = chunk;
        while self.bom_matched < BOM.len() {
            match chunk.split_first() {
                None => return,
                Some((&b, rest)) if b == BOM[self.bom_matched] => {
                    self.bom_matched += 1;
                    chunk = rest;
                }
                Some(_) => self.rule_out_bom(),
            }
        }
        self.push_lines(chunk, on_event);
    }

    /// Not a BOM after all: the bytes taken for one are content. None is a line end, so they only begin
    /// the line (as `push_lines` would take them, without its code a second time).
    fn rule_out_bom(&mut self) {
        self.line.extend(&BOM[..self.bom_matched]);
        self.bom_matched = BOM.len();
    }

    fn push_lines(&mut self, chunk: &[u8], on_event: &mut impl FnMut(SseEvent)) {
        let mut rest = chunk;
        if self.after_cr {
            self.after_cr = false;
            if let Some((b'\n', tail)) = rest.split_first() {
                rest = tail;
            }
        }
        while let Some(end) = scan::line_end(rest) {
            let (part, tail) = rest.split_at(end);
            // A line begun in an earlier chunk is completed in the line buffer.
            let buffered = !self.line.is_empty();
            if buffered {
                self.line.extend(part);
            }
            let line = if buffered { self.line.as_slice() } else { part };
            // The common event, one `data:` line and its blank line in this chunk: its data is handed on
            // from where the line is, not copied into the event buffer first.
            if let (Some(value), [b'\n', b'\n', after @ ..], false) = (line.strip_prefix(b"data:"), tail, self.line.overflowed()) {
                if self.fields.dispatch_whole(value.strip_prefix(b" ").unwrap_or(value), on_event) {
                    self.line.clear();
                    rest = after;
                    continue;
                }
            }
            if self.line.overflowed() {
                self.fields.drop_event();
            } else {
                self.fields.line(line, on_event);
            }
            self.line.clear();
            rest = match tail {
                [b'\r', b'\n', after @ ..] => after,
                [b'\r'] => {
                    self.after_cr = true;
                    &[]
                }
                [_, after @ ..] => after,
                [] => &[],
            };
        }
        // Most chunks end with a line end (one event a chunk): nothing to keep, no call.
        if !rest.is_empty() {
            self.line.extend(rest);
        }
    }

    /// Ends the stream: a last line without a line end is taken, and an event still open (no closing
    /// blank line) is dispatched, as if the stream had ended with the two line ends that end them (after
    /// a line end they are blank lines; after a CR the first completes the CRLF). Returns whether such an
    /// unterminated event was dispatched. `stream::Framer` ends its parser the same way.
    pub fn finish(&mut self, on_event: &mut impl FnMut(SseEvent)) -> bool {
        let mut dispatched = false;
        self.push(b"\n\n", &mut |event| {
            dispatched = true;
            on_event(event);
        });
        dispatched
    }

    /// How many events were dropped for being larger than the cap.
    pub fn oversize_dropped(&self) -> u32 {
        self.fields.oversize_dropped
    }
}

impl EventFields {
    /// Interprets one complete line (without its line end).
    fn line(&mut self, line: &[u8], on_event: &mut impl FnMut(SseEvent)) {
        if line.is_empty() {
            self.dispatch(on_event);
            return;
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(0) => return, // comment
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        // `==`, not byte-string patterns, which are compared byte by byte (larger wasm).
        if name == b"data" {
            self.data.extend(value);
            self.data.extend(b"\n");
        } else if name == b"event" {
            self.event_type.clear();
            self.event_type.extend(value);
        }
    }

    /// Marks the event being built as too large: it will be counted and dropped at dispatch.
    fn drop_event(&mut self) {
        self.data.mark_overflowed();
    }

    /// Dispatches an event whose one data line holds `data` as [`EventFields::line`] then [`EventFields::dispatch`]
    /// would, when nothing of it is buffered yet; returns false, doing nothing, otherwise. O(1).
    fn dispatch_whole(&mut self, data: &[u8], on_event: &mut impl FnMut(SseEvent)) -> bool {
        // Buffered, `data` and its `\n` would have to fit within the cap.
        if !self.data.is_empty() || data.len() >= self.data.cap || self.event_type.overflowed() {
            return false;
        }
        on_event(SseEvent { event_type: self.event_type.as_slice(), data });
        self.event_type.clear();
        true
    }

    /// Dispatches the event built so far, if any; returns whether it called `on_event`.
    fn dispatch(&mut self, on_event: &mut impl FnMut(SseEvent)) -> bool {
        let mut dispatched = false;
        if self.data.overflowed() || self.event_type.overflowed() {
            self.oversize_dropped = self.oversize_dropped.saturating_add(1);
        } else if let Some(data) = self.data.as_slice().strip_suffix(b"\n") {
            on_event(SseEvent { event_type: self.event_type.as_slice(), data });
            dispatched = true;
        }
        self.data.clear();
        self.event_type.clear();
        dispatched
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(chunks: &[&[u8]]) -> (Vec<(String, String)>, bool) {
        let mut parser = SseParser::default();
        let mut events = Vec::new();
        let mut collect = |e: SseEvent| {
            events.push((String::from_utf8_lossy(e.event_type).into_owned(), String::from_utf8_lossy(e.data).into_owned()))
        };
        for chunk in chunks {
            parser.push(chunk, &mut collect);
        }
        let unterminated = parser.finish(&mut collect);
        (events, unterminated)
    }

    fn ev(t: &str, d: &str) -> (String, String) {
        (t.into(), d.into())
    }

    #[test]
    fn whatwg_field_rules() {
        let (events, _) = parse(&[b"data\n\ndata:\ndata\n\n:comment\ndata: a\ndata:  b\nevent: x\nfoo: bar\n\n"]);
        assert_eq!(events, vec![ev("", ""), ev("", "\n"), ev("x", "a\n b")]);
    }

    #[test]
    fn empty_data_buffer_dispatches_nothing() {
        let (events, _) = parse(&[b"event: ping\n\n\n\nid: 1\n\n"]);
        assert!(events.is_empty());
    }

    #[test]
    fn line_ends_cr_lf_crlf_and_split_crlf() {
        let (events, _) = parse(&[b"data: a\r", b"\ndata: b\r\r", b"data: c\n\r\n"]);
        assert_eq!(events, vec![ev("", "a\nb"), ev("", "c")]);
        // "\r\r\n\n" is three line ends.
        let (events, _) = parse(&[b"data: x\r\r\n\n"]);
        assert_eq!(events, vec![ev("", "x")]);
    }

    #[test]
    fn bom_is_stripped_once_even_when_split() {
        let (events, _) = parse(&[b"\xEF", b"\xBB", b"\xBFdata: a\n\n\xEF\xBB\xBFdata: b\n\n"]);
        assert_eq!(events, vec![ev("", "a")]);
        assert_eq!(parse(&[b"\xEF\xBBdata"]).0.len(), 0);
    }

    #[test]
    fn id_and_retry_change_no_event() {
        let (events, _) = parse(&[b"id: 7\nretry: 3000\ndata: a\n\nid: 8\0\nretry: 1s\n\nevent: x\nid\ndata: b\nretry\n\n"]);
        assert_eq!(events, vec![ev("", "a"), ev("x", "b")]);
    }

    #[test]
    fn unterminated_last_event_is_flushed_and_reported() {
        assert_eq!(parse(&[b"data: a\n\ndata: b"]), (vec![ev("", "a"), ev("", "b")], true));
        assert_eq!(parse(&[b"data: a\n\n"]), (vec![ev("", "a")], false));
    }

    #[test]
    fn events_dispatched_from_the_chunk_are_those_buffered() {
        // Whole in one chunk, the common events skip the event buffer. Cut between the two line ends of each
        // `\n\n`, the lines are still whole in their chunks (not capped as lines), but every event is buffered.
        let text: &[u8] = b"data: abc\n\ndata: abcd\n\ndata:abc\n\nevent: longer\ndata: a\n\nevent: ab\ndata: a\n\ndata: a\ndata: b\n\ndata:\n\n";
        let run = |cap: usize, chunks: &mut dyn Iterator<Item = &[u8]>| {
            let mut parser = SseParser::with_cap(cap);
            let mut events = Vec::new();
            let mut collect = |e: SseEvent| events.push((String::from_utf8_lossy(e.event_type).into_owned(), String::from_utf8_lossy(e.data).into_owned()));
            chunks.for_each(|chunk| parser.push(chunk, &mut collect));
            parser.finish(&mut collect);
            (events, parser.oversize_dropped())
        };
        let whole = run(4, &mut [text].into_iter());
        assert_eq!(whole, run(4, &mut text.split_inclusive(|&b| b == b'\n')));
        assert_eq!(whole, (vec![ev("", "abc"), ev("", "abc"), ev("ab", "a"), ev("", "a\nb"), ev("", "")], 2));
        // Lines completed in the line buffer, then dispatched from it or not, whatever the cuts.
        let whole = run(DEFAULT_CAP, &mut [text].into_iter());
        for size in 1..text.len() {
            assert_eq!(whole, run(DEFAULT_CAP, &mut text.chunks(size)), "chunks of {size}");
        }
    }

    #[test]
    fn oversize_events_are_dropped_and_counted() {
        let mut parser = SseParser::with_cap(16);
        let mut events = Vec::new();
        let mut collect = |e: SseEvent| events.push(e.data.to_vec());
        parser.push(b"data: 0123456789abcdefXYZ\n\ndata: ok\n\n", &mut collect);
        parser.push(b"data: 0123456789", &mut collect);
        parser.push(b"abcdefXYZ\ndata: more\n\ndata: a\ndata: b\ndata: cdefghijklmn\n\n", &mut collect);
        assert_eq!(events, vec![b"ok".to_vec()]);
        assert_eq!(parser.oversize_dropped(), 3);
    }
}
