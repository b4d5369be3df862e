//! `GET /api/timeseries`: one figure per time bucket and group, for charts.
//!
//! Parameters: those of [`crate::query::params`], and
//! - `metric`: a per-stream metric (`ttftMs`, `tpotMs`, `gapP90Ms`, `renderDelayMs`, `stallMs`),
//!   summarized by its quantile `q`; or `count`, `rpm`, `tokenThroughput`, `stallRate`, `goodput`
//!   (which needs an SLO). Default `tpotMs`.
//! - `q`: 0 to 1, default 0.5 (only with a per-stream metric).
//! - `bucket`: `1m`, `5m`, `15m`, `1h`, `6h` or `1d` (UTC-aligned), default `1m`; at most
//!   [`MAX_POINTS`] buckets in the window (a day of `1m`, however aligned), else 400 naming
//!   `bucket`.
//!
//! Answer: `{ "def": 1, "metric", "q", "bucket": ms, "from", "to", "truncated", "totalGroups",
//! "series": [ { "key": { ... }, "points": [[bucketStart, value], ...] } ] }`, a point for every
//! bucket from the one holding `from` to the one holding `to − 1`, so series line up; the value is
//! null where it is undefined (no stream with a value, no stall knowledge), and rates divide by the
//! part of the bucket inside the window. Series are listed by key.
//!
//! At most [`series_limit`] series: [`MAX_SERIES_POINTS`] points in all, and never more than
//! [`MAX_GROUPS`] series (69 series of a day of `1m`, 1,000 of 100 points or fewer). When the
//! window holds more groups, the answer keeps those with the most streams (ties by key) and says
//! `"truncated": true`; `"totalGroups"` is always the number of groups in the window.
//!
//! Cost: a first pass counts streams per group in the store (counts only); the second reads as the
//! summary does, at the finest grain that divides the bucket, in time order, closing each point as
//! the read passes it: memory O(series × points) numbers plus one open point's figures per series.

use crate::dims::{GroupKey, Metric, DEF};
use crate::query::params::{self, bad, project, Takes, Window};
use crate::query::window::{visit_window, GroupChoice, MAX_GROUPS};
use crate::rollup::{Grain, Rollup, Slo};
use crate::store::{JointNeed, Needs, Store, StoreError};
use crate::query::tally::Tally;
use crate::validate::Invalid;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The most buckets one query may ask for: a day of 1-minute buckets touches 1,441 when it starts
/// mid-minute (as the default window, the last 24 hours, does).
pub const MAX_POINTS: i64 = 1441;

/// The most points (series × buckets) one answer holds.
pub const MAX_SERIES_POINTS: usize = 100_000;

/// How many series an answer of `points` buckets holds at most: [`MAX_SERIES_POINTS`] points in
/// all, and at most [`MAX_GROUPS`] series. At least 69 for any bucket count the parser accepts.
pub fn series_limit(points: usize) -> usize {
    (MAX_SERIES_POINTS / points.max(1)).min(MAX_GROUPS)
}

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
    /// The start of the first bucket (the one holding `from`).
    pub first: i64,
    /// The number of buckets, 1 to [`MAX_POINTS`].
    pub points: usize,
}

/// Parses `GET /api/timeseries`'s query string. O(query length); never panics.
pub fn parse(raw: Option<&str>, now_ms: i64) -> Result<TimeseriesQuery, Invalid> {
    let (window, own) = params::parse(raw, now_ms, &["metric", "q", "bucket"], Takes::ALL)?;
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
    let (first, points) = buckets(window.from, window.to, bucket_ms).ok_or_else(|| bad("from", "the window is out of range".into()))?;
    if points > MAX_POINTS {
        return Err(bad("bucket", format!("{points} buckets of {bucket} in the window; at most {MAX_POINTS}: choose a larger bucket or a shorter window")));
    }
    Ok(TimeseriesQuery { window, figure, bucket_ms, first, points: points as usize })
}

/// The start of the bucket holding `from` and the number of buckets up to the one holding `to − 1`
/// (`from < to`), in checked arithmetic: `None` where it would overflow (never for the windows
/// [`params::parse`] accepts).
fn buckets(from: i64, to: i64, bucket_ms: i64) -> Option<(i64, i64)> {
    let first = from.checked_div_euclid(bucket_ms)?.checked_mul(bucket_ms)?;
    let last = to.checked_sub(1)?.checked_div_euclid(bucket_ms)?.checked_mul(bucket_ms)?;
    let points = last.checked_sub(first)? / bucket_ms + 1;
    // The end of the last bucket, which the answer computes.
    last.checked_add(bucket_ms)?;
    Some((first, points))
}

/// The coarsest grain whose buckets tile `bucket_ms`: no rollup straddles two points.
fn coarsest_grain(bucket_ms: i64) -> Grain {
    Grain::ALL.into_iter().rev().find(|g| bucket_ms % g.ms() == 0).unwrap_or(Grain::Minute)
}

