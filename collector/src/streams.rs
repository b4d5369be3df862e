//! `GET /api/streams`: the individual streams of a window, sorted by a figure: "show me the bad
//! streams" (`sort=tpotMs&order=desc`), or the latest ones. Parameters: the window and filters of
//! [`crate::params`] (`groupBy` and the SLOs are refused as unknown), and:
//!
//! - `sort`: one of [`Sort::ALL`]'s names, default `startedAt`;
//! - `order`: `desc` (default) or `asc`;
//! - `limit`: 1 to [`MAX_LIMIT`], default 50.
//!
//! Streams without a value of `sort` come after the others, whatever the order; ties are broken by
//! `id` (bytes, ascending), so both stores give the same answer. Only records of metric definition
//! version 1 are read, each once (a duplicate copy is left out as in every figure).
//!
//! Answer: `{ "def": 1, "from", "to", "sort", "order", "streams": [ { "id", "startedAt", "model",
//! "scenario", "variant", "appVersion", "connection", "status", "httpStatus", "ttftMs",
//! "ttftArrivalMs", "tpotMs", "tpotArrivalMs", "outputTokens", "gapP90Ms", "stalls", "renderDelay",
//! "durationMs", "hidden", "finishReason", "cadence" } ] }`, with the record's own names and values
//! (`stalls` is `{ "count", "longestMs", "totalMs" }` or null, `renderDelay` `{ "p50", "p90" }` or
//! null, `cadence` the record's `[[ms, tokens], ...]`, or null for a record sent without one).
//!
//! Cost: the database reads every record of the window and sorts, O(records in the window) time; its
//! sorter keeps the first `limit` rows of each block it reads (SQLite: `limit` in all), and with
//! ClickHouse the window's duplicate copies are held as a set, as for every read of records. The
//! collector holds `limit` streams.

use crate::dims::{Dims, Metric};
use crate::params::{self, bad, Takes, Window};
use crate::store::{Store, StoreError};
use crate::summary::DEF;
use crate::validate::Invalid;
use serde_json::{json, Value};

/// The most streams one answer holds.
pub const MAX_LIMIT: usize = 500;
const DEFAULT_LIMIT: usize = 50;

/// What streams can be sorted by: a column of the records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sort {
    StartedAt,
    /// One of the figures the summary summarizes.
    Metric(Metric),
    TtftArrivalMs,
    TpotArrivalMs,
    OutputTokens,
    DurationMs,
}

impl Sort {
    pub const ALL: [Sort; 10] = [
        Sort::StartedAt,
        Sort::Metric(Metric::TtftMs),
        Sort::TtftArrivalMs,
        Sort::Metric(Metric::TpotMs),
        Sort::TpotArrivalMs,
        Sort::Metric(Metric::GapP90Ms),
        Sort::Metric(Metric::RenderDelayMs),
        Sort::Metric(Metric::StallMs),
        Sort::OutputTokens,
        Sort::DurationMs,
    ];

    /// The name in the API: the summary's metric names, and the record's field names.
    pub fn name(self) -> &'static str {
        match self {
            Sort::StartedAt => "startedAt",
            Sort::Metric(metric) => metric.name(),
            Sort::TtftArrivalMs => "ttftArrivalMs",
            Sort::TpotArrivalMs => "tpotArrivalMs",
            Sort::OutputTokens => "outputTokens",
            Sort::DurationMs => "durationMs",
        }
    }

    /// The records column it sorts by.
    pub fn column(self) -> &'static str {
        match self {
            Sort::StartedAt => "started_at",
            Sort::Metric(metric) => metric.column(),
            Sort::TtftArrivalMs => "ttft_arrival_ms",
            Sort::TpotArrivalMs => "tpot_arrival_ms",
            Sort::OutputTokens => "output_tokens",
            Sort::DurationMs => "duration_ms",
        }
    }

    fn from_name(name: &str) -> Option<Sort> {
        Sort::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// Which streams a store returns, and in what order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Order {
    pub sort: Sort,
    pub descending: bool,
    /// How many at most: [`parse`] keeps it within [`MAX_LIMIT`]; the stores take it as it is.
    pub limit: usize,
}

impl Order {
    /// `ORDER BY ... LIMIT ...` for a store whose SQL writes "`column` is null" as `is_null(column)`.
    pub fn sql(&self, is_null: impl Fn(&str) -> String) -> String {
        let column = self.sort.column();
        let direction = if self.descending { "DESC" } else { "ASC" };
        format!("ORDER BY {}, {column} {direction}, id LIMIT {}", is_null(column), self.limit)
    }
}

/// The columns a [`Stream`] is read from, in its fields' order.
pub const COLUMNS: &str = "id, started_at, model, scenario, variant, app_version, connection, status, http_status, \
     ttft_ms, ttft_arrival_ms, tpot_ms, tpot_arrival_ms, output_tokens, gap_p90_ms, stall_count, stall_longest_ms, \
     stall_total_ms, render_delay_p50_ms, render_delay_p90_ms, duration_ms, hidden, finish_reason, cadence";

