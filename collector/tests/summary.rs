//! GET /api/summary over real HTTP against records ingested through POST /v1/beacons, checked
//! against figures computed here, independently, from the records as sent.

mod common;

use common::{envelope, gzip, recent, record, Server};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::sync::LazyLock;

static T0: LazyLock<f64> = LazyLock::new(|| recent(1_700_000_000_000.0));
const HOUR: f64 = 3_600_000.0;

/// A small deterministic generator (64-bit LCG).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// Records spread over one hour from T0, across models, scenarios, variants, connections and app
/// versions, with nulls, stalls, every length band, and a few just outside the window.
fn dataset() -> Vec<Value> {
    dataset_over(HOUR, 360, 42)
}

/// `n` records spread over `span` ms from T0 (plus the window-edge ones), as [`dataset`] describes.
fn dataset_over(span: f64, n: usize, seed: u64) -> Vec<Value> {
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    for i in 0..n {
        let mut r = record(&format!("rec-{i:04}"));
        r["model"] = json!(["m-fast", "m-slow"][i % 2]);
        r["scenario"] = json!(["chat", "code", "rag"][(i / 2) % 3]);
        r["variant"] = json!(["A", "B"][rng.below(2) as usize]);
        r["connection"] = [json!("4g"), json!("wifi"), Value::Null][rng.below(3) as usize].clone();
        r["appVersion"] = json!(["1.0", "1.1"][rng.below(2) as usize]);
        // Some exactly on a minute boundary: they belong to the minute they start.
        let at = *T0 + rng.below(span as u64) as f64;
        r["startedAt"] = json!(if i % 17 == 0 { (at / 60_000.0).floor() * 60_000.0 } else { at + 0.25 });
        let tokens = match rng.below(20) {
            0 => 0,
            1..=6 => 1 + rng.below(50),
            7..=15 => 51 + rng.below(450),
            _ => 501 + rng.below(1500),
        };
        r["outputTokens"] = json!(tokens);
        let slow = i % 2 == 1;
        r["ttftMs"] = if rng.chance(10) { Value::Null } else { json!(100.0 + rng.below(if slow { 3000 } else { 1200 }) as f64 + 0.5) };
        r["tpotMs"] = if tokens < 2 || rng.chance(8) { Value::Null } else { json!(5.0 + rng.below(if slow { 120 } else { 60 }) as f64 / 2.0) };
        r["gaps"] = if rng.chance(10) { Value::Null } else { json!({ "p50": 20.0, "p90": 30.0 + rng.below(200) as f64, "p99": 300.0, "max": 400.0 }) };
        r["renderDelay"] = if rng.chance(10) { Value::Null } else { json!({ "p50": rng.below(40) as f64 / 4.0, "p90": 20.0 }) };
        r["stalls"] = if rng.chance(10) {
            Value::Null
        } else {
            let count = if rng.chance(30) { 1 + rng.below(3) } else { 0 };
            json!({ "count": count, "count1000": 0, "longestMs": if count > 0 { 700.0 } else { 0.0 }, "totalMs": count as f64 * (500.0 + rng.below(300) as f64) })
        };
        // Some never reach a first token; the user stops or leaves some of the others.
        r["ttftArrivalMs"] = if rng.chance(8) { Value::Null } else { json!(90.0 + rng.below(3000) as f64) };
        r["status"] = json!(["ok", "ok", "ok", "aborted", "incomplete", "error"][rng.below(6) as usize]);
        out.push(r);
    }
    // Window edges: `from` is included, `to` and anything before `from` are not.
    for (id, at) in [("edge-from", *T0), ("edge-to", *T0 + HOUR), ("edge-before", *T0 - 1.0), ("edge-last", *T0 + HOUR - 0.5)] {
        let mut r = record(id);
        r["model"] = json!("m-fast");
        r["startedAt"] = json!(at);
        out.push(r);
    }
    out
}

/// Records of definition version 2 inside the window, with the same dimensions: never counted.
fn other_definition() -> Vec<Value> {
    (0..30)
        .map(|i| {
            let mut r = record(&format!("def2-{i}"));
            r["def"] = json!(2);
            r["model"] = json!(["m-fast", "m-slow"][i % 2]);
            r["scenario"] = json!("chat");
            r["startedAt"] = json!(*T0 + 1000.0 * i as f64);
            r["ttftMs"] = json!(99_999.0);
            r
        })
        .collect()
}

