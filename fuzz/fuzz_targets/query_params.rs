//! Fuzzes the collector's analytics query parameters: the input, as a query string, goes through the
//! parser of every endpoint (`/api/summary`, `/api/timeseries`, `/api/compare`, `/api/streams`) and,
//! when one accepts it, through its query over a small SQLite store. A bug is a panic (the release build aborts on
//! one), a refusal naming no parameter, or a query the parser accepted that the store cannot answer.
//! `collector/tests/query_params.rs` runs the same checks on generated strings in `cargo test`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use llm_ux_collector::store::sqlite::SqliteStore;
use llm_ux_collector::store::{Store, StoreError};
use llm_ux_collector::validate::{self, Invalid};
use llm_ux_collector::api::{compare, streams, summary, timeseries};
use serde_json::{json, Value};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

const HOUR: i64 = 3_600_000;

/// The store, and the clock its records were written at and every query runs at (fixed for the
/// run, so an input runs the same queries each time within it).
fn fixture() -> &'static (SqliteStore, i64) {
    static FIXTURE: OnceLock<(SqliteStore, i64)> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
        let path = std::env::temp_dir().join(format!("llm-ux-fuzz-query-params-{}.db", std::process::id()));
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        let store = SqliteStore::open(&path).expect("a store in the temporary directory");
        let records: Vec<Value> = (0..60).map(|i| record(i, now - 3 * HOUR + i as i64 * 179_999)).collect();
        let envelope = json!({ "v": 1, "def": 1, "sentAt": now, "sessionId": "s", "pageId": "p", "batchId": "b", "retry": 0, "sampleRate": 1, "records": records });
        store.insert_batch(&validate::envelope(&envelope, now).expect("a valid envelope"), now).expect("stored");
        (store, now)
    })
}

/// A valid record: two models and a null one, variants A and B, a few null figures.
fn record(i: usize, started_at: i64) -> Value {
    let model = [json!("m-a"), json!("m-b"), Value::Null][i % 3].clone();
    let variant = ["A", "B"][i % 2];
    json!({
        "id": format!("r-{i}"), "startedAt": started_at, "url": null, "model": model, "scenario": "chat", "variant": variant, "appVersion": "1.0", "format": "openai", "status": "ok", "httpStatus": 200,
        "renderSource": "dom", "ttfbMs": 100.0, "ttftMs": if i % 7 == 0 { Value::Null } else { json!(200 + i * 11) }, "ttftArrivalMs": 190.0,
        "ttfoMs": 200.0, "tpotMs": 10.0 + (i % 13) as f64, "tpotArrivalMs": 9.0, "tokensPerSecond": 50.0, "outputTokens": i * 17,
        "tokenSource": "usage", "reasoningTokens": 0, "outputEvents": i * 17, "outputEventsByKind": { "answer": i * 17, "reasoning": 0, "tool": 0 },
        "gaps": { "p50": 9.0, "p90": 20.0 + i as f64, "p99": 40.0, "max": 90.0 }, "arrivalGaps": { "p50": 8.0, "p90": 19.0, "p99": 39.0, "max": 80.0 }, "jitterMs": 3.0,
        "stalls": if i % 5 == 0 { Value::Null } else { json!({ "count": i % 3, "count1000": 0, "longestMs": 300, "totalMs": (i % 3) * 300 }) },
        "renderDelay": { "p50": 4.0, "p90": 8.0 }, "durationMs": 3000.0, "hidden": false, "finishReason": "stop",
        "anomalies": { "malformedEvents": 0, "oversizeDropped": 0, "unterminatedLast": false }, "def": 1, "connection": "4g",
        "rttMs": 50, "deviceMemoryGb": 8, "cores": 8, "browser": "chromium"
    })
}

/// An accepted query must be answered; a refused one must name a parameter.
fn check<Q>(parsed: Result<Q, Invalid>, run: impl FnOnce(&Q) -> Result<Value, StoreError>) {
    match parsed {
        Ok(query) => {
            run(&query).expect("an accepted query is answered");
        }
        Err(Invalid { field, problem }) => assert!(field.is_some(), "a refusal names its parameter: {problem}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else { return };
    let (store, now) = fixture();
    check(summary::parse(Some(raw), *now), |w| summary::summary(store, w).map(|s| s.to_json()));
    check(timeseries::parse(Some(raw), *now), |q| timeseries::timeseries(store, q));
    check(compare::parse(Some(raw), *now), |q| compare::compare(store, q));
    check(streams::parse(Some(raw), *now), |q| streams::streams(store, q));
});
