//! The framing invariant: any split of a byte stream into chunks (1-byte chunks included) gives exactly
//! the same events, and the same report, as the whole stream in one chunk. Property-tested over every
//! fixture, in both detection modes.
#![cfg(not(target_arch = "wasm32"))]

use llm_ux_meter::decode::Format;
use llm_ux_meter::framing::sse::{SseEvent, SseParser};
use llm_ux_meter::metrics::report::Report;
use llm_ux_meter::stream::{Ending, Stream};
use proptest::prelude::*;
use std::fs;
use std::path::PathBuf;

fn fixtures() -> Vec<(String, Vec<u8>, Format)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/streams");
    let manifest: serde_json::Value = serde_json::from_slice(&fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    manifest
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, expected)| {
            let format = Format::from_name(expected["format"].as_str().unwrap()).unwrap();
            (name.clone(), fs::read(dir.join(name)).unwrap(), format)
        })
        .collect()
}

/// Cuts `body` at the given chunk sizes (cycled), all chunks arriving at the same time.
fn chunks<'a>(body: &'a [u8], sizes: &[usize]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut rest = body;
    for &size in sizes.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (chunk, tail) = rest.split_at(size.clamp(1, rest.len()));
        out.push(chunk);
        rest = tail;
    }
    out
}

fn report(format: Option<Format>, parts: &[&[u8]]) -> Report {
    let mut stream = Stream::new(format, 0.0);
    for part in parts {
        stream.chunk(part, 5.0);
    }
    let mut report = stream.end(6.0, Ending::Complete);
    if report.format == Some(Format::Text) {
        // In a plain text body every chunk is an output event: only these counts may depend on chunking.
        report.output_events = 0;
        report.output_events_by_kind.answer = 0;
        report.arrival_gaps = None;
    }
    report
}

fn sse_events(parts: &[&[u8]]) -> (Vec<(Vec<u8>, Vec<u8>)>, bool) {
    let mut parser = SseParser::default();
    let mut events = Vec::new();
    let mut collect = |e: SseEvent| events.push((e.event_type.to_vec(), e.data.to_vec()));
    for part in parts {
        parser.push(part, &mut collect);
    }
    let unterminated = parser.finish(&mut collect);
    (events, unterminated)
}

#[test]
fn one_byte_chunks_match_one_chunk() {
    for (name, body, format) in fixtures() {
        for detect in [None, Some(format)] {
            assert_eq!(report(detect, &chunks(&body, &[1])), report(detect, &[&body]), "{name} ({detect:?})");
        }
        assert_eq!(sse_events(&chunks(&body, &[1])), sse_events(&[&body]), "{name}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_chunking_matches_one_chunk(sizes in proptest::collection::vec(1usize..48, 1..24)) {
        for (name, body, format) in fixtures() {
            let parts = chunks(&body, &sizes);
            prop_assert_eq!(report(None, &parts), report(None, &[&body]), "{} (detected)", name);
            prop_assert_eq!(report(Some(format), &parts), report(Some(format), &[&body]), "{}", name);
            prop_assert_eq!(sse_events(&parts), sse_events(&[&body]), "{}", name);
        }
    }

    #[test]
    fn line_ends_split_anywhere_give_the_same_events(
        lines in proptest::collection::vec("[a-z:]{0,6}( [a-z]{0,4})?", 1..12),
        ends in proptest::collection::vec(0usize..3, 12),
        sizes in proptest::collection::vec(1usize..6, 1..8),
    ) {
        let mut body = Vec::new();
        for (line, end) in lines.iter().zip(ends.iter().cycle()) {
            body.extend_from_slice(line.as_bytes());
            body.extend_from_slice([&b"\n"[..], b"\r", b"\r\n"][*end]);
        }
        prop_assert_eq!(sse_events(&chunks(&body, &sizes)), sse_events(&[&body]));
    }
}
