//! Malformed and cut-off variants of every provider fixture: a payload that is not JSON in the middle
//! of the stream is counted and skipped while everything else stays as it was, and a stream cut at any
//! byte still gives a report with no more than the whole stream's output.
#![cfg(not(target_arch = "wasm32"))]

use llm_ux_meter::decode::{Format, Framing};
use llm_ux_meter::metrics::report::Report;
use llm_ux_meter::stream::{Ending, Stream};
use std::fs;
use std::path::PathBuf;

fn fixtures() -> Vec<(String, Vec<u8>, Format)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/streams");
    let manifest: serde_json::Value = serde_json::from_slice(&fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let mut out: Vec<_> = manifest
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, m)| (name.clone(), fs::read(dir.join(name)).unwrap(), Format::from_name(m["format"].as_str().unwrap()).unwrap()))
        .filter(|(_, _, format)| *format != Format::Text)
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn report(format: Format, body: &[u8]) -> Report {
    let mut stream = Stream::new(Some(format), 0.0);
    stream.chunk(body, 1.0);
    stream.end(2.0, Ending::Complete)
}

/// Inserts a broken payload after the first event (SSE) or line, in the file's own line-end style.
fn with_broken_event(body: &[u8], format: Format) -> Vec<u8> {
    let eol: &[u8] = if body.windows(2).any(|w| w == b"\r\n") {
        b"\r\n"
    } else if !body.contains(&b'\n') {
        b"\r"
    } else {
        b"\n"
    };
    let (separator, broken): (Vec<u8>, Vec<u8>) = match format.framing() {
        Framing::Sse => ([eol, eol].concat(), [&b"data: {\"choices\":[{\"delta\":{\"content\":\"lost"[..], eol, eol].concat()),
        _ if format == Format::AiSdkData => (eol.to_vec(), [&b"0:\"unterminated"[..], eol].concat()),
        _ => (eol.to_vec(), [&b"{\"model\":\"x\",\"response\":\"lost"[..], eol].concat()),
    };
    let at = body.windows(separator.len()).position(|w| w == separator.as_slice()).expect("a first event") + separator.len();
    [&body[..at], &broken[..], &body[at..]].concat()
}

#[test]
fn a_broken_payload_is_counted_and_skipped_in_every_format() {
    for (name, body, format) in fixtures() {
        let clean = report(format, &body);
        let broken = report(format, &with_broken_event(&body, format));
        assert_eq!(broken.anomalies.malformed_events, clean.anomalies.malformed_events + 1, "{name}");
        let mut expected = clean.clone();
        expected.anomalies.malformed_events += 1;
        assert_eq!(broken, expected, "{name}: nothing else changes");
    }
}

#[test]
fn a_stream_cut_at_any_byte_reports_what_arrived() {
    for (name, body, format) in fixtures() {
        let whole = report(format, &body);
        for cut in (0..body.len()).step_by(7) {
            let mut stream = Stream::new(None, 0.0);
            stream.chunk(&body[..cut], 1.0);
            let part = stream.end(2.0, Ending::Aborted);
            assert!(part.output_events <= whole.output_events, "{name} cut at {cut}");
            assert!(part.format.is_none() || part.format == Some(format) || cut < 64, "{name} cut at {cut}: {:?}", part.format);
        }
    }
}