fn ingest(server: &Server, records: &[Value], def: i64) {
    for (n, chunk) in records.chunks(50).enumerate() {
        let mut env = envelope(chunk.to_vec());
        env["def"] = json!(def);
        env["batchId"] = json!(format!("batch-{def}-{n}"));
        let resp = if n % 2 == 0 {
            server.post_json("/v1/beacons", &env)
        } else {
            server.request("POST", "/v1/beacons", &[("content-type", "application/json"), ("content-encoding", "gzip")], &gzip(env.to_string().as_bytes()))
        };
        assert_eq!(resp.status, 200, "{}", resp.text());
        assert_eq!(resp.json()["accepted"], json!(chunk.len()));
    }
}

fn loaded_server() -> (Server, Vec<Value>) {
    let server = Server::start(&[]);
    let records = dataset();
    ingest(&server, &records, 1);
    ingest(&server, &other_definition(), 2);
    (server, records)
}

/// The expected `{ p50, p75, p90, p95, p99, mean }`: sort, take index floor(q·(n−1)).
fn expected_stats(mut values: Vec<f64>) -> Value {
    if values.is_empty() {
        return json!({ "p50": null, "p75": null, "p90": null, "p95": null, "p99": null, "mean": null });
    }
    values.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = values.len();
    let pick = |q: f64| values[(q * (n - 1) as f64 + 1e-9).floor() as usize];
    json!({ "p50": pick(0.5), "p75": pick(0.75), "p90": pick(0.9), "p95": pick(0.95), "p99": pick(0.99), "mean": values.iter().sum::<f64>() / n as f64 })
}

struct Expect<'a> {
    from: f64,
    to: f64,
    group_by: &'a [&'a str],
    filters: &'a [(&'a str, &'a [&'a str])],
    slo_ttft: Option<f64>,
    slo_tpot: Option<f64>,
}

/// The expected groups, keyed by the key's JSON, computed from the records as sent.
fn expected(records: &[Value], e: &Expect) -> BTreeMap<String, Value> {
    let mut groups: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for r in records {
        let at = r["startedAt"].as_f64().unwrap();
        if r["def"] != json!(1) || at < e.from || at >= e.to {
            continue;
        }
        if !e.filters.iter().all(|(dim, values)| r[*dim].as_str().is_some_and(|v| values.contains(&v))) {
            continue;
        }
        let key: Map<String, Value> = e.group_by.iter().map(|d| (d.to_string(), r[*d].clone())).collect();
        groups.entry(Value::Object(key).to_string()).or_default().push(r);
    }
    let minutes = (e.to - e.from) / 60_000.0;
    groups
        .into_iter()
        .map(|(key, rs)| {
            let n = rs.len() as f64;
            let values = |f: &dyn Fn(&Value) -> &Value| rs.iter().filter_map(|r| f(r).as_f64()).collect::<Vec<f64>>();
            let tokens: Vec<u64> = rs.iter().map(|r| r["outputTokens"].as_u64().unwrap()).collect();
            let with_stalls: Vec<&&Value> = rs.iter().filter(|r| !r["stalls"].is_null()).collect();
            let stalled = with_stalls.iter().filter(|r| r["stalls"]["count"].as_u64().unwrap() > 0).count();
            // A value within 1% of a threshold may be judged by its sketch bucket either way: the
            // goodput must lie between the strict and the lenient count.
            let goodput = if e.slo_ttft.is_none() && e.slo_tpot.is_none() {
                Value::Null
            } else {
                let share = |slack: f64| {
                    let ok = |v: &Value, slo: Option<f64>| slo.is_none_or(|max| v.as_f64().is_some_and(|x| x <= max * slack));
                    rs.iter().filter(|r| ok(&r["ttftMs"], e.slo_ttft) && ok(&r["tpotMs"], e.slo_tpot)).count() as f64 / n
                };
                json!({ "between": [share(0.99), share(1.01)] })
            };
            let group = json!({
                "key": serde_json::from_str::<Value>(&key).unwrap(),
                "count": rs.len(),
                "rpm": n / minutes,
                "tokenThroughput": tokens.iter().sum::<u64>() as f64 / (minutes * 60.0),
                "ttftMs": expected_stats(values(&|r| &r["ttftMs"])),
                "tpotMs": expected_stats(values(&|r| &r["tpotMs"])),
                "gapP90Ms": expected_stats(values(&|r| &r["gaps"]["p90"])),
                "renderDelayMs": expected_stats(values(&|r| &r["renderDelay"]["p50"])),
                "stallMs": expected_stats(values(&|r| &r["stalls"]["totalMs"])),
                "stallRate": if with_stalls.is_empty() { Value::Null } else { json!(stalled as f64 / with_stalls.len() as f64) },
                "goodput": goodput,
                "lengthBands": {
                    "1-50": tokens.iter().filter(|&&t| (1..=50).contains(&t)).count(),
                    "51-500": tokens.iter().filter(|&&t| (51..=500).contains(&t)).count(),
                    "over500": tokens.iter().filter(|&&t| t > 500).count(),
                },
                "byLength": {
                    "1-50": expected_length_band(&rs, 1..=50),
                    "51-500": expected_length_band(&rs, 51..=500),
                    "over500": expected_length_band(&rs, 501..=u64::MAX),
                },
                "stopRate": share(rs.iter().filter(|r| !r["ttftArrivalMs"].is_null()).map(|r| stopped(r))),
                "stopsBy": {
                    "ttftMs": expected_stops_by(&rs, "ttftMs", &[0.0, 500.0, 1000.0, 2000.0, 4000.0, 8000.0]),
                    "tpotMs": expected_stops_by(&rs, "tpotMs", &[0.0, 20.0, 40.0, 80.0, 160.0, 320.0]),
                },
            });
            (key, group)
        })
        .collect()
}

