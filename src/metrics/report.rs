//! The per-stream report: the figures of `docs/metrics.md`, definition version [`DEFINITION_VERSION`].

use super::cadence::Points;
use super::stalls::Stalls;
use alloc::string::String;
use crate::decode::Format;

/// The metric definition version every report carries; records of different versions are never mixed.
pub const DEFINITION_VERSION: u32 = 1;

/// How a stream ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Ok,
    /// The app or the user cancelled before the stream's end.
    Aborted,
    /// The response status was 400 or more.
    HttpError,
    /// A network or stream error, or an error event inside the stream.
    Error,
    /// The page was hidden or left before the end.
    Incomplete,
}

impl Status {
    pub const ALL: [Status; 5] = [Status::Ok, Status::Aborted, Status::HttpError, Status::Error, Status::Incomplete];

    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Aborted => "aborted",
            Status::HttpError => "http_error",
            Status::Error => "error",
            Status::Incomplete => "incomplete",
        }
    }
}

/// Where paint times came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenderSource {
    /// A MutationObserver saw the text change.
    Dom,
    /// The app called `rendered()`.
    Explicit,
    /// No render signal: the next animation frame after the app read the chunk.
    Frame,
}

impl RenderSource {
    pub const ALL: [RenderSource; 3] = [RenderSource::Dom, RenderSource::Explicit, RenderSource::Frame];

    pub fn name(self) -> &'static str {
        match self {
            RenderSource::Dom => "dom",
            RenderSource::Explicit => "explicit",
            RenderSource::Frame => "frame",
        }
    }
}

/// Where the output token count came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenSource {
    /// The stream's own usage fields.
    Usage,
    /// Estimated from the streamed text.
    Estimate,
}

impl TokenSource {
    pub const ALL: [TokenSource; 2] = [TokenSource::Usage, TokenSource::Estimate];

    pub fn name(self) -> &'static str {
        match self {
            TokenSource::Usage => "usage",
            TokenSource::Estimate => "estimate",
        }
    }
}

/// Counts per output kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KindCounts {
    pub answer: u64,
    pub reasoning: u64,
    pub tool: u64,
}

/// p50, p90, p99 and max of a set of gaps, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GapQuantiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

/// p50 and p90 of render delays, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DelayQuantiles {
    pub p50: f64,
    pub p90: f64,
}

/// What went wrong while reading the stream, without stopping it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Anomalies {
    /// Events whose payload was not valid JSON (skipped).
    pub malformed_events: u32,
    /// Events or lines larger than the cap (dropped).
    pub oversize_dropped: u32,
    /// The last event had no closing blank line (or line end) and was taken at end of stream.
    pub unterminated_last: bool,
}

/// One stream's figures. Times are milliseconds; render fields are `None` when the stream had no render
/// signal or overlapped a hidden period.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub format: Option<Format>,
    pub model: Option<String>,
    pub finish_reason: Option<String>,
    pub status: Status,
    pub http_status: Option<u16>,
    pub render_source: Option<RenderSource>,
    pub ttfb_ms: Option<f64>,
    pub ttft_ms: Option<f64>,
    pub ttft_arrival_ms: Option<f64>,
    pub ttfo_ms: Option<f64>,
    pub tpot_ms: Option<f64>,
    pub tpot_arrival_ms: Option<f64>,
    pub tokens_per_second: Option<f64>,
    pub output_tokens: u64,
    pub token_source: TokenSource,
    pub reasoning_tokens: u64,
    pub output_events: u64,
    /// Output events per kind: answer text, reasoning, tool arguments.
    pub output_events_by_kind: KindCounts,
    pub gaps: Option<GapQuantiles>,
    pub arrival_gaps: Option<GapQuantiles>,
    pub jitter_ms: Option<f64>,
    pub stalls: Option<Stalls>,
    pub render_delay: Option<DelayQuantiles>,
    pub duration_ms: Option<f64>,
    /// `[ms since start, output tokens shown]` on the render timeline (the arrival timeline when the
    /// stream was not rendered): see [`crate::metrics::cadence`]. Empty when nothing arrived.
    pub cadence: Points,
    pub hidden: bool,
    pub anomalies: Anomalies,
    /// The step of the clock the stream was timed with (ms), read off its times: see
    /// [`crate::metrics::clock`]. Times and gaps are whole multiples of it.
    pub clock_ms: f64,
    pub def: u32,
}
