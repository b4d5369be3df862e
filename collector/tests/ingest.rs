//! POST /v1/beacons over real HTTP against the collector's router and a temporary SQLite file:
//! validation of every kind of bad input (nothing stored), the bounds of every field and the clock
//! window, idempotency, whole-batch atomicity, gzip, size limits, content types, the ingest key and
//! CORS. (`contract.rs` checks the validator against the schema case by case, without HTTP.)

mod common;

use common::{backend, envelope, gzip, now_ms, recent, record, request, schema, Server};
use llm_ux_collector::MAX_BODY_BYTES;
use serde_json::{json, Value};

/// Posts `body`, expects 400 naming `field`, and checks that nothing was stored.
fn assert_rejected(server: &Server, body: &Value, field: Option<&str>, problem_contains: &str) {
    let before = server.rows();
    let resp = server.post_json("/v1/beacons", body);
    assert_eq!(resp.status, 400, "{}: {}", field.unwrap_or("(body)"), resp.text());
    assert_eq!(resp.header("content-type"), Some("application/json"));
    let err = resp.json();
    assert_eq!(err["field"], json!(field), "{err}");
    assert!(err["error"].is_string(), "{err}");
    let problem = err["problem"].as_str().unwrap();
    assert!(problem.contains(problem_contains), "problem {problem:?} should mention {problem_contains:?}");
    assert_eq!(server.rows(), before, "a refused batch changes nothing");
}

#[test]
fn a_valid_batch_is_stored_with_its_fields_as_columns() {
    let server = Server::start(&[]);
    let resp = server.post_json("/v1/beacons", &envelope(vec![record("r1"), record("r2")]));
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.json(), json!({ "accepted": 2, "duplicates": 0 }));
    // As text, so the same check reads either store (see common::backend::scalar).
    let column = |name: &str| server.scalar(&format!("SELECT {name} FROM records WHERE id = 'r1'"));
    let expected: [(&str, &str); 21] = [
        ("model", "gpt-test"),
        ("scenario", "chat"),
        ("variant", "A"),
        ("app_version", "1.2.3"),
        ("connection", "4g"),
        ("format", "openai"),
        ("status", "ok"),
        ("started_at", &(recent(1_700_000_000_000.0) as i64).to_string()),
        ("ttft_ms", "420.25"),
        ("ttft_arrival_ms", "400"),
        ("tpot_ms", "31.5"),
        ("tpot_arrival_ms", "30"),
        ("output_tokens", "120"),
        ("gap_p90_ms", "45"),
        ("render_delay_p50_ms", "4"),
        ("stall_total_ms", "0"),
        ("stall_count", "0"),
        ("cadence", "[[420,1],[2100,60],[4200,120]]"),
        ("def", "1"),
        ("session_id", "s-1"),
        ("sample_rate", "1"),
    ];
    for (name, value) in expected {
        assert_eq!(column(name), value, "{name}");
    }
    assert_eq!(serde_json::from_str::<Value>(&column("raw")).unwrap(), record("r1"), "the raw record is kept as sent");
    let received: i64 = server.scalar("SELECT received_at FROM records WHERE id = 'r2'").parse().unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    assert!((now - received).abs() < 60_000, "received_at {received} is epoch ms");
    if backend::is_clickhouse() {
        return; // the rest is about the SQLite file itself
    }
    let conn = server.db();
    for (name, sqlite_type) in [("started_at", "real"), ("ttft_ms", "real"), ("sample_rate", "real"), ("output_tokens", "integer"), ("stall_count", "integer"), ("raw", "text")] {
        let actual: String = conn.query_row(&format!("SELECT typeof({name}) FROM records WHERE id = 'r1'"), [], |r| r.get(0)).unwrap();
        assert_eq!(actual, sqlite_type, "{name}");
    }
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn content_types_json_text_plain_and_charset() {
    let server = Server::start(&[]);
    for (i, ct) in ["application/json", "text/plain", "text/plain;charset=UTF-8", "Application/JSON; charset=utf-8", "text/plain; charset=\"utf-8\""].iter().enumerate() {
        let body = envelope(vec![record(&format!("ct-{i}"))]).to_string();
        let resp = server.request("POST", "/v1/beacons", &[("content-type", ct)], body.as_bytes());
        assert_eq!(resp.status, 200, "{ct}: {}", resp.text());
    }
    assert_eq!(server.row_count(), 5);
}

