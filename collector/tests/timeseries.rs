//! GET /api/timeseries over real HTTP, checked bucket by bucket against figures computed here from
//! the records as sent.

mod common;

use common::{envelope, recent, record, Server};
use serde_json::{json, Value};
use std::sync::LazyLock;

/// An hour boundary (UTC), so 1-hour buckets line up with the hour rollups.
static T1: LazyLock<f64> = LazyLock::new(|| recent(1_700_002_800_000.0));
const MIN: f64 = 60_000.0;

fn records() -> Vec<Value> {
    let mut seed = 3u64;
    let mut next = move |n: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    (0..700)
        .map(|i| {
            let mut r = record(&format!("ts-{i}"));
            r["variant"] = json!(["A", "B"][i % 2]);
            r["startedAt"] = json!(*T1 + next(180 * 60_000) as f64 + 0.5);
            r["outputTokens"] = json!(next(900));
            r["ttftMs"] = json!(200 + next(1500));
            r["tpotMs"] = if i % 9 == 0 { Value::Null } else { json!(10.0 + next(400) as f64 / 10.0) };
            r["stalls"] = if i % 4 == 0 { Value::Null } else { json!({ "count": u64::from(next(10) == 0), "count1000": 0, "longestMs": 0, "totalMs": 0 }) };
            r
        })
        .collect()
}

fn ingest(server: &Server, records: &[Value]) {
    for chunk in records.chunks(70) {
        let mut env = envelope(chunk.to_vec());
        env["batchId"] = json!(chunk[0]["id"]);
        assert_eq!(server.post_json("/v1/beacons", &env).status, 200);
    }
}

/// The series of one variant: `[start, value]` per bucket from `from`'s bucket to `to − 1`'s.
fn expected(records: &[Value], variant: &str, from: f64, to: f64, bucket: f64, figure: &dyn Fn(&[&Value], f64) -> Value) -> Vec<Value> {
    let first = (from / bucket).floor() * bucket;
    let mut out = Vec::new();
    let mut start = first;
    while start < to {
        let (lo, hi) = (start.max(from), (start + bucket).min(to));
        let inside: Vec<&Value> = records.iter().filter(|r| r["variant"] == variant && (lo..hi).contains(&r["startedAt"].as_f64().unwrap())).collect();
        out.push(json!([start as i64, figure(&inside, hi - lo)]));
        start += bucket;
    }
    out
}

fn series<'a>(body: &'a Value, variant: &str) -> &'a Vec<Value> {
    body["series"].as_array().unwrap().iter().find(|s| s["key"] == json!({ "variant": variant })).unwrap()["points"].as_array().unwrap()
}

fn assert_points(got: &[Value], want: &[Value], relative: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: points");
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g[0], w[0], "{what}: bucket start");
        match (g[1].as_f64(), w[1].as_f64()) {
            (Some(g1), Some(w1)) => assert!((g1 - w1).abs() <= relative * w1.abs().max(1e-9), "{what} at {}: got {g1}, want {w1}", w[0]),
            _ => assert_eq!(g[1], w[1], "{what} at {}", w[0]),
        }
    }
}

