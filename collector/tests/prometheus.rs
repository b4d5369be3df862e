//! GET /metrics over real HTTP against the collector's router (SQLite, or ClickHouse when
//! LLM_UX_TEST_CLICKHOUSE is set): it counts the records stored and nothing else (refused batches,
//! duplicates, a failed write, another definition version), sits behind the read key like /api/*,
//! caps its label sets, keeps hostile label values inside their quotes, and speaks OpenMetrics when
//! asked. The exposition is read back by a parser written here from the format's rules.
//! (tests/js/prometheus.test.mjs has a real Prometheus scrape it.)

mod common;

use common::{backend, envelope, record, Server};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

const KEY: &str = "metrics-read-key-0123456789";

/// One sample: the name, its labels and its value.
#[derive(Debug, Clone, PartialEq)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// Parses an exposition's samples (comments skipped), undoing the label escapes; panics on any line
/// that is not `name{label="value",...} number` or `name number`.
fn parse(text: &str) -> Vec<Sample> {
    text.lines().filter(|l| !l.starts_with('#')).map(|line| parse_line(line).unwrap_or_else(|| panic!("not a sample line: {line:?}"))).collect()
}

fn is_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn parse_line(line: &str) -> Option<Sample> {
    let name_end = line.find(['{', ' '])?;
    let name = &line[..name_end];
    let mut chars = line[name_end..].chars().peekable();
    let mut labels = BTreeMap::new();
    if chars.peek() == Some(&'{') {
        chars.next();
        loop {
            let label: String = chars.by_ref().take_while(|&c| c != '=').collect();
            if !is_name(&label) || chars.next()? != '"' {
                return None;
            }
            let mut value = String::new();
            loop {
                match chars.next()? {
                    '"' => break,
                    '\\' => value.push(match chars.next()? {
                        '\\' => '\\',
                        '"' => '"',
                        'n' => '\n',
                        _ => return None,
                    }),
                    '\n' => return None,
                    c => value.push(c),
                }
            }
            if labels.insert(label, value).is_some() {
                return None;
            }
            match chars.next()? {
                ',' => continue,
                '}' => break,
                _ => return None,
            }
        }
    }
    if !is_name(name) || chars.next()? != ' ' {
        return None;
    }
    let value: String = chars.collect();
    Some(Sample { name: name.to_owned(), labels, value: value.parse().ok()? })
}

fn get_metrics(server: &Server, headers: &[(&str, &str)]) -> common::Resp {
    let bearer = format!("Bearer {KEY}");
    let mut all = vec![("authorization", bearer.as_str())];
    all.extend_from_slice(headers);
    server.request("GET", "/metrics", &all, b"")
}

/// The samples of GET /metrics (text format), checked to be 200 with the text content type.
fn metrics(server: &Server) -> Vec<Sample> {
    let resp = get_metrics(server, &[]);
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.header("content-type"), Some("text/plain; version=0.0.4; charset=utf-8"));
    parse(&resp.text())
}

/// The sum of the samples named `name` whose labels include `labels`.
fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    samples.iter().filter(|s| s.name == name && labels.iter().all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))).map(|s| s.value).sum()
}

fn with(id: &str, fields: Value) -> Value {
    let mut r = record(id);
    for (key, value) in fields.as_object().unwrap() {
        r[key] = value.clone();
    }
    r
}

