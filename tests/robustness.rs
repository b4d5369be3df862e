//! No input may panic the meter (in wasm a panic is a trap that would kill it for the whole page), and
//! no input may make it hold more than its cap. Random and adversarial bytes in every format.
#![cfg(not(target_arch = "wasm32"))]

use llm_ux_meter::decode::Format;
use llm_ux_meter::metrics::report::Status;
use llm_ux_meter::stream::{Ending, Stream};
use proptest::prelude::*;

fn run(format: Option<Format>, parts: &[&[u8]]) -> llm_ux_meter::metrics::report::Report {
    let mut stream = Stream::with_cap(format, 0.0, 4096);
    for (i, part) in parts.iter().enumerate() {
        stream.chunk(part, i as f64);
        stream.rendered(i as f64 + 0.5, llm_ux_meter::metrics::report::RenderSource::Frame);
    }
    stream.end(parts.len() as f64, Ending::Aborted)
}

fn every_format() -> impl Iterator<Item = Option<Format>> {
    std::iter::once(None).chain(Format::ALL.into_iter().map(Some))
}

/// Pieces that stress parsers: field names, escapes, line ends, nesting, numbers, invalid UTF-8.
fn token() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(b"data: ".to_vec()), Just(b"event: ".to_vec()), Just(b"\n".to_vec()), Just(b"\r".to_vec()),
        Just(b"\r\n".to_vec()), Just(b"{".to_vec()), Just(b"}".to_vec()), Just(b"[".to_vec()), Just(b"]".to_vec()),
        Just(b"\"".to_vec()), Just(b"\\u".to_vec()), Just(b"\\ud83d".to_vec()), Just(b"\\".to_vec()), Just(b":".to_vec()),
        Just(b",".to_vec()), Just(br#""choices":[{"delta":{"content":"#.to_vec()), Just(br#""type":"content_block_delta""#.to_vec()),
        Just(br#""usage":{"completion_tokens":1e999}"#.to_vec()), Just(b"99999999999999999999999".to_vec()),
        Just(b"[DONE]".to_vec()), Just(b"0:".to_vec()), Just(b"\xEF\xBB\xBF".to_vec()), Just(b"\xF0\x9F".to_vec()),
        Just(b"\xFF\xFE".to_vec()), Just(b"-0.e".to_vec()), Just(b"\0".to_vec()),
        proptest::collection::vec(any::<u8>(), 0..16),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_bytes_never_panic(parts in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 0..16)) {
        let parts: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        for format in every_format() {
            run(format, &parts);
        }
    }

    #[test]
    fn adversarial_pieces_never_panic(pieces in proptest::collection::vec(token(), 0..64), split in 1usize..32) {
        let body: Vec<u8> = pieces.concat();
        let parts: Vec<&[u8]> = body.chunks(split).collect();
        for format in every_format() {
            let report = run(format, &parts);
            prop_assert!(report.output_events <= body.len() as u64);
        }
    }
}

#[test]
fn nesting_bomb_is_one_malformed_event() {
    let bomb = format!("data: {}\n\n", "[".repeat(3000));
    let report = run(Some(Format::OpenAi), &[bomb.as_bytes()]);
    assert_eq!(report.anomalies.malformed_events, 1);
    assert_eq!(report.output_events, 0);
}

#[test]
fn huge_lines_are_dropped_and_the_stream_goes_on() {
    let huge = format!("data: {{\"choices\":[{{\"delta\":{{\"content\":\"{}\"}}}}]}}\n\n", "x".repeat(10_000));
    let small = "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\n";
    let body = [huge.as_str(), small].concat();
    let parts: Vec<&[u8]> = body.as_bytes().chunks(700).collect();
    let report = run(Some(Format::OpenAi), &parts);
    assert_eq!(report.anomalies.oversize_dropped, 1);
    assert_eq!(report.output_events, 1);
    let report = run(Some(Format::Ollama), &[b"{\"response\":\"", "y".repeat(5000).as_bytes(), b"\"}\n{\"response\":\"a\"}\n"]);
    assert_eq!((report.anomalies.oversize_dropped, report.output_events), (1, 1));
}

#[test]
fn out_of_range_numbers_are_ignored() {
    let body = b"data: {\"choices\":[],\"usage\":{\"completion_tokens\":184467440737095516160}}\n\n";
    let report = run(Some(Format::OpenAi), &[body]);
    assert_eq!(report.output_tokens, 0);
    assert_eq!(report.status, Status::Aborted);
}
