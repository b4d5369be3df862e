//! The ClickHouse backend (`--clickhouse URL`, `--clickhouse-database NAME`): the records and their
//! rollups in a ClickHouse database, over its HTTP interface, written by any number of collectors
//! at once. Runs on ClickHouse 18.16 and later ([`sql`] lists what it avoids for that; the test
//! suite replays every statement on a current ClickHouse too).
//!
//! # Tables
//! - `records`: one row per stored copy of a record, the SQLite store's columns (`Nullable` where
//!   SQLite allows NULL) plus `ts` (seconds), `copy` (which copy: see below) and the record's
//!   DDSketch bucket keys; `MergeTree`, one partition per day of `started_at`, sorted by (model,
//!   scenario, time).
//! - `rollup_states` and `sketch_buckets`: the rollups at every grain ([`states`]), as aggregate
//!   states (`AggregatingMergeTree`) and as DDSketch bucket counts (`SummingMergeTree`), filled by
//!   materialized views as records are inserted, merged by ClickHouse itself. No collector reads,
//!   merges or rewrites a rollup: nothing to serialize between writers.
//! - `copies`: every copy's id and figures, sorted by id (a view of `records`): where copies of one
//!   record inserted by different collectors meet.
//! - `duplicates`: the copies that repeat an earlier one; every read takes them out.
//! - `unique_records`: a view of `records` without the duplicate copies, for people querying the
//!   database (the store's reads put the same condition in their own queries, after the window's,
//!   so ClickHouse 18.16, which does not push conditions into views, still skips partitions).
//!
//! # Nothing counted twice, nothing lost
//! A beacon may reach two collectors (a retry after a lost answer, or a load balancer's retry), so
//! two copies of a record may be inserted concurrently, and ClickHouse has no unique key. Each
//! insert gives its copies a `copy` number, its collector's clock in ms `<< 20` plus 20 random
//! bits, so the earlier copy has the lower number (across collectors, within their clocks' skew).
//! After each insert the collector looks its ids up in `copies`: any id found more than once has
//! every copy but the lowest written to `duplicates`
//! (idempotent: marking one twice changes nothing). Of two concurrent inserts of one id, the one
//! that finishes second sees both, so every extra copy is marked once both inserts are done. A
//! batch's answer counts a record as accepted when its lookup found its copy alone: each record is
//! accepted by one answer at most (two copies inserted at the same moment may both be answered as
//! duplicates; the figures count the record once all the same).
//!
//! The guarantee: once the collectors that wrote the copies of a record have answered (200 or an
//! error), every figure counts that record once, whichever collectors got it and in whatever order.
//! A collector killed between its insert and its lookup leaves its copies unmarked; the collector
//! that gets the sender's retry marks them (it finds them), and every collector marks those of
//! the last [`SWEEP_MS`] when it starts. A beacon answered 200 is stored in ClickHouse (inserts are
//! synchronous), so it survives the collector's `kill -9`. ClickHouse's own failure midway
//! through an insert may leave its views behind `records` (ClickHouse applies a view's insert after
//! the table's, without a transaction); the batch's answer is then an error.
//!
//! # Writing batches
//! A collector gathers the batches it accepts into large inserts, as ClickHouse wants (each insert
//! makes a part per day it touches, in each table): one writer thread takes every batch queued
//! within [`FLUSH_MS`] of the first, up to [`FLUSH_RECORDS`] records or [`QUEUE_BATCHES`] batches
//! (as many as the HTTP layer lets wait: [`Store::writes_at_once`]), and writes them with one insert
//! and one lookup. Each batch is answered once its records are stored. Memory is bounded by the
//! queue.
//!
//! # Why this design
//! docs/clickhouse-design.md: aggregation in the database, marks and subtraction for copies, one
//! lookup per insert, one view per table, rollups as plain states; each with its measurement.
//!
//! # Reads
//! `rollups` merges the states of each key in the bucket range, adds the bucket counts the caller
//! needs (of the selected keys: `dims_key IN` those of the states read) and subtracts the duplicate
//! copies of that range; it holds the range's rollups in memory until their counts, which come in
//! no order, are in (O(rollups read + bucket counts read)), then visits them in bucket order. `rows`
//! and `unit_rows` read the records of definition version 1 in the window that are not duplicate
//! copies; `busiest_groups` sums the stream counts of the window's rollups (and counts its partial
//! minutes' records) per group in ClickHouse, less the duplicates, and counts the groups with a
//! second query only when there are more than asked for. Partitions outside the window are skipped
//! (by `bucket`, by `ts`). Every answer travels as RowBinary ([`rowbinary`]) and is read as it
//! arrives, a row at a time.

