//! The exported functions: streams behind handles, fed and closed from JavaScript.

use super::report_layout;
use crate::decode::Format;
use crate::metrics::report::RenderSource;
use crate::stream::{Ending, Stream};
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::RefCell;
use wasm_bindgen::prelude::wasm_bindgen;

/// Module state. wasm32-unknown-unknown runs one thread and these functions never call back into
/// JavaScript, so a `RefCell` in a static is enough (std's `thread_local!` is not available without std).
struct Global<T>(RefCell<T>);

// SAFETY: the wasm build is single-threaded (no atomics target feature), so there is no other thread.
unsafe impl<T> Sync for Global<T> {}

impl<T> Global<T> {
    fn with_borrow_mut<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        f(&mut self.0.borrow_mut())
    }
}

static STREAMS: Global<Vec<Option<Stream>>> = Global(RefCell::new(Vec::new()));
static LAST_TEXT: Global<[String; 2]> = Global(RefCell::new([String::new(), String::new()]));

/// Flag bits of [`response`]'s `flags`.
const UI_STREAM_HEADER: u32 = 1;
const DATA_STREAM_HEADER: u32 = 2;

/// Opens a stream started at `start`; `format` is 0 to detect, else 1 + the index in [`Format::ALL`].
/// Returns its handle.
#[wasm_bindgen]
pub fn open(format: u32, start: f64) -> u32 {
    let format = format.checked_sub(1).and_then(|i| Format::ALL.get(i as usize).copied());
    STREAMS.with_borrow_mut(|streams| {
        let stream = Some(Stream::new(format, start));
        match streams.iter().position(Option::is_none) {
            Some(free) => {
                streams[free] = stream;
                free as u32
            }
            None => {
                streams.push(stream);
                (streams.len() - 1) as u32
            }
        }
    })
}

/// The response headers arrived (`content_type`: the header's bytes; `flags` bit 1: AI SDK UI stream header,
/// bit 2: AI SDK data stream header).
#[wasm_bindgen]
pub fn response(handle: u32, status: u16, content_type: &[u8], flags: u32, at: f64) {
    with_stream(handle, |s| s.response(status, content_type, flags & UI_STREAM_HEADER != 0, flags & DATA_STREAM_HEADER != 0, at));
}

/// The app's reader received `bytes` at `at`.
#[wasm_bindgen]
pub fn chunk(handle: u32, bytes: &[u8], at: f64) {
    #[cfg(feature = "fault-injection")]
    if bytes.windows(18).any(|w| w == b"LLM_UX_METER_FAULT") {
        core::arch::wasm32::unreachable();
    }
    with_stream(handle, |s| s.chunk(bytes, at));
}

/// A frame showing the text so far was presented at `at`; `source` indexes [`RenderSource::ALL`].
#[wasm_bindgen]
pub fn rendered(handle: u32, at: f64, source: u32) {
    let source = RenderSource::ALL.get(source as usize).copied().unwrap_or(RenderSource::Explicit);
    with_stream(handle, |s| s.rendered(at, source));
}

/// The page was hidden while the stream ran.
#[wasm_bindgen]
pub fn hidden(handle: u32) {
    with_stream(handle, Stream::set_hidden);
}

/// Ends the stream (`ending`: 0 complete, 1 aborted, 2 failed, 3 page left), frees the handle and
/// returns the report's numbers (NaN for null). Its texts are then read with [`text`].
#[wasm_bindgen]
pub fn close(handle: u32, at: f64, ending: u32) -> Vec<f64> {
    let ending = match ending {
        1 => Ending::Aborted,
        2 => Ending::Failed,
        3 => Ending::Left,
        _ => Ending::Complete,
    };
    let stream = STREAMS.with_borrow_mut(|streams| streams.get_mut(handle as usize).and_then(Option::take));
    let Some(stream) = stream else { return Vec::new() };
    let report = stream.end(at, ending);
    LAST_TEXT.with_borrow_mut(|texts| {
        texts[0] = report.model.clone().unwrap_or_default();
        texts[1] = report.finish_reason.clone().unwrap_or_default();
    });
    report_layout::numbers(&report)
}

/// A text of the last closed report, UTF-8: 0 the model, 1 the finish reason (empty when absent).
#[wasm_bindgen]
pub fn text(which: u32) -> Vec<u8> {
    LAST_TEXT.with_borrow_mut(|texts| texts.get(which as usize).map(|t| t.as_bytes().to_vec()).unwrap_or_default())
}

fn with_stream(handle: u32, f: impl FnOnce(&mut Stream)) {
    STREAMS.with_borrow_mut(|streams| {
        if let Some(Some(stream)) = streams.get_mut(handle as usize) {
            f(stream);
        }
    });
}