#[test]
fn counts_the_stored_records_and_nothing_else() {
    let server = Server::start(&["--read-key", KEY]);
    let post = |records: Vec<Value>| server.post_json("/v1/beacons", &envelope(records));
    let stalled = json!({ "count": 2, "count1000": 1, "longestMs": 1200, "totalMs": 1700 });
    let hidden = json!({ "hidden": true, "ttftMs": null, "tpotMs": null, "ttfoMs": null, "renderDelay": null, "stalls": null, "gaps": null, "jitterMs": null });
    let first = vec![record("r1"), with("r2", json!({ "status": "aborted", "ttftMs": 1500, "stalls": stalled })), with("r3", hidden)];
    assert_eq!(post(first.clone()).json(), json!({ "accepted": 3, "duplicates": 0 }));
    assert_eq!(post(first).json(), json!({ "accepted": 0, "duplicates": 3 }), "sent again: duplicates");
    assert_eq!(post(vec![record("r1"), with("r4", json!({ "outputTokens": 7 }))]).json(), json!({ "accepted": 1, "duplicates": 1 }));
    assert_eq!(post(vec![record("r5"), with("r6", json!({ "status": "lost" }))]).status, 400, "refused whole");
    assert_eq!(post(vec![with("r7", json!({ "def": 2 }))]).json(), json!({ "accepted": 1, "duplicates": 0 }), "stored, of definition 2");
    backend::fail_inserts_of(&server.db, "boom");
    assert_eq!(post(vec![record("r8"), record("boom")]).status, 500);
    backend::repair_inserts(&server.db);

    let m = metrics(&server);
    let labels = [("model", "gpt-test"), ("scenario", "chat"), ("variant", "A")];
    let at = |name: &str, extra: &[(&str, &str)]| value(&m, name, &[&labels[..], extra].concat());
    assert_eq!(at("llm_ux_streams_total", &[("status", "ok")]), 3.0, "r1, r3, r4");
    assert_eq!(at("llm_ux_streams_total", &[("status", "aborted")]), 1.0);
    assert_eq!(value(&m, "llm_ux_streams_total", &[]), 4.0);
    assert_eq!(at("llm_ux_output_tokens_total", &[]), 367.0);
    assert_eq!(at("llm_ux_time_to_first_token_seconds_count", &[]), 3.0, "r3 was hidden");
    assert_eq!(at("llm_ux_time_to_first_token_arrival_seconds_count", &[]), 4.0);
    assert_eq!(at("llm_ux_time_to_first_token_seconds_bucket", &[("le", "0.4")]), 0.0);
    assert_eq!(at("llm_ux_time_to_first_token_seconds_bucket", &[("le", "0.5")]), 2.0);
    assert_eq!(at("llm_ux_time_to_first_token_seconds_bucket", &[("le", "1.5")]), 3.0, "1.5 s is in le=1.5");
    assert_eq!(at("llm_ux_time_to_first_token_seconds_bucket", &[("le", "+Inf")]), 3.0);
    assert!((at("llm_ux_time_to_first_token_seconds_sum", &[]) - (0.42025 * 2.0 + 1.5)).abs() < 1e-12);
    assert_eq!(at("llm_ux_time_per_output_token_seconds_bucket", &[("le", "0.03")]), 0.0);
    assert_eq!(at("llm_ux_time_per_output_token_seconds_bucket", &[("le", "0.04")]), 3.0, "31.5 ms");
    assert_eq!(at("llm_ux_time_per_output_token_arrival_seconds_bucket", &[("le", "0.03")]), 4.0, "30 ms");
    assert_eq!(at("llm_ux_render_delay_seconds_count", &[]), 3.0);
    assert_eq!(at("llm_ux_stall_seconds_count", &[]), 3.0, "stalls known");
    assert_eq!(at("llm_ux_stall_seconds_bucket", &[("le", "0.0")]), 2.0, "streams that never stalled");
    assert_eq!(at("llm_ux_stall_seconds_bucket", &[("le", "2.0")]), 3.0);
    assert_eq!(at("llm_ux_stalls_total", &[]), 2.0);
    assert_eq!(at("llm_ux_stalled_streams_total", &[]), 1.0);
    assert_eq!(value(&m, "llm_ux_folded_records_total", &[]), 0.0);
    // The analytics count the same streams.
    let summary = server.request("GET", "/api/summary?from=0&to=9999999999999", &[("authorization", &format!("Bearer {KEY}"))], b"").json();
    assert_eq!(summary["groups"][0]["count"], 4);
}