mod client;
mod rowbinary;
mod sql;
mod states;
mod upkeep;
mod write;

use super::{cadence_points, Busiest, Inserted, JointNeed, Needs, Selection, Store, StoreError};
use crate::dims::{Dim, Dims, Filters, Unit, DEF};
use crate::rollup::plan::{plan, Piece};
use crate::rollup::{bunched, stops, Grain, Rollup, RollupKey, Row};
use crate::store::stream::{self, Order, Stream};
use crate::validate::Batch;
use client::Client;
use rowbinary::{ReadError, Reader};
use states::Parts;
use std::collections::HashMap;
use std::io::BufRead;
use std::sync::Arc;
use upkeep::Upkeep;
use write::Writer;

pub use upkeep::UPKEEP_MS;
pub use write::{FLUSH_MS, FLUSH_RECORDS, QUEUE_BATCHES, SWEEP_MS};

/// The columns a [`Row`] is read from, in [`row_of`]'s order.
const ROW_COLUMNS: &str = "started_at, model, scenario, variant, app_version, connection, output_tokens, ttft_ms, tpot_ms, gap_p90_ms, render_delay_p50_ms, stall_count, stall_total_ms, isNotNull(ttft_arrival_ms), status, arrival_gap_p50_ms, output_events";

pub struct ClickHouseStore {
    database: Arc<Database>,
    writer: Writer,
    _upkeep: Upkeep,
}

/// The connection to one database: what the reads and the writer thread share.
struct Database {
    client: Client,
    db: String,
    /// URL parameters of every insert: the settings below that this server knows.
    insert_settings: Vec<(&'static str, &'static str)>,
}

/// Settings forced on every insert when the server has them (ClickHouse 18.16 has neither and
/// refuses unknown ones): inserts must be synchronous, and a batch may span any number of days.
const INSERT_SETTINGS: [(&str, &str); 2] = [("async_insert", "0"), ("max_partitions_per_insert_block", "0")];

/// URL parameters of every query: see [`Database::query`]. `priority` 1 is ClickHouse's highest
/// (0 would mean "no priority", which pauses nothing).
const QUERY_SETTINGS: [(&str, &str); 3] = [("wait_end_of_query", "1"), ("max_query_size", "16777216"), INGEST_PRIORITY];

/// The priority of ingest's queries and inserts, and of the store's own upkeep.
const INGEST_PRIORITY: (&str, &str) = ("priority", "1");

/// [`QUERY_SETTINGS`] for the analytics' reads, at a lower priority than ingest's queries and
/// inserts: ClickHouse pauses them while those run, so a dashboard never holds beacons up.
const ANALYTICS_SETTINGS: [(&str, &str); 3] = [QUERY_SETTINGS[0], QUERY_SETTINGS[1], ("priority", "2")];

impl From<ReadError> for StoreError {
    fn from(e: ReadError) -> StoreError {
        match e {
            ReadError::Malformed => StoreError("clickhouse: malformed RowBinary answer".into()),
            ReadError::Io(e) => StoreError(format!("clickhouse: reading an answer: {e}")),
        }
    }
}

/// A float as a SQL literal that reads back as the same number.
fn float(v: f64) -> String {
    format!("{v:?}")
}

