//! GET /api/diagnosis over real HTTP: traffic with one known cause per hour (a model slow to start,
//! a model that stutters, an app version whose page paints late, a connection behind a buffering
//! proxy, a peak that slows everything, stalls that come with a model or with a scenario when each
//! model serves mostly one scenario), and a healthy hour. The diagnosis must name each cause, where it lies and nothing else, and nothing in
//! the healthy hour; its figures are checked against the records as sent.

mod common;

use common::{envelope, recent, record, Server};
use serde_json::{json, Value};
use std::sync::LazyLock;

static T0: LazyLock<f64> = LazyLock::new(|| recent(1_700_000_000_000.0));
const HOUR: f64 = 3_600_000.0;
const MINUTE: f64 = 60_000.0;

struct Rng(u64);
impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    fn between(&mut self, lo: f64, hi: f64) -> f64 {
        lo + self.unit() * (hi - lo)
    }
    fn pick<'a>(&mut self, of: &[&'a str]) -> &'a str {
        of[(self.unit() * of.len() as f64) as usize % of.len()]
    }
}

/// What goes wrong in an hour of traffic.
#[derive(Clone, Copy, PartialEq)]
enum Cause {
    None,
    SlowStart,
    Stutter,
    SlowPage,
    Buffered,
    Peak,
    /// m-b stalls; it serves mostly code, m-a mostly chat.
    StallingModel,
    /// Code stalls, served as above.
    StallingScenario,
}

/// An hour of healthy traffic from `start` (two models, scenarios, variants, app versions and
/// connections, every value alike), with `cause` added.
fn hour(start: f64, cause: Cause, seed: u64) -> Vec<Value> {
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    for i in 0..480 {
        // A peak: a third of the streams fall in 8 of the 60 minutes, which then run slower.
        let at_peak = cause == Cause::Peak && i % 3 == 0;
        let minute = if at_peak { 20.0 + (i % 8) as f64 } else { (rng.unit() * 60.0).floor() };
        let mut r = record(&format!("{seed}-{i}"));
        r["startedAt"] = json!(start + minute * MINUTE + rng.between(0.0, MINUTE - 1.0));
        let model = rng.pick(&["m-a", "m-b"]);
        let app_version = rng.pick(&["1.0", "1.1"]);
        r["model"] = json!(model);
        // A code model: a stall that comes with one comes with the other too, overall.
        let split = matches!(cause, Cause::StallingModel | Cause::StallingScenario);
        let scenario = if split { if (rng.unit() < 0.9) == (model == "m-b") { "code" } else { "chat" } } else { rng.pick(&["chat", "code"]) };
        r["scenario"] = json!(scenario);
        r["variant"] = json!(rng.pick(&["A", "B"]));
        r["appVersion"] = json!(app_version);
        r["connection"] = json!(rng.pick(&["4g", "wifi"]));
        let slow = if at_peak { 1.8 } else { 1.0 };
        let ttft = rng.between(300.0, 700.0) * slow * if cause == Cause::SlowStart && model == "m-b" { 3.0 } else { 1.0 };
        let tpot = rng.between(15.0, 30.0) * slow;
        let uneven = if cause == Cause::Stutter && model == "m-b" { 3.0 } else { 1.0 };
        let stall_share = match cause {
            Cause::Stutter if model == "m-b" => 0.4,
            Cause::StallingModel if model == "m-b" => 0.5,
            Cause::StallingScenario if scenario == "code" => 0.5,
            _ => 0.02,
        };
        let render_delay = rng.between(2.0, 8.0) * if cause == Cause::SlowPage && app_version == "1.1" { 10.0 } else { 1.0 };
        r["ttftMs"] = json!(ttft);
        r["ttftArrivalMs"] = json!(ttft - 5.0);
        r["tpotMs"] = json!(tpot);
        r["gaps"] = json!({ "p50": tpot, "p90": tpot * rng.between(1.4, 2.0) * uneven, "p99": tpot * 4.0, "max": tpot * 6.0 });
        let stalled = rng.unit() < stall_share;
        r["stalls"] = json!({ "count": u8::from(stalled), "count1000": 0, "longestMs": if stalled { 900 } else { 0 }, "totalMs": if stalled { 900 } else { 0 } });
        r["renderDelay"] = json!({ "p50": render_delay, "p90": render_delay * 2.0 });
        // Behind a buffering proxy most streams get most events in the same read as the one before
        // (a gap of 0); elsewhere a few do (a fast server, a congested link).
        let bunch_share = if cause == Cause::Buffered && r["connection"] == "wifi" { 0.7 } else { 0.05 };
        let arrival_p50 = if rng.unit() < bunch_share { 0.0 } else { tpot };
        r["arrivalGaps"] = json!({ "p50": arrival_p50, "p90": tpot * 2.0, "p99": tpot * 4.0, "max": tpot * 6.0 });
        out.push(r);
    }
    out
}

