//! One metered stream: bytes in, with the times they arrived and were painted; a [`Report`] out.
//!
//! ```
//! use llm_ux_meter::stream::{Ending, Stream};
//! let mut stream = Stream::new(None, 0.0);
//! stream.response(200, b"text/event-stream", false, false, 10.0);
//! stream.chunk(b"data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n", 20.0);
//! stream.chunk(b"data: {\"choices\":[{\"delta\":{\"content\":\" there\"}}]}\n\ndata: [DONE]\n\n", 40.0);
//! let report = stream.end(41.0, Ending::Complete);
//! assert_eq!(report.ttft_arrival_ms, Some(20.0));
//! ```

mod framer;
mod tally;

use crate::decode::{Format, OutputKind};
use crate::framing::DEFAULT_CAP;
use crate::metrics::cadence::Points;
use crate::metrics::clock::ClockStep;
use crate::metrics::report::{Anomalies, DelayQuantiles, GapQuantiles, KindCounts, RenderSource, Report, Status, TokenSource, DEFINITION_VERSION};
use crate::metrics::sketch::Sketch;
use crate::metrics::timeline::Timeline;
use crate::metrics::token_estimate::TokenEstimate;
use framer::Framer;
use tally::Tally;

pub use tally::MAX_NAME_BYTES;

/// How the body reading ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The body was read to its end.
    Complete,
    /// The app or the user cancelled.
    Aborted,
    /// A network or read error.
    Failed,
    /// The page was hidden or left before the end.
    Left,
}

/// The state of one stream. Memory is O(1) in the stream's length (bounded by the framing cap).
#[derive(Clone, Debug)]
pub struct Stream {
    framer: Framer,
    tally: Tally,
    timeline: Timeline,
    http_status: Option<u16>,
    render_source: Option<RenderSource>,
    hidden: bool,
    last_chunk_at: Option<f64>,
    clock: ClockStep,
}

impl Stream {
    /// A stream started at `start` (ms); `format` `None` detects it.
    pub fn new(format: Option<Format>, start: f64) -> Self {
        Self::with_cap(format, start, DEFAULT_CAP)
    }

    /// As [`Stream::new`], dropping any event or line larger than `cap` bytes.
    pub fn with_cap(format: Option<Format>, start: f64, cap: usize) -> Self {
        let mut clock = ClockStep::default();
        clock.observe(start);
        Stream {
            framer: Framer::new(format, cap),
            tally: Tally::default(),
            timeline: Timeline::new(start),
            http_status: None,
            render_source: None,
            hidden: false,
            last_chunk_at: None,
            clock,
        }
    }

    /// The response headers arrived at `at`: gives TTFB, the HTTP status and format hints.
    pub fn response(&mut self, status: u16, content_type: &[u8], ui_stream_header: bool, data_stream_header: bool, at: f64) {
        self.http_status = Some(status);
        self.clock.observe(at);
        self.timeline.headers_at.get_or_insert(at);
        self.framer.response(content_type, ui_stream_header, data_stream_header);
    }

    /// The app's reader received `bytes` at `at`. O(len).
    pub fn chunk(&mut self, bytes: &[u8], at: f64) {
        self.framer.push(bytes, &mut self.tally);
        self.clock.observe(at);
        self.last_chunk_at = Some(at);
        self.note_arrivals(at);
    }

    /// A frame showing all text received so far was presented at `at`. The first source names the
    /// stream's render timeline, except that explicit signals take over: a hooked stream switches to
    /// them at the app's first `rendered()`, which may come after the DOM observer's paint of that frame.
    pub fn rendered(&mut self, at: f64, source: RenderSource) {
        if source == RenderSource::Explicit {
            self.render_source = Some(source);
        } else {
            self.render_source.get_or_insert(source);
        }
        self.clock.observe(at);
        self.timeline.paint(at);
    }

    /// The page was hidden while the stream ran: no frames are painted then, so render figures are void.
    pub fn set_hidden(&mut self) {
        self.hidden = true;
    }

    /// The format, once known.
    pub fn format(&self) -> Option<Format> {
        self.framer.format()
    }

    /// Ends the stream at `at` and computes its report.
    pub fn end(mut self, at: f64, ending: Ending) -> Report {
        self.framer.finish(&mut self.tally);
        self.tally.finish();
        self.clock.observe(at);
        // An event taken at the end arrived with the last chunk, not when the end was noticed.
        self.note_arrivals(self.last_chunk_at.unwrap_or(at));
        let mut report = self.report(ending);
        let t = &mut self.timeline;
        let cadence = if report.ttft_ms.is_some() { &mut t.paint_cadence } else { &mut t.arrival_cadence };
        cadence.write_points(t.start, report.output_tokens, report.output_events, &mut report.cadence);
        report
    }

