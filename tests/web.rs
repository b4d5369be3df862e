//! The WebAssembly interface as JavaScript calls it, in headless Chromium: handles, bytes through the
//! lent buffer, the report's number layout, and calls on unknown or closed handles doing nothing.
#![cfg(target_arch = "wasm32")]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);
use wasm_bindgen_test::wasm_bindgen_test as test;

use llm_ux_meter::web::{self, report_layout::LEN};

/// Writes `bytes` into the module's buffer, as `js/lib/core.js` does, and returns their length.
fn put(bytes: &[u8]) -> usize {
    let start = web::buffer(bytes.len());
    // SAFETY: `buffer` returned room for `bytes.len()` bytes.
    unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), start, bytes.len()) };
    bytes.len()
}

fn response(handle: u32, status: u32, content_type: &[u8], flags: u32, at: f64) {
    web::response(handle, status, put(content_type), flags, at);
}

fn chunk(handle: u32, bytes: &[u8], at: f64) {
    web::chunk(handle, put(bytes), at);
}

/// The report's numbers, or `None` for an unknown handle.
fn close(handle: u32, at: f64, ending: u32) -> Option<[f64; LEN]> {
    let numbers = web::close(handle, at, ending);
    // SAFETY: a non-null address points at `LEN` numbers, valid until the next call.
    (!numbers.is_null()).then(|| unsafe { *numbers.cast::<[f64; LEN]>() })
}

fn text(which: u32) -> Vec<u8> {
    let len = web::text(which);
    // SAFETY: `text` wrote `len` bytes at the buffer's start; `buffer(0)` returns that start unmoved.
    unsafe { core::slice::from_raw_parts(web::buffer(0), len) }.to_vec()
}

const SSE: &[u8] = b"data: {\"model\":\"m-1\",\"choices\":[{\"delta\":{\"content\":\"Hello\"}}]}\n\n";
const DONE: &[u8] = b"data: {\"choices\":[{\"delta\":{\"content\":\" there\"},\"finish_reason\":\"stop\"}],\"usage\":{\"completion_tokens\":2}}\n\ndata: [DONE]\n\n";

#[test]
fn a_stream_round_trips_through_handles() {
    let handle = web::open(0, 0.0);
    response(handle, 200, b"text/event-stream", 0, 10.0);
    chunk(handle, &SSE[..7], 20.0);
    chunk(handle, &SSE[7..], 25.0);
    web::rendered(handle, 30.0, 0);
    chunk(handle, DONE, 45.0);
    web::rendered(handle, 50.0, 0);
    let n = close(handle, 60.0, 0).expect("an open handle");
    assert_eq!(n[0], 0.0, "format: openai");
    assert_eq!(n[1], 0.0, "status: ok");
    assert_eq!(n[2], 200.0);
    assert_eq!(n[3], 0.0, "render source: dom");
    assert_eq!((n[4], n[5], n[6]), (10.0, 30.0, 25.0), "ttfb, ttft, ttft arrival");
    assert_eq!((n[8], n[9]), (20.0, 20.0), "tpot, tpot arrival");
    assert_eq!((n[11], n[12], n[14]), (2.0, 0.0, 2.0), "tokens from usage, two events");
    assert_eq!(n[38], 1.0, "definition version");
    assert_eq!(n[39], 1.0, "clock step: every time a whole ms");
    assert_eq!(text(0), b"m-1");
    assert_eq!(text(1), b"stop");
}

#[test]
fn unknown_and_closed_handles_are_ignored() {
    chunk(9999, SSE, 1.0);
    assert!(close(9999, 1.0, 0).is_none());
    let handle = web::open(1, 0.0);
    assert!(close(handle, 1.0, 1).is_some());
    chunk(handle, SSE, 2.0);
    assert!(close(handle, 3.0, 0).is_none());
}

#[test]
fn render_fields_are_nan_without_paint() {
    let handle = web::open(0, 0.0);
    chunk(handle, SSE, 5.0);
    let n = close(handle, 6.0, 1).expect("an open handle");
    assert!(n[5].is_nan() && n[3].is_nan(), "no paint: ttft and render source null");
    assert_eq!(n[6], 5.0);
    assert_eq!(n[1], 1.0, "aborted before the end");
}
