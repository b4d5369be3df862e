//! OpenAI Chat Completions chunks (`chat.completion.chunk`), as OpenAI, vLLM, DeepSeek, xAI, TGI `/v1`
//! and Ollama `/v1` send them.

use super::{finish_str, model_str, output_str, parse_json, OutputKind, Sink, Usage};

pub(super) fn decode(data: &[u8], sink: &mut impl Sink) {
    if data == b"[DONE]" {
        return sink.terminal();
    }
    let Some(chunk) = parse_json(data, sink) else { return };
    // Servers that fail mid-stream send `{"error": {...}}` in place of a chunk.
    if chunk.get("error").is_some_and(|e| !e.is_null()) {
        sink.error_event();
    }
    model_str(chunk.get("model"), sink);
    let mut finished = false;
    for choice in chunk.get("choices").into_iter().flat_map(|c| c.items()) {
        if let Some(delta) = choice.get("delta") {
            output_str(delta.get("content"), OutputKind::Answer, sink);
            output_str(delta.get("refusal"), OutputKind::Answer, sink);
            // Older servers say `reasoning_content`, vLLM since late 2025 and Ollama say `reasoning`.
            if !output_str(delta.get("reasoning_content"), OutputKind::Reasoning, sink) {
                output_str(delta.get("reasoning"), OutputKind::Reasoning, sink);
            }
            for call in delta.get("tool_calls").into_iter().flat_map(|c| c.items()) {
                output_str(call.path(&["function", "arguments"]), OutputKind::Tool, sink);
            }
        }
        finished |= finish_str(choice.get("finish_reason"), sink);
    }
    if let Some(usage) = chunk.get("usage").filter(|u| !u.is_null()) {
        sink.usage(Usage {
            output: usage.get("completion_tokens").and_then(|v| v.as_u64()),
            reasoning: usage.path(&["completion_tokens_details", "reasoning_tokens"]).and_then(|v| v.as_u64()),
        });
    }
    if finished {
        sink.terminal();
    }
}