/// One stored stream, as [`COLUMNS`] reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Stream {
    pub id: String,
    pub started_at: f64,
    pub dims: Dims,
    pub status: String,
    pub http_status: Option<i64>,
    pub ttft_ms: Option<f64>,
    pub ttft_arrival_ms: Option<f64>,
    pub tpot_ms: Option<f64>,
    pub tpot_arrival_ms: Option<f64>,
    pub output_tokens: i64,
    pub gap_p90_ms: Option<f64>,
    pub stall_count: Option<i64>,
    pub stall_longest_ms: Option<f64>,
    pub stall_total_ms: Option<f64>,
    pub render_delay_p50_ms: Option<f64>,
    pub render_delay_p90_ms: Option<f64>,
    pub duration_ms: Option<f64>,
    pub hidden: bool,
    pub finish_reason: Option<String>,
    pub cadence: Option<Vec<[u32; 2]>>,
}

impl Stream {
    fn to_json(&self) -> Value {
        let [model, scenario, variant, app_version, connection] = &self.dims;
        let stalls = self.stall_count.map(|count| json!({ "count": count, "longestMs": self.stall_longest_ms, "totalMs": self.stall_total_ms }));
        let render_delay = self.render_delay_p50_ms.map(|p50| json!({ "p50": p50, "p90": self.render_delay_p90_ms }));
        json!({
            "id": self.id, "startedAt": self.started_at,
            "model": model, "scenario": scenario, "variant": variant, "appVersion": app_version, "connection": connection,
            "status": self.status, "httpStatus": self.http_status,
            "ttftMs": self.ttft_ms, "ttftArrivalMs": self.ttft_arrival_ms, "tpotMs": self.tpot_ms, "tpotArrivalMs": self.tpot_arrival_ms,
            "outputTokens": self.output_tokens, "gapP90Ms": self.gap_p90_ms, "stalls": stalls, "renderDelay": render_delay,
            "durationMs": self.duration_ms, "hidden": self.hidden, "finishReason": self.finish_reason, "cadence": self.cadence,
        })
    }
}

/// A parsed `GET /api/streams`: the window and filters, and the order.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamsQuery {
    pub window: Window,
    pub order: Order,
}

/// Parses `GET /api/streams`'s query string. O(query length); never panics.
pub fn parse(raw: Option<&str>, now_ms: i64) -> Result<StreamsQuery, Invalid> {
    let (window, own) = params::parse(raw, now_ms, &["sort", "order", "limit"], Takes { group_by: false, slo: false })?;
    let sort = match own.get("sort") {
        Some(name) => Sort::from_name(name).ok_or_else(|| bad("sort", format!("unknown figure {name:?}; known: {}", Sort::ALL.map(Sort::name).join(", "))))?,
        None => Sort::StartedAt,
    };
    let descending = match own.get("order").map(String::as_str) {
        None | Some("desc") => true,
        Some("asc") => false,
        Some(other) => return Err(bad("order", format!("expected asc or desc, got {other:?}"))),
    };
    let limit = match own.get("limit") {
        Some(text) => text.trim().parse().ok().filter(|n| (1..=MAX_LIMIT).contains(n)).ok_or_else(|| bad("limit", format!("expected a whole number from 1 to {MAX_LIMIT}, got {text:?}")))?,
        None => DEFAULT_LIMIT,
    };
    Ok(StreamsQuery { window, order: Order { sort, descending, limit } })
}

/// The answer to `query`. Memory O(limit); time as the module doc says.
pub fn streams(store: &dyn Store, query: &StreamsQuery) -> Result<Value, StoreError> {
    let w = &query.window;
    let mut streams = Vec::new();
    store.streams(w.from, w.to, &w.filters, &query.order, &mut |s| streams.push(s.to_json()))?;
    let order = if query.order.descending { "desc" } else { "asc" };
    Ok(json!({ "def": DEF, "from": w.from, "to": w.to, "sort": query.order.sort.name(), "order": order, "streams": streams }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_defaults_and_refusals() {
        let q = parse(Some("from=0&to=60000&model=m"), 0).unwrap();
        assert_eq!(q.order, Order { sort: Sort::StartedAt, descending: true, limit: 50 });
        let q = parse(Some("from=0&to=60000&sort=tpotMs&order=asc&limit=500"), 0).unwrap();
        assert_eq!(q.order, Order { sort: Sort::Metric(Metric::TpotMs), descending: false, limit: 500 });
        for (raw, field) in [
            ("sort=speed", "sort"),
            ("order=up", "order"),
            ("limit=0", "limit"),
            ("limit=501", "limit"),
            ("limit=ten", "limit"),
            ("groupBy=model", "groupBy"),
            ("slo.tpotMs=50", "slo.tpotMs"),
            ("slo.ttftMs=500", "slo.ttftMs"),
            ("sort=ttftMs&sort=tpotMs", "sort"),
        ] {
            assert_eq!(parse(Some(raw), 86_400_000).unwrap_err().field.as_deref(), Some(field), "{raw}");
        }
    }

    #[test]
    fn order_sql_puts_nulls_last_and_breaks_ties_by_id() {
        let order = Order { sort: Sort::Metric(Metric::StallMs), descending: true, limit: 7 };
        assert_eq!(order.sql(|c| format!("isNull({c})")), "ORDER BY isNull(stall_total_ms), stall_total_ms DESC, id LIMIT 7");
        assert!(Sort::ALL.iter().all(|s| Sort::from_name(s.name()) == Some(*s)));
    }
}
