//! The order in which [`super::close`] lays a report out as numbers; `js/meter.js` reads the same order.
//! Null is NaN, booleans are 0 or 1, enumerations are their index.

use crate::decode::Format;
use crate::metrics::report::{RenderSource, Report, Status, TokenSource};
use alloc::vec::Vec;

/// Number of values [`numbers`] returns.
pub const LEN: usize = 40;

pub fn numbers(r: &Report) -> Vec<f64> {
    let opt = |v: Option<f64>| v.unwrap_or(f64::NAN);
    let gaps = |g: Option<crate::metrics::report::GapQuantiles>| match g {
        Some(g) => [g.p50, g.p90, g.p99, g.max],
        None => [f64::NAN; 4],
    };
    let stalls = match r.stalls {
        Some(s) => [f64::from(s.count), f64::from(s.count_1000), s.longest_ms, s.total_ms],
        None => [f64::NAN; 4],
    };
    let delay = match r.render_delay {
        Some(d) => [d.p50, d.p90],
        None => [f64::NAN; 2],
    };
    let mut out = Vec::with_capacity(LEN);
    out.extend([
        r.format.and_then(|f| Format::ALL.iter().position(|&x| x == f)).map_or(f64::NAN, |i| i as f64),
        index(&[Status::Ok, Status::Aborted, Status::HttpError, Status::Error, Status::Incomplete], r.status),
        opt(r.http_status.map(f64::from)),
        r.render_source.map_or(f64::NAN, |s| index(&RenderSource::ALL, s)),
        opt(r.ttfb_ms),
        opt(r.ttft_ms),
        opt(r.ttft_arrival_ms),
        opt(r.ttfo_ms),
        opt(r.tpot_ms),
        opt(r.tpot_arrival_ms),
        opt(r.tokens_per_second),
        r.output_tokens as f64,
        index(&[TokenSource::Usage, TokenSource::Estimate], r.token_source),
        r.reasoning_tokens as f64,
        r.output_events as f64,
        r.output_events_by_kind.answer as f64,
        r.output_events_by_kind.reasoning as f64,
        r.output_events_by_kind.tool as f64,
    ]);
    out.extend(gaps(r.gaps));
    out.extend(gaps(r.arrival_gaps));
    out.push(opt(r.jitter_ms));
    out.extend(stalls);
    out.extend(delay);
    out.extend([
        opt(r.duration_ms),
        f64::from(u8::from(r.hidden)),
        f64::from(r.anomalies.malformed_events),
        f64::from(r.anomalies.oversize_dropped),
        f64::from(u8::from(r.anomalies.unterminated_last)),
        f64::from(r.def),
        r.clock_ms,
    ]);
    out
}

fn index<T: PartialEq>(all: &[T], value: T) -> f64 {
    all.iter().position(|x| *x == value).map_or(f64::NAN, |i| i as f64)
}