#[test]
fn other_content_types_get_415_and_change_nothing() {
    let server = Server::start(&[]);
    let body = envelope(vec![record("x")]).to_string();
    for ct in [Some("application/x-www-form-urlencoded"), Some("multipart/form-data; boundary=x"), Some("text/html"), Some("text/plain; charset=iso-8859-1"), None] {
        let headers: Vec<(&str, &str)> = ct.map(|c| ("content-type", c)).into_iter().collect();
        let resp = server.request("POST", "/v1/beacons", &headers, body.as_bytes());
        assert_eq!(resp.status, 415, "{ct:?}: {}", resp.text());
        assert_eq!(resp.json()["field"], "content-type");
    }
    let resp = server.request("POST", "/v1/beacons", &[("content-type", "application/json"), ("content-encoding", "br")], body.as_bytes());
    assert_eq!(resp.status, 415, "{}", resp.text());
    assert_eq!(resp.json()["field"], "content-encoding");
    assert_eq!(server.row_count(), 0);
}

#[test]
fn not_json_gets_400() {
    let server = Server::start(&[]);
    for body in [&b"{"[..], b"", b"records=1", b"{\"v\":1,}", b"\xff\xfe{}", b"{\"v\":1} trailing"] {
        let resp = server.request("POST", "/v1/beacons", &[("content-type", "text/plain")], body);
        assert_eq!(resp.status, 400, "{:?}: {}", String::from_utf8_lossy(body), resp.text());
        let err = resp.json();
        assert_eq!(err["error"], "invalid JSON");
        assert_eq!(err["field"], Value::Null);
    }
    for body in [json!([]), json!("text"), json!(null), json!(42)] {
        assert_rejected(&server, &body, None, "expected a JSON object");
    }
    assert_eq!(server.row_count(), 0);
}

/// Every field the schema requires, of the envelope and of a record, missing in turn.
#[test]
fn every_required_field_missing_is_named() {
    let server = Server::start(&[]);
    let schema = schema();
    let envelope_required = schema["required"].as_array().unwrap();
    assert!(envelope_required.len() >= 9);
    for field in envelope_required {
        let field = field.as_str().unwrap();
        let mut body = envelope(vec![record("e")]);
        body.as_object_mut().unwrap().remove(field);
        assert_rejected(&server, &body, Some(field), "required field is missing");
    }
    let record_required = schema["$defs"]["record"]["required"].as_array().unwrap();
    assert!(record_required.len() >= 38);
    for field in record_required {
        let field = field.as_str().unwrap();
        let good = record("good");
        let mut bad = record("bad");
        bad.as_object_mut().unwrap().remove(field);
        // The bad record is the third: the path names it.
        assert_rejected(&server, &envelope(vec![good.clone(), record("good2"), bad]), Some(&format!("records[2].{field}")), "required field is missing");
    }
    // Several missing: the first in the schema's order is named.
    assert_rejected(&server, &envelope(vec![json!({})]), Some("records[0].id"), "required field is missing");
    assert_rejected(&server, &envelope(vec![json!({ "id": "x" })]), Some("records[0].startedAt"), "required field is missing");
    assert_rejected(&server, &json!({ "records": [] }), Some("v"), "required field is missing");
    // Required fields of nested objects.
    for (object, fields) in [("stalls", &["count", "count1000", "longestMs", "totalMs"][..]), ("gaps", &["p50", "p90", "p99", "max"]), ("renderDelay", &["p50", "p90"]), ("outputEventsByKind", &["answer", "reasoning", "tool"]), ("anomalies", &["malformedEvents", "oversizeDropped", "unterminatedLast"])] {
        for field in fields {
            let mut bad = record("bad");
            bad[object].as_object_mut().unwrap().remove(*field);
            assert_rejected(&server, &envelope(vec![bad]), Some(&format!("records[0].{object}.{field}")), "required field is missing");
        }
    }
}