impl ClickHouseStore {
    /// Connects to the ClickHouse at `url` (`http://host:port`, see [`client`]), creates `database`,
    /// its tables and views when missing (and the columns added since, in a `records` table made
    /// before them, with `unique_records` made again to show them), marks the duplicate copies a
    /// collector killed mid-write may have left (the last [`SWEEP_MS`]), and starts the writer and
    /// upkeep threads. Fails when ClickHouse
    /// does not answer, refuses the schema, the name is not a plain identifier, the database was
    /// made by a collector before rollups moved into ClickHouse, or its `records` lacks an added
    /// column and is not the single-server `MergeTree` (a cluster's tables are altered by their
    /// operator: docs/deploy.md, upgrading).
    pub fn open(url: &str, database: &str) -> Result<ClickHouseStore, StoreError> {
        let mut db = Database { client: Client::new(url)?, db: sql::database_name(database)?.to_owned(), insert_settings: Vec::new() };
        let name = sql::quote(&db.db);
        let earlier = db.strings(&format!(
            "SELECT 'one writer, rollups kept by the collector' FROM system.tables WHERE database = {name} AND name = 'rollups' AND engine = 'ReplacingMergeTree' \
             UNION ALL SELECT 'bucket counts as sumMap states' FROM system.columns WHERE database = {name} AND table = 'rollup_states' AND name = 'counts'"
        ))?;
        if let Some(design) = earlier.first() {
            return Err(StoreError(format!(
                "clickhouse: database {} was made by an earlier collector ({design}); \
                 give a new --clickhouse-database, or move the database over (docs/deploy.md, upgrading)",
                db.db
            )));
        }
        let missing = db.missing_record_columns()?;
        for statement in sql::schema(&db.db) {
            db.query(&statement)?;
        }
        for column in &missing {
            db.query(&sql::added_column(&db.db, column))?;
        }
        if !missing.is_empty() {
            db.query(&format!("DROP TABLE IF EXISTS {}.unique_records", db.db))?;
            db.query(&sql::unique_records(&db.db))?;
        }
        let names: Vec<String> = INSERT_SETTINGS.iter().map(|(name, _)| sql::quote(name)).collect();
        let known = db.strings(&format!("SELECT name FROM system.settings WHERE name IN ({})", names.join(", ")))?;
        db.insert_settings = INSERT_SETTINGS.into_iter().filter(|(name, _)| known.iter().any(|k| k == name)).collect();
        let database = Arc::new(db);
        write::sweep(&database)?;
        Ok(ClickHouseStore { writer: Writer::start(Arc::clone(&database)), _upkeep: Upkeep::start(Arc::clone(&database)), database })
    }
}