/// One group's series, built as the window is read in time order: the points before `open` are
/// final; `tally` holds the pieces of point `open` read so far.
struct Series {
    values: Vec<Option<f64>>,
    open: usize,
    tally: Tally,
}

impl Series {
    /// Adds a piece of point `index`, closing the open point first when `index` is past it; `false`
    /// (nothing added) when `index` is before it: pieces out of time order, which the figures of a
    /// closed point could not take.
    fn add(&mut self, index: usize, piece: &Rollup, slo: &Slo, close: &impl Fn(usize, &Tally) -> Option<f64>) -> bool {
        if index < self.open {
            return false;
        }
        if index > self.open {
            self.close(close);
            self.open = index;
        }
        self.tally.add(piece, slo);
        true
    }

    fn close(&mut self, close: &impl Fn(usize, &Tally) -> Option<f64>) {
        let tally = std::mem::take(&mut self.tally);
        if let Some(value) = self.values.get_mut(self.open) {
            *value = close(self.open, &tally);
        }
    }
}

/// The answer in the contract shape. Memory O(series × points) numbers and one open point per
/// series ([`series_limit`] series at most); time as the module doc says.
pub fn timeseries(store: &dyn Store, query: &TimeseriesQuery) -> Result<Value, StoreError> {
    let w = &query.window;
    let (b, first) = (query.bucket_ms, query.first);
    let choice = GroupChoice::choose(store, w, series_limit(query.points))?;
    // Bucket starts stay within [from − bucket, to + bucket]: [`buckets`] checked that they fit.
    let start_of = |i: usize| first + i as i64 * b;
    let close = |i: usize, tally: &Tally| {
        let start = start_of(i);
        let inside_ms = ((start + b).min(w.to) - start.max(w.from)) as f64;
        value(query.figure, tally, inside_ms, w)
    };
    let empty: Vec<Option<f64>> = (0..query.points).map(|i| close(i, &Tally::default())).collect();
    let mut series: BTreeMap<GroupKey, Series> = BTreeMap::new();
    let mut in_order = true;
    let mut metrics = [false; 5];
    if let Figure::Quantile(metric, _) = query.figure {
        metrics[metric.index()] = true;
    }
    let joint = if query.figure == Figure::Goodput { JointNeed::goodput(&w.slo) } else { JointNeed::Nothing };
    let needs = Needs { per_bucket: true, metrics, extras: false, joint };
    visit_window(store, w.from, w.to, coarsest_grain(b), choice.selection(w), needs, |start, dims, rollup| {
        let index = ((start.max(first) - first) / b) as usize;
        let s = series.entry(project(dims, &w.group_by)).or_insert_with(|| Series { values: empty.clone(), open: 0, tally: Tally::default() });
        in_order &= s.add(index, rollup, &w.slo, &close);
    })?;
    if !in_order {
        return Err(StoreError("the store read a window's pieces out of time order".into()));
    }
    let total_groups = choice.total(series.len());
    let series: Vec<Value> = series
        .into_iter()
        .map(|(dims, mut s)| {
            s.close(&close);
            let key: Map<String, Value> = w.group_by.iter().zip(dims).map(|(d, v)| (d.name().to_owned(), json!(v))).collect();
            let points: Vec<Value> = s.values.iter().enumerate().map(|(i, v)| json!([start_of(i), v])).collect();
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
    Ok(json!({
        "def": DEF, "metric": metric, "q": q, "bucket": b, "from": w.from, "to": w.to,
        "truncated": choice.truncated(), "totalGroups": total_groups, "series": series,
    }))
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
            ("bucket=1m&from=0&to=86460001", "bucket"),
        ] {
            assert_eq!(parse(Some(raw), 86_400_000).unwrap_err().field.as_deref(), Some(field), "{raw}");
        }
        assert!(parse(Some("bucket=1m&from=0&to=86460000"), 0).is_ok());
        assert_eq!(parse(Some("bucket=1m&from=1&to=86400001"), 0).unwrap().points, 1441, "a day from mid-minute");
        assert_eq!(parse(None, 86_400_000 + 1).unwrap().points, 1441, "the default window, the last day at 1m");
        assert_eq!(coarsest_grain(21_600_000), Grain::Hour);
        assert_eq!(coarsest_grain(900_000), Grain::Minute);
        assert_eq!(coarsest_grain(86_400_000), Grain::Day);
    }

    #[test]
    fn buckets_and_series_limits() {
        assert_eq!(buckets(90_000, 3_600_001, 60_000), Some((60_000, 60)));
        assert_eq!(buckets(0, 1, 86_400_000), Some((0, 1)));
        assert_eq!(buckets(i64::MIN, i64::MIN + 1, 60_000), None, "checked, not wrapped");
        assert_eq!(buckets(i64::MAX - 1, i64::MAX, 60_000), None);
        assert_eq!(series_limit(1441), 69);
        assert_eq!(series_limit(100), MAX_GROUPS);
        assert_eq!(series_limit(1), MAX_GROUPS);
        assert!(series_limit(MAX_POINTS as usize) * MAX_POINTS as usize <= MAX_SERIES_POINTS);
    }
}
