//! The ClickHouse backend (`--clickhouse URL`, `--clickhouse-database NAME`): the records and their
//! rollups in a ClickHouse database, over its HTTP interface. Runs on ClickHouse 18.16 and later
//! ([`sql`] lists what it avoids for that).
//!
//! # Tables
//! - `records`: one row per stream record, the SQLite store's columns (`Nullable` where SQLite allows
//!   NULL) plus `ts`; `MergeTree`, one partition per day of `started_at`, sorted by (model,
//!   scenario, time).
//! - `rollups`: one row per write of a rollup key, [`Rollup::encode`] bytes in `data`. ClickHouse
//!   cannot merge those bytes, so the collector keeps one current value per key: the row with the
//!   highest `version` (`ReplacingMergeTree(version)`, read with `argMax`).
//! - `record_ids`: the ids of the committed records, sorted by id: the duplicate check.
//!
//! # Writing batches
//! ClickHouse has no transactions and no unique key, so one writer at a time (a mutex; **one
//! collector process per database**) writes. Batches that arrive while it writes wait in a queue and
//! are then written together (group commit): ClickHouse wants few large inserts (each insert makes a
//! new part per day it touches, about 170 files for `records` on 18.16), and concurrent beacons
//! share one. Each batch still gets its own answer. For the group's new records (id not in
//! `record_ids`, first copy within the group), in this order:
//! 1. read the current rollups of every key they touch (one query per 500 keys);
//! 2. insert the records;
//! 3. insert those rollups merged with the new records, under the next version;
//! 4. insert the ids into `record_ids`: the commit point.
//!
//! The order keeps two invariants whatever fails: rollups never count a record missing from
//! `records` (they are written after it), and an id is in `record_ids` only once its record and its
//! rollups are written. When step 2, 3 or 4 fails, the write is *settled* at once: of its records,
//! those found in `records` (an insert can fail after storing, or store only some of its days) get
//! the rollups they touch rebuilt from `records` and their ids added to `record_ids`. Each answer is
//! then the truth: all of the batch stored, `Ok`; none, the error (nothing of the batch is stored);
//! some (an insert cut short between partitions), the error too, and the sender's retry stores the
//! rest, the stored ones counting as duplicates. When settling fails as well (ClickHouse is
//! unreachable), the records stay pending in memory and the next write settles them first, refusing
//! to write until it can; when the process dies with records pending, [`ClickHouseStore::open`]
//! finds them (more records than ids) and settles them. Until then, rollups may miss those records;
//! likewise, a read during a write may see its records a few milliseconds before their rollups.
//!
//! Cost per write: 2 queries and 3 inserts; the rollups read and written are O(touched keys ×
//! rollup size). Inserts are synchronous (and `async_insert` is forced off where the server has
//! it), so a record is visible to every read once `insert_batch` returns.
//!
//! # Reads
//! `rollups` takes the latest version of each key in the bucket range; `rows` and `values` read the
//! records of definition version 1 in the window. Partitions outside the window are skipped (by
//! `bucket`, by `ts`). Every answer travels as RowBinary ([`rowbinary`]).

mod client;
mod rowbinary;
mod sql;
mod write;

use super::{Filters, Inserted, Store, StoreError};
use crate::dims::{Dims, Metric};
use crate::rollup::{Grain, Rollup, RollupKey, Row};
use crate::summary::DEF;
use crate::validate::Batch;
use client::Client;
use rowbinary::{Malformed, Reader, Writer};
use std::sync::{Arc, Mutex, MutexGuard};
use write::{Job, WriteState};

/// Values per `IN` list: keeps each query far below ClickHouse's query size and AST limits.
const CHUNK: usize = 500;

/// The columns a [`Row`] is read from, in [`row_of`]'s order.
const ROW_COLUMNS: &str = "started_at, model, scenario, variant, app_version, connection, output_tokens, ttft_ms, tpot_ms, gap_p90_ms, render_delay_p50_ms, stall_count, stall_total_ms";

