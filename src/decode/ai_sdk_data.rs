//! Vercel AI SDK data stream v1 (AI SDK 4): lines of `TYPE:JSON`.

use super::{finish_str, output_str, output_tokens, parse_json, OutputKind, Sink, Tape};

pub(super) fn decode(line: &[u8], tape: &mut Tape, sink: &mut impl Sink) {
    let Some(colon) = line.iter().position(|&b| b == b':') else { return sink.malformed() };
    let (code, json) = (&line[..colon], &line[colon + 1..]);
    let Some(value) = parse_json(json, tape, sink) else { return };
    match code {
        b"0" => {
            output_str(Some(value), OutputKind::Answer, sink);
        }
        b"g" => {
            output_str(Some(value), OutputKind::Reasoning, sink);
        }
        b"c" => {
            output_str(value.get("argsTextDelta"), OutputKind::Tool, sink);
        }
        b"3" => sink.error_event(),
        b"d" => {
            output_tokens(value.get("usage"), "completionTokens", sink);
            finish_str(value.get("finishReason"), sink);
            sink.terminal();
        }
        _ => {}
    }
}
