//! Native micro-benchmark of the core's per-byte cost: a realistic stream through the same
//! `stream::Stream` calls the wasm glue makes (`response`, one `chunk` per network read, `end`).
//!
//! ```sh
//! cargo run --release --example core_speed -- [MB] [rounds] [max chunk | event] [fixture ...]
//! valgrind --tool=callgrind --toggle-collect='core_speed::run*' target/release/examples/core_speed 4 1
//! ```
//!
//! The second counts the instructions of the core alone (deterministic, unlike the time on a shared
//! machine); divide by the bytes printed. The body is the fixtures (default: `openai-basic.sse`, the bench's format) repeated to `MB` × 10^6
//! bytes (default 4), cut into chunks of 1 to `max chunk` bytes (default 300, as the browser bench's
//! main-thread section; its throughput section reads chunks of about 877 KB) from a fixed seed.
//! `event` as the chunk size gives one event per chunk (each SSE event with its blank line, each NDJSON
//! line), as chat APIs usually stream: the per-event cost. Prints MB/s (the best of `rounds`, default 5: the machine is shared, the fastest round is the least
//! disturbed) and a digest of the whole report, so that a change to what the core computes shows.

use llm_ux_meter::metrics::report::Report;
use llm_ux_meter::stream::{Ending, Stream};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let megabytes: f64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(4.0);
    let rounds: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(5);
    // 0: one event per chunk.
    let max_chunk: u64 = args.get(2).map_or(Some(300), |a| if a == "event" { Some(0) } else { a.parse().ok() }).unwrap_or(300);
    let names: Vec<&str> = if args.len() > 3 { args[3..].iter().map(String::as_str).collect() } else { vec!["openai-basic.sse"] };
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/streams/");
    let one: Vec<u8> = names.iter().flat_map(|name| std::fs::read(format!("{dir}{name}")).expect("fixture")).collect();
    let target = (megabytes * 1e6) as usize;
    let body = one.repeat(target.div_ceil(one.len()));
    // SSE says so in its headers; other bodies are sniffed from their first bytes.
    let content_type: &[u8] = if names.iter().all(|n| n.ends_with(".sse")) { b"text/event-stream" } else { b"" };
    let chunks = if max_chunk == 0 { events(&body, content_type.is_empty()) } else { cut(&body, max_chunk, 0x9E37_79B9_7F4A_7C15) };

    let mut best = f64::INFINITY;
    let mut report = None;
    for _ in 0..rounds {
        let started = Instant::now();
        report = Some(run(&chunks, content_type));
        best = best.min(started.elapsed().as_secs_f64());
    }
    let report = report.expect("at least one round");
    println!(
        "{} bytes in {} chunks: {:.0} MB/s (best of {rounds}); {} output events, report digest {:016x}",
        body.len(),
        chunks.len(),
        body.len() as f64 / 1e6 / best,
        report.output_events,
        digest(format!("{report:?}").as_bytes()),
    );
}

/// One stream through the core, as the wasm glue drives it. Not inlined, so that callgrind can count
/// its instructions alone: `--toggle-collect='core_speed::run*'`.
#[inline(never)]
fn run(chunks: &[&[u8]], content_type: &[u8]) -> Report {
    let mut stream = Stream::new(None, 0.0);
    stream.response(200, content_type, false, false, 1.0);
    for (i, chunk) in chunks.iter().enumerate() {
        stream.chunk(chunk, 2.0 + i as f64);
    }
    stream.end(3.0 + chunks.len() as f64, Ending::Complete)
}

/// Cuts `body` into chunks of 1 to `max` bytes (xorshift64 from `seed`: the same cuts every run).
fn cut(body: &[u8], max: u64, mut seed: u64) -> Vec<&[u8]> {
    let mut chunks = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let (chunk, tail) = rest.split_at((1 + seed % max).min(rest.len() as u64) as usize);
        chunks.push(chunk);
        rest = tail;
    }
    chunks
}

/// Cuts `body` after each event: each line when `lines`, else each SSE blank line (LF line ends).
fn events(body: &[u8], lines: bool) -> Vec<&[u8]> {
    let end: &[u8] = if lines { b"\n" } else { b"\n\n" };
    let mut chunks = Vec::new();
    let mut rest = body;
    while let Some(at) = rest.windows(end.len()).position(|w| w == end) {
        let (chunk, tail) = rest.split_at(at + end.len());
        chunks.push(chunk);
        rest = tail;
    }
    if !rest.is_empty() {
        chunks.push(rest);
    }
    chunks
}

/// FNV-1a: a short fingerprint of the report's every field.
fn digest(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xCBF2_9CE4_8422_2325, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3))
}
