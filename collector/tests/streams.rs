//! GET /api/streams over real HTTP against records ingested through POST /v1/beacons, checked
//! against a selection and sort done here, independently, on the records as sent.

mod common;

use common::{envelope, recent, record, Server};
use serde_json::{json, Value};
use std::cmp::Ordering;
use std::sync::LazyLock;

static T0: LazyLock<f64> = LazyLock::new(|| recent(1_700_000_000_000.0));
const HOUR: f64 = 3_600_000.0;

/// Records over one hour from T0 with every figure sometimes null, ties on each sort figure, and
/// records outside the window or of definition version 2 that must never be listed.
fn dataset() -> Vec<Value> {
    let mut out = Vec::new();
    for i in 0..240u64 {
        let mut r = record(&format!("s-{:03}", (i * 97) % 240)); // ids not in time order
        let pick = |n: u64| (i * 7919 + n * 104_729) % 1000;
        r["model"] = json!(["m-fast", "m-slow", "m-new"][(i % 3) as usize]);
        r["scenario"] = json!(["chat", "code"][(i / 3 % 2) as usize]);
        r["startedAt"] = json!(*T0 + (pick(1) as f64) * 3_000.0 + 0.25);
        let maybe = |n: u64, value: Value| if pick(n) % 9 == 0 { Value::Null } else { value };
        // Few distinct values: many ties, broken by id.
        r["ttftMs"] = maybe(2, json!(100.0 * (pick(3) % 20) as f64 + 0.5));
        r["ttftArrivalMs"] = maybe(4, json!(90.0 * (pick(5) % 20) as f64));
        r["tpotMs"] = maybe(6, json!(5.0 * (pick(7) % 12) as f64));
        r["tpotArrivalMs"] = maybe(8, json!(4.5 * (pick(9) % 12) as f64));
        r["outputTokens"] = json!(pick(10) % 600);
        r["durationMs"] = maybe(11, json!(50.0 * (pick(12) % 200) as f64));
        r["gaps"] = maybe(13, json!({ "p50": 20.0, "p90": 10.0 * (pick(14) % 30) as f64, "p99": 300.0, "max": 400.0 }));
        r["renderDelay"] = maybe(15, json!({ "p50": (pick(16) % 40) as f64 / 4.0, "p90": 20.0 }));
        r["stalls"] = maybe(17, {
            let count = pick(18) % 3;
            json!({ "count": count, "count1000": 0, "longestMs": 700.0 * count as f64, "totalMs": 600.0 * count as f64 })
        });
        r["status"] = json!(["ok", "ok", "aborted", "incomplete", "error"][(pick(19) % 5) as usize]);
        r["hidden"] = json!(pick(20) % 10 == 0);
        r["finishReason"] = if pick(21) % 4 == 0 { Value::Null } else { json!("stop") };
        r["connection"] = if pick(22) % 4 == 0 { Value::Null } else { json!(["4g", "wifi"][(pick(23) % 2) as usize]) };
        // Sent by packages before the field: listed as null; `[]`: no output arrived.
        match pick(24) % 5 {
            0 => drop(r.as_object_mut().unwrap().remove("cadence")),
            1 => r["cadence"] = json!([]),
            n => r["cadence"] = json!((0..n * 5).map(|k| [k * pick(25), k * k]).collect::<Vec<_>>()),
        }
        out.push(r);
    }
    // `from` is in the window; `to` and before `from` are not.
    for (id, at) in [("edge-from", *T0), ("edge-to", *T0 + HOUR), ("edge-before", *T0 - 1.0)] {
        let mut r = record(id);
        r["startedAt"] = json!(at);
        r["tpotMs"] = json!(1e6);
        out.push(r);
    }
    out
}

fn ingest(server: &Server, records: &[Value], def: i64) {
    for (n, chunk) in records.chunks(60).enumerate() {
        let mut env = envelope(chunk.to_vec());
        env["def"] = json!(def);
        env["batchId"] = json!(format!("batch-{def}-{n}"));
        let resp = server.post_json("/v1/beacons", &env);
        assert_eq!(resp.status, 200, "{}", resp.text());
    }
}

