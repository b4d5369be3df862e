//! The SQLite file across collector versions: a version-1 file (records, no rollups) gets its rollups
//! built from its records on open; a file from a newer collector is refused.

mod common;

use common::{envelope, record, TempDir};
use llm_ux_collector::store::sqlite::SqliteStore;
use llm_ux_collector::store::Store;
use llm_ux_collector::{summary, validate};
use serde_json::json;

#[test]
fn a_version_1_file_gets_its_rollups_built_from_its_records() {
    let dir = TempDir::new("schema");
    let path = dir.0.join("beacons.db");
    let window = summary::parse(Some("from=1700000000000&to=1700300000000&groupBy=model,variant&slo.ttftMs=900"), 0).unwrap();
    let before = {
        let store = SqliteStore::open(&path).unwrap();
        let records = (0..400)
            .map(|i| {
                let mut r = record(&format!("v1-{i}"));
                r["model"] = json!(["a", "b", "c"][i % 3]);
                r["variant"] = json!(["A", "B"][i % 2]);
                r["startedAt"] = json!(1_700_000_000_000.0 + i as f64 * 713_000.7);
                r["ttftMs"] = json!(200 + (i * 37) % 1500);
                r
            })
            .collect::<Vec<_>>();
        for chunk in records.chunks(100) {
            let mut env = envelope(chunk.to_vec());
            env["batchId"] = chunk[0]["id"].clone();
            store.insert_batch(&validate::envelope(&env).unwrap(), 0).unwrap();
        }
        summary::summary(&store, &window).unwrap().to_json()
    };
    assert_eq!(before["groups"].as_array().unwrap().len(), 6);
    // What a version-1 collector left: the same records, no rollups table.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("DROP TABLE rollups; PRAGMA user_version = 1;").unwrap();
    drop(conn);
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(summary::summary(&store, &window).unwrap().to_json(), before);
    let version: i64 = rusqlite::Connection::open(&path).unwrap().query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, 2);
}

#[test]
fn a_file_from_a_newer_collector_is_refused() {
    let dir = TempDir::new("schema-new");
    let path = dir.0.join("beacons.db");
    drop(SqliteStore::open(&path).unwrap());
    rusqlite::Connection::open(&path).unwrap().execute_batch("PRAGMA user_version = 9;").unwrap();
    let error = SqliteStore::open(&path).err().expect("refused").to_string();
    assert!(error.contains("schema version 9, newer than this collector's 2"), "{error}");
}