/// Ten streams a session (a batch each): the diagnosis judges a finding over sessions too.
fn ingest(server: &Server, records: &[Value]) {
    for (n, chunk) in records.chunks(10).enumerate() {
        let mut env = envelope(chunk.to_vec());
        env["batchId"] = json!(format!("b-{n}-{}", chunk[0]["id"]));
        env["sessionId"] = json!(format!("s-{n}-{}", chunk[0]["id"]));
        env["sentAt"] = json!(chunk.iter().map(|r| r["startedAt"].as_f64().unwrap()).fold(0.0, f64::max) + 10_000.0);
        let resp = server.post_json("/v1/beacons", &env);
        assert_eq!(resp.status, 200, "{}", resp.text());
    }
}

/// The findings of the hour from `start`, as (kind, where) pairs: where is `dimension=value`, or
/// `peak` for a load finding.
fn findings(server: &Server, start: f64) -> (Vec<(String, String)>, Value) {
    let resp = server.get(&format!("/api/diagnosis?from={}&to={}", start as i64, (start + HOUR) as i64));
    assert_eq!(resp.status, 200, "{}", resp.text());
    let body = resp.json();
    assert_eq!((body["def"].clone(), body["from"].as_f64()), (json!(1), Some(start.floor())));
    let named = body["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            assert!(["high", "medium"].contains(&f["severity"].as_str().unwrap()), "{f}");
            assert!(f["text"].as_str().unwrap().len() > 40, "{f}");
            assert!(f["evidence"]["pValue"].as_f64().unwrap() < 0.001, "{f}");
            let place = match f["evidence"]["dimension"].as_str() {
                Some(dim) => format!("{dim}={}", f["evidence"]["value"].as_str().unwrap()),
                None => "peak".to_owned(),
            };
            (f["kind"].as_str().unwrap().to_owned(), place)
        })
        .collect();
    (named, body)
}

/// The value at rank floor(n/2) of `values` (what the sketch's median approximates, within 1%).
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[(values.len() - 1) / 2]
}

/// The chance that a value of `a` is larger than one of `b` (ties half), by counting every pair, and
/// the Mann-Whitney test's two-sided p-value from it (normal approximation, no tie correction: the
/// values are continuous): z = (U − nm/2) / √(nm(n+m+1)/12), p = erfc(|z|/√2).
fn mann_whitney(a: &[f64], b: &[f64]) -> (f64, f64) {
    let u: f64 = a.iter().map(|x| b.iter().map(|y| if x > y { 1.0 } else if x == y { 0.5 } else { 0.0 }).sum::<f64>()).sum();
    let (n, m) = (a.len() as f64, b.len() as f64);
    let z = (u - n * m / 2.0) / (n * m * (n + m + 1.0) / 12.0).sqrt();
    (u / (n * m), libm_erfc(z.abs() / std::f64::consts::SQRT_2))
}

