//! The ClickHouse store through the `Store` trait, on the ClickHouse of `LLM_UX_TEST_CLICKHOUSE`
//! (scripts/test.sh starts one; without it each test says it is skipped, and passes):
//! - the same batches give the SQLite store's answers (rows, rows by session, rollups at every grain, in time
//!   order, restricted to groups or not, and the busiest groups), with hostile dimension values, nulls
//!   beside '', duplicates and records of definition 2, and store the same value in every column;
//!   concurrent senders store each record once;
//! - two stores on one database (two collectors) given the same batches at the same time count each
//!   record once; copies left unmarked (a collector killed between insert and lookup) are marked by
//!   the retry's write or by the next store to open;
//! - a failed insert stores nothing and says so; a database of the earlier single-writer design is
//!   refused with a clear error; a records table made before a column was added gets it, unless
//!   the store did not make it (then it is refused, naming the column).

mod common;

use llm_ux_collector::dims::{Dim, GroupKey, Metric, Unit};
use common::{backend, envelope, now_ms, recent, record, TempDir};
use llm_ux_collector::rollup::{Grain, Rollup, RollupKey, Row, Slo};
use llm_ux_collector::store::clickhouse::ClickHouseStore;
use llm_ux_collector::store::sqlite::SqliteStore;
use llm_ux_collector::store::{GroupSet, Inserted, JointNeed, Needs, Selection, Store};
use llm_ux_collector::store::stream::{Order, Sort, Stream};
use llm_ux_collector::validate::{self, Batch};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::LazyLock;

/// 2023-11-15 00:00 UTC: the records span midnight, so two day partitions and two day rollups.
static T0: LazyLock<f64> = LazyLock::new(|| recent(1_700_006_400_000.0));
const HOUR: f64 = 3_600_000.0;

/// Dimension values that break naive SQL or text formats (all within the schema's 256 characters).
const HOSTILE: &[&str] = &[
    "it's",
    "back\\slash\\",
    "line\nbreak\r\n",
    "tab\there",
    "<script>alert('x')</script>",
    "emoji 🚀🔥 ñ",
    "",
    "x'; DROP TABLE records; --",
    "bell\u{7} nul\u{0} del\u{7f} nel\u{85}",
    "quote\"double` back`",
];

