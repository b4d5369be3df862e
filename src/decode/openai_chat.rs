//! OpenAI Chat Completions chunks (`chat.completion.chunk`), as OpenAI, vLLM, DeepSeek, xAI, TGI `/v1`
//! and Ollama `/v1` send them.

use super::{finish_str, model_str, output_str, parse_json, OutputKind, Sink, Tape, Usage, Value};

pub(super) fn decode(data: &[u8], tape: &mut Tape, sink: &mut impl Sink) {
    if data == b"[DONE]" {
        return sink.terminal();
    }
    let Some(chunk) = parse_json(data, tape, sink) else { return };
    // One pass per object: this decoder runs for every event of the most common format.
    let mut finished = false;
    let mut members = chunk.members();
    while let Some((key, value)) = members.next_inline() {
        match key.escaped() {
            b"model" => model_str(Some(value), sink),
            b"choices" => {
                for choice in value.items() {
                    finished |= decode_choice(choice, sink);
                }
            }
            b"usage" if !value.is_null() => sink.usage(Usage {
                output: value.get("completion_tokens").and_then(|v| v.as_u64()),
                reasoning: value.get("completion_tokens_details").and_then(|v| v.get("reasoning_tokens")).and_then(|v| v.as_u64()),
            }),
            // Servers that fail mid-stream send `{"error": {...}}` in place of a chunk.
            b"error" if !value.is_null() => sink.error_event(),
            _ => {}
        }
    }
    if finished {
        sink.terminal();
    }
}

/// One element of `choices`; returns whether it carries a finish reason.
fn decode_choice(choice: Value, sink: &mut impl Sink) -> bool {
    let mut finished = false;
    for (key, value) in choice.members() {
        match key.escaped() {
            b"delta" => decode_delta(value, sink),
            b"finish_reason" => finished = finish_str(Some(value), sink),
            _ => {}
        }
    }
    finished
}

fn decode_delta(delta: Value, sink: &mut impl Sink) {
    let mut reasoning_sent = false;
    for (key, value) in delta.members() {
        match key.escaped() {
            b"content" | b"refusal" => {
                output_str(Some(value), OutputKind::Answer, sink);
            }
            // Older servers say `reasoning_content`, vLLM since late 2025 and Ollama say `reasoning`;
            // some send both with the same text: one output event.
            b"reasoning_content" | b"reasoning" if !reasoning_sent => {
                reasoning_sent = output_str(Some(value), OutputKind::Reasoning, sink);
            }
            b"tool_calls" => {
                for call in value.items() {
                    output_str(call.get("function").and_then(|v| v.get("arguments")), OutputKind::Tool, sink);
                }
            }
            _ => {}
        }
    }
}
