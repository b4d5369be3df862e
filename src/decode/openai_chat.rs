//! OpenAI Chat Completions chunks (`chat.completion.chunk`), as OpenAI, vLLM, DeepSeek, xAI, TGI `/v1`
//! and Ollama `/v1` send them.

use super::{finish_str, model_str, output_str, usage_with_details, OutputKind, Sink, Value};

pub(super) fn decode(chunk: Value, sink: &mut impl Sink) {
    // The chunk, of many members, is read in one pass; a choice and its delta, of one to three, by
    // lookups. Most events of a stream are repeats and never reach a decoder (repeat.rs), so code weighs
    // more than speed here.
    let mut finished = false;
    let mut members = chunk.members();
    // Keys compared with `==`, not matched as byte-string patterns: a pattern is compared byte by byte,
    // `==` a word at a time (smaller wasm, as fast).
    while let Some((key, value)) = members.next() {
        let key = key.escaped();
        if key == b"model" {
            model_str(Some(value), sink);
        } else if key == b"choices" {
            for choice in value.items() {
                finished |= decode_choice(choice, sink);
            }
        } else if key == b"usage" {
            usage_with_details(value, "completion_tokens", "completion_tokens_details", sink);
        } else if key == b"error" && !value.is_null() {
            // Servers that fail mid-stream send `{"error": {...}}` in place of a chunk.
            sink.error_event();
        }
    }
    if finished {
        sink.terminal();
    }
}

/// One element of `choices`; returns whether it carries a finish reason.
fn decode_choice(choice: Value, sink: &mut impl Sink) -> bool {
    if let Some(delta) = choice.get("delta") {
        decode_delta(delta, sink);
    }
    finish_str(choice.get("finish_reason"), sink)
}

/// A choice's delta. Its kinds of text in a fixed order, not the document's: each kind is counted apart.
fn decode_delta(delta: Value, sink: &mut impl Sink) {
    output_str(delta.get("content"), OutputKind::Answer, sink);
    output_str(delta.get("refusal"), OutputKind::Answer, sink);
    // Older servers say `reasoning_content`, vLLM since late 2025 and Ollama say `reasoning`; some send both
    // with the same text: one output event.
    if !output_str(delta.get("reasoning_content"), OutputKind::Reasoning, sink) {
        output_str(delta.get("reasoning"), OutputKind::Reasoning, sink);
    }
    if let Some(calls) = delta.get("tool_calls") {
        for call in calls.items() {
            output_str(call.get("function").and_then(|v| v.get("arguments")), OutputKind::Tool, sink);
        }
    }
}
