//! Events that repeat the last one but for their text. Most events of a stream are the same JSON but for
//! the one string they carry (an OpenAI chunk's `content`, an Anthropic `text_delta`'s `text`, an AI SDK
//! `text-delta`'s `delta`): when the last event's decoding told the sink nothing but that text (and what
//! it already knew: the model, a null finish reason), an event that differs from it only inside that
//! string tells it the same with the new text. Such an event is recognised by comparing its bytes before
//! and after the string with the last event's and checking the new string alone; it is neither parsed
//! nor walked. OpenAI's chunks end in random padding, `"obfuscation":"…"`, which no decoder reads: it
//! may differ too.

use super::{OutputKind, Text};
use crate::json::{self, Str};
use crate::scan;

/// The longest event a repeat is looked for after: its bytes are kept to compare the next event with.
const KEPT: usize = 512;

/// The member OpenAI ends its chunks with (padding against length side channels), up to its string.
const PADDING: &[u8] = b"\"obfuscation\":";

/// The last event's text, when it was all its decoding told the sink that was new, and where it was in
/// that event, which [`LastEvent`] keeps.
#[derive(Clone, Debug)]
struct Repeat {
    kind: OutputKind,
    /// Where the text's string opens and closes (its quotes) in the last event.
    open: usize,
    close: usize,
    /// Where the padding's string opens, when the event ended with it (else the event's end), and the
    /// event's length.
    padding: usize,
    len: usize,
}

impl Repeat {
    /// The text of `event` when it is the `last` event but for a non-empty text and its padding, both
    /// checked as JSON strings: then its decoding tells the sink what the last one's did, with this text.
    /// O(length of the event) at most; `None` otherwise.
    fn text<'a>(&self, event: &'a [u8], last: &[u8; KEPT]) -> Option<Str<'a>> {
        let last = last.get(..self.len)?;
        if !scan::same(event.get(..self.open)?, last.get(..self.open)?) {
            return None;
        }
        let (text, end) = json::string_at(event, self.open)?;
        // From the text's closing quote to the padding (or the end), the last event's bytes.
        let same = last.get(self.close..self.padding)?;
        let to = end - 1 + same.len();
        if !scan::same(event.get(end - 1..to)?, same) {
            return None;
        }
        let end = if self.padding < self.len { json::string_at(event, to)?.1 + 1 } else { to };
        (end == event.len() && event.get(end - 1) == last.last() && !text.is_empty()).then_some(text)
    }

    /// The repeat to look for after `event` was decoded, its sink told `outputs` outputs the last of which
    /// is `last`: when it was the one output, a string, and the event is short enough to keep. O(1), or
    /// O(the padding) when the event ends with it.
    fn after(event: &[u8], outputs: u64, last: Option<LastText>) -> Option<Repeat> {
        let LastText { kind, at, len } = last.filter(|_| outputs == 1 && event.len() <= KEPT)?;
        let open = at.checked_sub(event.as_ptr() as usize + 1)?;
        let close = open + 1 + len;
        let padding = padding(event).unwrap_or(event.len());
        Some(Repeat { kind, open, close, padding, len: event.len() })
    }
}

/// Where the string of the padding an event ends with opens: `"obfuscation":"…"}` with no quote in
/// between (the one `Repeat::text` checks as a string).
fn padding(event: &[u8]) -> Option<usize> {
    let quote = event.len().checked_sub(2).filter(|&at| event.get(at..) == Some(&b"\"}"[..]))?;
    let open = event.get(..quote)?.iter().rposition(|&b| b == b'"')?;
    (event.get(open.checked_sub(PADDING.len())?..open)? == PADDING).then_some(open)
}

/// The last event, when a repeat of it can be told from its bytes: where its text was, and its bytes.
/// Part of the [`super::Decoder`] a stream keeps.
#[derive(Clone, Debug)]
pub struct LastEvent {
    repeat: Option<Repeat>,
    /// The bytes of the event `repeat` was found in (its length is `repeat`'s).
    bytes: [u8; KEPT],
}

