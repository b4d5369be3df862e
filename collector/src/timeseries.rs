//! `GET /api/timeseries`: one figure per time bucket and group, for charts.
//!
//! Parameters: those of [`crate::params`], and
//! - `metric`: a per-stream metric (`ttftMs`, `tpotMs`, `gapP90Ms`, `renderDelayMs`, `stallMs`),
//!   summarized by its quantile `q`; or `count`, `rpm`, `tokenThroughput`, `stallRate`, `goodput`
//!   (which needs an SLO). Default `tpotMs`.
//! - `q`: 0 to 1, default 0.5 (only with a per-stream metric).
//! - `bucket`: `1m`, `5m`, `15m`, `1h`, `6h` or `1d` (UTC-aligned), default `1m`; at most
//!   [`MAX_POINTS`] buckets in the window.
//!
//! Answer: `{ "def": 1, "metric", "q", "bucket": ms, "from", "to", "series": [ { "key": { ... },
//! "points": [[bucketStart, value], ...] } ] }`, a point for every bucket from the one holding
//! `from` to the one holding `to − 1`, so series line up; the value is null where it is undefined
//! (no stream with a value, no stall knowledge), and rates divide by the part of the bucket inside
//! the window. Cost: as the summary's, at the finest grain that divides the bucket.

use crate::dims::Metric;
use crate::params::{self, bad, project, Window};
use crate::query::visit_window;
use crate::rollup::Grain;
use crate::tally::Tally;
use crate::store::{Store, StoreError};
use crate::summary::DEF;
use crate::validate::Invalid;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The most buckets one query may ask for.
pub const MAX_POINTS: i64 = 1440;

const BUCKETS: [(&str, i64); 6] = [("1m", 60_000), ("5m", 300_000), ("15m", 900_000), ("1h", 3_600_000), ("6h", 21_600_000), ("1d", 86_400_000)];

/// What a point shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Figure {
    Quantile(Metric, f64),
    Count,
    Rpm,
    TokenThroughput,
    StallRate,
    Goodput,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TimeseriesQuery {
    pub window: Window,
    pub figure: Figure,
    pub bucket_ms: i64,
}

pub fn parse(raw: Option<&str>, now_ms: i64) -> Result<TimeseriesQuery, Invalid> {
    let (window, own) = params::parse(raw, now_ms, &["metric", "q", "bucket"], true)?;
    let q = match own.get("q") {
        Some(q) => Some(q.trim().parse::<f64>().ok().filter(|q| (0.0..=1.0).contains(q)).ok_or_else(|| bad("q", format!("expected a quantile from 0 to 1, got {q:?}")))?),
        None => None,
    };
    let metric = own.get("metric").map(String::as_str).unwrap_or("tpotMs");
    let figure = match (metric, Metric::from_name(metric)) {
        (_, Some(m)) => Figure::Quantile(m, q.unwrap_or(0.5)),
        ("count", _) => Figure::Count,
        ("rpm", _) => Figure::Rpm,
        ("tokenThroughput", _) => Figure::TokenThroughput,
        ("stallRate", _) => Figure::StallRate,
        ("goodput", _) => Figure::Goodput,
        _ => return Err(bad("metric", format!("unknown metric {metric:?}; known: {}, count, rpm, tokenThroughput, stallRate, goodput", Metric::names()))),
    };
    if q.is_some() && !matches!(figure, Figure::Quantile(..)) {
        return Err(bad("q", format!("a quantile applies to a per-stream metric ({}), not {metric}", Metric::names())));
    }
    if figure == Figure::Goodput && window.slo.is_empty() {
        return Err(bad("metric", "goodput needs an SLO: slo.ttftMs and/or slo.tpotMs".into()));
    }
    let bucket = own.get("bucket").map(String::as_str).unwrap_or("1m");
    let bucket_ms = BUCKETS.iter().find(|(name, _)| *name == bucket).map(|&(_, ms)| ms).ok_or_else(|| bad("bucket", format!("unknown bucket {bucket:?}; known: 1m, 5m, 15m, 1h, 6h, 1d")))?;
    let points = (window.to - 1).div_euclid(bucket_ms) - window.from.div_euclid(bucket_ms) + 1;
    if points > MAX_POINTS {
        return Err(bad("bucket", format!("{points} buckets of {bucket} in the window; at most {MAX_POINTS}: choose a larger bucket or a shorter window")));
    }
    Ok(TimeseriesQuery { window, figure, bucket_ms })
}

