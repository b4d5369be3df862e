//! The SQLite file across collector versions: a version-1 file (records, no rollups) and a version-2
//! file (rollups without their stream counts) get their rollups built from their records on open;
//! files of versions 1 to 3 get the `clock_ms` column, of versions 1 to 4 the `cadence` column, of
//! versions 1 to 6 the `arrival_gap_p50_ms` column (filled from the raw records), of versions 1 to 7
//! the `experiment_unit` column (null: their streams have no user unit); every file before
//! version 7 gets its rollups rebuilt (encoding 1 had no stops and no length-band figures, encoding 2
//! no bunching); a file from a newer collector is refused.

mod common;

use common::{envelope, record, TempDir};
use llm_ux_collector::store::sqlite::SqliteStore;
use llm_ux_collector::query::window::visit_window;
use llm_ux_collector::rollup::Grain;
use llm_ux_collector::store::{JointNeed, Needs, Selection, Store};
use llm_ux_collector::{api::{compare, streams, summary}, validate};
use serde_json::{json, Value};
use std::path::Path;

/// The collector's clock when the records below were sent: the end of their span, so they are inside
/// its ingest window.
const CLOCK: i64 = 1_700_300_000_000;

/// The summary of 400 records stored in a fresh file at `path`, before any migration.
fn store_records_and_summarize(path: &Path, window: &llm_ux_collector::query::params::Window) -> Value {
    let store = SqliteStore::open(path).unwrap();
    let records = (0..400)
        .map(|i| {
            let mut r = record(&format!("v1-{i}"));
            r["model"] = json!(["a", "b", "c"][i % 3]);
            r["variant"] = json!(["A", "B"][i % 2]);
            r["startedAt"] = json!(1_700_000_000_000.0 + i as f64 * 713_000.7);
            r["ttftMs"] = json!(200 + (i * 37) % 1500);
            r["status"] = json!(["ok", "aborted", "incomplete", "ok"][(i / 3) % 4]);
            r
        })
        .collect::<Vec<_>>();
    for chunk in records.chunks(100) {
        let mut env = envelope(chunk.to_vec());
        env["batchId"] = chunk[0]["id"].clone();
        env["sentAt"] = json!(CLOCK);
        store.insert_batch(&validate::envelope(&env, CLOCK).unwrap(), 0).unwrap();
    }
    summary::summary(&store, window).unwrap().to_json()
}

/// Turns the file at `path` into what an earlier collector left with `sql`, reopens it, and checks
/// that it answers `before` again, at the current schema version.
fn reopened_after(path: &Path, sql: &str, window: &llm_ux_collector::query::params::Window, before: &Value) {
    rusqlite::Connection::open(path).unwrap().execute_batch(sql).unwrap();
    let store = SqliteStore::open(path).unwrap();
    assert_eq!(&summary::summary(&store, window).unwrap().to_json(), before);
    let version: i64 = rusqlite::Connection::open(path).unwrap().query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, 8);
}

#[test]
fn a_version_1_file_gets_its_rollups_built_from_its_records() {
    let dir = TempDir::new("schema");
    let path = dir.0.join("beacons.db");
    let window = summary::parse(Some("from=1700000000000&to=1700300000000&groupBy=model,variant&slo.ttftMs=900"), 0).unwrap();
    let before = store_records_and_summarize(&path, &window);
    assert_eq!(before["groups"].as_array().unwrap().len(), 6);
    // What a version-1 collector left: the same records, no rollups table.
    reopened_after(&path, "DROP TABLE rollups; ALTER TABLE records DROP COLUMN clock_ms; ALTER TABLE records DROP COLUMN cadence; ALTER TABLE records DROP COLUMN arrival_gap_p50_ms; ALTER TABLE records DROP COLUMN experiment_unit; PRAGMA user_version = 1;", &window, &before);
}

