//! What the analytics need of one stored record ([`Row`]), and the rules that read its figures:
//! whether the user stopped it, whether its output came in bunches, its length band.

use crate::dims::{Dim, Dims, Metric};
use crate::validate::Record;

/// What the analytics need of one stored record (of metric definition version 1).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    pub started_at: f64,
    pub dims: Dims,
    pub output_tokens: i64,
    pub ttft_ms: Option<f64>,
    pub tpot_ms: Option<f64>,
    pub gap_p90_ms: Option<f64>,
    pub render_delay_p50_ms: Option<f64>,
    pub stall_count: Option<i64>,
    pub stall_total_ms: Option<f64>,
    /// Whether the first token arrived (`ttftArrivalMs` not null), shown or not.
    pub reached: bool,
    /// Whether the stream ended before its end because the user stopped it or left ([`stops`]).
    pub stopped: bool,
    /// Whether its output arrived in bunches ([`bunched`]); `None` when that is not known.
    pub bunched: Option<bool>,
}

/// Whether a stream of `status` ended early by the user's doing: `aborted` (the app cancelled it:
/// the stop button, a new question) or `incomplete` (the page was left).
pub fn stops(status: &str) -> bool {
    matches!(status, "aborted" | "incomplete")
}

/// The fewest output events a stream needs for [`bunched`] to judge it: a short answer may fit in
/// one network read whatever the path.
pub const BUNCH_MIN_EVENTS: i64 = 10;

/// Whether a stream's output arrived in bunches: at least half its output events came in the same
/// read as the one before (arrival gap p50 of 0), as behind a buffering proxy, where the server sent
/// them one by one. `None` with fewer than [`BUNCH_MIN_EVENTS`] events or no arrival gaps.
pub fn bunched(arrival_gap_p50_ms: Option<f64>, output_events: i64) -> Option<bool> {
    arrival_gap_p50_ms.filter(|_| output_events >= BUNCH_MIN_EVENTS).map(|p50| p50 <= 0.0)
}

/// The length band of a stream of `output_tokens`: 0 for 1-50, 1 for 51-500, 2 for more; `None`
/// for a stream with no output token.
pub fn length_band(output_tokens: i64) -> Option<usize> {
    match output_tokens {
        1..=50 => Some(0),
        51..=500 => Some(1),
        501.. => Some(2),
        _ => None,
    }
}

impl Row {
    pub fn from_record(r: &Record) -> Row {
        Row {
            started_at: r.started_at,
            dims: [r.model.clone(), r.scenario.clone(), r.variant.clone(), r.app_version.clone(), r.connection.clone()],
            output_tokens: r.output_tokens,
            ttft_ms: r.ttft_ms,
            tpot_ms: r.tpot_ms,
            gap_p90_ms: r.gap_p90_ms,
            render_delay_p50_ms: r.render_delay_p50_ms,
            stall_count: r.stall_count,
            stall_total_ms: r.stall_total_ms,
            reached: r.ttft_arrival_ms.is_some(),
            stopped: stops(&r.status),
            bunched: bunched(r.arrival_gap_p50_ms, r.output_events),
        }
    }

    pub fn metric(&self, metric: Metric) -> Option<f64> {
        match metric {
            Metric::TtftMs => self.ttft_ms,
            Metric::TpotMs => self.tpot_ms,
            Metric::GapP90Ms => self.gap_p90_ms,
            Metric::RenderDelayMs => self.render_delay_p50_ms,
            Metric::StallMs => self.stall_total_ms,
        }
    }

    pub fn dim(&self, dim: Dim) -> Option<&str> {
        self.dims[dim.index()].as_deref()
    }
}