fn loaded_server() -> (Server, Vec<Value>) {
    let server = Server::start(&[]);
    let records = dataset();
    ingest(&server, &records, 1);
    // A retry of the first batch: its records are listed once.
    ingest(&server, &records[..60], 1);
    let mut other = records[..20].to_vec();
    for (i, r) in other.iter_mut().enumerate() {
        r["id"] = json!(format!("def2-{i}"));
        r["def"] = json!(2);
        r["tpotMs"] = json!(1e6);
    }
    ingest(&server, &other, 2);
    (server, records)
}

/// The figure `sort` of a record as sent.
fn figure(r: &Value, sort: &str) -> Option<f64> {
    match sort {
        "gapP90Ms" => r["gaps"]["p90"].as_f64(),
        "renderDelayMs" => r["renderDelay"]["p50"].as_f64(),
        "stallMs" => r["stalls"]["totalMs"].as_f64(),
        field => r[field].as_f64(),
    }
}

/// What the answer should list for a record: its own fields, as sent (`cadence` null when not sent).
fn listed(r: &Value) -> Value {
    let stalls = if r["stalls"].is_null() { Value::Null } else { json!({ "count": r["stalls"]["count"], "longestMs": r["stalls"]["longestMs"], "totalMs": r["stalls"]["totalMs"] }) };
    let mut out = json!({ "stalls": stalls, "gapP90Ms": r["gaps"]["p90"], "cadence": r["cadence"] });
    for field in [
        "id", "startedAt", "model", "scenario", "variant", "appVersion", "connection", "status", "httpStatus", "ttftMs", "ttftArrivalMs", "tpotMs",
        "tpotArrivalMs", "outputTokens", "renderDelay", "durationMs", "hidden", "finishReason",
    ] {
        out[field] = r[field].clone();
    }
    out
}

/// The expected list: records of the window matching `filters` (each dimension: any of its values,
/// never a null), sorted (nulls last, ties by id).
fn expected(records: &[Value], filters: &[(&str, &[&str])], sort: &str, descending: bool, limit: usize) -> Vec<Value> {
    let mut chosen: Vec<&Value> = records
        .iter()
        .filter(|r| (*T0..*T0 + HOUR).contains(&r["startedAt"].as_f64().unwrap()))
        .filter(|r| filters.iter().all(|(dim, values)| values.iter().any(|v| r[*dim] == json!(v))))
        .collect();
    chosen.sort_by(|a, b| {
        let by_value = match (figure(a, sort), figure(b, sort)) {
            (Some(x), Some(y)) if descending => y.partial_cmp(&x).unwrap(),
            (Some(x), Some(y)) => x.partial_cmp(&y).unwrap(),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        };
        by_value.then_with(|| a["id"].as_str().cmp(&b["id"].as_str()))
    });
    chosen.into_iter().take(limit).map(listed).collect()
}

/// The answer's streams are `expected`, field by field (a failure names the stream and field).
fn assert_listed(answer: &Value, expected: &[Value], context: &str) {
    let got = answer["streams"].as_array().unwrap_or_else(|| panic!("{context}: no streams in {answer}"));
    let ids = |list: &[Value]| list.iter().map(|s| s["id"].as_str().unwrap_or("?").to_owned()).collect::<Vec<_>>();
    assert_eq!(ids(got), ids(expected), "{context}: the streams and their order");
    for (g, e) in got.iter().zip(expected) {
        for (field, value) in e.as_object().unwrap() {
            assert!(same(&g[field], value), "{context}: {} {field}: {} listed, {value} sent", e["id"], g[field]);
        }
        assert_eq!(g.as_object().unwrap().len(), e.as_object().unwrap().len(), "{context}: {} has only the record's fields: {g}", e["id"]);
    }
}

/// JSON equality with numbers compared as numbers (a stored `0` comes back as `0.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Object(x), Value::Object(y)) => x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w))),
        _ => a == b,
    }
}

fn window() -> String {
    format!("from={}&to={}", *T0 as i64, (*T0 + HOUR) as i64)
}

