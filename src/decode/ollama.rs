//! Ollama native `/api/chat` and `/api/generate` lines (NDJSON).

use super::{finish_str, model_str, output_str, output_tokens, output_tool_json, OutputKind, Sink, Value};

pub(super) fn decode(chunk: Value, sink: &mut impl Sink) {
    if chunk.get("error").is_some() {
        sink.error_event();
    }
    model_str(chunk.get("model"), sink);
    let message = chunk.get("message");
    if !output_str(message.and_then(|m| m.get("content")), OutputKind::Answer, sink) {
        output_str(chunk.get("response"), OutputKind::Answer, sink);
    }
    if !output_str(message.and_then(|m| m.get("thinking")), OutputKind::Reasoning, sink) {
        output_str(chunk.get("thinking"), OutputKind::Reasoning, sink);
    }
    // Tool calls arrive whole, not in fragments: count the JSON as one tool output event.
    if let Some(calls) = message.and_then(|m| m.get("tool_calls")).filter(|c| c.items().next().is_some()) {
        output_tool_json(calls, sink);
    }
    if chunk.get("done").is_some_and(Value::is_true) {
        output_tokens(Some(chunk), "eval_count", sink);
        finish_str(chunk.get("done_reason"), sink);
        sink.terminal();
    }
}
