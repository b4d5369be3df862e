//! GET /api/compare over real HTTP, every figure of the answer checked against an independent
//! reference on the same streams: tests/reference/experiment.py (statsmodels, SciPy and NumPy, run in
//! the virtualenv scripts/setup.sh makes).
//!
//! The streams come in sessions, one envelope each (its `sessionId` is the unit), of 1 to 12
//! streams, and each session has its own speed and its own stall and stop propensity. That spread
//! between sessions puts the unit-level standard errors well above what the same streams would give
//! as independent samples (asserted), so a figure computed over streams fails here. A few sessions
//! are in both arms: they are left out and counted.
//!
//! Exact (1e-9 relative, or equal): the arms' units, streams, counts, means and medians, the mixed
//! units; the difference of the means and of the stall, stop and goodput shares with their ci95 and
//! p-values (against statsmodels' OLS on an arm indicator with CR0 cluster-robust errors by session,
//! which the delta method equals); the SRM p-value (SciPy's chi-square); the power figures; the
//! sequential p-value and confidence sequence (the mSPRT re-derived from the normal mixture), with
//! the widest difference it leaves when it finds none larger than the mde. Close: the median
//! difference's standard error (the delta method for quantiles), within 15% of a cluster bootstrap's.
//! Then the decisions and verdicts of a real difference, of none, of too few sessions, of an empty
//! arm and of a sample ratio mismatch, and the 400s of bad parameters.

mod common;

use common::{envelope, now_ms, recent, record, Server, TempDir};
use llm_ux_collector::dims::{Dim, Metric, Unit};
use llm_ux_collector::query::experiment::units::{read_arms, Arms, ArmsQuery, Limits, UnitFigures};
use llm_ux_collector::rollup::Slo;
use llm_ux_collector::store::sqlite::SqliteStore;
use llm_ux_collector::store::Store;
use llm_ux_collector::validate;
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::LazyLock;

static T0: LazyLock<f64> = LazyLock::new(|| recent(1_700_000_000_000.0));

/// The SLO of the goodput share: TTFT and TPOT at most these, in ms. The TPOT threshold lies in the
/// arms' upper tail, so the gap [`clear_of`] leaves around it is far from the medians.
const SLO: [f64; 2] = [1000.0, 50.0];
/// The normal quantile of a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

struct Rng(u64);
impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// An arm's sessions on average: TPOT (ms), the share of streams that stall and that the user stops.
#[derive(Clone, Copy)]
struct Behaviour {
    tpot: f64,
    stall: f64,
    stop: f64,
}

struct Session {
    id: String,
    /// The envelope's `experimentUnit` (the app's user, as the meter hashes it), if the app gave one.
    user: Option<String>,
    records: Vec<Value>,
}

/// `v` moved out of the 3% around `threshold`: the collector judges a value against an SLO by its
/// sketch bucket (within 1%), so a value that close could be judged either way.
fn clear_of(v: f64, threshold: f64) -> f64 {
    match v / threshold {
        r if (0.97..1.0).contains(&r) => threshold * 0.97,
        r if (1.0..1.03).contains(&r) => threshold * 1.03,
        _ => v,
    }
}

/// 1 to 12 streams of `variant` for session `id`, started in the hour after T0. The session's own
/// speed is 0.5 to 1.5 times the arm's TPOT, its stall and stop propensities 0 to 2 times the arm's;
/// per stream TPOT is ±20% around the session's (in 0.01 ms steps), unknown in 1 of 25, stalls are
/// unknown in 1 of 10, and 1 in 20 never reaches its first token. TTFT and TPOT stay clear of the SLO.
fn streams(id: &str, variant: &str, arm: Behaviour, rng: &mut Rng) -> Vec<Value> {
    let (speed, stall, stop) = (arm.tpot * (0.5 + rng.unit()), arm.stall * 2.0 * rng.unit(), arm.stop * 2.0 * rng.unit());
    let n = 1 + (rng.unit() * 12.0) as usize;
    (0..n)
        .map(|k| {
            let mut r = record(&format!("{id}-{variant}-{k}"));
            r["variant"] = json!(variant);
            r["startedAt"] = json!(*T0 + rng.unit() * 3_600_000.0);
            r["ttftMs"] = json!(clear_of((300.0 + rng.unit() * 900.0).round(), SLO[0]));
            let tpot = clear_of((speed * (0.8 + 0.4 * rng.unit()) * 100.0).round() / 100.0, SLO[1]);
            r["tpotMs"] = if rng.unit() < 0.04 { Value::Null } else { json!(tpot) };
            r["stalls"] = if rng.unit() < 0.1 { Value::Null } else { json!({ "count": u64::from(rng.unit() < stall), "count1000": 0, "longestMs": 0, "totalMs": 0 }) };
            if rng.unit() < stop {
                r["status"] = json!(["aborted", "incomplete"][k % 2]);
            }
            if rng.unit() < 0.05 {
                r["ttftArrivalMs"] = Value::Null;
            }
            r
        })
        .collect()
}

