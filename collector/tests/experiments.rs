//! The simulation proof of issue 36 ("A/B tests you can trust"): `compare` judged on simulated
//! experiments whose truth is known, in process against the store (no HTTP).
//!
//! The traffic is what breaks stream-level tests: each session (the unit an experiment assigns to an
//! arm) has a speed of its own, a TPOT (and TTFT) of `base · exp(0.45·z)`, and its 4 to 40 chats
//! scatter around it by `exp(0.15·z)`, so a session's streams move together. Sessions start at
//! random in the first 80 minutes of their population's 2-hour window and chat once a minute: a look
//! before the end sees some of them in part, as a dashboard watched while data arrive does.
//!
//! Each population of sessions runs five experiments at once, as overlapping experiments do: each
//! of the five dimensions (`model`, `scenario`, `variant`, `appVersion`, `connection`) assigns every
//! session to A or B at random, independently of the others, and each is compared on its own
//! (`dimension=model&a=A&b=B`). Each is a complete experiment of its own; sharing sessions five ways
//! keeps the ingest, half of this suite's time in a debug build, at a fifth.
//! - A/A (no effect; 200 experiments of 300 sessions): the sequential decision names a winner in at
//!   most 7% of them, at one look and when each is looked at 8 times as the data arrive; the
//!   fixed-horizon test, at one look, in about 5% (held to 10%: the test says why). Today's
//!   stream-level test, on the same data, names one in far more: the data have the clustering that
//!   breaks it, so this suite can fail.
//! - Power: each B 20% faster (50 experiments of 400 sessions): the decision names B in most.
//! - Sample ratio mismatch: 2,000 sessions split 45/55 are flagged and no winner is named; a fair
//!   split, or the same data with `split=45:55`, are not; sessions seen in both arms are left out and
//!   counted.
//! - On ClickHouse (LLM_UX_TEST_CLICKHOUSE set, the second pass of scripts/test.sh): a smaller set
//!   gives the SQLite store's answers; the simulations above ran in the first pass, on SQLite.
//!
//! Seeds are fixed: the figures are the same at every run (`--nocapture` shows them).

mod common;

use common::{backend, envelope, now_ms, record, TempDir};
use llm_ux_collector::api::compare;
use llm_ux_collector::dims::Dim;
use llm_ux_collector::query::stats::Z95;
use llm_ux_collector::store::clickhouse::ClickHouseStore;
use llm_ux_collector::store::sqlite::SqliteStore;
use llm_ux_collector::store::Store;
use llm_ux_collector::validate::{self, Batch};
use serde_json::{json, Value};
use std::ops::RangeInclusive;
use std::sync::LazyLock;
use std::time::Instant;

const BASE_TPOT_MS: f64 = 30.0;
const BASE_TTFT_MS: f64 = 600.0;
/// The standard deviation of the log of a session's speed around the base, and of a stream's around
/// its session's.
const SESSION_SPREAD: f64 = 0.45;
const STREAM_SPREAD: f64 = 0.15;
const MINUTE_MS: i64 = 60_000;
/// Each population's window: sessions start in its first 80 minutes and end within 40 more, so the
/// last look sees every stream.
const SPAN_MS: i64 = 120 * MINUTE_MS;
const STARTS_WITHIN_MS: f64 = 80.0 * MINUTE_MS as f64;
/// Looks at each experiment as its data arrive: `to` = `from` + k·span/8, k = 1..8.
const LOOKS: i64 = 8;
const CHATS: RangeInclusive<usize> = 4..=40;
const SESSIONS: usize = 300;
/// 40 populations of five experiments: 200 A/A experiments.
const AA_POPULATIONS: usize = 40;
/// 10 populations of five: 50 experiments with an effect, of more sessions than the A/A ones: the
/// always-valid decision pays for looks at will with a wider interval, and at 300 sessions names the
/// faster arm in about half of them (48% with these seeds), at 400 in most.
const POWER_POPULATIONS: usize = 10;
const POWER_SESSIONS: usize = 400;
/// On ClickHouse: 20 A/A experiments given to both stores (and 5 with an effect).
const CLICKHOUSE_POPULATIONS: usize = 4;
/// The most A/A experiments a test at α = 0.05 may call: 5% and room for the simulation's own error
/// (±1.5% at 200 experiments).
const MAX_FALSE_WINNERS: f64 = 7.0;

