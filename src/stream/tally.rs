//! The sink decoders write to: counts per output kind, token estimates, and what the stream says about
//! itself (model, usage, finish reason, end, errors). No text is kept beyond a bounded model name.

use crate::decode::{LastText, OutputKind, Sink, Text, Usage};
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
    /// Whether `model` holds no `\` (and `finish_reason`): then a name whose escaped bytes are the stored
    /// ones is the same name, without looking for escapes in it (`set_bounded`).
    model_plain: bool,
    finish_reason_plain: bool,
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
    /// The last output's text when it was a JSON string ([`Sink::outputs`]).
    last_text: Option<LastText>,
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
            // Event counts here and in the timeline are plain adds: each event takes at least a byte of
            // the stream, so a u64 never overflows (saturating adds cost wasm bytes).
            *events += 1;
            match text {
                Text::Json(s) => s.for_each_char(|c| estimate.push_char(c)),
                Text::Raw(bytes) => raw.push(bytes, counter(estimate)),
            }
        }
        self.new_events += 1;
        self.new_answer_events += u64::from(kind == OutputKind::Answer);
        self.last_text = LastText::of(kind, text);
    }

    fn model(&mut self, name: Str<'_>) {
        set_bounded(&mut self.model, &mut self.model_plain, name);
    }

    fn usage(&mut self, usage: Usage) {
        self.usage = Some(usage);
    }

    fn finish_reason(&mut self, reason: Str<'_>) {
        set_bounded(&mut self.finish_reason, &mut self.finish_reason_plain, reason);
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

    fn outputs(&self) -> (u64, Option<LastText>) {
        (self.events.iter().sum(), self.last_text)
    }
}

/// Feeds raw text's characters to `estimate`. One closure type for `output` and `finish`, passed to `flush`
/// as `push` passes it there: one copy of `flush` in the wasm.
fn counter(estimate: &mut TokenEstimate) -> impl FnMut(char) + '_ {
    |c| estimate.push_char(c)
}

/// Stores `value` in `slot` unless it is already equal, cut at a character boundary; `plain` says whether
/// the stored text has no `\`.
///
/// Most streams name the model on every event: when `value`'s escaped bytes are the stored text's and that
/// has no `\`, `value` has none either, so it decodes to the stored text; no scan for escapes (`eq_str`).
fn set_bounded(slot: &mut Option<String>, plain: &mut bool, value: Str<'_>) {
    if slot.as_deref().is_some_and(|current| (*plain && value.escaped() == current.as_bytes()) || value.eq_str(current)) {
        return;
    }
    let (mut text, mut buf) = (String::new(), [0; 4]);
    *plain = true;
    for c in value.chars() {
        let encoded = utf8::encode(c, &mut buf);
        if text.len() + encoded.len() > MAX_NAME_BYTES {
            break;
        }
        *plain &= c != '\\';
        text.push_str(encoded);
    }
    *slot = Some(text);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{Tape, Value};

    #[test]
    fn a_stored_name_with_a_backslash_is_compared_decoded() {
        let mut tally = Tally::default();
        // `"a\b"`'s escaped bytes are the text stored before it, `a\b`, but it decodes to `a` and a backspace.
        for (json, stored) in [(&br#""a\\b""#[..], "a\\b"), (br#""a\b""#, "a\u{8}"), (br#""ab""#, "ab"), (br#""ab""#, "ab")] {
            let mut tape = Tape::default();
            tally.model(Value::parse(json, &mut tape).and_then(|v| v.as_str()).unwrap());
            assert_eq!(tally.model.as_deref(), Some(stored));
        }
    }
}
