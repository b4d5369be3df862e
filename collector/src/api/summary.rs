//! `GET /api/summary`: per group, the count, RPM, token throughput, percentiles, stall rate, goodput
//! and length bands of the streams in a window. Parameters: see [`crate::query::params`].
//!
//! Only records of metric definition version 1 are read: records of another version are never mixed in.
//!
//! Per group (the definitions are those of the metric-definitions contract):
//! - `count`: streams; `rpm` = count / window minutes; `tokenThroughput` = sum of `outputTokens` /
//!   window seconds (the window is `to − from`, whether or not streams filled it).
//! - `ttftMs`, `tpotMs`, `gapP90Ms` (per-stream render gap p90), `renderDelayMs` (per-stream render
//!   delay p50) and `stallMs` (per-stream summed stall time): `{ p50, p75, p90, p95, p99, mean }` over
//!   the streams where the value is not null (render values only: a stream without them, for example
//!   one that was hidden, is left out; no fallback to the arrival twins). All null when no stream has
//!   a value. Percentiles come from the meter's DDSketch merged across rollups: the value of rank
//!   `floor(q × (n − 1))` within 1% relative error; means are exact.
//! - `stallRate`: the share of streams with `stalls.count > 0` among streams whose `stalls` is not
//!   null; null when there is none.
//! - `goodput`: the share of all streams in the group meeting every SLO given at once (value not
//!   null and `<=` the threshold; a null value does not meet it; values within 1% of a threshold
//!   are judged by their sketch bucket); null when no SLO is given.
//! - `lengthBands`: stream counts by `outputTokens`: `"1-50"`, `"51-500"`, `"over500"` (streams with
//!   no output token are in no band).
//! - `byLength`: per band, `{ "count", "tpotMs": { p50, p75, p90, p95, p99 }, "stallRate" }`: TPOT's
//!   percentiles as its sketch bucket's value (within 1%) and the stall rate of the band's streams.
//! - `stopRate`: the share of the streams that reached their first token (`ttftArrivalMs` not null)
//!   which the user stopped (`status` `aborted`) or left (`incomplete`); null when none reached it.
//! - `stopsBy`: `{ "ttftMs": [band...], "tpotMs": [band...] }`, each band `{ "from", "to", "streams",
//!   "stopped", "stopRate" }` over the streams whose render value is in `[from, to)` ms (`to` null for
//!   the last band), judged by its sketch bucket's value: stops against how slow the stream was.
//!   Counts add up across groups. Bands: TTFT [`TTFT_BANDS`], TPOT [`TPOT_BANDS`].
//!
//! At most [`MAX_GROUPS`] groups: when the window holds more, the answer keeps the 1,000 with the
//! most streams (ties by key) and says `"truncated": true`; `"totalGroups"` is always the number of
//! groups in the window. Groups are listed by key (null first) either way.
//!
//! Cost: a first pass in the store counts streams per group (counts only, [`GroupChoice`]); the
//! second reads O(days + hours + minutes of rollups per chosen group in the window, plus the records
//! of at most two partial minutes), whatever the number of records, and keeps at most
//! [`MAX_GROUPS`] groups' figures in memory.

use crate::dims::{Dim, GroupKey, Metric, DEF};
use crate::query::params::{self, project, Takes, Window};
use crate::query::window::{visit_window, GroupChoice, MAX_GROUPS};
use crate::rollup::{sketch_count_in, BucketCounts, Distribution, Grain, Rollup};
use llm_ux_meter::metrics::sketch::Sketch;
use crate::store::{JointNeed, Needs, Store, StoreError};
use crate::query::tally::Tally;
use crate::validate::Invalid;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The lower edges (ms) of `stopsBy`'s TTFT bands: the last band has no upper edge.
pub const TTFT_BANDS: [f64; 6] = [0.0, 500.0, 1000.0, 2000.0, 4000.0, 8000.0];
/// The lower edges (ms) of `stopsBy`'s TPOT bands.
pub const TPOT_BANDS: [f64; 6] = [0.0, 20.0, 40.0, 80.0, 160.0, 320.0];
/// `lengthBands`' and `byLength`'s names, by [`crate::rollup::length_band`].
pub const LENGTH_BANDS: [&str; 3] = ["1-50", "51-500", "over500"];

/// `{ p50, p75, p90, p95, p99, mean }`, each `None` when there was no value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    pub p50: Option<f64>,
    pub p75: Option<f64>,
    pub p90: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
    pub mean: Option<f64>,
}

impl Stats {
    pub fn of(d: &Distribution) -> Stats {
        let q = |q| d.sketch.quantile(q);
        Stats { p50: q(0.5), p75: q(0.75), p90: q(0.9), p95: q(0.95), p99: q(0.99), mean: d.mean() }
    }

    fn to_json(&self) -> Value {
        json!({ "p50": self.p50, "p75": self.p75, "p90": self.p90, "p95": self.p95, "p99": self.p99, "mean": self.mean })
    }
}

