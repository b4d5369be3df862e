//! Decoders: from one framed event (an SSE event or a line) of a provider's stream to what the meter
//! counts: output text by kind, the model, token usage, the finish reason, the end of the stream.
//!
//! Decoders keep no text: they hand each delta to a [`Sink`] as a lazily unescaped [`Text`], so memory
//! stays constant whatever the stream's length. Unknown fields and event types are ignored; a payload
//! that is not valid JSON is reported with [`Sink::malformed`] and skipped.

mod ai_sdk_data;
mod ai_sdk_ui;
mod anthropic;
mod decoder;
pub mod detect;
mod gemini;
mod ollama;
mod openai_chat;
mod openai_responses;
mod repeat;
mod tgi;

pub use decoder::Decoder;
pub use repeat::LastText;
use crate::json::{Str, Tape, Value};

/// The stream formats the meter understands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// OpenAI Chat Completions and compatible servers (vLLM, DeepSeek, TGI's `/v1`, Ollama's `/v1`).
    OpenAi,
    /// OpenAI Responses API.
    OpenAiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// Google Gemini `streamGenerateContent?alt=sse`.
    Gemini,
    /// Ollama `/api/chat` and `/api/generate` (NDJSON).
    Ollama,
    /// Vercel AI SDK UI message stream v1 (AI SDK 5+).
    AiSdkUi,
    /// Vercel AI SDK data stream v1 (AI SDK 4, `TYPE:JSON` lines).
    AiSdkData,
    /// Hugging Face TGI `generate_stream`.
    Tgi,
    /// A plain text body: every chunk is answer text.
    Text,
}

/// How a format's bytes are cut into events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    Sse,
    Lines,
    Raw,
}

impl Format {
    /// Every format, in the order of their codes.
    pub const ALL: [Format; 9] = [
        Format::OpenAi,
        Format::OpenAiResponses,
        Format::Anthropic,
        Format::Gemini,
        Format::Ollama,
        Format::AiSdkUi,
        Format::AiSdkData,
        Format::Tgi,
        Format::Text,
    ];

    /// The name used in reports and in the `format` option.
    pub fn name(self) -> &'static str {
        match self {
            Format::OpenAi => "openai",
            Format::OpenAiResponses => "openai-responses",
            Format::Anthropic => "anthropic",
            Format::Gemini => "gemini",
            Format::Ollama => "ollama",
            Format::AiSdkUi => "ai-sdk-ui",
            Format::AiSdkData => "ai-sdk-data",
            Format::Tgi => "tgi",
            Format::Text => "text",
        }
    }

    /// The format with this name, if any.
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }

    /// How this format is framed on the wire.
    pub fn framing(self) -> Framing {
        match self {
            Format::Ollama | Format::AiSdkData => Framing::Lines,
            Format::Text => Framing::Raw,
            _ => Framing::Sse,
        }
    }
}

/// What kind of generated text an output event carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputKind {
    /// Answer text (also refusals).
    Answer,
    /// Streamed reasoning or thinking text.
    Reasoning,
    /// Tool-call arguments.
    Tool,
}

impl OutputKind {
    pub const ALL: [OutputKind; 3] = [OutputKind::Answer, OutputKind::Reasoning, OutputKind::Tool];

