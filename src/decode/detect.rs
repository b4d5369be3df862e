//! Format auto-detection: from the response headers, else from the first bytes, else from the first
//! events. Each step looks at O(1) bytes.

use super::Format;
use crate::json::{Tape, Value};

/// What is known about a stream's format so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guess {
    /// The format is known.
    Known(Format),
    /// Server-sent events; the first events will tell which provider.
    Sse,
    /// Newline-delimited lines; the first line will tell which provider.
    Lines,
}

/// The longest prefix [`from_first_bytes`] needs to decide.
pub const SNIFF_BYTES: usize = 8;

/// Guesses from the response: the AI SDK stream headers, then the content type. `None` when they say
/// nothing useful (the bytes will have to tell).
pub fn from_response(content_type: &[u8], ui_stream_header: bool, data_stream_header: bool) -> Option<Guess> {
    if ui_stream_header {
        return Some(Guess::Known(Format::AiSdkUi));
    }
    if data_stream_header {
        return Some(Guess::Known(Format::AiSdkData));
    }
    let essence = content_type.split(|&b| b == b';').next().unwrap_or_default().trim_ascii();
    CONTENT_TYPES.iter().find(|(name, _)| essence.eq_ignore_ascii_case(name)).map(|&(_, guess)| guess)
}

/// Content types that tell the framing, or the format: a table, so that one comparison loop serves all
/// (each inlined comparison was a copy of it in the wasm).
const CONTENT_TYPES: [(&[u8], Guess); 5] = [
    (b"text/event-stream", Guess::Sse),
    (b"application/x-ndjson", Guess::Lines),
    (b"application/jsonl", Guess::Lines),
    (b"application/json-seq", Guess::Lines),
    (b"text/plain", Guess::Known(Format::Text)),
];

/// Guesses from the first bytes of a body whose headers said nothing. `None` while `start` is too
/// short to tell (a prefix of `event:`, say); with [`SNIFF_BYTES`] or more it always answers.
pub fn from_first_bytes(start: &[u8]) -> Option<Guess> {
    let body = start.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(start);
    let trimmed = body.trim_ascii_start();
    // The SSE field names start with different letters: the first byte picks the one to compare.
    let field: Option<&[u8]> = match trimmed {
        [] => return (start.len() >= SNIFF_BYTES).then_some(Guess::Known(Format::Text)),
        [b':', ..] => return Some(Guess::Sse),
        [b'd', ..] => Some(b"data:"),
        [b'e', ..] => Some(b"event:"),
        [b'i', ..] => Some(b"id:"),
        [b'r', ..] => Some(b"retry:"),
        _ => None,
    };
    if let Some(field) = field {
        if trimmed.starts_with(field) {
            return Some(Guess::Sse);
        }
        if field.starts_with(trimmed) && start.len() < SNIFF_BYTES {
            return None;
        }
    }
    match trimmed {
        [b'{', ..] => Some(Guess::Lines),
        [code, b':', ..] if code.is_ascii_alphanumeric() => Some(Guess::Known(Format::AiSdkData)),
        [code] if code.is_ascii_alphanumeric() && start.len() < SNIFF_BYTES => None,
        _ => Some(Guess::Known(Format::Text)),
    }
}

/// Which provider sent this SSE event; `None` when the event does not tell (pings, `[DONE]`).
pub fn from_sse_event(event_type: &[u8], data: &[u8], tape: &mut Tape) -> Option<Format> {
    if let Some(format) = format_named(event_type, false) {
        return Some(format);
    }
    let event = Value::parse(data, tape)?;
    if let Some(format) = event.get("type").and_then(|t| t.as_str()).and_then(|kind| format_named(kind.escaped(), true)) {
        return Some(format);
    }
    if event.get("choices").is_some() {
        Some(Format::OpenAi)
    } else if event.get("candidates").is_some() || event.get("usageMetadata").is_some() {
        Some(Format::Gemini)
    } else if event.get("token").is_some() {
        Some(Format::Tgi)
    } else {
        None
    }
}