/// The first population's window starts 25 days ago (a whole day); the others follow, 2 hours apart,
/// within the 30 days a record may be old.
static FIRST_WINDOW: LazyLock<i64> = LazyLock::new(|| {
    const DAY_MS: i64 = 86_400_000;
    (now_ms() - 25 * DAY_MS).div_euclid(DAY_MS) * DAY_MS
});

/// SplitMix64 (Steele, Lea and Flood, 2014), Box-Muller for normals: the same draws on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform on [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        let (u1, u2) = (1.0 - self.unit(), self.unit());
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    fn between(&mut self, range: &RangeInclusive<usize>) -> usize {
        range.start() + (self.unit() * (range.end() - range.start() + 1) as f64) as usize
    }
}

/// One simulated population of sessions.
struct Plan {
    /// What its session ids start with.
    name: String,
    /// The start of its window `[from, from + SPAN_MS)`, epoch ms.
    from: i64,
    /// Its sessions, by how their `variant` is set (every other dimension is drawn).
    sessions: Vec<Variant>,
    chats: RangeInclusive<usize>,
    /// A session's TPOT over its draw, per dimension in which it is in B: 1 without an effect.
    b_tpot_ratio: f64,
}

/// How a session's `variant` is set.
#[derive(Clone, Copy, PartialEq)]
enum Variant {
    /// A or B at random, as every other dimension.
    Drawn,
    Set(&'static str),
    /// Both: its chats alternate (an assignment that changed mid-session).
    Both,
}

impl Plan {
    /// Population `slot` of a store: its window is the slot-th after [`FIRST_WINDOW`].
    fn new(name: String, slot: usize, sessions: Vec<Variant>, b_tpot_ratio: f64) -> Plan {
        Plan { name, from: *FIRST_WINDOW + slot as i64 * SPAN_MS, sessions, chats: CHATS, b_tpot_ratio }
    }

    fn aa(slot: usize) -> Plan {
        Plan::new(format!("aa-{slot}"), slot, vec![Variant::Drawn; SESSIONS], 1.0)
    }

    /// Each B 20% faster.
    fn faster_b(slot: usize) -> Plan {
        Plan::new(format!("power-{slot}"), slot, vec![Variant::Drawn; POWER_SESSIONS], 0.8)
    }

