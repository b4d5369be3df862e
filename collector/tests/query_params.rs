//! Random and adversarial query strings (a fixed seed, a bounded count) through the parser of every
//! analytics endpoint and, when the parser accepts one, through its query over a small store: none
//! may panic, a refusal must name the parameter, and an accepted query must be answered. The same
//! inputs as the `query_params` fuzz target (`fuzz/fuzz_targets/query_params.rs`), without a fuzzer.

mod common;

use common::{envelope, record, TempDir};
use llm_ux_collector::store::sqlite::SqliteStore;
use llm_ux_collector::store::Store;
use llm_ux_collector::validate::{self, Invalid};
use llm_ux_collector::api::{compare, diagnosis, streams, summary, timeseries};
use serde_json::{json, Value};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{SystemTime, UNIX_EPOCH};

/// Query strings tried (each through the four endpoints).
const CASES: usize = 3000;
const HOUR: i64 = 3_600_000;

/// A small deterministic generator (64-bit LCG).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64
}

/// 120 records over the last 3 hours: two models and a null one, variants A and B, values to rank
/// and compare, and some nulls.
fn small_store(dir: &TempDir, now: i64) -> SqliteStore {
    let store = SqliteStore::open(&dir.0.join("small.db")).unwrap();
    let records: Vec<Value> = (0..120)
        .map(|i| {
            let mut r = record(&format!("q-{i}"));
            r["model"] = [json!("m-a"), json!("m-b"), Value::Null, json!("")][i % 4].clone();
            r["variant"] = json!(["A", "B"][i % 2]);
            r["connection"] = [json!("4g"), Value::Null, json!("wifi")][i % 3].clone();
            r["startedAt"] = json!((now - 3 * HOUR + i as i64 * 89_999) as f64 + 0.25);
            r["ttftMs"] = if i % 7 == 0 { Value::Null } else { json!(100 + i * 13) };
            r["tpotMs"] = json!(10.0 + (i % 17) as f64);
            r
        })
        .collect();
    let mut env = envelope(records);
    env["sentAt"] = json!(now as f64);
    store.insert_batch(&validate::envelope(&env, now).unwrap(), now).unwrap();
    store
}

/// One query string: 0 to 7 parameters drawn from the endpoints' names, near misses and junk, with
/// values from the edges of every range, around the stored records, and junk; percent-encoded or
/// raw, sometimes repeated or malformed.
fn query_string(rng: &mut Rng, now: i64) -> String {
    const KEYS: &[&str] = &[
        "from", "to", "groupBy", "metric", "q", "bucket", "dimension", "a", "b", "slo.ttftMs", "slo.tpotMs", "model", "scenario", "variant",
        "appVersion", "connection", "key", "", "From", "slo.", "slo.gapMs", "groupBy%5B%5D", "%00", "m%6Fdel", "a%20", "q\u{0}", "sort",
        "order", "limit", "sort%20",
    ];
    const VALUES: &[&str] = &[
        "-9223372036854775808", "9223372036854775807", "-9223372036854775807", "-1", "0", "1", "253402300800000", "253402300800001",
        "4102444800000", "1e3", "0x10", "NaN", "inf", "-inf", "1e308", "-0", "0.5", "1.0000001", "", " ", "%", "%ZZ", "%00", "%F0%9F%9A%80",
        "model", "model,variant", "model,,variant,model", "connection,appVersion,scenario,variant,model", "nope", "1m", "5m", "15m", "1h",
        "6h", "1d", "2m", "ttftMs", "tpotMs", "stallMs", "count", "rpm", "tokenThroughput", "stallRate", "goodput", "A", "B", "m-a", "m-b",
        "variant", "'; DROP TABLE records; --", "\\", "é", "\u{7f}", "startedAt", "outputTokens", "durationMs", "asc", "desc", "DESC", "50",
        "500", "501",
    ];
    let mut parts = Vec::new();
    for _ in 0..rng.below(8) {
        let key = rng.pick(KEYS);
        let value = match rng.below(4) {
            0 => (now - rng.below(4 * 24) as i64 * HOUR + rng.below(7_200_000) as i64).to_string(),
            1 => "x".repeat(rng.below(3) * 3000),
            _ => rng.pick(VALUES).to_owned(),
        };
        parts.push(match rng.below(10) {
            0 => key.to_owned(),
            1 => format!("{key}={value}={value}"),
            2 => format!("{key}={}", form_urlencoded::byte_serialize(value.as_bytes()).collect::<String>()),
            _ => format!("{key}={value}"),
        });
    }
    parts.join(if rng.below(20) == 0 { "&&" } else { "&" })
}

