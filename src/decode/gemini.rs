//! Google Gemini `GenerateContentResponse` events: every event is a whole response with new parts.

use super::{finish_str, model_str, output_str, output_tool_json, OutputKind, Sink, Usage, Value};

pub(super) fn decode(response: Value, sink: &mut impl Sink) {
    if response.get("error").is_some() {
        sink.error_event();
    }
    model_str(response.get("modelVersion"), sink);
    let candidate = response.get("candidates").and_then(|c| c.first());
    let parts = candidate.and_then(|c| c.get("content")).and_then(|c| c.get("parts"));
    // An `if let` and a loop, not `flat_map` over the option: its iterator's state is larger code.
    if let Some(parts) = parts {
        for part in parts.items() {
            // The kind before the text, so that the text goes through `output_str` (no send of its own).
            let thought = part.get("thought").is_some_and(Value::is_true);
            let kind = if thought { OutputKind::Reasoning } else { OutputKind::Answer };
            if output_str(part.get("text"), kind, sink) {
                continue;
            }
            if let Some(call) = part.get("functionCall") {
                // Arguments arrive whole, as a JSON object: count that object as one tool output event.
                output_tool_json(call.get("args").unwrap_or(call), sink);
            }
        }
    }
    if let Some(meta) = response.get("usageMetadata") {
        let count = |key| meta.get(key).and_then(|v| v.as_u64());
        let (candidates, thoughts) = (count("candidatesTokenCount"), count("thoughtsTokenCount"));
        if candidates.is_some() || thoughts.is_some() {
            // Gemini counts thoughts apart from candidates; the meter's `output` includes them.
            let output = candidates.unwrap_or(0).saturating_add(thoughts.unwrap_or(0));
            sink.usage(Usage { output: Some(output), reasoning: Some(thoughts.unwrap_or(0)) });
        }
    }
    if finish_str(candidate.and_then(|c| c.get("finishReason")), sink) {
        sink.terminal();
    }
}