/// The format an event's name or its JSON `type` says: OpenAI Responses' `response.*`, Anthropic's events,
/// and for a `type` (`ui_parts`) the AI SDK UI stream's parts. One copy for both checks in the wasm.
#[inline(never)]
fn format_named(name: &[u8], ui_parts: bool) -> Option<Format> {
    if name.starts_with(b"response.") {
        Some(Format::OpenAiResponses)
    } else if ANTHROPIC_EVENTS.contains(&name) {
        Some(Format::Anthropic)
    } else if ui_parts && AI_SDK_UI_PARTS.contains(&name) {
        Some(Format::AiSdkUi)
    } else {
        None
    }
}

/// Which provider sent this line: AI SDK data stream parts are `CODE:JSON`, anything else is NDJSON.
pub fn from_line(line: &[u8]) -> Format {
    match line {
        [code, b':', ..] if code.is_ascii_alphanumeric() => Format::AiSdkData,
        _ => Format::Ollama,
    }
}

const ANTHROPIC_EVENTS: [&[u8]; 7] = [
    b"message_start",
    b"content_block_start",
    b"content_block_delta",
    b"content_block_stop",
    b"message_delta",
    b"message_stop",
    b"ping",
];

const AI_SDK_UI_PARTS: [&[u8]; 10] = [
    b"start",
    b"start-step",
    b"text-start",
    b"text-delta",
    b"reasoning-start",
    b"reasoning-delta",
    b"tool-input-start",
    b"tool-input-delta",
    b"finish-step",
    b"finish",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_headers() {
        assert_eq!(from_response(b"text/event-stream; charset=utf-8", false, false), Some(Guess::Sse));
        assert_eq!(from_response(b"text/event-stream", true, false), Some(Guess::Known(Format::AiSdkUi)));
        assert_eq!(from_response(b"text/plain", false, true), Some(Guess::Known(Format::AiSdkData)));
        assert_eq!(from_response(b"Application/X-NDJSON", false, false), Some(Guess::Lines));
        assert_eq!(from_response(b"application/octet-stream", false, false), None);
    }

    #[test]
    fn first_bytes_wait_for_enough_to_decide() {
        assert_eq!(from_first_bytes(b"ev"), None);
        assert_eq!(from_first_bytes(b"event: x"), Some(Guess::Sse));
        assert_eq!(from_first_bytes(b"\xEF\xBB\xBFdata:{}"), Some(Guess::Sse));
        assert_eq!(from_first_bytes(b"{\"model\""), Some(Guess::Lines));
        assert_eq!(from_first_bytes(b"0:\"hi\""), Some(Guess::Known(Format::AiSdkData)));
        assert_eq!(from_first_bytes(b"Hello there"), Some(Guess::Known(Format::Text)));
        assert_eq!(from_first_bytes(b"evening!"), Some(Guess::Known(Format::Text)));
        assert_eq!(from_first_bytes(b"r"), None);
        assert_eq!(from_first_bytes(b" id: 1\n"), Some(Guess::Sse));
        assert_eq!(from_first_bytes(b"d:{\"finishReason\""), Some(Guess::Known(Format::AiSdkData)));
        assert_eq!(from_first_bytes(b" \n"), None);
        assert_eq!(from_first_bytes(b"\n\n\n\n\n\n\n\n"), Some(Guess::Known(Format::Text)));
    }

    #[test]
    fn sse_events() {
        let from_sse_event = |event_type: &[u8], data: &[u8]| from_sse_event(event_type, data, &mut Tape::default());
        assert_eq!(from_sse_event(b"", br#"{"object":"chat.completion.chunk","choices":[]}"#), Some(Format::OpenAi));
        assert_eq!(from_sse_event(b"ping", b"{}"), Some(Format::Anthropic));
        assert_eq!(from_sse_event(b"", br#"{"type":"message_start","message":{}}"#), Some(Format::Anthropic));
        assert_eq!(from_sse_event(b"", br#"{"type":"response.created"}"#), Some(Format::OpenAiResponses));
        assert_eq!(from_sse_event(b"", br#"{"type":"start","messageId":"m"}"#), Some(Format::AiSdkUi));
        assert_eq!(from_sse_event(b"", br#"{"candidates":[]}"#), Some(Format::Gemini));
        assert_eq!(from_sse_event(b"", br#"{"token":{"text":"a"}}"#), Some(Format::Tgi));
        assert_eq!(from_sse_event(b"", b"[DONE]"), None);
    }
}
