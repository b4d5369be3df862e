//! GET /api/compare over real HTTP, checked against SciPy (tests/reference/compare.py, run in the
//! virtualenv scripts/setup.sh makes) on the same values.

mod common;

use common::{envelope, recent, record, Server};
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::LazyLock;

static T0: LazyLock<f64> = LazyLock::new(|| recent(1_700_000_000_000.0));

struct Rng(u64);
impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `n` records of arm `variant`, TPOT around `tpot` ms in half-millisecond steps (so there are ties),
/// a stall in `stall_percent` of the streams that report stalls, a few null TPOTs; the user stops or
/// leaves `stop_percent` of the streams, a few of which never reached their first token.
fn arm(variant: &str, n: usize, tpot: f64, stall_percent: f64, stop_percent: f64, rng: &mut Rng) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let mut r = record(&format!("{variant}-{i}"));
            r["variant"] = json!(variant);
            r["model"] = json!("m");
            r["startedAt"] = json!(*T0 + rng.unit() * 3_600_000.0);
            r["ttftMs"] = json!((300.0 + rng.unit() * 900.0).round());
            r["tpotMs"] = if i % 25 == 7 { Value::Null } else { json!(((tpot + (rng.unit() - 0.5) * tpot) * 2.0).round() / 2.0) };
            r["stalls"] = if i % 10 == 3 { Value::Null } else { json!({ "count": u64::from(rng.unit() * 100.0 < stall_percent), "count1000": 0, "longestMs": 0, "totalMs": 0 }) };
            if rng.unit() * 100.0 < stop_percent {
                r["status"] = json!(["aborted", "incomplete"][i % 2]);
            }
            if i % 20 == 11 {
                r["ttftArrivalMs"] = Value::Null;
            }
            r
        })
        .collect()
}

fn ingest(server: &Server, records: &[Value]) {
    for (n, chunk) in records.chunks(100).enumerate() {
        let mut env = envelope(chunk.to_vec());
        env["batchId"] = json!(format!("b-{n}-{}", chunk[0]["id"]));
        assert_eq!(server.post_json("/v1/beacons", &env).status, 200);
    }
}

