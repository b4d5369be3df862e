//! Many random envelopes put to `validate::envelope` (a fixed seed, a bounded count): valid ones
//! changed at random (`mutate`), JSON text with bytes changed, deep and wide values, and any clock.
//! None may panic; each is accepted with every figure in its range, or refused naming a field that
//! is in the body (or missing from it, when that is the problem). `fuzz/fuzz_targets/ingest_body.rs`
//! does the same without bounds.

mod common;
mod mutate;

use llm_ux_collector::validate::{envelope, Batch, Invalid, LATEST_EPOCH_MS, MAX_AGE_MS, MAX_AHEAD_MS};
use mutate::{deep, garble, mutate, valid_envelope, Rng};
use serde_json::{json, Map, Value};
use std::panic::catch_unwind;

/// 2027-01-15: the clock of most cases.
const NOW: i64 = 1_800_000_000_000;
const HOUR_MS: f64 = 3_600_000.0;

/// The verdict on `body` at `now_ms`, checked: no panic; accepted with every figure in range, or
/// refused naming a field of `body`.
fn check(body: &Value, now_ms: i64) -> Result<Batch, Invalid> {
    let result = catch_unwind(|| envelope(body, now_ms)).unwrap_or_else(|_| panic!("panicked at clock {now_ms} on {body}"));
    match &result {
        Ok(batch) => assert_in_range(batch, now_ms, body),
        Err(Invalid { field: None, problem }) => assert!(!body.is_object(), "an object refused without a field ({problem}): {body}"),
        Err(Invalid { field: Some(field), problem }) => assert_names_a_field(body, field, problem),
    }
    result
}

fn assert_in_range(batch: &Batch, now_ms: i64, body: &Value) {
    let window = now_ms.saturating_sub(MAX_AGE_MS) as f64..=now_ms.saturating_add(MAX_AHEAD_MS) as f64;
    assert!(window.contains(&batch.sent_at), "sentAt {} accepted at clock {now_ms}", batch.sent_at);
    assert_eq!(batch.records.len(), body["records"].as_array().map_or(0, Vec::len));
    for r in &batch.records {
        assert!(window.contains(&r.started_at), "startedAt {} accepted at clock {now_ms}", r.started_at);
        let durations = [
            r.ttfb_ms, r.ttft_ms, r.ttft_arrival_ms, r.ttfo_ms, r.tpot_ms, r.tpot_arrival_ms, r.gap_p50_ms, r.gap_p90_ms, r.gap_p99_ms, r.gap_max_ms,
            r.arrival_gap_p90_ms, r.jitter_ms, r.stall_longest_ms, r.stall_total_ms, r.render_delay_p50_ms, r.render_delay_p90_ms, r.duration_ms,
            r.rtt_ms,
        ];
        assert!(durations.into_iter().flatten().all(|ms| (0.0..=HOUR_MS).contains(&ms)), "a duration out of range accepted: {}", r.raw);
        let counts = [Some(r.output_tokens), Some(r.reasoning_tokens), Some(r.output_events), r.stall_count, r.stall_count_1000];
        assert!(counts.into_iter().flatten().all(|n| (0..=10_000_000).contains(&n)), "a count out of range accepted: {}", r.raw);
        assert!(r.tokens_per_second.is_none_or(|t| (0.0..=1e6).contains(&t)) && r.cores.is_none_or(|c| (1..=4096).contains(&c)), "{}", r.raw);
        for s in [&r.model, &r.scenario, &r.variant, &r.app_version, &r.finish_reason, &r.url, &r.connection].into_iter().flatten() {
            assert!(s.chars().count() <= 2048, "a string of {} characters accepted", s.chars().count());
        }
    }
}

/// `field` (`records[3].stalls.count`) leads to a value of `body`, or to a place a required field
/// is missing from; an unknown field's name may be cut short (`…`), and may hold dots itself.
fn assert_names_a_field(body: &Value, field: &str, problem: &str) {
    let mut at = body;
    let parts: Vec<&str> = field.split('.').collect();
    for (n, part) in parts.iter().enumerate() {
        let last = n + 1 == parts.len();
        if problem.starts_with("unknown field") && field_of(at, &parts[n..].join(".")).is_some() {
            return;
        }
        let (key, indexes) = part.split_once('[').map_or((*part, ""), |(k, rest)| (k, rest));
        let Some(mut next) = field_of(at, key) else {
            assert!(last && problem == "required field is missing", "{field} ({problem}) is not in {body}");
            return;
        };
        for index in indexes.split('[').filter(|i| !i.is_empty()) {
            let i: usize = index.trim_end_matches(']').parse().unwrap_or_else(|_| panic!("{field}: bad index"));
            next = next.get(i).unwrap_or_else(|| panic!("{field} ({problem}) is not in {body}"));
        }
        at = next;
    }
}