/// Every property of the schema given a value of a type it does not accept (an array; an object for
/// `records` and `cadence`), in turn.
#[test]
fn every_field_of_the_wrong_type_is_named() {
    let server = Server::start(&[]);
    let schema = schema();
    for field in schema["properties"].as_object().unwrap().keys() {
        let mut body = envelope(vec![record("t")]);
        body[field] = if field == "records" { json!({}) } else { json!([1]) };
        assert_rejected(&server, &body, Some(field), "");
    }
    for field in schema["$defs"]["record"]["properties"].as_object().unwrap().keys() {
        let mut bad = record("t");
        bad[field] = if field == "cadence" { json!({}) } else { json!([1]) };
        assert_rejected(&server, &envelope(vec![bad]), Some(&format!("records[0].{field}")), "");
    }
    // Specific type mistakes, with the words of the problem.
    let cases: Vec<(&str, Value, &str)> = vec![
        ("ttftMs", json!("420"), "expected a number or null, got a string"),
        ("startedAt", json!(null), "expected a number, got null"),
        ("startedAt", json!(1e19), "must be epoch milliseconds within the 30 days before the collector's clock"),
        ("startedAt", json!(-1), "must be epoch milliseconds within the 30 days before the collector's clock"),
        ("outputTokens", json!(12.5), "expected an integer"),
        ("outputTokens", json!(null), "expected an integer"),
        ("hidden", json!("false"), "expected true or false"),
        ("model", json!(7), "expected a string or null, got a number"),
        ("id", json!(7), "expected a string, got a number"),
        ("stalls", json!("none"), "expected an object or null"),
        ("cores", json!(4.5), "expected an integer"),
    ];
    for (field, value, problem) in cases {
        let mut bad = record("t");
        bad[field] = value;
        assert_rejected(&server, &envelope(vec![bad]), Some(&format!("records[0].{field}")), problem);
    }
    let mut bad = record("t");
    bad["stalls"]["count"] = json!("2");
    assert_rejected(&server, &envelope(vec![bad]), Some("records[0].stalls.count"), "expected an integer");
}

/// Every enum of the schema given a value outside it, in turn.
#[test]
fn every_enum_refuses_other_values() {
    let server = Server::start(&[]);
    let schema = schema();
    let mut enums = 0;
    for (field, prop) in schema["$defs"]["record"]["properties"].as_object().unwrap() {
        let Some(allowed) = prop["enum"].as_array() else { continue };
        enums += 1;
        let mut bad = record("enum");
        bad[field] = json!("definitely-not-allowed");
        assert_rejected(&server, &envelope(vec![bad]), Some(&format!("records[0].{field}")), "expected one of");
        // Each allowed value is accepted (null only where the schema lists it).
        for (i, value) in allowed.iter().enumerate() {
            let mut good = record(&format!("enum-{field}-{i}"));
            good[field] = value.clone();
            let resp = server.post_json("/v1/beacons", &envelope(vec![good]));
            assert_eq!(resp.status, 200, "{field}={value}: {}", resp.text());
        }
        if !allowed.contains(&Value::Null) {
            let mut bad = record("enum-null");
            bad[field] = Value::Null;
            assert_rejected(&server, &envelope(vec![bad]), Some(&format!("records[0].{field}")), "expected one of");
        }
    }
    assert_eq!(enums, 5, "format, status, renderSource, tokenSource, browser");
    let mut body = envelope(vec![record("v")]);
    body["v"] = json!(2);
    assert_rejected(&server, &body, Some("v"), "expected 1");
}

#[test]
fn ranges_lengths_and_patterns() {
    let server = Server::start(&[]);
    let with = |field: &str, value: Value| {
        let mut r = record("x");
        r[field] = value;
        envelope(vec![r])
    };
    assert_rejected(&server, &with("outputTokens", json!(-1)), Some("records[0].outputTokens"), "between 0 and 10000000");
    assert_rejected(&server, &with("def", json!(0)), Some("records[0].def"), "between 1 and 1000");
    assert_rejected(&server, &with("id", json!("")), Some("records[0].id"), "1 to 128 characters");
    assert_rejected(&server, &with("id", json!("é".repeat(129))), Some("records[0].id"), "1 to 128 characters");
    assert_rejected(&server, &with("model", json!("m".repeat(257))), Some("records[0].model"), "at most 256");
    assert_rejected(&server, &with("url", json!("https://a.example/chat?token=secret")), Some("records[0].url"), "query or fragment");
    assert_rejected(&server, &with("url", json!("https://a.example/chat#x")), Some("records[0].url"), "query or fragment");
    let mut body = envelope(vec![record("x")]);
    body["sampleRate"] = json!(1.5);
    assert_rejected(&server, &body, Some("sampleRate"), "between 0 and 1");
    body["sampleRate"] = json!(0.5);
    body["retry"] = json!(-1);
    assert_rejected(&server, &body, Some("retry"), "between 0 and 10000000");
    body["retry"] = json!(0);
    body["records"] = json!([]);
    assert_rejected(&server, &body, Some("records"), "at least one record");
    body["records"] = json!([record("ok"), "not a record"]);
    assert_rejected(&server, &body, Some("records[1]"), "expected an object");
    // The limits themselves are accepted: 128-character id (in characters, not bytes), 256-character
    // name, integral numbers written with a fraction.
    let mut r = record(&"é".repeat(128));
    r["model"] = json!("m".repeat(256));
    r["outputTokens"] = json!(120.0);
    let resp = server.post_json("/v1/beacons", &envelope(vec![r]));
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(server.row_count(), 1);
}