/// What SciPy computes from the arms as sent. Goodput shares come from sketch buckets (a value within
/// 1% of a threshold may be judged either way; the summary tests bound that), so the goodput test is
/// checked on the shares the API reports: `good` gives each arm's (good, streams).
fn reference(a: &[Value], b: &[Value], good: Value) -> Value {
    let values = |rs: &[Value]| rs.iter().filter_map(|r| r["tpotMs"].as_f64()).collect::<Vec<_>>();
    let stalled = |rs: &[Value]| {
        let known: Vec<&Value> = rs.iter().filter(|r| !r["stalls"].is_null()).collect();
        json!([known.iter().filter(|r| r["stalls"]["count"] != json!(0)).count(), known.len()])
    };
    let stopped = |rs: &[Value]| {
        let reached: Vec<&Value> = rs.iter().filter(|r| !r["ttftArrivalMs"].is_null()).collect();
        json!([reached.iter().filter(|r| r["status"] == "aborted" || r["status"] == "incomplete").count(), reached.len()])
    };
    let input = json!({ "a": values(a), "b": values(b), "stalled": { "a": stalled(a), "b": stalled(b) }, "stopped": { "a": stopped(a), "b": stopped(b) }, "good": good });
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let python = std::env::var("LLM_UX_PYTHON").unwrap_or_else(|_| root.join("target/pyenv/bin/python").display().to_string());
    let mut child = Command::new(&python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/compare.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {python} ({e}): run `bash scripts/setup.sh`, which installs SciPy into target/pyenv"));
    child.stdin.take().unwrap().write_all(input.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "reference/compare.py failed");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn close(got: &Value, want: &Value, what: &str) {
    let (g, w) = (got.as_f64().unwrap_or_else(|| panic!("{what}: got {got}")), want.as_f64().unwrap());
    assert!((g - w).abs() <= 1e-9 * w.abs().max(1e-12), "{what}: got {g}, SciPy {w}");
}

#[test]
fn agrees_with_scipy_and_calls_the_smoother_arm() {
    let server = Server::start(&[]);
    let mut rng = Rng(7);
    let (a, b) = (arm("A", 420, 40.0, 12.0, 25.0, &mut rng), arm("B", 380, 34.0, 4.0, 12.0, &mut rng));
    ingest(&server, &a);
    ingest(&server, &b);
    let q = format!("/api/compare?dimension=variant&a=A&b=B&metric=tpotMs&from={}&to={}&slo.ttftMs=1000&slo.tpotMs=40", *T0 as i64, (*T0 + 3_600_000.0) as i64);
    let got = server.get(&q).json();
    let good = |share: &Value, n: usize| json!([(share.as_f64().unwrap() * n as f64).round(), n]);
    let want = reference(&a, &b, json!({ "a": good(&got["goodput"]["a"], a.len()), "b": good(&got["goodput"]["b"], b.len()) }));
    assert_eq!(got["metric"], "tpotMs");
    assert_eq!(got["a"]["value"], "A");
    assert_eq!(got["a"]["count"], json!(a.iter().filter(|r| !r["tpotMs"].is_null()).count()));
    close(&got["a"]["median"], &want["medianA"], "median A");
    close(&got["b"]["median"], &want["medianB"], "median B");
    close(&got["difference"]["estimate"], &want["difference"], "difference");
    close(&got["difference"]["ci95"][0], &want["ci95"][0], "ci95 low");
    close(&got["difference"]["ci95"][1], &want["ci95"][1], "ci95 high");
    close(&got["mannWhitney"]["u"], &want["u"], "U");
    close(&got["mannWhitney"]["pValue"], &want["pValue"], "Mann-Whitney p");
    close(&got["stallRate"]["pValue"], &want["stallP"], "stall-rate p");
    close(&got["goodput"]["pValue"], &want["goodP"], "goodput p");
    close(&got["stopRate"]["a"], &want["stopRateA"], "stop rate A");
    close(&got["stopRate"]["b"], &want["stopRateB"], "stop rate B");
    close(&got["stopRate"]["pValue"], &want["stopP"], "stop-rate p");
    assert!(want["stopP"].as_f64().unwrap() < 0.05, "the stop rates really differ");
    assert!(want["pValue"].as_f64().unwrap() < 0.001, "the arms really differ");
    let verdict = got["verdict"].as_str().unwrap();
    assert!(verdict.starts_with("\"B\" is better on TPOT"), "{verdict}");
    assert!(verdict.contains("Stall rates differ") && verdict.contains("Stop rates differ"), "{verdict}");
}

#[test]
fn no_difference_and_too_small_samples_are_said_so() {
    let server = Server::start(&[]);
    let mut rng = Rng(11);
    let (a, b) = (arm("A", 300, 30.0, 5.0, 10.0, &mut rng), arm("B", 300, 30.0, 5.0, 10.0, &mut rng));
    ingest(&server, &a);
    ingest(&server, &b);
    ingest(&server, &arm("C", 12, 10.0, 0.0, 0.0, &mut rng));
    let window = format!("from={}&to={}", *T0 as i64, (*T0 + 3_600_000.0) as i64);
    let same = server.get(&format!("/api/compare?a=A&b=B&{window}")).json();
    let want = reference(&a, &b, json!({ "a": [0, 1], "b": [0, 1] }));
    close(&same["mannWhitney"]["pValue"], &want["pValue"], "Mann-Whitney p");
    assert!(want["pValue"].as_f64().unwrap() > 0.05, "same distribution: {}", want["pValue"]);
    assert!(same["verdict"].as_str().unwrap().starts_with("No significant difference in TPOT"), "{}", same["verdict"]);
    assert_eq!(same["goodput"], json!({ "a": null, "b": null, "pValue": null }), "no SLO, no goodput");
    let small = server.get(&format!("/api/compare?a=A&b=C&{window}")).json();
    assert!(small["verdict"].as_str().unwrap().starts_with("Too few streams to judge"), "{}", small["verdict"]);
    let empty = server.get(&format!("/api/compare?a=A&b=nobody&{window}")).json();
    assert_eq!((empty["b"]["count"].clone(), empty["b"]["median"].clone(), empty["mannWhitney"]["pValue"].clone()), (json!(0), Value::Null, Value::Null));
    for (query, field) in [("a=A", "b"), ("a=A&b=B&metric=speed", "metric"), ("a=A&b=B&variant=A", "variant")] {
        let resp = server.get(&format!("/api/compare?{query}"));
        assert_eq!((resp.status, resp.json()["field"].clone()), (400, json!(field)), "{query}");
    }
}