    fn note_arrivals(&mut self, at: f64) {
        let (events, has_answer) = self.tally.take_new();
        self.timeline.arrive(at, events, has_answer);
    }

    /// The report, taking the texts: `end` consumes the stream.
    fn report(&mut self, ending: Ending) -> Report {
        let (model, finish_reason) = (self.tally.model.take(), self.tally.finish_reason.take());
        let t = &self.timeline;
        let tally = &self.tally;
        let since_start = |at: Option<f64>| at.map(|at| at - t.start);
        let reasoning_streamed = tally.events[OutputKind::Reasoning.index()] > 0;
        let estimate = |kind: OutputKind| tally.estimates[kind.index()].tokens();
        let (output_tokens, token_source) = match tally.usage.and_then(|u| u.output.map(|n| (n, u.reasoning))) {
            // Reasoning tokens that were counted but never streamed were not shown to the user.
            Some((n, hidden)) => (n.saturating_sub(if reasoning_streamed { 0 } else { hidden.unwrap_or(0) }), TokenSource::Usage),
            None => (tally.estimates.iter().map(TokenEstimate::tokens).sum(), TokenSource::Estimate),
        };
        let reasoning_tokens = match tally.usage.and_then(|u| u.reasoning) {
            Some(n) => n,
            None => estimate(OutputKind::Reasoning),
        };
        let per_token = |first: Option<f64>, last: Option<f64>| match (first, last) {
            (Some(first), Some(last)) if output_tokens >= 2 => Some((last - first) / (output_tokens - 1) as f64),
            _ => None,
        };
        let rendered = !self.hidden && t.first_paint.is_some();
        let render = |value: Option<f64>| value.filter(|_| rendered);
        let tpot_ms = render(per_token(t.first_paint, t.last_paint));
        Report {
            format: self.framer.format(),
            model,
            finish_reason,
            status: self.status(ending),
            http_status: self.http_status,
            render_source: self.render_source.filter(|_| rendered),
            ttfb_ms: since_start(t.headers_at),
            ttft_ms: render(since_start(t.first_paint)),
            ttft_arrival_ms: since_start(t.first_arrival),
            ttfo_ms: render(since_start(t.first_answer_paint)),
            tpot_ms,
            tpot_arrival_ms: per_token(t.first_arrival, t.last_arrival),
            tokens_per_second: tpot_ms.filter(|&ms| ms > 0.0).map(|ms| 1000.0 / ms),
            output_tokens,
            token_source,
            reasoning_tokens,
            output_events: tally.events.iter().sum(),
            output_events_by_kind: KindCounts { answer: tally.events[0], reasoning: tally.events[1], tool: tally.events[2] },
            gaps: if rendered { gap_quantiles(&t.render_gaps) } else { None },
            arrival_gaps: gap_quantiles(&t.arrival_gaps),
            jitter_ms: if rendered { t.render_gap_moments.std_dev() } else { None },
            stalls: rendered.then_some(t.stalls),
            // The gaps' quantiles, of which p50 and p90: one function for the three sketches in the wasm (the
            // other two computed for nothing, once a stream).
            render_delay: if rendered { gap_quantiles(&t.render_delays).map(|d| DelayQuantiles { p50: d.p50, p90: d.p90 }) } else { None },
            duration_ms: render(since_start(t.last_paint)),
            cadence: Points::default(),
            hidden: self.hidden,
            anomalies: Anomalies {
                malformed_events: tally.malformed,
                oversize_dropped: self.framer.oversize_dropped(),
                unterminated_last: self.framer.unterminated(),
            },
            clock_ms: self.clock.ms(),
            def: DEFINITION_VERSION,
        }
    }

    fn status(&self, ending: Ending) -> Status {
        if self.http_status.is_some_and(|s| s >= 400) {
            return Status::HttpError;
        }
        if self.tally.error_event {
            return Status::Error;
        }
        // What the stream said decides: a stream whose end arrived is complete however the reader stopped.
        match ending {
            _ if self.tally.terminal => Status::Ok,
            Ending::Complete => Status::Ok,
            Ending::Aborted => Status::Aborted,
            Ending::Failed => Status::Error,
            Ending::Left => Status::Incomplete,
        }
    }
}

fn gap_quantiles(sketch: &Sketch) -> Option<GapQuantiles> {
    Some(GapQuantiles { p50: sketch.quantile(0.5)?, p90: sketch.quantile(0.9)?, p99: sketch.quantile(0.99)?, max: sketch.max()? })
}