#[test]
fn every_figure_per_bucket_and_group() {
    let server = Server::start(&[]);
    let records = records();
    ingest(&server, &records);
    let (from, to) = (*T1 + 90_000.0, *T1 + 170.0 * MIN + 12_345.0);
    let q = |rest: &str| {
        let resp = server.get(&format!("/api/timeseries?from={}&to={}&groupBy=variant&{rest}", from as i64, to as i64));
        assert_eq!(resp.status, 200, "{rest}: {}", resp.text());
        resp.json()
    };
    let count = |rs: &[&Value], _: f64| json!(rs.len());
    let rpm = |rs: &[&Value], ms: f64| json!(rs.len() as f64 * 60_000.0 / ms);
    let throughput = |rs: &[&Value], ms: f64| json!(rs.iter().map(|r| r["outputTokens"].as_f64().unwrap()).sum::<f64>() * 1000.0 / ms);
    let tpot_p90 = |rs: &[&Value], _: f64| {
        let mut v: Vec<f64> = rs.iter().filter_map(|r| r["tpotMs"].as_f64()).collect();
        v.sort_by(f64::total_cmp);
        if v.is_empty() { Value::Null } else { json!(v[(0.9 * (v.len() - 1) as f64) as usize]) }
    };
    let stall_rate = |rs: &[&Value], _: f64| {
        let known: Vec<&&Value> = rs.iter().filter(|r| !r["stalls"].is_null()).collect();
        if known.is_empty() { Value::Null } else { json!(known.iter().filter(|r| r["stalls"]["count"] == json!(1)).count() as f64 / known.len() as f64) }
    };
    for variant in ["A", "B"] {
        for (bucket, name) in [(5.0 * MIN, "5m"), (60.0 * MIN, "1h")] {
            let body = q(&format!("metric=count&bucket={name}"));
            assert_eq!((body["metric"].clone(), body["bucket"].clone(), body["q"].clone()), (json!("count"), json!(bucket as i64), Value::Null));
            assert_points(series(&body, variant), &expected(&records, variant, from, to, bucket, &count), 0.0, "count");
            assert_points(series(&q(&format!("metric=rpm&bucket={name}")), variant), &expected(&records, variant, from, to, bucket, &rpm), 1e-12, "rpm");
            assert_points(series(&q(&format!("metric=tokenThroughput&bucket={name}")), variant), &expected(&records, variant, from, to, bucket, &throughput), 1e-12, "throughput");
            assert_points(series(&q(&format!("metric=tpotMs&q=0.9&bucket={name}")), variant), &expected(&records, variant, from, to, bucket, &tpot_p90), 0.01, "tpot p90");
            assert_points(series(&q(&format!("metric=stallRate&bucket={name}")), variant), &expected(&records, variant, from, to, bucket, &stall_rate), 1e-12, "stall rate");
        }
    }
    // Goodput: a value within 1% of a threshold may be judged either way (its sketch bucket decides),
    // so each point must lie between the strict and the lenient share.
    let share_meeting = |scale: f64| {
        move |rs: &[&Value], _: f64| {
            let meets = |r: &Value| r["ttftMs"].as_f64().is_some_and(|v| v <= 1000.0 * scale) && r["tpotMs"].as_f64().is_some_and(|v| v <= 30.0 * scale);
            if rs.is_empty() { Value::Null } else { json!(rs.iter().filter(|r| meets(r)).count() as f64 / rs.len() as f64) }
        }
    };
    let mut between = 0;
    for variant in ["A", "B"] {
        let body = q("metric=goodput&bucket=1h&slo.ttftMs=1000&slo.tpotMs=30");
        let (strict, lenient) = (expected(&records, variant, from, to, 60.0 * MIN, &share_meeting(0.99)), expected(&records, variant, from, to, 60.0 * MIN, &share_meeting(1.01)));
        let got = series(&body, variant);
        assert_eq!(got.len(), strict.len(), "goodput: points");
        for ((g, lo), hi) in got.iter().zip(&strict).zip(&lenient) {
            assert_eq!(g[0], lo[0], "goodput: bucket start");
            let (g1, lo1, hi1) = (g[1].as_f64().unwrap(), lo[1].as_f64().unwrap(), hi[1].as_f64().unwrap());
            assert!(lo1 - 1e-12 <= g1 && g1 <= hi1 + 1e-12, "goodput at {}: {g1} not in [{lo1}, {hi1}]", g[0]);
            between += usize::from(g1 > 0.0 && g1 < 1.0);
        }
    }
    assert!(between > 0, "some goodput strictly between 0 and 1");
    let bad = server.get("/api/timeseries?bucket=1m&from=0&to=172800000");
    assert_eq!((bad.status, bad.json()["field"].clone()), (400, json!("bucket")));
}
