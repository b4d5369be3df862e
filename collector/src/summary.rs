//! `GET /api/summary`: per group, the count, RPM, token throughput, percentiles, stall rate, goodput
//! and length bands of the streams in a window. Parameters: see [`crate::params`].
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
//!
//! At most [`MAX_GROUPS`] groups: when the window holds more, the answer keeps the 1,000 with the
//! most streams (ties by key) and says `"truncated": true`; `"totalGroups"` is always the number of
//! groups in the window. Groups are listed by key (null first) either way.
//!
//! Cost: a first pass in the store counts streams per group (counts only, [`GroupChoice`]); the
//! second reads O(days + hours + minutes of rollups per chosen group in the window, plus the records
//! of at most two partial minutes), whatever the number of records, and keeps at most
//! [`MAX_GROUPS`] groups' figures in memory.

use crate::dims::{Dim, Metric};
use crate::params::{self, project, Takes, Window};
use crate::query::{visit_window, GroupChoice, MAX_GROUPS};
use crate::rollup::{Distribution, Grain};
use crate::store::{GroupKey, JointNeed, Needs, Store, StoreError};
use crate::tally::Tally;
use crate::validate::Invalid;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The metric definition version the analytics read.
pub const DEF: i64 = 1;

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
    let needs = Needs { per_bucket: false, metrics: [true; 5], joint: JointNeed::goodput(&window.slo) };
    visit_window(store, window.from, window.to, Grain::Day, choice.selection(window), needs, |_, dims, rollup| {
        groups.entry(project(dims, &window.group_by)).or_default().add(rollup, &window.slo);
    })?;
    let total_groups = choice.total(groups.len());
    let groups = groups.into_iter().map(|(dims, tally)| Group { key: window.group_by.iter().copied().zip(dims).collect(), tally }).collect();
    Ok(Summary { window: window.clone(), groups, total_groups, truncated: choice.truncated() })
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
                    "lengthBands": { "1-50": r.bands[0], "51-500": r.bands[1], "over500": r.bands[2] },
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
