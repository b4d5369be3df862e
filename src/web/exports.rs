//! The exported functions: streams behind handles, fed and closed from JavaScript (`js/lib/core.js` is
//! the other side). Plain wasm exports of numbers: bytes cross through one buffer the module lends
//! ([`buffer`]), so a call allocates nothing and the module imports nothing.

use super::report_layout::{self, LEN};
use crate::decode::Format;
use crate::metrics::report::RenderSource;
use crate::stream::{Ending, Stream};
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::UnsafeCell;

/// Module state. wasm32-unknown-unknown runs one thread and these functions never call back into
/// JavaScript (std's `thread_local!` is not available without std). No `RefCell`: its borrow flag,
/// checked and set at every access, cost 194 B brotli, and the one way to break the rule it checks is
/// local to this file (see `with_borrow_mut`).
struct Global<T>(UnsafeCell<T>);

// SAFETY: the wasm build is single-threaded (no atomics target feature), so there is no other thread.
unsafe impl<T> Sync for Global<T> {}

impl<T> Global<T> {
    /// Runs `f` with the value. `f` must not reach `with_borrow_mut` of the same static again: the
    /// statics are private to this file, and each use below takes a static at most once, never from
    /// inside itself (`text` takes `BUFFER` inside `LAST_TEXT`, `response` and `chunk` `STREAMS` inside
    /// `BUFFER`: each time a different one); JavaScript calls the exports one at a time.
    fn with_borrow_mut<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        // SAFETY: by the rule above, no other reference to the value exists while `f` runs.
        f(unsafe { &mut *self.0.get() })
    }
}

static STREAMS: Global<Vec<Option<Stream>>> = Global(UnsafeCell::new(Vec::new()));
/// Bytes in (a chunk, a content type) and out (a text of the last report).
static BUFFER: Global<Vec<u8>> = Global(UnsafeCell::new(Vec::new()));
static LAST_NUMBERS: Global<[f64; LEN]> = Global(UnsafeCell::new([0.0; LEN]));
static LAST_TEXT: Global<[String; 2]> = Global(UnsafeCell::new([String::new(), String::new()]));

/// Flag bits of [`response`]'s `flags`.
const UI_STREAM_HEADER: u32 = 1;
const DATA_STREAM_HEADER: u32 = 2;

/// The byte buffer, grown to at least `len` bytes: JavaScript writes a call's bytes there. Its address
/// may change with each call (growing may move it, and memory growth detaches JavaScript's views).
/// Amortized O(1); its size is the largest `len` asked for (the JavaScript slices chunks at 64 KiB).
#[no_mangle]
pub extern "C" fn buffer(len: usize) -> *mut u8 {
    BUFFER.with_borrow_mut(|buffer| {
        if buffer.len() < len {
            buffer.resize(len, 0);
        }
        buffer.as_mut_ptr()
    })
}

/// Opens a stream started at `start`; `format` is 0 to detect, else 1 + the index in [`Format::ALL`].
/// Returns its handle.
#[no_mangle]
pub extern "C" fn open(format: u32, start: f64) -> u32 {
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

/// The response headers arrived: the content type is the buffer's first `len` bytes; `flags` bit 1:
/// AI SDK UI stream header, bit 2: AI SDK data stream header.
#[no_mangle]
pub extern "C" fn response(handle: u32, status: u32, len: usize, flags: u32, at: f64) {
    let status = u16::try_from(status).unwrap_or(u16::MAX);
    with_bytes(len, |content_type| {
        with_stream(handle, |s| s.response(status, content_type, flags & UI_STREAM_HEADER != 0, flags & DATA_STREAM_HEADER != 0, at));
    });
}

/// The app's reader received the buffer's first `len` bytes at `at`.
#[no_mangle]
pub extern "C" fn chunk(handle: u32, len: usize, at: f64) {
    with_bytes(len, |bytes| {
        #[cfg(feature = "fault-injection")]
        if bytes.windows(18).any(|w| w == b"LLM_UX_METER_FAULT") {
            core::arch::wasm32::unreachable();
        }
        with_stream(handle, |s| s.chunk(bytes, at));
    });
}

/// A frame showing the text so far was presented at `at`; `source` indexes [`RenderSource::ALL`].
#[no_mangle]
pub extern "C" fn rendered(handle: u32, at: f64, source: u32) {
    let source = RenderSource::ALL.get(source as usize).copied().unwrap_or(RenderSource::Explicit);
    with_stream(handle, |s| s.rendered(at, source));
}

/// The page was hidden while the stream ran.
#[no_mangle]
pub extern "C" fn hidden(handle: u32) {
    with_stream(handle, Stream::set_hidden);
}

/// Ends the stream (`ending`: 0 complete, 1 aborted, 2 failed, 3 page left) and frees the handle.
/// Returns the address of the report's [`LEN`] numbers (NaN for null), valid until the next call, or 0
/// for an unknown handle. Its texts are then read with [`text`].
#[no_mangle]
pub extern "C" fn close(handle: u32, at: f64, ending: u32) -> *const f64 {
    let ending = match ending {
        1 => Ending::Aborted,
        2 => Ending::Failed,
        3 => Ending::Left,
        _ => Ending::Complete,
    };
    let stream = STREAMS.with_borrow_mut(|streams| streams.get_mut(handle as usize).and_then(Option::take));
    let Some(stream) = stream else { return core::ptr::null() };
    let report = stream.end(at, ending);
    let numbers = LAST_NUMBERS.with_borrow_mut(|numbers| {
        *numbers = report_layout::numbers(&report);
        numbers.as_ptr()
    });
    LAST_TEXT.with_borrow_mut(|texts| *texts = [report.model.unwrap_or_default(), report.finish_reason.unwrap_or_default()]);
    numbers
}

/// Copies a text of the last closed report, UTF-8, to the start of the buffer and returns its length:
/// 0 the model, 1 the finish reason (empty when absent).
#[no_mangle]
pub extern "C" fn text(which: u32) -> usize {
    LAST_TEXT.with_borrow_mut(|texts| {
        let text = texts.get(which as usize).map_or(&[][..], |t| t.as_bytes());
        let start = buffer(text.len());
        // SAFETY: `buffer` made room for `text.len()` bytes at `start`; a `String` never overlaps it.
        unsafe { core::ptr::copy_nonoverlapping(text.as_ptr(), start, text.len()) };
        text.len()
    })
}

/// Runs `f` over the buffer's first `len` bytes (fewer if the buffer is shorter: never out of bounds).
fn with_bytes(len: usize, f: impl FnOnce(&[u8])) {
    BUFFER.with_borrow_mut(|buffer| f(&buffer[..len.min(buffer.len())]));
}

fn with_stream(handle: u32, f: impl FnOnce(&mut Stream)) {
    STREAMS.with_borrow_mut(|streams| {
        if let Some(Some(stream)) = streams.get_mut(handle as usize) {
            f(stream);
        }
    });
}