/// `n` sessions of one arm, ids `{variant}-{i}`.
fn sessions(variant: &str, n: usize, arm: Behaviour, rng: &mut Rng) -> Vec<Session> {
    (0..n).map(|i| Session { id: format!("{variant}-{i}"), user: None, records: streams(&format!("{variant}-{i}"), variant, arm, rng) }).collect()
}

/// `n` sessions with streams in both `a` and `b`: no single arm, to be left out.
fn mixed(n: usize, a: (&str, Behaviour), b: (&str, Behaviour), rng: &mut Rng) -> Vec<Session> {
    (0..n)
        .map(|i| {
            let id = format!("mixed-{i}");
            let mut records = streams(&id, a.0, a.1, rng);
            records.extend(streams(&id, b.0, b.1, rng));
            Session { id, user: None, records }
        })
        .collect()
}

/// One envelope per session (the envelope carries the session id), from 8 senders at once: one at a
/// time, each would wait for its own insert on ClickHouse, which gathers concurrent batches.
fn ingest(server: &Server, sessions: &[Session]) {
    std::thread::scope(|scope| {
        for senders in sessions.chunks(sessions.len().div_ceil(8)) {
            scope.spawn(move || {
                for s in senders {
                    let mut env = envelope(s.records.clone());
                    env["sessionId"] = json!(s.id);
                    if let Some(user) = &s.user {
                        env["experimentUnit"] = json!(user);
                    }
                    env["batchId"] = json!(format!("b-{}", s.id));
                    assert_eq!(server.post_json("/v1/beacons", &env).status, 200, "session {}", s.id);
                }
            });
        }
    });
}

/// What the reference computes from the streams of arms `a` and `b` as sent, with the session as
/// the unit; `split` and `mde` as in the query.
fn reference(sessions: &[Session], a: &str, b: &str, split: [f64; 2], mde: f64) -> Value {
    reference_by(sessions, |s| Some(&s.id), a, b, split, mde)
}