/// Whether the user stopped the stream (`aborted`) or left (`incomplete`).
fn stopped(r: &Value) -> bool {
    r["status"] == "aborted" || r["status"] == "incomplete"
}

/// The share of `true`s; null when there is none.
fn share(flags: impl Iterator<Item = bool>) -> Value {
    let (mut n, mut yes) = (0, 0);
    for flag in flags {
        n += 1;
        yes += usize::from(flag);
    }
    if n == 0 {
        Value::Null
    } else {
        json!(yes as f64 / n as f64)
    }
}

/// A `byLength` band: count, TPOT percentiles (without mean) and stall rate of its streams.
fn expected_length_band(rs: &[&Value], tokens: std::ops::RangeInclusive<u64>) -> Value {
    let band: Vec<&&Value> = rs.iter().filter(|r| tokens.contains(&r["outputTokens"].as_u64().unwrap())).collect();
    let mut tpot = expected_stats(band.iter().filter_map(|r| r["tpotMs"].as_f64()).collect());
    tpot.as_object_mut().unwrap().remove("mean");
    let stall_rate = share(band.iter().filter(|r| !r["stalls"].is_null()).map(|r| r["stalls"]["count"].as_u64().unwrap() > 0));
    json!({ "count": band.len(), "tpotMs": tpot, "stallRate": stall_rate })
}

/// `stopsBy` bands of `field`: a value within 1% of an edge may be judged by its sketch bucket on
/// either side, so each figure must lie between the strict and the lenient count.
fn expected_stops_by(rs: &[&Value], field: &str, edges: &[f64]) -> Value {
    let bands = edges.iter().enumerate().map(|(i, &from)| {
        let to = edges.get(i + 1).copied();
        let count = |slack: f64, only_stopped: bool| {
            let inside = |v: f64| v >= from * (1.0 + slack) && to.is_none_or(|to| v < to * (1.0 - slack));
            rs.iter().filter(|r| r[field].as_f64().is_some_and(inside) && (!only_stopped || stopped(r))).count() as f64
        };
        let (streams, stops) = ([count(0.011, false), count(-0.011, false)], [count(0.011, true), count(-0.011, true)]);
        let rate = if streams[1] == 0.0 { Value::Null } else { json!({ "between": [stops[0] / streams[1], if streams[0] == 0.0 { 1.0 } else { stops[1] / streams[0] }] }) };
        json!({ "from": from, "to": to, "streams": { "between": streams }, "stopped": { "between": stops }, "stopRate": rate })
    });
    Value::Array(bands.collect())
}

