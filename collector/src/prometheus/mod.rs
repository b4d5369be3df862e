//! `GET /metrics`: the records this collector accepted since it started, for Prometheus: the text
//! exposition format 0.0.4, or OpenMetrics 1.0 when the `Accept` header prefers
//! `application/openmetrics-text` ([`exposition`]). `docs/prometheus.md` shows the scrape config,
//! alert rules, PromQL and a Grafana dashboard.
//!
//! Families, each with the labels `model`, `scenario` and `variant` ([`labels`]), one observation
//! per stream that has the value (`docs/metrics.md` defines the fields):
//! - histograms, in seconds: `llm_ux_time_to_first_token_seconds` (`ttftMs`, render) and its twin
//!   `llm_ux_time_to_first_token_arrival_seconds` (`ttftArrivalMs`), `llm_ux_time_per_output_token_seconds`
//!   (`tpotMs`) and `llm_ux_time_per_output_token_arrival_seconds` (`tpotArrivalMs`),
//!   `llm_ux_render_delay_seconds` (`renderDelay.p50`) and `llm_ux_stall_seconds` (`stalls.totalMs`);
//!   render delay and stalls exist on the render timeline only. Boundaries: [`buckets`] (vLLM's own
//!   for TTFT and TPOT, and more).
//! - counters: `llm_ux_streams_total` (with `status`, one of five), `llm_ux_output_tokens_total`,
//!   `llm_ux_stalls_total` and `llm_ux_stalled_streams_total`; and `llm_ux_folded_records_total`
//!   without labels ([`table`]).
//!
//! What counts: the records a store accepted ([`crate::store::Inserted::accepted_at`]), so neither a
//! refused batch, nor a duplicate, nor a batch whose storing failed; of metric definition version 1
//! only, as for the analytics. Counted in the HTTP layer, whatever the store. In memory, per process:
//! the counts start from 0 at each start (PromQL's `rate` and `increase` take the reset in stride),
//! and each collector exposes what it accepted itself, so sums over instances are the totals.
//!
//! Bounded: at most `--metrics-label-sets` label sets plus "other" ([`table`]), each written in 168
//! lines of at most about 900 bytes (label values are cut at 128 bytes). Cost: ingest takes one lock
//! per batch, held O(records × log bounds), with allocations only for a label set seen the first
//! time; `/metrics` copies the table under that lock (O(label sets × bounds)) and writes the answer
//! after releasing it.

pub mod buckets;
pub mod exposition;
pub mod labels;
pub mod series;
pub mod table;

use crate::dims::DEF;
use crate::validate::{Batch, Record};
use labels::LabelSet;
use std::sync::{Mutex, MutexGuard};
use table::Table;

/// The counts `/metrics` exposes, shared by ingest and the route.
pub struct Registry {
    table: Mutex<Table>,
}

impl Registry {
    /// Counts at most `max_label_sets` label sets (at least 1) besides "other".
    pub fn new(max_label_sets: usize) -> Registry {
        Registry { table: Mutex::new(Table::new(max_label_sets)) }
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Counts the records of `batch` at the positions `accepted_at` (those the store accepted), of
    /// metric definition version 1. Label sets are made before the lock is taken. O(records).
    pub fn count(&self, batch: &Batch, accepted_at: &[usize]) {
        let records: Vec<(LabelSet, &Record)> = accepted_at.iter().filter_map(|&i| batch.records.get(i)).filter(|r| r.def == DEF).map(|r| (labels::of(r), r)).collect();
        if records.is_empty() {
            return;
        }
        let mut table = self.lock();
        for (labels, record) in records {
            table.add(labels, record);
        }
    }

    /// A copy of the counts as they are now. O(label sets × bounds).
    pub fn snapshot(&self) -> Table {
        self.lock().clone()
    }
}

/// A valid record (as the validator makes it) with `fields` changed, for the unit tests.
#[cfg(test)]
pub(crate) fn test_record(fields: serde_json::Value) -> Record {
    use serde_json::json;
    let mut record = json!({
        "id": "r", "startedAt": 1_000_000_000_000.0, "url": null, "model": "m", "scenario": "chat", "variant": "A", "appVersion": null,
        "format": "openai", "status": "ok", "httpStatus": 200, "renderSource": "dom", "ttfbMs": 300, "ttftMs": 420, "ttftArrivalMs": 410,
        "ttfoMs": 420, "tpotMs": 21, "tpotArrivalMs": 20, "tokensPerSecond": 47.6, "outputTokens": 120, "tokenSource": "usage",
        "reasoningTokens": 0, "outputEvents": 118, "outputEventsByKind": { "answer": 118, "reasoning": 0, "tool": 0 }, "gaps": null,
        "arrivalGaps": null, "jitterMs": null, "stalls": { "count": 0, "count1000": 0, "longestMs": 0, "totalMs": 0 },
        "renderDelay": { "p50": 4, "p90": 9 }, "durationMs": 2919, "hidden": false, "finishReason": "stop",
        "anomalies": { "malformedEvents": 0, "oversizeDropped": 0, "unterminatedLast": false }, "def": 1, "connection": null,
        "rttMs": null, "deviceMemoryGb": null, "cores": null, "browser": "chromium"
    });
    for (key, value) in fields.as_object().expect("an object of fields") {
        record[key] = value.clone();
    }
    let envelope = json!({ "v": 1, "def": 1, "sentAt": 1_000_000_000_000.0, "sessionId": "s", "pageId": "p", "batchId": "b", "retry": 0, "sampleRate": 1, "records": [record] });
    crate::validate::envelope(&envelope, 1_000_000_000_000).expect("a valid record").records.remove(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_accepted_records_of_definition_1_count() {
        let registry = Registry::new(10);
        let batch = Batch {
            def: 1,
            sent_at: 0.0,
            session_id: "s".into(),
            page_id: "p".into(),
            batch_id: "b".into(),
            retry: 0,
            sample_rate: 1.0,
            experiment_unit: None,
            records: vec![test_record(json!({ "id": "a" })), test_record(json!({ "id": "b", "def": 2 })), test_record(json!({ "id": "c", "outputTokens": 5 }))],
        };
        registry.count(&batch, &[1, 2, 7]);
        let table = registry.snapshot();
        assert_eq!(table.rows.len(), 1);
        assert_eq!(table.rows[0].1.output_tokens, 5, "c only: a was a duplicate, b is of definition 2, 7 is no record");
        registry.count(&batch, &[]);
        assert_eq!(registry.snapshot().rows[0].1, table.rows[0].1);
    }
}
