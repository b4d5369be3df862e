//! The SQLite backend: one file in WAL mode; one row per stream record (its fields as columns plus
//! the raw record JSON, primary key on the record id so a repeated record is ignored) and one row
//! per rollup key holding the encoded [`Rollup`].
//!
//! A batch is one transaction: its new records, and the rollups they change (read, merged, written
//! back), commit together or not at all. Ingest costs O(records + touched rollup size).
//!
//! Reads run on a pool of [`READERS`] reader connections (WAL lets them read beside the writer and
//! each other), each held for one read; `ping` has a connection of its own, so `/health` never
//! waits behind a query. Reads stream their rows to the visitor straight from the statement.

use super::{cadence_points, cadence_text, Busiest, Inserted, Needs, Selection, Store, StoreError};
use crate::dims::{Dim, Dims, Filters, Unit, DEF};
use crate::rollup::plan::{plan, Piece};
use crate::rollup::{bunched, rollups_of, stops, Grain, Rollup, RollupKey, Row};
use crate::store::stream::{self, Order, Stream};
use crate::validate::Batch;
use rusqlite::types::{Type, Value as SqlValue};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, Transaction};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::time::Duration;

/// The schema version kept in `PRAGMA user_version`; a later version migrates from it.
const SCHEMA_VERSION: i64 = 8;

/// Reader connections: up to this many reads run at once (more wait for one to be free).
pub const READERS: usize = 4;

/// How long a connection waits for a lock held by another (a checkpoint, a recovery) before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS records (
    id                  TEXT PRIMARY KEY NOT NULL,
    started_at          REAL NOT NULL,
    def                 INTEGER NOT NULL,
    model               TEXT,
    scenario            TEXT,
    variant             TEXT,
    app_version         TEXT,
    connection          TEXT,
    url                 TEXT,
    format              TEXT,
    status              TEXT NOT NULL,
    http_status         INTEGER,
    render_source       TEXT,
    browser             TEXT NOT NULL,
    ttfb_ms             REAL,
    ttft_ms             REAL,
    ttft_arrival_ms     REAL,
    ttfo_ms             REAL,
    tpot_ms             REAL,
    tpot_arrival_ms     REAL,
    tokens_per_second   REAL,
    output_tokens       INTEGER NOT NULL,
    token_source        TEXT NOT NULL,
    reasoning_tokens    INTEGER NOT NULL,
    output_events       INTEGER NOT NULL,
    gap_p50_ms          REAL,
    gap_p90_ms          REAL,
    gap_p99_ms          REAL,
    gap_max_ms          REAL,
    arrival_gap_p50_ms  REAL,
    arrival_gap_p90_ms  REAL,
    jitter_ms           REAL,
    stall_count         INTEGER,
    stall_count_1000    INTEGER,
    stall_longest_ms    REAL,
    stall_total_ms      REAL,
    render_delay_p50_ms REAL,
    render_delay_p90_ms REAL,
    duration_ms         REAL,
    hidden              INTEGER NOT NULL,
    finish_reason       TEXT,
    clock_ms            REAL,
    -- JSON text, as on ClickHouse (store::cadence_text says why); NULL when the record had none.
    cadence             TEXT,
    rtt_ms              REAL,
    device_memory_gb    REAL,
    cores               INTEGER,
    session_id          TEXT NOT NULL,
    -- The envelope's experimentUnit (the app's unit, hashed by the meter); NULL when it had none.
    experiment_unit     TEXT,
    page_id             TEXT NOT NULL,
    batch_id            TEXT NOT NULL,
    sample_rate         REAL NOT NULL,
    received_at         INTEGER NOT NULL,
    raw                 TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS records_by_time ON records (def, started_at);
CREATE TABLE IF NOT EXISTS rollups (
    grain       TEXT NOT NULL,
    bucket      INTEGER NOT NULL,
    -- The five dimensions as one JSON array: the key (SQLite treats NULLs in a key as distinct).
    dims_key    TEXT NOT NULL,
    model       TEXT,
    scenario    TEXT,
    variant     TEXT,
    app_version TEXT,
    connection  TEXT,
    -- The rollup's stream count, so groups are ranked without decoding `data`.
    streams     INTEGER NOT NULL,
    data        BLOB NOT NULL,
    PRIMARY KEY (grain, bucket, dims_key)
) WITHOUT ROWID;
";

