//! OpenAI Responses API events (`response.*`, each named in its `type`).

use super::{model_str, output_str, usage_with_details, OutputKind, Sink, Value};

pub(super) fn decode(event: Value, sink: &mut impl Sink) {
    let Some(kind) = event.get("type").and_then(|t| t.as_str()) else { return };
    let delta = || event.get("delta");
    if kind.eq_plain("response.output_text.delta") || kind.eq_plain("response.refusal.delta") {
        output_str(delta(), OutputKind::Answer, sink);
    } else if kind.eq_plain("response.reasoning_summary_text.delta") || kind.eq_plain("response.reasoning_text.delta") {
        output_str(delta(), OutputKind::Reasoning, sink);
    } else if kind.eq_plain("response.function_call_arguments.delta") {
        output_str(delta(), OutputKind::Tool, sink);
    } else if kind.eq_plain("error") {
        sink.error_event();
    } else if let Some(response) = event.get("response") {
        model_str(response.get("model"), sink);
        let failed = kind.eq_plain("response.failed");
        if failed || kind.eq_plain("response.completed") || kind.eq_plain("response.incomplete") {
            if let Some(usage) = response.get("usage") {
                usage_with_details(usage, "output_tokens", "output_tokens_details", sink);
            }
            if let Some(status) = response.get("status").and_then(|s| s.as_str()) {
                sink.finish_reason(status);
            }
            if failed {
                sink.error_event();
            }
            sink.terminal();
        }
    }
}