/// The coarsest grain whose buckets tile `bucket_ms`: no rollup straddles two points.
fn coarsest_grain(bucket_ms: i64) -> Grain {
    Grain::ALL.into_iter().rev().find(|g| bucket_ms % g.ms() == 0).unwrap_or(Grain::Minute)
}

/// The answer in the contract shape.
pub fn timeseries(store: &dyn Store, query: &TimeseriesQuery) -> Result<Value, StoreError> {
    let w = &query.window;
    let b = query.bucket_ms;
    let first = w.from.div_euclid(b) * b;
    let points = ((w.to - 1).div_euclid(b) * b - first) / b + 1;
    let mut series: BTreeMap<Vec<Option<String>>, Vec<Tally>> = BTreeMap::new();
    visit_window(store, w.from, w.to, coarsest_grain(b), &w.filters, |start, dims, rollup| {
        let buckets = series.entry(project(dims, &w.group_by)).or_insert_with(|| vec![Tally::default(); points as usize]);
        if let Some(slot) = buckets.get_mut(((start.max(first) - first) / b) as usize) {
            slot.add(rollup, &w.slo);
        }
    })?;
    let series: Vec<Value> = series
        .into_iter()
        .map(|(dims, buckets)| {
            let key: Map<String, Value> = w.group_by.iter().zip(dims).map(|(d, v)| (d.name().to_owned(), json!(v))).collect();
            let points: Vec<Value> = buckets
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let start = first + i as i64 * b;
                    let inside_ms = ((start + b).min(w.to) - start.max(w.from)) as f64;
                    json!([start, value(query.figure, r, inside_ms, w)])
                })
                .collect();
            json!({ "key": key, "points": points })
        })
        .collect();
    let (metric, q) = match query.figure {
        Figure::Quantile(m, q) => (m.name(), Some(q)),
        Figure::Count => ("count", None),
        Figure::Rpm => ("rpm", None),
        Figure::TokenThroughput => ("tokenThroughput", None),
        Figure::StallRate => ("stallRate", None),
        Figure::Goodput => ("goodput", None),
    };
    Ok(json!({ "def": DEF, "metric": metric, "q": q, "bucket": b, "from": w.from, "to": w.to, "series": series }))
}

fn value(figure: Figure, tally: &Tally, inside_ms: f64, w: &Window) -> Option<f64> {
    let r = &tally.rollup;
    match figure {
        Figure::Quantile(metric, q) => r.metric(metric).sketch.quantile(q),
        Figure::Count => Some(r.count as f64),
        Figure::Rpm => Some(r.count as f64 * 60_000.0 / inside_ms),
        Figure::TokenThroughput => Some(r.output_tokens as f64 * 1000.0 / inside_ms),
        Figure::StallRate => r.stall_rate(),
        Figure::Goodput => tally.goodput(&w.slo),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_bounds() {
        let q = parse(Some("metric=ttftMs&q=0.9&bucket=5m&from=0&to=3600000"), 0).unwrap();
        assert_eq!((q.figure, q.bucket_ms), (Figure::Quantile(Metric::TtftMs, 0.9), 300_000));
        assert_eq!(parse(Some("from=0&to=60000"), 0).unwrap().figure, Figure::Quantile(Metric::TpotMs, 0.5));
        for (raw, field) in [
            ("metric=speed", "metric"),
            ("q=2", "q"),
            ("metric=rpm&q=0.5", "q"),
            ("metric=goodput", "metric"),
            ("bucket=2m", "bucket"),
            ("bucket=1m&from=0&to=86400001", "bucket"),
        ] {
            assert_eq!(parse(Some(raw), 86_400_000).unwrap_err().field.as_deref(), Some(field), "{raw}");
        }
        assert!(parse(Some("bucket=1m&from=0&to=86400000"), 0).is_ok());
        assert_eq!(coarsest_grain(21_600_000), Grain::Hour);
        assert_eq!(coarsest_grain(900_000), Grain::Minute);
        assert_eq!(coarsest_grain(86_400_000), Grain::Day);
    }
}
