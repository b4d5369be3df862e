//! `GET /api/streams`: the individual streams of a window, sorted by a figure: "show me the bad
//! streams" (`sort=tpotMs&order=desc`), or the latest ones. Parameters: the window and filters of
//! [`crate::query::params`] (`groupBy` and the SLOs are refused as unknown), and:
//!
//! - `sort`: one of [`Sort::ALL`](crate::store::stream::Sort::ALL)'s names, default `startedAt`;
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

use crate::query::params::{self, bad, Takes, Window};
use crate::store::stream::{Order, Sort, Stream};
use crate::store::{Store, StoreError};
use crate::dims::DEF;
use crate::validate::Invalid;
use serde_json::{json, Value};

/// The most streams one answer holds.
pub const MAX_LIMIT: usize = 500;
const DEFAULT_LIMIT: usize = 50;

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
    store.streams(w.from, w.to, &w.filters, &query.order, &mut |s| streams.push(stream_json(&s)))?;
    let order = if query.order.descending { "desc" } else { "asc" };
    Ok(json!({ "def": DEF, "from": w.from, "to": w.to, "sort": query.order.sort.name(), "order": order, "streams": streams }))
}

/// A stream in the answer's shape: the record's own names and values.
fn stream_json(s: &Stream) -> Value {
    let [model, scenario, variant, app_version, connection] = &s.dims;
    let stalls = s.stall_count.map(|count| json!({ "count": count, "longestMs": s.stall_longest_ms, "totalMs": s.stall_total_ms }));
    let render_delay = s.render_delay_p50_ms.map(|p50| json!({ "p50": p50, "p90": s.render_delay_p90_ms }));
    json!({
        "id": s.id, "startedAt": s.started_at,
        "model": model, "scenario": scenario, "variant": variant, "appVersion": app_version, "connection": connection,
        "status": s.status, "httpStatus": s.http_status,
        "ttftMs": s.ttft_ms, "ttftArrivalMs": s.ttft_arrival_ms, "tpotMs": s.tpot_ms, "tpotArrivalMs": s.tpot_arrival_ms,
        "outputTokens": s.output_tokens, "gapP90Ms": s.gap_p90_ms, "stalls": stalls, "renderDelay": render_delay,
        "durationMs": s.duration_ms, "hidden": s.hidden, "finishReason": s.finish_reason, "cadence": s.cadence,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dims::Metric;

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
}