    /// Position in per-kind arrays.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// A piece of generated text, not yet decoded.
#[derive(Clone, Copy, Debug)]
pub enum Text<'a> {
    /// The contents of a JSON string.
    Json(Str<'a>),
    /// Raw UTF-8 bytes (plain text bodies, or a JSON value counted as tool arguments); may end mid-character.
    Raw(&'a [u8]),
}

/// Token counts a stream reports about itself, normalised: `output` includes reasoning tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub output: Option<u64>,
    pub reasoning: Option<u64>,
}

/// Receives what decoders find. Every call but `output` and `malformed` states something: made again with
/// the same arguments it changes nothing, so an event that repeats the last one but for its text needs
/// only its output (repeat.rs; `malformed` comes before a decoder runs).
pub trait Sink {
    /// A non-empty text delta.
    fn output(&mut self, kind: OutputKind, text: Text<'_>);
    /// The model name the stream states.
    fn model(&mut self, name: Str<'_>);
    /// Usage counts; later calls replace earlier ones (providers send cumulative counts).
    fn usage(&mut self, usage: Usage);
    /// Why generation stopped, in the provider's words.
    fn finish_reason(&mut self, reason: Str<'_>);
    /// The stream said it is complete.
    fn terminal(&mut self);
    /// The stream carried an error event.
    fn error_event(&mut self);
    /// A payload was not valid JSON.
    fn malformed(&mut self);
    /// How many outputs it was told, and the last one's text when that was a JSON string: what a
    /// [`Decoder`] needs to take the next event as a repeat. The default, no outputs, has every event
    /// parsed and decoded.
    fn outputs(&self) -> (u64, Option<LastText>) {
        (0, None)
    }
}

/// Decodes one framed event of `format`. `event_type` is the SSE event name (empty for lines); `decoder`
/// is what decoding keeps from one event to the next (the tape the event's JSON is parsed on), kept by the
/// caller for the stream.
pub fn decode(format: Format, event_type: &[u8], data: &[u8], decoder: &mut Decoder, sink: &mut impl Sink) {
    // Any SSE stream may end in an `error` event (Anthropic's documented shape, and proxies' habit).
    if event_type == b"error" {
        sink.error_event();
    }
    match format {
        Format::Text => {
            if !data.is_empty() {
                sink.output(OutputKind::Answer, Text::Raw(data));
            }
        }
        // Its JSON follows a `CODE:` prefix.
        Format::AiSdkData => ai_sdk_data::decode(data, &mut decoder.tape, sink),
        // The others' events are JSON documents, parsed here: one call site of the parser, not one a format.
        _ => {
            // These streams end with `data: [DONE]`, which is not JSON. The bytes are tested first: with the
            // format first, LLVM gave each of these three formats its own copy of the parse call.
            if data == b"[DONE]" && matches!(format, Format::OpenAi | Format::OpenAiResponses | Format::AiSdkUi) {
                return sink.terminal();
            }
            if let Some((kind, text)) = decoder.last.repeated(data) {
                return sink.output(kind, Text::Json(text));
            }
            let Some(value) = parse_json(data, &mut decoder.tape, sink) else { return decoder.last.forget() };
            let (before, _) = sink.outputs();
            match format {
                Format::OpenAi => openai_chat::decode(value, sink),
                Format::OpenAiResponses => openai_responses::decode(value, sink),
                Format::Anthropic => anthropic::decode(value, sink),
                Format::Gemini => gemini::decode(value, sink),
                Format::Ollama => ollama::decode(value, sink),
                Format::AiSdkUi => ai_sdk_ui::decode(value, sink),
                Format::Tgi => tgi::decode(value, sink),
                Format::Text | Format::AiSdkData => {}
            }
            let (after, last) = sink.outputs();
            decoder.last.decoded(data, after.wrapping_sub(before), last);
        }
    }
}

/// Parses a JSON payload, reporting it to the sink when malformed.
fn parse_json<'a>(data: &'a [u8], tape: &'a mut Tape, sink: &mut impl Sink) -> Option<Value<'a>> {
    let doc = Value::parse(data, tape);
    if doc.is_none() {
        sink.malformed();
    }
    doc
}

/// Sends the count of output tokens in `usage`'s member `key`, when it is one, as usage without a reasoning
/// count. One copy for the four formats that count only these.
fn output_tokens(usage: Option<Value>, key: &str, sink: &mut impl Sink) {
    if let Some(output) = usage.and_then(|u| u.get(key)).and_then(Value::as_u64) {
        sink.usage(Usage { output: Some(output), reasoning: None });
    }
}

/// Sends OpenAI's usage (chat and Responses name its members apart): the count of output tokens in
/// `output` and of reasoning tokens in `details.reasoning_tokens`, when `usage` is not null.
fn usage_with_details(usage: Value, output: &str, details: &str, sink: &mut impl Sink) {
    if !usage.is_null() {
        sink.usage(Usage {
            output: usage.get(output).and_then(Value::as_u64),
            reasoning: usage.get(details).and_then(|v| v.get("reasoning_tokens")).and_then(Value::as_u64),
        });
    }
}

/// Sends `value` as output of `kind` when it is a non-empty string.
fn output_str(value: Option<Value>, kind: OutputKind, sink: &mut impl Sink) -> bool {
    match value.and_then(Value::as_str) {
        Some(text) if !text.is_empty() => {
            sink.output(kind, Text::Json(text));
            true
        }
        _ => false,
    }
}

/// Sends a JSON value, tool-call arguments that arrive whole, as one tool output event of its bytes. Out of
/// line: the `Text` built once for Gemini and Ollama, 27 B brotli less though 30 B more wasm.
#[inline(never)]
fn output_tool_json(value: Value, sink: &mut impl Sink) {
    sink.output(OutputKind::Tool, Text::Raw(value.raw()));
}

/// Sends the model name when `value` is a non-empty string.
fn model_str(value: Option<Value>, sink: &mut impl Sink) {
    if let Some(name) = value.and_then(Value::as_str).filter(|s| !s.is_empty()) {
        sink.model(name);
    }
}

/// Sends the finish reason when `value` is a non-empty string.
fn finish_str(value: Option<Value>, sink: &mut impl Sink) -> bool {
    match value.and_then(Value::as_str) {
        Some(reason) if !reason.is_empty() => {
            sink.finish_reason(reason);
            true
        }
        _ => false,
    }
}
