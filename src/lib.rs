//! # llm-ux-meter
//!
//! Measures how fast a streamed LLM answer feels to the person reading it: time to first token (TTFT)
//! and time per output token (TPOT) as painted in the page, with their arrival twins, gap quantiles,
//! jitter and stalls. The formulas are in `docs/metrics.md`.
//!
//! The core is pure Rust with no browser dependency, tested natively:
//! - [`framing`]: bytes to events (WHATWG server-sent events, newline-delimited lines), any chunking;
//! - [`decode`]: events to output deltas, model, usage and finish reason, for each provider format;
//! - [`metrics`]: the timeline, quantile sketch, token estimate and report;
//! - [`stream`]: one stream tying them together.
//!
//! The browser glue ([`web`]: its exports are wasm32 only) exposes [`stream::Stream`] to JavaScript.

#![cfg_attr(feature = "slim", no_std)]

extern crate alloc;

pub mod decode;
pub mod framing;
pub mod json;
mod math;
pub mod metrics;
mod scan;
pub mod stream;
pub mod utf8;

pub mod web;

/// The slim wasm build has no std: a panic (there should be none; fuzzing looks for them) traps at once,
/// without the formatting machinery std's handler would pull in. The JS side then disables the meter.
#[cfg(all(feature = "slim", target_arch = "wasm32"))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    core::arch::wasm32::unreachable()
}
