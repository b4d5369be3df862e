//! Upkeep: each closed day's rollups merged into one part.
//!
//! ClickHouse merges parts in the background by size, and leaves a day's few parts of unequal
//! sizes as they are; a read then merges each rollup's rows from all of them. On the bench's data
//! set (1 million records over 30 days, merges settled) a day partition kept 4 to 5 parts, and a
//! 30-day summary read 32,175 state rows for 4,203 rollups and 2.4 million bucket-count rows for
//! 0.77 million. A day that has closed gets few records more, so merging its partition once costs
//! one rewrite of it, and every later read of that day reads its rows once.

use super::sql::quote;
use super::write::now_ms;
use super::Database;
use crate::store::StoreError;
use std::sync::mpsc::{sync_channel, RecvTimeoutError, SyncSender};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

/// How often a collector runs the upkeep (and once as it starts).
pub const UPKEEP_MS: u64 = 3_600_000;
/// The days before today whose partitions the upkeep merges: the collector refuses older records,
/// so older days never get a new part.
const UPKEEP_DAYS: i64 = 31;
const DAY_MS: i64 = 86_400_000;

/// The handle of a store's upkeep thread. The thread ends when the handle is dropped.
pub(super) struct Upkeep {
    _stop: SyncSender<()>,
}

impl Upkeep {
    pub(super) fn start(database: Arc<Database>) -> Upkeep {
        let (stop, stopped) = sync_channel::<()>(0);
        let run = move || loop {
            if let Err(e) = merge_closed_days(&database, now_ms()) {
                eprintln!("llm-ux-collector: clickhouse upkeep (it runs again in an hour): {e}");
            }
            if stopped.recv_timeout(Duration::from_millis(UPKEEP_MS)) != Err(RecvTimeoutError::Timeout) {
                break;
            }
        };
        thread::Builder::new().name("clickhouse-upkeep".into()).spawn(run).expect("spawning the ClickHouse upkeep thread");
        Upkeep { _stop: stop }
    }
}

/// Merges every partition of `rollup_states` and `sketch_buckets` that holds more than one part,
/// of the [`UPKEEP_DAYS`] days before the day of `now_ms`; waits for the merges. Several collectors
/// may run it at once: a partition being merged, or of one part, is left as it is. Time: one query,
/// then a merge per such partition (a rewrite of one day of rollups).
pub(super) fn merge_closed_days(database: &Database, now_ms: i64) -> Result<(), StoreError> {
    let today = now_ms.div_euclid(DAY_MS);
    let db = &database.db;
    let mut parts = Vec::new();
    database.for_each_row(
        &super::QUERY_SETTINGS,
        &format!(
            "SELECT table, toInt64(partition) AS day FROM system.parts WHERE database = {} AND table IN ('rollup_states', 'sketch_buckets') AND active \
             GROUP BY table, day HAVING count() > 1 AND day >= {} AND day < {today} ORDER BY day, table",
            quote(db),
            today - UPKEEP_DAYS
        ),
        |r| {
            parts.push((r.string()?, r.i64()?));
            Ok(())
        },
    )?;
    for (table, day) in parts {
        // Only the two names asked for, and a number, reach the SQL.
        let table = match table.as_str() {
            "rollup_states" => "rollup_states",
            "sketch_buckets" => "sketch_buckets",
            _ => continue,
        };
        database.query(&format!("OPTIMIZE TABLE {db}.{table} PARTITION {day}"))?;
    }
    Ok(())
}