pub struct ClickHouseStore {
    client: Client,
    db: String,
    /// URL parameters of every insert: the settings below that this server knows.
    insert_settings: Vec<(&'static str, &'static str)>,
    /// Batches waiting for the writer: whoever holds it next writes them all.
    queue: Mutex<Vec<Arc<Job>>>,
    writer: Mutex<WriteState>,
}

/// Settings forced on every insert when the server has them (ClickHouse 18.16 has neither and
/// refuses unknown ones): inserts must be synchronous, and a batch may span any number of days.
const INSERT_SETTINGS: [(&str, &str); 2] = [("async_insert", "0"), ("max_partitions_per_insert_block", "0")];

fn malformed(_: Malformed) -> StoreError {
    StoreError("clickhouse: malformed RowBinary answer".into())
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic mid-write leaves at worst a pending write, which the writer's state records before
    // writing and the next write settles.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A float as a SQL literal that reads back as the same number.
fn float(v: f64) -> String {
    format!("{v:?}")
}

impl ClickHouseStore {
    /// Connects to the ClickHouse at `url` (`http://host:port`, see [`client`]), creates `database`
    /// and the tables when missing, and settles the records a previous process left pending.
    /// Fails when ClickHouse does not answer, refuses the schema, or the name is not a plain identifier.
    pub fn open(url: &str, database: &str) -> Result<ClickHouseStore, StoreError> {
        let mut store = ClickHouseStore {
            client: Client::new(url)?,
            db: sql::database_name(database)?.to_owned(),
            insert_settings: Vec::new(),
            queue: Mutex::new(Vec::new()),
            writer: Mutex::new(WriteState { version: 0, pending: None }),
        };
        for statement in sql::schema(&store.db) {
            store.query(&statement)?;
        }
        let names: Vec<String> = INSERT_SETTINGS.iter().map(|(name, _)| sql::quote(name)).collect();
        let known = store.strings(&format!("SELECT name FROM system.settings WHERE name IN ({})", names.join(", ")))?;
        store.insert_settings = INSERT_SETTINGS.into_iter().filter(|(name, _)| known.iter().any(|k| k == name)).collect();
        let answer = store.query(&format!("SELECT max(version) FROM {}.rollups FORMAT RowBinary", store.db))?;
        let mut state = WriteState { version: Reader::new(&answer).u64().map_err(malformed)?, pending: None };
        store.settle_orphans(&mut state)?;
        store.writer = Mutex::new(state);
        Ok(store)
    }

    /// Runs `sql` and returns its answer. The server holds the answer until the query ends
    /// (`wait_end_of_query`), so a failure mid-query is an HTTP error, never a cut answer.
    fn query(&self, sql: &str) -> Result<Vec<u8>, StoreError> {
        self.client.post(&[("wait_end_of_query", "1"), ("max_query_size", "16777216")], sql.as_bytes())
    }

    /// The one `String` column of `sql`'s rows.
    fn strings(&self, sql: &str) -> Result<Vec<String>, StoreError> {
        let answer = self.query(&format!("{sql} FORMAT RowBinary"))?;
        let mut reader = Reader::new(&answer);
        let mut out = Vec::new();
        while !reader.is_empty() {
            out.push(reader.string().map_err(malformed)?);
        }
        Ok(out)
    }

    /// Inserts `rows` (RowBinary, in `columns` order) into `table`.
    fn insert_rows(&self, table: &str, columns: &str, rows: Writer) -> Result<(), StoreError> {
        let statement = format!("INSERT INTO {}.{table} ({columns}) FORMAT RowBinary", self.db);
        let mut params = vec![("query", statement.as_str())];
        params.extend(self.insert_settings.iter().copied());
        self.client.post(&params, &rows.into_bytes()).map(drop)
    }

    /// The rows of `query`, a `SELECT` of [`ROW_COLUMNS`].
    fn rows_of(&self, query: &str) -> Result<Vec<Row>, StoreError> {
        let answer = self.query(&format!("{query} FORMAT RowBinary"))?;
        let mut r = Reader::new(&answer);
        let mut out = Vec::new();
        while !r.is_empty() {
            out.push(row_of(&mut r).map_err(malformed)?);
        }
        Ok(out)
    }

    /// `FROM records WHERE ...` of `rows` and `values`: definition 1, `from <= started_at < to`,
    /// the filters.
    fn window(&self, from: i64, to: i64, filters: &Filters) -> String {
        let (from, to) = (from as f64, to as f64);
        format!(
            "FROM {}.records WHERE def = {DEF} AND started_at >= {} AND started_at < {}{}{}",
            self.db,
            float(from),
            float(to),
            sql::ts_range(from, to),
            sql::filters(filters)
        )
    }
}

impl Store for ClickHouseStore {
    fn insert_batch(&self, batch: &Batch, received_at: i64) -> Result<Inserted, StoreError> {
        self.write_batch(batch, received_at)
    }

    fn rollups(&self, grain: Grain, from: i64, to: i64, filters: &Filters) -> Result<Vec<(RollupKey, Rollup)>, StoreError> {
        let query = format!(
            "SELECT bucket, {dims}, argMax(data, version) FROM {db}.rollups WHERE grain = {grain} AND bucket >= {from} AND bucket < {to}{filters} \
             GROUP BY bucket, {dims} FORMAT RowBinary",
            dims = sql::dim_columns(),
            db = self.db,
            grain = sql::quote(grain.code()),
            filters = sql::filters(filters),
        );
        let answer = self.query(&query)?;
        let mut r = Reader::new(&answer);
        let mut out = Vec::new();
        while !r.is_empty() {
            let bucket = r.i64().map_err(malformed)?;
            let (dims, rollup) = read_dims_and_rollup(&mut r)?;
            out.push((RollupKey { grain, bucket, dims }, rollup));
        }
        Ok(out)
    }

    fn rows(&self, from: i64, to: i64, filters: &Filters) -> Result<Vec<Row>, StoreError> {
        self.rows_of(&format!("SELECT {ROW_COLUMNS} {}", self.window(from, to, filters)))
    }

    fn values(&self, metric: Metric, from: i64, to: i64, filters: &Filters) -> Result<Vec<f64>, StoreError> {
        let column = metric.column();
        let answer = self.query(&format!("SELECT assumeNotNull({column}) {} AND {column} IS NOT NULL FORMAT RowBinary", self.window(from, to, filters)))?;
        let mut r = Reader::new(&answer);
        let mut out = Vec::new();
        while !r.is_empty() {
            out.push(r.f64().map_err(malformed)?);
        }
        Ok(out)
    }

    fn ping(&self) -> Result<(), StoreError> {
        self.query("SELECT 1").map(drop)
    }
}

/// A row of [`ROW_COLUMNS`].
fn row_of(r: &mut Reader<'_>) -> Result<Row, Malformed> {
    Ok(Row {
        started_at: r.f64()?,
        dims: [r.opt_string()?, r.opt_string()?, r.opt_string()?, r.opt_string()?, r.opt_string()?],
        output_tokens: r.i64()?,
        ttft_ms: r.opt_f64()?,
        tpot_ms: r.opt_f64()?,
        gap_p90_ms: r.opt_f64()?,
        render_delay_p50_ms: r.opt_f64()?,
        stall_count: r.opt_i64()?,
        stall_total_ms: r.opt_f64()?,
    })
}

fn read_dims(r: &mut Reader<'_>) -> Result<Dims, StoreError> {
    let mut dims = Dims::default();
    for value in &mut dims {
        *value = r.opt_string().map_err(malformed)?;
    }
    Ok(dims)
}

fn read_dims_and_rollup(r: &mut Reader<'_>) -> Result<(Dims, Rollup), StoreError> {
    let dims = read_dims(r)?;
    let rollup = Rollup::decode(r.bytes().map_err(malformed)?).map_err(|e| StoreError(format!("clickhouse: {e}")))?;
    Ok((dims, rollup))
}