/// erfc by its continued-fraction-free rational approximation (Numerical Recipes' erfcc, 1.2e-7).
fn libm_erfc(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.5 * x.abs());
    let y = t * (-x * x - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))))).exp();
    if x >= 0.0 { y } else { 2.0 - y }
}

fn close(got: &Value, want: f64, tolerance: f64, what: &str) {
    let got = got.as_f64().unwrap_or_else(|| panic!("{what}: got {got}"));
    assert!((got - want).abs() <= tolerance * want.abs(), "{what}: got {got}, want {want}");
}

#[test]
fn names_each_cause_where_it_lies_and_nothing_when_healthy() {
    let server = Server::start(&[]);
    let hours: Vec<(f64, Cause, Vec<Value>)> =
        [Cause::None, Cause::SlowStart, Cause::Stutter, Cause::SlowPage, Cause::Buffered, Cause::Peak, Cause::StallingModel, Cause::StallingScenario].into_iter().enumerate().map(|(k, cause)| {
            let start = *T0 + k as f64 * HOUR;
            (start, cause, hour(start, cause, 100 + k as u64))
        }).collect();
    for (_, _, records) in &hours {
        ingest(&server, records);
    }
    let pair = |kind: &str, place: &str| (kind.to_owned(), place.to_owned());
    for (start, cause, records) in &hours {
        let (named, body) = findings(&server, *start);
        let want = match cause {
            Cause::None => vec![],
            Cause::SlowStart => vec![pair("start", "model=m-b")],
            // It stalls more often and its rhythm is uneven; its TPOT is as the other model's.
            Cause::Stutter => vec![pair("stream", "model=m-b"), pair("stream", "model=m-b")],
            Cause::SlowPage => vec![pair("page", "appVersion=1.1")],
            Cause::Buffered => vec![pair("network", "connection=wifi")],
            Cause::Peak => vec![pair("load", "peak"), pair("load", "peak")],
            // Each only where it lies, though the other stalls as often overall: a plain comparison names both.
            Cause::StallingModel => vec![pair("stream", "model=m-b")],
            Cause::StallingScenario => vec![pair("stream", "scenario=code")],
        };
        if let Some((dim, value)) = match cause {
            Cause::StallingModel => Some(("scenario", "code")),
            Cause::StallingScenario => Some(("model", "m-b")),
            _ => None,
        } {
            let stalled = |rs: &[&Value]| rs.iter().filter(|r| r["stalls"]["count"] != json!(0)).count() as f64 / rs.len() as f64;
            let (group, other): (Vec<&Value>, Vec<&Value>) = records.iter().partition(|r| r[dim] == value);
            let (rate, other_rate) = (stalled(&group), stalled(&other));
            assert!(rate >= 2.0 * other_rate && rate - other_rate >= 0.05, "{dim}={value} stalls {rate} against {other_rate} overall: the hour tests nothing");
        }
        let mut sorted = named.clone();
        sorted.sort();
        assert_eq!(sorted, want, "{}", serde_json::to_string_pretty(&body["findings"]).unwrap());
        // Each figure of the evidence against the records as sent.
        for f in body["findings"].as_array().unwrap() {
            let e = &f["evidence"];
            let value = |r: &Value| match e["metric"].as_str().unwrap() {
                "ttftMs" => r["ttftMs"].as_f64(),
                "tpotMs" => r["tpotMs"].as_f64(),
                "gapP90Ms" => r["gaps"]["p90"].as_f64(),
                "renderDelayMs" => r["renderDelay"]["p50"].as_f64(),
                _ => None,
            };
            // Time buckets are the whole UTC minutes of the window (its ends are partial minutes).
            let minute = |r: &Value| (r["startedAt"].as_f64().unwrap() / MINUTE).floor() as i64;
            let whole = |m: i64| m as f64 * MINUTE >= start.floor() && (m + 1) as f64 * MINUTE <= (start + HOUR).floor();
            let (group, other): (Vec<&Value>, Vec<&Value>) = if f["kind"] == "load" {
                let mut counts = std::collections::BTreeMap::<i64, usize>::new();
                records.iter().filter(|r| whole(minute(r))).for_each(|r| *counts.entry(minute(r)).or_default() += 1);
                let mut by_count: Vec<(usize, i64)> = counts.iter().map(|(&m, &n)| (n, m)).collect();
                by_count.sort();
                let quarter = by_count.len() / 4;
                let busy: Vec<i64> = by_count[by_count.len() - quarter..].iter().map(|&(_, m)| m).collect();
                let quiet: Vec<i64> = by_count[..quarter].iter().map(|&(_, m)| m).collect();
                let busy_streams = records.iter().filter(|r| busy.contains(&minute(r))).count();
                close(&e["rpm"], busy_streams as f64 / quarter as f64, 1e-9, "busy streams a minute");
                (records.iter().filter(|r| busy.contains(&minute(r))).collect(), records.iter().filter(|r| quiet.contains(&minute(r))).collect())
            } else {
                let (dim, v) = (e["dimension"].as_str().unwrap(), &e["value"]);
                records.iter().partition(|r| &r[dim] == v)
            };
            let has = |r: &&Value| match e["metric"].as_str().unwrap() {
                "stallRate" => Some(r["stalls"]["count"] != json!(0)),
                // The common record has 118 output events: bunching is known for each.
                "bunchedRate" => Some(r["arrivalGaps"]["p50"] == json!(0.0)),
                _ => None,
            };
            if has(&group[0]).is_some() {
                let rate = |rs: &[&Value]| rs.iter().filter(|r| has(r) == Some(true)).count() as f64 / rs.len() as f64;
                close(&e["rate"], rate(&group), 1e-9, "rate");
                close(&e["otherRate"], rate(&other), 1e-9, "other rate");
                // Within each other dimension's values and each length band as well.
                let others: Vec<&str> = ["model", "scenario", "variant", "appVersion", "connection"].into_iter().filter(|d| e["dimension"] != *d).collect();
                let strata = if e["metric"] == "stallRate" { [others.clone(), vec!["length band"]].concat() } else { others };
                assert_eq!((e["within"]["strata"].clone(), e["within"]["test"].clone()), (json!(strata), json!("Cochran-Mantel-Haenszel test")), "{f}");
                assert!(e["within"]["pValue"].as_f64().unwrap() < 0.001 && e["within"]["rateRatio"].as_f64().unwrap() >= 2.0, "{f}");
                assert_eq!((e["streams"].as_u64(), e["otherStreams"].as_u64()), (Some(group.len() as u64), Some(other.len() as u64)));
                continue;
            }
            let (a, b): (Vec<f64>, Vec<f64>) = (group.iter().filter_map(|r| value(r)).collect(), other.iter().filter_map(|r| value(r)).collect());
            assert_eq!((e["streams"].as_u64(), e["otherStreams"].as_u64()), (Some(a.len() as u64), Some(b.len() as u64)), "{f}");
            close(&e["p50"], median(a.clone()), 0.011, "median");
            close(&e["otherP50"], median(b.clone()), 0.011, "other median");
            let (chance_slower, p) = mann_whitney(&a, &b);
            assert!(p < 0.001, "the test on the values themselves agrees: {f}");
            // The sketch ties values within a bucket (1%): a few pairs count half.
            close(&e["chanceSlower"], chance_slower, 0.02, "chance slower");
        }
    }
    // The healthy hour's values really are alike: the test is not blind.
    let (_, _, healthy) = &hours[0];
    let ttft = |m: &str| healthy.iter().filter(|r| r["model"] == m).map(|r| r["ttftMs"].as_f64().unwrap()).collect::<Vec<_>>();
    assert!(mann_whitney(&ttft("m-a"), &ttft("m-b")).1 > 0.001);
}