/// Equal JSON, numbers within a relative 1e-9, except percentiles (within the sketch's 1%) and
/// `{ "between": [lo, hi] }` expectations.
fn assert_close(got: &Value, want: &Value, path: &str) {
    let percentile = [".p50", ".p75", ".p90", ".p95", ".p99"].iter().any(|p| path.ends_with(p));
    match (got, want) {
        (Value::Number(g), Value::Number(w)) => {
            let (g, w) = (g.as_f64().unwrap(), w.as_f64().unwrap());
            let tolerance = if percentile { 0.01 * w.abs() } else { 1e-9 * w.abs().max(1.0) };
            assert!((g - w).abs() <= tolerance, "{path}: got {g}, want {w}");
        }
        (g, Value::Object(w)) if w.contains_key("between") => {
            let (lo, hi) = (w["between"][0].as_f64().unwrap(), w["between"][1].as_f64().unwrap());
            let g = g.as_f64().unwrap_or_else(|| panic!("{path}: got {g}, want a number in [{lo}, {hi}]"));
            assert!(lo - 1e-12 <= g && g <= hi + 1e-12, "{path}: got {g}, want a number in [{lo}, {hi}]");
        }
        (Value::Array(g), Value::Array(w)) => {
            assert_eq!(g.len(), w.len(), "{path}: length");
            for (i, (gv, wv)) in g.iter().zip(w).enumerate() {
                assert_close(gv, wv, &format!("{path}[{i}]"));
            }
        }
        (Value::Object(g), Value::Object(w)) => {
            let (gk, wk): (Vec<_>, Vec<_>) = (g.keys().collect(), w.keys().collect());
            assert_eq!(gk, wk, "{path}: keys");
            for (k, wv) in w {
                assert_close(&g[k], wv, &format!("{path}.{k}"));
            }
        }
        _ => assert_eq!(got, want, "{path}"),
    }
}

fn check(server: &Server, records: &[Value], e: &Expect, query: &str) -> Value {
    let resp = server.get(&format!("/api/summary?{query}"));
    assert_eq!(resp.status, 200, "{query}: {}", resp.text());
    assert_eq!(resp.header("content-type"), Some("application/json"));
    let body = resp.json();
    assert_eq!(body["def"], 1);
    assert_eq!(body["from"].as_f64(), Some(e.from));
    assert_eq!(body["to"].as_f64(), Some(e.to));
    let groups = body["groups"].as_array().unwrap();
    let got: BTreeMap<String, Value> = groups.iter().map(|g| (g["key"].to_string(), g.clone())).collect();
    assert_eq!(got.len(), groups.len(), "group keys are unique");
    let want = expected(records, e);
    assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>(), "{query}: groups");
    for (key, w) in &want {
        assert_close(&got[key], w, &format!("{query} {key}"));
    }
    body
}

fn window() -> String {
    format!("from={}&to={}", *T0 as i64, (*T0 + HOUR) as i64)
}