impl Database {
    /// The columns of [`sql::ADDED_RECORD_COLUMNS`] that an existing `records` lacks, when it is the
    /// single-server table this store creates; an error naming them when it is another (a cluster's
    /// `Distributed` table: altering it alone would break every insert on the shards).
    fn missing_record_columns(&self) -> Result<Vec<&'static str>, StoreError> {
        let name = sql::quote(&self.db);
        let engine = self.strings(&format!("SELECT engine FROM system.tables WHERE database = {name} AND name = 'records'"))?;
        let Some(engine) = engine.first() else { return Ok(Vec::new()) };
        let present = self.strings(&format!("SELECT name FROM system.columns WHERE database = {name} AND table = 'records'"))?;
        let missing: Vec<&'static str> = sql::ADDED_RECORD_COLUMNS.iter().copied().filter(|c| !present.iter().any(|p| p == c)).collect();
        if missing.is_empty() || engine == "MergeTree" {
            return Ok(missing);
        }
        Err(StoreError(format!(
            "clickhouse: {}.records ({engine}) lacks the column(s) {} of this collector; add them on every node, \
             local tables first (docs/deploy.md, upgrading)",
            self.db,
            missing.join(", ")
        )))
    }

    /// Runs `sql` and returns its answer. The server holds the answer until the query ends
    /// (`wait_end_of_query`), so a failure mid-query is an HTTP error, never a cut answer.
    fn query(&self, sql: &str) -> Result<Vec<u8>, StoreError> {
        self.client.post(&QUERY_SETTINGS, sql.as_bytes())
    }

    /// Runs an `INSERT ... SELECT` (sent as the body: it may be long) with the insert settings.
    fn insert_select(&self, sql: &str) -> Result<(), StoreError> {
        let mut params = self.insert_settings.clone();
        params.extend(QUERY_SETTINGS);
        self.client.post(&params, sql.as_bytes()).map(drop)
    }

    /// Runs `sql` (a `SELECT` without `FORMAT`) with `settings` ([`QUERY_SETTINGS`] or
    /// [`ANALYTICS_SETTINGS`]) and calls `read_row` for each row of its RowBinary answer as it
    /// arrives: memory O(a row) whatever the answer's size.
    fn for_each_row(
        &self,
        settings: &[(&str, &str)],
        sql: &str,
        mut read_row: impl FnMut(&mut Reader<&mut dyn BufRead>) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        self.client.post_streaming(settings, format!("{sql} FORMAT RowBinary").as_bytes(), |answer| {
            let mut reader = Reader::new(answer);
            while !reader.is_empty()? {
                read_row(&mut reader)?;
            }
            Ok(())
        })
    }

    /// `SELECT count() FROM {from}`, for the analytics ([`ANALYTICS_SETTINGS`]).
    fn count(&self, from: &str) -> Result<u64, StoreError> {
        let answer = self.client.post(&ANALYTICS_SETTINGS, format!("SELECT count() FROM {from} FORMAT RowBinary").as_bytes())?;
        Ok(Reader::new(&answer[..]).u64()?)
    }

    /// The one `String` column of `sql`'s rows.
    fn strings(&self, sql: &str) -> Result<Vec<String>, StoreError> {
        let mut out = Vec::new();
        self.for_each_row(&QUERY_SETTINGS, sql, |r| {
            out.push(r.string()?);
            Ok(())
        })?;
        Ok(out)
    }

    /// Inserts `rows` (RowBinary, in `columns` order) into `table`.
    fn insert_rows(&self, table: &str, columns: &str, rows: Vec<u8>) -> Result<(), StoreError> {
        let statement = format!("INSERT INTO {}.{table} ({columns}) FORMAT RowBinary", self.db);
        let mut params = vec![("query", statement.as_str()), INGEST_PRIORITY];
        params.extend(self.insert_settings.iter().copied());
        self.client.post(&params, &rows).map(drop)
    }

    /// `FROM records WHERE ...` of the reads: definition 1, `from <= started_at < to`, `selected`
    /// (SQL conditions, each starting with ` AND`), and not a duplicate copy. The last condition
    /// makes ClickHouse read every record's id, so it is left out when a first query finds no
    /// duplicate in the window (the usual case).
    fn window(&self, from: i64, to: i64, selected: &str) -> Result<String, StoreError> {
        let (db, range) = (&self.db, format!("started_at >= {} AND started_at < {}{}", float(from as f64), float(to as f64), sql::ts_range(from as f64, to as f64)));
        let copies = match self.count(&format!("{db}.duplicates WHERE {range}"))? {
            0 => String::new(),
            _ => format!(" AND (id, copy) NOT IN (SELECT id, copy FROM {db}.duplicates WHERE {range})"),
        };
        Ok(format!("FROM {db}.records WHERE def = {DEF} AND {range}{selected}{copies}"))
    }

    /// A subquery: the duplicate copies (each once) of definition 1 whose `grain` bucket starts in
    /// `[from, to)` and that `selected` (SQL conditions, as for [`Database::window`]) selects.
    fn duplicates(&self, grain: Grain, from: i64, to: i64, selected: &str) -> String {
        format!(
            "(SELECT * FROM {db}.duplicates WHERE def = {DEF} AND {bucket} >= {from} AND {bucket} < {to}{selected} LIMIT 1 BY id, copy)",
            db = self.db,
            bucket = states::bucket(grain)
        )
    }
}

impl Store for ClickHouseStore {
    fn insert_batch(&self, batch: &Batch, received_at: i64) -> Result<Inserted, StoreError> {
        self.writer.write(batch, received_at)
    }

