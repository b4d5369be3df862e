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
//! # Writing a batch
//! ClickHouse has no transactions and no unique key, so writes are serialized by a mutex (**one
//! collector process per database**). For the batch's records whose id is new (not in `record_ids`,
//! and the first copy within the batch), in this order:
//! 1. read the current rollups of every key the new records touch (one query per 500 keys);
//! 2. insert the records;
//! 3. insert those rollups merged with the new records, under the next version;
//! 4. insert the ids into `record_ids`: the commit point.
//!
//! The order keeps two invariants whatever fails: rollups never count a record missing from
//! `records` (they are written after it), and an id is in `record_ids` only once its record and its
//! rollups are written. When step 2, 3 or 4 fails, the batch is *settled* at once: of its records,
//! those found in `records` (an insert can fail after storing, or store only some of its days) get
//! the rollups they touch rebuilt from `records` and their ids added to `record_ids`. The answer is
//! then the truth: all stored, `Ok`; none stored, the error (nothing of the batch is stored); some
//! stored (an insert cut short between partitions), the error too, and the sender's retry stores
//! the rest, the stored ones counting as duplicates. When settling fails as well (ClickHouse is
//! unreachable), the batch stays pending in memory and the next write settles it first, refusing to
//! write until it can; when the process dies with a batch pending, [`ClickHouseStore::open`] finds
//! its records (more records than ids) and settles them. Until then, rollups may miss those records;
//! likewise, a read during a write may see its records a few milliseconds before their rollups.
//!
//! Cost per batch: 2 queries and 3 inserts, each insert a new part per day it touches (ClickHouse
//! merges parts in the background); the rollups read and written are O(touched keys × rollup size).
//! Inserts are synchronous (and `async_insert` is forced off where the server has it), so a record
//! is visible to every read once `insert_batch` returns.
//!
//! # Reads
//! `rollups` takes the latest version of each key in the bucket range; `rows` and `values` read the
//! records of definition version 1 in the window. Partitions outside the window are skipped (by
//! `bucket`, by `ts`). Every answer travels as RowBinary ([`rowbinary`]).

mod client;
mod rowbinary;
mod sql;

use super::{Filters, Inserted, Store, StoreError};
use crate::dims::{Dims, Metric};
use crate::rollup::{rollups_of, Grain, Rollup, RollupKey, Row};
use crate::summary::DEF;
use crate::validate::{Batch, Record};
use client::Client;
use rowbinary::{Malformed, Reader, Writer};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::{Mutex, MutexGuard};

/// Values per `IN` list: keeps each query far below ClickHouse's query size and AST limits.
const CHUNK: usize = 500;

/// The columns a [`Row`] is read from, in [`row_of`]'s order.
const ROW_COLUMNS: &str = "started_at, model, scenario, variant, app_version, connection, output_tokens, ttft_ms, tpot_ms, gap_p90_ms, render_delay_p50_ms, stall_count, stall_total_ms";

pub struct ClickHouseStore {
    client: Client,
    db: String,
    /// URL parameters of every insert: the settings below that this server knows.
    insert_settings: Vec<(&'static str, &'static str)>,
    writer: Mutex<WriteState>,
}

/// Settings forced on every insert when the server has them (ClickHouse 18.16 has neither and
/// refuses unknown ones): inserts must be synchronous, and a batch may span any number of days.
const INSERT_SETTINGS: [(&str, &str); 2] = [("async_insert", "0"), ("max_partitions_per_insert_block", "0")];

/// What the writer keeps between batches.
struct WriteState {
    /// The highest rollup version written so far.
    version: u64,
    /// The new records of the batch being written, or of one whose write failed and could not be
    /// settled yet.
    pending: Option<Vec<Unsettled>>,
}

/// What settling needs of a record that a failed write may or may not have stored.
struct Unsettled {
    id: String,
    started_at: f64,
    def: i64,
    dims: Dims,
}

impl Unsettled {
    fn of(r: &Record) -> Unsettled {
        Unsettled { id: r.id.clone(), started_at: r.started_at, def: r.def, dims: Row::from_record(r).dims }
    }
}

fn malformed(_: Malformed) -> StoreError {
    StoreError("clickhouse: malformed RowBinary answer".into())
}