#[test]
fn the_read_key_gates_metrics_as_it_gates_the_api() {
    let server = Server::start(&["--read-key", KEY]);
    for headers in [vec![], vec![("authorization", "Bearer wrong-key-0123456789")], vec![("authorization", KEY)]] {
        let resp = server.request("GET", "/metrics", &headers, b"");
        assert_eq!(resp.status, 401, "{headers:?}");
        assert_eq!(resp.json()["field"], "key");
        assert!(resp.header("www-authenticate").is_some_and(|v| v.starts_with("Bearer")));
    }
    assert_eq!(server.get(&format!("/metrics?key={KEY}")).status, 200);
    let resp = server.get(&format!("/metrics?key={KEY}&name=x"));
    assert_eq!((resp.status, resp.json()["field"].clone()), (400, json!("name")), "{}", resp.text());
    // The analytics' rate limit comes first, as for /api/*.
    let limited = Server::start(&["--read-key", KEY, "--api-rate-limit", "0.001", "--api-rate-burst", "1"]);
    assert_eq!(get_metrics(&limited, &[]).status, 200);
    let resp = limited.get("/metrics");
    assert_eq!(resp.status, 429);
    assert!(resp.header("retry-after").is_some());
}

#[test]
fn hostile_label_values_stay_inside_their_quotes() {
    let server = Server::start(&["--read-key", KEY]);
    let long_ascii = "a".repeat(256);
    let long_accented = "é".repeat(200); // 400 bytes
    let models = [
        json!("quote\"d"),
        json!("back\\slash"),
        json!("new\nline"),
        json!("cr\rtab\tnul\u{0}"),
        json!("\\n, not a newline"),
        json!("x\"},status=\"ok"),
        json!("模型 🚀"),
        json!(long_ascii),
        json!(long_accented),
        json!(""),
        Value::Null,
    ];
    let records = models.iter().enumerate().map(|(i, m)| with(&format!("h{i}"), json!({ "model": m, "scenario": "}{\"\\" }))).collect();
    assert_eq!(server.post_json("/v1/beacons", &envelope(records)).status, 200);
    // Not UTF-8, and a lone surrogate: refused, nothing counted.
    let mut invalid = envelope(vec![with("bad", json!({ "model": "PLACEHOLDER" }))]).to_string().into_bytes();
    let at = invalid.windows(11).position(|w| w == b"PLACEHOLDER").unwrap();
    invalid.splice(at..at + 11, [0xff, 0xfe]);
    assert_eq!(server.request("POST", "/v1/beacons", &[("content-type", "application/json")], &invalid).status, 400);
    let surrogate = envelope(vec![with("bad", json!({ "model": "PLACEHOLDER" }))]).to_string().replace("PLACEHOLDER", "\\ud800");
    assert_eq!(server.request("POST", "/v1/beacons", &[("content-type", "application/json")], surrogate.as_bytes()).status, 400);

    let m = metrics(&server); // every line parses
    let seen: BTreeSet<String> = m.iter().filter(|s| s.name == "llm_ux_streams_total").map(|s| s.labels["model"].clone()).collect();
    let expected: BTreeSet<String> = models.iter().map(|m| m.as_str().unwrap_or("").to_owned()).map(|m| if m.len() > 128 { cut(&m) } else { m }).collect();
    assert_eq!(seen, expected, "each value as sent, cut to 128 bytes; null and \"\" are one");
    assert_eq!(value(&m, "llm_ux_streams_total", &[("model", "")]), 2.0);
    assert!(m.iter().filter(|s| s.name == "llm_ux_streams_total").all(|s| s.labels["scenario"] == "}{\"\\" && s.labels.len() == 4));
    assert_eq!(value(&m, "llm_ux_streams_total", &[]), models.len() as f64);
}

/// `s` cut to 128 bytes at a character boundary.
fn cut(s: &str) -> String {
    let end = (0..=128).rev().find(|&i| s.is_char_boundary(i)).unwrap();
    s[..end].to_owned()
}

