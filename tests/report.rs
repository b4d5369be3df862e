//! The report of a stream replayed with explicit timestamps, field by field against hand-computed
//! values (`tests/fixtures/replay/openai-timed.json`, shared with the Node test of the package), plus
//! the rules for status, hidden pages, usage and render fields, the clock step, and the figures of a
//! stream timed with a 1 ms clock. Runs natively and in headless Chromium and Firefox.

#[cfg(target_arch = "wasm32")]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use llm_ux_meter::decode::Format;
use llm_ux_meter::metrics::report::{RenderSource, Report, Status, TokenSource};
use llm_ux_meter::metrics::sketch::RELATIVE_ACCURACY;
use llm_ux_meter::stream::{Ending, Stream};
use serde_json::Value as Json;

const REPLAY: &str = include_str!("fixtures/replay/openai-timed.json");

fn replay(doc: &Json, hide: bool) -> Report {
    let mut stream = Stream::new(None, doc["start"].as_f64().unwrap());
    let response = &doc["response"];
    stream.response(response["status"].as_u64().unwrap() as u16, response["contentType"].as_str().unwrap().as_bytes(), false, false, response["at"].as_f64().unwrap());
    for step in doc["steps"].as_array().unwrap() {
        let at = step["at"].as_f64().unwrap();
        match step["chunk"].as_str() {
            Some(chunk) => stream.chunk(chunk.as_bytes(), at),
            None => stream.rendered(at, RenderSource::Explicit),
        }
    }
    if hide {
        stream.set_hidden();
    }
    stream.end(doc["end"].as_f64().unwrap(), Ending::Complete)
}

fn close(got: f64, want: &Json, relative: f64, what: &str) {
    let want = want.as_f64().unwrap();
    assert!((got - want).abs() <= want.abs() * relative + 1e-9, "{what}: got {got}, want {want}");
}

#[test]
fn replayed_stream_matches_hand_computed_report() {
    let doc: Json = serde_json::from_str(REPLAY).unwrap();
    let want = &doc["expected"];
    let r = replay(&doc, false);
    assert_eq!(r.model.as_deref(), want["model"].as_str());
    assert_eq!(r.format.map(Format::name), want["format"].as_str());
    assert_eq!(r.status.name(), want["status"]);
    assert_eq!(r.http_status.map(u64::from), want["httpStatus"].as_u64());
    assert_eq!(r.render_source.map(RenderSource::name), want["renderSource"].as_str());
    assert_eq!(r.finish_reason.as_deref(), want["finishReason"].as_str());
    for (got, key) in [
        (r.ttfb_ms, "ttfbMs"),
        (r.ttft_ms, "ttftMs"),
        (r.ttft_arrival_ms, "ttftArrivalMs"),
        (r.ttfo_ms, "ttfoMs"),
        (r.tpot_ms, "tpotMs"),
        (r.tpot_arrival_ms, "tpotArrivalMs"),
        (r.tokens_per_second, "tokensPerSecond"),
        (r.jitter_ms, "jitterMs"),
        (r.duration_ms, "durationMs"),
    ] {
        close(got.unwrap_or_else(|| panic!("{key} is null")), &want[key], 1e-12, key);
    }
    assert_eq!(r.output_tokens, want["outputTokens"].as_u64().unwrap());
    assert_eq!(r.token_source.name(), want["tokenSource"]);
    assert_eq!(r.reasoning_tokens, want["reasoningTokens"].as_u64().unwrap());
    assert_eq!(r.output_events, want["outputEvents"].as_u64().unwrap());
    assert_eq!(r.output_events_by_kind.answer, want["outputEventsByKind"]["answer"].as_u64().unwrap());
    let gaps = r.gaps.unwrap();
    let arrival = r.arrival_gaps.unwrap();
    for (got, want) in [
        (gaps.p50, &want["gaps"]["p50"]),
        (gaps.p90, &want["gaps"]["p90"]),
        (gaps.p99, &want["gaps"]["p99"]),
        (arrival.p50, &want["arrivalGaps"]["p50"]),
        (arrival.p90, &want["arrivalGaps"]["p90"]),
        (arrival.p99, &want["arrivalGaps"]["p99"]),
    ] {
        close(got, want, RELATIVE_ACCURACY, "gap quantile");
    }
    close(gaps.max, &want["gaps"]["max"], 0.0, "gaps.max");
    close(arrival.max, &want["arrivalGaps"]["max"], 0.0, "arrivalGaps.max");
    let stalls = r.stalls.unwrap();
    assert_eq!(u64::from(stalls.count), want["stalls"]["count"].as_u64().unwrap());
    assert_eq!(u64::from(stalls.count_1000), want["stalls"]["count1000"].as_u64().unwrap());
    close(stalls.longest_ms, &want["stalls"]["longestMs"], 0.0, "longest stall");
    close(stalls.total_ms, &want["stalls"]["totalMs"], 0.0, "stall time");
    let delay = r.render_delay.unwrap();
    close(delay.p50, &want["renderDelay"]["p50"], RELATIVE_ACCURACY, "render delay p50");
    close(delay.p90, &want["renderDelay"]["p90"], RELATIVE_ACCURACY, "render delay p90");
    assert_eq!(json_points(&r.cadence), want["cadence"]);
    assert_eq!(r.hidden, want["hidden"]);
    assert_eq!(r.clock_ms, want["clockMs"].as_f64().unwrap());
    assert_eq!(u64::from(r.def), want["def"].as_u64().unwrap());
    assert_eq!(r.anomalies.unterminated_last, want["anomalies"]["unterminatedLast"]);
}