#[test]
fn grouped_by_model_scenario_variant_with_slos() {
    let (server, records) = loaded_server();
    let e = Expect { from: *T0, to: *T0 + HOUR, group_by: &["model", "scenario", "variant"], filters: &[], slo_ttft: Some(1000.0), slo_tpot: Some(25.0) };
    let body = check(&server, &records, &e, &format!("{}&groupBy=model,scenario,variant&slo.ttftMs=1000&slo.tpotMs=25", window()));
    let groups = body["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 12, "2 models × 3 scenarios × 2 variants");
    // The data set makes these figures non-trivial (so the comparison above means something).
    let total: u64 = groups.iter().map(|g| g["count"].as_u64().unwrap()).sum();
    assert_eq!(total, 362, "360 records + the from edge + the last-before-to edge; def 2 and outside records excluded");
    assert!(groups.iter().any(|g| g["goodput"].as_f64().unwrap() > 0.0 && g["goodput"].as_f64().unwrap() < 1.0));
    assert!(groups.iter().any(|g| g["stallRate"].as_f64().unwrap() > 0.0));
    assert!(groups.iter().all(|g| g["lengthBands"]["over500"].as_u64().unwrap() > 0));
    // Sorted by key.
    let keys: Vec<String> = groups.iter().map(|g| format!("{}/{}/{}", g["key"]["model"], g["key"]["scenario"], g["key"]["variant"])).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
}

#[test]
fn one_group_without_group_by_and_goodput_per_slo() {
    let (server, records) = loaded_server();
    for (query, ttft, tpot) in [("", None, None), ("&slo.ttftMs=800", Some(800.0), None), ("&slo.tpotMs=20.5", None, Some(20.5)), ("&slo.ttftMs=1000&slo.tpotMs=50", Some(1000.0), Some(50.0))] {
        let e = Expect { from: *T0, to: *T0 + HOUR, group_by: &[], filters: &[], slo_ttft: ttft, slo_tpot: tpot };
        let body = check(&server, &records, &e, &format!("{}{query}", window()));
        assert_eq!(body["groups"][0]["key"], json!({}));
        assert_eq!(body["groups"][0]["goodput"].is_null(), ttft.is_none() && tpot.is_none());
    }
}

#[test]
fn filters_and_other_dimensions() {
    let (server, records) = loaded_server();
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a [&'a str])], &'a str);
    let cases: Vec<Case> = vec![
        (&["scenario"], &[("model", &["m-slow"]), ("variant", &["B"])], "groupBy=scenario&model=m-slow&variant=B"),
        (&["variant"], &[("model", &["m-fast", "m-slow"])], "groupBy=variant&model=m-fast&model=m-slow"),
        (&["connection", "appVersion"], &[], "groupBy=connection,appVersion"),
        (&["model"], &[("connection", &["wifi"]), ("appVersion", &["1.1"])], "groupBy=model&connection=wifi&appVersion=1.1"),
        (&["model"], &[("scenario", &["no-such-scenario"])], "groupBy=model&scenario=no-such-scenario"),
    ];
    for (group_by, filters, query) in cases {
        let e = Expect { from: *T0, to: *T0 + HOUR, group_by, filters, slo_ttft: None, slo_tpot: None };
        check(&server, &records, &e, &format!("{}&{query}", window()));
    }
    // A null dimension is a group of its own, with a null key.
    let body = server.get(&format!("/api/summary?{}&groupBy=connection", window())).json();
    assert!(body["groups"].as_array().unwrap().iter().any(|g| g["key"] == json!({ "connection": null })));
    // No match: no groups.
    let body = server.get(&format!("/api/summary?{}&model=none", window())).json();
    assert_eq!(body["groups"], json!([]));
}

#[test]
fn windows_and_definition_versions() {
    let (server, records) = loaded_server();
    // Sub-windows: the first 10 minutes, the last 30, and one holding only def-2 records' times.
    for (from, to) in [(*T0, *T0 + 600_000.0), (*T0 + 1_800_000.0, *T0 + HOUR), (*T0 - HOUR, *T0 + 2.0 * HOUR)] {
        let e = Expect { from, to, group_by: &["model"], filters: &[], slo_ttft: Some(1500.0), slo_tpot: None };
        check(&server, &records, &e, &format!("from={}&to={}&groupBy=model&slo.ttftMs=1500", from as i64, to as i64));
    }
    // The def-2 records sit in the first 30 s with a TTFT of 99,999 ms: not one shows.
    let body = server.get(&format!("/api/summary?from={}&to={}", *T0 as i64, (*T0 + 30_000.0) as i64)).json();
    for g in body["groups"].as_array().unwrap() {
        assert!(g["ttftMs"]["p99"].as_f64().unwrap() < 99_999.0);
    }
    assert_eq!(server.scalar("SELECT count(*) FROM records WHERE def = 2"), "30", "def-2 records are stored, only never mixed in");
    // Edges: `from` included, `to` excluded.
    let body = server.get(&format!("/api/summary?from={}&to={}", *T0 as i64, *T0 as i64 + 1)).json();
    let at_t0 = records.iter().filter(|r| (*T0..*T0 + 1.0).contains(&r["startedAt"].as_f64().unwrap())).count();
    assert!(at_t0 >= 1);
    assert_eq!(body["groups"][0]["count"], json!(at_t0));
    let body = server.get(&format!("/api/summary?from={}&to={}", (*T0 + HOUR) as i64, (*T0 + HOUR) as i64 + 1000)).json();
    assert_eq!(body["groups"][0]["count"], json!(1), "only edge-to");
}

#[test]
fn percentiles_and_bands_on_a_small_known_set() {
    // Worked by hand: TTFT 100..1000 (10 values) and one null; ranks floor(q × 9), within the sketch's 1%.
    let server = Server::start(&[]);
    let mut records = Vec::new();
    for i in 0..11 {
        let mut r = record(&format!("k-{i}"));
        r["startedAt"] = json!(*T0 + i as f64);
        r["ttftMs"] = if i == 10 { Value::Null } else { json!(1000.0 - 100.0 * i as f64) };
        r["outputTokens"] = json!([0, 1, 50, 51, 500, 501, 5000, 20, 20, 20, 20][i]);
        r["stalls"] = if i < 4 { json!({ "count": i, "count1000": 0, "longestMs": 600, "totalMs": 600 * i }) } else { Value::Null };
        records.push(r);
    }
    ingest(&server, &records, 1);
    let body = server.get(&format!("/api/summary?from={}&to={}&slo.ttftMs=500", *T0 as i64, (*T0 + 60_000.0) as i64)).json();
    let g = &body["groups"][0];
    assert_eq!(g["count"], 11);
    assert_eq!(g["rpm"], 11.0);
    assert_eq!(g["tokenThroughput"].as_f64().unwrap(), (1 + 50 + 51 + 500 + 501 + 5000 + 80) as f64 / 60.0);
    assert_close(&g["ttftMs"], &json!({ "p50": 500.0, "p75": 700.0, "p90": 900.0, "p95": 900.0, "p99": 900.0, "mean": 550.0 }), "ttftMs");
    assert_eq!(g["stallRate"], json!(0.75), "3 of the 4 streams with stall data stalled");
    assert_close(&g["stallMs"]["p50"], &json!(600.0), "stallMs.p50");
    assert_eq!(g["goodput"].as_f64().unwrap(), 5.0 / 11.0, "TTFT 100..500: 5 of 11 (the null one does not meet the SLO)");
    assert_eq!(g["lengthBands"], json!({ "1-50": 6, "51-500": 2, "over500": 2 }));
}

#[test]
fn bad_queries_get_400_naming_the_parameter() {
    let server = Server::start(&[]);
    for (query, field) in [
        ("groupBy=region", "groupBy"),
        ("groupBy=model&groupBy=variant", "groupBy"),
        ("region=eu", "region"),
        ("from=yesterday", "from"),
        ("to=1.5e12", "to"),
        ("from=2000&to=1000", "from"),
        ("from=1&from=2", "from"),
        ("slo.ttftMs=fast", "slo.ttftMs"),
        ("slo.tpotMs=-5", "slo.tpotMs"),
        ("slo.gapMs=5", "slo.gapMs"),
    ] {
        let resp = server.get(&format!("/api/summary?{query}"));
        assert_eq!(resp.status, 400, "{query}: {}", resp.text());
        let err = resp.json();
        assert_eq!(err["field"], field, "{query}: {err}");
        assert!(err["problem"].as_str().is_some_and(|p| !p.is_empty()));
    }
    // Defaults: the last 24 hours up to now.
    let body = server.get("/api/summary").json();
    let (from, to) = (body["from"].as_i64().unwrap(), body["to"].as_i64().unwrap());
    assert_eq!(to - from, 24 * 3_600_000);
    assert_eq!(body["groups"], json!([]));
}

#[test]
fn a_long_window_merges_day_hour_and_minute_rollups_with_edge_records() {
    // 3.5 days of records: a window from an odd millisecond to another reads whole days, hours and
    // minutes from rollups and the partial minutes from records; the figures must be the same as
    // computed from the records themselves.
    let server = Server::start(&[]);
    let span = 3.5 * 24.0 * HOUR;
    let records = dataset_over(span, 1500, 5);
    ingest(&server, &records, 1);
    let (from, to) = (*T0 + 123_457.0, *T0 + span - 7_654_321.0);
    let e = Expect { from, to, group_by: &["model", "variant"], filters: &[], slo_ttft: Some(1200.0), slo_tpot: None };
    let query = format!("from={}&to={}&groupBy=model,variant&slo.ttftMs=1200", from as i64, to as i64);
    let before = check(&server, &records, &e, &query);
    // The same records again (a retried beacon): all duplicates, and no figure moves.
    for chunk in records.chunks(50).take(3) {
        let resp = server.post_json("/v1/beacons", &envelope(chunk.to_vec()));
        assert_eq!(resp.json()["duplicates"], json!(chunk.len()));
    }
    assert_eq!(server.get(&format!("/api/summary?{query}")).json(), before);
    let e = Expect { from, to, group_by: &["scenario"], filters: &[("connection", &["wifi"])], slo_ttft: None, slo_tpot: Some(30.0) };
    check(&server, &records, &e, &format!("from={}&to={}&groupBy=scenario&connection=wifi&slo.tpotMs=30", from as i64, to as i64));
}

#[test]
fn a_record_is_visible_to_the_next_query() {
    let server = Server::start(&[]);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as f64;
    let mut r = record("fresh");
    r["startedAt"] = json!(now - 1000.0);
    assert_eq!(server.post_json("/v1/beacons", &envelope(vec![r])).status, 200);
    let body = server.get("/api/summary?groupBy=model").json();
    assert_eq!(body["groups"][0]["key"], json!({ "model": "gpt-test" }));
    assert_eq!(body["groups"][0]["count"], 1);
}