#[test]
fn lists_the_window_sorted_by_each_figure_as_computed_here() {
    let (server, records) = loaded_server();
    let sorts = ["startedAt", "ttftMs", "ttftArrivalMs", "tpotMs", "tpotArrivalMs", "gapP90Ms", "renderDelayMs", "stallMs", "outputTokens", "durationMs"];
    for sort in sorts {
        for (order, descending) in [("desc", true), ("asc", false)] {
            let answer = server.get(&format!("/api/streams?{}&sort={sort}&order={order}&limit=40", window()));
            assert_eq!(answer.status, 200, "{}", answer.text());
            let body = answer.json();
            assert_eq!((&body["sort"], &body["order"], &body["def"]), (&json!(sort), &json!(order), &json!(1)));
            assert_listed(&body, &expected(&records, &[], sort, descending, 40), &format!("sort={sort}&order={order}"));
        }
    }
    // Every stream of the window at once, each once (the retried batch and definition 2 left out).
    let all = server.get(&format!("/api/streams?{}&sort=tpotMs&limit=500", window())).json();
    assert_eq!(all["streams"].as_array().unwrap().len(), 241);
    assert_listed(&all, &expected(&records, &[], "tpotMs", true, 500), "limit=500");
}

#[test]
fn filters_and_defaults() {
    let (server, records) = loaded_server();
    let answer = server.get(&format!("/api/streams?{}&model=m-slow&scenario=code&sort=ttftMs", window())).json();
    assert_listed(&answer, &expected(&records, &[("model", &["m-slow"]), ("scenario", &["code"])], "ttftMs", true, 50), "filtered");
    // A repeated filter matches any of its values; a stream without the dimension matches none.
    let answer = server.get(&format!("/api/streams?{}&model=m-slow&model=m-new&connection=wifi&sort=stallMs&order=asc&limit=500", window())).json();
    let expect = expected(&records, &[("model", &["m-slow", "m-new"]), ("connection", &["wifi"])], "stallMs", false, 500);
    assert!(expect.len() > 30, "the filters leave enough streams to tell");
    assert_listed(&answer, &expect, "repeated filter");
    // Defaults: the latest 50 first.
    let latest = server.get(&format!("/api/streams?{}", window())).json();
    assert_eq!((&latest["sort"], &latest["order"]), (&json!("startedAt"), &json!("desc")));
    assert_listed(&latest, &expected(&records, &[], "startedAt", true, 50), "defaults");
    let empty = server.get("/api/streams?from=0&to=1000").json();
    assert_eq!(empty["streams"], json!([]));
}

#[test]
fn each_stream_carries_its_cadence_as_sent_or_null() {
    let (server, records) = loaded_server();
    let answer = server.get(&format!("/api/streams?{}&limit=500", window())).json();
    let streams = answer["streams"].as_array().unwrap();
    let by_id = |id: &str| streams.iter().find(|s| s["id"] == json!(id)).unwrap_or_else(|| panic!("{id} not listed"));
    let (mut absent, mut empty, mut points) = (0, 0, 0);
    for r in records.iter().filter(|r| r["id"].as_str().unwrap().starts_with("s-")) {
        let cadence = &by_id(r["id"].as_str().unwrap())["cadence"];
        match r.get("cadence") {
            None => {
                assert!(cadence.is_null(), "{}: {cadence}", r["id"]);
                absent += 1;
            }
            Some(sent) => {
                assert_eq!(cadence, sent, "{}", r["id"]);
                *if sent.as_array().unwrap().is_empty() { &mut empty } else { &mut points } += 1;
            }
        }
    }
    assert!(absent > 20 && empty > 20 && points > 100, "{absent} without, {empty} empty, {points} with points");
}

#[test]
fn bad_parameters_are_refused_naming_them() {
    let server = Server::start(&[]);
    for (query, field) in [("sort=speed", "sort"), ("order=down", "order"), ("limit=501", "limit"), ("limit=-1", "limit"), ("groupBy=model", "groupBy"), ("slo.ttftMs=200", "slo.ttftMs"), ("modle=x", "modle"), ("sort=tpotMs&sort=ttftMs", "sort")] {
        let answer = server.get(&format!("/api/streams?{query}"));
        assert_eq!(answer.status, 400, "{query}");
        assert_eq!(answer.json()["field"], json!(field), "{query}");
    }
}
