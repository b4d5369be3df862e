//! The ClickHouse backend (`--clickhouse URL`, `--clickhouse-database NAME`): the records and their
//! rollups in a ClickHouse database, over its HTTP interface. Runs on ClickHouse 18.16 and later
//! ([`sql`] lists what it avoids for that).
//!
//! # Tables
//! - `records`: one row per stream record, the SQLite store's columns (`Nullable` where SQLite allows
//!   NULL) plus `ts`; `MergeTree`, one partition per day of `started_at`, sorted by (model,
//!   scenario, time).
//! - `rollups`: one row per write of a rollup key, [`Rollup::encode`] bytes in `data` and its stream
//!   count in `streams`. ClickHouse cannot merge those bytes, so the collector keeps one current
//!   value per key: the row with the highest `version` (`ReplacingMergeTree(version)`, read with
//!   `argMax`). A database made before `streams` existed gets the column, and its rollups rebuilt
//!   from `records`, on open.
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
//! records of definition version 1 in the window; `busiest_groups` sums the latest `streams` of
//! the window's rollups (and counts its partial minutes' records) per group in ClickHouse, and
//! counts the groups with a second query only when there are more than asked for. Partitions
//! outside the window are skipped (by `bucket`, by `ts`). Every answer travels as RowBinary
//! ([`rowbinary`]) and is read as it arrives, a row at a time.

mod client;
mod rowbinary;
mod sql;
mod write;

use super::{Busiest, Filters, Inserted, Selection, Store, StoreError};
use crate::dims::{Dim, Dims, Metric};
use crate::rollup::plan::{plan, Piece};
use crate::rollup::{Grain, Rollup, RollupKey, Row};
use crate::summary::DEF;
use crate::validate::Batch;
use client::Client;
use rowbinary::{ReadError, Reader, Writer};
use std::io::BufRead;
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

impl From<ReadError> for StoreError {
    fn from(e: ReadError) -> StoreError {
        match e {
            ReadError::Malformed => StoreError("clickhouse: malformed RowBinary answer".into()),
            ReadError::Io(e) => StoreError(format!("clickhouse: reading an answer: {e}")),
        }
    }
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
        let mut state = WriteState { version: Reader::new(&answer[..]).u64()?, pending: None };
        let streams = store.strings(&format!("SELECT name FROM system.columns WHERE database = {} AND table = 'rollups' AND name = 'streams'", sql::quote(&store.db)))?;
        if streams.is_empty() {
            store.query(&format!("ALTER TABLE {}.rollups ADD COLUMN {}", store.db, sql::STREAMS_COLUMN))?;
            store.rebuild_every_rollup(&mut state)?;
        }
        store.settle_orphans(&mut state)?;
        store.writer = Mutex::new(state);
        Ok(store)
    }

    /// Runs `sql` and returns its answer. The server holds the answer until the query ends
    /// (`wait_end_of_query`), so a failure mid-query is an HTTP error, never a cut answer.
    fn query(&self, sql: &str) -> Result<Vec<u8>, StoreError> {
        self.client.post(&QUERY_SETTINGS, sql.as_bytes())
    }

    /// Runs `sql` (a `SELECT` without `FORMAT`) and calls `read_row` for each row of its RowBinary
    /// answer as it arrives: memory O(a row) whatever the answer's size.
    fn for_each_row(&self, sql: &str, mut read_row: impl FnMut(&mut Reader<&mut dyn BufRead>) -> Result<(), StoreError>) -> Result<(), StoreError> {
        self.client.post_streaming(&QUERY_SETTINGS, format!("{sql} FORMAT RowBinary").as_bytes(), |answer| {
            let mut reader = Reader::new(answer);
            while !reader.is_empty()? {
                read_row(&mut reader)?;
            }
            Ok(())
        })
    }

    /// The one `String` column of `sql`'s rows.
    fn strings(&self, sql: &str) -> Result<Vec<String>, StoreError> {
        let mut out = Vec::new();
        self.for_each_row(sql, |r| {
            out.push(r.string()?);
            Ok(())
        })?;
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
        let mut out = Vec::new();
        self.for_each_row(query, |r| {
            out.push(row_of(r)?);
            Ok(())
        })?;
        Ok(out)
    }

    /// `FROM records WHERE ...` of the reads: definition 1, `from <= started_at < to`, and
    /// `selected` (SQL conditions, each starting with ` AND`).
    fn window(&self, from: i64, to: i64, selected: &str) -> String {
        let (from, to) = (from as f64, to as f64);
        format!("FROM {}.records WHERE def = {DEF} AND started_at >= {} AND started_at < {}{}{selected}", self.db, float(from), float(to), sql::ts_range(from, to))
    }
}

/// URL parameters of every query: see [`ClickHouseStore::query`].
const QUERY_SETTINGS: [(&str, &str); 2] = [("wait_end_of_query", "1"), ("max_query_size", "16777216")];