    fn rollups(&self, grain: Grain, from: i64, to: i64, selection: Selection<'_>, needs: Needs, visit: &mut dyn FnMut(RollupKey, Rollup)) -> Result<(), StoreError> {
        let (db, dims, selected) = (&self.database, sql::dim_columns(), sql::selection(selection));
        // Each rollup's bucket, or the range's start when the caller merges the range.
        let (bucket, copy_bucket) = match needs.per_bucket {
            true => ("bucket".to_owned(), states::bucket(grain)),
            false => (format!("toInt64({from})"), format!("toInt64({from})")),
        };
        // The duplicate copies of the range, merged per key like the rollups: few, held in memory.
        // Most ranges have none: a count (1 ms) then spares the query of their rollups (7 ms).
        let mut duplicates: HashMap<(i64, Dims), Parts> = HashMap::new();
        let copies = db.duplicates(grain, from, to, &selected);
        if db.count(&copies)? > 0 {
            let query = format!("SELECT {copy_bucket} AS b, {dims}, {plain} FROM {copies} GROUP BY b, {dims}", plain = states::plain());
            db.for_each_row(&ANALYTICS_SETTINGS, &query, |r| {
                let bucket = r.i64()?;
                let dims = read_dims(r)?;
                let mut parts = Parts::read(r)?;
                if let JointNeed::GoodFor(slo) = needs.joint {
                    parts.reduce_joint(&slo);
                }
                duplicates.insert((bucket, dims), parts);
                Ok(())
            })?;
        }
        // The states per key, held until the bucket counts (which come in no order) are added.
        let range = format!("grain = {} AND bucket >= {from} AND bucket < {to}", sql::quote(grain.code()));
        let mut rollups: HashMap<(i64, u64), (Dims, Parts)> = HashMap::new();
        let query = format!("SELECT {bucket} AS b, dims_key, {dims}, {merged} FROM {}.rollup_states WHERE {range}{selected} GROUP BY b, dims_key, {dims}", db.db, merged = states::merged());
        db.for_each_row(&ANALYTICS_SETTINGS, &query, |r| {
            let key = (r.i64()?, r.u64()?);
            rollups.insert(key, (read_dims(r)?, Parts::read_states(r)?));
            Ok(())
        })?;
        if let Some(wanted) = states::bucket_counts_wanted(needs.metrics, needs.extras, needs.joint != JointNeed::Nothing) {
            let of_selected = match selected.is_empty() {
                true => String::new(),
                false => format!(" AND dims_key IN (SELECT dims_key FROM {}.rollup_states WHERE {range}{selected})", db.db),
            };
            let query = format!(
                "SELECT {bucket} AS b, dims_key, joint, {} AS k, sum(n) FROM {}.sketch_buckets WHERE {range}{of_selected} AND ({wanted}) GROUP BY b, dims_key, joint, k",
                states::key_read(needs.joint),
                db.db
            );
            db.for_each_row(&ANALYTICS_SETTINGS, &query, |r| {
                let key = (r.i64()?, r.u64()?);
                let (joint, bucket_key, n) = (r.u8()? == 1, r.i64()?, r.u64()?);
                // Counts without states are of streams whose state insert failed: not counted.
                if let Some((_, parts)) = rollups.get_mut(&key) {
                    parts.add_bucket_count(joint, bucket_key, n);
                }
                Ok(())
            })?;
        }
        let mut rollups: Vec<((i64, u64), (Dims, Parts))> = rollups.into_iter().collect();
        rollups.sort_unstable_by_key(|&((bucket, _), _)| bucket);
        for ((bucket, _), (dims, mut parts)) in rollups {
            if let Some(copies) = duplicates.remove(&(bucket, dims.clone())) {
                parts.subtract(&copies);
            }
            let rollup = parts.into_rollup(needs.metrics, needs.extras)?;
            if rollup.count > 0 {
                visit(RollupKey { grain, bucket, dims }, rollup);
            }
        }
        Ok(())
    }

    fn rows(&self, from: i64, to: i64, selection: Selection<'_>, visit: &mut dyn FnMut(Row)) -> Result<(), StoreError> {
        let query = format!("SELECT {ROW_COLUMNS} {} ORDER BY started_at", self.database.window(from, to, &sql::selection(selection))?);
        self.database.for_each_row(&ANALYTICS_SETTINGS, &query, |r| {
            visit(row_of(r)?);
            Ok(())
        })
    }

    fn unit_rows(&self, from: i64, to: i64, filters: &Filters, unit: Unit, visit: &mut dyn FnMut(String, Row)) -> Result<(), StoreError> {
        let query = format!("SELECT {}, {ROW_COLUMNS} {}", unit.column(), self.database.window(from, to, &sql::filters(filters))?);
        self.database.for_each_row(&ANALYTICS_SETTINGS, &query, |r| {
            let id = r.string()?;
            visit(id, row_of(r)?);
            Ok(())
        })
    }

    fn streams(&self, from: i64, to: i64, filters: &Filters, order: &Order, visit: &mut dyn FnMut(Stream)) -> Result<(), StoreError> {
        let window = self.database.window(from, to, &sql::filters(filters))?;
        let query = format!("SELECT {} {window} {}", stream::COLUMNS, order.sql(|column| format!("isNull({column})")));
        self.database.for_each_row(&ANALYTICS_SETTINGS, &query, |r| {
            visit(stream_of(r)?);
            Ok(())
        })
    }

