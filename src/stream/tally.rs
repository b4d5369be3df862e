//! The sink decoders write to: counts per output kind, token estimates, and what the stream says about
//! itself (model, usage, finish reason, end, errors). No text is kept beyond a bounded model name.

use crate::decode::{OutputKind, Sink, Text, Usage};
use crate::json::Str;
use crate::metrics::token_estimate::TokenEstimate;
use crate::utf8::{self, Utf8Stream};
use alloc::string::String;

/// Longest model name or finish reason kept, in bytes.
pub const MAX_NAME_BYTES: usize = 128;

#[derive(Clone, Debug, Default)]
pub struct Tally {
    pub model: Option<String>,
    pub finish_reason: Option<String>,
    pub usage: Option<Usage>,
    /// Output events per kind, indexed by [`OutputKind::index`].
    pub events: [u64; 3],
    pub estimates: [TokenEstimate; 3],
    raw_text: [Utf8Stream; 3],
    pub terminal: bool,
    pub error_event: bool,
    pub malformed: u32,
    new_events: u64,
    new_answer_events: u64,
}

impl Tally {
    /// Output events (and whether any was answer text) since the last call.
    pub fn take_new(&mut self) -> (u64, bool) {
        let new = (self.new_events, self.new_answer_events > 0);
        (self.new_events, self.new_answer_events) = (0, 0);
        new
    }

    /// Ends raw text: a character cut off at the very end counts as U+FFFD.
    pub fn finish(&mut self) {
        for (raw, estimate) in self.raw_text.iter_mut().zip(self.estimates.iter_mut()) {
            raw.flush(&mut counter(estimate));
        }
    }
}

impl Sink for Tally {
    fn output(&mut self, kind: OutputKind, text: Text<'_>) {
        let i = kind.index();
        if let (Some(events), Some(estimate), Some(raw)) = (self.events.get_mut(i), self.estimates.get_mut(i), self.raw_text.get_mut(i)) {
            *events = events.saturating_add(1);
            match text {
                Text::Json(s) => s.for_each_char(|c| estimate.push_char(c)),
                Text::Raw(bytes) => raw.push(bytes, counter(estimate)),
            }
        }
        self.new_events += 1;
        self.new_answer_events += u64::from(kind == OutputKind::Answer);
    }

    fn model(&mut self, name: Str<'_>) {
        set_bounded(&mut self.model, name);
    }

    fn usage(&mut self, usage: Usage) {
        self.usage = Some(usage);
    }

    fn finish_reason(&mut self, reason: Str<'_>) {
        set_bounded(&mut self.finish_reason, reason);
    }

    fn terminal(&mut self) {
        self.terminal = true;
    }

    fn error_event(&mut self) {
        self.error_event = true;
    }

    fn malformed(&mut self) {
        self.malformed = self.malformed.saturating_add(1);
    }
}

/// Feeds raw text's characters to `estimate`. One closure type for `output` and `finish`, passed to `flush`
/// as `push` passes it there: one copy of `flush` in the wasm.
fn counter(estimate: &mut TokenEstimate) -> impl FnMut(char) + '_ {
    |c| estimate.push_char(c)
}

/// Stores `value` in `slot` unless it is already equal, cut at a character boundary.
fn set_bounded(slot: &mut Option<String>, value: Str<'_>) {
    if slot.as_deref().is_some_and(|current| value.eq_str(current)) {
        return;
    }
    let (mut text, mut buf) = (String::new(), [0; 4]);
    for c in value.chars() {
        let encoded = utf8::encode(c, &mut buf);
        if text.len() + encoded.len() > MAX_NAME_BYTES {
            break;
        }
        text.push_str(encoded);
    }
    *slot = Some(text);
}
