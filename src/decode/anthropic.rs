//! Anthropic Messages events (`message_start`, `content_block_delta`, `message_delta`, ...).

use super::{finish_str, model_str, output_str, output_tokens, OutputKind, Sink, Value};

pub(super) fn decode(event: Value, sink: &mut impl Sink) {
    let Some(kind) = event.get("type").and_then(|t| t.as_str()) else { return };
    if kind.eq_plain("content_block_delta") {
        let Some(delta) = event.get("delta") else { return };
        let Some(delta_type) = delta.get("type").and_then(|t| t.as_str()) else { return };
        if delta_type.eq_plain("text_delta") {
            output_str(delta.get("text"), OutputKind::Answer, sink);
        } else if delta_type.eq_plain("thinking_delta") {
            output_str(delta.get("thinking"), OutputKind::Reasoning, sink);
        } else if delta_type.eq_plain("input_json_delta") {
            output_str(delta.get("partial_json"), OutputKind::Tool, sink);
        }
    } else if kind.eq_plain("message_start") {
        let message = event.get("message");
        model_str(message.and_then(|m| m.get("model")), sink);
        // `output_tokens` is cumulative; it includes thinking tokens but does not split them out.
        output_tokens(message.and_then(|m| m.get("usage")), "output_tokens", sink);
    } else if kind.eq_plain("message_delta") {
        finish_str(event.get("delta").and_then(|d| d.get("stop_reason")), sink);
        output_tokens(event.get("usage"), "output_tokens", sink);
    } else if kind.eq_plain("message_stop") {
        sink.terminal();
    } else if kind.eq_plain("error") {
        sink.error_event();
    }
}
