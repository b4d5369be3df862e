//! Hugging Face TGI `generate_stream`: one event per generated token.

use super::{finish_str, output_str, output_tokens, OutputKind, Sink, Value};

pub(super) fn decode(event: Value, sink: &mut impl Sink) {
    if event.get("error").is_some() {
        return sink.error_event();
    }
    // Special tokens (end of sequence and the like) are not shown to the user.
    let token = event.get("token");
    if !token.and_then(|t| t.get("special")).is_some_and(Value::is_true) {
        output_str(token.and_then(|t| t.get("text")), OutputKind::Answer, sink);
    }
    // `null` until the last event: it has neither member.
    if let Some(details) = event.get("details") {
        output_tokens(Some(details), "generated_tokens", sink);
        finish_str(details.get("finish_reason"), sink);
    }
    if event.get("generated_text").is_some_and(|t| !t.is_null()) {
        sink.terminal();
    }
}