    /// The seed of its draws: its name's FNV-1a hash, so that no two populations draw alike.
    fn seed(&self) -> u64 {
        self.name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
    }
}

struct Chat {
    started_at: i64,
    /// The arm in each dimension, in [`Dim::ALL`] order.
    arms: [&'static str; 5],
    tpot_ms: f64,
    ttft_ms: f64,
}

struct Session {
    id: String,
    chats: Vec<Chat>,
}

fn simulate(plan: &Plan) -> Vec<Session> {
    let mut rng = Rng(plan.seed());
    let variant_at = Dim::Variant.index();
    plan.sessions
        .iter()
        .enumerate()
        .map(|(i, &variant)| {
            let mut arms = Dim::ALL.map(|_| if rng.unit() < 0.5 { "A" } else { "B" });
            if let Variant::Set(arm) = variant {
                arms[variant_at] = arm;
            }
            let effect = plan.b_tpot_ratio.powi(arms.iter().filter(|arm| **arm == "B").count() as i32);
            let tpot = BASE_TPOT_MS * effect * (SESSION_SPREAD * rng.normal()).exp();
            let ttft = BASE_TTFT_MS * (SESSION_SPREAD * rng.normal()).exp();
            let start = plan.from + (rng.unit() * STARTS_WITHIN_MS) as i64;
            // A session in both arms has two chats at least.
            let chats = (0..rng.between(&plan.chats).max(if variant == Variant::Both { 2 } else { 1 }))
                .map(|c| {
                    let mut arms = arms;
                    if variant == Variant::Both {
                        arms[variant_at] = ["A", "B"][c % 2];
                    }
                    Chat { started_at: start + c as i64 * MINUTE_MS, arms, tpot_ms: tpot * (STREAM_SPREAD * rng.normal()).exp(), ttft_ms: ttft * (STREAM_SPREAD * rng.normal()).exp() }
                })
                .collect();
            Session { id: format!("{}-s{i}", plan.name), chats }
        })
        .collect()
}

/// A stream record with what the statistics do not read left out or null: smaller rows, a cheaper
/// ingest.
fn template() -> Value {
    let mut template = record("template");
    let fields = template.as_object_mut().unwrap();
    for optional in ["cadence", "clockMs"] {
        fields.remove(optional);
    }
    for unread in ["url", "ttfbMs", "tpotArrivalMs", "tokensPerSecond", "gaps", "arrivalGaps", "jitterMs", "stalls", "renderDelay", "durationMs", "rttMs", "deviceMemoryGb", "cores"] {
        fields[unread] = Value::Null;
    }
    template
}

/// One batch per session (the envelope's `sessionId` is the unit), validated as the ingest does.
fn batches(sessions: &[Session]) -> Vec<Batch> {
    let template = template();
    let now = now_ms();
    sessions
        .iter()
        .map(|session| {
            let records = session
                .chats
                .iter()
                .enumerate()
                .map(|(c, chat)| {
                    let mut r = template.clone();
                    r["id"] = json!(format!("{}-c{c}", session.id));
                    r["startedAt"] = json!(chat.started_at);
                    for (dim, arm) in Dim::ALL.iter().zip(chat.arms) {
                        r[dim.name()] = json!(arm);
                    }
                    r["ttftMs"] = json!(chat.ttft_ms);
                    r["ttfoMs"] = json!(chat.ttft_ms);
                    r["tpotMs"] = json!(chat.tpot_ms);
                    r
                })
                .collect();
            // The records moved in after: `envelope` would copy them value by value.
            let mut env = envelope(Vec::new());
            env["records"] = Value::Array(records);
            env["sessionId"] = json!(session.id);
            env["pageId"] = json!(session.id);
            env["batchId"] = json!(session.id);
            env["sentAt"] = json!(session.chats.last().unwrap().started_at);
            validate::envelope(&env, now).unwrap_or_else(|e| panic!("session {}: {e:?}", session.id))
        })
        .collect()
}

/// Inserts `batches` from `threads` threads: the ClickHouse store gathers batches that wait at once
/// into one insert, as under load; SQLite takes them one at a time anyway.
fn insert(store: &dyn Store, batches: &[Batch], threads: usize) {
    std::thread::scope(|scope| {
        for t in 0..threads {
            scope.spawn(move || {
                for batch in batches.iter().skip(t).step_by(threads) {
                    store.insert_batch(batch, now_ms()).unwrap();
                }
            });
        }
    });
}

fn simulate_into(store: &dyn Store, plan: &Plan) -> Vec<Session> {
    let sessions = simulate(plan);
    insert(store, &batches(&sessions), 1);
    sessions
}

/// `work(0..n)` spread over the machine's cores, in order: populations are independent, and the
/// store reads side by side.
fn on_every_core<T: Send>(n: usize, work: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let workers = std::thread::available_parallelism().map_or(2, |cores| cores.get()).min(n);
    let work = &work;
    let mut done: Vec<(usize, T)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers).map(|w| scope.spawn(move || (w..n).step_by(workers).map(|i| (i, work(i))).collect::<Vec<_>>())).collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, result)| result).collect()
}

/// `GET /api/compare` of A against B in `dim` on `metric` over the plan's window until `to`, as the
/// handler computes it.
fn judge(store: &dyn Store, plan: &Plan, dim: Dim, metric: &str, to: i64, extra: &str) -> Value {
    let query = format!("dimension={}&a=A&b=B&metric={metric}&from={}&to={to}{extra}", dim.name(), plan.from);
    let q = compare::parse(Some(&query), to).unwrap_or_else(|e| panic!("{query}: {e:?}"));
    compare::compare(store, &q).unwrap()
}