/// A fresh database on the test ClickHouse, as (url, name); `None`, with a note, without one.
fn fresh_database(test: &str) -> Option<(String, String)> {
    let Some(url) = backend::clickhouse_url() else {
        eprintln!("{test}: skipped: {} is not set (scripts/test.sh starts a ClickHouse and sets it)", backend::ENV);
        return None;
    };
    static N: AtomicUsize = AtomicUsize::new(0);
    let name = format!("t_store_{}_{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed));
    backend::clickhouse(&format!("DROP DATABASE IF EXISTS {name}"), None);
    Some((url, name))
}

/// 400 records over 4 hours around T0 across hostile, empty and null dimension values.
fn dataset() -> Vec<Value> {
    let mut models: Vec<Value> = HOSTILE.iter().map(|s| json!(s)).collect();
    models.extend([json!("ñ".repeat(256)), Value::Null]);
    (0..400)
        .map(|i| {
            let mut r = record(&format!("ch-{i}"));
            r["model"] = models[i % models.len()].clone();
            r["scenario"] = [json!("chat"), Value::Null, json!("")][i % 3].clone();
            r["variant"] = json!(HOSTILE[(i / 3) % HOSTILE.len()]);
            r["connection"] = [json!("4g"), Value::Null][i % 2].clone();
            r["startedAt"] = json!(*T0 - 2.0 * HOUR + i as f64 * 36_011.3);
            r["ttftMs"] = if i % 7 == 0 { Value::Null } else { json!(100.0 + (i * 37 % 1900) as f64 + 0.125) };
            r["tpotMs"] = json!(5.0 + (i % 50) as f64 / 4.0);
            r["outputTokens"] = json!(i * 13 % 900);
            r["stalls"] = if i % 5 == 0 { Value::Null } else { json!({ "count": i % 3, "count1000": 0, "longestMs": 10, "totalMs": (i % 3) as f64 * 250.5 }) };
            r["status"] = json!(["ok", "aborted", "ok", "incomplete", "error"][i % 5]);
            // Bunched (a gap p50 of 0), not, and unknown (too few events).
            r["arrivalGaps"]["p50"] = json!([0.0, 12.5, 0.0, 30.0][i % 4]);
            r["outputEvents"] = json!(if i % 9 == 0 { 4 } else { 118 });
            if i % 11 == 0 {
                r["ttftArrivalMs"] = Value::Null;
            }
            if i % 17 == 0 {
                r["def"] = json!(2);
            }
            r
        })
        .collect()
}

/// The dataset in batches of 60, each with a record repeated within it and (after the first) one
/// stored by an earlier batch.
fn batches() -> Vec<Batch> {
    let records = dataset();
    records
        .chunks(60)
        .enumerate()
        .map(|(n, chunk)| {
            let mut list = chunk.to_vec();
            list.push(chunk[0].clone());
            if n > 0 {
                list.push(records[0].clone());
            }
            let mut env = envelope(list);
            env["batchId"] = json!(format!("b-{n}"));
            env["sessionId"] = json!(format!("s-{}", n % 3));
            validate::envelope(&env, now_ms()).unwrap()
        })
        .collect()
}

fn insert_both(ch: &dyn Store, sqlite: &dyn Store, batch: &Batch) {
    let expected = sqlite.insert_batch(batch, 1_700_000_000_000).unwrap();
    assert_eq!(ch.insert_batch(batch, 1_700_000_000_000).unwrap(), expected, "batch {}", batch.batch_id);
}

/// The rows `store` reads, checked to come in time order, then sorted by time and dimensions.
fn sorted_rows(store: &dyn Store, from: i64, to: i64, selection: Selection<'_>) -> Vec<Row> {
    let mut rows = Vec::new();
    store.rows(from, to, selection, &mut |r| rows.push(r)).unwrap();
    assert!(rows.windows(2).all(|w| w[0].started_at <= w[1].started_at), "rows in time order");
    rows.sort_by(|a, b| a.started_at.total_cmp(&b.started_at).then_with(|| a.dims.cmp(&b.dims)));
    rows
}

/// The rollups `store` reads, checked to come in bucket order.
fn rollups(store: &dyn Store, grain: Grain, from: i64, to: i64, selection: Selection<'_>) -> Vec<(RollupKey, Rollup)> {
    let mut out = Vec::new();
    store.rollups(grain, from, to, selection, Needs::ALL, &mut |k, r| out.push((k, r))).unwrap();
    assert!(out.windows(2).all(|w| w[0].0.bucket <= w[1].0.bucket), "rollups in bucket order");
    out
}

/// Reads that ask for less than [`Needs::ALL`], one per grain in [`assert_same_answers`].
const PARTIAL_NEEDS: [Needs; 3] = [
    Needs { per_bucket: false, metrics: [true; 5], extras: false, joint: JointNeed::GoodFor(Slo { ttft_ms: Some(500.0), tpot_ms: Some(10.0) }) },
    Needs { per_bucket: false, metrics: [false, true, false, false, false], extras: true, joint: JointNeed::Nothing },
    Needs { per_bucket: true, metrics: [false; 5], extras: true, joint: JointNeed::GoodFor(Slo { ttft_ms: None, tpot_ms: Some(12.0) }) },
];

/// The rollups `store` reads with `needs`, merged per dimensions unless `needs` is per bucket, and
/// cut to what `needs` asks for (a store may give more).
fn partial_rollups(store: &dyn Store, grain: Grain, from: i64, to: i64, selection: Selection<'_>, needs: Needs) -> Vec<(RollupKey, Rollup)> {
    let mut merged: BTreeMap<RollupKey, Rollup> = BTreeMap::new();
    store
        .rollups(grain, from, to, selection, needs, &mut |key, rollup| {
            let key = RollupKey { bucket: if needs.per_bucket { key.bucket } else { from }, ..key };
            merged.entry(key).or_default().merge(&rollup);
        })
        .unwrap();
    let cut = |mut rollup: Rollup| {
        for m in Metric::ALL.into_iter().filter(|m| !needs.metrics[m.index()]) {
            rollup.metrics[m.index()] = Default::default();
        }
        match needs.joint {
            JointNeed::Nothing => rollup.joint.clear(),
            JointNeed::GoodFor(slo) => rollup.joint = slo.reduce(&rollup.joint),
            JointNeed::All => {}
        }
        if !needs.extras {
            let Rollup { count, output_tokens, stall_known, stalled, bands, metrics, joint, .. } = rollup;
            rollup = Rollup { count, output_tokens, stall_known, stalled, bands, metrics, joint, ..Rollup::default() };
        }
        rollup
    };
    merged.into_iter().map(|(key, rollup)| (key, cut(rollup))).collect()
}

/// Equal rollups, the sums within rounding: ClickHouse adds the values in another order.
fn assert_same_rollups(mut ch: Vec<(RollupKey, Rollup)>, mut sqlite: Vec<(RollupKey, Rollup)>, context: &str) {
    ch.sort_by(|a, b| a.0.cmp(&b.0));
    sqlite.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(ch.iter().map(|(k, _)| k).collect::<Vec<_>>(), sqlite.iter().map(|(k, _)| k).collect::<Vec<_>>(), "{context}: keys");
    for ((key, mut a), (_, b)) in ch.into_iter().zip(sqlite) {
        for m in Metric::ALL {
            let (x, y) = (a.metric(m).sum, b.metric(m).sum);
            assert!((x - y).abs() <= 1e-9 * y.abs().max(1.0), "{context}: {key:?} {} sum {x} != {y}", m.name());
            a.metrics[m.index()].sum = y;
        }
        assert_eq!(a, b, "{context}: {key:?}");
    }
}

/// Every read of both stores agrees, over windows that cut the data and filters on each hostile value.
fn assert_same_answers(ch: &dyn Store, sqlite: &dyn Store) {
    let t0 = *T0 as i64;
    let windows = [(t0 - 3 * HOUR as i64, t0 + 3 * HOUR as i64), (t0 - 1, t0 + 1), (t0, t0 + HOUR as i64), (t0 - 90 * 60_000, t0 - 89 * 60_000)];
    let mut filter_sets: Vec<Vec<(Dim, Vec<String>)>> = vec![vec![], vec![(Dim::Model, vec!["ñ".repeat(256)])], vec![(Dim::Scenario, vec![String::new()])]];
    filter_sets.extend(HOSTILE.iter().map(|v| vec![(Dim::Model, vec![v.to_string()])]));
    filter_sets.push(vec![(Dim::Variant, HOSTILE[..4].iter().map(|s| s.to_string()).collect()), (Dim::Connection, vec!["4g".into()])]);
    // Groups by model and scenario that tell null from '' and hold hostile values, and a key that
    // matches nothing.
    let keys = group_keys();
    let groups = GroupSet { by: &[Dim::Model, Dim::Scenario], keys: &keys };
    let unit_rows = |store: &dyn Store, from, to, filters| {
        let mut out: Vec<(String, Row)> = Vec::new();
        store.unit_rows(from, to, filters, Unit::Session, &mut |unit, row| out.push((unit, row))).unwrap();
        out.sort_by(|(ua, a), (ub, b)| a.started_at.total_cmp(&b.started_at).then_with(|| a.dims.cmp(&b.dims)).then_with(|| ua.cmp(ub)));
        out
    };
    for (from, to) in windows {
        for filters in &filter_sets {
            let context = format!("[{from}, {to}) {filters:?}");
            for selection in [Selection::filtered(filters), Selection { filters, groups: Some(groups) }] {
                let context = format!("{context} {:?}", selection.groups.is_some());
                assert_eq!(sorted_rows(ch, from, to, selection), sorted_rows(sqlite, from, to, selection), "{context}: rows");
                for (grain, needs) in Grain::ALL.into_iter().zip(PARTIAL_NEEDS) {
                    let context = format!("{context} {grain:?}");
                    assert_same_rollups(rollups(ch, grain, from, to, selection), rollups(sqlite, grain, from, to, selection), &context);
                    let partial = |store| partial_rollups(store, grain, from, to, selection, needs);
                    assert_same_rollups(partial(ch), partial(sqlite), &format!("{context} {needs:?}"));
                }
            }
            assert_eq!(unit_rows(ch, from, to, filters), unit_rows(sqlite, from, to, filters), "{context}: rows by unit");
            for order in STREAM_ORDERS {
                assert_eq!(streams(ch, from, to, filters, &order), streams(sqlite, from, to, filters, &order), "{context}: streams {order:?}");
            }
            for group_by in [&[Dim::Model][..], &[Dim::Connection, Dim::Variant, Dim::Scenario]] {
                for limit in [3, 1000] {
                    let busiest = sqlite.busiest_groups(from, to, group_by, filters, limit).unwrap();
                    assert_eq!(ch.busiest_groups(from, to, group_by, filters, limit).unwrap(), busiest, "{context}: busiest {group_by:?} {limit}");
                }
            }
        }
    }
    // The checks above are not vacuous: each hostile value matched records, and '' never a null.
    let all = (t0 - 3 * HOUR as i64, t0 + 3 * HOUR as i64);
    for v in HOSTILE {
        let filters = [(Dim::Model, vec![v.to_string()])];
        let rows = sorted_rows(ch, all.0, all.1, Selection::filtered(&filters));
        assert!(!rows.is_empty() && rows.iter().all(|r| r.dims[0].as_deref() == Some(*v)), "{v:?}");
    }
    let filters = [(Dim::Scenario, vec![String::new()])];
    let empty = sorted_rows(ch, all.0, all.1, Selection::filtered(&filters));
    assert!(!empty.is_empty() && empty.iter().all(|r| r.dims[1].as_deref() == Some("")));
}

/// Orders of [`Store::streams`] that cut the data, by figures with nulls and ties.
const STREAM_ORDERS: [Order; 3] = [
    Order { sort: Sort::Metric(Metric::TpotMs), descending: true, limit: 7 },
    Order { sort: Sort::Metric(Metric::StallMs), descending: false, limit: 500 },
    Order { sort: Sort::StartedAt, descending: true, limit: 50 },
];

fn streams(store: &dyn Store, from: i64, to: i64, filters: &[(Dim, Vec<String>)], order: &Order) -> Vec<Stream> {
    let mut out = Vec::new();
    store.streams(from, to, filters, order, &mut |s| out.push(s)).unwrap();
    out
}

/// The group keys of [`assert_same_answers`], by model and scenario, hold hostile values and tell
/// null from '': the dataset pairs model HOSTILE[k] with scenario ["chat", null, ""][k % 3], and the
/// null model with "". The last matches nothing.
fn group_keys() -> Vec<GroupKey> {
    vec![
        vec![Some(HOSTILE[1].into()), None],
        vec![Some(HOSTILE[2].into()), Some(String::new())],
        vec![None, Some(String::new())],
        vec![Some(String::new()), Some("chat".into())],
        vec![Some("nobody".into()), None],
    ]
}

/// On [`dataset`]: a group set selects the records of each of its keys and no other, and the
/// busiest groups are ranked by streams, then by key.
fn assert_group_reads_see_the_data(store: &dyn Store) {
    let (from, to) = ((*T0 - 3.0 * HOUR) as i64, (*T0 + 3.0 * HOUR) as i64);
    let keys = group_keys();
    let selected = sorted_rows(store, from, to, Selection { filters: &[], groups: Some(GroupSet { by: &[Dim::Model, Dim::Scenario], keys: &keys }) });
    for key in &keys[..4] {
        assert!(selected.iter().any(|r| [r.dims[0].clone(), r.dims[1].clone()] == key[..]), "{key:?} selected");
    }
    assert!(selected.iter().all(|r| keys.iter().any(|k| [r.dims[0].clone(), r.dims[1].clone()] == k[..])), "only the keys");
    let busiest = store.busiest_groups(from, to, &[Dim::Model], &[], 3).unwrap();
    assert_eq!(busiest.total, 12, "10 hostile models, a long one and null");
    let first_three: Vec<GroupKey> = [1, 0, 2].map(|k| vec![Some(HOSTILE[k].to_owned())]).into();
    assert_eq!(busiest.keys, first_three, "HOSTILE[0..4] tie at 32 streams (the others have 31): the first three by bytes");
}

#[test]
fn answers_as_the_sqlite_store_does() {
    let Some((url, db)) = fresh_database("answers_as_the_sqlite_store_does") else { return };
    let (_dir, sqlite) = reference();
    let ch = ClickHouseStore::open(&url, &db).unwrap();
    for batch in batches() {
        insert_both(&ch, &sqlite, &batch);
    }
    assert_group_reads_see_the_data(&sqlite);
    assert_same_answers(&ch, &sqlite);
    // The same once ClickHouse has merged the states.
    backend::clickhouse("OPTIMIZE TABLE rollup_states FINAL", Some(&db));
    assert_same_answers(&ch, &sqlite);
    // A second store on the same database (a restart) answers the same and keeps deduplicating.
    drop(ch);
    let ch = ClickHouseStore::open(&url, &db).unwrap();
    assert_same_answers(&ch, &sqlite);
    let again = &batches()[2];
    assert_eq!(ch.insert_batch(again, 0).unwrap(), Inserted::of(again.records.len(), Vec::new()));
    assert!(ch.ping().is_ok());
}

#[test]
fn every_column_holds_what_the_sqlite_store_holds() {
    let Some((url, db)) = fresh_database("every_column_holds_what_the_sqlite_store_holds") else { return };
    let dir = TempDir::new("ch-reference");
    let path = dir.0.join("reference.db");
    let sqlite = SqliteStore::open(&path).unwrap();
    let ch = ClickHouseStore::open(&url, &db).unwrap();
    // A distinct value in every field, so two columns swapped cannot go unseen.
    let mut r = record("cols");
    for (n, field) in ["ttfbMs", "ttftMs", "ttftArrivalMs", "ttfoMs", "tpotMs", "tpotArrivalMs", "tokensPerSecond", "jitterMs", "durationMs", "rttMs", "deviceMemoryGb"].iter().enumerate() {
        r[*field] = json!(n as f64 + 0.5);
    }
    r["gaps"] = json!({ "p50": 20.25, "p90": 21.25, "p99": 22.25, "max": 23.25 });
    r["arrivalGaps"] = json!({ "p50": 24.25, "p90": 25.25, "p99": 26.25, "max": 27.25 });
    r["stalls"] = json!({ "count": 28, "count1000": 29, "longestMs": 30.75, "totalMs": 31.75 });
    r["renderDelay"] = json!({ "p50": 32.75, "p90": 33.75 });
    r["outputTokens"] = json!(34);
    r["reasoningTokens"] = json!(35);
    r["outputEvents"] = json!(36);
    r["cores"] = json!(37);
    r["httpStatus"] = json!(201);
    r["hidden"] = json!(true);
    r["finishReason"] = json!(HOSTILE[0]);
    r["clockMs"] = json!(0.02);
    r["cadence"] = json!([[38, 39], [40, 41]]);
    r["url"] = Value::Null;
    let mut env = envelope(vec![r]);
    env["sampleRate"] = json!(0.25);
    env["experimentUnit"] = json!("00112233445566778899aabbccddeeff");
    insert_both(&ch, &sqlite, &validate::envelope(&env, now_ms()).unwrap());
    let text = backend::clickhouse("SELECT * FROM records WHERE id = 'cols' FORMAT JSONEachRow", Some(&db));
    let stored: serde_json::Map<String, Value> = serde_json::from_str(text.trim()).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mut stmt = conn.prepare("SELECT * FROM records WHERE id = 'cols'").unwrap();
    let names: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let values: Vec<rusqlite::types::Value> = stmt.query_row([], |row| (0..names.len()).map(|i| row.get(i)).collect()).unwrap();
    assert!(names.len() >= 50);
    for (name, value) in names.iter().zip(values) {
        use rusqlite::types::Value as Sql;
        let got = stored.get(name).unwrap_or_else(|| panic!("ClickHouse has no column {name}"));
        // ClickHouse writes 64-bit integers in JSON as strings.
        let number = || got.as_f64().or_else(|| got.as_str().and_then(|s| s.parse().ok()));
        match value {
            Sql::Null => assert!(got.is_null(), "{name}: {got}"),
            Sql::Integer(i) => assert_eq!(number(), Some(i as f64), "{name}"),
            Sql::Real(f) => assert_eq!(number(), Some(f), "{name}"),
            Sql::Text(t) => assert_eq!(got.as_str(), Some(t.as_str()), "{name}"),
            Sql::Blob(_) => panic!("{name}: a blob"),
        }
    }
}

/// Rows of `table` in the test database.
fn count(db: &str, table: &str) -> u64 {
    backend::clickhouse(&format!("SELECT count() FROM {table}"), Some(db)).trim().parse().unwrap()
}

/// A SQLite store to check ClickHouse's answers against, in a directory removed when the first
/// value is dropped.
fn reference() -> (TempDir, SqliteStore) {
    let dir = TempDir::new("ch-reference");
    let sqlite = SqliteStore::open(&dir.0.join("reference.db")).unwrap();
    (dir, sqlite)
}

/// The most active parts any partition of `table` holds.
fn most_parts_a_day(db: &str, table: &str) -> u64 {
    backend::clickhouse(&format!("SELECT max(c) FROM (SELECT count() AS c FROM system.parts WHERE database = '{db}' AND table = '{table}' AND active GROUP BY partition)"), None)
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn upkeep_merges_each_closed_day_into_one_part_and_changes_no_answer() {
    let Some((url, db)) = fresh_database("upkeep_merges_each_closed_day_into_one_part_and_changes_no_answer") else { return };
    let (_dir, sqlite) = reference();
    let ch = ClickHouseStore::open(&url, &db).unwrap();
    // No background merge until asked: each insert leaves its own parts (the dataset's days are
    // closed ones, 2 to 3 weeks back).
    let tables = ["rollup_states", "sketch_buckets"];
    for table in tables {
        backend::clickhouse(&format!("SYSTEM STOP MERGES {db}.{table}"), None);
    }
    for batch in batches() {
        insert_both(&ch, &sqlite, &batch);
    }
    for table in tables {
        assert!(most_parts_a_day(&db, table) > 2, "{table}: several parts a day before");
        backend::clickhouse(&format!("SYSTEM START MERGES {db}.{table}"), None);
    }
    ch.upkeep().unwrap();
    for table in tables {
        assert_eq!(most_parts_a_day(&db, table), 1, "{table}: one part a day after");
    }
    assert_same_answers(&ch, &sqlite);
    ch.upkeep().unwrap();
}

#[test]
fn two_stores_given_the_same_batches_at_once_count_each_record_once() {
    let Some((url, db)) = fresh_database("two_stores_given_the_same_batches_at_once_count_each_record_once") else { return };
    let (_dir, sqlite) = reference();
    let (a, b) = (ClickHouseStore::open(&url, &db).unwrap(), ClickHouseStore::open(&url, &db).unwrap());
    let batches = batches();
    // Every batch reaches both collectors at the same moment (a load balancer's retry of a slow one).
    let answers: Vec<(Inserted, Inserted)> = std::thread::scope(|scope| {
        batches
            .iter()
            .map(|batch| {
                let (x, y) = (scope.spawn(|| a.insert_batch(batch, 1).unwrap()), scope.spawn(|| b.insert_batch(batch, 1).unwrap()));
                (x.join().unwrap(), y.join().unwrap())
            })
            .collect()
    });
    for batch in &batches {
        sqlite.insert_batch(batch, 1).unwrap();
    }
    let distinct = dataset().len();
    // Each record accepted by one answer at most (both copies may be answered as duplicates).
    let accepted: usize = answers.iter().map(|(x, y)| x.accepted() + y.accepted()).sum();
    assert!(accepted <= distinct, "{accepted} accepted of {distinct}");
    assert!(count(&db, "records") > distinct as u64, "both inserted copies: {}", count(&db, "records"));
    assert_same_answers(&a, &sqlite);
    assert_same_answers(&b, &sqlite);
    // A retry after a lost answer, to the other collector: a duplicate, counted once.
    assert_eq!(b.insert_batch(&batches[1], 2).unwrap(), Inserted::of(batches[1].records.len(), Vec::new()));
    backend::clickhouse("OPTIMIZE TABLE rollup_states FINAL", Some(&db));
    backend::clickhouse("OPTIMIZE TABLE duplicates FINAL", Some(&db));
    assert_same_answers(&a, &sqlite);
}

#[test]
fn copies_left_unmarked_are_marked_by_the_retry_or_the_next_start() {
    let Some((url, db)) = fresh_database("copies_left_unmarked_are_marked_by_the_retry_or_the_next_start") else { return };
    let (_dir, sqlite) = reference();
    let (a, b) = (ClickHouseStore::open(&url, &db).unwrap(), ClickHouseStore::open(&url, &db).unwrap());
    let batches = &batches()[..3];
    for batch in batches {
        a.insert_batch(batch, 1).unwrap();
        b.insert_batch(batch, 1).unwrap();
        sqlite.insert_batch(batch, 1).unwrap();
    }
    assert_same_answers(&a, &sqlite);
    // What a collector killed between its insert and its lookup leaves: copies nobody marked.
    let forget_marks = || backend::clickhouse("TRUNCATE TABLE duplicates", Some(&db));
    forget_marks();
    let summed = |store: &dyn Store| {
        let mut streams = 0;
        store.rollups(Grain::Day, 0, i64::MAX / 2, Selection::filtered(&[]), Needs::ALL, &mut |_, r| streams += r.count).unwrap();
        streams
    };
    assert!(summed(&a) > summed(&sqlite), "unmarked copies count twice");
    // The sender's retry, through either collector, finds and marks them.
    for batch in batches {
        assert_eq!(a.insert_batch(batch, 2).unwrap().accepted(), 0);
    }
    assert_same_answers(&b, &sqlite);
    // Or the next collector to start does.
    forget_marks();
    let c = ClickHouseStore::open(&url, &db).unwrap();
    assert_same_answers(&c, &sqlite);
}

#[test]
fn a_failed_insert_stores_nothing_and_says_so() {
    let Some((url, db)) = fresh_database("a_failed_insert_stores_nothing_and_says_so") else { return };
    let (_dir, sqlite) = reference();
    let ch = ClickHouseStore::open(&url, &db).unwrap();
    let batches = batches();
    backend::clickhouse("ALTER TABLE records ADD COLUMN refuse UInt8 MATERIALIZED throwIf(length(id) > 0)", Some(&db));
    let err = ch.insert_batch(&batches[0], 0).unwrap_err();
    assert!(err.0.contains("clickhouse"), "{err}");
    assert_eq!(count(&db, "records"), 0);
    assert_eq!(count(&db, "rollup_states"), 0);
    backend::clickhouse("ALTER TABLE records DROP COLUMN refuse", Some(&db));
    insert_both(&ch, &sqlite, &batches[0]);
    assert_same_answers(&ch, &sqlite);
}

#[test]
fn an_older_records_table_gets_the_added_columns_if_the_store_made_it() {
    let Some((url, db)) = fresh_database("an_older_records_table_gets_the_added_columns_if_the_store_made_it") else { return };
    let before = validate::envelope(&envelope(vec![record("before")]), now_ms()).unwrap();
    ClickHouseStore::open(&url, &db).unwrap().insert_batch(&before, 0).unwrap();
    backend::clickhouse("ALTER TABLE records DROP COLUMN cadence", Some(&db));
    backend::clickhouse("ALTER TABLE records DROP COLUMN clock_ms", Some(&db));
    backend::clickhouse("ALTER TABLE records DROP COLUMN arrival_gap_p50_ms", Some(&db));
    backend::clickhouse("ALTER TABLE records DROP COLUMN experiment_unit", Some(&db));
    // What the older collector made: a view whose `*` was expanded without them.
    backend::clickhouse("DROP TABLE unique_records", Some(&db));
    backend::clickhouse("CREATE VIEW unique_records AS SELECT * FROM records WHERE (id, copy) NOT IN (SELECT id, copy FROM duplicates)", Some(&db));
    let mut r = record("after");
    r["clockMs"] = json!(0.1);
    r["cadence"] = json!([[5, 1], [9, 3]]);
    let mut env = envelope(vec![r, record("empty")]);
    env["records"][1]["cadence"] = json!([]);
    env["batchId"] = json!("b-2");
    env["experimentUnit"] = json!("0123456789abcdef0123456789abcdef");
    ClickHouseStore::open(&url, &db).unwrap().insert_batch(&validate::envelope(&env, now_ms()).unwrap(), 0).unwrap();
    let stored = backend::clickhouse("SELECT id, clock_ms, cadence, arrival_gap_p50_ms, experiment_unit FROM unique_records ORDER BY id FORMAT CSV", Some(&db));
    let unit = "\"0123456789abcdef0123456789abcdef\"";
    assert_eq!(stored, format!("\"after\",0.1,\"[[5,1],[9,3]]\",27,{unit}\n\"before\",\\N,\\N,\\N,\"\"\n\"empty\",0.005,\"[]\",27,{unit}\n"));
    let columns = |db: &str, table: &str| backend::clickhouse(&format!("SELECT name FROM system.columns WHERE database = '{db}' AND table = '{table}' FORMAT CSV"), None);
    let Some((url, new)) = fresh_database("an_older_records_table_gets_the_added_columns_if_the_store_made_it") else { return };
    drop(ClickHouseStore::open(&url, &new).unwrap());
    for table in ["records", "unique_records"] {
        assert_eq!(columns(&db, table), columns(&new, table), "{table}: the added columns in their place");
    }
    // A records table the store did not make (a cluster's Distributed one, say) is its operator's to alter.
    let Some((url, db)) = fresh_database("an_older_records_table_gets_the_added_columns_if_the_store_made_it") else { return };
    backend::clickhouse(&format!("CREATE DATABASE {db}"), None);
    backend::clickhouse("CREATE TABLE records (id String) ENGINE = Log", Some(&db));
    let err = ClickHouseStore::open(&url, &db).err().unwrap();
    assert!(err.0.contains("records (Log) lacks the column(s) clock_ms, cadence, arrival_gap_p50_ms, experiment_unit of this collector") && err.0.contains("docs/deploy.md, upgrading"), "{err}");
}

#[test]
fn a_database_of_an_earlier_design_is_refused() {
    for (design, table) in [
        ("one writer", "CREATE TABLE rollups (grain String, bucket Int64, version UInt64, data String) ENGINE = ReplacingMergeTree(version) ORDER BY (grain, bucket)"),
        ("sumMap states", "CREATE TABLE rollup_states (grain String, bucket Int64, counts AggregateFunction(sumForEach, Array(UInt64)), sketches AggregateFunction(sumMap, Array(Int64), Array(UInt64))) ENGINE = AggregatingMergeTree() ORDER BY (grain, bucket)"),
    ] {
        let Some((url, db)) = fresh_database("a_database_of_an_earlier_design_is_refused") else { return };
        backend::clickhouse(&format!("CREATE DATABASE {db}"), None);
        backend::clickhouse(table, Some(&db));
        let err = ClickHouseStore::open(&url, &db).err().unwrap();
        assert!(err.0.contains("earlier collector") && err.0.contains(design) && err.0.contains("docs/deploy.md"), "{err}");
    }
}

#[test]
fn concurrent_batches_store_each_record_once() {
    let Some((url, db)) = fresh_database("concurrent_batches_store_each_record_once") else { return };
    let ch = ClickHouseStore::open(&url, &db).unwrap();
    // 8 senders sharing the store (as the HTTP layer's threads do), 10 batches each of 10 records;
    // consecutive batches share 5 ids, across senders too.
    let record_of = |n: usize| {
        let mut r = record(&format!("c-{n}"));
        r["model"] = json!(HOSTILE[n % HOSTILE.len()]);
        r["scenario"] = [json!("chat"), Value::Null, json!("")][n % 3].clone();
        r["startedAt"] = json!(*T0 + n as f64 * 7_001.0);
        r["ttftMs"] = json!(100 + n % 900);
        r
    };
    let batch_of = |b: usize| validate::envelope(&envelope((b * 5..b * 5 + 10).map(record_of).collect()), now_ms()).unwrap();
    let answers: Vec<(usize, Inserted)> = std::thread::scope(|scope| {
        let (ch, batch_of) = (&ch, &batch_of);
        let senders: Vec<_> = (0..8).map(|t| scope.spawn(move || (0..10).map(|k| (k * 8 + t, ch.insert_batch(&batch_of(k * 8 + t), 0).unwrap())).collect::<Vec<_>>())).collect();
        senders.into_iter().flat_map(|s| s.join().unwrap()).collect()
    });
    let distinct = 80 * 5 + 5;
    assert_eq!(answers.iter().map(|(_, a)| a.accepted()).sum::<usize>(), distinct);
    assert_eq!(answers.iter().map(|(_, a)| a.accepted() + a.duplicates).sum::<usize>(), 800);
    // The accepted positions name each record once: what /metrics counts.
    let accepted_ids: std::collections::HashSet<String> = answers.iter().flat_map(|(b, a)| a.accepted_at.iter().map(|&i| batch_of(*b).records[i].id.clone()).collect::<Vec<_>>()).collect();
    assert_eq!(accepted_ids.len(), distinct);
    let inserts = backend::clickhouse("SELECT count() FROM system.parts WHERE database = currentDatabase() AND table = 'records'", Some(&db));
    eprintln!("80 batches from 8 senders took {} parts of records", inserts.trim());
    let (_dir, sqlite) = reference();
    sqlite.insert_batch(&validate::envelope(&envelope((0..distinct).map(record_of).collect()), now_ms()).unwrap(), 0).unwrap();
    assert_same_answers(&ch, &sqlite);
}

#[test]
fn refuses_a_database_name_that_is_not_an_identifier_and_an_unreachable_server() {
    let err = ClickHouseStore::open("http://127.0.0.1:8123", "llm-ux; DROP").err().unwrap();
    assert!(err.0.contains("database name"), "{err}");
    let err = ClickHouseStore::open("https://127.0.0.1:8443", "llm_ux").err().unwrap();
    assert!(err.0.contains("https is not supported"), "{err}");
    // A port nothing listens on (bound, then released).
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let err = ClickHouseStore::open(&format!("http://127.0.0.1:{port}"), "llm_ux").err().unwrap();
    assert!(err.0.contains("cannot connect"), "{err}");
}
