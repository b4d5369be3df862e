//! Writing batches: group commit, the order of the inserts, and settling a write that failed midway
//! (the parent module's doc says why each is so).

use super::rowbinary::{Reader, Writer};
use super::{lock, read_dims, read_dims_and_rollup, sql, ClickHouseStore, CHUNK, ROW_COLUMNS};
use crate::dims::Dims;
use crate::rollup::{rollups_of, Grain, Rollup, RollupKey, Row};
use crate::store::{Inserted, StoreError};
use crate::summary::DEF;
use crate::validate::{Batch, Record};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::{Arc, Mutex};

/// A batch waiting for the writer, and its answer once written.
pub(super) struct Job {
    batch: Batch,
    received_at: i64,
    answer: Mutex<Option<Result<Inserted, StoreError>>>,
}

/// What the writer keeps between writes.
pub(super) struct WriteState {
    /// The highest rollup version written so far.
    pub version: u64,
    /// The new records of the write in progress, or of one that failed and could not be settled
    /// yet: set before the first insert, so even a panic mid-write leaves them to settle.
    pub pending: Option<Vec<Unsettled>>,
}

/// What settling needs of a record that a failed write may or may not have stored.
pub(super) struct Unsettled {
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

type Answer = Result<Inserted, StoreError>;

impl ClickHouseStore {
    /// [`crate::store::Store::insert_batch`]: queues the batch, then takes the writer. Unless the
    /// previous holder already wrote it, writes every queued batch at once (group commit: under
    /// load ClickHouse gets a few large inserts, not one small one per batch). O(batch) to queue (a
    /// copy); the write is O(records + touched rollups) for the whole group.
    pub(super) fn write_batch(&self, batch: &Batch, received_at: i64) -> Answer {
        let job = Arc::new(Job { batch: batch.clone(), received_at, answer: Mutex::new(None) });
        lock(&self.queue).push(Arc::clone(&job));
        let mut state = lock(&self.writer);
        if let Some(answer) = lock(&job.answer).take() {
            return answer;
        }
        let jobs = std::mem::take(&mut *lock(&self.queue));
        let Some(mine) = jobs.iter().position(|j| Arc::ptr_eq(j, &job)) else {
            // The writer that took it panicked before answering; its records are pending.
            return Err(StoreError("clickhouse: the write of this batch was interrupted; retry".into()));
        };
        let mut answers = self.write_group(&mut state, &jobs);
        let my_answer = answers.swap_remove(mine);
        for (j, answer) in jobs.iter().enumerate().filter(|(i, _)| *i != mine).map(|(_, j)| j).zip(answers) {
            *lock(&j.answer) = Some(answer);
        }
        my_answer
    }

    /// Writes the new records of `jobs`, in order (a record repeated in a later job is its
    /// duplicate), and returns each job's answer.
    fn write_group(&self, state: &mut WriteState, jobs: &[Arc<Job>]) -> Vec<Answer> {
        let fail_all = |message: String| jobs.iter().map(|_| Err(StoreError(message.clone()))).collect();
        if let Some(pending) = state.pending.take() {
            if let Err(e) = self.settle(state, &pending) {
                state.pending = Some(pending);
                return fail_all(format!("{e} (settling an earlier batch; nothing of this one was stored)"));
            }
        }
        let mut seen = HashSet::new();
        let firsts: Vec<Vec<&Record>> = jobs.iter().map(|j| j.batch.records.iter().filter(|r| seen.insert(r.id.as_str())).collect()).collect();
        let committed = match self.committed(&firsts.iter().flatten().map(|r| r.id.as_str()).collect::<Vec<_>>()) {
            Ok(committed) => committed,
            Err(e) => return fail_all(e.0),
        };
        let new: Vec<Vec<&Record>> = firsts.into_iter().map(|f| f.into_iter().filter(|r| !committed.contains(&r.id)).collect()).collect();
        let inserted: Vec<Inserted> = jobs.iter().zip(&new).map(|(j, n)| Inserted { accepted: n.len(), duplicates: j.batch.records.len() - n.len() }).collect();
        let all_new: Vec<(&Record, &Job)> = jobs.iter().zip(&new).flat_map(|(j, n)| n.iter().map(move |r| (*r, &**j))).collect();
        if all_new.is_empty() {
            return inserted.into_iter().map(Ok).collect();
        }
        let rows: Vec<Row> = all_new.iter().filter(|(r, _)| r.def == DEF).map(|(r, _)| Row::from_record(r)).collect();
        let deltas = rollups_of(&rows);
        let mut merged = match self.current_rollups(deltas.keys()) {
            Ok(current) => current,
            Err(e) => return fail_all(e.0),
        };
        for (key, delta) in deltas {
            merged.entry(key).or_default().merge(&delta);
        }
        // From here a failure may leave part of the group stored: pending until written or settled.
        state.pending = Some(all_new.iter().map(|(r, _)| Unsettled::of(r)).collect());
        let ids: Vec<&str> = all_new.iter().map(|(r, _)| r.id.as_str()).collect();
        let written = self.insert_records(&all_new).and_then(|()| self.insert_rollups(state, &merged)).and_then(|()| self.insert_ids(&ids));
        let unsettled = state.pending.take().unwrap_or_default();
        let Err(e) = written else { return inserted.into_iter().map(Ok).collect() };
        let stored = match self.settle(state, &unsettled) {
            Ok(stored) => stored,
            Err(settle_error) => {
                state.pending = Some(unsettled);
                return fail_all(format!("{e}; then settling failed: {settle_error}"));
            }
        };
        // Settling found what is stored: each batch's answer says so.
        new.iter()
            .zip(inserted)
            .map(|(n, inserted)| match n.iter().filter(|r| stored.contains(&r.id)).count() {
                all if all == n.len() => Ok(inserted),
                0 => Err(StoreError(e.0.clone())),
                some => Err(StoreError(format!("{e} ({some} of the {} new records were stored; a retry stores the rest)", n.len()))),
            })
            .collect()
    }

