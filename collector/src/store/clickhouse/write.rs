//! Writing batches: the writer thread that gathers them into large inserts, the copy numbers, and
//! the lookup that marks duplicate copies (the parent module's doc says why each is so).

use super::rowbinary::{Reader, Writer as Rows};
use super::{sql, states, Database, QUERY_SETTINGS};
use crate::rollup::Row;
use crate::store::{cadence_text, Inserted, StoreError};
use crate::validate::{Batch, Record};
use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hasher};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How long the first batch of an insert waits for others to join it (ms).
pub const FLUSH_MS: u64 = 200;
/// The most records one insert takes (a batch is never split).
pub const FLUSH_RECORDS: usize = 20_000;
/// Batches waiting for the writer at most (each holds one of the HTTP layer's blocking threads).
pub const QUEUE_BATCHES: usize = 256;
/// How far back (ms of receiving time) a starting collector looks for unmarked duplicate copies.
pub const SWEEP_MS: i64 = 15 * 60_000;
/// Ids per lookup query: each is sent as one array literal, far below `max_query_size`.
const IDS_PER_LOOKUP: usize = 20_000;

type Answer = Result<Inserted, StoreError>;

/// A batch waiting for the writer thread, and where its answer goes.
struct Job {
    batch: Batch,
    received_at: i64,
    answer: SyncSender<Answer>,
}

/// The handle of a store's writer thread. The thread ends when the handle is dropped.
pub(super) struct Writer {
    jobs: SyncSender<Job>,
}

impl Writer {
    pub(super) fn start(database: Arc<Database>) -> Writer {
        let (jobs, queue) = sync_channel(QUEUE_BATCHES);
        thread::Builder::new().name("clickhouse-writer".into()).spawn(move || run(&database, &queue)).expect("spawning the ClickHouse writer thread");
        Writer { jobs }
    }

    /// [`crate::store::Store::insert_batch`]: queues a copy of the batch and waits for its answer.
    /// O(batch) to queue; the wait is at most [`FLUSH_MS`] plus one insert and one lookup.
    pub(super) fn write(&self, batch: &Batch, received_at: i64) -> Answer {
        let (answer, answered) = sync_channel(1);
        let stopped = || StoreError("clickhouse: the writer thread stopped; nothing of this batch was stored".into());
        self.jobs.send(Job { batch: batch.clone(), received_at, answer }).map_err(|_| stopped())?;
        answered.recv().map_err(|_| stopped())?
    }
}

/// The writer thread: takes the first waiting batch, gathers those that come within [`FLUSH_MS`]
/// (up to [`FLUSH_RECORDS`] records or [`QUEUE_BATCHES`] batches), writes them and answers each.
fn run(database: &Database, queue: &Receiver<Job>) {
    let mut numbers = CopyNumbers::new();
    while let Ok(first) = queue.recv() {
        let deadline = Instant::now() + Duration::from_millis(FLUSH_MS);
        let mut records = first.batch.records.len();
        let mut jobs = vec![first];
        // Past QUEUE_BATCHES no batch can come (the HTTP layer lets no more wait): write at once.
        while records < FLUSH_RECORDS && jobs.len() < QUEUE_BATCHES {
            match queue.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(job) => {
                    records += job.batch.records.len();
                    jobs.push(job);
                }
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => break,
            }
        }
        let answers = catch_unwind(AssertUnwindSafe(|| write_group(database, &jobs, &mut numbers)))
            .unwrap_or_else(|_| jobs.iter().map(|_| Err(StoreError("clickhouse: the write of this batch panicked; retry".into()))).collect());
        for (job, answer) in jobs.iter().zip(answers) {
            // A sender that stopped waiting has nobody to tell.
            let _ = job.answer.send(answer);
        }
    }
}

/// Inserts the records of `jobs` (a record repeated within them once: its first copy), then marks
/// the copies that repeat an earlier one, and returns each job's answer: its records whose copy the
/// lookup found alone are accepted, the others are duplicates. So each record is accepted by one
/// answer at most; two copies inserted at the same moment may both be answered as duplicates.
fn write_group(database: &Database, jobs: &[Job], numbers: &mut CopyNumbers) -> Vec<Answer> {
    let fail_all = |e: StoreError| jobs.iter().map(|_| Err(StoreError(e.0.clone()))).collect();
    let mut seen = HashSet::new();
    // Each job's first copies, by their positions in its batch.
    let firsts: Vec<Vec<usize>> = jobs.iter().map(|j| (0..j.batch.records.len()).filter(|&i| seen.insert(j.batch.records[i].id.as_str())).collect()).collect();
    // The insert's records have distinct ids: one copy number serves them all.
    let copy = numbers.next();
    let mut rows = Rows::default();
    let mut ids = Vec::new();
    for (job, positions) in jobs.iter().zip(&firsts) {
        for &i in positions {
            let record = &job.batch.records[i];
            write_record(&mut rows, record, copy, &job.batch, job.received_at);
            ids.push(record.id.as_str());
        }
    }
    if ids.is_empty() {
        return jobs.iter().map(|j| Ok(Inserted::of(j.batch.records.len(), Vec::new()))).collect();
    }
    let columns: Vec<&str> = sql::RECORD_COLUMNS.iter().map(|(name, _)| *name).collect();
    if let Err(e) = database.insert_rows("records", &columns.join(", "), rows.into_bytes()) {
        return fail_all(e);
    }
    let repeated = match mark_duplicates(database, &ids) {
        Ok(repeated) => repeated,
        Err(e) => return fail_all(StoreError(format!("{e} (the records were stored; a retry counts them once)"))),
    };
    jobs.iter()
        .zip(firsts)
        .map(|(job, positions)| {
            let accepted_at = positions.into_iter().filter(|&i| !repeated.contains(&job.batch.records[i].id)).collect();
            Ok(Inserted::of(job.batch.records.len(), accepted_at))
        })
        .collect()
}

