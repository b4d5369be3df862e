//! `GET /api/summary`: the query, and the aggregation of stream records into per-group figures.
//!
//! Query parameters (all optional):
//! - `from`, `to`: epoch ms; records with `from <= startedAt < to` count. Defaults: `to` = now,
//!   `from` = `to` − 24 h.
//! - `groupBy`: comma-separated dimensions among `model`, `scenario`, `variant`, `appVersion`,
//!   `connection`; without it there is one group with an empty key.
//! - filters named after the dimensions (`model=gpt-4o`); a dimension given several times matches
//!   any of its values.
//! - `slo.ttftMs`, `slo.tpotMs`: thresholds for goodput.
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
//!   a value. Percentiles here are exact over the stored rows: the value of rank
//!   `floor(q × (n − 1))` (0-based) in ascending order, computed in integers (`p × (n − 1) / 100`),
//!   which is the rank rule of the meter's DDSketch, without its 1% error.
//! - `stallRate`: the share of streams with `stalls.count > 0` among streams whose `stalls` is not
//!   null; null when there is none.
//! - `goodput`: the share of all streams in the group meeting every SLO given at once (value not
//!   null and `<=` the threshold; a null value does not meet it); null when no SLO is given.
//! - `lengthBands`: stream counts by `outputTokens`: `"1-50"`, `"51-500"`, `"over500"` (streams with
//!   no output token are in no band).

use crate::validate::Invalid;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The metric definition version the summary reads.
pub const DEF: i64 = 1;
const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// A dimension records are grouped and filtered by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dim {
    Model,
    Scenario,
    Variant,
    AppVersion,
    Connection,
}

impl Dim {
    pub const ALL: [Dim; 5] = [Dim::Model, Dim::Scenario, Dim::Variant, Dim::AppVersion, Dim::Connection];

    /// The name in the API (query parameters and group keys).
    pub fn name(self) -> &'static str {
        match self {
            Dim::Model => "model",
            Dim::Scenario => "scenario",
            Dim::Variant => "variant",
            Dim::AppVersion => "appVersion",
            Dim::Connection => "connection",
        }
    }

    /// The column in the stores.
    pub fn column(self) -> &'static str {
        match self {
            Dim::Model => "model",
            Dim::Scenario => "scenario",
            Dim::Variant => "variant",
            Dim::AppVersion => "app_version",
            Dim::Connection => "connection",
        }
    }

    pub fn from_name(name: &str) -> Option<Dim> {
        Dim::ALL.into_iter().find(|d| d.name() == name)
    }
}

/// SLO thresholds for goodput (ms).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Slo {
    pub ttft_ms: Option<f64>,
    pub tpot_ms: Option<f64>,
}