/// The answers at each of the [`LOOKS`], the last over the whole window.
fn looks(store: &dyn Store, plan: &Plan, dim: Dim, metric: &str) -> Vec<Value> {
    (1..=LOOKS).map(|k| judge(store, plan, dim, metric, plan.from + k * SPAN_MS / LOOKS, "")).collect()
}

/// Whether the default decision names a winner.
fn decided(answer: &Value) -> bool {
    answer["sequential"]["significant"] == true
}

/// Whether the fixed-horizon test calls the difference significant.
fn fixed_horizon_significant(answer: &Value) -> bool {
    let p = answer["difference"]["pValue"].as_f64();
    assert_eq!(answer["difference"]["significant"] == true, p.is_some_and(|p| p < 0.05), "significant is p < 0.05 once 30 units per arm are in: {answer}");
    answer["difference"]["significant"] == true
}

/// Today's stream-level test: streams taken as independent samples, a two-sample z-test of the mean
/// TPOT with Welch's standard error. Significant at 5%?
fn stream_level_significant(sessions: &[Session], dim: Dim) -> bool {
    // The arm's mean over streams, and that mean's variance as if its streams were independent.
    let moments = |arm: &str| {
        let values: Vec<f64> = sessions.iter().flat_map(|s| &s.chats).filter(|c| c.arms[dim.index()] == arm).map(|c| c.tpot_ms).collect();
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        (mean, values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0) / n)
    };
    let ((mean_a, var_a), (mean_b, var_b)) = (moments("A"), moments("B"));
    ((mean_b - mean_a) / (var_a + var_b).sqrt()).abs() > Z95
}

fn percent(count: usize, of: usize) -> f64 {
    (count * 100) as f64 / of as f64
}

/// Skips a SQLite-only simulation on the ClickHouse pass: it ran on the first pass, and
/// `clickhouse_gives_the_sqlite_answers` checks the ClickHouse store against SQLite.
fn on_clickhouse_pass(test: &str) -> bool {
    let skip = backend::is_clickhouse();
    if skip {
        eprintln!("{test}: skipped on the ClickHouse pass (a SQLite simulation; clickhouse_gives_the_sqlite_answers covers that store)");
    }
    skip
}

/// What one A/A experiment's answers say: does it name a winner?
struct AaCalls {
    at_the_end: bool,
    at_any_look: bool,
    fixed_horizon: bool,
    stream_level: bool,
    ttft_at_the_end: bool,
    ttft_fixed_horizon: bool,
}