#[test]
fn refuses_group_by_and_slos() {
    let server = Server::start(&[]);
    for (query, field) in [("groupBy=model", "groupBy"), ("slo.ttftMs=500", "slo.ttftMs"), ("from=x", "from")] {
        let resp = server.get(&format!("/api/diagnosis?{query}"));
        assert_eq!((resp.status, resp.json()["field"].clone()), (400, json!(field)), "{query}");
    }
    let empty = server.get("/api/diagnosis").json();
    assert_eq!(empty["findings"], json!([]));
}

/// One session of the population every value of [`small_groups_of_few_sessions_are_no_cause`] comes
/// from: 4 to 40 chats from `start` (one every 40 s), each session with its own speed, stall
/// propensity and network (TTFT and TPOT spread between sessions with σ = 0.45 on the log scale, 0.15
/// within one; one session in ten behind a buffering proxy), `slow` times the usual TTFT.
fn session(rng: &mut Rng, id: &str, start: f64, app_version: &str, slow: f64) -> Vec<Value> {
    let mut normal = || (-2.0 * rng.unit().max(1e-12).ln()).sqrt() * (std::f64::consts::TAU * rng.unit()).cos();
    let (ttft, tpot, paint, stalls) = (600.0 * (0.45 * normal()).exp() * slow, 25.0 * (0.45 * normal()).exp(), 5.0 * (0.45 * normal()).exp(), 0.03 * (0.45 * normal()).exp());
    let mut rng = Rng(rng.0 ^ 0x5555);
    let buffered = rng.unit() < 0.1;
    let (variant, connection) = (rng.pick(&["A", "B"]), rng.pick(&["4g", "wifi"]));
    let chats = 4 + (rng.unit() * 37.0) as usize;
    (0..chats)
        .map(|i| {
            let mut within = || (-2.0 * rng.unit().max(1e-12).ln()).sqrt() * (std::f64::consts::TAU * rng.unit()).cos();
            let (ttft, tpot, paint) = (ttft * (0.15 * within()).exp(), tpot * (0.15 * within()).exp(), paint * (0.15 * within()).exp());
            let mut r = record(&format!("{id}-{i}"));
            r["startedAt"] = json!(start + i as f64 * 40_000.0);
            r["model"] = json!(rng.pick(&["m-a", "m-b"]));
            r["scenario"] = json!(rng.pick(&["chat", "code"]));
            r["variant"] = json!(variant);
            r["appVersion"] = json!(app_version);
            r["connection"] = json!(connection);
            r["ttftMs"] = json!(ttft);
            r["ttftArrivalMs"] = json!(ttft - 5.0);
            r["tpotMs"] = json!(tpot);
            r["gaps"] = json!({ "p50": tpot, "p90": tpot * 1.7, "p99": tpot * 4.0, "max": tpot * 6.0 });
            let stalled = rng.unit() < stalls;
            r["stalls"] = json!({ "count": u8::from(stalled), "count1000": 0, "longestMs": if stalled { 900 } else { 0 }, "totalMs": if stalled { 900 } else { 0 } });
            r["renderDelay"] = json!({ "p50": paint, "p90": paint * 2.0 });
            r["arrivalGaps"] = json!({ "p50": if buffered { 0.0 } else { tpot }, "p90": tpot * 2.0, "p99": tpot * 4.0, "max": tpot * 6.0 });
            r
        })
        .collect()
}