/// `cadence`: each bound of the schema, and the order it states, refused naming the field, the point
/// or the number at fault; what is within them stored as sent.
#[test]
fn a_bad_cadence_is_refused_naming_the_point() {
    let server = Server::start(&[]);
    let many: Vec<Value> = (0..33).map(|i| json!([i * 10, i])).collect();
    let cases: Vec<(Value, &str, &str)> = vec![
        (Value::Null, "", "expected an array of [ms, tokens] points, got null"),
        (json!("[[1, 2]]"), "", "expected an array"),
        (json!(many), "", "at most 32 points, got 33"),
        (json!([[0, 0], [3_600_001, 5]]), "[1][0]", "between 0 and 3600000 (ms since the stream's start, up to 1 hour), got 3600001"),
        (json!([[0, -1]]), "[0][1]", "between 0 and 3600000 (tokens shown, up to 3.6 million), got -1"),
        (json!([[0, 1e300]]), "[0][1]", "between 0 and 3600000"),
        (json!([[420.5, 1]]), "[0][0]", "expected an integer, got 420.5"),
        (json!([["420", 1]]), "[0][0]", "expected an integer, got a string"),
        (json!([[420, 1], [500, 2, 3]]), "[1]", "expected a point [ms, tokens] (two numbers), got [500,2,3]"),
        (json!([[420]]), "[0]", "expected a point"),
        (json!([{ "ms": 420, "tokens": 1 }]), "[0]", "expected a point"),
        (json!([[420, 1], [2100, 60], [2000, 61]]), "[2][0]", "must not be less than the point before's (2100): ms never decrease, got 2000"),
        (json!([[420, 5], [2100, 4]]), "[1][1]", "must not be less than the point before's (5): tokens shown never decrease, got 4"),
        // The schema's own rules first: a point it refuses is named for that, not for the order.
        (json!([[420, 5], [400, "4"]]), "[1][1]", "expected an integer"),
    ];
    for (value, at, problem) in cases {
        let mut bad = record("bad-1");
        bad["cadence"] = value;
        assert_rejected(&server, &envelope(vec![record("ok-0"), bad]), Some(&format!("records[1].cadence{at}")), problem);
    }
    let full: Vec<Value> = (0..32).map(|i| json!([i * 100_000, i / 2])).collect();
    for (id, cadence) in [("none", None), ("empty", Some(json!([]))), ("flat", Some(json!([[0, 0], [0, 0], [3_600_000, 3_600_000]]))), ("full", Some(json!(full)))] {
        let mut r = record(id);
        match &cadence {
            Some(points) => r["cadence"] = points.clone(),
            None => drop(r.as_object_mut().unwrap().remove("cadence")),
        }
        let resp = server.post_json("/v1/beacons", &envelope(vec![r]));
        assert_eq!(resp.status, 200, "{id}: {}", resp.text());
        let stored = server.scalar(&format!("SELECT cadence FROM records WHERE id = '{id}'"));
        assert_eq!(stored, cadence.map_or("NULL".into(), |points| points.to_string()), "{id}");
    }
}

const HOUR_MS: f64 = 3_600_000.0;
const DAY_MS: f64 = 24.0 * HOUR_MS;