impl Slo {
    pub fn is_empty(&self) -> bool {
        self.ttft_ms.is_none() && self.tpot_ms.is_none()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SummaryQuery {
    pub from: i64,
    pub to: i64,
    pub group_by: Vec<Dim>,
    /// Each dimension at most once, with the values any of which matches.
    pub filters: Vec<(Dim, Vec<String>)>,
    pub slo: Slo,
}

impl SummaryQuery {
    /// Parses the query string (`None`: no parameters). Unknown parameters are refused, so a typo in
    /// a filter does not silently widen the answer.
    pub fn parse(raw: Option<&str>, now_ms: i64) -> Result<SummaryQuery, Invalid> {
        let bad = |field: &str, problem: String| Invalid { field: Some(field.to_owned()), problem };
        let (mut from, mut to) = (None, None);
        let mut group_by = Vec::new();
        let mut filters: Vec<(Dim, Vec<String>)> = Vec::new();
        let mut slo = Slo::default();
        let mut seen_group_by = false;
        for (key, value) in form_urlencoded::parse(raw.unwrap_or("").as_bytes()) {
            let (key, value) = (key.as_ref(), value.into_owned());
            match key {
                "from" | "to" => {
                    let ms: i64 = value.trim().parse().map_err(|_| bad(key, format!("expected epoch milliseconds (an integer), got {value:?}")))?;
                    let slot = if key == "from" { &mut from } else { &mut to };
                    if slot.replace(ms).is_some() {
                        return Err(bad(key, "given more than once".into()));
                    }
                }
                "groupBy" => {
                    if std::mem::replace(&mut seen_group_by, true) {
                        return Err(bad(key, "given more than once (list the dimensions separated by commas)".into()));
                    }
                    for name in value.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                        let dim = Dim::from_name(name).ok_or_else(|| bad(key, format!("unknown dimension {name:?}; known: {}", dim_names())))?;
                        if !group_by.contains(&dim) {
                            group_by.push(dim);
                        }
                    }
                }
                "slo.ttftMs" | "slo.tpotMs" => {
                    let ms: f64 = value.trim().parse().ok().filter(|v: &f64| v.is_finite() && *v >= 0.0).ok_or_else(|| bad(key, format!("expected milliseconds (a number of at least 0), got {value:?}")))?;
                    let slot = if key == "slo.ttftMs" { &mut slo.ttft_ms } else { &mut slo.tpot_ms };
                    if slot.replace(ms).is_some() {
                        return Err(bad(key, "given more than once".into()));
                    }
                }
                _ => {
                    let Some(dim) = Dim::from_name(key) else {
                        return Err(bad(key, format!("unknown parameter; known: from, to, groupBy, slo.ttftMs, slo.tpotMs and the filters {}", dim_names())));
                    };
                    match filters.iter_mut().find(|(d, _)| *d == dim) {
                        Some((_, values)) => values.push(value),
                        None => filters.push((dim, vec![value])),
                    }
                }
            }
        }
        let to = to.unwrap_or(now_ms);
        let from = from.unwrap_or(to.saturating_sub(DAY_MS));
        if from >= to {
            return Err(bad("from", format!("must be before to ({from} >= {to})")));
        }
        Ok(SummaryQuery { from, to, group_by, filters, slo })
    }
}

fn dim_names() -> String {
    Dim::ALL.map(Dim::name).join(", ")
}

/// What the aggregation needs of one stored record; `dims` follows the query's `group_by`.
#[derive(Debug, Clone, Default)]
pub struct Row {
    pub dims: Vec<Option<String>>,
    pub output_tokens: i64,
    pub ttft_ms: Option<f64>,
    pub tpot_ms: Option<f64>,
    pub gap_p90_ms: Option<f64>,
    pub render_delay_p50_ms: Option<f64>,
    pub stall_count: Option<i64>,
    pub stall_total_ms: Option<f64>,
}

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
    /// Exact percentiles: rank `floor(p × (n − 1) / 100)` in ascending order; and the mean.
    pub fn exact(mut values: Vec<f64>) -> Stats {
        if values.is_empty() {
            return Stats::default();
        }
        values.sort_by(f64::total_cmp);
        let n = values.len();
        let at = |p: usize| Some(values[p * (n - 1) / 100]);
        Stats { p50: at(50), p75: at(75), p90: at(90), p95: at(95), p99: at(99), mean: Some(values.iter().sum::<f64>() / n as f64) }
    }

    fn to_json(&self) -> Value {
        json!({ "p50": self.p50, "p75": self.p75, "p90": self.p90, "p95": self.p95, "p99": self.p99, "mean": self.mean })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub key: Vec<(Dim, Option<String>)>,
    pub count: u64,
    pub rpm: f64,
    pub token_throughput: f64,
    pub ttft_ms: Stats,
    pub tpot_ms: Stats,
    pub gap_p90_ms: Stats,
    pub render_delay_ms: Stats,
    pub stall_ms: Stats,
    pub stall_rate: Option<f64>,
    pub goodput: Option<f64>,
    /// Streams with 1-50, 51-500 and over 500 output tokens.
    pub length_bands: [u64; 3],
}

#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub from: i64,
    pub to: i64,
    pub groups: Vec<Group>,
}

impl Summary {
    /// The contract shape: `{ "def": 1, "from", "to", "groups": [ { "key": { ... }, ... } ] }`.
    pub fn to_json(&self) -> Value {
        let groups: Vec<Value> = self
            .groups
            .iter()
            .map(|g| {
                let key: Map<String, Value> = g.key.iter().map(|(d, v)| (d.name().to_owned(), json!(v))).collect();
                json!({
                    "key": key,
                    "count": g.count,
                    "rpm": g.rpm,
                    "tokenThroughput": g.token_throughput,
                    "ttftMs": g.ttft_ms.to_json(),
                    "tpotMs": g.tpot_ms.to_json(),
                    "gapP90Ms": g.gap_p90_ms.to_json(),
                    "renderDelayMs": g.render_delay_ms.to_json(),
                    "stallMs": g.stall_ms.to_json(),
                    "stallRate": g.stall_rate,
                    "goodput": g.goodput,
                    "lengthBands": { "1-50": g.length_bands[0], "51-500": g.length_bands[1], "over500": g.length_bands[2] },
                })
            })
            .collect();
        json!({ "def": DEF, "from": self.from, "to": self.to, "groups": groups })
    }
}