/// The issue-36 measurement: 400 sessions on one app version and 20 small versions of 3 sessions
/// each, all from one population, in 5 windows. Judged by streams, a small version's 40-odd streams
/// look like 40 samples and its sessions' own speed like a cause; judged over sessions they are 3
/// samples. At most 2 false findings over the 100 small groups and 50 more of 6 sessions (tested over
/// sessions with Student's t); and a small version that really is slow to start (6 sessions at 3× the
/// TTFT) is still named.
#[test]
fn small_groups_of_few_sessions_are_no_cause() {
    use llm_ux_collector::store::{sqlite::SqliteStore, Store};
    use llm_ux_collector::{api::diagnosis, validate};
    if common::backend::is_clickhouse() {
        return eprintln!("in-process on SQLite: run in the SQLite pass only");
    }
    let dir = common::TempDir::new("diagnosis-units");
    let store = SqliteStore::open(&dir.0.join("beacons.db")).unwrap();
    let mut rng = Rng(36);
    let (mut false_findings, mut fooled, mut small_groups) = (Vec::new(), 0, 0);
    for window in 0..5 {
        let start = *T0 + 24.0 * HOUR + window as f64 * HOUR;
        let mut groups: Vec<(String, usize, f64)> = vec![("1.0".into(), 400, 1.0)];
        groups.extend((0..20).map(|k| (format!("small-{k}"), 3, 1.0)));
        // Groups of 6: enough sessions to be tested over sessions, too few for the normal's tail.
        groups.extend((0..10).map(|k| (format!("six-{k}"), 6, 1.0)));
        if window == 4 {
            groups.push(("slow-7".into(), 6, 3.0));
        }
        let mut records = Vec::new();
        for (app_version, sessions, slow) in &groups {
            for s in 0..*sessions {
                let id = format!("w{window}-{app_version}-{s}");
                let at = start + rng.unit() * 30.0 * MINUTE;
                let chats = session(&mut rng, &id, at, app_version, *slow);
                let mut env = envelope(chats.clone());
                env["sessionId"] = json!(id);
                env["batchId"] = json!(format!("b-{id}"));
                env["sentAt"] = json!(chats.iter().map(|r| r["startedAt"].as_f64().unwrap()).fold(0.0, f64::max) + 10_000.0);
                store.insert_batch(&validate::envelope(&env, common::now_ms()).unwrap(), common::now_ms()).unwrap();
                records.extend(chats);
            }
        }
        let q = diagnosis::parse(Some(&format!("from={}&to={}", start as i64, (start + HOUR) as i64)), common::now_ms()).unwrap();
        let answer = diagnosis::diagnosis(&store, &q).unwrap();
        let found: Vec<&Value> = answer["findings"].as_array().unwrap().iter().collect();
        // What a test over streams says of each small version's TTFT: the trap the issue measured.
        let ttft = |rs: Vec<&Value>| rs.iter().filter_map(|r| r["ttftMs"].as_f64()).collect::<Vec<_>>();
        for k in 0..20 {
            let name = format!("small-{k}");
            let (group, other): (Vec<&Value>, Vec<&Value>) = records.iter().partition(|r| r["appVersion"] == name.as_str());
            let (a, b) = (ttft(group), ttft(other));
            let (chance_slower, p) = mann_whitney(&a, &b);
            fooled += usize::from(p < 0.001 && (chance_slower >= 0.6 || chance_slower <= 0.4));
            small_groups += 1;
        }
        if window == 4 {
            let slow = found.iter().find(|f| f["evidence"]["value"] == "slow-7" && f["kind"] == "start");
            let slow = slow.unwrap_or_else(|| panic!("the slow small version is named: {}", serde_json::to_string_pretty(&answer).unwrap()));
            assert!(slow["evidence"]["units"]["sessions"].as_u64() == Some(6) && slow["evidence"]["units"]["pValue"].as_f64().unwrap() < 0.001, "{slow}");
        }
        false_findings.extend(found.into_iter().filter(|f| f["evidence"]["value"] != "slow-7").map(|f| f["text"].clone()));
    }
    eprintln!("{small_groups} small groups of 3 sessions (and 50 of 6): {fooled} differ from the rest by their streams' TTFT (Mann-Whitney p < 0.001); findings: {false_findings:#?}");
    assert!(fooled >= 20, "the data set the trap: by streams, {fooled} of {small_groups} small groups differ");
    assert!(false_findings.len() <= 2, "false findings: {false_findings:#?}");
}