/// Finds every id of `ids` stored more than once and writes each of its copies but the first (the
/// lowest number) to `duplicates`. Returns those ids. O(ids) lookups.
fn mark_duplicates(database: &Database, ids: &[&str]) -> Result<HashSet<String>, StoreError> {
    let mut repeated = HashSet::new();
    for chunk in ids.chunks(IDS_PER_LOOKUP) {
        let list: Vec<String> = chunk.iter().map(|id| sql::quote(id)).collect();
        let found = format!("SELECT arrayJoin([{}])", list.join(", "));
        repeated.extend(mark(database, &found)?);
    }
    Ok(repeated)
}

/// [`mark_duplicates`] for the ids `found` (a subquery) selects.
fn mark(database: &Database, found: &str) -> Result<HashSet<String>, StoreError> {
    let db = &database.db;
    let mut copies: HashMap<String, Vec<u64>> = HashMap::new();
    database.for_each_row(&QUERY_SETTINGS, &format!("SELECT id, groupArray(copy) FROM {db}.copies WHERE id IN ({found}) GROUP BY id HAVING count() > 1"), |r| {
        copies.insert(r.string()?, r.vec(Reader::u64)?);
        Ok(())
    })?;
    let mut later = HashSet::new();
    for (id, numbers) in &copies {
        let first = numbers.iter().min().copied().unwrap_or(0);
        later.extend(numbers.iter().filter(|&&copy| copy != first).map(|&copy| (id.clone(), copy)));
    }
    if !later.is_empty() {
        let pairs: Vec<String> = later.iter().map(|(id, copy)| format!("({}, {copy})", sql::quote(id))).collect();
        let ids: HashSet<String> = later.iter().map(|(id, _)| sql::quote(id)).collect();
        database.insert_select(&format!(
            "INSERT INTO {db}.duplicates ({columns}) SELECT {columns} FROM {db}.copies WHERE id IN ({ids}) AND (id, copy) IN ({pairs})",
            columns = sql::COPY_COLUMNS,
            ids = ids.into_iter().collect::<Vec<_>>().join(", "),
            pairs = pairs.join(", ")
        ))?;
    }
    Ok(copies.into_keys().collect())
}

/// Marks the duplicate copies among those received in the last [`SWEEP_MS`]: what a collector
/// killed between its insert and its lookup left unmarked. O(copies' numbers) scanned, then
/// lookups of the recent ids.
pub(super) fn sweep(database: &Database) -> Result<(), StoreError> {
    let since = now_ms().saturating_sub(SWEEP_MS).max(0) as u64;
    mark(database, &format!("SELECT id FROM {}.copies WHERE copy >= {}", database.db, since << 20)).map(drop)
}

pub(super) fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// Copy numbers, one per insert: the time in ms `<< 20` plus 20 bits of a keyed hash of a counter
/// (the key random per process), so copies written by two collectors in the same millisecond still
/// differ but for a one-in-a-million chance; and increasing within a process, so its later insert
/// always has the higher number.
struct CopyNumbers {
    key: RandomState,
    counter: u64,
    last: u64,
}

impl CopyNumbers {
    fn new() -> CopyNumbers {
        CopyNumbers { key: RandomState::new(), counter: 0, last: 0 }
    }

    fn next(&mut self) -> u64 {
        self.counter += 1;
        let mut h = self.key.build_hasher();
        h.write_u64(self.counter);
        self.last = (((now_ms().max(0) as u64) << 20) | (h.finish() & 0xf_ffff)).max(self.last + 1);
        self.last
    }
}

/// One record as a `records` row, in [`sql::RECORD_COLUMNS`] order.
fn write_record(w: &mut Rows, r: &Record, copy: u64, batch: &Batch, received_at: i64) {
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
    for v in [r.gap_p50_ms, r.gap_p90_ms, r.gap_p99_ms, r.gap_max_ms, r.arrival_gap_p50_ms, r.arrival_gap_p90_ms, r.jitter_ms] {
        w.opt_f64(v);
    }
    w.opt_i64(r.stall_count);
    w.opt_i64(r.stall_count_1000);
    for v in [r.stall_longest_ms, r.stall_total_ms, r.render_delay_p50_ms, r.render_delay_p90_ms, r.duration_ms] {
        w.opt_f64(v);
    }
    w.u8(r.hidden.into());
    w.opt_string(r.finish_reason.as_deref());
    w.opt_f64(r.clock_ms);
    w.opt_string(r.cadence.as_deref().map(cadence_text).as_deref());
    w.opt_f64(r.rtt_ms);
    w.opt_f64(r.device_memory_gb);
    w.opt_i64(r.cores);
    w.string(&batch.session_id);
    w.string(batch.experiment_unit.as_deref().unwrap_or(""));
    w.string(&batch.page_id);
    w.string(&batch.batch_id);
    w.f64(batch.sample_rate);
    w.i64(received_at);
    w.string(&r.raw);
    w.u64(copy);
    let row = Row::from_record(r);
    w.i64_array(&states::sketch_keys(&row));
    w.i64(states::joint_key(&row));
}
