//! The WebAssembly interface as JavaScript calls it, in headless Chromium: handles, byte chunks, the
//! report's number layout, and calls on unknown or closed handles doing nothing.
#![cfg(target_arch = "wasm32")]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);
use wasm_bindgen_test::wasm_bindgen_test as test;

use llm_ux_meter::web;

const SSE: &[u8] = b"data: {\"model\":\"m-1\",\"choices\":[{\"delta\":{\"content\":\"Hello\"}}]}\n\n";
const DONE: &[u8] = b"data: {\"choices\":[{\"delta\":{\"content\":\" there\"},\"finish_reason\":\"stop\"}],\"usage\":{\"completion_tokens\":2}}\n\ndata: [DONE]\n\n";

#[test]
fn a_stream_round_trips_through_handles() {
    let handle = web::open(0, 0.0);
    web::response(handle, 200, b"text/event-stream", 0, 10.0);
    web::chunk(handle, &SSE[..7], 20.0);
    web::chunk(handle, &SSE[7..], 25.0);
    web::rendered(handle, 30.0, 0);
    web::chunk(handle, DONE, 45.0);
    web::rendered(handle, 50.0, 0);
    let n = web::close(handle, 60.0, 0);
    assert_eq!(n.len(), 40);
    assert_eq!(n[0], 0.0, "format: openai");
    assert_eq!(n[1], 0.0, "status: ok");
    assert_eq!(n[2], 200.0);
    assert_eq!(n[3], 0.0, "render source: dom");
    assert_eq!((n[4], n[5], n[6]), (10.0, 30.0, 25.0), "ttfb, ttft, ttft arrival");
    assert_eq!((n[8], n[9]), (20.0, 20.0), "tpot, tpot arrival");
    assert_eq!((n[11], n[12], n[14]), (2.0, 0.0, 2.0), "tokens from usage, two events");
    assert_eq!(n[38], 1.0, "definition version");
    assert_eq!(n[39], 1.0, "clock step: every time a whole ms");
    assert_eq!(web::text(0), b"m-1");
    assert_eq!(web::text(1), b"stop");
}

#[test]
fn unknown_and_closed_handles_are_ignored() {
    web::chunk(9999, SSE, 1.0);
    assert!(web::close(9999, 1.0, 0).is_empty());
    let handle = web::open(1, 0.0);
    assert!(!web::close(handle, 1.0, 1).is_empty());
    web::chunk(handle, SSE, 2.0);
    assert!(web::close(handle, 3.0, 0).is_empty());
}

#[test]
fn render_fields_are_nan_without_paint() {
    let handle = web::open(0, 0.0);
    web::chunk(handle, SSE, 5.0);
    let n = web::close(handle, 6.0, 1);
    assert!(n[5].is_nan() && n[3].is_nan(), "no paint: ttft and render source null");
    assert_eq!(n[6], 5.0);
    assert_eq!(n[1], 1.0, "aborted before the end");
}