#[test]
fn label_sets_past_the_cap_fold_into_other_and_are_counted() {
    let server = Server::start(&["--read-key", KEY, "--metrics-label-sets", "3"]);
    let records: Vec<Value> = (0..20).map(|i| with(&format!("c{i}"), json!({ "model": format!("model-{}", i / 2) }))).collect();
    assert_eq!(server.post_json("/v1/beacons", &envelope(records)).json()["accepted"], 20);
    let again = vec![with("c-late", json!({ "model": "model-1" })), with("c-late-9", json!({ "model": "model-9" }))];
    assert_eq!(server.post_json("/v1/beacons", &envelope(again)).json()["accepted"], 2);
    let m = metrics(&server);
    let models: BTreeSet<&str> = m.iter().filter(|s| s.name == "llm_ux_streams_total").map(|s| s.labels["model"].as_str()).collect();
    assert_eq!(models, BTreeSet::from(["model-0", "model-1", "model-2", "other"]), "the first three, then other");
    assert_eq!(value(&m, "llm_ux_folded_records_total", &[]), 15.0, "models 3 to 9: 14 records, and the late one of model-9");
    assert_eq!(value(&m, "llm_ux_streams_total", &[("model", "other"), ("scenario", "other"), ("variant", "other")]), 15.0);
    assert_eq!(value(&m, "llm_ux_streams_total", &[("model", "model-1")]), 3.0);
    assert_eq!(value(&m, "llm_ux_streams_total", &[]), 22.0);
    assert_eq!(value(&m, "llm_ux_time_to_first_token_seconds_count", &[]), 22.0);
}

#[test]
fn openmetrics_when_the_accept_header_prefers_it() {
    let server = Server::start(&["--read-key", KEY]);
    assert_eq!(server.post_json("/v1/beacons", &envelope(vec![record("o1"), record("o2")])).status, 200);
    let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
    let resp = get_metrics(&server, &[("accept", prometheus)]);
    assert_eq!(resp.status, 200);
    assert_eq!(resp.header("content-type"), Some("application/openmetrics-text; version=1.0.0; charset=utf-8"));
    let open = resp.text();
    assert!(open.ends_with("\n# EOF\n"), "{}", &open[open.len() - 40..]);
    assert!(open.contains("\n# TYPE llm_ux_streams counter\n") && open.contains("\n# UNIT llm_ux_time_per_output_token_seconds seconds\n"));
    assert_eq!(parse(&open), metrics(&server), "the same samples as the text format");
    let text = get_metrics(&server, &[("accept", "text/plain;version=0.0.4")]);
    assert!(text.header("content-type").unwrap().starts_with("text/plain") && !text.text().contains("# EOF"));
}

#[test]
fn gzip_when_the_client_takes_it() {
    let server = Server::start(&["--read-key", KEY]);
    assert_eq!(server.post_json("/v1/beacons", &envelope(vec![record("g1"), record("g2")])).status, 200);
    let plain = get_metrics(&server, &[]);
    assert_eq!(plain.header("content-encoding"), None);
    // As Prometheus asks.
    let zipped = get_metrics(&server, &[("accept-encoding", "gzip")]);
    assert_eq!((zipped.status, zipped.header("content-encoding")), (200, Some("gzip")));
    let mut unzipped = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&zipped.body[..]), &mut unzipped).expect("a gzip body");
    assert_eq!(unzipped, plain.text());
    assert!(zipped.body.len() * 5 < plain.body.len(), "{} B gzipped of {} B", zipped.body.len(), plain.body.len());
    for refused in ["gzip;q=0", "br, deflate", "identity"] {
        assert_eq!(get_metrics(&server, &[("accept-encoding", refused)]).header("content-encoding"), None, "{refused}");
    }
}

#[test]
fn batches_stored_at_once_are_each_counted_once() {
    let server = Server::start(&["--read-key", KEY]);
    std::thread::scope(|scope| {
        for t in 0..8 {
            let server = &server;
            scope.spawn(move || {
                for b in 0..10 {
                    let records = (0..5).map(|i| with(&format!("p{t}-{b}-{i}"), json!({ "variant": format!("v{t}"), "outputTokens": i + 1 }))).collect();
                    assert_eq!(server.post_json("/v1/beacons", &envelope(records)).status, 200);
                }
            });
        }
    });
    let m = metrics(&server);
    assert_eq!(value(&m, "llm_ux_streams_total", &[]), 400.0);
    assert_eq!(value(&m, "llm_ux_output_tokens_total", &[]), 8.0 * 10.0 * 15.0);
    assert_eq!(value(&m, "llm_ux_streams_total", &[("variant", "v3")]), 50.0);
}