/// What the hardening issue (#14) sent, and more like it: each refused with 400 naming the field, in
/// the second record of its batch, and nothing of the batch stored.
#[test]
fn unbounded_strings_and_implausible_figures_are_refused_naming_the_field() {
    let server = Server::start(&[]);
    let now = now_ms() as f64;
    let cases: Vec<(&str, Value, &str)> = vec![
        ("connection", json!("x".repeat(10_000)), "at most 32 characters"),
        ("connection", json!("x".repeat(33)), "at most 32 characters"),
        ("url", json!(format!("https://a.example/{}", "p".repeat(10_000))), "at most 2048 characters"),
        ("model", json!("m".repeat(100_000)), "at most 256 characters"),
        ("finishReason", json!("f".repeat(257)), "at most 256 characters"),
        ("ttftMs", json!(-5000), "between 0 and 3600000 (milliseconds, up to 1 hour), got -5000"),
        ("durationMs", json!(-1e308), "got -1e+308"),
        ("tpotMs", json!(1.7e308), "got 1.7e+308"),
        ("ttftMs", json!(2.0 * HOUR_MS), "up to 1 hour"),
        ("rttMs", json!(-1), "between 0 and 3600000"),
        ("cores", json!(-5), "between 1 and 4096"),
        ("deviceMemoryGb", json!(1e6), "between 0 and 1024"),
        ("outputTokens", json!(20_000_000), "between 0 and 10000000 (a count, up to 10 million)"),
        ("reasoningTokens", json!(-1), "between 0 and 10000000"),
        ("tokensPerSecond", json!(1e7), "between 0 and 1000000"),
        ("httpStatus", json!(1000), "between 0 and 999"),
        ("def", json!(1001), "between 1 and 1000"),
        ("startedAt", json!(now - 31.0 * DAY_MS), "within the 30 days before the collector's clock and at most 1 hour after it"),
        ("startedAt", json!(now + 2.0 * HOUR_MS), "within the 30 days before the collector's clock and at most 1 hour after it"),
    ];
    for (field, value, problem) in cases {
        let mut bad = record("bad-1");
        bad[field] = value;
        assert_rejected(&server, &envelope(vec![record("ok-0"), bad]), Some(&format!("records[1].{field}")), problem);
    }
    let nested: Vec<(&str, &str, Value)> = vec![
        ("stalls", "totalMs", json!(1.7e308)),
        ("stalls", "count", json!(10_000_001)),
        ("gaps", "p99", json!(-1)),
        ("arrivalGaps", "max", json!(HOUR_MS + 0.5)),
        ("renderDelay", "p90", json!(4e6)),
        ("outputEventsByKind", "tool", json!(10_000_001)),
        ("anomalies", "malformedEvents", json!(-1)),
    ];
    for (object, field, value) in nested {
        let mut bad = record("bad-1");
        bad[object][field] = value;
        assert_rejected(&server, &envelope(vec![record("ok-0"), bad]), Some(&format!("records[1].{object}.{field}")), "between");
    }
    for (field, value, problem) in [
        ("sentAt", json!(now + 2.0 * HOUR_MS), "within the 30 days"),
        ("sentAt", json!(now - 31.0 * DAY_MS), "within the 30 days"),
        ("retry", json!(10_000_001), "between 0 and 10000000"),
        ("def", json!(0), "between 1 and 1000"),
    ] {
        let mut body = envelope(vec![record("ok-0")]);
        body[field] = value;
        assert_rejected(&server, &body, Some(field), problem);
    }
    assert_eq!(server.row_count(), 0);
}

/// The bounds themselves, and times at the edges of the window (a minute inside, for the time the
/// request takes), are accepted and stored.
#[test]
fn figures_at_their_bounds_are_accepted() {
    let server = Server::start(&[]);
    let now = now_ms() as f64;
    let mut edges: Vec<Value> = Vec::new();
    for (i, (field, value)) in [
        ("startedAt", json!(now - 30.0 * DAY_MS + 60_000.0)),
        ("startedAt", json!(now + HOUR_MS - 60_000.0)),
        ("connection", json!("c".repeat(32))),
        ("url", json!(format!("https://a.example/{}", "p".repeat(2048 - 18)))),
        ("ttftMs", json!(HOUR_MS)),
        ("durationMs", json!(0)),
        ("outputTokens", json!(10_000_000)),
        ("tokensPerSecond", json!(1e6)),
        ("cores", json!(4096)),
        ("deviceMemoryGb", json!(0.25)),
        ("httpStatus", json!(0)),
    ]
    .into_iter()
    .enumerate()
    {
        let mut r = record(&format!("edge-{i}"));
        r[field] = value;
        edges.push(r);
    }
    let mut body = envelope(edges);
    body["sentAt"] = json!(now - 30.0 * DAY_MS + 60_000.0);
    let resp = server.post_json("/v1/beacons", &body);
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(server.row_count(), 11);
    assert_eq!(server.scalar("SELECT length(url) FROM records WHERE id = 'edge-3'"), "2048");
}