fn lock(m: &Mutex<WriteState>) -> MutexGuard<'_, WriteState> {
    // A panic mid-write leaves at worst a pending batch, which the state records before writing
    // and the next write settles.
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
            writer: Mutex::new(WriteState { version: 0, pending: None }),
        };
        for statement in sql::schema(&store.db) {
            store.query(&statement)?;
        }
        let names: Vec<String> = INSERT_SETTINGS.iter().map(|(name, _)| sql::quote(name)).collect();
        let known = store.strings(&format!("SELECT name FROM system.settings WHERE name IN ({})", names.join(", ")))?;
        store.insert_settings = INSERT_SETTINGS.into_iter().filter(|(name, _)| known.iter().any(|k| k == name)).collect();
        let mut state = lock(&store.writer);
        let answer = store.query(&format!("SELECT max(version) FROM {}.rollups FORMAT RowBinary", store.db))?;
        state.version = Reader::new(&answer).u64().map_err(malformed)?;
        store.settle_orphans(&mut state)?;
        drop(state);
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

    fn insert(&self, table: &str, columns: &str, rows: Writer) -> Result<(), StoreError> {
        let statement = format!("INSERT INTO {}.{table} ({columns}) FORMAT RowBinary", self.db);
        let mut params = vec![("query", statement.as_str())];
        params.extend(self.insert_settings.iter().copied());
        self.client.post(&params, &rows.into_bytes()).map(drop)
    }

    fn insert_records(&self, records: &[&Record], batch: &Batch, received_at: i64) -> Result<(), StoreError> {
        let mut w = Writer::default();
        for r in records {
            write_record(&mut w, r, batch, received_at);
        }
        let columns: Vec<&str> = sql::RECORD_COLUMNS.iter().map(|(name, _)| *name).collect();
        self.insert("records", &columns.join(", "), w)
    }

    /// Writes `rollups` as the current value of their keys (the next version).
    fn insert_rollups(&self, state: &mut WriteState, rollups: &BTreeMap<RollupKey, Rollup>) -> Result<(), StoreError> {
        if rollups.is_empty() {
            return Ok(());
        }
        state.version += 1;
        let mut w = Writer::default();
        for (key, rollup) in rollups {
            w.string(key.grain.code());
            w.i64(key.bucket);
            for value in &key.dims {
                w.opt_string(value.as_deref());
            }
            w.u64(state.version);
            w.bytes(&rollup.encode());
        }
        self.insert("rollups", &format!("grain, bucket, {}, version, data", sql::dim_columns()), w)
    }

    fn insert_ids(&self, ids: &[&str]) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        let mut w = Writer::default();
        ids.iter().for_each(|id| w.string(id));
        self.insert("record_ids", "id", w)
    }

    /// Those of `ids` in `record_ids`.
    fn committed(&self, ids: &[&str]) -> Result<HashSet<String>, StoreError> {
        let mut out = HashSet::new();
        for chunk in ids.chunks(CHUNK) {
            let list: Vec<String> = chunk.iter().map(|id| sql::quote(id)).collect();
            out.extend(self.strings(&format!("SELECT id FROM {}.record_ids WHERE id IN ({})", self.db, list.join(", ")))?);
        }
        Ok(out)
    }

    /// The current value of those of `keys` that are stored.
    fn current_rollups<'a>(&self, keys: impl Iterator<Item = &'a RollupKey>) -> Result<BTreeMap<RollupKey, Rollup>, StoreError> {
        let keys: Vec<&RollupKey> = keys.collect();
        let mut out = BTreeMap::new();
        for chunk in keys.chunks(CHUNK) {
            let buckets: BTreeSet<i64> = chunk.iter().map(|k| k.bucket).collect();
            let literals: Vec<String> = chunk.iter().map(|k| sql::rollup_key_literal(k)).collect();
            let query = format!(
                // `bucket IN` lets ClickHouse skip the other days' partitions.
                "SELECT grain, bucket, {dims}, argMax(data, version) FROM {db}.rollups WHERE bucket IN ({buckets}) AND {key} IN ({literals}) \
                 GROUP BY grain, bucket, {dims} FORMAT RowBinary",
                dims = sql::dim_columns(),
                db = self.db,
                buckets = buckets.iter().map(i64::to_string).collect::<Vec<_>>().join(", "),
                key = sql::rollup_key(),
                literals = literals.join(", "),
            );
            let answer = self.query(&query)?;
            let mut r = Reader::new(&answer);
            while !r.is_empty() {
                let code = r.string().map_err(malformed)?;
                let grain = Grain::from_code(&code).ok_or_else(|| StoreError(format!("clickhouse: unknown grain {code:?} in rollups")))?;
                let bucket = r.i64().map_err(malformed)?;
                let (dims, rollup) = read_dims_and_rollup(&mut r)?;
                out.insert(RollupKey { grain, bucket, dims }, rollup);
            }
        }
        Ok(out)
    }

    /// Settles `records` after a failed write (see the module doc) and returns how many of them are
    /// stored. Idempotent: settling again changes nothing.
    fn settle(&self, state: &mut WriteState, records: &[Unsettled]) -> Result<usize, StoreError> {
        if records.is_empty() {
            return Ok(0);
        }
        let lo = records.iter().map(|r| r.started_at).fold(f64::INFINITY, f64::min);
        let hi = records.iter().map(|r| r.started_at).fold(f64::NEG_INFINITY, f64::max);
        let mut in_records = HashSet::new();
        for chunk in records.chunks(CHUNK) {
            let list: Vec<String> = chunk.iter().map(|r| sql::quote(&r.id)).collect();
            let query = format!("SELECT id FROM {}.records WHERE id IN ({}){}", self.db, list.join(", "), sql::ts_range(lo, hi));
            in_records.extend(self.strings(&query)?);
        }
        let stored: Vec<&Unsettled> = records.iter().filter(|r| in_records.contains(&r.id)).collect();
        let touched: BTreeSet<(i64, Dims)> = stored.iter().filter(|r| r.def == DEF).map(|r| (Grain::Day.bucket_of(r.started_at), r.dims.clone())).collect();
        let touched: Vec<(i64, Dims)> = touched.into_iter().collect();
        for chunk in touched.chunks(CHUNK) {
            self.rebuild_rollups(state, chunk)?;
        }
        let ids: Vec<&str> = stored.iter().map(|r| r.id.as_str()).collect();
        let committed = self.committed(&ids)?;
        let missing: Vec<&str> = ids.into_iter().filter(|id| !committed.contains(*id)).collect();
        self.insert_ids(&missing)?;
        Ok(stored.len())
    }

    /// Rewrites, from `records`, every rollup (all grains) of each (day bucket, dimensions) pair.
    fn rebuild_rollups(&self, state: &mut WriteState, days: &[(i64, Dims)]) -> Result<(), StoreError> {
        let dims: BTreeSet<String> = days.iter().map(|(_, d)| sql::dims_literal(d)).collect();
        let day_ms = Grain::Day.ms() as f64;
        let ranges: BTreeSet<String> = days
            .iter()
            .map(|&(day, _)| {
                let (from, to) = (day as f64, day as f64 + day_ms);
                format!("(started_at >= {} AND started_at < {}{})", float(from), float(to), sql::ts_range(from, to))
            })
            .collect();
        let query = format!(
            "SELECT {ROW_COLUMNS} FROM {}.records WHERE def = {DEF} AND {} IN ({}) AND ({})",
            self.db,
            sql::dims_key(),
            dims.into_iter().collect::<Vec<_>>().join(", "),
            ranges.into_iter().collect::<Vec<_>>().join(" OR ")
        );
        let wanted: HashSet<&(i64, Dims)> = days.iter().collect();
        let rows: Vec<Row> = self.rows_of(&query)?.into_iter().filter(|r| wanted.contains(&(Grain::Day.bucket_of(r.started_at), r.dims.clone()))).collect();
        self.insert_rollups(state, &rollups_of(&rows))
    }

    /// Settles the records a process that died mid-batch left in `records` without their ids in
    /// `record_ids`. Two counts when there are none (the usual case); otherwise a scan of the ids.
    fn settle_orphans(&self, state: &mut WriteState) -> Result<(), StoreError> {
        let answer = self.query(&format!("SELECT (SELECT count() FROM {0}.records), (SELECT count() FROM {0}.record_ids) FORMAT RowBinary", self.db))?;
        let mut r = Reader::new(&answer);
        let (records, ids) = (r.u64().map_err(malformed)?, r.u64().map_err(malformed)?);
        if records <= ids {
            return Ok(());
        }
        let answer = self.query(&format!(
            "SELECT id, started_at, def, {dims} FROM {db}.records WHERE id NOT IN (SELECT id FROM {db}.record_ids) FORMAT RowBinary",
            dims = sql::dim_columns(),
            db = self.db
        ))?;
        let mut r = Reader::new(&answer);
        let mut orphans = Vec::new();
        while !r.is_empty() {
            let (id, started_at, def) = (r.string().map_err(malformed)?, r.f64().map_err(malformed)?, r.i64().map_err(malformed)?);
            orphans.push(Unsettled { id, started_at, def, dims: read_dims(&mut r)? });
        }
        self.settle(state, &orphans).map(drop)
    }

    fn rows_of(&self, query: &str) -> Result<Vec<Row>, StoreError> {
        let answer = self.query(&format!("{query} FORMAT RowBinary"))?;
        let mut r = Reader::new(&answer);
        let mut out = Vec::new();
        while !r.is_empty() {
            out.push(row_of(&mut r).map_err(malformed)?);
        }
        Ok(out)
    }

    /// ` WHERE` of `rows` and `values`: definition 1, `from <= started_at < to`, the filters.
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
        let mut state = lock(&self.writer);
        if let Some(pending) = state.pending.take() {
            if let Err(e) = self.settle(&mut state, &pending) {
                state.pending = Some(pending);
                return Err(StoreError(format!("{e} (settling an earlier batch; nothing of this one was stored)")));
            }
        }
        let mut seen = HashSet::new();
        let firsts: Vec<&Record> = batch.records.iter().filter(|r| seen.insert(r.id.as_str())).collect();
        let committed = self.committed(&firsts.iter().map(|r| r.id.as_str()).collect::<Vec<_>>())?;
        let new: Vec<&Record> = firsts.into_iter().filter(|r| !committed.contains(&r.id)).collect();
        let inserted = Inserted { accepted: new.len(), duplicates: batch.records.len() - new.len() };
        if new.is_empty() {
            return Ok(inserted);
        }
        let rows: Vec<Row> = new.iter().filter(|r| r.def == DEF).map(|r| Row::from_record(r)).collect();
        let deltas = rollups_of(&rows);
        let mut merged = self.current_rollups(deltas.keys())?;
        for (key, delta) in deltas {
            merged.entry(key).or_default().merge(&delta);
        }
        // From here a failure may leave part of the batch stored: it is pending until written or
        // settled (see the module doc), even if this thread panics.
        state.pending = Some(new.iter().map(|r| Unsettled::of(r)).collect());
        let ids: Vec<&str> = new.iter().map(|r| r.id.as_str()).collect();
        let written = self.insert_records(&new, batch, received_at).and_then(|()| self.insert_rollups(&mut state, &merged)).and_then(|()| self.insert_ids(&ids));
        let unsettled = state.pending.take().unwrap_or_default();
        let Err(e) = written else { return Ok(inserted) };
        match self.settle(&mut state, &unsettled) {
            Ok(stored) if stored == new.len() => Ok(inserted),
            Ok(0) => Err(e),
            Ok(stored) => Err(StoreError(format!("{e} ({stored} of the {} new records were stored; a retry stores the rest)", new.len()))),
            Err(settle_error) => {
                state.pending = Some(unsettled);
                Err(StoreError(format!("{e}; then settling failed: {settle_error}")))
            }
        }
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