// ON CONFLICT(id) DO NOTHING, not INSERT OR IGNORE: only a repeated id is skipped; any other
// constraint failure aborts the batch instead of dropping a row silently.
const INSERT: &str = "INSERT INTO records (
    id, started_at, def, model, scenario, variant, app_version, connection, url, format, status, http_status,
    render_source, browser, ttfb_ms, ttft_ms, ttft_arrival_ms, ttfo_ms, tpot_ms, tpot_arrival_ms, tokens_per_second,
    output_tokens, token_source, reasoning_tokens, output_events, gap_p50_ms, gap_p90_ms, gap_p99_ms, gap_max_ms,
    arrival_gap_p50_ms, arrival_gap_p90_ms, jitter_ms, stall_count, stall_count_1000, stall_longest_ms, stall_total_ms,
    render_delay_p50_ms, render_delay_p90_ms, duration_ms, hidden, finish_reason, clock_ms, cadence, rtt_ms,
    device_memory_gb, cores, session_id, page_id, batch_id, sample_rate, received_at, raw, experiment_unit
) VALUES (
    ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25,
    ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36, ?37, ?38, ?39, ?40, ?41, ?42, ?43, ?44, ?45, ?46, ?47, ?48, ?49,
    ?50, ?51, ?52, ?53
) ON CONFLICT(id) DO NOTHING";

/// SQLite store: a writer connection, [`READERS`] reader connections and `ping`'s own.
pub struct SqliteStore {
    writer: Mutex<Connection>,
    readers: Vec<Mutex<Connection>>,
    /// The reader a read waits for when every one is busy: the next in turn, so waits spread out.
    next_reader: AtomicUsize,
    health: Mutex<Connection>,
}

fn err(e: impl std::fmt::Display) -> StoreError {
    StoreError(format!("sqlite: {e}"))
}

fn lock(m: &Mutex<Connection>) -> MutexGuard<'_, Connection> {
    // A panic while holding the lock leaves the connection usable (transactions roll back on drop).
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl SqliteStore {
    /// Opens (creating it and its parent directory if needed) the database at `path`, in WAL mode.
    /// A file of schema version 1 to 5 gets its rollups rebuilt from its records (O(records), once,
    /// said on standard error), one of version 1 to 3 the `clock_ms` column, one of version 1 to 4
    /// the `cadence` column and one of version 1 to 7 the `experiment_unit` column (null in its
    /// records); a file of a newer version is refused.
    pub fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| StoreError(format!("cannot create {}: {e}", parent.display())))?;
        }
        let mut writer = Connection::open(path).map_err(|e| StoreError(format!("cannot open {}: {e}", path.display())))?;
        writer.busy_timeout(BUSY_TIMEOUT).map_err(err)?;
        let mode: String = writer.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)).map_err(err)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError(format!("sqlite: {} cannot use WAL (journal mode {mode})", path.display())));
        }
        writer.execute_batch("PRAGMA synchronous = NORMAL;").map_err(err)?;
        let version: i64 = writer.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(err)?;
        if version > SCHEMA_VERSION {
            return Err(StoreError(format!("{} has schema version {version}, newer than this collector's {SCHEMA_VERSION}", path.display())));
        }
        // Version 1 had no rollups, version 2 no `streams` column, versions before 6 rollups without
        // stops and length-band figures (encoding 1), version 6 without bunching (encoding 2): build
        // them from the records.
        let rebuilding = (1..7).contains(&version);
        let tx = writer.transaction().map_err(err)?;
        if (1..3).contains(&version) {
            tx.execute_batch("DROP TABLE IF EXISTS rollups;").map_err(err)?;
        }
        // Versions before 4 had no `clock_ms` column.
        if (1..4).contains(&version) {
            tx.execute_batch("ALTER TABLE records ADD COLUMN clock_ms REAL;").map_err(err)?;
        }
        // Versions before 5 had no `cadence` column.
        if (1..5).contains(&version) {
            tx.execute_batch("ALTER TABLE records ADD COLUMN cadence TEXT;").map_err(err)?;
        }
        // Versions before 7 had no `arrival_gap_p50_ms` column: the raw records hold it.
        if (1..7).contains(&version) {
            tx.execute_batch("ALTER TABLE records ADD COLUMN arrival_gap_p50_ms REAL; UPDATE records SET arrival_gap_p50_ms = json_extract(raw, '$.arrivalGaps.p50');").map_err(err)?;
        }
        // Versions before 8 had no `experiment_unit` column (null in their records: no unit given).
        if (1..8).contains(&version) {
            tx.execute_batch("ALTER TABLE records ADD COLUMN experiment_unit TEXT;").map_err(err)?;
        }
        tx.execute_batch(SCHEMA).map_err(err)?;
        if rebuilding {
            eprintln!("llm-ux-collector: {} has schema version {version}: rebuilding its rollups from its records, once", path.display());
            rebuild_rollups(&tx)?;
        }
        tx.pragma_update(None, "user_version", SCHEMA_VERSION).map_err(err)?;
        tx.commit().map_err(err)?;
        let read_only = || -> Result<Mutex<Connection>, StoreError> {
            let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX).map_err(err)?;
            conn.busy_timeout(BUSY_TIMEOUT).map_err(err)?;
            Ok(Mutex::new(conn))
        };
        let readers = (0..READERS).map(|_| read_only()).collect::<Result<_, _>>()?;
        Ok(SqliteStore { writer: Mutex::new(writer), readers, next_reader: AtomicUsize::new(0), health: read_only()? })
    }

    /// A free reader connection, or when all are busy, the next in turn once it is free.
    fn reader(&self) -> MutexGuard<'_, Connection> {
        for reader in &self.readers {
            match reader.try_lock() {
                Ok(guard) => return guard,
                Err(TryLockError::Poisoned(poisoned)) => return poisoned.into_inner(),
                Err(TryLockError::WouldBlock) => {}
            }
        }
        lock(&self.readers[self.next_reader.fetch_add(1, Ordering::Relaxed) % self.readers.len()])
    }
}

