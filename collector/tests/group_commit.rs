//! SQLite's group commit: batches written at once by many threads are stored as if one came after
//! the other (each record once, a repeat in a later batch its duplicate), and a batch that fails
//! rolls back alone: its senders get the error, the others' records and rollups are stored.

mod common;

use common::{envelope, now_ms, record, TempDir};
use llm_ux_collector::rollup::Grain;
use llm_ux_collector::store::sqlite::SqliteStore;
use llm_ux_collector::store::{Selection, Store};
use llm_ux_collector::validate::{self, Batch};
use serde_json::json;

/// Streams in the day rollups: what the summaries count.
fn streams(store: &dyn Store) -> u64 {
    let mut n = 0;
    store.rollups(Grain::Day, 0, i64::MAX / 2, Selection::filtered(&[]), &mut |_, r| n += r.count).unwrap();
    n
}

#[test]
fn concurrent_batches_commit_together_and_a_failing_one_alone() {
    let dir = TempDir::new("group-commit");
    let path = dir.0.join("beacons.db");
    let store = SqliteStore::open(&path).unwrap();
    // 160 batches of 10 records; consecutive batches share 5 ids; batch 77 holds the poisoned id.
    let batch_of = |b: usize| -> Batch {
        let mut env = envelope((b * 5..b * 5 + 10).map(|n| record(&format!("g-{n}"))).collect());
        env["batchId"] = json!(format!("b-{b}"));
        if b == 77 {
            env["records"][3]["id"] = json!("poison");
        }
        validate::envelope(&env, now_ms()).unwrap()
    };
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TRIGGER fail BEFORE INSERT ON records WHEN NEW.id = 'poison' BEGIN SELECT RAISE(ABORT, 'boom'); END;")
        .unwrap();
    let answers: Vec<(usize, Result<_, _>)> = std::thread::scope(|scope| {
        let senders: Vec<_> = (0..16).map(|t| scope.spawn({ let (store, batch_of) = (&store, &batch_of); move || (0..10).map(|k| k * 16 + t).map(|b| (b, store.insert_batch(&batch_of(b), 0))).collect::<Vec<_>>() })).collect();
        senders.into_iter().flat_map(|s| s.join().unwrap()).collect()
    });
    let failed: Vec<usize> = answers.iter().filter(|(_, a)| a.is_err()).map(|(b, _)| *b).collect();
    assert_eq!(failed, [77], "only the poisoned batch fails");
    // Every id is stored once (each of batch 77's is in a neighbour too), and nothing of batch 77.
    let conn = rusqlite::Connection::open(&path).unwrap();
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    let stored = count("SELECT count(*) FROM records");
    let accepted: usize = answers.iter().filter_map(|(_, a)| a.as_ref().ok()).map(|i| i.accepted).sum();
    assert_eq!(stored as usize, accepted);
    assert_eq!(stored, 160 * 5 + 5);
    assert_eq!(count("SELECT count(*) FROM records WHERE batch_id = 'b-77' OR id = 'poison'"), 0);
    assert_eq!(streams(&store), stored as u64, "the rollups hold exactly the stored records");
}