#[test]
fn a_version_2_file_gets_its_rollups_rebuilt_with_their_stream_counts() {
    let dir = TempDir::new("schema-2");
    let path = dir.0.join("beacons.db");
    let window = summary::parse(Some("from=1700000000000&to=1700300000000&groupBy=model&model=a&model=b&model=c"), 0).unwrap();
    let before = store_records_and_summarize(&path, &window);
    assert_eq!(before["totalGroups"], json!(3));
    // What a version-2 collector left: rollups without the `streams` column (which ranks groups).
    reopened_after(&path, "ALTER TABLE rollups DROP COLUMN streams; ALTER TABLE records DROP COLUMN clock_ms; ALTER TABLE records DROP COLUMN cadence; ALTER TABLE records DROP COLUMN arrival_gap_p50_ms; ALTER TABLE records DROP COLUMN experiment_unit; PRAGMA user_version = 2;", &window, &before);
    let streams: i64 = rusqlite::Connection::open(&path).unwrap().query_row("SELECT sum(streams) FROM rollups WHERE grain = 'd'", [], |r| r.get(0)).unwrap();
    assert_eq!(streams, 400);
}

#[test]
fn a_version_3_file_gets_the_clock_column_and_keeps_its_records() {
    let dir = TempDir::new("schema-3");
    let path = dir.0.join("beacons.db");
    let window = summary::parse(Some("from=1700000000000&to=1700300000000&groupBy=model"), 0).unwrap();
    let before = store_records_and_summarize(&path, &window);
    reopened_after(&path, "ALTER TABLE records DROP COLUMN clock_ms; ALTER TABLE records DROP COLUMN cadence; ALTER TABLE records DROP COLUMN arrival_gap_p50_ms; ALTER TABLE records DROP COLUMN experiment_unit; PRAGMA user_version = 3;", &window, &before);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let (rows, clocks, cadences): (i64, i64, i64) = conn.query_row("SELECT count(*), count(clock_ms), count(cadence) FROM records", [], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap();
    assert_eq!((rows, clocks, cadences), (400, 0, 0), "records from before the columns have no clock step and no cadence");
    drop(conn);
    let mut r = record("v4-0");
    r["startedAt"] = json!(CLOCK);
    let mut env = envelope(vec![r]);
    env["sentAt"] = json!(CLOCK);
    SqliteStore::open(&path).unwrap().insert_batch(&validate::envelope(&env, CLOCK).unwrap(), 0).unwrap();
    let clock: f64 = rusqlite::Connection::open(&path).unwrap().query_row("SELECT clock_ms FROM records WHERE id = 'v4-0'", [], |r| r.get(0)).unwrap();
    assert_eq!(clock, 0.005);
}

#[test]
fn a_version_4_file_gets_the_cadence_column_and_lists_its_streams_with_null() {
    let dir = TempDir::new("schema-4");
    let path = dir.0.join("beacons.db");
    let window = summary::parse(Some("from=1700000000000&to=1700300000000&groupBy=model"), 0).unwrap();
    let before = store_records_and_summarize(&path, &window);
    reopened_after(&path, "ALTER TABLE records DROP COLUMN cadence; ALTER TABLE records DROP COLUMN arrival_gap_p50_ms; ALTER TABLE records DROP COLUMN experiment_unit; PRAGMA user_version = 4;", &window, &before);
    let mut r = record("v5-0");
    r["startedAt"] = json!(CLOCK - 1_000);
    let mut env = envelope(vec![r]);
    env["sentAt"] = json!(CLOCK);
    let store = SqliteStore::open(&path).unwrap();
    store.insert_batch(&validate::envelope(&env, CLOCK).unwrap(), 0).unwrap();
    let query = streams::parse(Some(&format!("from={}&to={CLOCK}&limit=2", CLOCK - 20_000_000)), 0).unwrap();
    let listed = streams::streams(&store, &query).unwrap();
    let cadences: Vec<(&Value, &Value)> = listed["streams"].as_array().unwrap().iter().map(|s| (&s["id"], &s["cadence"])).collect();
    assert_eq!(cadences, [(&json!("v5-0"), &json!([[420, 1], [2100, 60], [4200, 120]])), (&json!("v1-399"), &Value::Null)], "the newest first");
}

#[test]
fn a_version_5_file_gets_rollups_with_stops_and_length_bands() {
    let dir = TempDir::new("schema-5");
    let path = dir.0.join("beacons.db");
    let window = summary::parse(Some("from=1700000000000&to=1700300000000&groupBy=model"), 0).unwrap();
    let before = store_records_and_summarize(&path, &window);
    let group = &before["groups"][0];
    assert!(group["stopRate"].as_f64().is_some_and(|rate| rate > 0.3 && rate < 0.7), "{group}");
    assert!(group["byLength"]["51-500"]["tpotMs"]["p50"].as_f64().is_some(), "{group}");
    // What a version-5 collector left: rollups in encoding 1, which this collector cannot read.
    reopened_after(&path, "UPDATE rollups SET data = x'01'; ALTER TABLE records DROP COLUMN arrival_gap_p50_ms; ALTER TABLE records DROP COLUMN experiment_unit; PRAGMA user_version = 5;", &window, &before);
}

#[test]
fn a_version_6_file_gets_the_arrival_gap_column_and_rollups_that_count_bunching() {
    let dir = TempDir::new("schema-6");
    let path = dir.0.join("beacons.db");
    let window = summary::parse(Some("from=1700000000000&to=1700300000000&groupBy=model"), 0).unwrap();
    let before = store_records_and_summarize(&path, &window);
    // What a version-6 collector left: no arrival gap p50 column, rollups in encoding 2.
    reopened_after(&path, "UPDATE rollups SET data = x'02'; ALTER TABLE records DROP COLUMN arrival_gap_p50_ms; ALTER TABLE records DROP COLUMN experiment_unit; PRAGMA user_version = 6;", &window, &before);
    let filled: i64 = rusqlite::Connection::open(&path).unwrap().query_row("SELECT count(*) FROM records WHERE arrival_gap_p50_ms = 27.0", [], |r| r.get(0)).unwrap();
    assert_eq!(filled, 400, "the raw records' arrivalGaps.p50");
    let store = SqliteStore::open(&path).unwrap();
    let needs = Needs { per_bucket: false, metrics: [false; 5], extras: true, joint: JointNeed::Nothing };
    let (mut known, mut bunched) = (0, 0);
    visit_window(&store, window.from, window.to, Grain::Day, Selection::filtered(&window.filters), needs, |_, _, piece| {
        known += piece.bunch_known;
        bunched += piece.bunched;
    })
    .unwrap();
    assert_eq!((known, bunched), (400, 0), "each record's 118 events are judged, none came in bunches");
}

#[test]
fn a_version_7_file_gets_the_experiment_unit_column_and_its_streams_have_no_user() {
    let dir = TempDir::new("schema-7");
    let path = dir.0.join("beacons.db");
    let window = summary::parse(Some("from=1700000000000&to=1700300000000"), 0).unwrap();
    let before = store_records_and_summarize(&path, &window);
    reopened_after(&path, "ALTER TABLE records DROP COLUMN experiment_unit; PRAGMA user_version = 7;", &window, &before);
    let store = SqliteStore::open(&path).unwrap();
    let ask = |unit: &str| {
        let query = compare::parse(Some(&format!("from=1700000000000&to=1700300000000&a=A&b=B&unit={unit}")), CLOCK).unwrap();
        compare::compare(&store, &query).unwrap()
    };
    let (by_user, by_session) = (ask("user"), ask("session"));
    assert_eq!((&by_user["mixedUnits"], &by_user["streamsWithoutUnit"]), (&json!(0), &json!(400)));
    // One session sent them all, in both arms.
    assert_eq!((&by_session["mixedUnits"], &by_session["streamsWithoutUnit"]), (&json!(1), &json!(0)));
}

#[test]
fn a_file_from_a_newer_collector_is_refused() {
    let dir = TempDir::new("schema-new");
    let path = dir.0.join("beacons.db");
    drop(SqliteStore::open(&path).unwrap());
    rusqlite::Connection::open(&path).unwrap().execute_batch("PRAGMA user_version = 9;").unwrap();
    let error = SqliteStore::open(&path).err().expect("refused").to_string();
    assert!(error.contains("schema version 9, newer than this collector's 8"), "{error}");
}