#[test]
fn same_input_gives_the_same_report_bit_for_bit() {
    let doc: Json = serde_json::from_str(REPLAY).unwrap();
    assert_eq!(format!("{:?}", replay(&doc, false)), format!("{:?}", replay(&doc, false)));
}

#[test]
fn hidden_stream_keeps_arrival_and_voids_render_fields() {
    let doc: Json = serde_json::from_str(REPLAY).unwrap();
    let r = replay(&doc, true);
    assert!(r.hidden);
    assert_eq!((r.ttft_ms, r.tpot_ms, r.ttfo_ms, r.duration_ms, r.jitter_ms), (None, None, None, None, None));
    assert_eq!((r.gaps, r.stalls, r.render_delay, r.render_source), (None, None, None, None));
    assert_eq!((r.ttft_arrival_ms, r.tpot_arrival_ms), (Some(100.0), Some(200.0)));
    assert_eq!(json_points(&r.cadence), doc["expected"]["hiddenCadence"], "the arrival timeline stands in");
}

fn json_points(points: &[[u32; 2]]) -> Json {
    serde_json::to_value(points).unwrap()
}

fn openai(content: &str) -> String {
    format!("data: {{\"choices\":[{{\"delta\":{{\"content\":\"{content}\"}}}}]}}\n\n")
}

#[test]
fn no_render_signal_means_null_render_fields() {
    let mut stream = Stream::new(Some(Format::OpenAi), 0.0);
    stream.chunk(openai("one").as_bytes(), 10.0);
    stream.chunk(openai(" two three").as_bytes(), 30.0);
    let r = stream.end(31.0, Ending::Complete);
    assert_eq!((r.ttft_ms, r.tpot_ms, r.render_source, r.stalls), (None, None, None, None));
    assert_eq!(r.token_source, TokenSource::Estimate);
    assert_eq!(r.ttft_arrival_ms, Some(10.0));
    assert_eq!(r.tpot_arrival_ms, Some(20.0 / (r.output_tokens - 1) as f64));
}

#[test]
fn tpot_is_null_below_two_tokens() {
    let mut stream = Stream::new(Some(Format::OpenAi), 0.0);
    stream.chunk(openai("Hi").as_bytes(), 10.0);
    stream.rendered(12.0, RenderSource::Explicit);
    let r = stream.end(13.0, Ending::Complete);
    assert_eq!(r.output_tokens, 1);
    assert_eq!((r.tpot_ms, r.tpot_arrival_ms, r.tokens_per_second), (None, None, None));
    assert_eq!(r.ttft_ms, Some(12.0));
}