/// One group's figures: its key and the tally of its streams.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub key: Vec<(Dim, Option<String>)>,
    pub tally: Tally,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub window: Window,
    pub groups: Vec<Group>,
    /// Groups in the window, answered or not.
    pub total_groups: u64,
    /// Whether groups were left out (more than [`MAX_GROUPS`]).
    pub truncated: bool,
}

/// Parses `GET /api/summary`'s query string ([`params::parse`]). O(query length); never panics.
pub fn parse(raw: Option<&str>, now_ms: i64) -> Result<Window, Invalid> {
    params::parse(raw, now_ms, &[], Takes::ALL).map(|(window, _)| window)
}

/// The summary of `window`: the busiest [`MAX_GROUPS`] groups at most, sorted by key (null first).
/// Memory O(answered groups × a rollup); time as the module doc says.
pub fn summary(store: &dyn Store, window: &Window) -> Result<Summary, StoreError> {
    let choice = GroupChoice::choose(store, window, MAX_GROUPS)?;
    let mut groups: BTreeMap<GroupKey, Tally> = BTreeMap::new();
    let needs = Needs { per_bucket: false, metrics: [true; 5], extras: true, joint: JointNeed::goodput(&window.slo) };
    visit_window(store, window.from, window.to, Grain::Day, choice.selection(window), needs, |_, dims, rollup| {
        groups.entry(project(dims, &window.group_by)).or_default().add(rollup, &window.slo);
    })?;
    let total_groups = choice.total(groups.len());
    let groups = groups.into_iter().map(|(dims, tally)| Group { key: window.group_by.iter().copied().zip(dims).collect(), tally }).collect();
    Ok(Summary { window: window.clone(), groups, total_groups, truncated: choice.truncated() })
}

/// `byLength`: per length band, its count, TPOT percentiles and stall rate. O(bands × buckets).
fn by_length(r: &Rollup) -> Value {
    let band = |i: usize| {
        let tpot = &r.band_tpot[i];
        let q = |q| tpot.quantile(q);
        let stall_rate = (r.band_stall_known[i] > 0).then(|| r.band_stalled[i] as f64 / r.band_stall_known[i] as f64);
        json!({ "count": r.bands[i], "tpotMs": { "p50": q(0.5), "p75": q(0.75), "p90": q(0.9), "p95": q(0.95), "p99": q(0.99) }, "stallRate": stall_rate })
    };
    Value::Object(LENGTH_BANDS.iter().enumerate().map(|(i, name)| (name.to_string(), band(i))).collect())
}

/// One `stopsBy` list: per band of `edges`, the streams of `all` in it and the `stopped` among them.
/// O(bands × buckets).
fn stops_by(edges: &[f64], all: &Sketch, stopped: &BucketCounts) -> Value {
    let bands = edges.iter().enumerate().map(|(i, &from)| {
        let to = edges.get(i + 1).copied();
        let end = to.unwrap_or(f64::INFINITY);
        let (streams, stops) = (sketch_count_in(all, from, end), stopped.count_in(from, end));
        json!({ "from": from, "to": to, "streams": streams, "stopped": stops, "stopRate": (streams > 0).then(|| stops as f64 / streams as f64) })
    });
    Value::Array(bands.collect())
}

impl Summary {
    /// The contract shape: `{ "def": 1, "from", "to", "truncated", "totalGroups", "groups": [ { "key":
    /// { ... }, ... } ] }`. O(groups).
    pub fn to_json(&self) -> Value {
        let w = &self.window;
        let window_ms = (w.to - w.from) as f64;
        let groups: Vec<Value> = self
            .groups
            .iter()
            .map(|g| {
                let r = &g.tally.rollup;
                let key: Map<String, Value> = g.key.iter().map(|(d, v)| (d.name().to_owned(), json!(v))).collect();
                let mut group = json!({
                    "key": key,
                    "count": r.count,
                    "rpm": r.count as f64 * 60_000.0 / window_ms,
                    "tokenThroughput": r.output_tokens as f64 * 1000.0 / window_ms,
                    "stallRate": r.stall_rate(),
                    "goodput": g.tally.goodput(&w.slo),
                    "lengthBands": LENGTH_BANDS.iter().zip(r.bands).map(|(name, n)| (name.to_string(), json!(n))).collect::<Map<_, _>>(),
                    "byLength": by_length(r),
                    "stopRate": r.stop_rate(),
                    "stopsBy": {
                        "ttftMs": stops_by(&TTFT_BANDS, &r.metric(Metric::TtftMs).sketch, &r.stopped_ttft),
                        "tpotMs": stops_by(&TPOT_BANDS, &r.metric(Metric::TpotMs).sketch, &r.stopped_tpot),
                    },
                });
                for metric in Metric::ALL {
                    group[metric.name()] = Stats::of(r.metric(metric)).to_json();
                }
                group
            })
            .collect();
        json!({ "def": DEF, "from": w.from, "to": w.to, "truncated": self.truncated, "totalGroups": self.total_groups, "groups": groups })
    }
}