impl SqliteStore {
    /// Runs `SELECT columns FROM records` over the records of definition version 1 with `from <=
    /// started_at < to` and the `conditions` (SQL and its arguments), then `tail`, on a reader
    /// connection, and calls `visit` with what `read` makes of each row, one row at a time.
    fn each_record<T>(
        &self,
        columns: &str,
        (from, to): (i64, i64),
        (conditions, args): (String, Vec<SqlValue>),
        tail: &str,
        read: impl Fn(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
        visit: &mut dyn FnMut(T),
    ) -> Result<(), StoreError> {
        let sql = format!("SELECT {columns} FROM records WHERE def = ? AND started_at >= ? AND started_at < ?{conditions} {tail}");
        let mut bound = vec![SqlValue::Integer(DEF), (from as f64).into(), (to as f64).into()];
        bound.extend(args);
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(&sql).map_err(err)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(bound)).map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            visit(read(r).map_err(err)?);
        }
        Ok(())
    }
}

impl Store for SqliteStore {
    fn insert_batch(&self, batch: &Batch, received_at: i64) -> Result<Inserted, StoreError> {
        let mut conn = lock(&self.writer);
        let tx = conn.transaction().map_err(err)?;
        let mut new_rows = Vec::new();
        let mut accepted_at = Vec::with_capacity(batch.records.len());
        {
            let mut insert = tx.prepare_cached(INSERT).map_err(err)?;
            for (i, r) in batch.records.iter().enumerate() {
                let inserted = insert
                    .execute(params![
                        r.id, r.started_at, r.def, r.model, r.scenario, r.variant, r.app_version, r.connection, r.url, r.format,
                        r.status, r.http_status, r.render_source, r.browser, r.ttfb_ms, r.ttft_ms, r.ttft_arrival_ms, r.ttfo_ms,
                        r.tpot_ms, r.tpot_arrival_ms, r.tokens_per_second, r.output_tokens, r.token_source, r.reasoning_tokens,
                        r.output_events, r.gap_p50_ms, r.gap_p90_ms, r.gap_p99_ms, r.gap_max_ms, r.arrival_gap_p50_ms,
                        r.arrival_gap_p90_ms, r.jitter_ms, r.stall_count, r.stall_count_1000, r.stall_longest_ms, r.stall_total_ms,
                        r.render_delay_p50_ms, r.render_delay_p90_ms, r.duration_ms, r.hidden, r.finish_reason, r.clock_ms,
                        r.cadence.as_deref().map(cadence_text), r.rtt_ms, r.device_memory_gb, r.cores, batch.session_id,
                        batch.page_id, batch.batch_id, batch.sample_rate, received_at, r.raw, batch.experiment_unit,
                    ])
                    .map_err(err)?;
                if inserted == 1 && r.def == DEF {
                    new_rows.push(Row::from_record(r));
                }
                if inserted == 1 {
                    accepted_at.push(i);
                }
            }
        }
        add_to_rollups(&tx, rollups_of(&new_rows))?;
        // Any error above returns before this, and dropping `tx` rolls the whole batch back.
        tx.commit().map_err(err)?;
        Ok(Inserted::of(batch.records.len(), accepted_at))
    }