    fn insert_records(&self, records: &[(&Record, &Job)]) -> Result<(), StoreError> {
        let mut w = Writer::default();
        for (r, job) in records {
            write_record(&mut w, r, &job.batch, job.received_at);
        }
        let columns: Vec<&str> = sql::RECORD_COLUMNS.iter().map(|(name, _)| *name).collect();
        self.insert_rows("records", &columns.join(", "), w)
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
            w.u64(rollup.count);
            w.bytes(&rollup.encode());
        }
        self.insert_rows("rollups", &format!("grain, bucket, {}, version, streams, data", sql::dim_columns()), w)
    }

    fn insert_ids(&self, ids: &[&str]) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        let mut w = Writer::default();
        ids.iter().for_each(|id| w.string(id));
        self.insert_rows("record_ids", "id", w)
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
                 GROUP BY grain, bucket, {dims}",
                dims = sql::dim_columns(),
                db = self.db,
                buckets = buckets.iter().map(i64::to_string).collect::<Vec<_>>().join(", "),
                key = sql::rollup_key(),
                literals = literals.join(", "),
            );
            self.for_each_row(&query, |r| {
                let code = r.string()?;
                let grain = Grain::from_code(&code).ok_or_else(|| StoreError(format!("clickhouse: unknown grain {code:?} in rollups")))?;
                let bucket = r.i64()?;
                let (dims, rollup) = read_dims_and_rollup(r)?;
                out.insert(RollupKey { grain, bucket, dims }, rollup);
                Ok(())
            })?;
        }
        Ok(out)
    }

    /// Settles `records` after a failed write: those found in `records` get the rollups they touch
    /// rebuilt from `records` and their ids committed. Returns their ids. Idempotent.
    fn settle(&self, state: &mut WriteState, records: &[Unsettled]) -> Result<HashSet<String>, StoreError> {
        if records.is_empty() {
            return Ok(HashSet::new());
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
        Ok(in_records)
    }

    /// Rewrites, from `records`, every rollup (all grains) of each (day bucket, dimensions) pair.
    fn rebuild_rollups(&self, state: &mut WriteState, days: &[(i64, Dims)]) -> Result<(), StoreError> {
        let dims: BTreeSet<String> = days.iter().map(|(_, d)| sql::dims_literal(d)).collect();
        let day_ms = Grain::Day.ms() as f64;
        let ranges: BTreeSet<String> = days
            .iter()
            .map(|&(day, _)| {
                let (from, to) = (day as f64, day as f64 + day_ms);
                format!("(started_at >= {} AND started_at < {}{})", super::float(from), super::float(to), sql::ts_range(from, to))
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

    /// Settles the records a process that died mid-write left in `records` without their ids in
    /// `record_ids`. Two counts when there are none (the usual case); otherwise a scan of the ids.
    pub(super) fn settle_orphans(&self, state: &mut WriteState) -> Result<(), StoreError> {
        let answer = self.query(&format!("SELECT (SELECT count() FROM {0}.records), (SELECT count() FROM {0}.record_ids) FORMAT RowBinary", self.db))?;
        let mut r = Reader::new(&answer[..]);
        let (records, ids) = (r.u64()?, r.u64()?);
        if records <= ids {
            return Ok(());
        }
        let query = format!("SELECT id, started_at, def, {dims} FROM {db}.records WHERE id NOT IN (SELECT id FROM {db}.record_ids)", dims = sql::dim_columns(), db = self.db);
        let mut orphans = Vec::new();
        self.for_each_row(&query, |r| {
            let (id, started_at, def) = (r.string()?, r.f64()?, r.i64()?);
            orphans.push(Unsettled { id, started_at, def, dims: read_dims(r)? });
            Ok(())
        })?;
        self.settle(state, &orphans).map(drop)
    }

    /// Rebuilds every rollup from `records`, a chunk of (day, dimensions) pairs at a time: for a
    /// database made before `rollups` had its `streams` column. O(records), once.
    pub(super) fn rebuild_every_rollup(&self, state: &mut WriteState) -> Result<(), StoreError> {
        let query = format!("SELECT DISTINCT bucket, {dims} FROM {db}.rollups WHERE grain = 'd'", dims = sql::dim_columns(), db = self.db);
        let mut days = Vec::new();
        self.for_each_row(&query, |r| {
            days.push((r.i64()?, read_dims(r)?));
            Ok(())
        })?;
        for chunk in days.chunks(CHUNK) {
            self.rebuild_rollups(state, chunk)?;
        }
        Ok(())
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