impl Default for LastEvent {
    fn default() -> Self {
        LastEvent { repeat: None, bytes: [0; KEPT] }
    }
}

impl LastEvent {
    /// The text of `event` when it repeats the last one (see [`Repeat::text`]), with its kind.
    pub(super) fn repeated<'a>(&self, event: &'a [u8]) -> Option<(OutputKind, Str<'a>)> {
        let repeat = self.repeat.as_ref()?;
        Some((repeat.kind, repeat.text(event, &self.bytes)?))
    }

    /// `event` was decoded: its sink was told `outputs` outputs, the last `last`. Keeps its bytes when a
    /// repeat of it can be looked for. O(its length) then, else O(1).
    pub(super) fn decoded(&mut self, event: &[u8], outputs: u64, last: Option<LastText>) {
        self.repeat = Repeat::after(event, outputs, last);
        if let (Some(_), Some(to)) = (&self.repeat, self.bytes.get_mut(..event.len())) {
            to.copy_from_slice(event);
        }
    }

    /// The last event was malformed: nothing repeats it.
    pub(super) fn forget(&mut self) {
        self.repeat = None;
    }
}

/// An output's text that was a JSON string: its kind, and where its characters were (their address and length).
#[derive(Clone, Copy, Debug)]
pub struct LastText {
    pub kind: OutputKind,
    pub at: usize,
    pub len: usize,
}