    /// The window's pieces ([`plan`]: the stream counts of each rollup key less the piece's
    /// duplicate copies, 1 per record of the partial minutes) under `UNION ALL`, grouped, ranked
    /// and cut by ClickHouse; asking for one group more than `limit` tells whether the groups must
    /// be counted (a second query).
    fn busiest_groups(&self, from: i64, to: i64, group_by: &[Dim], filters: &Filters, limit: usize) -> Result<Busiest, StoreError> {
        let (db, dims, filters) = (&self.database, sql::dim_columns(), sql::filters(filters));
        let pieces: Vec<String> = plan(from, to, Grain::Day)
            .into_iter()
            .map(|piece| -> Result<String, StoreError> {
                Ok(match piece {
                    Piece::Rollups(grain, start, end) => format!(
                        "SELECT {dims}, toInt64({streams}) AS n FROM {}.rollup_states WHERE grain = {} AND bucket >= {start} AND bucket < {end}{filters} \
                         GROUP BY bucket, {dims} UNION ALL SELECT {dims}, toInt64(-1) AS n FROM {}",
                        db.db,
                        sql::quote(grain.code()),
                        db.duplicates(grain, start, end, &filters),
                        streams = states::MERGED_STREAMS,
                    ),
                    Piece::Records(start, end) => format!("SELECT {dims}, toInt64(1) AS n {}", db.window(start, end, &filters)?),
                })
            })
            .collect::<Result<_, _>>()?;
        if pieces.is_empty() {
            return Ok(Busiest { keys: Vec::new(), total: 0 });
        }
        let columns = group_by.iter().map(|d| d.column()).collect::<Vec<_>>().join(", ");
        let groups = format!("FROM ({}) GROUP BY {columns} HAVING sum(n) > 0", pieces.join(" UNION ALL "));
        // Null first, then by bytes: the order of `Option<String>`.
        let key_order = group_by.iter().map(|d| format!("isNull({0}) DESC, ifNull({0}, '')", d.column())).collect::<Vec<_>>().join(", ");
        let mut keys = Vec::new();
        db.for_each_row(&ANALYTICS_SETTINGS, &format!("SELECT {columns} {groups} ORDER BY sum(n) DESC, {key_order} LIMIT {}", limit.saturating_add(1)), |r| {
            keys.push(group_by.iter().map(|_| r.opt_string()).collect::<Result<_, _>>()?);
            Ok(())
        })?;
        if keys.len() <= limit {
            return Ok(Busiest { total: keys.len() as u64, keys });
        }
        keys.truncate(limit);
        Ok(Busiest { keys, total: db.count(&format!("(SELECT 1 {groups})"))? })
    }

    fn ping(&self) -> Result<(), StoreError> {
        self.database.query("SELECT 1").map(drop)
    }

    /// Merges the closed days' rollups ([`upkeep`]), as the store's upkeep thread does hourly.
    fn upkeep(&self) -> Result<(), StoreError> {
        upkeep::merge_closed_days(&self.database, write::now_ms())
    }

    /// [`QUEUE_BATCHES`]: every batch that can wait for the writer, so an insert can gather them.
    fn writes_at_once(&self) -> usize {
        QUEUE_BATCHES
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
        reached: r.u8()? != 0,
        stopped: stops(&r.string()?),
        bunched: bunched(r.opt_f64()?, r.i64()?),
    })
}

/// A [`Stream`] from a row of [`stream::COLUMNS`].
fn stream_of<R: BufRead>(r: &mut Reader<R>) -> Result<Stream, StoreError> {
    Ok(Stream {
        id: r.string()?,
        started_at: r.f64()?,
        dims: [r.opt_string()?, r.opt_string()?, r.opt_string()?, r.opt_string()?, r.opt_string()?],
        status: r.string()?,
        http_status: r.opt_i64()?,
        ttft_ms: r.opt_f64()?,
        ttft_arrival_ms: r.opt_f64()?,
        tpot_ms: r.opt_f64()?,
        tpot_arrival_ms: r.opt_f64()?,
        output_tokens: r.i64()?,
        gap_p90_ms: r.opt_f64()?,
        stall_count: r.opt_i64()?,
        stall_longest_ms: r.opt_f64()?,
        stall_total_ms: r.opt_f64()?,
        render_delay_p50_ms: r.opt_f64()?,
        render_delay_p90_ms: r.opt_f64()?,
        duration_ms: r.opt_f64()?,
        hidden: r.u8()? != 0,
        finish_reason: r.opt_string()?,
        cadence: r.opt_string()?.as_deref().map(cadence_points).transpose()?,
    })
}

fn read_dims<R: BufRead>(r: &mut Reader<R>) -> Result<Dims, StoreError> {
    let mut dims = Dims::default();
    for value in &mut dims {
        *value = r.opt_string()?;
    }
    Ok(dims)
}