#[test]
fn clock_step_is_read_off_every_time_the_stream_was_given() {
    let step = |times: [f64; 5]| {
        let mut stream = Stream::new(Some(Format::OpenAi), times[0]);
        stream.response(200, b"text/event-stream", false, false, times[1]);
        stream.chunk(openai("one").as_bytes(), times[2]);
        stream.rendered(times[3], RenderSource::Explicit);
        stream.end(times[4], Ending::Complete).clock_ms
    };
    assert_eq!(step([1000.0, 1050.0, 1100.0, 1116.0, 1120.0]), 1.0);
    // A finer time anywhere, the end included, makes the step finer.
    assert_eq!(step([1000.0, 1050.3, 1100.0, 1116.0, 1120.0]), 0.1);
    assert_eq!(step([1000.0, 1050.0, 1100.0, 1116.0, 1120.005]), 0.005);
    assert_eq!(step([1000.0, 1050.0, 1100.0, 1116.7, 1120.0]), 0.1);
}

/// `n` events a chunk each, 16.7 to 24 ms apart, each painted 3.1 ms after it arrived; every time
/// passed through `clock` (the identity, or a coarser clock).
fn paced_stream(n: usize, clock: impl Fn(f64) -> f64) -> Report {
    let mut stream = Stream::new(Some(Format::OpenAi), clock(1000.0));
    stream.response(200, b"text/event-stream", false, false, clock(1180.37));
    let mut at = 1412.29;
    for i in 0..n {
        stream.chunk(openai("word").as_bytes(), clock(at));
        stream.rendered(clock(at + 3.1), RenderSource::Explicit);
        at += 16.7 + (i * 7 % 11) as f64 * 0.73;
    }
    stream.end(clock(at), Ending::Complete)
}

#[test]
fn at_a_1_ms_clock_times_are_within_1_ms_and_tpot_within_1_over_n_minus_1() {
    let exact = paced_stream(60, |t| t);
    let coarse = paced_stream(60, f64::floor);
    assert!(exact.clock_ms < 1.0 && coarse.clock_ms == 1.0, "{} {}", exact.clock_ms, coarse.clock_ms);
    assert_eq!(exact.output_tokens, coarse.output_tokens);
    let within = |got: Option<f64>, want: Option<f64>, bound: f64, what: &str| {
        let (got, want) = (got.unwrap(), want.unwrap());
        assert!((got - want).abs() < bound, "{what}: {got} at 1 ms, {want} exactly (bound {bound})");
    };
    for (got, want, what) in [
        (coarse.ttfb_ms, exact.ttfb_ms, "ttfb"),
        (coarse.ttft_ms, exact.ttft_ms, "ttft"),
        (coarse.ttft_arrival_ms, exact.ttft_arrival_ms, "ttft arrival"),
        (coarse.duration_ms, exact.duration_ms, "duration"),
        (coarse.jitter_ms, exact.jitter_ms, "jitter"),
    ] {
        within(got, want, 1.0, what);
    }
    let per_token = 1.0 / (exact.output_tokens - 1) as f64;
    within(coarse.tpot_ms, exact.tpot_ms, per_token, "tpot");
    within(coarse.tpot_arrival_ms, exact.tpot_arrival_ms, per_token, "tpot arrival");
    // Quantiles: each gap is within 1 ms, and the sketch adds its relative error on either side.
    let (g, e) = (coarse.gaps.unwrap(), exact.gaps.unwrap());
    for (got, want) in [(g.p50, e.p50), (g.p90, e.p90), (g.p99, e.p99)] {
        within(Some(got), Some(want), 1.0 + 2.0 * RELATIVE_ACCURACY * want, "gap quantile");
    }
    let (d, e) = (coarse.render_delay.unwrap(), exact.render_delay.unwrap());
    within(Some(d.p50), Some(e.p50), 1.0 + 2.0 * RELATIVE_ACCURACY * e.p50, "render delay");
}