/// `additionalProperties: false` at every level of the schema: a field it does not name is refused,
/// named with its path, and nothing of the batch is stored.
#[test]
fn unknown_fields_are_refused_at_every_level() {
    let server = Server::start(&[]);
    let mut body = envelope(vec![record("ok-0")]);
    body["extra"] = json!(1);
    assert_rejected(&server, &body, Some("extra"), "unknown field");
    let mut bad = record("bad-1");
    bad["injected"] = json!("unknown field");
    assert_rejected(&server, &envelope(vec![record("ok-0"), bad]), Some("records[1].injected"), "unknown field");
    // A field of the schema, in the wrong place, is unknown there.
    let mut bad = record("bad-1");
    bad["sessionId"] = json!("s-2");
    assert_rejected(&server, &envelope(vec![record("ok-0"), bad]), Some("records[1].sessionId"), "unknown field");
    for object in ["outputEventsByKind", "gaps", "arrivalGaps", "stalls", "renderDelay", "anomalies"] {
        let mut bad = record("bad-1");
        bad[object]["p75"] = json!(1);
        assert_rejected(&server, &envelope(vec![record("ok-0"), bad]), Some(&format!("records[1].{object}.p75")), "unknown field");
    }
    // A huge name is named cut short.
    let mut bad = record("bad-1");
    bad["k".repeat(100_000)] = json!(1);
    assert_rejected(&server, &envelope(vec![bad]), Some(&format!("records[0].{}…", "k".repeat(64))), "unknown field");
    assert_eq!(server.row_count(), 0);
}

#[test]
fn one_bad_record_stores_nothing_of_its_batch() {
    let server = Server::start(&[]);
    let mut records: Vec<Value> = (0..10).map(|i| record(&format!("batch-{i}"))).collect();
    records[3]["status"] = json!("fine");
    assert_rejected(&server, &envelope(records.clone()), Some("records[3].status"), "expected one of \"ok\"");
    assert_eq!(server.row_count(), 0);
    records[3]["status"] = json!("aborted");
    let resp = server.post_json("/v1/beacons", &envelope(records));
    assert_eq!(resp.json(), json!({ "accepted": 10, "duplicates": 0 }));
    assert_eq!(server.row_count(), 10);
}

#[test]
fn the_same_batch_twice_is_all_duplicates_and_changes_no_row() {
    let server = Server::start(&[]);
    let body = envelope((0..5).map(|i| record(&format!("dup-{i}"))).collect());
    assert_eq!(server.post_json("/v1/beacons", &body).json(), json!({ "accepted": 5, "duplicates": 0 }));
    let rows = server.rows();
    assert_eq!(rows.len(), 5);
    std::thread::sleep(std::time::Duration::from_millis(5)); // a rewrite would change received_at
    let mut retry = body.clone();
    retry["retry"] = json!(1);
    retry["sentAt"] = json!(recent(1_700_000_009_000.0));
    let resp = server.post_json("/v1/beacons", &retry);
    assert_eq!(resp.status, 200);
    assert_eq!(resp.json(), json!({ "accepted": 0, "duplicates": 5 }));
    assert_eq!(server.rows(), rows, "rows unchanged");
    // Partly new: only the new ones are stored; a repeat inside one batch counts as a duplicate too.
    let mut changed = record("dup-0");
    changed["model"] = json!("other-model");
    let body = envelope(vec![changed, record("dup-new"), record("dup-new")]);
    assert_eq!(server.post_json("/v1/beacons", &body).json(), json!({ "accepted": 1, "duplicates": 2 }));
    assert_eq!(server.scalar("SELECT model FROM records WHERE id = 'dup-0'"), "gpt-test", "the first copy stays");
    assert_eq!(server.row_count(), 6);
}

#[test]
fn gzip_bodies() {
    let server = Server::start(&[]);
    let body = envelope((0..50).map(|i| record(&format!("gz-{i}"))).collect()).to_string();
    for (i, (ct, ce)) in [("text/plain;charset=UTF-8", "gzip"), ("application/json", "GZIP"), ("application/json", "x-gzip")].iter().enumerate() {
        let mut env: Value = serde_json::from_str(&body).unwrap();
        for r in env["records"].as_array_mut().unwrap() {
            r["id"] = json!(format!("{}-{i}", r["id"].as_str().unwrap()));
        }
        let resp = server.request("POST", "/v1/beacons", &[("content-type", ct), ("content-encoding", ce)], &gzip(env.to_string().as_bytes()));
        assert_eq!(resp.status, 200, "{ce}: {}", resp.text());
        assert_eq!(resp.json(), json!({ "accepted": 50, "duplicates": 0 }));
    }
    assert_eq!(server.row_count(), 150);
    // Declared gzip but not gzip: 400, nothing stored.
    let resp = server.request("POST", "/v1/beacons", &[("content-type", "application/json"), ("content-encoding", "gzip")], envelope(vec![record("plain")]).to_string().as_bytes());
    assert_eq!(resp.status, 400, "{}", resp.text());
    assert_eq!(resp.json()["error"], "invalid gzip");
    // Truncated gzip.
    let packed = gzip(envelope(vec![record("cut")]).to_string().as_bytes());
    let resp = server.request("POST", "/v1/beacons", &[("content-type", "application/json"), ("content-encoding", "gzip")], &packed[..packed.len() / 2]);
    assert_eq!(resp.status, 400, "{}", resp.text());
    assert_eq!(server.row_count(), 150);
}

