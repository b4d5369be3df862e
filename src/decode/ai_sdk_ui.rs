//! Vercel AI SDK UI message stream v1 (AI SDK 5+): SSE events whose JSON `type` names the part.

use super::{finish_str, model_str, output_str, OutputKind, Sink, Value};

pub(super) fn decode(part: Value, sink: &mut impl Sink) {
    let Some(kind) = part.get("type").and_then(|t| t.as_str()) else { return };
    if kind.eq_plain("text-delta") {
        output_str(part.get("delta"), OutputKind::Answer, sink);
    } else if kind.eq_plain("reasoning-delta") {
        output_str(part.get("delta"), OutputKind::Reasoning, sink);
    } else if kind.eq_plain("tool-input-delta") {
        output_str(part.get("inputTextDelta"), OutputKind::Tool, sink);
    } else if kind.eq_plain("error") {
        sink.error_event();
    } else {
        // The protocol has no model or usage parts: apps may put them in `messageMetadata`.
        model_str(part.get("messageMetadata").and_then(|m| m.get("model")), sink);
        if kind.eq_plain("finish") {
            finish_str(part.get("finishReason"), sink);
            sink.terminal();
        }
    }
}