impl LastText {
    /// The text of an output of `kind`, when it is a JSON string.
    pub fn of(kind: OutputKind, text: Text<'_>) -> Option<LastText> {
        match text {
            Text::Json(s) => Some(LastText { kind, at: s.escaped().as_ptr() as usize, len: s.escaped().len() }),
            Text::Raw(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{decode, Decoder, Format, Framing, Sink, Usage};
    use crate::framing::{lines::LineSplitter, sse::SseParser};
    use alloc::string::String;
    use alloc::vec::Vec;

    /// What decoding told a sink, as a sink that keeps it does: every output, the last of each statement.
    #[derive(Debug, Default, PartialEq)]
    struct Said {
        outputs: Vec<(OutputKind, String)>,
        model: Option<String>,
        usage: Option<Usage>,
        finish: Option<String>,
        terminal: bool,
        error: bool,
        malformed: u32,
    }

    /// A sink that keeps what it was told, and says where the last output's text was, as `Tally` does.
    #[derive(Default)]
    struct Told {
        said: Said,
        last: Option<LastText>,
    }

    impl Sink for Told {
        fn output(&mut self, kind: OutputKind, text: Text<'_>) {
            self.last = LastText::of(kind, text);
            let text = match text {
                Text::Json(s) => s.chars().collect(),
                Text::Raw(bytes) => String::from_utf8_lossy(bytes).into_owned(),
            };
            self.said.outputs.push((kind, text));
        }
        fn model(&mut self, name: Str<'_>) {
            self.said.model = Some(name.chars().collect());
        }
        fn usage(&mut self, usage: Usage) {
            self.said.usage = Some(usage);
        }
        fn finish_reason(&mut self, reason: Str<'_>) {
            self.said.finish = Some(reason.chars().collect());
        }
        fn terminal(&mut self) {
            self.said.terminal = true;
        }
        fn error_event(&mut self) {
            self.said.error = true;
        }
        fn malformed(&mut self) {
            self.said.malformed += 1;
        }
        fn outputs(&self) -> (u64, Option<LastText>) {
            (self.said.outputs.len() as u64, self.last)
        }
    }

    /// Decodes `events` one after another with one decoder, and each on a fresh one (parsed and decoded
    /// whole, never taken as a repeat): the sink is told the same after every event.
    /// Returns how many were taken as repeats.
    fn check(format: Format, events: &[(Vec<u8>, Vec<u8>)]) -> usize {
        let (mut kept, mut repeats, mut whole) = (Decoder::default(), Told::default(), Told::default());
        let mut repeated = 0;
        for (n, (event_type, data)) in events.iter().enumerate() {
            repeated += usize::from(kept.last.repeated(data).is_some());
            decode(format, event_type, data, &mut kept, &mut repeats);
            decode(format, event_type, data, &mut Decoder::default(), &mut whole);
            assert_eq!(repeats.said, whole.said, "{format:?}, event {n}: {}", String::from_utf8_lossy(data));
        }
        repeated
    }

    fn events(format: Format, body: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut events = Vec::new();
        if format.framing() == Framing::Sse {
            let mut on_event = |e: crate::framing::sse::SseEvent| events.push((e.event_type.to_vec(), e.data.to_vec()));
            let mut parser = SseParser::default();
            parser.push(body, &mut on_event);
            parser.finish(&mut on_event);
        } else {
            let mut on_line = |line: &[u8]| events.push((Vec::new(), line.to_vec()));
            let mut splitter = LineSplitter::default();
            splitter.push(body, &mut on_line);
            splitter.finish(&mut on_line);
        }
        events
    }

    #[test]
    fn repeats_tell_the_sink_what_decoding_them_whole_does() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/streams/");
        let manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(alloc::format!("{dir}manifest.json")).unwrap()).unwrap();
        let mut repeated = 0;
        for (name, entry) in manifest.as_object().unwrap() {
            let format = Format::from_name(entry["format"].as_str().unwrap()).unwrap();
            let events = events(format, &std::fs::read(alloc::format!("{dir}{name}")).unwrap());
            repeated += check(format, &events);
            // Each event, then itself with bytes inserted or one changed anywhere (in its text: an escape cut
            // short, a closing quote, a control character; past it: the same length, other bytes), and with a
            // string emptied, each time after the event itself.
            let inserts: [&[u8]; 5] = [b"\\", b"\"", b"\\\"", b"\n", "é".as_bytes()];
            for (event_type, data) in &events {
                let mut sequence = Vec::new();
                for at in 0..=data.len() {
                    let mut changed = Vec::from([data.clone()]);
                    for insert in inserts {
                        let mut inserted = data.clone();
                        inserted.splice(at..at, insert.iter().copied());
                        changed.push(inserted);
                    }
                    if at < data.len() {
                        let mut replaced = data.clone();
                        replaced[at] = if data[at] == b'x' { b'1' } else { b'x' };
                        changed.push(replaced);
                    }
                    if let Some(end) = data.get(at..).and_then(|rest| rest.iter().position(|&b| b == b'"')) {
                        let mut emptied = data.clone();
                        emptied.drain(at..at + end);
                        changed.push(emptied);
                    }
                    sequence.extend(changed.into_iter().flat_map(|c| [(event_type.clone(), data.clone()), (event_type.clone(), c)]));
                }
                repeated += check(format, &sequence);
            }
        }
        // Events with two outputs, the second's text changed, and the same text in two members told once.
        let two: [(Format, &str, &str); 4] = [
            (Format::OpenAi, r#"{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}}]}"#, r#"{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"c"}}]}"#),
            (Format::Gemini, r#"{"candidates":[{"content":{"parts":[{"text":"a"},{"text":"b"}]}}]}"#, r#"{"candidates":[{"content":{"parts":[{"text":"a"},{"text":"cd"}]}}]}"#),
            (Format::OpenAi, r#"{"choices":[{"delta":{"reasoning_content":"x","reasoning":"x"}}]}"#, r#"{"choices":[{"delta":{"reasoning_content":"y","reasoning":"x"}}]}"#),
            (Format::OpenAi, r#"{"choices":[{"delta":{"reasoning_content":"","reasoning":"x"}}]}"#, r#"{"choices":[{"delta":{"reasoning_content":"","reasoning":"yz"}}]}"#),
        ];
        for (format, first, then) in two {
            let event = |json: &str| (Vec::new(), json.as_bytes().to_vec());
            check(format, &[event(first), event(then), event(first), event(then), event(then)]);
        }
        // The repeats were taken, not only checked for.
        assert!(repeated > 1000, "{repeated} repeats");
    }
}