/// Aggregates rows (already filtered to the query's window, filters and definition version) into
/// groups, sorted by key (null first).
pub fn aggregate(query: &SummaryQuery, rows: impl IntoIterator<Item = Row>) -> Summary {
    #[derive(Default)]
    struct Acc {
        count: u64,
        tokens: i64,
        ttft: Vec<f64>,
        tpot: Vec<f64>,
        gap_p90: Vec<f64>,
        render_delay: Vec<f64>,
        stall_ms: Vec<f64>,
        stall_known: u64,
        stalled: u64,
        good: u64,
        bands: [u64; 3],
    }
    let mut groups: BTreeMap<Vec<Option<String>>, Acc> = BTreeMap::new();
    for row in rows {
        let acc = groups.entry(row.dims).or_default();
        acc.count += 1;
        acc.tokens = acc.tokens.saturating_add(row.output_tokens);
        acc.ttft.extend(row.ttft_ms);
        acc.tpot.extend(row.tpot_ms);
        acc.gap_p90.extend(row.gap_p90_ms);
        acc.render_delay.extend(row.render_delay_p50_ms);
        acc.stall_ms.extend(row.stall_total_ms);
        if let Some(stalls) = row.stall_count {
            acc.stall_known += 1;
            acc.stalled += u64::from(stalls > 0);
        }
        let meets = |value: Option<f64>, slo: Option<f64>| slo.is_none_or(|max| value.is_some_and(|v| v <= max));
        if meets(row.ttft_ms, query.slo.ttft_ms) && meets(row.tpot_ms, query.slo.tpot_ms) {
            acc.good += 1;
        }
        match row.output_tokens {
            1..=50 => acc.bands[0] += 1,
            51..=500 => acc.bands[1] += 1,
            501.. => acc.bands[2] += 1,
            _ => {}
        }
    }
    let window_ms = (query.to - query.from) as f64;
    let groups = groups
        .into_iter()
        .map(|(dims, acc)| Group {
            key: query.group_by.iter().copied().zip(dims).collect(),
            count: acc.count,
            rpm: acc.count as f64 * 60_000.0 / window_ms,
            token_throughput: acc.tokens as f64 * 1000.0 / window_ms,
            ttft_ms: Stats::exact(acc.ttft),
            tpot_ms: Stats::exact(acc.tpot),
            gap_p90_ms: Stats::exact(acc.gap_p90),
            render_delay_ms: Stats::exact(acc.render_delay),
            stall_ms: Stats::exact(acc.stall_ms),
            stall_rate: (acc.stall_known > 0).then(|| acc.stalled as f64 / acc.stall_known as f64),
            goodput: (!query.slo.is_empty()).then(|| acc.good as f64 / acc.count as f64),
            length_bands: acc.bands,
        })
        .collect();
    Summary { from: query.from, to: query.to, groups }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_percentile_ranks() {
        let s = Stats::exact((1..=11).rev().map(f64::from).collect());
        // n = 11: ranks 5, 7, 9, 9, 9 (0-based).
        assert_eq!((s.p50, s.p75, s.p90, s.p95, s.p99, s.mean), (Some(6.0), Some(8.0), Some(10.0), Some(10.0), Some(10.0), Some(6.0)));
        assert_eq!(Stats::exact(vec![]), Stats::default());
        assert_eq!(Stats::exact(vec![3.5]).p99, Some(3.5));
    }

    #[test]
    fn query_defaults_and_errors() {
        let q = SummaryQuery::parse(None, 100 * DAY_MS).unwrap();
        assert_eq!((q.from, q.to), (99 * DAY_MS, 100 * DAY_MS));
        let q = SummaryQuery::parse(Some("groupBy=variant,model&model=a&model=b%2Cc&slo.ttftMs=1000"), 0).unwrap();
        assert_eq!(q.group_by, vec![Dim::Variant, Dim::Model]);
        assert_eq!(q.filters, vec![(Dim::Model, vec!["a".to_owned(), "b,c".to_owned()])]);
        assert_eq!(q.slo.ttft_ms, Some(1000.0));
        for (raw, field) in [("groupBy=region", "groupBy"), ("modle=x", "modle"), ("from=5&to=5", "from"), ("from=abc", "from"), ("slo.tpotMs=-1", "slo.tpotMs")] {
            assert_eq!(SummaryQuery::parse(Some(raw), 0).unwrap_err().field.as_deref(), Some(field), "{raw}");
        }
    }
}