/// One record as a `records` row, in [`sql::RECORD_COLUMNS`] order.
fn write_record(w: &mut Writer, r: &Record, batch: &Batch, received_at: i64) {
    w.string(&r.id);
    w.f64(r.started_at);
    w.u32(sql::ts_of(r.started_at));
    w.i64(r.def);
    for text in [&r.model, &r.scenario, &r.variant, &r.app_version, &r.connection, &r.url, &r.format] {
        w.opt_string(text.as_deref());
    }
    w.string(&r.status);
    w.opt_i64(r.http_status);
    w.opt_string(r.render_source.as_deref());
    w.string(&r.browser);
    for v in [r.ttfb_ms, r.ttft_ms, r.ttft_arrival_ms, r.ttfo_ms, r.tpot_ms, r.tpot_arrival_ms, r.tokens_per_second] {
        w.opt_f64(v);
    }
    w.i64(r.output_tokens);
    w.string(&r.token_source);
    w.i64(r.reasoning_tokens);
    w.i64(r.output_events);
    for v in [r.gap_p50_ms, r.gap_p90_ms, r.gap_p99_ms, r.gap_max_ms, r.arrival_gap_p90_ms, r.jitter_ms] {
        w.opt_f64(v);
    }
    w.opt_i64(r.stall_count);
    w.opt_i64(r.stall_count_1000);
    for v in [r.stall_longest_ms, r.stall_total_ms, r.render_delay_p50_ms, r.render_delay_p90_ms, r.duration_ms] {
        w.opt_f64(v);
    }
    w.u8(r.hidden.into());
    w.opt_string(r.finish_reason.as_deref());
    w.opt_f64(r.rtt_ms);
    w.opt_f64(r.device_memory_gb);
    w.opt_i64(r.cores);
    w.string(&batch.session_id);
    w.string(&batch.page_id);
    w.string(&batch.batch_id);
    w.f64(batch.sample_rate);
    w.i64(received_at);
    w.string(&r.raw);
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