#[test]
fn status_follows_what_the_stream_said() {
    let done = "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    let cases = [
        (Some(done), 200, Ending::Aborted, Status::Ok),
        (None, 200, Ending::Aborted, Status::Aborted),
        (None, 200, Ending::Left, Status::Incomplete),
        (None, 200, Ending::Failed, Status::Error),
        (Some(done), 500, Ending::Complete, Status::HttpError),
        (Some("event: error\ndata: {\"type\":\"error\"}\n\n"), 200, Ending::Complete, Status::Error),
    ];
    for (tail, http, ending, want) in cases {
        let mut stream = Stream::new(None, 0.0);
        stream.response(http, b"text/event-stream", false, false, 1.0);
        stream.chunk(openai("a").as_bytes(), 2.0);
        if let Some(tail) = tail {
            stream.chunk(tail.as_bytes(), 3.0);
        }
        assert_eq!(stream.end(4.0, ending).status, want, "{tail:?} {http} {ending:?}");
    }
}

#[test]
fn hidden_reasoning_tokens_are_not_output_tokens() {
    let usage = "data: {\"choices\":[],\"usage\":{\"completion_tokens\":120,\"completion_tokens_details\":{\"reasoning_tokens\":100}}}\n\n";
    let mut stream = Stream::new(Some(Format::OpenAi), 0.0);
    stream.chunk([openai("visible answer").as_str(), usage].concat().as_bytes(), 5.0);
    let r = stream.end(6.0, Ending::Complete);
    assert_eq!((r.output_tokens, r.reasoning_tokens, r.token_source), (20, 100, TokenSource::Usage));

    let reasoning = "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"thinking aloud\"}}]}\n\n";
    let mut stream = Stream::new(Some(Format::OpenAi), 0.0);
    stream.chunk([reasoning, openai("answer").as_str(), usage].concat().as_bytes(), 5.0);
    assert_eq!(stream.end(6.0, Ending::Complete).output_tokens, 120);
}

#[test]
fn explicit_signals_name_the_render_source_even_after_a_dom_paint() {
    // The DOM observer's paint of a frame may land before the app's own `rendered()` for that frame.
    let mut stream = Stream::new(Some(Format::OpenAi), 0.0);
    stream.chunk(openai("one").as_bytes(), 10.0);
    stream.rendered(16.0, RenderSource::Dom);
    stream.rendered(16.5, RenderSource::Explicit);
    stream.chunk(openai("two").as_bytes(), 30.0);
    stream.rendered(33.0, RenderSource::Explicit);
    stream.rendered(34.0, RenderSource::Dom);
    let r = stream.end(35.0, Ending::Complete);
    assert_eq!(r.render_source, Some(RenderSource::Explicit));
    assert_eq!(r.ttft_ms, Some(16.0));
}

#[test]
fn render_delay_and_ttfo_follow_answer_text() {
    let reasoning = "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"hmm\"}}]}\n\n";
    let mut stream = Stream::new(Some(Format::OpenAi), 0.0);
    stream.chunk(reasoning.as_bytes(), 10.0);
    stream.rendered(20.0, RenderSource::Dom);
    stream.chunk(openai("yes").as_bytes(), 50.0);
    stream.rendered(58.0, RenderSource::Dom);
    stream.rendered(70.0, RenderSource::Dom);
    let r = stream.end(71.0, Ending::Complete);
    assert_eq!((r.ttft_ms, r.ttfo_ms, r.duration_ms), (Some(20.0), Some(58.0), Some(58.0)));
    assert_eq!(r.render_source, Some(RenderSource::Dom));
    let delay = r.render_delay.unwrap();
    // Delays 10 and 8 ms: rank floor(q × 1) is the smaller for both quantiles.
    assert!((delay.p50 - 8.0).abs() <= 0.08 && (delay.p90 - 8.0).abs() <= 0.08, "{delay:?}");
    assert_eq!(r.gaps.unwrap().max, 38.0);
}