    fn rollups(&self, grain: Grain, from: i64, to: i64, selection: Selection<'_>, _: Needs, visit: &mut dyn FnMut(RollupKey, Rollup)) -> Result<(), StoreError> {
        let (where_selected, mut args) = selection_sql(selection);
        let sql = format!("SELECT bucket, {DIM_COLUMNS}, data FROM rollups WHERE grain = ? AND bucket >= ? AND bucket < ?{where_selected} ORDER BY bucket");
        args.splice(0..0, [SqlValue::Text(grain.code().into()), from.into(), to.into()]);
        let conn = self.reader();
        let mut stmt = conn.prepare(&sql).map_err(err)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(args)).map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            let dims: Dims = [r.get(1).map_err(err)?, r.get(2).map_err(err)?, r.get(3).map_err(err)?, r.get(4).map_err(err)?, r.get(5).map_err(err)?];
            let rollup = Rollup::decode(r.get_ref(6).and_then(|v| Ok(v.as_blob()?)).map_err(err)?).map_err(err)?;
            visit(RollupKey { grain, bucket: r.get(0).map_err(err)?, dims }, rollup);
        }
        Ok(())
    }

    fn rows(&self, from: i64, to: i64, selection: Selection<'_>, visit: &mut dyn FnMut(Row)) -> Result<(), StoreError> {
        self.each_record(ROW_COLUMNS, (from, to), selection_sql(selection), "ORDER BY started_at", row_of, visit)
    }

    fn unit_rows(&self, from: i64, to: i64, filters: &Filters, unit: Unit, visit: &mut dyn FnMut(String, Row)) -> Result<(), StoreError> {
        let columns = format!("{}, {ROW_COLUMNS}", unit.column());
        let unit_row = |r: &rusqlite::Row<'_>| Ok((r.get(0)?, row_of_at(r, 1)?));
        self.each_record(&columns, (from, to), filter_sql(filters), "", unit_row, &mut |(id, row)| visit(id, row))
    }

    fn streams(&self, from: i64, to: i64, filters: &Filters, order: &Order, visit: &mut dyn FnMut(Stream)) -> Result<(), StoreError> {
        self.each_record(stream::COLUMNS, (from, to), filter_sql(filters), &order.sql(|column| format!("{column} IS NULL")), stream_of, visit)
    }

    /// One statement: the window's pieces ([`plan`]: `streams` of the rollups, 1 per record of the
    /// partial minutes) under `UNION ALL`, grouped, ranked and cut by SQLite; `count(*) OVER ()`
    /// counts the groups before the `LIMIT`. The grouping spills to a temporary file when large.
    fn busiest_groups(&self, from: i64, to: i64, group_by: &[Dim], filters: &Filters, limit: usize) -> Result<Busiest, StoreError> {
        let (where_filters, filter_args) = filter_sql(filters);
        let (mut parts, mut args) = (Vec::new(), Vec::new());
        for piece in plan(from, to, Grain::Day) {
            match piece {
                Piece::Rollups(grain, start, end) => {
                    parts.push(format!("SELECT {DIM_COLUMNS}, streams AS n FROM rollups WHERE grain = ? AND bucket >= ? AND bucket < ?{where_filters}"));
                    args.extend([SqlValue::Text(grain.code().into()), start.into(), end.into()]);
                }
                Piece::Records(start, end) => {
                    parts.push(format!("SELECT {DIM_COLUMNS}, 1 AS n FROM records WHERE def = ? AND started_at >= ? AND started_at < ?{where_filters}"));
                    args.extend([SqlValue::Integer(DEF), (start as f64).into(), (end as f64).into()]);
                }
            }
            args.extend(filter_args.iter().cloned());
        }
        if parts.is_empty() {
            return Ok(Busiest { keys: Vec::new(), total: 0 });
        }
        let columns = group_by.iter().map(|d| d.column()).collect::<Vec<_>>().join(", ");
        // Null first, then by bytes (BINARY collation): the order of `Option<String>`.
        let key_order = group_by.iter().map(|d| format!("{0} IS NOT NULL, {0}", d.column())).collect::<Vec<_>>().join(", ");
        let sql = format!(
            "SELECT {columns}, count(*) OVER () FROM ({}) GROUP BY {columns} ORDER BY sum(n) DESC, {key_order} LIMIT ?",
            parts.join(" UNION ALL ")
        );
        args.push(SqlValue::Integer(i64::try_from(limit).unwrap_or(i64::MAX)));
        let conn = self.reader();
        let mut stmt = conn.prepare(&sql).map_err(err)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(args)).map_err(err)?;
        let mut busiest = Busiest { keys: Vec::new(), total: 0 };
        while let Some(r) = rows.next().map_err(err)? {
            busiest.keys.push((0..group_by.len()).map(|i| r.get(i)).collect::<Result<_, _>>().map_err(err)?);
            busiest.total = r.get::<_, i64>(group_by.len()).map_err(err)? as u64;
        }
        Ok(busiest)
    }

    fn ping(&self) -> Result<(), StoreError> {
        lock(&self.health).query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0)).map(|_| ()).map_err(err)
    }
}