/// The same with `unit_of` a session's unit (`None`: its streams have none and are left out).
fn reference_by<'s>(sessions: &'s [Session], unit_of: impl Fn(&'s Session) -> Option<&'s String>, a: &str, b: &str, split: [f64; 2], mde: f64) -> Value {
    let streams: Vec<Value> = sessions
        .iter()
        .filter_map(|s| Some((unit_of(s)?, s)))
        .flat_map(|(unit, s)| s.records.iter().map(move |r| (unit, r)))
        .filter(|(_, r)| r["variant"] == a || r["variant"] == b)
        .map(|(unit, r)| {
            let (ttft, tpot) = (r["ttftMs"].as_f64(), r["tpotMs"].as_f64());
            json!({
                "unit": unit,
                "arm": if r["variant"] == a { "a" } else { "b" },
                "value": tpot,
                "stalled": r["stalls"].get("count").map(|c| c != 0),
                "reached": !r["ttftArrivalMs"].is_null(),
                "stopped": r["status"] == "aborted" || r["status"] == "incomplete",
                "good": ttft.is_some_and(|t| t <= SLO[0]) && tpot.is_some_and(|t| t <= SLO[1]),
            })
        })
        .collect();
    let input = json!({ "streams": streams, "split": split, "mde": mde });
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let python = std::env::var("LLM_UX_PYTHON").unwrap_or_else(|_| root.join("target/pyenv/bin/python").display().to_string());
    let mut child = Command::new(&python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/experiment.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {python} ({e}): run `bash scripts/setup.sh`, which installs SciPy and statsmodels into target/pyenv"));
    child.stdin.take().unwrap().write_all(input.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "reference/experiment.py failed");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `got` within 1e-9 of `want`, relative; both null when the reference has no such figure.
fn close(got: &Value, want: &Value, what: &str) {
    if want.is_null() {
        assert!(got.is_null(), "{what}: got {got}, the reference has none");
        return;
    }
    let (g, w) = (got.as_f64().unwrap_or_else(|| panic!("{what}: got {got}, the reference {want}")), want.as_f64().unwrap());
    assert!((g - w).abs() <= 1e-9 * w.abs(), "{what}: got {g}, the reference {w}");
}

/// A difference as the answer gives it (`estimate`, `ci95`, `pValue`) against the reference's.
fn same_difference(got: &Value, estimate: &Value, want: &Value, what: &str) {
    close(estimate, &want["estimate"], &format!("{what} difference"));
    close(&got["ci95"][0], &want["ci95"][0], &format!("{what} ci95 low"));
    close(&got["ci95"][1], &want["ci95"][1], &format!("{what} ci95 high"));
    close(&got["pValue"], &want["pValue"], &format!("{what} p"));
}

/// Every figure of `got` (the answer for `a` and `b`) against the reference `want`; `goodput`:
/// whether the query gave an SLO.
fn check(got: &Value, want: &Value, split: [f64; 2], goodput: bool) {
    for (i, arm) in ["a", "b"].into_iter().enumerate() {
        for key in ["units", "streams", "count"] {
            assert_eq!(got[arm][key], want[key][i], "{arm} {key}");
        }
        close(&got[arm]["mean"], &want["mean"][arm]["mean"], &format!("mean {arm}"));
        assert_eq!(got[arm]["median"], want["median"][arm], "median {arm}");
    }
    assert_eq!(got["mixedUnits"], want["mixedUnits"]);
    let mean = &want["mean"];
    same_difference(&got["difference"], &got["difference"]["estimate"], &mean["difference"], "mean");
    let scale = mean["a"]["mean"].as_f64().map(f64::abs);
    let relative = json!(mean["difference"]["estimate"].as_f64().zip(scale).map(|(d, scale)| d / scale));
    close(&got["difference"]["relative"], &relative, "relative difference");
    for share in ["stallRate", "stopRate", "goodput"] {
        let (got, want) = (&got["secondary"][share], &want[share]);
        if share == "goodput" && !goodput {
            assert_eq!(got, &json!({ "a": null, "b": null, "difference": null, "ci95": null, "pValue": null }), "no SLO, no goodput");
            continue;
        }
        close(&got["a"], &want["a"]["mean"], &format!("{share} a"));
        close(&got["b"], &want["b"]["mean"], &format!("{share} b"));
        same_difference(got, &got["difference"], &want["difference"], share);
    }
    let median = &got["secondary"]["median"];
    assert_eq!((&median["a"], &median["b"]), (&want["median"]["a"], &want["median"]["b"]), "secondary medians");
    // The delta method for quantiles against the bootstrap, where there are units enough for either.
    let with_values = [&mean["a"]["units"], &mean["b"]["units"]].map(|u| u.as_u64().unwrap_or(0));
    if with_values.iter().all(|&n| n >= 30) {
        let se = (median["ci95"][1].as_f64().unwrap() - median["ci95"][0].as_f64().unwrap()) / (2.0 * Z95);
        let bootstrap = want["median"]["differenceSe"].as_f64().unwrap();
        assert!((se / bootstrap - 1.0).abs() < 0.15, "median difference's standard error {se}, the bootstrap's {bootstrap}");
        close(&median["difference"], &json!(want["median"]["b"].as_f64().unwrap() - want["median"]["a"].as_f64().unwrap()), "median difference");
    }
    let total = split[0] + split[1];
    assert_eq!((&got["srm"]["observed"], &got["srm"]["expected"]), (&want["units"], &json!([split[0] / total, split[1] / total])), "srm");
    close(&got["srm"]["pValue"], &want["srmP"], "SRM p");
    let power = &want["power"];
    assert_eq!(got["power"]["unitsPerArm"], power["unitsPerArm"], "units per arm");
    let more = power["unitsPerArm"].as_f64().map(|n| (n - with_values[0].min(with_values[1]) as f64).max(0.0));
    assert_eq!(got["power"]["moreUnitsPerArm"], json!(more), "more units per arm");
    close(&got["power"]["detectableNow"], &power["detectableNow"], "detectable now");
    let (got, want) = (&got["sequential"], &want["sequential"]);
    close(&got["estimate"], &mean["difference"]["estimate"], "sequential estimate");
    close(&got["relative"], &relative, "sequential relative");
    close(&got["pValue"], &want["pValue"], "sequential p");
    close(&got["ci95"][0], &want["ci95"][0], "sequential ci95 low");
    close(&got["ci95"][1], &want["ci95"][1], "sequential ci95 high");
    // The widest difference the sequence leaves, relative to a's mean: given when there is none larger.
    let widest = want["ci95"].as_array().zip(scale).map(|(ci, scale)| ci[0].as_f64().unwrap().abs().max(ci[1].as_f64().unwrap().abs()) / scale);
    close(&got["noDifferenceLargerThan"], &json!(widest.filter(|_| got["decision"] == "noDifference")), "no difference larger than");
}

fn window() -> String {
    format!("from={}&to={}", *T0 as i64, (*T0 + 3_600_000.0) as i64)
}

#[test]
fn agrees_with_the_reference_and_calls_the_faster_arm() {
    let server = Server::start(&[]);
    let mut rng = Rng(7);
    let (slow, fast) = (Behaviour { tpot: 40.0, stall: 0.12, stop: 0.25 }, Behaviour { tpot: 34.0, stall: 0.04, stop: 0.12 });
    let mut all = sessions("A", 230, slow, &mut rng);
    all.extend(sessions("B", 210, fast, &mut rng));
    all.extend(mixed(4, ("A", slow), ("B", fast), &mut rng));
    ingest(&server, &all);
    let got = server.get(&format!("/api/compare?dimension=variant&a=A&b=B&metric=tpotMs&{}&slo.ttftMs={}&slo.tpotMs={}", window(), SLO[0], SLO[1])).json();
    let want = reference(&all, "A", "B", [1.0, 1.0], 0.1);
    assert_eq!((&got["metric"], &got["unit"], &got["a"]["value"], &got["b"]["value"], &got["sampled"]), (&json!("tpotMs"), &json!("session"), &json!("A"), &json!("B"), &json!(false)));
    assert_eq!((&got["from"], &got["to"]), (&json!(*T0 as i64), &json!((*T0 + 3_600_000.0) as i64)));
    check(&got, &want, [1.0, 1.0], true);
    assert_eq!(want["mixedUnits"], 4);
    let d = &want["mean"]["difference"];
    assert!(d["pValue"].as_f64().unwrap() < 0.001, "the arms really differ: {d}");
    // Sessions move together: over streams the error would be far smaller, and fail the checks above.
    assert!(d["naiveSe"].as_f64().unwrap() * 1.5 < d["variance"].as_f64().unwrap().sqrt(), "too little spread between sessions: {d}");
    let decided = [&got["sequential"]["decision"], &got["sequential"]["status"], &got["sequential"]["significant"], &got["difference"]["significant"]];
    assert_eq!(decided, [&json!("bBetter"), &json!("b is better"), &json!(true), &json!(true)]);
    assert!(want["stallRate"]["difference"]["pValue"].as_f64().unwrap() < 0.05 && want["stopRate"]["difference"]["pValue"].as_f64().unwrap() < 0.05, "the shares really differ");
    let verdict = got["verdict"].as_str().unwrap();
    assert!(verdict.starts_with("\"B\" is better on TPOT"), "{verdict}");
    let secondary = verdict.split_once("Secondary, not the decision: ").unwrap_or_else(|| panic!("{verdict}")).1;
    assert!(secondary.contains("stall rates") && secondary.contains("stop rates"), "{verdict}");
}

/// An app that assigns arms per user: each user has 1 to 4 sessions of their arm, and the user's
/// speed is shared by all of them (one person, one device), so sessions are not independent. With
/// `unit=user` the answer counts users and agrees with the reference clustered by user; sessions
/// from a build without the unit are left out and counted; a user in both arms is mixed.
#[test]
fn unit_user_counts_the_apps_users() {
    let server = Server::start(&[]);
    let mut rng = Rng(23);
    let (slow, fast) = (Behaviour { tpot: 40.0, stall: 0.1, stop: 0.2 }, Behaviour { tpot: 36.0, stall: 0.06, stop: 0.15 });
    let mut all = Vec::new();
    for (arm_index, (variant, arm, users)) in [("A", slow, 120), ("B", fast, 110)].into_iter().enumerate() {
        for u in 0..users {
            let user = format!("{arm_index:016x}{u:016x}");
            // One draw of the user's speed for all their sessions: 0.5 to 1.5 times the arm's.
            let mine = Behaviour { tpot: arm.tpot * (0.5 + rng.unit()), ..arm };
            for k in 0..1 + (rng.unit() * 4.0) as usize {
                let id = format!("{variant}-{u}-{k}");
                // Within a user, each session a little faster or slower (±5%).
                let records = streams(&id, variant, Behaviour { tpot: mine.tpot / (0.95 + 0.1 * rng.unit()), ..mine }, &mut rng);
                all.push(Session { id, user: Some(user.clone()), records });
            }
        }
    }
    let mixed_user = format!("{:032x}", 1u128 << 100);
    for (k, (variant, arm)) in [("A", slow), ("B", fast)].into_iter().enumerate() {
        all.push(Session { id: format!("both-{k}"), user: Some(mixed_user.clone()), records: streams(&format!("both-{k}"), variant, arm, &mut rng) });
    }
    let mut older = sessions("A", 9, slow, &mut rng);
    older.extend(sessions("B", 7, fast, &mut rng));
    for s in &mut older {
        s.id = format!("older-{}", s.id);
    }
    let without_unit: usize = older.iter().map(|s| s.records.len()).sum();
    all.extend(older);
    ingest(&server, &all);

    let by_user = server.get(&format!("/api/compare?a=A&b=B&unit=user&{}&slo.ttftMs={}&slo.tpotMs={}", window(), SLO[0], SLO[1])).json();
    let want = reference_by(&all, |s| s.user.as_ref(), "A", "B", [1.0, 1.0], 0.1);
    check(&by_user, &want, [1.0, 1.0], true);
    assert_eq!((&by_user["unit"], &want["units"], &want["mixedUnits"]), (&json!("user"), &json!([120, 110]), &json!(1)));
    assert_eq!(by_user["streamsWithoutUnit"], without_unit);
    assert!(by_user["verdict"].as_str().unwrap().contains(" users"), "{}", by_user["verdict"]);
    // The same streams by session: more units, and an error that takes the sessions of one user as
    // independent, so narrower than the user-level one.
    let by_session = server.get(&format!("/api/compare?a=A&b=B&unit=session&{}", window())).json();
    check(&by_session, &reference(&all, "A", "B", [1.0, 1.0], 0.1), [1.0, 1.0], false);
    assert_eq!(by_session["streamsWithoutUnit"], 0);
    let width = |answer: &Value| answer["difference"]["ci95"][1].as_f64().unwrap() - answer["difference"]["ci95"][0].as_f64().unwrap();
    assert!(by_session["a"]["units"].as_u64().unwrap() > 150 && width(&by_session) < width(&by_user), "{} vs {}", by_session["difference"], by_user["difference"]);
}

/// Past its limits a read keeps a uniform sample of whole units: each kept unit with every stream it
/// sent, the same units whatever order the records arrive in, and `sampled` says so. (The limits of
/// a real comparison, 100,000 units and 400,000 values, are these with other numbers.)
#[test]
fn past_its_limits_a_read_keeps_whole_units_the_same_whatever_the_order() {
    let mut rng = Rng(31);
    let alike = Behaviour { tpot: 30.0, stall: 0.05, stop: 0.1 };
    let mut all = sessions("A", 70, alike, &mut rng);
    all.extend(sessions("B", 70, alike, &mut rng));
    let dir = TempDir::new("compare-limits");
    let stores: Vec<SqliteStore> = (0..2).map(|i| SqliteStore::open(&dir.0.join(format!("{i}.db"))).unwrap()).collect();
    for (i, store) in stores.iter().enumerate() {
        let mut order: Vec<&Session> = all.iter().collect();
        if i == 1 {
            order.reverse();
        }
        for s in order {
            let mut env = envelope(s.records.clone());
            env["sessionId"] = json!(s.id);
            store.insert_batch(&validate::envelope(&env, now_ms()).unwrap(), 0).unwrap();
        }
    }
    let slo = Slo::default();
    let read = |store: &SqliteStore, limits: Limits| -> Arms {
        let query = ArmsQuery { from: *T0 as i64, to: (*T0 + 3_600_000.0) as i64, filters: &[], dimension: Dim::Variant, a: "A", b: "B", metric: Metric::TpotMs, slo: &slo, unit: Unit::Session, limits };
        read_arms(store as &dyn Store, &query).unwrap()
    };
    // A unit's figures in a comparable form: its streams and its TPOT values, sorted.
    let figures = |unit: &UnitFigures| {
        let mut values = unit.values.clone();
        values.sort_by(f64::total_cmp);
        (unit.streams, values)
    };
    let sent: Vec<(u64, Vec<f64>)> = all
        .iter()
        .map(|s| {
            let mut values: Vec<f64> = s.records.iter().filter_map(|r| r["tpotMs"].as_f64()).collect();
            values.sort_by(f64::total_cmp);
            (s.records.len() as u64, values)
        })
        .collect();
    let everything = read(&stores[0], Limits::COMPARE);
    assert_eq!((everything.a.len(), everything.b.len(), everything.sampled), (70, 70, false));
    for limits in [Limits { units: 50, values: usize::MAX }, Limits { units: usize::MAX, values: 300 }] {
        let [first, second] = [read(&stores[0], limits), read(&stores[1], limits)];
        let kept = |arms: &Arms| {
            let mut all: Vec<_> = arms.a.iter().chain(&arms.b).map(figures).collect();
            all.sort_by(|x, y| x.partial_cmp(y).unwrap());
            all
        };
        let kept_units = kept(&first);
        assert!(first.sampled && second.sampled, "{limits:?}: sampled");
        assert_eq!(kept_units, kept(&second), "{limits:?}: the same units whatever the order");
        let values: usize = kept_units.iter().map(|(_, v)| v.len()).sum();
        assert!(kept_units.len() <= limits.units && values <= limits.values, "{limits:?}: {} units, {values} values kept", kept_units.len());
        assert!(kept_units.len() >= 10 && !first.a.is_empty() && !first.b.is_empty(), "{limits:?}: a sample of both arms");
        for unit in &kept_units {
            assert!(sent.contains(unit), "{limits:?}: a unit kept whole, with all its streams: {unit:?}");
        }
    }
}

#[test]
fn no_difference_too_few_sessions_an_empty_arm_and_a_mismatch_are_said_so() {
    let server = Server::start(&[]);
    let mut rng = Rng(11);
    let alike = Behaviour { tpot: 30.0, stall: 0.05, stop: 0.1 };
    let mut all = sessions("A", 260, alike, &mut rng);
    all.extend(sessions("B", 250, alike, &mut rng));
    all.extend(sessions("C", 12, alike, &mut rng));
    all.extend(sessions("D", 14, alike, &mut rng));
    all.extend(mixed(3, ("A", alike), ("B", alike), &mut rng));
    ingest(&server, &all);
    let ask = |query: &str| server.get(&format!("/api/compare?{query}&{}", window())).json();

    // Alike arms, with a split and an mde of the query's own.
    let same = ask("a=A&b=B&mde=0.15&split=50:49");
    let want = reference(&all, "A", "B", [50.0, 49.0], 0.15);
    check(&same, &want, [50.0, 49.0], false);
    assert!(want["sequential"]["pValue"].as_f64().unwrap() > 0.05, "the same behaviour: {}", want["sequential"]);
    assert_eq!((&same["sequential"]["decision"], &same["sequential"]["significant"], &same["srm"]["mismatch"]), (&json!("noDifference"), &json!(false), &json!(false)));
    let widest = same["sequential"]["noDifferenceLargerThan"].as_f64().unwrap();
    assert!(widest <= 0.15, "within the mde: {widest}");
    assert_eq!(same["sequential"]["status"], format!("no difference larger than {}%", (widest * 100.0).ceil()));
    assert!(same["verdict"].as_str().unwrap().starts_with("No difference in TPOT larger than"), "{}", same["verdict"]);

    // By user, where no page gave the meter a unit: too few users, and the verdict says how to give one.
    let by_user = ask("a=A&b=B&unit=user");
    let streams = all.iter().flat_map(|s| &s.records).filter(|r| r["variant"] == "A" || r["variant"] == "B").count();
    assert_eq!((&by_user["a"]["units"], &by_user["b"]["units"], &by_user["streamsWithoutUnit"]), (&json!(0), &json!(0), &json!(streams)));
    let verdict = by_user["verdict"].as_str().unwrap();
    assert!(verdict.starts_with("Too few users to judge") && verdict.contains("createMeter({ experimentUnit })"), "{verdict}");

    let small = ask("a=C&b=D");
    check(&small, &reference(&all, "C", "D", [1.0, 1.0], 0.1), [1.0, 1.0], false);
    assert!(small["verdict"].as_str().unwrap().starts_with("Too few sessions to judge"), "{}", small["verdict"]);
    assert_eq!((&small["sequential"]["decision"], &small["sequential"]["status"], &small["sequential"]["significant"]), (&json!("keepCollecting"), &json!("keep collecting"), &json!(false)));

    // An arm with no unit (a misspelt or unstarted one): too few to judge, not a mismatch.
    let empty = ask("a=A&b=nobody");
    check(&empty, &reference(&all, "A", "nobody", [1.0, 1.0], 0.1), [1.0, 1.0], false);
    assert_eq!((&empty["b"]["units"], &empty["b"]["mean"], &empty["difference"]["pValue"]), (&json!(0), &Value::Null, &Value::Null));
    assert_eq!((&empty["srm"]["mismatch"], &empty["sequential"]["decision"]), (&json!(false), &json!("keepCollecting")));
    let verdict = empty["verdict"].as_str().unwrap();
    assert!(verdict.starts_with(&format!("Too few sessions to judge: variant \"A\" has {} and \"nobody\" has 0", empty["a"]["units"])), "{verdict}");

    // A fair split judged against an expected 30:70.
    let skewed = ask("a=A&b=B&split=30:70");
    check(&skewed, &reference(&all, "A", "B", [30.0, 70.0], 0.1), [30.0, 70.0], false);
    assert_eq!((&skewed["srm"]["mismatch"], &skewed["sequential"]["decision"], &skewed["sequential"]["status"]), (&json!(true), &json!("sampleRatioMismatch"), &json!("sample ratio mismatch")));
    assert!(skewed["verdict"].as_str().unwrap().starts_with("Sample ratio mismatch: 260 sessions in \"A\" and 250 in \"B\", where 30:70 was expected"), "{}", skewed["verdict"]);

    for (query, field) in [
        ("a=A", "b"),
        ("b=B", "a"),
        ("a=A&b=A", "b"),
        ("a=A&b=B&metric=speed", "metric"),
        ("a=A&b=B&variant=A", "variant"),
        ("a=A&b=B&dimension=colour", "dimension"),
        ("a=A&b=B&unit=page", "unit"),
        ("a=A&b=B&split=50", "split"),
        ("a=A&b=B&split=0:1", "split"),
        ("a=A&b=B&mde=0", "mde"),
        ("a=A&b=B&mde=11", "mde"),
    ] {
        let resp = server.get(&format!("/api/compare?{query}"));
        assert_eq!((resp.status, resp.json()["field"].clone()), (400, json!(field)), "{query}");
    }
}