/// Panics, naming the query, unless `parsed` is a query `run` answers or a refusal naming a
/// parameter: one the query string has (perhaps with an empty name), or one it lacks and needs (`a`,
/// `b`), or whose default does not fit the others (`from` before `to`, `bucket` for the window).
fn check<Q>(endpoint: &str, raw: Option<&str>, parsed: Result<Q, Invalid>, run: impl FnOnce(&Q) -> Result<Value, String>) -> bool {
    match parsed {
        Ok(query) => {
            let answer = run(&query).unwrap_or_else(|e| panic!("{endpoint}?{raw:?}: accepted but not answered: {e}"));
            assert!(answer.is_object(), "{endpoint}?{raw:?}: {answer}");
            true
        }
        Err(Invalid { field, problem }) => {
            let field = field.unwrap_or_else(|| panic!("{endpoint}?{raw:?}: a refusal naming no parameter: {problem}"));
            let given = form_urlencoded::parse(raw.unwrap_or("").as_bytes()).any(|(name, _)| name == field.as_str());
            assert!(given || ["a", "b", "from", "bucket"].contains(&field.as_str()), "{endpoint}?{raw:?}: the refusal names {field:?}, not in the query: {problem}");
            assert!(!problem.is_empty(), "{endpoint}?{raw:?}: a refusal without a problem");
            false
        }
    }
}

#[test]
fn no_query_string_panics_and_every_refusal_names_its_parameter() {
    let dir = TempDir::new("query-params");
    let now = now_ms();
    let store = small_store(&dir, now);
    let store: &dyn Store = &store;
    let mut rng = Rng(14);
    let (mut answered, mut refused) = (0, 0);
    let mut queries: Vec<Option<String>> = vec![None, Some(String::new()), Some("&".into()), Some("from=-9223372036854775808&to=-9223372036854775807".into())];
    queries.extend((0..CASES).map(|_| Some(query_string(&mut rng, now))));
    for raw in &queries {
        let raw = raw.as_deref();
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            [
                check("/api/summary", raw, summary::parse(raw, now), |w| summary::summary(store, w).map(|s| s.to_json()).map_err(|e| e.to_string())),
                check("/api/timeseries", raw, timeseries::parse(raw, now), |q| timeseries::timeseries(store, q).map_err(|e| e.to_string())),
                check("/api/compare", raw, compare::parse(raw, now), |q| compare::compare(store, q).map_err(|e| e.to_string())),
                check("/api/streams", raw, streams::parse(raw, now), |q| streams::streams(store, q).map_err(|e| e.to_string())),
                check("/api/diagnosis", raw, diagnosis::parse(raw, now), |w| diagnosis::diagnosis(store, w).map_err(|e| e.to_string())),
            ]
        }));
        match outcome {
            Ok(results) => results.iter().for_each(|&ok| if ok { answered += 1 } else { refused += 1 }),
            Err(_) => panic!("a panic on the query string {raw:?}"),
        }
    }
    eprintln!("{} query strings: {answered} answers, {refused} refusals", queries.len());
    // Both outcomes were exercised in earnest.
    assert!(answered > CASES / 5 && refused > CASES, "answered {answered}, refused {refused}");
}