/// The dimension columns, in [`Dims`] order.
const DIM_COLUMNS: &str = "model, scenario, variant, app_version, connection";

const ROW_COLUMNS: &str = "started_at, model, scenario, variant, app_version, connection, output_tokens, ttft_ms, tpot_ms, gap_p90_ms, render_delay_p50_ms, stall_count, stall_total_ms, ttft_arrival_ms IS NOT NULL, status, arrival_gap_p50_ms, output_events";

fn row_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    row_of_at(r, 0)
}

/// A [`Row`] from [`ROW_COLUMNS`] starting at column `at`.
fn row_of_at(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Row> {
    Ok(Row {
        started_at: r.get(at)?,
        dims: [r.get(at + 1)?, r.get(at + 2)?, r.get(at + 3)?, r.get(at + 4)?, r.get(at + 5)?],
        output_tokens: r.get(at + 6)?,
        ttft_ms: r.get(at + 7)?,
        tpot_ms: r.get(at + 8)?,
        gap_p90_ms: r.get(at + 9)?,
        render_delay_p50_ms: r.get(at + 10)?,
        stall_count: r.get(at + 11)?,
        stall_total_ms: r.get(at + 12)?,
        reached: r.get(at + 13)?,
        stopped: stops(r.get_ref(at + 14)?.as_str()?),
        bunched: bunched(r.get(at + 15)?, r.get(at + 16)?),
    })
}

/// A [`Stream`] from a row of [`stream::COLUMNS`].
fn stream_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<Stream> {
    Ok(Stream {
        id: r.get(0)?,
        started_at: r.get(1)?,
        dims: [r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?],
        status: r.get(7)?,
        http_status: r.get(8)?,
        ttft_ms: r.get(9)?,
        ttft_arrival_ms: r.get(10)?,
        tpot_ms: r.get(11)?,
        tpot_arrival_ms: r.get(12)?,
        output_tokens: r.get(13)?,
        gap_p90_ms: r.get(14)?,
        stall_count: r.get(15)?,
        stall_longest_ms: r.get(16)?,
        stall_total_ms: r.get(17)?,
        render_delay_p50_ms: r.get(18)?,
        render_delay_p90_ms: r.get(19)?,
        duration_ms: r.get(20)?,
        hidden: r.get(21)?,
        finish_reason: r.get(22)?,
        cadence: match r.get_ref(23)?.as_str_or_null()? {
            Some(text) => Some(cadence_points(text).map_err(|e| rusqlite::Error::FromSqlConversionFailure(23, Type::Text, e.into()))?),
            None => None,
        },
    })
}

/// ` AND column IN (?, ...)` per filter, and the values to bind.
fn filter_sql(filters: &Filters) -> (String, Vec<SqlValue>) {
    let mut sql = String::new();
    let mut args = Vec::new();
    for (dim, values) in filters {
        let marks = vec!["?"; values.len()].join(", ");
        sql.push_str(&format!(" AND {} IN ({marks})", dim.column()));
        args.extend(values.iter().map(|v| SqlValue::Text(v.clone())));
    }
    (sql, args)
}

/// The filters' SQL ([`filter_sql`]) and, for a group set, ` AND (ifnull(c, ''), c IS NULL, ...) IN
/// (VALUES (?, ?, ...), ...)`: a null matches only a null, '' only ''. SQLite answers the `IN` from a
/// temporary index of the keys, O(log keys) per row.
fn selection_sql(selection: Selection<'_>) -> (String, Vec<SqlValue>) {
    let (mut sql, mut args) = filter_sql(selection.filters);
    let Some(groups) = selection.groups else { return (sql, args) };
    if groups.keys.is_empty() {
        sql.push_str(" AND 0");
        return (sql, args);
    }
    let columns: Vec<String> = groups.by.iter().map(|d| format!("ifnull({0}, ''), {0} IS NULL", d.column())).collect();
    let row = format!("({})", vec!["?"; 2 * groups.by.len()].join(", "));
    sql.push_str(&format!(" AND ({}) IN (VALUES {})", columns.join(", "), vec![row; groups.keys.len()].join(", ")));
    for key in groups.keys {
        for value in key {
            args.push(SqlValue::Text(value.clone().unwrap_or_default()));
            args.push(SqlValue::Integer(value.is_none().into()));
        }
    }
    (sql, args)
}

fn dims_key(dims: &Dims) -> String {
    serde_json::to_string(dims).unwrap_or_default()
}

/// Merges `deltas` into the stored rollups (read, merge, write back). O(deltas × rollup size).
fn add_to_rollups(tx: &Transaction<'_>, deltas: BTreeMap<RollupKey, Rollup>) -> Result<(), StoreError> {
    let mut read = tx.prepare_cached("SELECT data FROM rollups WHERE grain = ?1 AND bucket = ?2 AND dims_key = ?3").map_err(err)?;
    let mut write = tx
        .prepare_cached(
            "INSERT OR REPLACE INTO rollups (grain, bucket, dims_key, model, scenario, variant, app_version, connection, streams, data)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )
        .map_err(err)?;
    for (key, delta) in deltas {
        let dims = dims_key(&key.dims);
        let stored: Option<Vec<u8>> = read.query_row(params![key.grain.code(), key.bucket, dims], |r| r.get(0)).optional().map_err(err)?;
        let mut rollup = match stored {
            Some(bytes) => Rollup::decode(&bytes).map_err(err)?,
            None => Rollup::default(),
        };
        rollup.merge(&delta);
        let [model, scenario, variant, app_version, connection] = &key.dims;
        let streams = i64::try_from(rollup.count).unwrap_or(i64::MAX);
        write.execute(params![key.grain.code(), key.bucket, dims, model, scenario, variant, app_version, connection, streams, rollup.encode()]).map_err(err)?;
    }
    Ok(())
}

/// Rebuilds every rollup from the records, a day of records at a time (bounded memory).
fn rebuild_rollups(tx: &Transaction<'_>) -> Result<(), StoreError> {
    tx.execute("DELETE FROM rollups", []).map_err(err)?;
    let range: Option<(f64, f64)> = tx.query_row("SELECT min(started_at), max(started_at) FROM records WHERE def = ?1", [DEF], |r| Ok(r.get::<_, Option<f64>>(0)?.zip(r.get::<_, Option<f64>>(1)?))).map_err(err)?;
    let Some((first, last)) = range else { return Ok(()) };
    let day = Grain::Day.ms();
    let mut select = tx.prepare(&format!("SELECT {ROW_COLUMNS} FROM records WHERE def = ?1 AND started_at >= ?2 AND started_at < ?3")).map_err(err)?;
    let mut start = Grain::Day.bucket_of(first);
    while (start as f64) <= last {
        let rows = select.query_map(params![DEF, start as f64, (start + day) as f64], row_of).map_err(err)?.collect::<Result<Vec<_>, _>>().map_err(err)?;
        add_to_rollups(tx, rollups_of(&rows))?;
        start += day;
    }
    Ok(())
}
