//! From bytes to decoded events: detects the format when it was not given (headers, first bytes, first
//! events), frames the bytes accordingly and hands each event to its decoder.

use crate::decode::detect::{self, Guess, SNIFF_BYTES};
use crate::decode::{self, Decoder, Format, Framing, Sink};
use crate::framing::lines::LineSplitter;
use crate::framing::sse::{SseEvent, SseParser};
use alloc::vec::Vec;

#[derive(Clone, Debug)]
enum State {
    /// Nothing tells the format yet: holds the first bytes (at most [`SNIFF_BYTES`]).
    Sniffing(Vec<u8>),
    /// SSE; the provider is known once an event tells.
    Sse(SseParser, Option<Format>),
    /// Lines; the provider is known from the first line.
    Lines(LineSplitter, Option<Format>),
    Raw,
}

#[derive(Clone, Debug)]
pub struct Framer {
    state: State,
    cap: usize,
    unterminated: bool,
    handoff: Handoff,
}

/// What events and lines are handed on with: the decoder's state (one for the stream, not one per event:
/// the tape their JSON is parsed on), and whether one was handed on since [`Framer::finish`] began. One
/// struct, so that the closures below capture one reference for both: a fourth capture cost 0.2% more
/// instructions.
#[derive(Clone, Debug, Default)]
struct Handoff {
    decoder: Decoder,
    handed_on: bool,
}

impl Framer {
    /// A framer for `format`, or detecting it when `None`. Events or lines over `cap` bytes are dropped.
    pub fn new(format: Option<Format>, cap: usize) -> Self {
        let state = match format {
            None => State::Sniffing(Vec::new()),
            Some(f) => state_for(Guess::Known(f), cap),
        };
        Framer { state, cap, unterminated: false, handoff: Handoff::default() }
    }

    /// The response headers arrived: they may tell the format (when still undecided and no byte came).
    pub fn response(&mut self, content_type: &[u8], ui_stream_header: bool, data_stream_header: bool) {
        if matches!(&self.state, State::Sniffing(held) if held.is_empty()) {
            if let Some(guess) = detect::from_response(content_type, ui_stream_header, data_stream_header) {
                self.state = state_for(guess, self.cap);
            }
        }
    }

    /// The format, once known.
    pub fn format(&self) -> Option<Format> {
        match self.state {
            State::Sniffing(_) => None,
            State::Sse(_, format) | State::Lines(_, format) => format,
            State::Raw => Some(Format::Text),
        }
    }

    pub fn push(&mut self, bytes: &[u8], sink: &mut impl Sink) {
        if let State::Sniffing(held) = &mut self.state {
            // `held` only grows here, to SNIFF_BYTES at most: the subtraction cannot overflow.
            let room = (SNIFF_BYTES - held.len()).min(bytes.len());
            held.extend_from_slice(&bytes[..room]);
            let Some(guess) = detect::from_first_bytes(held) else { return };
            // Replay as one piece, so that a plain text chunk stays one output event.
            let mut first = core::mem::take(held);
            first.extend_from_slice(&bytes[room..]);
            self.state = state_for(guess, self.cap);
            return self.push(&first, sink);
        }
        let handoff = &mut self.handoff;
        match &mut self.state {
            State::Sniffing(_) => {}
            State::Sse(parser, format) => parser.push(bytes, &mut on_sse_event(format, handoff, sink)),
            State::Lines(splitter, format) => splitter.push(bytes, &mut on_line(format, handoff, sink)),
            State::Raw => decode::decode(Format::Text, b"", bytes, &mut handoff.decoder, sink),
        }
    }

    /// Ends the stream, taking an unterminated last event or line: with the line ends that would have ended
    /// them, pushed as if the stream had sent them. Two: an SSE event's last line needs one and the event a
    /// blank line (after a CR the first completes the CRLF, and the second still ends the event); after a
    /// line end they are blank lines, which hand nothing on. That is what [`SseParser::finish`] and
    /// [`LineSplitter::finish`] do (the fixtures' tests check both), here through `push`'s closures: a call
    /// of theirs would take closures of another type, so a second copy of the framers' code in the wasm.
    pub fn finish(&mut self, sink: &mut impl Sink) {
        if let State::Sniffing(held) = &mut self.state {
            let held = core::mem::take(held);
            self.state = state_for(detect::from_first_bytes(&held).unwrap_or(Guess::Known(Format::Text)), self.cap);
            self.push(&held, sink);
        }
        self.handoff.handed_on = false;
        if !matches!(self.state, State::Raw) {
            self.push(b"\n\n", sink);
        }
        self.unterminated = self.handoff.handed_on;
    }

    /// Whether [`Framer::finish`] found a last event without its terminator.
    pub fn unterminated(&self) -> bool {
        self.unterminated
    }

    /// Events or lines dropped for exceeding the cap.
    pub fn oversize_dropped(&self) -> u32 {
        match &self.state {
            State::Sse(parser, _) => parser.oversize_dropped(),
            State::Lines(splitter, _) => splitter.oversize_dropped(),
            State::Sniffing(_) | State::Raw => 0,
        }
    }
}

/// One construction of each framer, whether the guess names the provider or not: built in two places, each
/// was its own code in the wasm.
fn state_for(guess: Guess, cap: usize) -> State {
    let (framing, format) = match guess {
        Guess::Sse => (Framing::Sse, None),
        Guess::Lines => (Framing::Lines, None),
        Guess::Known(format) => (format.framing(), Some(format)),
    };
    match framing {
        Framing::Sse => State::Sse(SseParser::with_cap(cap), format),
        Framing::Lines => State::Lines(LineSplitter::with_cap(cap), format),
        Framing::Raw => State::Raw,
    }
}

/// What `push` does with each SSE event.
fn on_sse_event<'a, S: Sink>(format: &'a mut Option<Format>, handoff: &'a mut Handoff, sink: &'a mut S) -> impl FnMut(SseEvent<'_>) + 'a {
    move |event| {
        handoff.handed_on = true;
        decode_sse(format, event.event_type, event.data, &mut handoff.decoder, sink)
    }
}

/// What `push` does with each line.
fn on_line<'a, S: Sink>(format: &'a mut Option<Format>, handoff: &'a mut Handoff, sink: &'a mut S) -> impl FnMut(&[u8]) + 'a {
    move |line| {
        handoff.handed_on = true;
        decode_line(format, line, &mut handoff.decoder, sink)
    }
}

fn decode_sse(format: &mut Option<Format>, event_type: &[u8], data: &[u8], decoder: &mut Decoder, sink: &mut impl Sink) {
    if format.is_none() {
        *format = detect::from_sse_event(event_type, data, &mut decoder.tape);
    }
    if let Some(format) = *format {
        decode::decode(format, event_type, data, decoder, sink);
    }
}

fn decode_line(format: &mut Option<Format>, line: &[u8], decoder: &mut Decoder, sink: &mut impl Sink) {
    let format = *format.get_or_insert_with(|| detect::from_line(line));
    decode::decode(format, b"", line, decoder, sink);
}