#[test]
fn bodies_over_one_mib_get_413() {
    let server = Server::start(&[]);
    // A valid envelope padded with whitespace to just over 1 MiB, and one at exactly 1 MiB.
    let base = envelope(vec![record("big")]).to_string();
    let padded = |len: usize| format!("{base}{}", " ".repeat(len - base.len()));
    let over = padded(MAX_BODY_BYTES + 1);
    for chunked in [false, true] {
        let resp = request(server.addr, "POST", "/v1/beacons", &[("content-type", "text/plain")], over.as_bytes(), chunked);
        assert_eq!(resp.status, 413, "chunked {chunked}: {}", resp.text());
        assert!(resp.json()["problem"].as_str().unwrap().contains("1 MiB"));
    }
    assert_eq!(server.row_count(), 0);
    let resp = server.request("POST", "/v1/beacons", &[("content-type", "text/plain")], padded(MAX_BODY_BYTES).as_bytes());
    assert_eq!(resp.status, 200, "exactly 1 MiB is accepted: {}", resp.text());
    assert_eq!(server.row_count(), 1);
}

#[test]
fn a_gzip_bomb_gets_413() {
    let server = Server::start(&[]);
    // 16 MiB of spaces after a valid envelope: about 16 KiB compressed.
    let base = envelope(vec![record("bomb")]).to_string();
    let mut raw = base.into_bytes();
    raw.resize(16 * 1024 * 1024, b' ');
    let bomb = gzip(&raw);
    assert!(bomb.len() < 64 * 1024, "{} bytes compressed", bomb.len());
    let resp = server.request("POST", "/v1/beacons", &[("content-type", "application/json"), ("content-encoding", "gzip")], &bomb);
    assert_eq!(resp.status, 413, "{}", resp.text());
    assert!(resp.json()["problem"].as_str().unwrap().contains("decompressed"));
    // Just over 1 MiB decompressed is refused as well; at 1 MiB it is accepted.
    let base = envelope(vec![record("edge")]).to_string();
    let pad = |len: usize| format!("{base}{}", " ".repeat(len - base.len()));
    let resp = server.request("POST", "/v1/beacons", &[("content-type", "application/json"), ("content-encoding", "gzip")], &gzip(pad(MAX_BODY_BYTES + 1).as_bytes()));
    assert_eq!(resp.status, 413);
    assert_eq!(server.row_count(), 0);
    let resp = server.request("POST", "/v1/beacons", &[("content-type", "application/json"), ("content-encoding", "gzip")], &gzip(pad(MAX_BODY_BYTES).as_bytes()));
    assert_eq!(resp.status, 200, "{}", resp.text());
}

#[test]
fn the_ingest_key_is_required_when_set() {
    let server = Server::start(&["--ingest-key", "s3cr3t&x"]);
    let body = envelope(vec![record("k")]).to_string();
    let post = |path: &str| server.request("POST", path, &[("content-type", "text/plain")], body.as_bytes());
    for path in ["/v1/beacons", "/v1/beacons?key=wrong", "/v1/beacons?key=", "/v1/beacons?key=s3cr3t", "/v1/beacons?other=s3cr3t%26x"] {
        let resp = post(path);
        assert_eq!(resp.status, 401, "{path}: {}", resp.text());
        assert_eq!(resp.json()["field"], "key");
    }
    assert_eq!(server.row_count(), 0);
    // The key is URL-encoded in the query.
    let resp = post("/v1/beacons?key=s3cr3t%26x");
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(server.row_count(), 1);
    // Without a key configured, a key parameter is ignored.
    let open = Server::start(&[]);
    let resp = open.request("POST", "/v1/beacons?key=anything", &[("content-type", "text/plain")], body.as_bytes());
    assert_eq!(resp.status, 200);
}