impl Store for ClickHouseStore {
    fn insert_batch(&self, batch: &Batch, received_at: i64) -> Result<Inserted, StoreError> {
        self.write_batch(batch, received_at)
    }

    fn rollups(&self, grain: Grain, from: i64, to: i64, selection: Selection<'_>, visit: &mut dyn FnMut(RollupKey, Rollup)) -> Result<(), StoreError> {
        let query = format!(
            "SELECT bucket, {dims}, argMax(data, version) FROM {db}.rollups WHERE grain = {grain} AND bucket >= {from} AND bucket < {to}{selected} \
             GROUP BY bucket, {dims} ORDER BY bucket",
            dims = sql::dim_columns(),
            db = self.db,
            grain = sql::quote(grain.code()),
            selected = sql::selection(selection),
        );
        self.for_each_row(&query, |r| {
            let bucket = r.i64()?;
            let (dims, rollup) = read_dims_and_rollup(r)?;
            visit(RollupKey { grain, bucket, dims }, rollup);
            Ok(())
        })
    }

    fn rows(&self, from: i64, to: i64, selection: Selection<'_>, visit: &mut dyn FnMut(Row)) -> Result<(), StoreError> {
        let query = format!("SELECT {ROW_COLUMNS} {} ORDER BY started_at", self.window(from, to, &sql::selection(selection)));
        self.for_each_row(&query, |r| {
            visit(row_of(r)?);
            Ok(())
        })
    }

    fn values(&self, metric: Metric, from: i64, to: i64, filters: &Filters, visit: &mut dyn FnMut(f64)) -> Result<(), StoreError> {
        let column = metric.column();
        let query = format!("SELECT assumeNotNull({column}) {} AND {column} IS NOT NULL", self.window(from, to, &sql::filters(filters)));
        self.for_each_row(&query, |r| {
            visit(r.f64()?);
            Ok(())
        })
    }

    /// The window's pieces ([`plan`]: the latest `streams` of each rollup key, 1 per record of the
    /// partial minutes) under `UNION ALL`, grouped, ranked and cut by ClickHouse; asking for one
    /// group more than `limit` tells whether the groups must be counted (a second query).
    fn busiest_groups(&self, from: i64, to: i64, group_by: &[Dim], filters: &Filters, limit: usize) -> Result<Busiest, StoreError> {
        let (dims, filters) = (sql::dim_columns(), sql::filters(filters));
        let pieces: Vec<String> = plan(from, to, Grain::Day)
            .into_iter()
            .map(|piece| match piece {
                Piece::Rollups(grain, start, end) => format!(
                    "SELECT {dims}, argMax(streams, version) AS n FROM {}.rollups WHERE grain = {} AND bucket >= {start} AND bucket < {end}{filters} GROUP BY bucket, {dims}",
                    self.db,
                    sql::quote(grain.code())
                ),
                Piece::Records(start, end) => format!("SELECT {dims}, toUInt64(1) AS n {}", self.window(start, end, &filters)),
            })
            .collect();
        if pieces.is_empty() {
            return Ok(Busiest { keys: Vec::new(), total: 0 });
        }
        let columns = group_by.iter().map(|d| d.column()).collect::<Vec<_>>().join(", ");
        let groups = format!("FROM ({}) GROUP BY {columns}", pieces.join(" UNION ALL "));
        // Null first, then by bytes: the order of `Option<String>`.
        let key_order = group_by.iter().map(|d| format!("isNull({0}) DESC, ifNull({0}, '')", d.column())).collect::<Vec<_>>().join(", ");
        let mut keys = Vec::new();
        self.for_each_row(&format!("SELECT {columns} {groups} ORDER BY sum(n) DESC, {key_order} LIMIT {}", limit.saturating_add(1)), |r| {
            keys.push(group_by.iter().map(|_| r.opt_string()).collect::<Result<_, _>>()?);
            Ok(())
        })?;
        if keys.len() <= limit {
            return Ok(Busiest { total: keys.len() as u64, keys });
        }
        keys.truncate(limit);
        let answer = self.query(&format!("SELECT count() FROM (SELECT 1 {groups}) FORMAT RowBinary"))?;
        Ok(Busiest { keys, total: Reader::new(&answer[..]).u64()? })
    }

    fn ping(&self) -> Result<(), StoreError> {
        self.query("SELECT 1").map(drop)
    }
}

/// A row of [`ROW_COLUMNS`].
fn row_of<R: BufRead>(r: &mut Reader<R>) -> Result<Row, ReadError> {
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

fn read_dims<R: BufRead>(r: &mut Reader<R>) -> Result<Dims, StoreError> {
    let mut dims = Dims::default();
    for value in &mut dims {
        *value = r.opt_string()?;
    }
    Ok(dims)
}

fn read_dims_and_rollup<R: BufRead>(r: &mut Reader<R>) -> Result<(Dims, Rollup), StoreError> {
    let dims = read_dims(r)?;
    let rollup = Rollup::decode(&r.bytes()?).map_err(|e| StoreError(format!("clickhouse: {e}")))?;
    Ok((dims, rollup))
}