#[test]
fn aa_experiments_name_a_winner_at_most_7_percent_of_the_time() {
    if on_clickhouse_pass("aa_experiments_name_a_winner_at_most_7_percent_of_the_time") {
        return;
    }
    let started = Instant::now();
    let dir = TempDir::new("experiments-aa");
    let store = SqliteStore::open(&dir.0.join("aa.db")).unwrap();
    let calls: Vec<AaCalls> = on_every_core(AA_POPULATIONS, |slot| {
        let plan = Plan::aa(slot);
        let sessions = simulate_into(&store, &plan);
        Dim::ALL.map(|dim| {
            let tpot = looks(&store, &plan, dim, "tpotMs");
            let last = &tpot[tpot.len() - 1];
            // Every session is in at the last look, none in both arms: what the rates are of.
            assert_eq!(last["a"]["units"].as_u64().unwrap() + last["b"]["units"].as_u64().unwrap(), SESSIONS as u64, "{} {}: {last}", plan.name, dim.name());
            assert_eq!((&last["mixedUnits"], &last["sampled"]), (&json!(0), &json!(false)), "{} {}: {last}", plan.name, dim.name());
            let ttft = judge(&store, &plan, dim, "ttftMs", plan.from + SPAN_MS, "");
            AaCalls {
                at_the_end: decided(last),
                at_any_look: tpot.iter().any(decided),
                fixed_horizon: fixed_horizon_significant(last),
                stream_level: stream_level_significant(&sessions, dim),
                ttft_at_the_end: decided(&ttft),
                ttft_fixed_horizon: fixed_horizon_significant(&ttft),
            }
        })
    })
    .into_iter()
    .flatten()
    .collect();
    let rate = |call: fn(&AaCalls) -> bool| percent(calls.iter().filter(|c| call(c)).count(), calls.len());
    let (at_the_end, at_any_look, fixed_horizon, stream_level) = (rate(|c| c.at_the_end), rate(|c| c.at_any_look), rate(|c| c.fixed_horizon), rate(|c| c.stream_level));
    let (ttft_at_the_end, ttft_fixed_horizon) = (rate(|c| c.ttft_at_the_end), rate(|c| c.ttft_fixed_horizon));
    eprintln!(
        "A/A, {} experiments of {SESSIONS} sessions, share naming a winner: TPOT sequential {at_the_end:.1}% at one look, {at_any_look:.1}% at any of {LOOKS} looks, fixed-horizon {fixed_horizon:.1}% at one look, \
         stream-level z-test {stream_level:.1}%; TTFT sequential {ttft_at_the_end:.1}%, fixed-horizon {ttft_fixed_horizon:.1}% at one look ({:.0} s)",
        calls.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(at_the_end <= MAX_FALSE_WINNERS, "the sequential decision names a winner in {at_the_end:.1}% of A/A experiments at one look");
    assert!(at_any_look <= MAX_FALSE_WINNERS, "the sequential decision names a winner in {at_any_look:.1}% of A/A experiments looked at {LOOKS} times");
    assert!(ttft_at_the_end <= MAX_FALSE_WINNERS, "the sequential decision on TTFT names a winner in {ttft_at_the_end:.1}% of A/A experiments");
    // The fixed-horizon test (not the decision) is held to a looser bound: over 200 experiments a test
    // of exactly 5% reaches 7.5%, as TPOT's does with these seeds, in one set in thirteen (20,000
    // independent experiments of this model, outside the suite, give 5.1%). 10% still tells a
    // variance over units from one over streams.
    for (metric, rate) in [("TPOT", fixed_horizon), ("TTFT", ttft_fixed_horizon)] {
        assert!(rate <= 10.0, "the fixed-horizon test on {metric} is significant in {rate:.1}% of A/A experiments at one look");
    }
    // The issue measured 67% for the stream-level test: far above 7% shows that the sessions' streams
    // move together here as in real traffic.
    assert!(stream_level >= 40.0, "the stream-level test is significant in only {stream_level:.1}% of A/A experiments: the simulation lacks the clustering it is meant to have");
}

#[test]
fn a_20_percent_faster_arm_is_named_the_winner() {
    if on_clickhouse_pass("a_20_percent_faster_arm_is_named_the_winner") {
        return;
    }
    let started = Instant::now();
    let dir = TempDir::new("experiments-power");
    let store = SqliteStore::open(&dir.0.join("power.db")).unwrap();
    let judged: Vec<(String, f64)> = on_every_core(POWER_POPULATIONS, |slot| {
        let plan = Plan::faster_b(slot);
        simulate_into(&store, &plan);
        Dim::ALL.map(|dim| {
            let answer = judge(&store, &plan, dim, "tpotMs", plan.from + SPAN_MS, "&mde=0.2");
            let power = &answer["power"];
            let finite_positive = |v: &Value| v.as_f64().is_some_and(|v| v.is_finite() && v > 0.0);
            assert!(finite_positive(&power["unitsPerArm"]) && finite_positive(&power["detectableNow"]), "{} {}: power {power}", plan.name, dim.name());
            (answer["sequential"]["decision"].as_str().unwrap().to_owned(), power["sequentialUnitsPerArm"].as_f64().unwrap())
        })
    })
    .into_iter()
    .flatten()
    .collect();
    let decisions: Vec<String> = judged.iter().map(|(d, _)| d.clone()).collect();
    // The planning figure for the decision, against what these experiments found: about 80% power
    // at POWER_SESSIONS / 2 sessions per arm.
    let mut planned: Vec<f64> = judged.iter().map(|&(_, n)| n).collect();
    planned.sort_by(f64::total_cmp);
    let planned = planned[planned.len() / 2];
    let share = |decision: &str| percent(decisions.iter().filter(|d| *d == decision).count(), decisions.len());
    let (right, wrong) = (share("bBetter"), share("aBetter"));
    eprintln!(
        "B 20% faster, {} experiments of {POWER_SESSIONS} sessions: the sequential decision names B in {right:.1}%, A in {wrong:.1}% ({:.0} s)",
        decisions.len(),
        started.elapsed().as_secs_f64()
    );
    eprintln!("the answer's plan for a 20% difference: {planned} sessions per arm for the decision (median over the experiments)");
    assert!(right >= 50.0, "the sequential decision names the faster arm in {right:.1}% of experiments");
    let per_arm = (POWER_SESSIONS / 2) as f64;
    assert!((0.6 * per_arm..=1.6 * per_arm).contains(&planned), "planned {planned} sessions per arm where {per_arm} gave {right:.1}% power");
    assert_eq!(wrong, 0.0, "the sequential decision names the slower arm in {wrong:.1}% of experiments");
}

/// From `slot` on: 2,000 sessions split 45/55 in `variant`, and 2,000 split evenly with a few in both
/// arms. Sample-ratio checks count sessions, not streams, so these have 1 to 4 chats each: fewer
/// rows, the same check.
fn srm_plans(slot: usize) -> [Plan; 2] {
    let split = |a, b, both| [(Variant::Set("A"), a), (Variant::Set("B"), b), (Variant::Both, both)].into_iter().flat_map(|(v, n)| std::iter::repeat_n(v, n)).collect();
    let skewed = Plan { chats: 1..=4, ..Plan::new("srm-45-55".into(), slot, split(900, 1100, 0), 1.0) };
    let even = Plan { chats: 1..=4, ..Plan::new("srm-even".into(), slot + 1, split(1000, 1000, 6), 1.0) };
    [skewed, even]
}

/// The answers on the [`srm_plans`] from `slot` (in `store`), checked: the skewed split, the same
/// with `split=45:55`, the even one.
fn check_srm(store: &dyn Store, slot: usize) -> [Value; 3] {
    let [skewed, even] = srm_plans(slot);
    let judged = |plan: &Plan, extra| judge(store, plan, Dim::Variant, "tpotMs", plan.from + SPAN_MS, extra);
    let (mismatched, expected, fair) = (judged(&skewed, ""), judged(&skewed, "&split=45:55"), judged(&even, ""));
    eprintln!("sample ratio p-values: 900/1,100 sessions {} against 50:50, {} against 45:55; 1,000/1,000 sessions {}", mismatched["srm"]["pValue"], expected["srm"]["pValue"], fair["srm"]["pValue"]);
    assert_eq!(mismatched["srm"]["observed"], json!([900, 1100]), "{mismatched}");
    assert_eq!(mismatched["srm"]["mismatch"], true, "{mismatched}");
    assert_eq!((&mismatched["sequential"]["status"], &mismatched["sequential"]["decision"]), (&json!("sample ratio mismatch"), &json!("sampleRatioMismatch")), "{mismatched}");
    assert_eq!(mismatched["sequential"]["significant"], false, "{mismatched}");
    assert!(mismatched["verdict"].as_str().unwrap().starts_with("Sample ratio mismatch"), "{mismatched}");
    assert_eq!(expected["srm"]["mismatch"], false, "with split=45:55: {expected}");
    assert_ne!(expected["sequential"]["status"], "sample ratio mismatch", "{expected}");
    assert_eq!((&fair["srm"]["observed"], &fair["mixedUnits"]), (&json!([1000, 1000]), &json!(6)), "the sessions in both arms are left out and counted: {fair}");
    assert_eq!(fair["srm"]["mismatch"], false, "{fair}");
    assert!(!fair["verdict"].as_str().unwrap().starts_with("Sample ratio mismatch"), "{fair}");
    [mismatched, expected, fair]
}

#[test]
fn a_45_55_split_is_a_sample_ratio_mismatch() {
    if on_clickhouse_pass("a_45_55_split_is_a_sample_ratio_mismatch") {
        return;
    }
    let dir = TempDir::new("experiments-srm");
    let store = SqliteStore::open(&dir.0.join("srm.db")).unwrap();
    for plan in srm_plans(0) {
        simulate_into(&store, &plan);
    }
    check_srm(&store, 0);
}

/// `clickhouse` is `sqlite`'s answer: the same JSON, numbers within 1e-9 relative (the stores hand
/// over units in different orders, so sums are added in different orders).
fn assert_same(sqlite: &Value, clickhouse: &Value, at: &str) {
    match (sqlite, clickhouse) {
        (Value::Number(s), Value::Number(c)) => {
            let (s, c) = (s.as_f64().unwrap(), c.as_f64().unwrap());
            assert!((s - c).abs() <= 1e-9 * s.abs().max(c.abs()), "{at}: SQLite {s}, ClickHouse {c}");
        }
        (Value::Object(s), Value::Object(c)) => {
            assert_eq!(s.keys().collect::<Vec<_>>(), c.keys().collect::<Vec<_>>(), "{at}");
            for (key, value) in s {
                assert_same(value, &c[key], &format!("{at}.{key}"));
            }
        }
        (Value::Array(s), Value::Array(c)) => {
            assert_eq!(s.len(), c.len(), "{at}: SQLite {sqlite}, ClickHouse {clickhouse}");
            for (i, (s, c)) in s.iter().zip(c).enumerate() {
                assert_same(s, c, &format!("{at}[{i}]"));
            }
        }
        _ => assert_eq!(sqlite, clickhouse, "{at}"),
    }
}

#[test]
fn clickhouse_gives_the_sqlite_answers() {
    let Some(url) = backend::clickhouse_url() else {
        eprintln!("clickhouse_gives_the_sqlite_answers: skipped: {} is not set (scripts/test.sh starts a ClickHouse and sets it)", backend::ENV);
        return;
    };
    let database = format!("t_experiments_{}", std::process::id());
    backend::clickhouse(&format!("DROP DATABASE IF EXISTS {database}"), None);
    let clickhouse = ClickHouseStore::open(&url, &database).unwrap();
    let dir = TempDir::new("experiments-clickhouse");
    let sqlite = SqliteStore::open(&dir.0.join("same.db")).unwrap();
    // A/A populations and one with an effect, so that some answers name a winner.
    let populations: Vec<Plan> = (0..CLICKHOUSE_POPULATIONS).map(Plan::aa).chain([Plan::faster_b(CLICKHOUSE_POPULATIONS)]).collect();
    let srm_slot = populations.len();
    for plan in populations.iter().chain(&srm_plans(srm_slot)) {
        let batches = batches(&simulate(plan));
        insert(&sqlite, &batches, 1);
        // A writer queue's worth of batches waiting at once: one insert gathers them.
        insert(&clickhouse, &batches, 256);
    }
    let mut decisions = 0;
    for plan in &populations {
        for dim in Dim::ALL {
            let (from_sqlite, from_clickhouse) = (looks(&sqlite, plan, dim, "tpotMs"), looks(&clickhouse, plan, dim, "tpotMs"));
            for (k, (s, c)) in from_sqlite.iter().zip(&from_clickhouse).enumerate() {
                assert_same(s, c, &format!("{} {} look {}", plan.name, dim.name(), k + 1));
            }
            decisions += from_clickhouse.iter().filter(|answer| decided(answer)).count();
            let to = plan.from + SPAN_MS;
            assert_same(&judge(&sqlite, plan, dim, "ttftMs", to, ""), &judge(&clickhouse, plan, dim, "ttftMs", to, ""), &format!("{} {} TTFT", plan.name, dim.name()));
        }
    }
    assert!(decisions > 0, "no answer compared names a winner");
    eprintln!("ClickHouse: {} experiments at {LOOKS} looks give the SQLite answers ({decisions} of the looks name a winner)", populations.len() * Dim::ALL.len());
    for (s, c) in check_srm(&sqlite, srm_slot).iter().zip(&check_srm(&clickhouse, srm_slot)) {
        assert_same(s, c, "sample ratio");
    }
}