/// The field of the object `at` that `name` names: the whole name, or one cut short (`…`) its start.
fn field_of<'a>(at: &'a Value, name: &str) -> Option<&'a Value> {
    let map = at.as_object()?;
    match name.strip_suffix('…') {
        Some(start) => map.iter().find(|(k, _)| k.starts_with(start)).map(|(_, v)| v),
        None => map.get(name),
    }
}

#[test]
fn random_changes_never_panic_and_each_refusal_names_a_field() {
    let mut rng = Rng::new(42);
    let bases = [valid_envelope(NOW, 1), valid_envelope(NOW, 3)];
    let clocks = [i64::MIN, i64::MAX, -1, 0, LATEST_EPOCH_MS as i64, NOW - MAX_AGE_MS, NOW + MAX_AHEAD_MS];
    let (mut accepted, mut refused) = (0, 0);
    for n in 0..20_000 {
        let body = mutate(rng.pick(&bases), &mut rng, NOW);
        let now_ms = if n % 10 == 0 { *rng.pick(&clocks) } else { NOW };
        match check(&body, now_ms) {
            Ok(_) => accepted += 1,
            Err(_) => refused += 1,
        }
    }
    // Both verdicts, often: the changes reach past the bounds and stay within them.
    assert!(accepted > 2000 && refused > 10_000, "{accepted} accepted, {refused} refused");
}

#[test]
fn garbled_json_text_never_panics() {
    let mut rng = Rng::new(7);
    let base = valid_envelope(NOW, 2);
    let mut parsed = 0;
    for _ in 0..20_000 {
        let text = garble(&base, &mut rng);
        // What does not parse is the HTTP layer's 400 ("invalid JSON"), before the validator.
        if let Ok(body) = serde_json::from_slice::<Value>(&text) {
            parsed += 1;
            let _ = check(&body, NOW);
        }
    }
    assert!(parsed > 1000, "{parsed} garbled bodies parsed");
}

#[test]
fn deep_wide_and_long_values_are_refused_naming_the_field() {
    // As deep as serde_json parses a body (128 levels), in every field of a record in turn.
    let record_fields: Vec<String> = valid_envelope(NOW, 1)["records"][0].as_object().unwrap().keys().cloned().collect();
    for field in &record_fields {
        let mut body = valid_envelope(NOW, 1);
        body["records"][0][field.as_str()] = deep(127);
        let err = check(&body, NOW).unwrap_err();
        assert!(err.field.as_deref().is_some_and(|f| f.starts_with(&format!("records[0].{field}"))), "{field}: {err:?}");
        assert!(err.problem.chars().count() < 400, "{field}: the message stays short: {}", err.problem);
    }
    // 10,000 unknown fields with long names: the first is named, cut short.
    let mut body = valid_envelope(NOW, 1);
    let record = body["records"][0].as_object_mut().unwrap();
    for i in 0..10_000 {
        record.insert(format!("{i:05}{}", "x".repeat(1000)), json!(i));
    }
    let err = check(&body, NOW).unwrap_err();
    assert_eq!(err.field, Some(format!("records[0].00000{}…", "x".repeat(59))));
    // A long value is echoed cut short.
    let mut body = valid_envelope(NOW, 1);
    body["records"][0]["status"] = json!("s".repeat(100_000));
    let err = check(&body, NOW).unwrap_err();
    assert!(err.problem.len() < 400, "{}", err.problem);
    // Many valid records: all accepted.
    let mut body = valid_envelope(NOW, 2000);
    assert_eq!(check(&body, NOW).unwrap().records.len(), 2000);
    // An empty object is refused naming the first required field.
    body = Value::Object(Map::new());
    assert_eq!(check(&body, NOW).unwrap_err().field.as_deref(), Some("v"));
}