#[test]
fn cors_preflight_and_allowed_origins() {
    let server = Server::start(&["--allow-origin", "https://chat.example.com", "--allow-origin", "http://127.0.0.1:5173/"]);
    let preflight = |origin: &str| {
        server.request(
            "OPTIONS",
            "/v1/beacons",
            &[("origin", origin), ("access-control-request-method", "POST"), ("access-control-request-headers", "content-type,content-encoding")],
            b"",
        )
    };
    let resp = preflight("https://chat.example.com");
    assert_eq!(resp.status, 204, "{}", resp.text());
    assert_eq!(resp.header("access-control-allow-origin"), Some("https://chat.example.com"));
    assert!(resp.header("access-control-allow-methods").unwrap().contains("POST"));
    assert_eq!(resp.header("access-control-allow-headers"), Some("content-type,content-encoding"));
    assert_eq!(resp.header("access-control-expose-headers"), Some("retry-after"));
    assert!(resp.header("access-control-max-age").is_some());
    assert_eq!(resp.header("vary"), Some("origin"));
    let resp = preflight("http://127.0.0.1:5173");
    assert_eq!(resp.status, 204);
    assert_eq!(resp.header("access-control-allow-origin"), Some("http://127.0.0.1:5173"));
    let resp = preflight("https://evil.example.com");
    assert_eq!(resp.status, 403);
    assert_eq!(resp.header("access-control-allow-origin"), None);

    let body = envelope(vec![record("cors")]).to_string();
    let post = |origin: &str| server.request("POST", "/v1/beacons", &[("content-type", "text/plain"), ("origin", origin)], body.as_bytes());
    let resp = post("https://evil.example.com");
    assert_eq!(resp.status, 403, "a simple request from another origin is refused too");
    assert_eq!(server.row_count(), 0);
    let resp = post("https://chat.example.com");
    assert_eq!(resp.status, 200);
    assert_eq!(resp.header("access-control-allow-origin"), Some("https://chat.example.com"));
    assert_eq!(resp.header("access-control-expose-headers"), Some("retry-after"));
    // Error answers carry the CORS headers as well, so the page can read them.
    let resp = server.request("POST", "/v1/beacons", &[("content-type", "text/plain"), ("origin", "https://chat.example.com")], b"{");
    assert_eq!(resp.status, 400);
    assert_eq!(resp.header("access-control-allow-origin"), Some("https://chat.example.com"));
    // Not the analytics API: --allow-origin is ingest's list (the API's is --api-origin, see serving.rs).
    let resp = server.request("GET", "/api/summary", &[("origin", "https://chat.example.com")], b"");
    assert_eq!(resp.status, 200);
    assert_eq!(resp.header("access-control-allow-origin"), None);
    // A request without Origin (not a browser) is served without CORS headers.
    let resp = server.post_json("/v1/beacons", &envelope(vec![record("no-origin")]));
    assert_eq!(resp.status, 200);
    assert_eq!(resp.header("access-control-allow-origin"), None);

    // `*`: any origin, answered with `*`.
    let any = Server::start(&["--allow-origin", "*"]);
    let resp = any.request("OPTIONS", "/v1/beacons", &[("origin", "https://anywhere.example"), ("access-control-request-method", "POST")], b"");
    assert_eq!(resp.status, 204);
    assert_eq!(resp.header("access-control-allow-origin"), Some("*"));
    let resp = any.request("POST", "/v1/beacons", &[("content-type", "text/plain"), ("origin", "https://anywhere.example")], body.as_bytes());
    assert_eq!(resp.status, 200);
    assert_eq!(resp.header("access-control-allow-origin"), Some("*"));
    assert_eq!(resp.header("access-control-expose-headers"), Some("retry-after"));

    // No --allow-origin: no CORS headers, no origin check.
    let plain = Server::start(&[]);
    let resp = plain.request("POST", "/v1/beacons", &[("content-type", "text/plain"), ("origin", "https://x.example")], body.as_bytes());
    assert_eq!(resp.status, 200);
    assert_eq!(resp.header("access-control-allow-origin"), None);
}

#[test]
fn health_and_unknown_routes() {
    let server = Server::start(&[]);
    let resp = server.get("/health");
    assert_eq!(resp.status, 200);
    assert_eq!(resp.json()["status"], "ok");
    assert_eq!(server.get("/nope").status, 404);
    assert_eq!(server.get("/v1/beacons").status, 405);
}

#[test]
fn a_storage_failure_mid_batch_rolls_the_whole_batch_back() {
    let server = Server::start(&[]);
    // The store fails on the third record of the batch (SQLite: a trigger inside the transaction).
    backend::fail_inserts_of(&server.db, "boom");
    let body = envelope(vec![record("tx-1"), record("tx-2"), record("boom"), record("tx-4")]);
    let resp = server.post_json("/v1/beacons", &body);
    assert_eq!(resp.status, 500, "{}", resp.text());
    assert_eq!(resp.json()["error"], "storage failed");
    assert_eq!(server.row_count(), 0, "the two records before the failure were rolled back");
    backend::repair_inserts(&server.db);
    assert_eq!(server.post_json("/v1/beacons", &body).json(), json!({ "accepted": 4, "duplicates": 0 }));
}
